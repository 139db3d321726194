/*
 * test_scenario_checks.c — what a scenario can state beyond its end state
 * (DESIGN.md §5): `check:` actions in `before:` and `during:`,
 * `output-not-contains`, and every object reference resolved against the
 * world the scenario builds.
 *
 * A `check:` is a list of `expect.state` checks kept with the line of each,
 * so a failure is annotated where it was written; it is not a world event (a
 * sweep's perturb-menu refuses it). A reference resolves when the object may
 * exist at that point of the timeline (sim/world/world_refs.c); one that
 * names nothing is RS_DATAERR naming file, line, column and field.
 */
#include "sim/check/check_expect.h"
#include "sim/scenario/scenario.h"
#include "sim/world/world.h"
#include "tests/support_tmpdir.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TK_HEAD                                                                                    \
    "name: t\n"                                                                                    \
    "strategies: [lazy]\n"                                                                         \
    "cluster: {preset: prod, credential: current}\n"                                               \
    "desired: current\n"                                                                           \
    "runs:\n"

static sc_scenario *tk_load(const char *yaml, rs_err *e)
{
    sc_scenario *sc = NULL;
    rs_err_clear(e);
    if (sc_load(ts_put("s.yaml", yaml), &sc, e) != RS_OK) return NULL;
    return sc;
}

static sc_scenario *tk_ok(const char *yaml)
{
    rs_err e;
    sc_scenario *sc = tk_load(yaml, &e);
    ck_assert_msg(sc != NULL, "load failed: %s", e.msg);
    return sc;
}

static void tk_err(const char *yaml, const char *want)
{
    rs_err e;
    ck_assert_ptr_null(tk_load(yaml, &e));
    ck_assert_int_eq(e.code, RS_DATAERR);
    char prefix[1024];
    snprintf(prefix, sizeof prefix, "%s/s.yaml:%s", ts_dir, want);
    ck_assert_msg(strncmp(e.msg, prefix, strlen(prefix)) == 0, "got  '%s'\nwant '%s...'", e.msg,
                  prefix);
}

/* Loads yaml, builds its world and resolves its references: the code, and
 * the error in e. */
static rs_code tk_resolve(const char *yaml, rs_err *e)
{
    sc_scenario *sc = tk_load(yaml, e);
    ck_assert_msg(sc != NULL, "load failed: %s", e->msg);
    const char *db = ts_put("w.db", "");
    ck_assert_msg(sim_world_build(db, sc, e) == RS_OK, "%s", e->msg);
    sim_world *w = NULL;
    ck_assert_msg(sim_world_open(db, &w, e) == RS_OK, "%s", e->msg);
    rs_code rc = sim_world_resolve_refs(w, sc, e);
    sim_world_close(w);
    sc_free(sc);
    return rc;
}

static void setup(void)
{
    ts_tmpdir_make("test_scenario_checks");
}

static void teardown(void)
{
    ts_tmpdir_remove();
}

/* ---- check: ------------------------------------------------------------- */

START_TEST(test_check_action_keeps_each_check_and_its_line)
{
    sc_scenario *sc =
        tk_ok(TK_HEAD "  - name: a\n"         /* 6 */
                      "    before:\n"         /* 7 */
                      "      - advance: 1s\n" /* 8 */
                      "      - check:\n"      /* 9 */
                      "          - {ref: Node/prod-worker-1, path: /spec/unschedulable, "
                      "absent: true}\n" /* 10 */
                      "          - {talos: prod-worker-2, registry-auth: current}\n"
                      "    during:\n" /* 12 */
                      "      - before-call: \"kube.evict Pod/*\"\n"
                      "        do:\n"
                      "          check:\n" /* 15 */
                      "            - {openbao: infrastructure/ghcr/auth, credential: "
                      "current}\n");
    const sc_event *b = &sc->runs[0].before[1];
    ck_assert_str_eq(b->kind, "check");
    ck_assert_int_eq(b->pos.line, 9);
    ck_assert_int_eq(cJSON_GetArraySize(b->args), 2);
    ck_assert_int_eq(cJSON_GetArrayItem(b->lines, 0)->valueint, 10);
    ck_assert_int_eq(cJSON_GetArrayItem(b->lines, 1)->valueint, 11);
    ck_assert_ptr_null(sc->runs[0].before[0].lines); /* a world event has none */
    const sc_event *d = &sc->runs[0].during[0].action;
    ck_assert_str_eq(d->kind, "check");
    ck_assert_int_eq(cJSON_GetArrayItem(d->lines, 0)->valueint, 16);
    ck_assert_str_eq(sc->runs[0].during[0].before_call, "kube.evict Pod/*");
    sc_free(sc);
}
END_TEST

START_TEST(test_check_evaluates_like_expect_state)
{
    sc_scenario *sc =
        tk_ok(TK_HEAD "  - name: a\n"
                      "    before:\n"
                      "      - check:\n"
                      "          - {ref: Node/prod-worker-1, path: /spec/unschedulable, "
                      "absent: true}\n"
                      "          - {ref: Secret/kyverno/ghcr-auth, credential: previous}\n"
                      "          - {talos: prod-worker-2, registry-auth: current}\n");
    const char *db = ts_put("w.db", "");
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(sim_world_build(db, sc, &e) == RS_OK, "%s", e.msg);
    sim_world *w = NULL;
    ck_assert_msg(sim_world_open(db, &w, &e) == RS_OK, "%s", e.msg);
    cJSON *failures = cJSON_CreateArray(), *lines = cJSON_CreateArray();
    expect_state_now(w, &sc->runs[0].before[0], "before", failures, lines);
    ck_assert_int_eq(cJSON_GetArraySize(failures), 1); /* only the wrong credential */
    ck_assert_str_eq(cJSON_GetArrayItem(failures, 0)->valuestring,
                     "check (before): state Secret/kyverno/ghcr-auth: expected credential "
                     "previous, found another value");
    ck_assert_int_eq(cJSON_GetArrayItem(lines, 0)->valueint, 10);
    cJSON_Delete(failures);
    cJSON_Delete(lines);
    sim_world_close(w);
    sc_free(sc);
}
END_TEST

START_TEST(test_bad_check_is_refused_naming_the_field)
{
    tk_err(TK_HEAD "  - name: a\n    before:\n      - check: []\n",
           "8:16: runs[0].before[0].check: must hold at least one state check");
    tk_err(TK_HEAD "  - name: a\n    before:\n      - check: {ref: Node/prod-worker-1}\n",
           "8:16: runs[0].before[0].check: expected a list, got a mapping");
    tk_err(TK_HEAD
           "  - name: a\n    before:\n      - check:\n          - {ref: Node/prod-worker-1, "
           "path: /spec, present: true}\n",
           "9:52: runs[0].before[0].check[0].present: unknown key (known: ref, path, equals, "
           "absent)");
    tk_err(TK_HEAD
           "  - name: a\n    during:\n      - before-call: \"kube.get *\"\n        do:\n"
           "          check:\n            - {talos: prod-worker-9, registry-auth: current}\n",
           "11:23: runs[0].during[0].do.check[0].talos: unknown node \"prod-worker-9\"");
    tk_err(TK_HEAD "  - name: a\n    before:\n      - {check: [], advance: 1s}\n",
           "8:9: runs[0].before[0]: an event is a mapping with exactly one key");
    tk_err(TK_HEAD "  - name: a\nperturb-menu:\n  - name: m\n    do:\n      check:\n"
                   "        - {talos: prod-worker-1, registry-auth: current}\n",
           "10:7: perturb-menu[0].do.check: a check is not a world event");
}
END_TEST

/* ---- output-not-contains ------------------------------------------------ */

START_TEST(test_output_not_contains_is_a_list_of_texts_per_strategy)
{
    sc_scenario *sc = tk_ok(TK_HEAD "  - name: a\n"
                                    "    expect:\n"
                                    "      output-not-contains: [\"secret\", \"::error::\"]\n"
                                    "      by-strategy:\n"
                                    "        eager: {output-not-contains: [\"Lease\"]}\n");
    cJSON *lazy = sc_expect_for(&sc->runs[0], "lazy");
    cJSON *eager = sc_expect_for(&sc->runs[0], "eager");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(lazy, "output-not-contains")), 2);
    ck_assert_str_eq(
        cJSON_GetArrayItem(cJSON_GetObjectItem(eager, "output-not-contains"), 0)->valuestring,
        "Lease");
    cJSON_Delete(lazy);
    cJSON_Delete(eager);
    sc_free(sc);
    tk_err(TK_HEAD "  - name: a\n    expect:\n      output-not-contains: [\"\"]\n",
           "8:29: runs[0].expect.output-not-contains[0]: must not be empty");
    tk_err(TK_HEAD "  - name: a\n    expect:\n      output-not-contains: [1]\n",
           "8:29: runs[0].expect.output-not-contains[0]: expected a string");
}
END_TEST

START_TEST(test_output_not_contains_fails_at_its_own_line)
{
    sc_scenario *sc = tk_ok(TK_HEAD "  - name: a\n"
                                    "    expect:\n"
                                    "      output-not-contains:\n"
                                    "        - \"absent text\"\n"
                                    "        - \"raw error\"\n");
    cJSON *expect = sc_expect_for(&sc->runs[0], "lazy");
    cJSON *lines = sc_expect_lines_for(&sc->runs[0], "lazy");
    cJSON *failures = cJSON_CreateArray(), *at = cJSON_CreateArray();
    cJSON *delta = cJSON_CreateObject();
    expect_check(expect, lines, 0, delta, "stdout and stderr: a raw error text", NULL, failures,
                 at);
    ck_assert_int_eq(cJSON_GetArraySize(failures), 1);
    ck_assert_str_eq(cJSON_GetArrayItem(failures, 0)->valuestring,
                     "output-not-contains: \"raw error\" is in the run's output");
    ck_assert_int_eq(cJSON_GetArrayItem(at, 0)->valueint, 10);
    cJSON_Delete(expect);
    cJSON_Delete(lines);
    cJSON_Delete(failures);
    cJSON_Delete(at);
    cJSON_Delete(delta);
    sc_free(sc);
}
END_TEST

/* ---- references --------------------------------------------------------- */

START_TEST(test_a_reference_to_nothing_names_file_line_and_field)
{
    rs_err e;
    ck_assert_int_eq(tk_resolve(TK_HEAD "  - name: a\n"
                                        "    before:\n"
                                        "      - kube.patch: {ref: Kustomization/flux-sytem/"
                                        "flux-system, merge-patch: {spec: {suspend: true}}}\n",
                                &e),
                     RS_DATAERR);
    char want[1024];
    snprintf(want, sizeof want,
             "%s/s.yaml:8:27: runs[0].before[0].kube.patch.ref: names no object "
             "(\"Kustomization/flux-sytem/flux-system\")",
             ts_dir);
    ck_assert_msg(strncmp(e.msg, want, strlen(want)) == 0, "got '%s'", e.msg);
    ck_assert_int_eq(tk_resolve(TK_HEAD "  - name: a\n"
                                        "    expect:\n"
                                        "      state:\n"
                                        "        - {ref: Secret/kyverno/ghcr-auht, path: /data, "
                                        "absent: true}\n",
                                &e),
                     RS_DATAERR);
    ck_assert_msg(strstr(e.msg, "runs[0].expect.state[0].ref: names no object"), "%s", e.msg);
}
END_TEST

START_TEST(test_objects_that_will_exist_by_then_resolve)
{
    rs_err e;
    /* In the world as built; created by the core by name (the Lease, a
     * fan-out consumer) even after a deletion. */
    ck_assert_msg(tk_resolve(TK_HEAD
                             "  - name: a\n"
                             "    before:\n"
                             "      - kube.delete: {ref: Secret/kyverno/ghcr-auth}\n"
                             "      - kube.delete: {ref: Lease/flux-system/ghcr-auth-refresh}\n"
                             "  - name: b\n"
                             "    before:\n"
                             "      - kube.patch: {ref: Secret/kyverno/ghcr-auth, "
                             "merge-patch: {data: {}}}\n"
                             "      - kube.patch: {ref: Lease/flux-system/ghcr-auth-refresh, "
                             "merge-patch: {spec: {}}}\n",
                             &e) == RS_OK,
                  "%s", e.msg);
    /* Created by an earlier item of before:, an earlier run's during:, or a
     * node.add; during: and expect: see this run's creations in any order. */
    ck_assert_msg(tk_resolve(TK_HEAD
                             "  - name: a\n"
                             "    before:\n"
                             "      - kube.apply: {object: {kind: ConfigMap, metadata: {name: c, "
                             "namespace: flux-system}}}\n"
                             "      - kube.patch: {ref: ConfigMap/flux-system/c, merge-patch: {}}\n"
                             "    during:\n"
                             "      - before-call: \"kube.get *\"\n"
                             "        do: {check: [{ref: Node/prod-worker-9, path: /spec, absent: "
                             "true}]}\n"
                             "      - before-call: \"kube.list *\"\n"
                             "        do: {node.add: {role: worker, name: prod-worker-9}}\n"
                             "    expect:\n"
                             "      state: [{ref: Node/prod-worker-9, path: /spec/unschedulable, "
                             "absent: true}]\n"
                             "  - name: b\n"
                             "    before:\n"
                             "      - kube.delete: {ref: Node/prod-worker-9}\n",
                             &e) == RS_OK,
                  "%s", e.msg);
    /* A perturb-menu event may be inserted anywhere. */
    ck_assert_msg(tk_resolve(TK_HEAD "  - name: a\n"
                                     "perturb-menu:\n"
                                     "  - name: m\n"
                                     "    do: {kube.delete: {ref: Node/prod-worker-7}}\n"
                                     "  - name: n\n"
                                     "    do: {node.add: {role: worker, name: prod-worker-7}}\n",
                             &e) == RS_OK,
                  "%s", e.msg);
}
END_TEST

START_TEST(test_an_object_created_later_does_not_resolve_an_earlier_before)
{
    rs_err e;
    ck_assert_int_eq(tk_resolve(TK_HEAD "  - name: a\n"
                                        "    before:\n"
                                        "      - kube.patch: {ref: ConfigMap/flux-system/c, "
                                        "merge-patch: {}}\n"
                                        "      - kube.apply: {object: {kind: ConfigMap, metadata: "
                                        "{name: c, namespace: flux-system}}}\n",
                                &e),
                     RS_DATAERR);
    ck_assert_msg(strstr(e.msg, "s.yaml:8:27: runs[0].before[0].kube.patch.ref: names no object"),
                  "%s", e.msg);
    ck_assert_int_eq(tk_resolve(TK_HEAD "  - name: a\n"
                                        "    during:\n"
                                        "      - before-call: \"kube.get *\"\n"
                                        "        do: {kube.apply: {object: {kind: ConfigMap, "
                                        "metadata: {name: c, namespace: flux-system}}}}\n"
                                        "  - name: b\n"
                                        "  - name: c\n"
                                        "    before:\n"
                                        "      - check: [{ref: ConfigMap/flux-system/c, path: "
                                        "/data, absent: true}]\n"
                                        "      - check: [{ref: ConfigMap/flux-system/d, path: "
                                        "/data, absent: true}]\n",
                                &e),
                     RS_DATAERR);
    ck_assert_msg(strstr(e.msg, "runs[2].before[1].check[0].ref: names no object "
                                "(\"ConfigMap/flux-system/d\")"),
                  "%s", e.msg);
}
END_TEST

static Suite *checks_suite(void)
{
    Suite *s = suite_create("scenario_checks");
    TCase *t = tcase_create("checks");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 60);
    tcase_add_test(t, test_check_action_keeps_each_check_and_its_line);
    tcase_add_test(t, test_check_evaluates_like_expect_state);
    tcase_add_test(t, test_bad_check_is_refused_naming_the_field);
    tcase_add_test(t, test_output_not_contains_is_a_list_of_texts_per_strategy);
    tcase_add_test(t, test_output_not_contains_fails_at_its_own_line);
    tcase_add_test(t, test_a_reference_to_nothing_names_file_line_and_field);
    tcase_add_test(t, test_objects_that_will_exist_by_then_resolve);
    tcase_add_test(t, test_an_object_created_later_does_not_resolve_an_earlier_before);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(checks_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
