/*
 * test_live_talos_e2e.c — the Talos half of live mode end to end: the
 * talosctl driver (core/live/live_talos*.c) runs the stub talosctl
 * (tests/talosctl), which calls `reassert sim serve`'s test-only /talos/
 * endpoints (sim/serve/serve_talos.c), which apply each operation to a world
 * built from a shipped scenario. What the driver answers and what the world
 * holds afterwards must agree, call for call.
 *
 * Hazard: H106 — the ghcr.io auth lands in the node as the RegistryAuthConfig
 * document and reads back equal; a legacy-shape patch is refused by a
 * v1.13-like node; the patch travels by a private file (0600 in 0700) that is
 * gone afterwards, and no credential — raw, base64, base64 of
 * user:password — is in the stub's recorded argv or environment.
 * Hazard: H118 — the same healthy etcd member parses as healthy in both the
 * compact and the extended layout, an alarm list that is empty or a header
 * alone means no alarms, and a garbled status (etcd.garbled) is a failure.
 */
#include "core/cred/cred.h"
#include "core/live/live_talos.h"
#include "sim/scenario/scenario.h"
#include "sim/store/jsonpatch.h"
#include "sim/world/world.h"
#include "tests/support_transport.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define IMAGE "ghcr.io/devantler-tech/ksail:v7.178.30"

typedef struct e2e {
    char dir[128], tmp[160], cfg[160], rec[160];
    char *db;
    pid_t serve;
    char url[128];
    char user[128], pass[256];
    live_talos *lt;
} e2e;

/* The world, with a garbled etcd on one control plane and the current
 * credential's username/password known to the test. */
static void e2e_world(e2e *x)
{
    x->db = tt_scenario_world("two-run-stage-reassert.yaml");
    sim_world *w = NULL;
    rs_err e;
    rs_err_clear(&e);
    ck_assert(sim_world_open(x->db, &w, &e) == RS_OK);
    sc_event ev = {.kind = "etcd.garbled",
                   .args = cJSON_Parse("{\"node\":\"prod-control-plane-3\"}")};
    ck_assert_msg(sim_world_apply_event(w, &ev, &e) == RS_OK, "%s", e.msg);
    cJSON_Delete(ev.args);
    char *cred = NULL, *cipher = NULL;
    ck_assert(sim_world_credential(w, "current", &cred, &cipher, &e) == RS_OK);
    cJSON *doc = cJSON_Parse(cred);
    snprintf(x->user, sizeof x->user, "%s",
             cJSON_GetStringValue(jsonpointer_get(doc, "/auths/ghcr.io/username")));
    snprintf(x->pass, sizeof x->pass, "%s",
             cJSON_GetStringValue(jsonpointer_get(doc, "/auths/ghcr.io/password")));
    cred_json_wipe_delete(doc);
    cred_text_wipe_free(cred);
    free(cipher);
    sim_world_close(w);
}

/* `reassert sim serve` on a free loopback port; its URL is the first line. */
static void e2e_serve(e2e *x, const char *scenario)
{
    /* REASSERT_BIN under ctest; else the reassert beside this test binary
     * (tests/valgrind.sh runs the suites without ctest's environment). */
    char here[4096] = "";
    const char *bin = getenv("REASSERT_BIN");
    if (!bin) {
        ssize_t n = readlink("/proc/self/exe", here, sizeof here - 16);
        ck_assert_int_gt(n, 0);
        here[n] = '\0';
        strcpy(strrchr(here, '/') + 1, "reassert");
        bin = here;
    }
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    x->serve = fork();
    if (x->serve == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM); /* a failed assertion never leaves it running */
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        if (scenario)
            execl(bin, bin, "sim", "serve", "--db", x->db, "--listen", "127.0.0.1:0", "--scenario",
                  scenario, "--run", "serve", (char *)NULL);
        else
            execl(bin, bin, "sim", "serve", "--db", x->db, "--listen", "127.0.0.1:0", (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    FILE *f = fdopen(p[0], "r");
    ck_assert_ptr_nonnull(fgets(x->url, sizeof x->url, f));
    fclose(f);
    x->url[strcspn(x->url, "\n")] = '\0';
    ck_assert_msg(strncmp(x->url, "http://127.0.0.1:", 17) == 0, "served at '%s'", x->url);
}

/* The talosconfig the stub reads: the façade endpoint and its options. */
static void e2e_talosconfig(e2e *x, const char *stub_opts)
{
    FILE *f = fopen(x->cfg, "w");
    fprintf(f,
            "{\"context\": \"sim\", \"contexts\": {\"sim\": {\"endpoints\": [\"%s\"], "
            "\"reassert-stub\": {\"record\": \"%s\"%s%s}}}}\n",
            x->url, x->rec, stub_opts[0] ? ", " : "", stub_opts);
    fclose(f);
}

static live_talos *e2e_driver(e2e *x, rs_talos_auth_shape shape)
{
    char stub[4096];
    const char *src = getenv("REASSERT_SRC");
    snprintf(stub, sizeof stub, "%s/tests/talosctl", src ? src : ".");
    live_talos *lt = NULL;
    rs_err e;
    rs_err_clear(&e);
    live_talos_opts o = {
        .talosctl = stub, .talosconfig = x->cfg, .shape = shape, .tmp_parent = x->tmp};
    ck_assert_msg(live_talos_open(&o, &lt, &e) == RS_OK, "%s", e.msg);
    return lt;
}

static void e2e_start(e2e *x, const char *faults)
{
    memset(x, 0, sizeof *x);
    snprintf(x->dir, sizeof x->dir, "/tmp/test_live_talos_e2e.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(x->dir));
    snprintf(x->tmp, sizeof x->tmp, "%s/tmp", x->dir);
    snprintf(x->cfg, sizeof x->cfg, "%s/talosconfig", x->dir);
    snprintf(x->rec, sizeof x->rec, "%s/record.jsonl", x->dir);
    ck_assert_int_eq(mkdir(x->tmp, 0700), 0);
    e2e_world(x);
    char scn[200];
    if (faults) {
        snprintf(scn, sizeof scn, "%s/faults.yaml", x->dir);
        FILE *f = fopen(scn, "w");
        fprintf(f,
                "name: talos-faults\nseed: 1\ncluster: {preset: prod, credential: previous}\n"
                "desired: current\nruns:\n  - name: serve\n    faults:\n%s",
                faults);
        fclose(f);
    }
    e2e_serve(x, faults ? scn : NULL);
    e2e_talosconfig(x, "");
    x->lt = e2e_driver(x, RS_TALOS_AUTH_DOCUMENT);
}

/* Stops the façade (SIGTERM: exit 0 expected) and opens the world. */
static sim_world *e2e_stop(e2e *x)
{
    live_talos_close(x->lt);
    kill(x->serve, SIGTERM);
    int st = 0;
    ck_assert_int_eq(waitpid(x->serve, &st, 0), x->serve);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "sim serve ended with %d", st);
    sim_world *w = NULL;
    rs_err e;
    ck_assert(sim_world_open(x->db, &w, &e) == RS_OK);
    return w;
}

static void e2e_cleanup(e2e *x, sim_world *w)
{
    sim_world_close(w);
    unlink(x->db);
    free(x->db);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", x->dir);
    ck_assert_int_eq(system(cmd), 0);
}

static int call(e2e *x, rs_op op, const char *node, const char *body_json, rs_resp *r)
{
    cJSON *body = body_json ? cJSON_Parse(body_json) : NULL;
    rs_req req = {.op = op, .target = node, .host = "ghcr.io", .body = body};
    int st = live_talos_call(x->lt, &req, r);
    cred_json_wipe_delete(body);
    return st;
}

static int patch_auth(e2e *x, const char *node, rs_resp *r)
{
    cJSON *i = cJSON_CreateObject();
    cJSON *ra = cJSON_AddObjectToObject(i, "registry-auth");
    cJSON_AddStringToObject(ra, "host", "ghcr.io");
    cJSON *a = cJSON_AddObjectToObject(ra, "auth");
    cJSON_AddStringToObject(a, "username", x->user);
    cJSON_AddStringToObject(a, "password", x->pass);
    rs_req req = {.op = RS_OP_TALOS_PATCH, .target = node, .host = "ghcr.io", .body = i};
    int st = live_talos_call(x->lt, &req, r);
    cred_json_wipe_delete(i);
    return st;
}

static const char *auth_password(const rs_resp *r)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(r->body, "auth"), "password"));
}

/* Every recorded invocation: no credential in argv or environment; every
 * patch private and gone. Returns how many invocations were recorded. */
static int check_record(e2e *x)
{
    FILE *f = fopen(x->rec, "r");
    ck_assert_ptr_nonnull(f);
    char *b64p = base64_encode(x->pass, strlen(x->pass));
    char up[512];
    snprintf(up, sizeof up, "%s:%s", x->user, x->pass);
    char *b64up = base64_encode(up, strlen(up));
    char *line = NULL;
    size_t cap = 0;
    int n = 0, patches = 0;
    while (getline(&line, &cap, f) > 0) {
        n++;
        cJSON *entry = cJSON_Parse(line);
        ck_assert_ptr_nonnull(entry);
        char *argv = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(entry, "argv"));
        char *env = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(entry, "env"));
        const char *texts[] = {argv, env};
        for (int t = 0; t < 2; t++) {
            ck_assert_msg(!strstr(texts[t], x->pass), "invocation %d: password in %s", n,
                          t ? "env" : "argv");
            ck_assert_msg(!strstr(texts[t], b64p), "invocation %d: base64(password)", n);
            ck_assert_msg(!strstr(texts[t], b64up), "invocation %d: base64(user:password)", n);
        }
        ck_assert_msg(!strstr(env, "REASSERT_E2E_SECRET"), "a variable outside the allow-list");
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(entry, "patch");
        if (p) {
            patches++;
            ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "file_mode")),
                             "0600");
            ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "dir_mode")),
                             "0700");
            ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "file_is_regular")));
            const char *path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "path"));
            ck_assert_int_ne(access(path, F_OK), 0);
        }
        free(argv);
        free(env);
        cJSON_Delete(entry);
    }
    free(line);
    fclose(f);
    free(b64p);
    free(b64up);
    ck_assert_int_ge(patches, 2);
    return n;
}

START_TEST(test_stub_talosctl_through_sim_serve_to_the_world)
{
    setenv("REASSERT_E2E_SECRET", "must-not-reach-talosctl", 1);
    e2e x;
    e2e_start(&x, NULL);
    rs_resp r;
    /* The world starts on the previous credential: it reads back different. */
    ck_assert_int_eq(call(&x, RS_OP_TALOS_READ_AUTH, "prod-worker-1", "{\"host\":\"ghcr.io\"}", &r),
                     200);
    ck_assert_str_ne(auth_password(&r), x.pass);
    rs_resp_free(&r);
    /* H106: the document shape lands and reads back equal. */
    ck_assert_int_eq(patch_auth(&x, "prod-worker-1", &r), 200);
    rs_resp_free(&r);
    ck_assert_int_eq(call(&x, RS_OP_TALOS_READ_AUTH, "prod-worker-1", "{\"host\":\"ghcr.io\"}", &r),
                     200);
    ck_assert_str_eq(auth_password(&r), x.pass);
    rs_resp_free(&r);
    ck_assert_int_eq(call(&x, RS_OP_TALOS_PATCH, "prod-worker-1",
                          "{\"node-annotations\":{\"example.com/marker\":\"abc\"}}", &r),
                     200);
    rs_resp_free(&r);
    ck_assert_int_eq(
        call(&x, RS_OP_TALOS_IMAGE_REMOVE, "prod-worker-1", "{\"image\":\"" IMAGE "\"}", &r), 200);
    rs_resp_free(&r);
    ck_assert_int_eq(
        call(&x, RS_OP_TALOS_IMAGE_PULL, "prod-worker-1", "{\"image\":\"" IMAGE "\"}", &r), 200);
    rs_resp_free(&r);
    ck_assert_int_eq(call(&x, RS_OP_TALOS_REBOOT, "prod-worker-2", NULL, &r), 200);
    rs_resp_free(&r);
    /* H118: one healthy member in both layouts; alarms empty, or header only. */
    const char *layouts[] = {"\"etcd-layout\": \"compact\"",
                             "\"etcd-layout\": \"extended\", \"alarm-header\": true"};
    for (int i = 0; i < 2; i++) {
        e2e_talosconfig(&x, layouts[i]);
        ck_assert_int_eq(call(&x, RS_OP_TALOS_ETCD_STATUS, "prod-control-plane-1", NULL, &r), 200);
        ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r.body, "healthy")));
        ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r.body, "layout")),
                         i ? "extended" : "compact");
        rs_resp_free(&r);
        ck_assert_int_eq(call(&x, RS_OP_TALOS_ETCD_ALARMS, "prod-control-plane-1", NULL, &r), 200);
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.body, "alarms")), 0);
        rs_resp_free(&r);
    }
    /* A garbled status is a failure, never healthy; a worker has no etcd. */
    ck_assert_int_eq(call(&x, RS_OP_TALOS_ETCD_STATUS, "prod-control-plane-3", NULL, &r), 502);
    rs_resp_free(&r);
    ck_assert_int_eq(call(&x, RS_OP_TALOS_ETCD_STATUS, "prod-worker-1", NULL, &r), 404);
    rs_resp_free(&r);
    /* H106: a legacy-shape patch is refused by a node that reads documents. */
    live_talos_close(x.lt);
    x.lt = e2e_driver(&x, RS_TALOS_AUTH_LEGACY);
    ck_assert_int_eq(patch_auth(&x, "prod-worker-3", &r), 400);
    rs_resp_free(&r);
    sim_world *w = e2e_stop(&x);
    /* The world saw exactly the calls the driver made (the legacy patch was
     * refused before reaching it): 13 talos.* calls, one reboot, the
     * annotation on the Node. */
    cJSON *c = sim_counters_snapshot(w);
    ck_assert_double_eq(tt_num(c, "talos_calls"), 13);
    ck_assert_double_eq(tt_num(c, "node_reboots"), 1);
    cJSON_Delete(c);
    rs_transport *t = sim_transport_open(w, "check", NULL);
    rs_resp n;
    ck_assert_int_eq(tp_kube_get(t, "Node", NULL, "prod-worker-1", &n), 200);
    ck_assert_str_eq(
        cJSON_GetStringValue(jsonpointer_get(n.body, "/metadata/annotations/example.com~1marker")),
        "abc");
    rs_resp_free(&n);
    t->close(t);
    ck_assert_int_eq(check_record(&x), 14);
    e2e_cleanup(&x, w);
    unsetenv("REASSERT_E2E_SECRET");
}
END_TEST

/* A scenario's faults on talos.* calls travel through the stub as talosctl
 * would fail: a `fail: 500` is a clean failure (500, the world unchanged), a
 * `timeout` is a transport error whose write may have been applied (status
 * 0, sent unknown: the core re-reads or fails closed); the next call
 * succeeds. sim serve exits 0 only when both faults fired. */
START_TEST(test_scenario_faults_reach_the_driver_as_talosctl_failures)
{
    e2e x;
    e2e_start(&x, "      - {on: \"talos.image-pull prod-worker-1\", fail: 500}\n"
                  "      - {on: \"talos.reboot prod-worker-2\", timeout: true}\n");
    rs_resp r;
    ck_assert_int_eq(
        call(&x, RS_OP_TALOS_IMAGE_PULL, "prod-worker-1", "{\"image\":\"" IMAGE "\"}", &r), 500);
    ck_assert(r.sent == RS_SENT_YES);
    rs_resp_free(&r);
    ck_assert_int_eq(call(&x, RS_OP_TALOS_REBOOT, "prod-worker-2", NULL, &r), 0);
    ck_assert(rs_resp_ambiguous(&r));
    rs_resp_free(&r);
    ck_assert_int_eq(
        call(&x, RS_OP_TALOS_IMAGE_PULL, "prod-worker-1", "{\"image\":\"" IMAGE "\"}", &r), 200);
    rs_resp_free(&r);
    sim_world *w = e2e_stop(&x);
    cJSON *c = sim_counters_snapshot(w);
    ck_assert_double_eq(tt_num(c, "talos_calls"), 3);
    ck_assert_double_eq(tt_num(c, "node_reboots"), 0);
    cJSON_Delete(c);
    e2e_cleanup(&x, w);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("live_talos_e2e");
    TCase *tc = tcase_create("e2e");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_stub_talosctl_through_sim_serve_to_the_world);
    tcase_add_test(tc, test_scenario_faults_reach_the_driver_as_talosctl_failures);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
