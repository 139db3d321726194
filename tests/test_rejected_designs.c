/*
 * test_rejected_designs.c — the two designs the seed issue rejected, kept as
 * test-only strategies (never reachable from the shipped CLI), and the proof
 * that the scenario suite catches each of them.
 *
 *   check-only-first     registry proof only; "converged" if it passes. Blind
 *                        to every kind of cluster drift.
 *   point-in-time-probe  one read of variables-base and the consumers plus the
 *                        node annotations; no OpenBao read, no Talos auth
 *                        read, no Kustomization read; escalates to the full
 *                        (eager) transaction only on drift it can see.
 *
 * If a future change made partial-talos-apply, stale-openbao-seed or
 * failed-fence-resume pass under either, the suite would no longer protect
 * against that design — so these tests fail.
 */
#include "cli/cli.h"
#include "core/node/node.h"
#include "core/txn_int.h"
#include "sim/runner/runner.h"
#include "sim/scenario/scenario.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static void check_only_first_run(rs_txn *tx, rs_result *res)
{
    (void)tx; /* the registry proof already passed in preflight */
    res->outcome = "converged";
}

/* The consumers and variables-base equal desired, every node's annotations
 * current — read once, before any fence. */
static bool probe_sees_no_drift(rs_txn *tx)
{
    const rs_config *c = tx->cfg;
    char *text = NULL;
    size_t len = 0;
    int st = kobj_secret_read(tx, c->variables_ns, c->variables_name, c->variables_key, &text, &len,
                              NULL, NULL);
    bool ok = st == 200 && text && cred_matches_text(&tx->cred, text, len);
    free(text);
    for (size_t i = 0; ok && i < c->n_fanout; i++) {
        st = kobj_secret_read(tx, c->fanout_namespaces[i], c->consumer_name, c->consumer_key, &text,
                              &len, NULL, NULL);
        ok = st == 200 && text && cred_matches_text(&tx->cred, text, len);
        free(text);
    }
    rs_resp r;
    st = kobj_list(tx, "Node", NULL, NULL, NULL, &r);
    const cJSON *it;
    const cJSON *items = st == 200 ? cJSON_GetObjectItemCaseSensitive(r.body, "items") : NULL;
    cJSON_ArrayForEach(it, items)
    {
        const char *rev = kobj_annotation(it, c->ann.revision);
        const char *img = kobj_annotation(it, c->ann.image);
        ok = ok && rev && img && strcmp(rev, tx->revision) == 0 &&
             strcmp(img, c->operator_image) == 0;
    }
    rs_resp_free(&r);
    return ok && st == 200;
}

static void point_in_time_probe_run(rs_txn *tx, rs_result *res)
{
    if (probe_sees_no_drift(tx)) {
        res->outcome = "converged";
        return;
    }
    txn_repair(tx, res); /* escalate: the unchanged (eager) transaction */
}

static const rs_strategy check_only_first = {
    .name = "check-only-first", .fence_first = true, .run = check_only_first_run};
static const rs_strategy point_in_time_probe = {
    .name = "point-in-time-probe", .fence_first = true, .run = point_in_time_probe_run};

static sc_scenario *load(const char *name)
{
    const char *src = getenv("REASSERT_SRC");
    char path[4096];
    snprintf(path, sizeof path, "%s/scenarios/%s.yaml", src ? src : ".", name);
    sc_scenario *sc = NULL;
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(sc_load(path, &sc, &e) == RS_OK, "%s", e.msg);
    return sc;
}

static bool passes_under(const char *scenario, const rs_strategy *s)
{
    sc_scenario *sc = load(scenario);
    bool passed = sim_scenario_run(sc, s, "lazy", cli_sim_run, NULL);
    sc_free(sc);
    return passed;
}

static const char *const hazards[] = {"node/partial-talos-apply", "fanout/stale-openbao-seed",
                                      "recovery/failed-fence-resume"};

START_TEST(test_lazy_passes_the_hazard_scenarios)
{
    /* The control: the same API and expectations pass for the real design. */
    ck_assert(passes_under(hazards[_i], rs_strategy_find("lazy")));
}
END_TEST

START_TEST(test_check_only_first_fails_the_hazard_scenarios)
{
    ck_assert_msg(!passes_under(hazards[_i], &check_only_first), "%s passed under check-only-first",
                  hazards[_i]);
}
END_TEST

START_TEST(test_point_in_time_probe_fails_the_hazard_scenarios)
{
    ck_assert_msg(!passes_under(hazards[_i], &point_in_time_probe),
                  "%s passed under point-in-time-probe", hazards[_i]);
}
END_TEST

START_TEST(test_probe_misses_the_auth_only_node)
{
    /* Only the auth-only run: the probe reads annotations, which are fine. */
    sc_scenario *sc = load("node/partial-talos-apply");
    cJSON *runs = NULL;
    ck_assert(!sim_scenario_run(sc, &point_in_time_probe, "lazy", cli_sim_run, &runs));
    const cJSON *r;
    bool auth_only_failed = false;
    cJSON_ArrayForEach(r, runs)
    {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "name"));
        if (name && strcmp(name, "reassert-auth-only") == 0)
            auth_only_failed = !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "passed"));
    }
    ck_assert(auth_only_failed);
    cJSON_Delete(runs);
    sc_free(sc);
}
END_TEST

START_TEST(test_rejected_designs_are_not_shipped)
{
    ck_assert_ptr_null(rs_strategy_find("check-only-first"));
    ck_assert_ptr_null(rs_strategy_find("point-in-time-probe"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rejected_designs");
    TCase *tc = tcase_create("hazards");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_lazy_passes_the_hazard_scenarios, 0, 3);
    tcase_add_loop_test(tc, test_check_only_first_fails_the_hazard_scenarios, 0, 3);
    tcase_add_loop_test(tc, test_point_in_time_probe_fails_the_hazard_scenarios, 0, 3);
    tcase_add_test(tc, test_probe_misses_the_auth_only_node);
    tcase_add_test(tc, test_rejected_designs_are_not_shipped);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
