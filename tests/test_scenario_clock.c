/*
 * test_scenario_clock.c — one clock epoch and the clocks a scenario can make
 * disagree (DESIGN.md §5: `clock: {start}`, a run's `skew:`, a negative
 * `advance:`).
 *
 * The world's timestamps and the core's clock read one wall clock: the
 * preset's 2026-01-01T00:00:00Z unless `clock.start` says otherwise. A
 * negative `advance` steps that wall clock back without time passing (the
 * virtual clock, its timers and virtual_seconds stay); a run's `skew` offsets
 * only what its core reads. The loader refuses, with file:line:col and the
 * field, every malformed start and every negative duration outside
 * `advance:` and `skew:`.
 */
#include "sim/scenario/scenario.h"
#include "sim/world/world.h"
#include "sim/world/world_internal.h"
#include "tests/support_tmpdir.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TC_HEAD                                                                                    \
    "name: t\n"                                                                                    \
    "cluster: {preset: prod, credential: current}\n"                                               \
    "desired: current\n"

#define JAN_1_2026_MS 1767225600000LL

static sc_scenario *tc_load(const char *yaml, rs_err *e)
{
    sc_scenario *sc = NULL;
    rs_err_clear(e);
    if (sc_load(ts_put("s.yaml", yaml), &sc, e) != RS_OK) return NULL;
    return sc;
}

static sc_scenario *tc_ok(const char *yaml)
{
    rs_err e;
    sc_scenario *sc = tc_load(yaml, &e);
    ck_assert_msg(sc != NULL, "load failed: %s", e.msg);
    return sc;
}

/* The load fails with RS_DATAERR and "<file>:" + want as the prefix. */
static void tc_err(const char *yaml, const char *want)
{
    rs_err e;
    ck_assert_ptr_null(tc_load(yaml, &e));
    ck_assert_int_eq(e.code, RS_DATAERR);
    char prefix[1024];
    snprintf(prefix, sizeof prefix, "%s/s.yaml:%s", ts_dir, want);
    ck_assert_msg(strncmp(e.msg, prefix, strlen(prefix)) == 0, "got  '%s'\nwant '%s...'", e.msg,
                  prefix);
}

static void setup(void)
{
    ts_tmpdir_make("test_scenario_clock");
}

static void teardown(void)
{
    ts_tmpdir_remove();
}

/* The wall clock the core of a run reads, and the world's virtual clock. */
static void tc_clocks(const char *db, const sc_run *run, int64_t *core_ms, int64_t *virtual_ms)
{
    sim_world *w = NULL;
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(sim_world_open(db, &w, &e) == RS_OK, "%s", e.msg);
    rs_transport *t = sim_transport_open(w, "probe", run);
    *core_ms = t->now_ms(t);
    *virtual_ms = sim_world_now_ms(w);
    t->close(t);
    sim_world_close(w);
}

static const char *tc_ready_since(const char *db, const char *kind, const char *ns,
                                  const char *name, char out[64])
{
    sim_world *w = NULL;
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(sim_world_open(db, &w, &e) == RS_OK, "%s", e.msg);
    cJSON *obj = simw_get(w, kind, ns, name);
    const cJSON *c =
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
                               cJSON_GetObjectItemCaseSensitive(obj, "status"), "conditions"),
                           0);
    snprintf(out, 64, "%s",
             cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "lastTransitionTime")));
    cJSON_Delete(obj);
    sim_world_close(w);
    return out;
}

/* ---- one epoch ---------------------------------------------------------- */

START_TEST(test_preset_world_and_core_share_the_2026_epoch)
{
    sc_scenario *sc = tc_ok(TC_HEAD "runs:\n  - name: a\n");
    const char *db = ts_put("w.db", "");
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(sim_world_build(db, sc, &e) == RS_OK, "%s", e.msg);
    int64_t core, virt;
    tc_clocks(db, &sc->runs[0], &core, &virt);
    ck_assert_int_eq(virt, 0);
    ck_assert_int_eq(core, JAN_1_2026_MS); /* not 1970: one epoch */
    char ts[64];
    ck_assert_str_eq(tc_ready_since(db, "Kustomization", "flux-system", "flux-system", ts),
                     "2026-01-01T00:00:00Z");
    sc_free(sc);
}
END_TEST

START_TEST(test_clock_start_sets_the_wall_clock_of_world_and_core)
{
    sc_scenario *sc = tc_ok(TC_HEAD "clock: {start: \"2026-09-23T10:15:30.250+02:00\"}\n"
                                    "runs:\n  - name: a\n");
    ck_assert(sc->clock_start_set);
    ck_assert_int_eq(sc->clock_start_ms, 1790151330250LL); /* 08:15:30.250Z */
    const char *db = ts_put("w.db", "");
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(sim_world_build(db, sc, &e) == RS_OK, "%s", e.msg);
    int64_t core, virt;
    tc_clocks(db, &sc->runs[0], &core, &virt);
    ck_assert_int_eq(virt, 0);
    ck_assert_int_eq(core, 1790151330250LL);
    char ts[64];
    ck_assert_str_eq(tc_ready_since(db, "ExternalSecret", "kyverno", "ghcr-auth", ts),
                     "2026-09-23T08:15:30Z");
    sc_free(sc);
}
END_TEST

/* A backwards advance steps the wall clock (what the core and the API
 * server read) without time passing; skew moves only the run's core. */
START_TEST(test_negative_advance_steps_the_wall_clock_and_skew_offsets_the_core)
{
    sc_scenario *sc = tc_ok(TC_HEAD "runs:\n"
                                    "  - name: a\n"
                                    "    skew: -90s\n"
                                    "    before:\n"
                                    "      - advance: 10m\n"
                                    "      - advance: -30s\n");
    ck_assert_int_eq(sc->runs[0].skew_ms, -90000);
    ck_assert_int_eq(
        cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(sc->runs[0].before[1].args, "ms")),
        -30000);
    const char *db = ts_put("w.db", "");
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(sim_world_build(db, sc, &e) == RS_OK, "%s", e.msg);
    sim_world *w = NULL;
    ck_assert_msg(sim_world_open(db, &w, &e) == RS_OK, "%s", e.msg);
    for (size_t i = 0; i < sc->runs[0].n_before; i++)
        ck_assert_msg(sim_world_apply_event(w, &sc->runs[0].before[i], &e) == RS_OK, "%s", e.msg);
    sim_world_close(w);
    int64_t core, virt;
    tc_clocks(db, &sc->runs[0], &core, &virt);
    ck_assert_int_eq(virt, 600000); /* no time passed in the step */
    ck_assert_int_eq(core, JAN_1_2026_MS + 600000 - 30000 - 90000);
    sc_run plain = {.name = "b"};
    tc_clocks(db, &plain, &core, &virt);
    ck_assert_int_eq(core, JAN_1_2026_MS + 600000 - 30000); /* the API server's clock */
    sc_free(sc);
}
END_TEST

START_TEST(test_a_step_before_the_unix_epoch_cannot_apply)
{
    sc_scenario *sc = tc_ok(TC_HEAD "clock: {start: \"1970-01-01T00:00:10Z\"}\n"
                                    "runs:\n  - name: a\n    before:\n      - advance: -11s\n");
    const char *db = ts_put("w.db", "");
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(sim_world_build(db, sc, &e) == RS_OK, "%s", e.msg);
    sim_world *w = NULL;
    ck_assert_msg(sim_world_open(db, &w, &e) == RS_OK, "%s", e.msg);
    ck_assert_int_eq(sim_world_apply_event(w, &sc->runs[0].before[0], &e), RS_DATAERR);
    ck_assert_msg(strstr(e.msg, "before 1970-01-01T00:00:00Z"), "%s", e.msg);
    ck_assert_msg(strstr(e.msg, "(line 8)"), "%s", e.msg);
    sim_world_close(w);
    int64_t core, virt;
    tc_clocks(db, &sc->runs[0], &core, &virt);
    ck_assert_int_eq(core, 10000); /* unchanged */
    sc_free(sc);
}
END_TEST

START_TEST(test_rfc3339_parser_keeps_milliseconds_and_refuses_non_dates)
{
    int64_t ms = -1;
    ck_assert(sc_parse_rfc3339_ms("1970-01-01T00:00:00Z", &ms) && ms == 0);
    ck_assert(sc_parse_rfc3339_ms("2026-01-01T00:00:00.123456Z", &ms) && ms == JAN_1_2026_MS + 123);
    ck_assert(sc_parse_rfc3339_ms("2024-02-29T00:00:00Z", &ms)); /* a leap day */
    const char *bad[] = {"2026-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z",
                         "2026-01-01T24:00:00Z", "2026-01-01T00:00:60Z", "2026-01-01 00:00:00Z",
                         "2026-01-01T00:00:00",  "2026-01-01",           "tomorrow",
                         "2026-01-01T00:00:00.Z"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!sc_parse_rfc3339_ms(bad[i], &ms), "accepted %s", bad[i]);
    ck_assert(!sc_parse_rfc3339_ms(NULL, &ms));
}
END_TEST

/* ---- refusals ----------------------------------------------------------- */

START_TEST(test_bad_clock_is_refused_naming_the_field)
{
    tc_err(TC_HEAD "clock: {start: \"2026-01-01T00:00:00Z\", zone: UTC}\n",
           "4:40: clock.zone: unknown key (known: start)");
    tc_err(TC_HEAD "clock: {}\n", "4:8: clock.start: required field missing");
    tc_err(TC_HEAD "clock: 2026\n", "4:8: clock: expected a mapping, got an integer");
    tc_err(TC_HEAD "clock: {start: \"2026-02-30T00:00:00Z\"}\n",
           "4:16: clock.start: malformed time \"2026-02-30T00:00:00Z\" (want RFC 3339");
    tc_err(TC_HEAD "clock: {start: 5}\n", "4:16: clock.start: expected a string, got an integer");
    tc_err(TC_HEAD "clock: {start: \"1969-12-31T23:59:59Z\"}\n",
           "4:16: clock.start: must be from 1970-01-01T00:00:00Z to before 3000-01-01T00:00:00Z");
    tc_err(TC_HEAD "clock: {start: \"3000-01-01T00:00:00Z\"}\n",
           "4:16: clock.start: must be from 1970-01-01T00:00:00Z");
}
END_TEST

START_TEST(test_bad_skew_is_refused_naming_the_field)
{
    tc_err(TC_HEAD "runs:\n  - name: a\n    skew: 5\n",
           "6:11: runs[0].skew: expected a duration such as 30s, got an integer");
    tc_err(TC_HEAD "runs:\n  - name: a\n    skew: \"--5s\"\n",
           "6:11: runs[0].skew: malformed duration \"--5s\" (want [-]<integer>(ms|s|m|h))");
    tc_err(TC_HEAD "runs:\n  - name: a\n    skew: -8785h\n",
           "6:11: runs[0].skew: duration \"-8785h\" is longer than 366 days");
}
END_TEST

START_TEST(test_negative_duration_outside_advance_and_skew_is_refused)
{
    tc_err(TC_HEAD "runs:\n  - name: a\n    before:\n      - pdb.block: {node: prod-worker-1, "
                   "for: -5s}\n",
           "7:47: runs[0].before[0].pdb.block.for: duration \"-5s\" is negative (only advance: "
           "and a run's skew: take a negative duration)");
    tc_err(TC_HEAD "runs:\n  - name: a\n    before:\n      - advance: -8785h\n",
           "7:18: runs[0].before[0].advance: duration \"-8785h\" is longer than 366 days");
    tc_err(TC_HEAD "runs:\n  - name: a\n    before:\n      - advance: \"- 5s\"\n",
           "7:18: runs[0].before[0].advance: malformed duration");
}
END_TEST

static Suite *clock_suite(void)
{
    Suite *s = suite_create("scenario_clock");
    TCase *t = tcase_create("clock");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, test_preset_world_and_core_share_the_2026_epoch);
    tcase_add_test(t, test_clock_start_sets_the_wall_clock_of_world_and_core);
    tcase_add_test(t, test_negative_advance_steps_the_wall_clock_and_skew_offsets_the_core);
    tcase_add_test(t, test_a_step_before_the_unix_epoch_cannot_apply);
    tcase_add_test(t, test_rfc3339_parser_keeps_milliseconds_and_refuses_non_dates);
    tcase_add_test(t, test_bad_clock_is_refused_naming_the_field);
    tcase_add_test(t, test_bad_skew_is_refused_naming_the_field);
    tcase_add_test(t, test_negative_duration_outside_advance_and_skew_is_refused);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(clock_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
