/*
 * serve_http.c — libmicrohttpd on one side, handlers on the other: a
 * request's body is gathered (bounded), routed by its first path segment,
 * and the handler's answer queued with its headers.
 *
 * libmicrohttpd hands over the path decoded as a C string, so a `%00` the
 * client sent would cut it: `.../secrets/variables-base%00junk` would read
 * (and patch) variables-base. The path as sent is therefore looked at
 * before decoding (serve_on_uri), and a path holding U+0000 names nothing:
 * each protocol answers it with its own 404 after its own auth check, as an
 * API server, OpenBao or a registry does for a name no object has.
 *
 * The one idea: handlers never see libmicrohttpd. They read a serve_http and
 * fill a serve_answer, so every protocol file reads like the protocol, and
 * this is the one place where a connection can be closed without an answer
 * (the transport errors a fault injects: the world already paid the
 * timeout, the client sees its answer lost).
 */
#include "sim/serve/serve_int.h"

#include "core/cred/cred.h"
#include "core/live/live_text.h"
#include "sim/serve/serve_talos.h"
#include "sim/store/store.h"

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <openssl/crypto.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- what handlers use ------------------------------------------------- */

const char *serve_header(const serve_http *h, const char *name)
{
    return MHD_lookup_connection_value(h->conn, MHD_HEADER_KIND, name);
}

const char *serve_arg(const serve_http *h, const char *name)
{
    return MHD_lookup_connection_value(h->conn, MHD_GET_ARGUMENT_KIND, name);
}

bool serve_arg_true(const serve_http *h, const char *name)
{
    static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
    const char *v = serve_arg(h, name);
    for (size_t i = 0; v && i < sizeof yes / sizeof *yes; i++)
        if (strcmp(v, yes[i]) == 0) return true;
    return false;
}

bool serve_method_is(const serve_http *h, const char *method)
{
    return strcmp(h->method, method) == 0;
}

void serve_answer_text(serve_answer *a, int status, const char *text)
{
    free(a->body);
    a->status = status;
    a->body = rs_xstrdup(text);
    a->ctype = "text/plain; charset=utf-8";
}

void serve_answer_json(serve_answer *a, int status, cJSON *body)
{
    free(a->body);
    a->status = status;
    a->body = cJSON_PrintUnformatted(body);
    a->ctype = "application/json";
    cred_json_wipe_delete(body);
}

void serve_answer_status(serve_answer *a, int code, const char *reason, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    serve_answer_json(a, code, store_status(code, reason, "%s", msg));
}

void serve_answer_errors(serve_answer *a, int status, const char *msg)
{
    cJSON *b = cJSON_CreateObject();
    cJSON_AddItemToArray(cJSON_AddArrayToObject(b, "errors"), cJSON_CreateString(msg));
    serve_answer_json(a, status, b);
}

void serve_answer_resp(serve_answer *a, rs_resp *resp)
{
    if (resp->status == 0) {
        a->status = 0;
    } else {
        serve_answer_json(a, resp->status, resp->body ? resp->body : cJSON_CreateObject());
        resp->body = NULL;
    }
    rs_resp_free(resp);
}

/* Walks the body's JSON strings (a lexer's view only: quotes, escapes).
 * A raw byte below 0x20 inside a string is malformed JSON anyway (RFC 8259
 * §7); the escape \u0000 is valid JSON that cJSON cannot hold. */
bool serve_body_has_nul(const serve_http *h)
{
    const char *p = h->body, *end = h->body ? h->body + h->body_len : NULL;
    bool in_string = false;
    for (; p && p < end; p++) {
        unsigned char c = (unsigned char)*p;
        if (!in_string) {
            in_string = c == '"';
        } else if (c == '"') {
            in_string = false;
        } else if (c < 0x20) {
            return true;
        } else if (c == '\\' && p + 1 < end) {
            p++;
            if (*p == 'u' && end - p > 4 && memcmp(p + 1, "0000", 4) == 0) return true;
        }
    }
    return false;
}

cJSON *serve_body_json(const serve_http *h, bool *malformed)
{
    *malformed = false;
    if (!h->body || h->body_len == 0) return NULL;
    if (serve_body_has_nul(h)) {
        *malformed = true;
        return NULL;
    }
    size_t len = h->body_len;
    char *fixed = serve_body_utf8(h->body, h->body_len, &len); /* U+FFFD, as Go decodes */
    const char *text = fixed ? fixed : h->body, *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(text, len, &end, false);
    /* Trailing bytes other than blanks are a malformed body, not ignored. */
    while (j && end && (size_t)(end - text) < len && strchr(" \t\r\n", *end))
        end++;
    if (!j || (size_t)(end - text) != len) {
        cred_json_wipe_delete(j);
        j = NULL;
        *malformed = true;
    }
    if (fixed) cred_bytes_wipe_free(fixed, len + 1);
    return j;
}

bool serve_secret_eq(const char *want, const char *got)
{
    if (!want || !got) return false;
    size_t n = strlen(want);
    return strlen(got) == n && CRYPTO_memcmp(want, got, n) == 0;
}

/* True when got is one of the non-blank lines of tokens (blanks around a
 * line ignored). */
static bool token_listed(const char *tokens, const char *got)
{
    size_t glen = strlen(got);
    for (const char *p = tokens; *p;) {
        size_t n = strcspn(p, "\n"), a = 0, b = n;
        while (a < b && strchr(" \t\r", p[a]))
            a++;
        while (b > a && strchr(" \t\r", p[b - 1]))
            b--;
        if (b > a && b - a == glen && CRYPTO_memcmp(p + a, got, glen) == 0) return true;
        p += n + (p[n] == '\n');
    }
    return false;
}

/* The token file again; the tokens taken so far stay when it cannot be read
 * or is empty (a rotation half-written is not a lock-out). */
static void token_reread(serve_server *s)
{
    char why[160];
    /* Swapped for a FIFO or a device while serving: never block a request
     * on it (DESIGN §5.1); the tokens taken so far stay. */
    FILE *f = live_fopen_regular(s->kube_token_path, NULL, why, sizeof why);
    if (!f) return;
    char *buf = rs_xcalloc(1, SERVE_SECRET_MAX + 2);
    size_t n = fread(buf, 1, SERVE_SECRET_MAX + 1, f);
    fclose(f);
    if (n > 0 && n <= SERVE_SECRET_MAX && !memchr(buf, '\0', n) && strspn(buf, " \t\r\n") < n) {
        cred_text_wipe_free(s->kube_token);
        s->kube_token = rs_xstrdup(buf);
    }
    cred_bytes_wipe_free(buf, SERVE_SECRET_MAX + 2);
}

/* A verified client certificate is an identity (--client-ca), as on the API
 * server, whether or not a token file is given; without either, any
 * request is taken. */
bool serve_bearer_ok(serve_server *s, const serve_http *h)
{
    if (h->cert_user) return true;
    if (!s->kube_token) return !s->client_ca;
    if (s->kube_token_path) token_reread(s); /* a rotation, or a revocation, at once */
    const char *auth = serve_header(h, "Authorization");
    return auth && strncmp(auth, "Bearer ", 7) == 0 && auth[7] &&
           token_listed(s->kube_token, auth + 7);
}

const char *serve_user(serve_server *s, const serve_http *h)
{
    if (h->cert_user) return h->cert_user;
    const char *auth = serve_header(h, "Authorization");
    if (s->kube_token && auth && strncmp(auth, "Bearer ", 7) == 0) return "reassert-sim-token";
    return s->kube_token || s->client_ca ? "system:anonymous" : "reassert-sim-anyone";
}

/* The client certificate of a TLS connection, verified against --client-ca
 * for client authentication: true with its subject's CN in user (as the API
 * server's x509 authenticator names the user), false when the client sent
 * none, or one that does not verify (the request is then as anonymous as
 * one without a certificate; the bearer check decides). */
static bool serve_tls_client(struct MHD_Connection *conn, char *user, size_t len)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (!ci || !ci->tls_session) return false;
    gnutls_session_t tls = (gnutls_session_t)ci->tls_session;
    unsigned n = 0, status = 1;
    const gnutls_datum_t *peers = gnutls_certificate_get_peers(tls, &n);
    if (!peers || n == 0) return false;
    gnutls_typed_vdata_st purpose = {.type = GNUTLS_DT_KEY_PURPOSE_OID,
                                     .data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT};
    if (gnutls_certificate_verify_peers(tls, &purpose, 1, &status) != 0 || status != 0)
        return false;
    gnutls_x509_crt_t crt;
    if (gnutls_x509_crt_init(&crt) != 0) return false;
    size_t got = len;
    bool ok =
        gnutls_x509_crt_import(crt, &peers[0], GNUTLS_X509_FMT_DER) == 0 &&
        gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, user, &got) == 0 &&
        got > 0 && got < len && strlen(user) == got;
    gnutls_x509_crt_deinit(crt);
    return ok;
}

/* ---- routing ------------------------------------------------------------ */

static bool path_under(const char *path, const char *prefix, const char **rest)
{
    size_t n = strlen(prefix);
    if (strncmp(path, prefix, n) != 0) return false;
    if (rest) *rest = path + n;
    return true;
}

/* The test-only Talos endpoints (serve_talos.c) answer through the same
 * door, so a batch of per-node auth reads is costed as in-process. They read
 * and write the registry credential, so with --token-file they need the
 * same bearer as the Kubernetes paths (a real Talos API needs its client
 * certificate). */
static void serve_talos(serve_server *s, const serve_http *h, const char *rest, serve_answer *a)
{
    int status = 500;
    char *out = NULL;
    if (!serve_bearer_ok(s, h)) {
        cJSON *b = cJSON_CreateObject();
        cJSON_AddStringToObject(b, "error",
                                "Unauthorized: the talos endpoints need the bearer token");
        serve_answer_json(a, 401, b);
        return;
    }
    if (serve_talos_handle(&s->door, h->method, rest, h->body ? h->body : "", h->body_len, &status,
                           &out) != 0) {
        free(out);
        serve_answer_errors(a, 500, "out of memory");
        return;
    }
    a->status = status;
    a->body = out;
    a->ctype = "application/json";
}

/* The answer for a path holding U+0000 on the test-only endpoints (the
 * Kubernetes, OpenBao and registry handlers answer it in their own form). */
static void serve_nul_path(serve_server *s, const serve_http *h, serve_answer *a)
{
    if (!serve_bearer_ok(s, h))
        serve_answer_errors(a, 401, "Unauthorized: these endpoints need the bearer token");
    else
        serve_answer_errors(a, 404, "no such endpoint: the path holds U+0000");
}

/* /healthz, /livez, /readyz (and each one's single check, /livez/ping), as
 * the API server answers them: to anyone, "ok", or with ?verbose the
 * checks one per line. The world is the one thing that can be unhealthy:
 * its revision must be readable. */
static bool serve_health(serve_server *s, const serve_http *h, serve_answer *a)
{
    static const char *const names[] = {"healthz", "livez", "readyz"};
    const char *p = h->path + 1;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        size_t n = strlen(names[i]);
        if (strncmp(p, names[i], n) != 0) continue;
        const char *check = p[n] == '/' ? p + n + 1 : NULL;
        if (p[n] && !check) continue;
        if (check && strcmp(check, "ping") != 0 && strcmp(check, "world") != 0) {
            serve_answer_text(a, 404, "404 page not found\n");
            return true;
        }
        bool world = store_revision(sim_world_store(s->w)) >= 0;
        if (!serve_method_is(h, "GET") && !serve_method_is(h, "HEAD")) {
            serve_answer_status(a, 405, "MethodNotAllowed",
                                "the server does not allow this method on the requested resource");
        } else if (MHD_lookup_connection_value_n(h->conn, MHD_GET_ARGUMENT_KIND, "verbose", 7, NULL,
                                                 NULL) == MHD_YES) {
            char text[256];
            snprintf(text, sizeof text, "[+]ping ok\n[%c]world %s\n%s check %s\n",
                     world ? '+' : '-', world ? "ok" : "failed: the world cannot be read", names[i],
                     world ? "passed" : "failed");
            serve_answer_text(a, world ? 200 : 500, text);
        } else {
            serve_answer_text(a, world ? 200 : 500,
                              world ? "ok" : "[-]world failed: the world cannot be read\n");
        }
        return true;
    }
    return false;
}

static void serve_route(serve_server *s, const serve_http *h, serve_answer *a)
{
    const char *p = h->path, *rest = NULL;
    if (!h->path_nul && serve_health(s, h, a)) return;
    if (strcmp(p, "/version") == 0 || strcmp(p, "/api") == 0 || strcmp(p, "/apis") == 0 ||
        path_under(p, "/api/", NULL) || path_under(p, "/apis/", NULL) ||
        path_under(p, "/openapi/", NULL))
        serve_kube(s, h, a);
    else if (path_under(p, "/v1/", &rest))
        serve_openbao(s, h, rest, a);
    else if (strcmp(p, "/v2") == 0 || path_under(p, "/v2/", NULL) || strcmp(p, "/token") == 0)
        serve_registry(s, h, a);
    else if (h->path_nul)
        serve_nul_path(s, h, a);
    else if (path_under(p, "/talos/", &rest))
        serve_talos(s, h, rest, a);
    else if (path_under(p, "/reassert/v1/", &rest))
        serve_facade(s, h, rest, a);
    else
        serve_answer_status(a, 404, "NotFound", "the server could not find the requested resource");
}

/* ---- libmicrohttpd ------------------------------------------------------ */

typedef struct serve_conn {
    char *body;
    size_t len, cap;
    bool too_large;
    bool started;  /* the request callback has seen this request */
    bool path_nul; /* the path as sent holds %00 */
} serve_conn;

/* Called with the request target as the client sent it, before decoding:
 * the one place a %00 in the path can still be seen. Its return value is
 * the request's serve_conn. A request has begun: its header must now
 * arrive within the header timeout (the idle timeout applied between
 * requests). */
static void *serve_on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    serve_server *s = cls;
    MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT, s->header_timeout_s);
    serve_conn *c = rs_xcalloc(1, sizeof *c);
    size_t path_len = strcspn(uri, "?");
    for (size_t i = 0; i + 3 <= path_len; i++)
        if (uri[i] == '%' && uri[i + 1] == '0' && uri[i + 2] == '0') c->path_nul = true;
    return c;
}

/* Appends to the request body; a grown buffer is copied and the old one
 * wiped (realloc could leave a copy of a Secret behind). */
static void serve_conn_append(serve_conn *c, const char *data, size_t n)
{
    if (c->len + n + 1 > c->cap) {
        size_t cap = c->cap ? c->cap : 4096;
        while (cap < c->len + n + 1)
            cap *= 2;
        char *grown = rs_xmalloc(cap);
        if (c->body) memcpy(grown, c->body, c->len);
        if (c->body) cred_bytes_wipe_free(c->body, c->cap);
        c->body = grown;
        c->cap = cap;
    }
    memcpy(c->body + c->len, data, n);
    c->len += n;
    c->body[c->len] = '\0';
}

/* Bodies carry Secrets, OpenBao data and tokens: wiped, then freed. */
static void serve_body_wipe(void *body)
{
    cred_text_wipe_free(body);
}

static enum MHD_Result serve_queue(struct MHD_Connection *conn, serve_answer *a)
{
    struct MHD_Response *r;
    if (a->watch) {
        r = serve_watch_response(a->watch);
        a->watch = NULL;
    } else if (a->body) {
        r = MHD_create_response_from_buffer_with_free_callback(strlen(a->body), a->body,
                                                               serve_body_wipe);
        a->body = NULL;
    } else {
        r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    }
    if (!r) return MHD_NO;
    if (a->ctype) MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, a->ctype);
    if (a->www_auth) MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, a->www_auth);
    if (a->digest) MHD_add_response_header(r, "Docker-Content-Digest", a->digest);
    enum MHD_Result ok = MHD_queue_response(conn, (unsigned)a->status, r);
    MHD_destroy_response(r);
    return ok;
}

/* After each request, under the lock: wakes the watches when the world's
 * revision moved, keeps the watch log to its last SERVE_WATCH_LOG_MAX
 * changes (a watch from before them is 410, as after etcd's compaction)
 * and the call log within its bound. */
static void serve_after(serve_server *s)
{
    sqlite3 *db = sim_world_db(s->w);
    long long rev = store_revision(sim_world_store(s->w));
    if (rev != s->rev_seen) {
        if (rev / SERVE_WATCH_COMPACT_EVERY != s->rev_seen / SERVE_WATCH_COMPACT_EVERY)
            store_watch_compact(db, SERVE_WATCH_LOG_MAX);
        s->rev_seen = rev;
        pthread_cond_broadcast(&s->changed);
    }
    long long dropped = sim_transport_log_trim(s->sim, s->call_log_max);
    if (dropped > 0 && !s->call_log_told && s->say) {
        s->call_log_told = true;
        char msg[256];
        snprintf(msg, sizeof msg,
                 "the call log keeps the last %ld calls of this run; older calls are dropped "
                 "from the world file from now on (counted in world_meta call_log.dropped)",
                 s->call_log_max);
        s->say(msg, s->say_arg);
    }
}

static enum MHD_Result serve_on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                        const char *method, const char *version, const char *upload,
                                        size_t *upload_size, void **con_cls)
{
    (void)version;
    serve_server *s = cls;
    serve_conn *c = *con_cls;
    if (!c) { /* serve_on_uri made one; never reached, kept for safety */
        c = *con_cls = rs_xcalloc(1, sizeof *c);
    }
    if (!c->started) {
        c->started = true;
        return MHD_YES;
    }
    if (*upload_size) {
        if (!c->too_large && c->len + *upload_size <= SERVE_BODY_MAX) {
            serve_conn_append(c, upload, *upload_size);
        } else {
            c->too_large = true;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    char cert_user[256];
    serve_http h = {.conn = conn,
                    .method = method,
                    .path = url,
                    .path_nul = c->path_nul,
                    .body = c->body,
                    .body_len = c->len,
                    .cert_user = s->client_ca && serve_tls_client(conn, cert_user, sizeof cert_user)
                                     ? cert_user
                                     : NULL};
    serve_answer a = {.status = 500};
    if (c->too_large) {
        serve_answer_status(&a, 413, "RequestEntityTooLarge",
                            "Request entity too large: limit is %u", SERVE_BODY_MAX);
    } else {
        pthread_mutex_lock(&s->lock);
        serve_route(s, &h, &a);
        serve_after(s);
        pthread_mutex_unlock(&s->lock);
    }
    enum MHD_Result ok = a.status == 0 ? MHD_NO : serve_queue(conn, &a);
    /* The answer is on its way: from now on the connection may idle. */
    MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT, s->idle_timeout_s);
    serve_watch_free(a.watch);
    if (a.body) cred_text_wipe_free(a.body);
    free(a.www_auth);
    free(a.digest);
    return ok;
}

static void serve_on_done(void *cls, struct MHD_Connection *conn, void **con_cls,
                          enum MHD_RequestTerminationCode why)
{
    (void)cls, (void)conn, (void)why;
    serve_conn *c = *con_cls;
    if (!c) return;
    if (c->body) cred_bytes_wipe_free(c->body, c->cap);
    free(c);
    *con_cls = NULL;
}

/* libmicrohttpd's own messages. A TLS handshake a client broke off (a
 * certificate it refused, plain HTTP to the HTTPS port) is the client's
 * affair, as the API server logs it at a low level: counted and said once
 * at stop, never one stray line per connection; anything else is this
 * server's and goes to stderr, prefixed and escaped. */
static void serve_on_log(void *cls, const char *fmt, va_list ap)
{
    serve_server *s = cls;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '.'))
        msg[--n] = '\0';
    if (strstr(msg, "handshake") || strstr(msg, "TLS")) {
        __atomic_add_fetch(&s->tls_failures, 1, __ATOMIC_RELAXED);
        return;
    }
    for (char *p = msg; *p; p++)
        if ((unsigned char)*p < 0x20) *p = ' ';
    fprintf(stderr, "reassert sim serve: libmicrohttpd: %s\n", msg);
}

/* One thread per connection: a request runs under the world lock, so the
 * world still answers one call at a time, while a watch waits for the
 * world to change without holding it. poll(), not select(), so a
 * connection's descriptor may be above FD_SETSIZE; a cap per client
 * address keeps one client's connections from starving the rest. */
void *serve_http_start(serve_server *s, int listen_fd, const char *cert, const char *key,
                       const char *client_ca)
{
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                     MHD_USE_POLL | MHD_USE_ERROR_LOG;
    struct MHD_OptionItem tls[] = {
        {cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, (void *)cert},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)key},
        {client_ca ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0, (void *)client_ca},
        {MHD_OPTION_END, 0, NULL},
    };
    if (cert) flags |= MHD_USE_TLS;
    /* The logger first: libmicrohttpd reports through the one it has. */
    return MHD_start_daemon(
        flags, 0, NULL, NULL, serve_on_request, s, MHD_OPTION_EXTERNAL_LOGGER, serve_on_log, s,
        MHD_OPTION_LISTEN_SOCKET, listen_fd, MHD_OPTION_NOTIFY_COMPLETED, serve_on_done, NULL,
        MHD_OPTION_URI_LOG_CALLBACK, serve_on_uri, s, MHD_OPTION_CONNECTION_TIMEOUT,
        s->header_timeout_s, MHD_OPTION_PER_IP_CONNECTION_LIMIT, s->conns_per_client,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)SERVE_CONNS_MAX, MHD_OPTION_ARRAY, tls,
        MHD_OPTION_END);
}

void serve_http_stop(serve_server *s)
{
    if (!s->daemon) return;
    pthread_mutex_lock(&s->lock);
    s->stopping = true;
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
    MHD_stop_daemon(s->daemon);
    s->daemon = NULL;
}
