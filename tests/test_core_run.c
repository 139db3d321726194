/*
 * test_core_run.c — the core run in-process (no fork) against a world built
 * from a shipped scenario, as `reassert run --transport sim:FILE.db` does, so
 * valgrind and the sanitizers see every allocation of a full transaction:
 * a rotation Stage, then a no-drift Reassert that must write nothing.
 */
#include "cli/cli.h"
#include "sim/runner/runner.h"
#include "sim/scenario/scenario.h"
#include "sim/world/world.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int run_in_process(const char *db, const char *run_name, const char *strategy, FILE *out)
{
    rs_run_args args;
    rs_err e;
    rs_err_clear(&e);
    char *argv[] = {"--strategy", (char *)strategy};
    ck_assert(run_args_parse(2, argv, &args, &e) == RS_OK);
    return cli_run_once(
        &args, &(sim_run_req){.db_path = db, .run_name = run_name, .desired_name = "current"}, out);
}

static double counter(sim_world *w, const char *name)
{
    cJSON *c = sim_counters_snapshot(w);
    double v = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(c, name));
    cJSON_Delete(c);
    return v;
}

START_TEST(test_stage_then_no_drift_reassert_in_process)
{
    const char *strategies[] = {"lazy", "eager"};
    const char *src = getenv("REASSERT_SRC");
    char path[4096];
    snprintf(path, sizeof path, "%s/scenarios/two-run-stage-reassert.yaml", src ? src : ".");
    sc_scenario *sc = NULL;
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(sc_load(path, &sc, &e) == RS_OK, "%s", e.msg);
    char db[] = "/tmp/reassert-core-run-XXXXXX";
    int fd = mkstemp(db);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_msg(sim_world_build(db, sc, &e) == RS_OK, "%s", e.msg);
    FILE *out = fopen("/dev/null", "w");
    ck_assert_int_eq(run_in_process(db, "stage", strategies[_i], out), 0);
    sim_world *w = NULL;
    ck_assert(sim_world_open(db, &w, &e) == RS_OK);
    double writes = counter(w, "writes"), restarts = counter(w, "controller_restarts");
    sim_world_close(w);
    ck_assert_int_eq(run_in_process(db, "reassert", strategies[_i], out), 0);
    ck_assert(sim_world_open(db, &w, &e) == RS_OK);
    if (_i == 0) { /* lazy: the reassert wrote nothing and restarted nothing */
        ck_assert_double_eq(counter(w, "writes"), writes);
        ck_assert_double_eq(counter(w, "controller_restarts"), restarts);
    } else { /* eager: production today restarts the controller again */
        ck_assert_double_gt(counter(w, "controller_restarts"), restarts);
    }
    sim_world_close(w);
    fclose(out);
    unlink(db);
    sc_free(sc);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("core_run");
    TCase *tc = tcase_create("in_process");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_stage_then_no_drift_reassert_in_process, 0, 2);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
