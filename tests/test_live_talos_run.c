/*
 * test_live_talos_run.c — the talosctl driver (core/live/live_talos_run.c,
 * live_talos_exec.c) against a fake talosctl that records what it was given.
 *
 * Hazard: H106 — the ghcr.io auth goes to Talos as a RegistryAuthConfig
 * document, by file, never argv: the patch file is mode 0600 in a private
 * 0700 directory, named by `--patch @FILE`, and both are gone after the
 * call, whether talosctl succeeded, failed, or could not be started. Neither
 * the child's argv nor its environment carries the credential in any
 * encoding (raw, base64 of the password, base64 of user:password), and a
 * token the operator exported for another tool does not reach it.
 * Hazard: H118 — reads go through the strict readers: a garbled etcd status
 * is a failure (502), never healthy. An exit without a gRPC code this driver
 * knows, a timeout or an oversized answer is a transport error whose write
 * may have been applied (sent unknown), never a clean failure.
 */
#include "core/cred/cred.h"
#include "core/live/live_talos.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define USER "deploy-bot"
#define PASS "tok-S3cret/with+base64=chars"

static char d[128];    /* the fixture's directory */
static char prog[256]; /* the fake talosctl */
static char tmpp[256]; /* tmp_parent for patch directories */

static char *slurp(const char *fmt, int n)
{
    char path[512];
    snprintf(path, sizeof path, fmt, d, n);
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    char *buf = calloc(1, 1 << 20);
    size_t got = fread(buf, 1, (1 << 20) - 1, f);
    buf[got] = '\0';
    fclose(f);
    return buf;
}

static void put(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", d, name);
    if (!text) {
        unlink(path);
        return;
    }
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void setup(void)
{
    snprintf(d, sizeof d, "/tmp/test_live_talos_run.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(d));
    snprintf(prog, sizeof prog, "%s/talosctl", d);
    snprintf(tmpp, sizeof tmpp, "%s/tmp", d);
    ck_assert_int_eq(mkdir(tmpp, 0700), 0);
    FILE *f = fopen(prog, "w");
    fprintf(
        f,
        "#!/bin/sh\n"
        "D='%s'\n"
        "n=$(cat \"$D/count\" 2>/dev/null || echo 0); n=$((n+1)); echo $n >\"$D/count\"\n"
        "for a in \"$@\"; do printf '%%s\\n' \"$a\"; done >\"$D/argv.$n\"\n"
        "env >\"$D/env.$n\"\n"
        "for a in \"$@\"; do case \"$a\" in @*) f=${a#@}\n"
        "  stat -c '%%a %%F' \"$f\" >\"$D/file.$n\"; stat -c '%%a' \"${f%%/*}\" >\"$D/dir.$n\"\n"
        "  cp \"$f\" \"$D/content.$n\";; esac; done\n"
        "touch \"$D/started.$$\"\n"
        "if [ -f \"$D/barrier\" ]; then i=0; while [ $i -lt 200 ]; do\n"
        "  [ $(ls \"$D\" | grep -c '^started') -ge $(cat \"$D/barrier\") ] && break\n"
        "  i=$((i+1)); sleep 0.05; done; [ $i -lt 200 ] || exit 3; fi\n"
        "[ -f \"$D/stdout\" ] && cat \"$D/stdout\"\n"
        "[ -f \"$D/stderr\" ] && cat \"$D/stderr\" >&2\n"
        "[ -f \"$D/sleep\" ] && sleep \"$(cat \"$D/sleep\")\"\n"
        "[ -f \"$D/flood\" ] && head -c 3000000 /dev/zero | tr '\\0' x\n"
        "exit $(cat \"$D/exit\" 2>/dev/null || echo 0)\n",
        d);
    fclose(f);
    chmod(prog, 0700);
    setenv("TALOSCONFIG", "/nonexistent/talosconfig", 1);
    setenv("BAO_TOKEN", "s.bao-token-not-for-talosctl", 1);
    setenv("GHCR_PASSWORD", PASS, 1);
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    ck_assert_int_eq(system(cmd), 0);
    unsetenv("BAO_TOKEN");
    unsetenv("GHCR_PASSWORD");
}

static live_talos *open_driver(const char *program, int64_t timeout_ms)
{
    live_talos *lt = NULL;
    rs_err e;
    rs_err_clear(&e);
    live_talos_opts o = {.talosctl = program,
                         .talosconfig = "/etc/reassert/talosconfig",
                         .timeout_ms = timeout_ms,
                         .tmp_parent = tmpp};
    ck_assert_msg(live_talos_open(&o, &lt, &e) == RS_OK, "%s", e.msg);
    return lt;
}

static cJSON *auth_intent(void)
{
    cJSON *i = cJSON_CreateObject();
    cJSON *ra = cJSON_AddObjectToObject(i, "registry-auth");
    cJSON_AddStringToObject(ra, "host", "ghcr.io");
    cJSON *a = cJSON_AddObjectToObject(ra, "auth");
    cJSON_AddStringToObject(a, "username", USER);
    cJSON_AddStringToObject(a, "password", PASS);
    return i;
}

static int patch(live_talos *lt, rs_resp *r)
{
    cJSON *i = auth_intent();
    rs_req req = {.op = RS_OP_TALOS_PATCH, .target = "prod-worker-1", .host = "ghcr.io", .body = i};
    int st = live_talos_call(lt, &req, r);
    cred_json_wipe_delete(i);
    return st;
}

static bool tmp_parent_empty(void)
{
    DIR *dir = opendir(tmpp);
    ck_assert_ptr_nonnull(dir);
    struct dirent *de;
    int n = 0;
    while ((de = readdir(dir)))
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) n++;
    closedir(dir);
    return n == 0;
}

/* No encoding of the credential in text: raw, base64(password),
 * base64(user:password), and the JSON-escaped form. */
static void assert_no_credential(const char *text, const char *what)
{
    char *b64p = base64_encode(PASS, strlen(PASS));
    char *b64up = base64_encode(USER ":" PASS, strlen(USER ":" PASS));
    ck_assert_msg(!strstr(text, PASS), "%s holds the password", what);
    ck_assert_msg(!strstr(text, "tok-S3cret\\/with"), "%s holds the JSON-escaped password", what);
    ck_assert_msg(!strstr(text, b64p), "%s holds base64(password)", what);
    ck_assert_msg(!strstr(text, b64up), "%s holds base64(user:password)", what);
    free(b64p);
    free(b64up);
}

START_TEST(test_patch_goes_by_a_private_file_removed_after_use)
{
    live_talos *lt = open_driver(prog, 0);
    rs_resp r;
    ck_assert_int_eq(patch(lt, &r), 200);
    ck_assert(r.sent == RS_SENT_YES);
    rs_resp_free(&r);
    char *argv = slurp("%s/argv.%d", 1), *env = slurp("%s/env.%d", 1);
    char *file = slurp("%s/file.%d", 1), *dir = slurp("%s/dir.%d", 1);
    char *content = slurp("%s/content.%d", 1);
    ck_assert_ptr_nonnull(argv);
    ck_assert_str_eq(file, "600 regular file\n");
    ck_assert_str_eq(dir, "700\n");
    /* The document shape (H106), the host as its name. */
    ck_assert_ptr_nonnull(strstr(content, "kind: RegistryAuthConfig\n"));
    ck_assert_ptr_nonnull(strstr(content, "name: \"ghcr.io\"\n"));
    char want[512];
    snprintf(want, sizeof want,
             "--talosconfig\n/etc/reassert/talosconfig\n--nodes\nprod-worker-1\npatch\n"
             "machineconfig\n--mode\nno-reboot\n--patch\n@%s/reassert-talos-",
             tmpp);
    ck_assert_msg(strstr(argv, want) != NULL, "argv:\n%s", argv);
    char *at = strchr(argv, '@');
    char path[512];
    ck_assert_int_eq(sscanf(at + 1, "%511s", path), 1);
    ck_assert_int_ne(access(path, F_OK), 0);
    ck_assert(tmp_parent_empty());
    assert_no_credential(argv, "talosctl's argv");
    assert_no_credential(env, "talosctl's environment");
    ck_assert_msg(!strstr(env, "BAO_TOKEN"), "an unrelated token reached talosctl");
    ck_assert_ptr_nonnull(strstr(env, "TALOSCONFIG=/nonexistent/talosconfig\n"));
    ck_assert_ptr_nonnull(strstr(env, "PATH="));
    free(argv);
    free(env);
    free(file);
    free(dir);
    cred_text_wipe_free(content);
    live_talos_close(lt);
}
END_TEST

START_TEST(test_the_patch_file_is_removed_on_failure_too)
{
    live_talos *lt = open_driver(prog, 0);
    rs_resp r;
    /* talosctl answers an Internal error: 500, sent. */
    put("stderr", "error: rpc error: code = Internal desc = patch failed\n");
    put("exit", "1");
    ck_assert_int_eq(patch(lt, &r), 500);
    ck_assert(r.sent == RS_SENT_YES);
    ck_assert_ptr_nonnull(strstr(r.error, "prod-worker-1"));
    rs_resp_free(&r);
    ck_assert(tmp_parent_empty());
    /* An exit without a gRPC code: may have been applied (ambiguous). */
    put("stderr", "panic: something else\n");
    ck_assert_int_eq(patch(lt, &r), 0);
    ck_assert(rs_resp_ambiguous(&r));
    rs_resp_free(&r);
    ck_assert(tmp_parent_empty());
    live_talos_close(lt);
    /* A program that cannot be started: not sent, and nothing left behind. */
    char missing[300];
    snprintf(missing, sizeof missing, "%s/no-such-talosctl", d);
    lt = open_driver(missing, 0);
    ck_assert_int_eq(patch(lt, &r), 0);
    ck_assert(rs_resp_not_sent(&r));
    rs_resp_free(&r);
    ck_assert(tmp_parent_empty());
    live_talos_close(lt);
    /* Only the two failing invocations ran (the third never started). */
    char *count = slurp("%s/count%.0d", 0);
    ck_assert_str_eq(count, "2\n");
    free(count);
}
END_TEST

START_TEST(test_grpc_codes_map_and_unknown_outcomes_are_ambiguous)
{
    live_talos *lt = open_driver(prog, 0);
    cJSON *img = cJSON_Parse("{\"image\":\"ghcr.io/devantler-tech/ksail:v7\"}");
    rs_req rm = {.op = RS_OP_TALOS_IMAGE_REMOVE, .target = "prod-worker-1", .body = img};
    rs_req pull = {.op = RS_OP_TALOS_IMAGE_PULL, .target = "prod-worker-1", .body = img};
    rs_resp r;
    put("exit", "1");
    /* H109: an absent image is NotFound, which the core treats as done. */
    put("stderr", "error from node prod-worker-1: rpc error: code = NotFound desc = image not "
                  "found\n");
    ck_assert_int_eq(live_talos_call(lt, &rm, &r), 404);
    rs_resp_free(&r);
    put("stderr", "rpc error: code = Unauthenticated desc = 401\n");
    ck_assert_int_eq(live_talos_call(lt, &pull, &r), 401);
    rs_resp_free(&r);
    put("stderr", "rpc error: code = Unavailable desc = connection reset\n");
    ck_assert_int_eq(live_talos_call(lt, &pull, &r), 0);
    ck_assert(rs_resp_ambiguous(&r));
    rs_resp_free(&r);
    char *argv = slurp("%s/argv.%d", 1);
    ck_assert_ptr_nonnull(
        strstr(argv, "image\nremove\n--namespace\ncri\nghcr.io/devantler-tech/ksail:v7\n"));
    free(argv);
    put("stderr", NULL);
    put("exit", NULL);
    /* An answer over the output bound, then one past the time bound. */
    put("flood", "1");
    ck_assert_int_eq(live_talos_call(lt, &pull, &r), 0);
    ck_assert(rs_resp_ambiguous(&r));
    rs_resp_free(&r);
    put("flood", NULL);
    live_talos_close(lt);
    lt = open_driver(prog, 200);
    put("sleep", "30");
    rs_req reboot = {.op = RS_OP_TALOS_REBOOT, .target = "prod-worker-1"};
    ck_assert_int_eq(live_talos_call(lt, &reboot, &r), 0);
    ck_assert(rs_resp_ambiguous(&r));
    ck_assert_ptr_nonnull(strstr(r.error, "timed out"));
    rs_resp_free(&r);
    put("sleep", NULL);
    argv = slurp("%s/argv.%d", 5);
    ck_assert_ptr_nonnull(strstr(argv, "--nodes\nprod-worker-1\nreboot\n--wait=false\n"));
    free(argv);
    cJSON_Delete(img);
    live_talos_close(lt);
}
END_TEST

START_TEST(test_reads_go_through_the_strict_readers)
{
    live_talos *lt = open_driver(prog, 0);
    rs_resp r;
    rs_req es = {.op = RS_OP_TALOS_ETCD_STATUS, .target = "prod-control-plane-2"};
    put("stdout", "MEMBER             DB SIZE   IN USE           LEADER             RAFT INDEX   "
                  "RAFT TERM   RAFT APPLIED INDEX   LEARNER   ERRORS\n"
                  "6457a4e8ecba5c61   25 MB     18 MB (72.00%)   6457a4e8ecba5c61   123456       "
                  "12          123456               false     \n");
    ck_assert_int_eq(live_talos_call(lt, &es, &r), 200);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r.body, "healthy")));
    rs_resp_free(&r);
    /* The sim's garbled answer: 502, so the core counts the peer unhealthy. */
    put("stdout", "MEMBER  DB SIZE  ???\n");
    ck_assert_int_eq(live_talos_call(lt, &es, &r), 502);
    ck_assert(!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r.body, "healthy")));
    rs_resp_free(&r);
    rs_req ea = {.op = RS_OP_TALOS_ETCD_ALARMS, .target = "prod-control-plane-2"};
    put("stdout", "");
    ck_assert_int_eq(live_talos_call(lt, &ea, &r), 200);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.body, "alarms")), 0);
    rs_resp_free(&r);
    cJSON *host = cJSON_Parse("{\"host\":\"ghcr.io\"}");
    rs_req ra = {
        .op = RS_OP_TALOS_READ_AUTH, .target = "prod-worker-1", .host = "ghcr.io", .body = host};
    put("stdout", "version: v1alpha1\n---\napiVersion: v1alpha1\nkind: RegistryAuthConfig\n"
                  "name: ghcr.io\nusername: deploy-bot\npassword: tok\n");
    ck_assert_int_eq(live_talos_call(lt, &ra, &r), 200);
    ck_assert_ptr_nonnull(r.secret.paths[0]); /* the answer declares its secret */
    rs_resp_free(&r);
    put("stdout", "version: v1alpha1\n");
    ck_assert_int_eq(live_talos_call(lt, &ra, &r), 404);
    rs_resp_free(&r);
    char *argv = slurp("%s/argv.%d", 4);
    ck_assert_ptr_nonnull(strstr(argv, "get\nmachineconfig\n-o\njsonpath={.spec}\n"));
    free(argv);
    cJSON_Delete(host);
    live_talos_close(lt);
}
END_TEST

START_TEST(test_a_flag_shaped_argument_never_reaches_talosctl)
{
    live_talos *lt = open_driver(prog, 0);
    rs_resp r;
    rs_req bad_node = {.op = RS_OP_TALOS_REBOOT, .target = "--help"};
    ck_assert_int_eq(live_talos_call(lt, &bad_node, &r), 400);
    ck_assert(r.sent == RS_SENT_NO);
    rs_resp_free(&r);
    cJSON *img = cJSON_Parse("{\"image\":\"--all\"}");
    rs_req bad_img = {.op = RS_OP_TALOS_IMAGE_REMOVE, .target = "prod-worker-1", .body = img};
    ck_assert_int_eq(live_talos_call(lt, &bad_img, &r), 400);
    rs_resp_free(&r);
    cJSON_Delete(img);
    cJSON *two = cJSON_Parse("{\"node-annotations\":{\"a\":\"1\"},\"registry-auth\":{}}");
    rs_req bad_patch = {.op = RS_OP_TALOS_PATCH, .target = "prod-worker-1", .body = two};
    ck_assert_int_eq(live_talos_call(lt, &bad_patch, &r), 400);
    rs_resp_free(&r);
    cJSON_Delete(two);
    rs_req kube = {.op = RS_OP_KUBE_GET, .target = "prod-worker-1"};
    ck_assert_int_eq(live_talos_call(lt, &kube, &r), 400);
    rs_resp_free(&r);
    ck_assert_ptr_null(slurp("%s/count%.0d", 0));
    ck_assert(tmp_parent_empty());
    live_talos_close(lt);
}
END_TEST

/* The per-node reads of a batch run as concurrent invocations: every fake
 * waits until all three have started (bounded: it gives up, exit 3, after
 * about ten seconds), so one-at-a-time invocations would fail; a request
 * that cannot run is answered in its slot without an invocation. */
START_TEST(test_a_batch_of_reads_runs_its_invocations_together)
{
    live_talos *lt = open_driver(prog, 0);
    put("barrier", "3");
    put("stdout", "");
    rs_req reqs[4] = {{.op = RS_OP_TALOS_ETCD_ALARMS, .target = "prod-control-plane-1"},
                      {.op = RS_OP_TALOS_ETCD_ALARMS, .target = "--bad"},
                      {.op = RS_OP_TALOS_ETCD_ALARMS, .target = "prod-control-plane-2"},
                      {.op = RS_OP_TALOS_ETCD_ALARMS, .target = "prod-control-plane-3"}};
    rs_resp resps[4];
    live_talos_call_batch(lt, reqs, resps, 4, 4);
    int want[4] = {200, 400, 200, 200};
    for (int i = 0; i < 4; i++) {
        ck_assert_msg(resps[i].status == want[i], "request %d: %d (%s)", i, resps[i].status,
                      resps[i].error);
        rs_resp_free(&resps[i]);
    }
    live_talos_close(lt);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("live_talos_run");
    TCase *tc = tcase_create("driver");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_patch_goes_by_a_private_file_removed_after_use);
    tcase_add_test(tc, test_the_patch_file_is_removed_on_failure_too);
    tcase_add_test(tc, test_grpc_codes_map_and_unknown_outcomes_are_ambiguous);
    tcase_add_test(tc, test_reads_go_through_the_strict_readers);
    tcase_add_test(tc, test_a_flag_shaped_argument_never_reaches_talosctl);
    tcase_add_test(tc, test_a_batch_of_reads_runs_its_invocations_together);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
