/*
 * test_runner_report.c — what `reassert sim` reports about a run (DESIGN.md
 * §5.1, §7.1): a run's process killed by a signal fails its run, naming the
 * signal; a failure that quotes a credential reaches no report in any
 * encoding; each run names the line a failure annotation points at.
 */
#include "cli/cli.h"
#include "reports/step_outputs.h"
#include "sim/runner/runner.h"
#include "sim/runner/runner_int.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static sc_scenario *load_path(const char *path)
{
    sc_scenario *sc = NULL;
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(sc_load(path, &sc, &e) == RS_OK, "%s", e.msg);
    return sc;
}

static sc_scenario *load_bad(const char *name)
{
    const char *src = getenv("REASSERT_SRC");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/harness/inputs/%s.yaml", src ? src : ".", name);
    return load_path(path);
}

/* Death by SIGABRT before the run's first call. A run that a `crash` fault
 * may end is the one that runs in a process of its own (runner.c); any
 * other runs in the runner's process, where its death is the runner's. */
static int abort_at_once(const sim_run_req *req, FILE *out)
{
    (void)req;
    (void)out;
    signal(SIGABRT, SIG_DFL);
    abort();
}

/* A `crash` fault ends the run (its own exit 137, expected; not a death):
 * run as written, it passes. */
static sc_scenario *no_expect_scenario(char *path, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, len, "%s/reassert-no-expect-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    const char text[] = "name: no-expect\nseed: 1\ncluster: {preset: prod, credential: current}\n"
                        "desired: current\nruns:\n  - name: r\n"
                        "    faults: [{on: \"kube.get *\", nth: 3, crash: true}]\n"
                        "    expect: {exit: 137}\n";
    ck_assert_int_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    return load_path(path);
}

START_TEST(test_run_killed_by_signal_fails_naming_it)
{
    char path[4096];
    sc_scenario *sc = no_expect_scenario(path, sizeof path);
    const rs_strategy *lazy = rs_strategy_find("lazy");
    ck_assert_msg(sim_scenario_run(sc, lazy, "lazy", cli_sim_run, NULL),
                  "control: the same run without the signal passes");
    cJSON *runs = NULL;
    ck_assert(!sim_scenario_run(sc, lazy, "lazy", abort_at_once, &runs));
    char *txt = cJSON_PrintUnformatted(runs);
    ck_assert_msg(strstr(txt, "died by SIGABRT"), "no failure names the signal: %s", txt);
    free(txt);
    cJSON_Delete(runs);
    sc_free(sc);
    unlink(path);
}
END_TEST

START_TEST(test_failure_quoting_a_password_is_redacted)
{
    sc_scenario *sc = load_bad("secret-output-contains");
    cJSON *runs = NULL;
    ck_assert(!sim_scenario_run(sc, rs_strategy_find("lazy"), "lazy", cli_sim_run, &runs));
    char *txt = cJSON_PrintUnformatted(runs);
    ck_assert_msg(!strstr(txt, "LEAKCANARY"), "a password reaches the report: %s", txt);
    ck_assert_msg(strstr(txt, "<redacted:current>"), "no redaction marker: %s", txt);
    free(txt);
    cJSON_Delete(runs);
    sc_free(sc);
}
END_TEST

START_TEST(test_secret_state_check_prints_fingerprints)
{
    sc_scenario *sc = load_bad("secret-state-path");
    cJSON *runs = NULL;
    ck_assert(!sim_scenario_run(sc, rs_strategy_find("lazy"), "lazy", cli_sim_run, &runs));
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(runs, 0), "failures");
    ck_assert_int_ge(cJSON_GetArraySize(f), 3);
    const cJSON *it;
    cJSON_ArrayForEach(it, f)
    {
        const char *s = cJSON_GetStringValue(it);
        if (strncmp(s, "state Secret/", 13) != 0) continue;
        ck_assert_msg(strstr(s, "fingerprint sha256:"), "not a fingerprint: %s", s);
        ck_assert_msg(!strstr(s, "eyJ"), "base64 JSON in a failure: %s", s);
    }
    cJSON_Delete(runs);
    sc_free(sc);
}
END_TEST

/* expect-fails.yaml: run "second" has its `expect:` on line 18. */
START_TEST(test_run_reports_its_expect_line)
{
    sc_scenario *sc = load_bad("expect-fails");
    cJSON *runs = NULL;
    ck_assert(!sim_scenario_run(sc, rs_strategy_find("lazy"), "lazy", cli_sim_run, &runs));
    const cJSON *second = cJSON_GetArrayItem(runs, 1);
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(second, "name")),
                     "second");
    ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(second, "line")->valueint, 18);
    cJSON_Delete(runs);
    sc_free(sc);
}
END_TEST

/* expect-key-lines.yaml: each failed expectation carries its own line, and
 * the annotation points there (DESIGN §7.1), not at the run's `expect:`. */
static int line_of_failure(const cJSON *run, const char *prefix)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(run, "failures");
    const cJSON *lines = cJSON_GetObjectItemCaseSensitive(run, "failure_lines");
    ck_assert_int_eq(cJSON_GetArraySize(f), cJSON_GetArraySize(lines));
    for (int i = 0; i < cJSON_GetArraySize(f); i++)
        if (!strncmp(cJSON_GetArrayItem(f, i)->valuestring, prefix, strlen(prefix)))
            return cJSON_GetArrayItem(lines, i)->valueint;
    ck_abort_msg("no failure starting with %s", prefix);
    return -1;
}

START_TEST(test_failures_carry_their_key_line)
{
    sc_scenario *sc = load_bad("expect-key-lines");
    cJSON *runs = NULL;
    ck_assert(!sim_scenario_run(sc, rs_strategy_find("lazy"), "lazy", cli_sim_run, &runs));
    const cJSON *r = cJSON_GetArrayItem(runs, 0);
    ck_assert_int_eq(line_of_failure(r, "delta.controller_restarts:"), 13);
    ck_assert_int_eq(line_of_failure(r, "delta.writes_by_kind.Secret:"), 15);
    ck_assert_int_eq(line_of_failure(r, "output-contains:"), 17);
    ck_assert_int_eq(line_of_failure(r, "state Lease/"), 19);
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "file", "x.yaml");
    cJSON_AddStringToObject(s, "name", "expect-key-lines");
    cJSON_AddItemToObject(s, "runs", runs);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    runner_actions_annotate(out, s, true);
    fclose(out);
    ck_assert_msg(strstr(buf, "::error file=x.yaml,line=13::expect-key-lines [lazy] only: delta."
                              "controller_restarts"),
                  "%s", buf);
    ck_assert_msg(strstr(buf, ",line=19::expect-key-lines [lazy] only: state Lease/"), "%s", buf);
    free(buf);
    cJSON_Delete(s);
    sc_free(sc);
}
END_TEST

/* Issue 30: a step output's value cannot end its entry early or write
 * another output, whatever it holds — a line break, "name=value", or
 * another entry's delimiter line; a name outside GitHub's alphabet is
 * refused, never written. */
START_TEST(test_step_output_values_are_fenced)
{
    char path[] = "/tmp/step-outputs-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    const char *hostile = "a\nforged=1\nreassert_5feceb66ffc86f38d952786c6d696c79\nz";
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "nodes", hostile);
    cJSON_AddNumberToObject(o, "exit", 0);
    cJSON_AddBoolToObject(o, "fence_taken", false);
    rs_err e;
    rs_err_clear(&e);
    ck_assert_int_eq(reports_step_outputs_append(path, o, &e), RS_OK);
    /* Read back as GitHub does: "name<<D", the value's lines, "D". */
    FILE *f = fopen(path, "r");
    char line[256], name[64] = "", delim[80] = "", value[256] = "";
    int entries = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (!delim[0]) {
            char *at = strstr(line, "<<");
            ck_assert_ptr_nonnull(at);
            snprintf(name, sizeof name, "%.*s", (int)(at - line), line);
            snprintf(delim, sizeof delim, "%s", at + 2);
            value[0] = '\0';
        } else if (strcmp(line, delim) == 0) {
            entries++;
            if (strcmp(name, "nodes") == 0) ck_assert_str_eq(value, hostile);
            if (strcmp(name, "exit") == 0) ck_assert_str_eq(value, "0");
            if (strcmp(name, "fence_taken") == 0) ck_assert_str_eq(value, "false");
            delim[0] = '\0';
        } else {
            size_t n = strlen(value);
            ck_assert_uint_lt(n + strlen(line) + 2, sizeof value);
            if (n) value[n++] = '\n';
            memcpy(value + n, line, strlen(line) + 1);
        }
    }
    fclose(f);
    ck_assert_int_eq(entries, 3);
    ck_assert_str_eq(delim, "");
    cJSON_AddStringToObject(o, "bad name", "x");
    ck_assert_int_eq(reports_step_outputs_append(path, o, &e), RS_FAILED);
    ck_assert_ptr_nonnull(strstr(e.msg, "bad name"));
    cJSON_Delete(o);
    unlink(path);
}
END_TEST

static Suite *runner_report_suite(void)
{
    Suite *s = suite_create("runner_report");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_run_killed_by_signal_fails_naming_it);
    tcase_add_test(tc, test_failure_quoting_a_password_is_redacted);
    tcase_add_test(tc, test_secret_state_check_prints_fingerprints);
    tcase_add_test(tc, test_run_reports_its_expect_line);
    tcase_add_test(tc, test_failures_carry_their_key_line);
    tcase_add_test(tc, test_step_output_values_are_fenced);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(runner_report_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
