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

bool serve_method_is(const serve_http *h, const char *method)
{
    return strcmp(h->method, method) == 0;
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

bool serve_bearer_ok(serve_server *s, const serve_http *h)
{
    if (!s->kube_token) return true;
    if (s->kube_token_path) token_reread(s); /* a rotation, or a revocation, at once */
    const char *auth = serve_header(h, "Authorization");
    return auth && strncmp(auth, "Bearer ", 7) == 0 && auth[7] &&
           token_listed(s->kube_token, auth + 7);
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

static void serve_route(serve_server *s, const serve_http *h, serve_answer *a)
{
    const char *p = h->path, *rest = NULL;
    if (strcmp(p, "/version") == 0 || strcmp(p, "/api") == 0 || strcmp(p, "/apis") == 0 ||
        path_under(p, "/api/", NULL) || path_under(p, "/apis/", NULL))
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
 * the request's serve_conn. */
static void *serve_on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    (void)cls, (void)conn;
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
    const char *body = a->body ? a->body : "";
    size_t len = strlen(body);
    struct MHD_Response *r;
    if (a->body) {
        r = MHD_create_response_from_buffer_with_free_callback(len, a->body, serve_body_wipe);
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
    serve_http h = {.conn = conn,
                    .method = method,
                    .path = url,
                    .path_nul = c->path_nul,
                    .body = c->body,
                    .body_len = c->len};
    serve_answer a = {.status = 500};
    if (c->too_large)
        serve_answer_status(&a, 413, "RequestEntityTooLarge",
                            "Request entity too large: limit is %u", SERVE_BODY_MAX);
    else
        serve_route(s, &h, &a);
    enum MHD_Result ok = a.status == 0 ? MHD_NO : serve_queue(conn, &a);
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

/* One polling thread answers every request in turn: the world is one SQLite
 * connection and one virtual clock, so requests are serialised as the
 * in-process root serialises calls. */
void *serve_http_start(serve_server *s, int listen_fd, const char *cert, const char *key)
{
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    if (cert) flags |= MHD_USE_TLS;
    if (cert)
        return MHD_start_daemon(flags, 0, NULL, NULL, serve_on_request, s, MHD_OPTION_LISTEN_SOCKET,
                                listen_fd, MHD_OPTION_NOTIFY_COMPLETED, serve_on_done, NULL,
                                MHD_OPTION_URI_LOG_CALLBACK, serve_on_uri, NULL,
                                MHD_OPTION_HTTPS_MEM_CERT, cert, MHD_OPTION_HTTPS_MEM_KEY, key,
                                MHD_OPTION_END);
    return MHD_start_daemon(flags, 0, NULL, NULL, serve_on_request, s, MHD_OPTION_LISTEN_SOCKET,
                            listen_fd, MHD_OPTION_NOTIFY_COMPLETED, serve_on_done, NULL,
                            MHD_OPTION_URI_LOG_CALLBACK, serve_on_uri, NULL, MHD_OPTION_END);
}

void serve_http_stop(void *daemon)
{
    if (daemon) MHD_stop_daemon(daemon);
}
