/*
 * live_backends.c — OpenBao KV v2 reads and the registry proof's calls
 * (see the header).
 *
 * The one idea: both services are asked exactly what the core asked, once,
 * and answered as they answered; what a real client does before that (the
 * registry's challenge) is done once per host and never stands in for an
 * answer — a host without a bearer challenge fails the token request.
 */
#include "core/live/live_backends.h"

#include "core/cred/cred.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- OpenBao -------------------------------------------------------------- */

struct live_bao {
    live_http *http;
    char *addr, *token, *token_src, *name_space;
};

static bool bao_has_control(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++)
        if (*p < 0x20 || *p == 0x7f) return true;
    return false;
}

rs_code live_bao_open(const live_bao_opts *o, live_bao **out, rs_err *e)
{
    *out = NULL;
    if (!o->addr || (strncmp(o->addr, "https://", 8) != 0 && strncmp(o->addr, "http://", 7) != 0))
        return rs_fail(e, RS_USAGE, "BAO_ADDR (or VAULT_ADDR) must be an http:// or https:// URL");
    /* Each goes into a header line: a CR or LF would end it and start
     * another (header injection), so any control byte is refused. */
    if (bao_has_control(o->name_space))
        return rs_fail(e, RS_USAGE, "BAO_NAMESPACE holds a control character");
    if (bao_has_control(o->token))
        return rs_fail(e, RS_DATAERR, "the OpenBao token from %s holds a control character",
                       o->token_src ? o->token_src : "its source");
    live_bao *b = rs_xcalloc(1, sizeof *b);
    live_http_conf conf = {.ca_file = o->ca_file, .ca_path = o->ca_path};
    rs_code c = live_http_open(&conf, &b->http, e);
    if (c != RS_OK) {
        free(b);
        return c;
    }
    b->addr = rs_xstrdup(o->addr);
    size_t n = strlen(b->addr);
    while (n && b->addr[n - 1] == '/')
        b->addr[--n] = '\0';
    b->token = o->token ? rs_xstrdup(o->token) : NULL;
    b->token_src = rs_xstrdup(o->token_src ? o->token_src : "no token");
    b->name_space = o->name_space && o->name_space[0] ? rs_xstrdup(o->name_space) : NULL;
    *out = b;
    return RS_OK;
}

void live_bao_close(live_bao *b)
{
    if (!b) return;
    live_http_close(b->http);
    free(b->addr);
    if (b->token) cred_text_wipe_free(b->token);
    free(b->token_src);
    free(b->name_space);
    free(b);
}

const char *live_bao_token(const live_bao *b)
{
    return b ? b->token : NULL;
}

/* GET addr+path with the token; the call's answer in *c. */
static void bao_get(live_bao *b, const char *path, live_http_call *c, char **hold)
{
    memset(c, 0, sizeof *c);
    hold[0] = rs_xasprintf("%s%s", b->addr, path);
    hold[1] = b->token ? rs_xasprintf("X-Vault-Token: %s", b->token) : NULL;
    hold[2] = b->name_space ? rs_xasprintf("X-Vault-Namespace: %s", b->name_space) : NULL;
    c->method = "GET";
    c->url = hold[0];
    size_t h = 0;
    if (hold[1]) c->headers[h++] = hold[1];
    if (hold[2]) c->headers[h++] = hold[2];
    live_http_run(b->http, c);
}

static void hold_free(char **hold)
{
    free(hold[0]);
    if (hold[1]) cred_text_wipe_free(hold[1]);
    free(hold[2]);
}

int live_bao_call(live_bao *b, const rs_req *req, rs_resp *resp)
{
    rs_resp_init(resp);
    if (req->op != RS_OP_OPENBAO_READ) {
        resp->status = 405;
        resp->sent = RS_SENT_NO;
        snprintf(resp->error, sizeof resp->error, "the live transport never writes OpenBao");
        return resp->status;
    }
    char *mount = live_http_escape(req->mount ? req->mount : "secret");
    /* The path keeps its '/': each segment escaped on its own. */
    char *path = rs_xstrdup("");
    char *t = rs_xstrdup(req->target ? req->target : "");
    for (char *save = NULL, *s = strtok_r(t, "/", &save); s; s = strtok_r(NULL, "/", &save)) {
        char *seg = live_http_escape(s);
        char *n = rs_xasprintf("%s/%s", path, seg);
        free(seg);
        free(path);
        path = n;
    }
    free(t);
    char *url_path = rs_xasprintf("/v1/%s/data%s", mount, path);
    free(mount);
    free(path);
    live_http_call c;
    char *hold[3];
    bao_get(b, url_path, &c, hold);
    free(url_path);
    resp->sent = c.sent;
    resp->status = (int)c.status;
    if (c.status == 0)
        snprintf(resp->error, sizeof resp->error, "OpenBao %s: %.*s", b->addr, 180, c.error);
    else if (c.resp_len)
        resp->body = cJSON_ParseWithLength(c.resp, c.resp_len);
    if (resp->body) rs_resp_mark_secrets(req, resp);
    live_http_call_free(&c);
    hold_free(hold);
    return resp->status;
}

rs_code live_bao_probe(live_bao *b, rs_err *e)
{
    live_http_call c;
    char *hold[3];
    bao_get(b, "/v1/auth/token/lookup-self", &c, hold);
    rs_code rc = RS_OK;
    if (c.status == 0)
        rc = rs_fail(e, RS_FAILED, "OpenBao at %s cannot be reached%s: %s", b->addr,
                     c.tls_failed ? " (its TLS cannot be trusted; BAO_CACERT/BAO_CAPATH)" : "",
                     c.error);
    else if (c.status == 403 || c.status == 401)
        rc = rs_fail(e, RS_FAILED,
                     "OpenBao at %s refused the token from %s (HTTP %ld: permission "
                     "denied%s%s)",
                     b->addr, b->token_src, c.status,
                     b->name_space ? "; in the namespace of BAO_NAMESPACE, " : "",
                     b->name_space ? b->name_space : "");
    else if (c.status != 200)
        rc = rs_fail(e, RS_FAILED, "OpenBao at %s answered the token lookup with HTTP %ld", b->addr,
                     c.status);
    live_http_call_free(&c);
    hold_free(hold);
    return rc;
}

/* ---- registry ------------------------------------------------------------- */

#define REG_HOSTS_MAX 8

typedef struct reg_host {
    char *host, *base, *realm, *service;
    char *err;      /* why no token exchange can start on this host, or NULL */
    bool unreached; /* ... because /v2/ gave no answer (the call's status is 0) */
} reg_host;

struct live_registry {
    live_http *http;
    char *url, *ca_file;
    reg_host hosts[REG_HOSTS_MAX];
    size_t n_hosts;
};

rs_code live_registry_open(const live_registry_opts *o, live_registry **out, rs_err *e)
{
    *out = NULL;
    live_registry *r = rs_xcalloc(1, sizeof *r);
    live_http_conf conf = {.ca_file = o->ca_file};
    rs_code c = live_http_open(&conf, &r->http, e);
    if (c != RS_OK) {
        free(r);
        return c;
    }
    if (o->ca_file && o->ca_file[0]) r->ca_file = rs_xstrdup(o->ca_file);
    if (o->url && o->url[0]) {
        r->url = rs_xstrdup(o->url);
        size_t n = strlen(r->url);
        while (n && r->url[n - 1] == '/')
            r->url[--n] = '\0';
    }
    *out = r;
    return RS_OK;
}

void live_registry_close(live_registry *r)
{
    if (!r) return;
    live_http_close(r->http);
    free(r->url);
    free(r->ca_file);
    for (size_t i = 0; i < r->n_hosts; i++) {
        free(r->hosts[i].err);
        free(r->hosts[i].host);
        free(r->hosts[i].base);
        free(r->hosts[i].realm);
        free(r->hosts[i].service);
    }
    free(r);
}

/* The value of key="..." in a challenge, or NULL. */
static char *challenge_param(const char *h, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = h; (p = strstr(p, key)) != NULL; p += kl) {
        bool start = p == h || p[-1] == ' ' || p[-1] == ',';
        if (!start || p[kl] != '=' || p[kl + 1] != '"') continue;
        const char *v = p + kl + 2, *end = strchr(v, '"');
        if (!end) return NULL;
        return rs_xasprintf("%.*s", (int)(end - v), v);
    }
    return NULL;
}

bool live_registry_challenge(const char *header, char **realm, char **service)
{
    *realm = *service = NULL;
    if (!header || strncasecmp(header, "Bearer ", 7) != 0) return false;
    *realm = challenge_param(header + 7, "realm");
    *service = challenge_param(header + 7, "service");
    if (*realm && (strncmp(*realm, "https://", 8) == 0 || strncmp(*realm, "http://", 7) == 0))
        return true;
    free(*realm);
    free(*service);
    *realm = *service = NULL;
    return false;
}

/* What happened to a call that got no answer, in the words of the other
 * live errors: the server could not be reached, or its TLS could not be
 * trusted — then which certificate it presented and which CAs were asked
 * (a registry that cannot be reached is not one that refused a token). */
static char *reg_unreachable(live_registry *r, const char *what, const char *where, const char *url,
                             const live_http_call *c)
{
    if (!c->tls_failed) return rs_xasprintf("%s %s cannot be reached: %s", what, where, c->error);
    char cert[448];
    live_http_peer_cert(r->http, url, cert, sizeof cert);
    return rs_xasprintf("%s %s cannot be trusted: TLS verification failed: %s; %s, which %s%s "
                        "does not vouch for",
                        what, where, c->error, cert,
                        r->ca_file ? "REASSERT_REGISTRY_CACERT " : "the system's CA bundle",
                        r->ca_file ? r->ca_file : "");
}

/* The host's entry; its challenge read once (GET /v2/). */
static reg_host *reg_host_of(live_registry *r, const char *host)
{
    for (size_t i = 0; i < r->n_hosts; i++)
        if (strcmp(r->hosts[i].host, host) == 0) return &r->hosts[i];
    if (r->n_hosts == REG_HOSTS_MAX) return NULL;
    reg_host *h = &r->hosts[r->n_hosts++];
    h->host = rs_xstrdup(host);
    h->base = r->url ? rs_xstrdup(r->url) : rs_xasprintf("https://%s", host);
    char *url = rs_xasprintf("%s/v2/", h->base);
    live_http_call c = {.method = "GET", .url = url};
    live_http_run(r->http, &c);
    if (c.status == 401) live_registry_challenge(c.www_auth, &h->realm, &h->service);
    h->unreached = c.status == 0;
    if (c.status == 0)
        h->err = reg_unreachable(r, "the registry at", h->base, url, &c);
    else if (!h->realm)
        h->err = rs_xasprintf("the registry at %s answered GET /v2/ with HTTP %ld, not a bearer "
                              "challenge (401 with WWW-Authenticate: Bearer realm=...)",
                              h->base, c.status);
    live_http_call_free(&c);
    free(url);
    return h;
}

typedef struct reg_prep {
    char *url, *auth;
    const char *err;
    bool unsent; /* err says why nothing was sent: a transport error (status 0), no answer */
} reg_prep;

static const char *body_str(const cJSON *b, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(b, k);
    return cJSON_GetStringValue(v);
}

static void reg_prepare(live_registry *r, const rs_req *req, reg_prep *p, live_http_call *c)
{
    memset(c, 0, sizeof *c);
    reg_host *h = req->host ? reg_host_of(r, req->host) : NULL;
    const char *target = req->target ? req->target : "";
    if (!h) {
        p->err = "no registry host";
        return;
    }
    if (h->err) {
        p->err = h->err;
        p->unsent = h->unreached;
        return;
    }
    if (req->op == RS_OP_REGISTRY_TOKEN) {
        /* The challenge names the token endpoint; the credential goes there
         * as basic auth, so never over plain http, whatever the registry
         * itself is reached by. */
        RS_ASSERT(h->realm); /* reg_host_of set err when the challenge had none */
        if (strncasecmp(h->realm, "http://", 7) == 0) {
            p->err = "the registry's challenge names a plain http token endpoint: the credential "
                     "would cross the network in clear; refused";
            p->unsent = true;
            return;
        }
        char *scope = live_http_escape(target);
        char *svc = live_http_escape(h->service ? h->service : req->host);
        p->url = rs_xasprintf("%s%sservice=%s&scope=repository:%s:pull", h->realm,
                              strchr(h->realm, '?') ? "&" : "?", svc, scope);
        free(scope);
        free(svc);
        c->username = body_str(req->body, "username");
        c->password = body_str(req->body, "password");
        if (!c->username) c->username = "";
        c->headers[0] = "Accept: application/json";
    } else {
        const char *colon = strrchr(target, ':');
        const char *at = strchr(target, '@');
        const char *sep = at ? at : colon;
        if (!sep || sep == target) {
            p->err = "a manifest target is repo:ref";
            return;
        }
        p->url =
            rs_xasprintf("%s/v2/%.*s/manifests/%s", h->base, (int)(sep - target), target, sep + 1);
        if (strncasecmp(h->base, "http://", 7) == 0) {
            p->err = "the registry is plain http: its pull token would cross the network in "
                     "clear; refused";
            p->unsent = true;
            return;
        }
        const char *tok = body_str(req->body, "token");
        p->auth = rs_xasprintf("Authorization: Bearer %s", tok ? tok : "");
        c->headers[0] = "Accept: application/vnd.oci.image.index.v1+json, "
                        "application/vnd.docker.distribution.manifest.list.v2+json, "
                        "application/vnd.oci.image.manifest.v1+json, "
                        "application/vnd.docker.distribution.manifest.v2+json";
        c->headers[1] = p->auth;
    }
    c->method = "GET";
    c->url = p->url;
}

static void reg_answer(live_registry *r, const rs_req *req, live_http_call *c, rs_resp *resp)
{
    resp->sent = c->sent;
    resp->status = (int)c->status;
    if (c->status == 0) {
        /* The token endpoint (the challenge's realm) may be another host. */
        bool token = req->op == RS_OP_REGISTRY_TOKEN;
        const char *rest = strstr(c->url, "://");
        int origin = rest ? (int)(rest + 3 - c->url) + (int)strcspn(rest + 3, "/?") : 0;
        char *where = rs_xasprintf("%.*s", origin, c->url); /* no path, no query */
        char *why = reg_unreachable(r, token ? "the registry's token endpoint" : "the registry at",
                                    where, c->url, c);
        snprintf(resp->error, sizeof resp->error, "%s", why);
        free(why);
        free(where);
        return;
    }
    cJSON *doc = c->resp_len ? cJSON_ParseWithLength(c->resp, c->resp_len) : NULL;
    if (c->status == 200 && req->op == RS_OP_REGISTRY_TOKEN) {
        const char *t = body_str(doc, "token");
        if (!t) t = body_str(doc, "access_token");
        resp->body = cJSON_CreateObject();
        if (t)
            cJSON_AddStringToObject(resp->body, "token", t);
        else
            resp->status = 502; /* 200 without a token is not an answer */
    } else if (c->status == 200) {
        resp->body = cJSON_CreateObject();
        cJSON_AddStringToObject(resp->body, "digest", c->digest ? c->digest : "");
    } else {
        resp->body = doc;
        doc = NULL;
    }
    cred_json_wipe_delete(doc);
    if (resp->body) rs_resp_mark_secrets(req, resp);
}

void live_registry_call_batch(live_registry *r, const rs_req *reqs, rs_resp *resps, size_t n,
                              int parallelism)
{
    reg_prep *ps = rs_xcalloc(n + 1, sizeof *ps);
    live_http_call *run = rs_xcalloc(n + 1, sizeof *run);
    size_t *idx = rs_xcalloc(n + 1, sizeof *idx);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        rs_resp_init(&resps[i]);
        live_http_call c;
        reg_prepare(r, &reqs[i], &ps[i], &c);
        if (ps[i].err) {
            resps[i].status = ps[i].unsent ? 0 : 400;
            resps[i].sent = RS_SENT_NO;
            snprintf(resps[i].error, sizeof resps[i].error, "%s%s",
                     ps[i].unsent ? "" : "registry: ", ps[i].err);
            continue;
        }
        run[m] = c;
        idx[m++] = i;
    }
    if (m) live_http_run_many(r->http, run, m, parallelism);
    for (size_t j = 0; j < m; j++) {
        reg_answer(r, &reqs[idx[j]], &run[j], &resps[idx[j]]);
        live_http_call_free(&run[j]);
    }
    for (size_t i = 0; i < n; i++) {
        free(ps[i].url);
        if (ps[i].auth) cred_text_wipe_free(ps[i].auth);
    }
    free(idx);
    free(run);
    free(ps);
}
