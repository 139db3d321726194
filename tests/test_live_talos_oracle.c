/*
 * test_live_talos_oracle.c — the live run-liveness oracle
 * (core/live/live_oracle.c): a configured command, run without a shell, its
 * JSON answer parsed strictly.
 *
 * Hazard: H19, H20 — a failed query (non-zero exit, timeout) and an answer
 * without a status both mean unknown, never dead: every shape this version
 * does not know (another key, an empty or unknown status, a completed run
 * without a conclusion, a repeated key, two documents) is refused.
 * Hazard: H22 — the query names both the run id and the attempt, and an
 * answer naming another attempt is refused.
 * Hazard: H18 — a holder whose run reference names no GitHub Actions run
 * (a local or sim run) gets no query at all.
 */
#include "core/live/live_oracle.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char d[128];
static char prog[256];

static void setup(void)
{
    snprintf(d, sizeof d, "/tmp/test_live_oracle.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(d));
    snprintf(prog, sizeof prog, "%s/gh", d);
    FILE *f = fopen(prog, "w");
    fprintf(f,
            "#!/bin/sh\n"
            "D='%s'\n"
            "n=$(cat \"$D/count\" 2>/dev/null || echo 0); n=$((n+1)); echo $n >\"$D/count\"\n"
            "for a in \"$@\"; do printf '%%s\\n' \"$a\"; done >\"$D/argv\"\n"
            "env >\"$D/env\"\n"
            "cat \"$D/answer\"\n"
            "exit $(cat \"$D/exit\" 2>/dev/null || echo 0)\n",
            d);
    fclose(f);
    chmod(prog, 0700);
    setenv("GH_TOKEN", "gh-token-for-gh", 1);
    setenv("BAO_TOKEN", "s.not-for-gh", 1);
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    ck_assert_int_eq(system(cmd), 0);
    unsetenv("GH_TOKEN");
    unsetenv("BAO_TOKEN");
}

static void put(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", d, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static char *slurp(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", d, name);
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    char *buf = calloc(1, 65536);
    size_t n = fread(buf, 1, 65535, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static rs_code parse(const char *text, int attempt, bool *terminal)
{
    rs_err e;
    rs_err_clear(&e);
    return live_oracle_parse(text, strlen(text), attempt, terminal, &e);
}

START_TEST(test_known_answers_parse)
{
    bool t = false;
    ck_assert_int_eq(parse("{\"conclusion\":\"success\",\"status\":\"completed\"}\n", 1, &t),
                     RS_OK);
    ck_assert(t);
    const char *terminal[] = {"failure", "cancelled", "skipped", "timed_out", "startup_failure"};
    for (size_t i = 0; i < 5; i++) {
        char buf[128];
        snprintf(buf, sizeof buf, "{\"status\":\"completed\",\"conclusion\":\"%s\"}", terminal[i]);
        t = false;
        ck_assert_int_eq(parse(buf, 1, &t), RS_OK);
        ck_assert(t);
    }
    const char *live[] = {"queued", "in_progress", "waiting", "requested", "pending"};
    for (size_t i = 0; i < 5; i++) {
        char buf[128];
        snprintf(buf, sizeof buf, " {\"status\":\"%s\",\"conclusion\":\"\"} \n", live[i]);
        t = true;
        ck_assert_int_eq(parse(buf, 1, &t), RS_OK);
        ck_assert(!t);
    }
    t = false;
    ck_assert_int_eq(
        parse("{\"attempt\":2,\"status\":\"completed\",\"conclusion\":\"failure\"}", 2, &t), RS_OK);
    ck_assert(t);
}
END_TEST

START_TEST(test_every_other_answer_is_refused)
{
    const char *bad[] = {
        "",
        "\n",
        "null",
        "[]",
        "{}",
        "{\"status\":\"completed\"}",
        "{\"conclusion\":\"success\"}",
        "{\"status\":\"\",\"conclusion\":\"\"}",
        "{\"status\":\"completed\",\"conclusion\":\"\"}",
        "{\"status\":\"in_progress\",\"conclusion\":\"success\"}",
        "{\"status\":\"done\",\"conclusion\":\"success\"}",
        "{\"status\":\"completed\",\"conclusion\":\"succeeded\"}",
        "{\"status\":\"COMPLETED\",\"conclusion\":\"success\"}",
        "{\"status\":1,\"conclusion\":\"success\"}",
        "{\"status\":\"completed\",\"conclusion\":null}",
        "{\"status\":\"in_progress\",\"conclusion\":\"\",\"status\":\"completed\"}",
        "{\"status\":\"completed\",\"conclusion\":\"success\",\"url\":\"x\"}",
        "{\"status\":\"completed\",\"conclusion\":\"success\",\"attempt\":1}",
        "{\"status\":\"completed\",\"conclusion\":\"success\"}{}",
        "{\"status\":\"completed\",\"conclusion\":\"success\"} trailing",
        "status: completed",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bool t = false;
        ck_assert_msg(parse(bad[i], 2, &t) == RS_FAILED, "accepted: %s", bad[i]);
    }
}
END_TEST

static live_oracle *open_oracle(const char *command)
{
    live_oracle *o = NULL;
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(live_oracle_open(&(live_oracle_opts){.command = command}, &o, &e) == RS_OK, "%s",
                  e.msg);
    return o;
}

START_TEST(test_the_command_is_asked_about_the_run_and_the_attempt)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "%s run view {run} --attempt '{attempt}' --json \"status,conclusion\"", prog);
    live_oracle *o = open_oracle(cmd);
    put("answer", "{\"status\":\"completed\",\"conclusion\":\"cancelled\"}\n");
    rs_req req = {.op = RS_OP_RUN_LIVENESS, .target = "gh123456.2"};
    rs_resp r;
    ck_assert_int_eq(live_oracle_call(o, &req, &r), 200);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r.body, "terminal")));
    rs_resp_free(&r);
    char *argv = slurp("argv"), *env = slurp("env");
    ck_assert_str_eq(argv, "run\nview\n123456\n--attempt\n2\n--json\nstatus,conclusion\n");
    ck_assert_ptr_nonnull(strstr(env, "GH_TOKEN=gh-token-for-gh\n"));
    ck_assert_msg(!strstr(env, "BAO_TOKEN"), "an unrelated token reached the command");
    free(argv);
    free(env);
    put("answer", "{\"status\":\"in_progress\",\"conclusion\":\"\"}");
    ck_assert_int_eq(live_oracle_call(o, &req, &r), 200);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(r.body, "terminal")));
    rs_resp_free(&r);
    /* A failing command and an unknown answer: no "terminal" to read. */
    put("exit", "1");
    ck_assert_int_ne(live_oracle_call(o, &req, &r), 200);
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(r.body, "terminal"));
    rs_resp_free(&r);
    put("exit", "0");
    put("answer", "{\"status\":\"completed\"}");
    ck_assert_int_eq(live_oracle_call(o, &req, &r), 502);
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(r.body, "terminal"));
    rs_resp_free(&r);
    /* No GitHub run in the reference: no query at all (4 so far). */
    const char *refs[] = {"sim.stage", "local",   "gh.1",     "gh12",
                          "gh12.",     "gh12.1x", "gh12.1.2", NULL};
    for (size_t i = 0; refs[i]; i++) {
        rs_req other = {.op = RS_OP_RUN_LIVENESS, .target = refs[i]};
        ck_assert_int_eq(live_oracle_call(o, &other, &r), 422);
        rs_resp_free(&r);
    }
    rs_req none = {.op = RS_OP_RUN_LIVENESS};
    ck_assert_int_eq(live_oracle_call(o, &none, &r), 422);
    rs_resp_free(&r);
    char *count = slurp("count");
    ck_assert_str_eq(count, "4\n");
    free(count);
    live_oracle_close(o);
}
END_TEST

START_TEST(test_no_or_a_malformed_command)
{
    live_oracle *o = open_oracle(NULL);
    rs_req req = {.op = RS_OP_RUN_LIVENESS, .target = "gh1.1"};
    rs_resp r;
    ck_assert_int_eq(live_oracle_call(o, &req, &r), 0);
    ck_assert(rs_resp_not_sent(&r));
    ck_assert_ptr_nonnull(strstr(r.error, "no liveness command"));
    rs_resp_free(&r);
    live_oracle_close(o);
    const char *bad[] = {"gh run view 'unbalanced {run}", "gh run view --json status", "   ",
                         "gh run view {run} --json status,conclusion"};
    for (size_t i = 0; i < 4; i++) { /* blank is a mistake, not "no command" */
        rs_err e;
        rs_err_clear(&e);
        o = NULL;
        ck_assert_int_eq(live_oracle_open(&(live_oracle_opts){.command = bad[i]}, &o, &e),
                         RS_USAGE);
        ck_assert_ptr_null(o);
    }
    /* A program that does not exist: not sent. */
    o = open_oracle("/nonexistent/gh run view {run} --attempt {attempt}");
    ck_assert_int_eq(live_oracle_call(o, &req, &r), 0);
    ck_assert(rs_resp_not_sent(&r));
    rs_resp_free(&r);
    live_oracle_close(o);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("live_talos_oracle");
    TCase *tc = tcase_create("oracle");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_known_answers_parse);
    tcase_add_test(tc, test_every_other_answer_is_refused);
    tcase_add_test(tc, test_the_command_is_asked_about_the_run_and_the_attempt);
    tcase_add_test(tc, test_no_or_a_malformed_command);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
