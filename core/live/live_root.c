/*
 * live_root.c — the live root of the transport (see the header): ops to
 * their clients, batches by service, the machine's clock or the façade's.
 *
 * The one idea: the root decides nothing about the transaction; it routes.
 * A status it cannot get is a transport error with the right `sent` — never
 * a made-up answer — and the façade clock is a separate door, so a live run
 * against a real cluster can never take its time from a test server
 * unless asked by the test-only option.
 */
#define _GNU_SOURCE
#include "core/live/live_root.h"

#include "core/live/live_kube.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

typedef struct live_root {
    live_kube *kube;
    live_bao *bao;
    live_registry *reg;
    live_talos *talos;
    live_oracle *oracle;
    bool facade;
    rs_err facade_err; /* the first façade failure (the run then fails closed) */
} live_root;

static live_root *root_of(rs_transport *t)
{
    return (live_root *)t->ctx;
}

static bool is_kube(rs_op op)
{
    return op >= RS_OP_KUBE_GET && op <= RS_OP_KUBE_EVICT;
}

static bool is_talos(rs_op op)
{
    return op >= RS_OP_TALOS_PATCH && op <= RS_OP_TALOS_READ_AUTH;
}

static bool is_registry(rs_op op)
{
    return op == RS_OP_REGISTRY_TOKEN || op == RS_OP_REGISTRY_MANIFEST;
}

static int root_refuse(rs_resp *resp, const char *why)
{
    rs_resp_init(resp);
    resp->sent = RS_SENT_NO;
    snprintf(resp->error, sizeof resp->error, "%s", why);
    return 0;
}

static int root_call(rs_transport *t, const rs_req *req, rs_resp *resp)
{
    live_root *r = root_of(t);
    if (is_kube(req->op)) {
        if (!r->kube) return root_refuse(resp, "this mode has no Kubernetes client (--check-only)");
        return live_kube_call(r->kube, req, resp);
    }
    if (is_talos(req->op)) return live_talos_call(r->talos, req, resp);
    if (is_registry(req->op)) {
        live_registry_call_batch(r->reg, req, resp, 1, 1);
        return resp->status;
    }
    if (req->op == RS_OP_RUN_LIVENESS) return live_oracle_call(r->oracle, req, resp);
    if (req->op == RS_OP_OPENBAO_READ || req->op == RS_OP_OPENBAO_WRITE) {
        if (!r->bao) return root_refuse(resp, "OpenBao is not configured (set BAO_ADDR)");
        return live_bao_call(r->bao, req, resp);
    }
    return root_refuse(resp, "an operation the live transport does not know");
}

/* The façade's answer to a test-clock call; NULL after a failure (kept in
 * facade_err: the clock then stands still and the run fails closed). */
static cJSON *facade(live_root *r, const char *method, const char *path, const char *body)
{
    rs_err e;
    rs_err_clear(&e);
    if (!r->kube) rs_fail(&e, RS_FAILED, "the test clock needs the kubeconfig's server");
    cJSON *doc = r->kube ? live_kube_facade(r->kube, method, path, body, &e) : NULL;
    if (!doc && !r->facade_err.msg[0]) r->facade_err = e;
    return doc;
}

static double facade_num(live_root *r, const char *method, const char *path, const char *body,
                         const char *key)
{
    cJSON *d = facade(r, method, path, body);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(d, key);
    double out = cJSON_IsNumber(v) ? v->valuedouble : 0;
    cJSON_Delete(d);
    return out;
}

static void root_call_batch(rs_transport *t, const rs_req *reqs, rs_resp *resps, size_t n,
                            int parallelism)
{
    live_root *r = root_of(t);
    if (r->facade) {
        char body[96];
        snprintf(body, sizeof body, "{\"begin\":%zu,\"parallelism\":%d}", n, parallelism);
        cJSON_Delete(facade(r, "POST", "/reassert/v1/batch", body));
    }
    /* Each service's share together, in request order within it. */
    rs_req *sub = rs_xcalloc(n + 1, sizeof *sub);
    rs_resp *out = rs_xcalloc(n + 1, sizeof *out);
    size_t *idx = rs_xcalloc(n + 1, sizeof *idx);
    for (int svc = 0; svc < 4; svc++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            rs_op op = reqs[i].op;
            int s = is_kube(op) ? 0 : is_registry(op) ? 1 : is_talos(op) ? 2 : 3;
            if (s != svc) continue;
            sub[m] = reqs[i];
            idx[m++] = i;
        }
        if (!m) continue;
        if (svc == 0 && r->kube)
            live_kube_call_batch(r->kube, sub, out, m, parallelism);
        else if (svc == 1)
            live_registry_call_batch(r->reg, sub, out, m, parallelism);
        else if (svc == 2)
            live_talos_call_batch(r->talos, sub, out, m, parallelism);
        else
            for (size_t j = 0; j < m; j++)
                root_call(t, &sub[j], &out[j]);
        for (size_t j = 0; j < m; j++)
            resps[idx[j]] = out[j];
    }
    free(idx);
    free(out);
    free(sub);
    if (r->facade) cJSON_Delete(facade(r, "POST", "/reassert/v1/batch", "{\"end\":true}"));
}

static int64_t root_now_ms(rs_transport *t)
{
    live_root *r = root_of(t);
    if (r->facade) return (int64_t)facade_num(r, "GET", "/reassert/v1/clock", NULL, "now_ms");
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void root_sleep_ms(rs_transport *t, int64_t ms)
{
    live_root *r = root_of(t);
    if (ms <= 0) return;
    if (r->facade) {
        char body[64];
        snprintf(body, sizeof body, "{\"ms\":%lld}", (long long)ms);
        cJSON_Delete(facade(r, "POST", "/reassert/v1/sleep", body));
        return;
    }
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static uint64_t root_entropy(rs_transport *t)
{
    live_root *r = root_of(t);
    uint64_t v = 0;
    if (r->facade) {
        cJSON *d = facade(r, "GET", "/reassert/v1/entropy", NULL);
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(d, "value");
        const char *text = cJSON_GetStringValue(s);
        if (text) v = strtoull(text, NULL, 10);
        cJSON_Delete(d);
        return v;
    }
    if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        v = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
    }
    return v;
}

static int root_pid(rs_transport *t)
{
    live_root *r = root_of(t);
    if (r->facade) return (int)facade_num(r, "GET", "/reassert/v1/pid", NULL, "pid");
    return (int)getpid();
}

static void root_close(rs_transport *t)
{
    if (!t) return;
    live_root *r = root_of(t);
    live_kube_close(r->kube);
    live_bao_close(r->bao);
    live_registry_close(r->reg);
    live_talos_close(r->talos);
    live_oracle_close(r->oracle);
    free(r);
    free(t);
}

rs_code live_root_open(const live_root_opts *o, rs_transport **out, rs_err *e)
{
    *out = NULL;
    live_root *r = rs_xcalloc(1, sizeof *r);
    rs_transport *t = rs_xcalloc(1, sizeof *t);
    *t = (rs_transport){.version = RS_TRANSPORT_VERSION,
                        .name = "live",
                        .ctx = r,
                        .call = root_call,
                        .call_batch = root_call_batch,
                        .now_ms = root_now_ms,
                        .sleep_ms = root_sleep_ms,
                        .entropy = root_entropy,
                        .pid = root_pid,
                        .close = root_close};
    r->facade = o->facade_clock;
    rs_code c = o->kc ? live_kube_open(o->kc, o->connect_ms, o->total_ms, &r->kube, e) : RS_OK;
    if (c == RS_OK && o->bao_set) c = live_bao_open(&o->bao, &r->bao, e);
    if (c == RS_OK) c = live_registry_open(&o->registry, &r->reg, e);
    if (c == RS_OK) c = live_talos_open(&o->talos, &r->talos, e);
    if (c == RS_OK) c = live_oracle_open(&o->oracle, &r->oracle, e);
    if (c != RS_OK) {
        root_close(t);
        return c;
    }
    *out = t;
    return RS_OK;
}

rs_code live_root_preflight(rs_transport *t, bool need_kube, bool need_bao, rs_err *e)
{
    live_root *r = root_of(t);
    rs_code c = RS_OK;
    if (need_kube && r->kube) c = live_kube_probe(r->kube, e);
    if (c == RS_OK && need_bao && r->bao) c = live_bao_probe(r->bao, e);
    if (c == RS_OK && r->facade) {
        cJSON_Delete(facade(r, "GET", "/reassert/v1/clock", NULL));
        if (r->facade_err.msg[0]) *e = r->facade_err, c = RS_FAILED;
    }
    return c;
}

const char *live_root_kube_bearer(rs_transport *t)
{
    return live_kube_bearer(root_of(t)->kube);
}

size_t live_root_secrets(rs_transport *t, const char **out, size_t max)
{
    live_root *r = root_of(t);
    size_t n = 0;
    const char *k = live_kube_bearer(r->kube), *b = live_bao_token(r->bao);
    if (k && n < max) out[n++] = k;
    if (b && n < max) out[n++] = b;
    return n;
}
