/*
 * live_kube.c — kube.* requests as calls to the API server (see the header).
 *
 * The one idea: this file translates and nothing else. The API server
 * already answers with the semantics the core reads (resourceVersion CAS,
 * a failed JSON Patch test as 422, eviction's 429); a request becomes one
 * HTTP call, and its answer becomes an rs_resp with the status as it came.
 */
#include "core/live/live_kube.h"

#include "core/cred/cred.h"
#include "core/live/live_kube_exec.h"
#include "core/live/live_text.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct kube_kind {
    const char *kind, *prefix, *resource;
    bool cluster;
} kube_kind;

/* The kinds the core reads and writes, where the API server serves them. */
static const kube_kind kube_kinds[] = {
    {"Secret", "/api/v1", "secrets", false},
    {"ConfigMap", "/api/v1", "configmaps", false},
    {"Pod", "/api/v1", "pods", false},
    {"Node", "/api/v1", "nodes", true},
    {"Namespace", "/api/v1", "namespaces", true},
    {"Event", "/api/v1", "events", false},
    {"Deployment", "/apis/apps/v1", "deployments", false},
    {"ReplicaSet", "/apis/apps/v1", "replicasets", false},
    {"DaemonSet", "/apis/apps/v1", "daemonsets", false},
    {"Lease", "/apis/coordination.k8s.io/v1", "leases", false},
    {"PushSecret", "/apis/external-secrets.io/v1alpha1", "pushsecrets", false},
    {"ExternalSecret", "/apis/external-secrets.io/v1beta1", "externalsecrets", false},
    {"Kustomization", "/apis/kustomize.toolkit.fluxcd.io/v1", "kustomizations", false},
    {"PodDisruptionBudget", "/apis/policy/v1", "poddisruptionbudgets", false},
    {"CustomResourceDefinition", "/apis/apiextensions.k8s.io/v1", "customresourcedefinitions",
     true},
};

struct live_kube {
    const live_kubeconfig *kc;
    live_http *http;
    int64_t connect_ms, total_ms;
    char *bearer; /* secret */
    live_exec_cred cred;
    bool cred_stale;  /* a 401 answered the plugin's credential: ask the plugin again */
    bool token_stale; /* a 401 answered the tokenFile's token: read the file again */
    int64_t token_read_ms;
    int64_t (*now_ms)(void *ctx); /* a monotonic clock: the tokenFile's cache */
    void *clock_ctx;
    char where[640];
};

static const kube_kind *kind_find(const char *kind)
{
    for (size_t i = 0; kind && i < RS_ARRAY_LEN(kube_kinds); i++)
        if (strcmp(kube_kinds[i].kind, kind) == 0) return &kube_kinds[i];
    return NULL;
}

char *live_kube_path(const rs_req *req)
{
    const kube_kind *k = kind_find(req->kind);
    if (!k) return NULL;
    char *ns = req->ns && req->ns[0] && !k->cluster ? live_http_escape(req->ns) : NULL;
    char *name = req->name && req->name[0] ? live_http_escape(req->name) : NULL;
    char *p = rs_xasprintf("%s%s%s/%s%s%s%s", k->prefix, ns ? "/namespaces/" : "", ns ? ns : "",
                           k->resource, name ? "/" : "", name ? name : "",
                           req->op == RS_OP_KUBE_EVICT ? "/eviction" : "");
    free(ns);
    free(name);
    return p;
}

static rs_code kube_http_open(live_kube *k, rs_err *e)
{
    const live_kubeconfig *kc = k->kc;
    live_http_conf conf = {.ca_file = kc->ca_file,
                           .ca_pem = kc->ca_pem,
                           .ca_pem_len = kc->ca_pem_len,
                           .insecure = kc->insecure,
                           .cert_file = kc->cert_file,
                           .key_file = kc->key_file,
                           .cert_pem = kc->cert_pem,
                           .cert_pem_len = kc->cert_pem_len,
                           .key_pem = kc->key_pem,
                           .key_pem_len = kc->key_pem_len,
                           .proxy = kc->proxy_url,
                           .tls_server_name = kc->tls_server_name,
                           .connect_ms = k->connect_ms,
                           .total_ms = k->total_ms};
    if (k->cred.cert_pem) { /* the plugin's certificate replaces the file's */
        conf.cert_file = conf.key_file = NULL;
        conf.cert_pem = (const unsigned char *)k->cred.cert_pem;
        conf.cert_pem_len = strlen(k->cred.cert_pem);
        conf.key_pem = (const unsigned char *)k->cred.key_pem;
        conf.key_pem_len = strlen(k->cred.key_pem);
    }
    live_http_close(k->http);
    k->http = NULL;
    return live_http_open(&conf, &k->http, e);
}

static int64_t kube_monotonic_ms(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The tokenFile's token (blanks around it dropped, as Go's
 * strings.TrimSpace), replacing the bearer only when the file gives one. */
static rs_code kube_token_file(live_kube *k, rs_err *e)
{
    char why[160];
    FILE *f = live_fopen_regular(k->kc->token_file, NULL, why, sizeof why);
    if (!f)
        return rs_fail(e, RS_DATAERR, "tokenFile %s of user %s (%s) cannot be read: %s",
                       k->kc->token_file, k->kc->user, k->where, why);
    char buf[16384];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    while (n && strchr(" \t\n\v\f\r", buf[n - 1]))
        buf[--n] = '\0';
    size_t lead = strspn(buf, " \t\n\v\f\r");
    if (lead == n) {
        OPENSSL_cleanse(buf, sizeof buf);
        return rs_fail(e, RS_DATAERR, "tokenFile %s of user %s (%s) is empty", k->kc->token_file,
                       k->kc->user, k->where);
    }
    if (k->bearer) cred_text_wipe_free(k->bearer);
    k->bearer = rs_xstrdup(buf + lead);
    OPENSSL_cleanse(buf, sizeof buf);
    k->token_read_ms = k->now_ms(k->clock_ctx);
    return RS_OK;
}

/* As client-go's cached file token source: the file is read again once the
 * token is LIVE_KUBE_TOKEN_FILE_REFRESH_MS old, or after a 401 answered it,
 * so a projected service-account token the kubelet rotates is picked up
 * during a long run. A read that fails keeps the token in hand (client-go
 * logs "Unable to rotate token" and goes on with it). */
static void kube_token_refresh(live_kube *k)
{
    if (!k->kc->token_file || k->kc->has_exec) return;
    if (!k->token_stale &&
        k->now_ms(k->clock_ctx) - k->token_read_ms < LIVE_KUBE_TOKEN_FILE_REFRESH_MS)
        return;
    k->token_stale = false;
    rs_err ignored;
    rs_err_clear(&ignored);
    kube_token_file(k, &ignored);
}

void live_kube_set_clock(live_kube *k, int64_t (*now_ms)(void *ctx), void *ctx)
{
    k->now_ms = now_ms ? now_ms : kube_monotonic_ms;
    k->clock_ctx = now_ms ? ctx : NULL;
    k->token_read_ms = k->now_ms(k->clock_ctx);
}

/* The exec plugin's credential, asked again once it has expired. */
static rs_code kube_exec_refresh(live_kube *k, rs_err *e)
{
    int64_t now = (int64_t)time(NULL);
    if (!k->cred_stale && (k->bearer || k->cred.cert_pem)) {
        if (!k->cred.expires_unix || now < k->cred.expires_unix) return RS_OK;
    }
    k->cred_stale = false;
    bool had_cert = k->cred.cert_pem != NULL;
    live_exec_cred_free(&k->cred);
    if (k->bearer) cred_text_wipe_free(k->bearer);
    k->bearer = NULL;
    rs_code c = live_exec_cred_get(k->kc, now, &k->cred, e);
    if (c != RS_OK) return c;
    if (k->cred.token) k->bearer = rs_xstrdup(k->cred.token);
    if (k->cred.cert_pem || had_cert) return kube_http_open(k, e);
    return RS_OK;
}

rs_code live_kube_open(const live_kubeconfig *kc, int64_t connect_ms, int64_t total_ms,
                       live_kube **out, rs_err *e)
{
    *out = NULL;
    live_kube *k = rs_xcalloc(1, sizeof *k);
    k->kc = kc;
    k->connect_ms = connect_ms;
    k->total_ms = total_ms;
    k->now_ms = kube_monotonic_ms;
    live_kubeconfig_where(kc, k->where, sizeof k->where);
    rs_code c = RS_OK;
    if (kc->has_exec)
        c = kube_exec_refresh(k, e);
    else if (kc->token_file)
        c = kube_token_file(k, e);
    else if (kc->token)
        k->bearer = rs_xstrdup(kc->token);
    if (c == RS_OK && !k->http) c = kube_http_open(k, e);
    if (c != RS_OK) {
        live_kube_close(k);
        return c;
    }
    *out = k;
    return RS_OK;
}

void live_kube_close(live_kube *k)
{
    if (!k) return;
    live_http_close(k->http);
    live_exec_cred_free(&k->cred);
    if (k->bearer) cred_text_wipe_free(k->bearer);
    free(k);
}

const char *live_kube_bearer(const live_kube *k)
{
    return k ? k->bearer : NULL;
}

/* ---- requests ------------------------------------------------------------ */

typedef struct kube_prep {
    char *url, *body, *auth;
} kube_prep;

static const char *patch_ctype(rs_patch_type t)
{
    switch (t) {
    case RS_PATCH_JSON:
        return "Content-Type: application/json-patch+json";
    case RS_PATCH_MERGE:
        return "Content-Type: application/merge-patch+json";
    case RS_PATCH_STRATEGIC:
        return "Content-Type: application/strategic-merge-patch+json";
    default:
        return NULL;
    }
}

static char *kube_query(const rs_req *req)
{
    if (req->op != RS_OP_KUBE_LIST) return rs_xstrdup("");
    char *ls = req->label_selector && req->label_selector[0] ? live_http_escape(req->label_selector)
                                                             : NULL;
    char *fs = req->field_selector && req->field_selector[0] ? live_http_escape(req->field_selector)
                                                             : NULL;
    char *q = rs_xasprintf("%s%s%s%s%s", ls || fs ? "?" : "", ls ? "labelSelector=" : "",
                           ls ? ls : "", ls && fs ? "&" : "", fs ? "fieldSelector=" : "");
    char *r = rs_xasprintf("%s%s", q, fs ? fs : "");
    free(q);
    free(ls);
    free(fs);
    return r;
}

static cJSON *eviction_body(const rs_req *req)
{
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "apiVersion", "policy/v1");
    cJSON_AddStringToObject(b, "kind", "Eviction");
    cJSON *md = cJSON_AddObjectToObject(b, "metadata");
    cJSON_AddStringToObject(md, "name", req->name ? req->name : "");
    cJSON_AddStringToObject(md, "namespace", req->ns ? req->ns : "");
    return b;
}

/* One request as an HTTP call; false (with resp answered 400) when the
 * request cannot be one. */
static bool kube_prepare(live_kube *k, const rs_req *req, live_http_call *c, kube_prep *p,
                         rs_resp *resp)
{
    memset(c, 0, sizeof *c);
    memset(p, 0, sizeof *p);
    char *path = live_kube_path(req);
    if (!path) {
        resp->status = 400;
        resp->sent = RS_SENT_NO;
        snprintf(resp->error, sizeof resp->error, "kind %s is not one this client knows",
                 req->kind ? req->kind : "(none)");
        return false;
    }
    char *q = kube_query(req);
    p->url = rs_xasprintf("%s%s%s", k->kc->server, path, q);
    free(path);
    free(q);
    c->url = p->url;
    size_t h = 0;
    c->headers[h++] = "Accept: application/json";
    switch (req->op) {
    case RS_OP_KUBE_GET:
    case RS_OP_KUBE_LIST:
        c->method = "GET";
        break;
    case RS_OP_KUBE_DELETE:
        c->method = "DELETE";
        break;
    case RS_OP_KUBE_CREATE:
        c->method = "POST";
        c->headers[h++] = "Content-Type: application/json";
        p->body = cJSON_PrintUnformatted(req->body);
        break;
    case RS_OP_KUBE_PATCH:
        c->method = "PATCH";
        c->headers[h++] = patch_ctype(req->patch_type);
        p->body = req->body ? cJSON_PrintUnformatted(req->body) : NULL;
        break;
    case RS_OP_KUBE_EVICT: {
        c->method = "POST";
        c->headers[h++] = "Content-Type: application/json";
        cJSON *b = eviction_body(req);
        p->body = cJSON_PrintUnformatted(b);
        cJSON_Delete(b);
        break;
    }
    default:
        break;
    }
    if (!c->method || (req->op == RS_OP_KUBE_PATCH && (!c->headers[1] || !p->body)) ||
        (req->op == RS_OP_KUBE_CREATE && !p->body)) {
        resp->status = 400;
        resp->sent = RS_SENT_NO;
        snprintf(resp->error, sizeof resp->error, "%s: not a request this client can send",
                 rs_op_name(req->op));
        free(p->url);
        free(p->body);
        return false;
    }
    if (k->bearer) {
        p->auth = rs_xasprintf("Authorization: Bearer %s", k->bearer);
        c->headers[h++] = p->auth;
    }
    c->body = p->body;
    c->body_len = p->body ? strlen(p->body) : 0;
    return true;
}

static void kube_prep_free(kube_prep *p)
{
    free(p->url);
    if (p->body) cred_text_wipe_free(p->body);
    if (p->auth) cred_text_wipe_free(p->auth);
}

/* A non-JSON answer becomes a Status naming its code (never dropped). */
static cJSON *status_object(long code, const char *msg)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "kind", "Status");
    cJSON_AddStringToObject(s, "apiVersion", "v1");
    cJSON_AddStringToObject(s, "status", "Failure");
    cJSON_AddStringToObject(s, "message", msg);
    cJSON_AddNumberToObject(s, "code", (double)code);
    return s;
}

static void kube_answer(live_kube *k, const rs_req *req, live_http_call *c, rs_resp *resp)
{
    resp->sent = c->sent;
    if (c->status == 0) {
        resp->status = 0;
        snprintf(resp->error, sizeof resp->error, "%s: %.100s (%.120s)",
                 c->sent == RS_SENT_NO ? "not sent" : "sent, no answer", c->error, k->where);
        return;
    }
    resp->status = (int)c->status;
    if (c->resp_len) resp->body = cJSON_ParseWithLength(c->resp, c->resp_len);
    if (!resp->body && (c->status < 200 || c->status > 299)) {
        char msg[160];
        snprintf(msg, sizeof msg, "the server answered HTTP %ld without a Status body", c->status);
        resp->body = status_object(c->status, msg);
    }
    if (resp->body) rs_resp_mark_secrets(req, resp);
}

int live_kube_call(live_kube *k, const rs_req *req, rs_resp *resp)
{
    live_kube_call_batch(k, req, resp, 1, 1);
    return resp->status;
}

void live_kube_call_batch(live_kube *k, const rs_req *reqs, rs_resp *resps, size_t n,
                          int parallelism)
{
    rs_err e;
    rs_err_clear(&e);
    bool auth_ok = !k->kc->has_exec || kube_exec_refresh(k, &e) == RS_OK;
    kube_token_refresh(k);
    live_http_call *cs = rs_xcalloc(n + 1, sizeof *cs);
    kube_prep *ps = rs_xcalloc(n + 1, sizeof *ps);
    size_t *idx = rs_xcalloc(n + 1, sizeof *idx);
    live_http_call *run = rs_xcalloc(n + 1, sizeof *run);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        rs_resp_init(&resps[i]);
        if (!auth_ok) {
            resps[i].sent = RS_SENT_NO;
            snprintf(resps[i].error, sizeof resps[i].error, "%.*s", RS_RESP_ERROR_MAX - 1, e.msg);
            continue;
        }
        if (!kube_prepare(k, &reqs[i], &cs[i], &ps[i], &resps[i])) continue;
        run[m] = cs[i];
        idx[m++] = i;
    }
    if (m) live_http_run_many(k->http, run, m, parallelism);
    for (size_t j = 0; j < m; j++) {
        /* As client-go does: a 401 makes the next call ask the plugin
         * again (the request itself is not replayed: the core decides). */
        if (run[j].status == 401 && k->kc->has_exec) k->cred_stale = true;
        if (run[j].status == 401 && k->kc->token_file) k->token_stale = true;
        kube_answer(k, &reqs[idx[j]], &run[j], &resps[idx[j]]);
        live_http_call_free(&run[j]);
        kube_prep_free(&ps[idx[j]]);
    }
    free(run);
    free(idx);
    free(ps);
    free(cs);
}

/* ---- the probe and the façade -------------------------------------------- */

cJSON *live_kube_facade(live_kube *k, const char *method, const char *path, const char *body,
                        rs_err *e)
{
    kube_token_refresh(k);
    char *url = rs_xasprintf("%s%s", k->kc->server, path);
    char *auth = k->bearer ? rs_xasprintf("Authorization: Bearer %s", k->bearer) : NULL;
    live_http_call c = {
        .method = method, .url = url, .body = body, .body_len = body ? strlen(body) : 0};
    c.headers[0] = "Content-Type: application/json";
    c.headers[1] = auth;
    live_http_run(k->http, &c);
    cJSON *doc = c.status == 200 ? cJSON_ParseWithLength(c.resp, c.resp_len) : NULL;
    if (!doc)
        rs_fail(e, RS_FAILED, "test clock %s %s: %s", method, path,
                c.status ? "an answer that is not the façade's" : c.error);
    live_http_call_free(&c);
    if (auth) cred_text_wipe_free(auth);
    free(url);
    return doc;
}

static rs_code kube_probe_once(live_kube *k, long *status, rs_err *e)
{
    kube_token_refresh(k);
    char *url = rs_xasprintf("%s/version", k->kc->server);
    char *auth = k->bearer ? rs_xasprintf("Authorization: Bearer %s", k->bearer) : NULL;
    live_http_call c = {.method = "GET", .url = url};
    c.headers[0] = "Accept: application/json";
    c.headers[1] = auth;
    live_http_run(k->http, &c);
    *status = c.status;
    rs_code rc = RS_OK;
    if (c.status == 0 && c.tls_failed)
        rc = rs_fail(e, RS_FAILED, "the Kubernetes API server's TLS cannot be trusted (%s): %s",
                     k->where, c.error);
    else if (c.status == 0)
        rc = rs_fail(e, RS_FAILED, "the Kubernetes API server cannot be reached (%s): %s", k->where,
                     c.error);
    else if (c.status == 401 || c.status == 403)
        rc = rs_fail(e, RS_FAILED, "the Kubernetes API server refused user %s (HTTP %ld; %s)",
                     k->kc->user, c.status, k->where);
    else if (c.status != 200)
        rc = rs_fail(e, RS_FAILED,
                     "the Kubernetes API server answered /version with HTTP %ld "
                     "(%s)",
                     c.status, k->where);
    live_http_call_free(&c);
    if (auth) cred_text_wipe_free(auth);
    free(url);
    return rc;
}

rs_code live_kube_probe(live_kube *k, rs_err *e)
{
    long status = 0;
    rs_code rc = kube_probe_once(k, &status, e);
    if (rc == RS_OK || status != 401 || (!k->kc->has_exec && !k->kc->token_file)) return rc;
    /* The credential was refused: ask the plugin once more, or read the
     * tokenFile again (a token rotated since it was read), as client-go
     * does, and probe again. */
    rs_err_clear(e);
    if (k->kc->has_exec) {
        k->cred_stale = true;
        rc = kube_exec_refresh(k, e);
    } else {
        k->token_stale = true;
        rc = RS_OK;
    }
    return rc == RS_OK ? kube_probe_once(k, &status, e) : rc;
}
