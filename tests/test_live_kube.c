/*
 * test_live_kube.c — the live Kubernetes and OpenBao clients
 * (core/live/live_kube.c, live_backends.c, live_http.c) against `reassert
 * sim serve`, verb by verb, and the one distinction the core cannot do
 * without: a request that never left (a closed port: sent NO, safe to
 * retry) versus one whose answer was lost after it was applied (the
 * lost-responses scenario's fault: sent, status 0 — and a re-read shows the
 * write landed).
 * A write whose answer is lost may have been applied (DESIGN §3.3): the
 * client must say "sent" so the core re-reads and adopts, never "not sent",
 * which would let it retry blindly.
 */
#include "core/cred/cred.h"
#include "core/live/live_backends.h"
#include "core/live/live_kube.h"
#include "core/live/live_root.h"
#include "tests/support_transport.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static char url[160];
static pid_t serve_pid;
static char *db;

/* token_file: sim serve's --token-file (NULL: any bearer is taken). */
static void serve_up_token(const char *scenario, const char *run, const char *token_file)
{
    db = tt_scenario_world(scenario);
    const char *bin = getenv("REASSERT_BIN");
    static char here[4096];
    if (!bin) {
        ssize_t n = readlink("/proc/self/exe", here, sizeof here - 16);
        ck_assert_int_gt(n, 0);
        here[n] = '\0';
        strcpy(strrchr(here, '/') + 1, "reassert");
        bin = here;
    }
    char scn[4096];
    snprintf(scn, sizeof scn, "%s/scenarios/%s",
             getenv("REASSERT_SRC") ? getenv("REASSERT_SRC") : ".", scenario);
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    serve_pid = fork();
    if (serve_pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        if (token_file)
            execl(bin, bin, "sim", "serve", "--db", db, "--listen", "127.0.0.1:0", "--scenario",
                  scn, "--run", run, "--token-file", token_file, (char *)NULL);
        else
            execl(bin, bin, "sim", "serve", "--db", db, "--listen", "127.0.0.1:0", "--scenario",
                  scn, "--run", run, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    FILE *f = fdopen(p[0], "r");
    ck_assert_ptr_nonnull(fgets(url, sizeof url, f));
    fclose(f);
    url[strcspn(url, "\n")] = '\0';
}

static void serve_up(const char *scenario, const char *run)
{
    serve_up_token(scenario, run, NULL);
}

static void serve_down(void)
{
    kill(serve_pid, SIGTERM);
    int st;
    waitpid(serve_pid, &st, 0);
    unlink(db);
    free(db);
}

static live_kube *client_token(live_kubeconfig *kc, const char *server, const char *token_file)
{
    memset(kc, 0, sizeof *kc);
    kc->server = (char *)server;
    kc->token_file = (char *)token_file;
    kc->context = "t";
    kc->origin = "test";
    kc->user = "";
    live_kube *k = NULL;
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(live_kube_open(kc, 2000, 10000, &k, &e) == RS_OK, "%s", e.msg);
    return k;
}

static live_kube *client(live_kubeconfig *kc, const char *server)
{
    return client_token(kc, server, NULL);
}

static const char *label_of(const cJSON *obj, const char *key)
{
    const cJSON *l = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "metadata"), "labels"), key);
    return cJSON_IsString(l) ? l->valuestring : NULL;
}

START_TEST(test_lost_answer_is_sent_and_applied)
{
    serve_up("transaction/lost-responses.yaml", "lost-variables-base");
    live_kubeconfig kc;
    live_kube *k = client(&kc, url);
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(live_kube_probe(k, &e) == RS_OK, "%s", e.msg);
    cJSON *patch = cJSON_Parse("{\"metadata\":{\"labels\":{\"probe\":\"lost\"}}}");
    rs_req w = {.op = RS_OP_KUBE_PATCH,
                .kind = "Secret",
                .ns = "flux-system",
                .name = "variables-base",
                .patch_type = RS_PATCH_MERGE,
                .body = patch};
    rs_resp r;
    ck_assert_int_eq(live_kube_call(k, &w, &r), 0);
    ck_assert(rs_resp_ambiguous(&r)); /* sent: it may have been applied */
    ck_assert(!rs_resp_not_sent(&r));
    rs_resp_free(&r);
    rs_req g = {
        .op = RS_OP_KUBE_GET, .kind = "Secret", .ns = "flux-system", .name = "variables-base"};
    ck_assert_int_eq(live_kube_call(k, &g, &r), 200);
    ck_assert_str_eq(label_of(r.body, "probe"), "lost"); /* it was */
    rs_resp_free(&r);
    /* The same patch again answers (the fault fired once). */
    ck_assert_int_eq(live_kube_call(k, &w, &r), 200);
    rs_resp_free(&r);
    cJSON_Delete(patch);
    live_kube_close(k);
    serve_down();
}
END_TEST

START_TEST(test_verbs_and_status_bodies)
{
    serve_up("two-run-stage-reassert.yaml", "stage");
    live_kubeconfig kc;
    live_kube *k = client(&kc, url);
    rs_resp r;
    rs_req get404 = {.op = RS_OP_KUBE_GET, .kind = "Secret", .ns = "flux-system", .name = "nope"};
    ck_assert_int_eq(live_kube_call(k, &get404, &r), 404);
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(r.body, "reason")), "NotFound");
    rs_resp_free(&r);
    rs_req list = {.op = RS_OP_KUBE_LIST,
                   .kind = "Node",
                   .label_selector = "node-role.kubernetes.io/control-plane",
                   .field_selector = "metadata.name!=prod-control-plane-1"};
    ck_assert_int_eq(live_kube_call(k, &list, &r), 200);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(r.body, "items")), 2);
    rs_resp_free(&r);
    cJSON *test = cJSON_Parse("[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\","
                              "\"value\":\"0\"}]");
    rs_req jp = {.op = RS_OP_KUBE_PATCH,
                 .kind = "Lease",
                 .ns = "flux-system",
                 .name = "ghcr-auth-refresh",
                 .patch_type = RS_PATCH_JSON,
                 .body = test};
    ck_assert_int_eq(live_kube_call(k, &jp, &r), 422); /* a failed test op */
    rs_resp_free(&r);
    cJSON_Delete(test);
    cJSON *cm = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
                            "{\"name\":\"e2e\",\"namespace\":\"flux-system\"}}");
    rs_req create = {.op = RS_OP_KUBE_CREATE, .kind = "ConfigMap", .ns = "flux-system", .body = cm};
    ck_assert_int_eq(live_kube_call(k, &create, &r), 201);
    rs_resp_free(&r);
    ck_assert_int_eq(live_kube_call(k, &create, &r), 409);
    rs_resp_free(&r);
    cJSON_Delete(cm);
    cJSON *smp = cJSON_Parse("{\"metadata\":{\"annotations\":{\"a\":\"b\"}}}");
    rs_req sp = {.op = RS_OP_KUBE_PATCH,
                 .kind = "ConfigMap",
                 .ns = "flux-system",
                 .name = "e2e",
                 .patch_type = RS_PATCH_STRATEGIC,
                 .body = smp};
    ck_assert_int_eq(live_kube_call(k, &sp, &r), 200);
    rs_resp_free(&r);
    cJSON_Delete(smp);
    rs_req del = {.op = RS_OP_KUBE_DELETE, .kind = "ConfigMap", .ns = "flux-system", .name = "e2e"};
    ck_assert_int_eq(live_kube_call(k, &del, &r), 200);
    rs_resp_free(&r);
    rs_req pods = {
        .op = RS_OP_KUBE_LIST, .kind = "Pod", .field_selector = "spec.nodeName=prod-worker-1"};
    ck_assert_int_eq(live_kube_call(k, &pods, &r), 200);
    const cJSON *pod = cJSON_GetArrayItem(cJSON_GetObjectItem(r.body, "items"), 0);
    const cJSON *md = cJSON_GetObjectItem(pod, "metadata");
    char ns[128], name[128];
    snprintf(ns, sizeof ns, "%s", cJSON_GetStringValue(cJSON_GetObjectItem(md, "namespace")));
    snprintf(name, sizeof name, "%s", cJSON_GetStringValue(cJSON_GetObjectItem(md, "name")));
    rs_resp_free(&r);
    rs_req ev = {.op = RS_OP_KUBE_EVICT, .kind = "Pod", .ns = ns, .name = name};
    int st = live_kube_call(k, &ev, &r);
    ck_assert_msg(st == 201 || st == 200 || st == 429, "eviction answered %d", st);
    rs_resp_free(&r);
    rs_req bad = {.op = RS_OP_KUBE_GET, .kind = "Widget", .name = "x"};
    ck_assert_int_eq(live_kube_call(k, &bad, &r), 400);
    ck_assert(r.sent == RS_SENT_NO);
    rs_resp_free(&r);
    rs_req nopatch = {.op = RS_OP_KUBE_PATCH, .kind = "ConfigMap", .ns = "x", .name = "y"};
    ck_assert_int_eq(live_kube_call(k, &nopatch, &r), 400);
    rs_resp_free(&r);
    /* A batch: every answer in its slot. */
    rs_req reqs[3] = {
        get404, list, {.op = RS_OP_KUBE_GET, .kind = "Node", .name = "prod-worker-2"}};
    rs_resp rs3[3];
    live_kube_call_batch(k, reqs, rs3, 3, 2);
    ck_assert_int_eq(rs3[0].status, 404);
    ck_assert_int_eq(rs3[1].status, 200);
    ck_assert_int_eq(rs3[2].status, 200);
    for (int i = 0; i < 3; i++)
        rs_resp_free(&rs3[i]);
    rs_err e;
    rs_err_clear(&e);
    cJSON *clock = live_kube_facade(k, "GET", "/reassert/v1/clock", NULL, &e);
    ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(clock, "now_ms")));
    cJSON_Delete(clock);
    ck_assert_ptr_null(live_kube_facade(k, "GET", "/reassert/v1/nope", NULL, &e));
    live_kube_close(k);
    /* OpenBao through the same server: a read, a refused write. */
    live_bao *b = NULL;
    live_bao_opts bo = {.addr = url, .token = "any", .token_src = "test"};
    ck_assert(live_bao_open(&bo, &b, &e) == RS_OK);
    ck_assert(live_bao_probe(b, &e) == RS_OK);
    rs_req rd = {.op = RS_OP_OPENBAO_READ, .mount = "secret", .target = "infrastructure/ghcr/auth"};
    ck_assert_int_eq(live_bao_call(b, &rd, &r), 200);
    ck_assert_ptr_nonnull(cJSON_GetObjectItem(cJSON_GetObjectItem(r.body, "data"), "data"));
    rs_resp_free(&r);
    rd.op = RS_OP_OPENBAO_WRITE;
    ck_assert_int_eq(live_bao_call(b, &rd, &r), 405);
    rs_resp_free(&r);
    live_bao_close(b);
    bo.addr = "ftp://x";
    ck_assert(live_bao_open(&bo, &b, &e) == RS_USAGE);
    serve_down();
}
END_TEST

START_TEST(test_closed_port_is_not_sent)
{
    live_kubeconfig kc;
    live_kube *k = client(&kc, "http://127.0.0.1:1");
    rs_req g = {.op = RS_OP_KUBE_GET, .kind = "Secret", .ns = "a", .name = "b"};
    rs_resp r;
    ck_assert_int_eq(live_kube_call(k, &g, &r), 0);
    ck_assert(rs_resp_not_sent(&r)); /* never left: a retry cannot apply it twice */
    ck_assert_ptr_nonnull(strstr(r.error, "context t"));
    rs_resp_free(&r);
    rs_err e;
    rs_err_clear(&e);
    ck_assert(live_kube_probe(k, &e) == RS_FAILED);
    ck_assert_ptr_nonnull(strstr(e.msg, "cannot be reached"));
    live_kube_close(k);
    live_bao *b = NULL;
    live_bao_opts bo = {.addr = "http://127.0.0.1:1/", .token_src = "test"};
    ck_assert(live_bao_open(&bo, &b, &e) == RS_OK);
    ck_assert(live_bao_probe(b, &e) == RS_FAILED);
    rs_req rd = {.op = RS_OP_OPENBAO_READ, .mount = "secret", .target = "a/b"};
    ck_assert_int_eq(live_bao_call(b, &rd, &r), 0);
    ck_assert(rs_resp_not_sent(&r));
    rs_resp_free(&r);
    live_bao_close(b);
}
END_TEST

/* The live root routes each op to its client, batches by service, and
 * keeps the machine's clock unless the test-only façade clock is asked for. */
START_TEST(test_root_routes_batches_and_clocks)
{
    serve_up("two-run-stage-reassert.yaml", "stage");
    live_kubeconfig kc = {.server = url, .context = "t", .origin = "test", .user = ""};
    live_root_opts o = {.kc = &kc,
                        .bao_set = true,
                        .bao = {.addr = url, .token = "bao-secret-1", .token_src = "test"},
                        .registry = {.url = url},
                        .talos = {.talosctl = "/nonexistent/talosctl"}};
    rs_transport *t = NULL;
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(live_root_open(&o, &t, &e) == RS_OK, "%s", e.msg);
    ck_assert_msg(live_root_preflight(t, true, true, &e) == RS_OK, "%s", e.msg);
    const char *sec[4];
    ck_assert_int_eq((int)live_root_secrets(t, sec, 4), 1);
    ck_assert_str_eq(sec[0], "bao-secret-1");
    /* the machine's clock: epoch milliseconds, a real (short) sleep */
    int64_t a = t->now_ms(t);
    ck_assert(a > 1600000000000LL);
    t->sleep_ms(t, 1);
    ck_assert(t->now_ms(t) >= a);
    ck_assert_int_eq(t->pid(t), (int)getpid());
    ck_assert(t->entropy(t) != t->entropy(t));
    cJSON *cred = cJSON_Parse("{\"username\":\"deploy-bot\",\"password\":\"wrong\"}");
    rs_req reqs[5] = {
        {.op = RS_OP_KUBE_GET, .kind = "Node", .name = "prod-worker-1"},
        {.op = RS_OP_REGISTRY_TOKEN,
         .host = "ghcr.io",
         .target = "devantler-tech/ksail",
         .body = cred},
        {.op = RS_OP_TALOS_READ_AUTH, .target = "prod-worker-1", .host = "ghcr.io"},
        {.op = RS_OP_OPENBAO_READ, .mount = "secret", .target = "infrastructure/ghcr/auth"},
        {.op = RS_OP_RUN_LIVENESS, .target = "gh1.1"},
    };
    rs_resp r[5];
    t->call_batch(t, reqs, r, 5, 4);
    ck_assert_int_eq(r[0].status, 200);
    /* the registry client answered (sim serve is plain http, so the
     * credential is never sent: the token endpoint is http) */
    ck_assert(rs_resp_not_sent(&r[1]));
    ck_assert_ptr_nonnull(strstr(r[1].error, "plain http"));
    ck_assert(rs_resp_not_sent(&r[2])); /* talosctl could not start */
    ck_assert_int_eq(r[3].status, 200);
    ck_assert_int_ne(r[4].status, 200); /* no liveness command: refuses */
    for (int i = 0; i < 5; i++)
        rs_resp_free(&r[i]);
    rs_resp one;
    ck_assert_int_eq(t->call(t, &reqs[1], &one), 0);
    ck_assert(rs_resp_not_sent(&one));
    rs_resp_free(&one);
    rs_req unknown = {.op = RS_OP_COUNT};
    ck_assert_int_eq(t->call(t, &unknown, &one), 0);
    ck_assert(rs_resp_not_sent(&one));
    rs_resp_free(&one);
    cJSON_Delete(cred);
    t->close(t);
    /* the façade's clock: sim serve's virtual time, which a sleep advances */
    o.facade_clock = true;
    o.bao_set = false;
    ck_assert(live_root_open(&o, &t, &e) == RS_OK);
    ck_assert_msg(live_root_preflight(t, true, true, &e) == RS_OK, "%s", e.msg);
    int64_t v = t->now_ms(t);
    t->sleep_ms(t, 60000);
    ck_assert(t->now_ms(t) == v + 60000);
    (void)t->entropy(t);
    (void)t->pid(t);
    rs_req bao = {.op = RS_OP_OPENBAO_READ, .mount = "secret", .target = "x"};
    ck_assert_int_eq(t->call(t, &bao, &one), 0); /* no BAO_ADDR: refused, not sent */
    ck_assert(rs_resp_not_sent(&one));
    rs_resp_free(&one);
    t->call_batch(t, reqs, r, 1, 16);
    ck_assert_int_eq(r[0].status, 200);
    rs_resp_free(&r[0]);
    t->close(t);
    /* without a kubeconfig (--check-only): kube ops and the façade refuse */
    o.kc = NULL;
    ck_assert(live_root_open(&o, &t, &e) == RS_OK);
    ck_assert(live_root_preflight(t, true, false, &e) == RS_FAILED);
    ck_assert_int_eq(t->call(t, &reqs[0], &one), 0);
    rs_resp_free(&one);
    t->close(t);
    serve_down();
}
END_TEST

static int64_t fake_ms;

static int64_t fake_now_ms(void *ctx)
{
    (void)ctx;
    return fake_ms;
}

static void put_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

static int get_node(live_kube *k)
{
    rs_req g = {.op = RS_OP_KUBE_GET, .kind = "Node", .name = "prod-worker-1"};
    rs_resp r;
    int status = live_kube_call(k, &g, &r);
    if (status == 0) ck_abort_msg("no answer: %s", r.error);
    rs_resp_free(&r);
    return status;
}

/* A kubeconfig tokenFile is read as client-go reads it: cached about a
 * minute, then read again, and read again after a 401 — so a projected
 * service-account token the kubelet rotates is picked up mid-run, and a run
 * never keeps sending a token the server has dropped. sim serve reads its
 * --token-file again when a bearer matches none of its lines. */
START_TEST(test_token_file_rotated_mid_run)
{
    char dir[] = "/tmp/rs-token-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char srv[64], cli[64];
    snprintf(srv, sizeof srv, "%s/server.token", dir);
    snprintf(cli, sizeof cli, "%s/client.token", dir);
    put_file(srv, "tok-a\n");
    put_file(cli, "  tok-a\n");
    serve_up_token("two-run-stage-reassert.yaml", "stage", srv);
    live_kubeconfig kc;
    live_kube *k = client_token(&kc, url, cli);
    fake_ms = 1000;
    live_kube_set_clock(k, fake_now_ms, NULL);
    ck_assert_int_eq(get_node(k), 200);
    /* The kubelet writes a new token; the old one stays valid a while. */
    put_file(srv, "tok-a\ntok-b\n");
    put_file(cli, "tok-b\n");
    fake_ms = 1000 + 30000;
    ck_assert_int_eq(get_node(k), 200);
    ck_assert_str_eq(live_kube_bearer(k), "tok-a"); /* cached: not read again yet */
    fake_ms = 1000 + LIVE_KUBE_TOKEN_FILE_REFRESH_MS;
    ck_assert_int_eq(get_node(k), 200);
    ck_assert_str_eq(live_kube_bearer(k), "tok-b"); /* read again once the cache aged */
    put_file(srv, "tok-b\n");                       /* the old token expires: the run goes on */
    ck_assert_int_eq(get_node(k), 200);
    /* Revoked at once, before the cache ages: one 401 (not replayed), then
     * the next call carries the token read again. */
    put_file(srv, "tok-c\n");
    put_file(cli, "tok-c\n");
    ck_assert_int_eq(get_node(k), 401);
    ck_assert_int_eq(get_node(k), 200);
    ck_assert_str_eq(live_kube_bearer(k), "tok-c");
    /* The preflight probe reads the file again after a 401 and probes once more. */
    put_file(srv, "tok-d\n");
    put_file(cli, "tok-d\n");
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(live_kube_probe(k, &e) == RS_OK, "%s", e.msg);
    ck_assert_str_eq(live_kube_bearer(k), "tok-d");
    /* A file that cannot be read (mid-rotation) keeps the token in hand. */
    unlink(cli);
    fake_ms += 10 * LIVE_KUBE_TOKEN_FILE_REFRESH_MS;
    ck_assert_int_eq(get_node(k), 200);
    ck_assert_str_eq(live_kube_bearer(k), "tok-d");
    put_file(cli, " \n");
    ck_assert_int_eq(get_node(k), 200);
    ck_assert_str_eq(live_kube_bearer(k), "tok-d");
    live_kube_close(k);
    serve_down();
    unlink(cli);
    unlink(srv);
    rmdir(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("live_kube");
    TCase *tc = tcase_create("kube");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_lost_answer_is_sent_and_applied);
    tcase_add_test(tc, test_verbs_and_status_bodies);
    tcase_add_test(tc, test_closed_port_is_not_sent);
    tcase_add_test(tc, test_root_routes_batches_and_clocks);
    tcase_add_test(tc, test_token_file_rotated_mid_run);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
