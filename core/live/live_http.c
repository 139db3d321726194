/*
 * live_http.c — libcurl behind the live clients (see the header): a pool of
 * easy handles sharing one connection cache, bounded calls, and the
 * sent / not-sent judgement of every failure.
 */
#include "core/live/live_http.h"
#include "core/live/live_curl.h"

#include "core/cred/cred.h"

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define LIVE_HTTP_POOL_MAX RS_TRANSPORT_PARALLELISM_MAX

struct live_http {
    CURLSH *share;
    CURL *easy[LIVE_HTTP_POOL_MAX]; /* [0] serves sequential calls; a batch uses the first P */
    char *ca_file, *ca_path, *cert_file, *key_file, *proxy, *server_name;
    unsigned char *ca_pem, *cert_pem, *key_pem;
    size_t ca_pem_len, cert_pem_len, key_pem_len;
    bool insecure;
    long connect_ms, total_ms;
};

static char *dup_or_null(const char *s)
{
    return s && s[0] ? rs_xstrdup(s) : NULL;
}

static unsigned char *dup_bytes(const unsigned char *p, size_t n)
{
    if (!p || !n) return NULL;
    unsigned char *c = rs_xmalloc(n);
    memcpy(c, p, n);
    return c;
}

rs_code live_http_open(const live_http_conf *conf, live_http **out, rs_err *e)
{
    *out = NULL;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return rs_fail(e, RS_FAILED, "libcurl could not be initialised%s%s",
                       live_curl_error()[0] ? ": " : "", live_curl_error());
    live_http *h = rs_xcalloc(1, sizeof *h);
    h->share = curl_share_init();
    if (!h->share) {
        free(h);
        curl_global_cleanup();
        return rs_fail(e, RS_FAILED, "libcurl: no connection cache");
    }
    curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    h->ca_file = dup_or_null(conf->ca_file);
    h->ca_path = dup_or_null(conf->ca_path);
    h->cert_file = dup_or_null(conf->cert_file);
    h->key_file = dup_or_null(conf->key_file);
    h->proxy = dup_or_null(conf->proxy);
    h->server_name = dup_or_null(conf->tls_server_name);
    h->ca_pem = dup_bytes(conf->ca_pem, conf->ca_pem_len);
    h->ca_pem_len = h->ca_pem ? conf->ca_pem_len : 0;
    h->cert_pem = dup_bytes(conf->cert_pem, conf->cert_pem_len);
    h->cert_pem_len = h->cert_pem ? conf->cert_pem_len : 0;
    h->key_pem = dup_bytes(conf->key_pem, conf->key_pem_len);
    h->key_pem_len = h->key_pem ? conf->key_pem_len : 0;
    h->insecure = conf->insecure;
    h->connect_ms = conf->connect_ms > 0 ? (long)conf->connect_ms : LIVE_HTTP_CONNECT_MS_DEFAULT;
    h->total_ms = conf->total_ms > 0 ? (long)conf->total_ms : LIVE_HTTP_TOTAL_MS_DEFAULT;
    *out = h;
    return RS_OK;
}

void live_http_close(live_http *h)
{
    if (!h) return;
    for (size_t i = 0; i < LIVE_HTTP_POOL_MAX; i++)
        if (h->easy[i]) curl_easy_cleanup(h->easy[i]);
    curl_share_cleanup(h->share);
    free(h->ca_file);
    free(h->ca_path);
    free(h->cert_file);
    free(h->key_file);
    free(h->proxy);
    free(h->server_name);
    free(h->ca_pem);
    free(h->cert_pem);
    if (h->key_pem) cred_bytes_wipe_free(h->key_pem, h->key_pem_len);
    free(h);
    curl_global_cleanup();
}

/* The pool's i-th handle, made once and reused (its connection stays in the
 * shared cache between calls). */
static CURL *pool_easy(live_http *h, size_t i)
{
    if (!h->easy[i]) {
        CURL *c = curl_easy_init();
        if (!c) return NULL;
        curl_easy_setopt(c, CURLOPT_SHARE, h->share);
        h->easy[i] = c;
    }
    curl_easy_reset(h->easy[i]);
    curl_easy_setopt(h->easy[i], CURLOPT_SHARE, h->share);
    return h->easy[i];
}

/* ---- one call's state --------------------------------------------------- */

typedef struct call_io {
    live_http_call *c;
    struct curl_slist *hdrs;
    char *url;        /* the URL actually asked (tls-server-name rewrites the host) */
    char *connect_to; /* "name:port:host:port" */
    struct curl_slist *connect_list;
    bool overflow;
    char errbuf[CURL_ERROR_SIZE];
} call_io;

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *arg)
{
    call_io *io = arg;
    live_http_call *c = io->c;
    size_t n = size * nmemb;
    if (c->resp_len + n > LIVE_HTTP_BODY_MAX) {
        io->overflow = true;
        return 0; /* aborts the transfer */
    }
    /* Grown by copy with the old buffer wiped: an answer can hold a secret. */
    char *grown = rs_xmalloc(c->resp_len + n + 1);
    memcpy(grown, c->resp, c->resp_len);
    memcpy(grown + c->resp_len, ptr, n);
    grown[c->resp_len + n] = '\0';
    cred_bytes_wipe_free(c->resp, c->resp_len + 1);
    c->resp = grown;
    c->resp_len += n;
    return n;
}

static void header_keep(char **slot, const char *v, size_t n)
{
    while (n && (v[n - 1] == '\r' || v[n - 1] == '\n' || v[n - 1] == ' '))
        n--;
    while (n && (*v == ' ' || *v == '\t')) {
        v++;
        n--;
    }
    free(*slot);
    *slot = rs_xasprintf("%.*s", (int)n, v);
}

static size_t on_header(char *ptr, size_t size, size_t nmemb, void *arg)
{
    call_io *io = arg;
    size_t n = size * nmemb;
    static const char www[] = "www-authenticate:", dig[] = "docker-content-digest:";
    if (n >= 5 && strncmp(ptr, "HTTP/", 5) == 0) { /* a new response: forget the last */
        free(io->c->www_auth);
        free(io->c->digest);
        io->c->www_auth = io->c->digest = NULL;
    } else if (n > sizeof www - 1 && strncasecmp(ptr, www, sizeof www - 1) == 0) {
        header_keep(&io->c->www_auth, ptr + sizeof www - 1, n - (sizeof www - 1));
    } else if (n > sizeof dig - 1 && strncasecmp(ptr, dig, sizeof dig - 1) == 0) {
        header_keep(&io->c->digest, ptr + sizeof dig - 1, n - (sizeof dig - 1));
    }
    return n;
}

static void slist_wipe_free(struct curl_slist *l)
{
    for (struct curl_slist *p = l; p; p = p->next)
        if (p->data) OPENSSL_cleanse(p->data, strlen(p->data));
    curl_slist_free_all(l);
}

/* tls-server-name: connect to the server's host, but speak TLS (SNI and the
 * certificate's name) as the given name; the Host header stays the
 * server's, as kubectl sends it. */
static bool io_server_name(live_http *h, call_io *io)
{
    CURLU *u = curl_url();
    char *host = NULL, *port = NULL;
    bool ok = u && curl_url_set(u, CURLUPART_URL, io->c->url, 0) == CURLUE_OK &&
              curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
              curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK &&
              curl_url_set(u, CURLUPART_HOST, h->server_name, 0) == CURLUE_OK;
    char *url = NULL;
    if (ok) ok = curl_url_get(u, CURLUPART_URL, &url, 0) == CURLUE_OK;
    if (ok) {
        io->url = rs_xstrdup(url);
        io->connect_to = rs_xasprintf("%s:%s:%s:%s", h->server_name, port, host, port);
        io->connect_list = curl_slist_append(NULL, io->connect_to);
        char *hosthdr = rs_xasprintf("Host: %s:%s", host, port);
        io->hdrs = curl_slist_append(io->hdrs, hosthdr);
        free(hosthdr);
    }
    curl_free(url);
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    return ok;
}

static void blob_set(CURL *c, CURLoption opt, const unsigned char *p, size_t n)
{
    struct curl_blob b = {.data = (void *)p, .len = n, .flags = CURL_BLOB_COPY};
    curl_easy_setopt(c, opt, &b);
}

static bool io_prepare(live_http *h, CURL *c, call_io *io)
{
    live_http_call *k = io->c;
    k->resp = rs_xstrdup("");
    for (size_t i = 0; i < LIVE_HTTP_HEADERS_MAX && k->headers[i]; i++)
        io->hdrs = curl_slist_append(io->hdrs, k->headers[i]);
    io->hdrs = curl_slist_append(io->hdrs, "Expect:"); /* no 100-continue round trip */
    if (h->server_name && !io_server_name(h, io)) {
        snprintf(k->error, sizeof k->error, "the URL %s cannot carry tls-server-name %s", k->url,
                 h->server_name);
        return false;
    }
    curl_easy_setopt(c, CURLOPT_URL, io->url ? io->url : k->url);
    if (io->connect_list) curl_easy_setopt(c, CURLOPT_CONNECT_TO, io->connect_list);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, k->method);
    /* libcurl silently sends a request again when a reused connection dies
     * before any answer byte: harmless for a read, a double apply for a
     * write whose first copy was applied (DESIGN §3.3: a lost answer is
     * re-read and adopted by the core, never replayed by the client). A
     * write therefore goes on a connection of its own, which is never
     * retried; reads keep the shared connection. */
    if (strcmp(k->method, "GET") != 0 && strcmp(k->method, "HEAD") != 0)
        curl_easy_setopt(c, CURLOPT_FRESH_CONNECT, 1L);
    if (strcmp(k->method, "HEAD") == 0) curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    if (k->body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, k->body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)k->body_len);
    }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, io->hdrs);
    if (k->username) {
        curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
        curl_easy_setopt(c, CURLOPT_USERNAME, k->username);
        curl_easy_setopt(c, CURLOPT_PASSWORD, k->password ? k->password : "");
    }
    curl_easy_setopt(c, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(c, CURLOPT_PIPEWAIT, 1L); /* a batch waits to multiplex over h2 */
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, h->connect_ms);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, h->total_ms);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, io);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, io);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, io->errbuf);
    if (h->ca_file) curl_easy_setopt(c, CURLOPT_CAINFO, h->ca_file);
    if (h->ca_path) curl_easy_setopt(c, CURLOPT_CAPATH, h->ca_path);
    if (h->ca_pem) blob_set(c, CURLOPT_CAINFO_BLOB, h->ca_pem, h->ca_pem_len);
    if (h->insecure) {
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (h->cert_file) curl_easy_setopt(c, CURLOPT_SSLCERT, h->cert_file);
    if (h->key_file) curl_easy_setopt(c, CURLOPT_SSLKEY, h->key_file);
    if (h->cert_pem) blob_set(c, CURLOPT_SSLCERT_BLOB, h->cert_pem, h->cert_pem_len);
    if (h->key_pem) blob_set(c, CURLOPT_SSLKEY_BLOB, h->key_pem, h->key_pem_len);
    if (h->proxy) curl_easy_setopt(c, CURLOPT_PROXY, h->proxy);
    return true;
}

static bool code_is_tls(CURLcode rc)
{
    return rc == CURLE_SSL_CONNECT_ERROR || rc == CURLE_PEER_FAILED_VERIFICATION ||
           rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_SSL_CERTPROBLEM ||
           rc == CURLE_SSL_CIPHER || rc == CURLE_SSL_ISSUER_ERROR || rc == CURLE_SSL_CRL_BADFILE ||
           rc == CURLE_SSL_PINNEDPUBKEYNOTMATCH;
}

/* Whether the request left: connection-phase failures never sent it; a
 * timeout after bytes went out may have been applied; any other loss after
 * sending is "sent, answer lost". */
static void io_finish(CURL *c, call_io *io, CURLcode rc)
{
    live_http_call *k = io->c;
    long status = 0, reqsize = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(c, CURLINFO_REQUEST_SIZE, &reqsize);
    if (rc == CURLE_OK && status > 0) {
        k->status = status;
        k->sent = RS_SENT_YES;
    } else {
        k->status = 0;
        k->tls_failed = code_is_tls(rc);
        bool connect_phase = rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
                             rc == CURLE_COULDNT_RESOLVE_PROXY || k->tls_failed ||
                             rc == CURLE_UNSUPPORTED_PROTOCOL || rc == CURLE_URL_MALFORMAT;
        if (connect_phase || reqsize == 0)
            k->sent = RS_SENT_NO;
        else
            k->sent = rc == CURLE_OPERATION_TIMEDOUT ? RS_SENT_UNKNOWN : RS_SENT_YES;
        /* Which way a connection failed (refused, unreachable, timed out)
         * is the system's errno, which libcurl's text may leave out. */
        long os_errno = 0;
        if (rc == CURLE_COULDNT_CONNECT) curl_easy_getinfo(c, CURLINFO_OS_ERRNO, &os_errno);
        snprintf(k->error, sizeof k->error, "%.60s%s%.180s%s%s%s",
                 io->overflow ? "the answer passed the size bound" : curl_easy_strerror(rc),
                 io->errbuf[0] && !io->overflow ? ": " : "", io->overflow ? "" : io->errbuf,
                 os_errno ? " (" : "", os_errno ? strerror((int)os_errno) : "",
                 os_errno ? ")" : "");
    }
    slist_wipe_free(io->hdrs);
    curl_slist_free_all(io->connect_list);
    free(io->url);
    free(io->connect_to);
    io->hdrs = io->connect_list = NULL;
    io->url = io->connect_to = NULL;
    /* The handle keeps copies of the password and the header list pointer
     * until reset: drop them now. */
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(c, CURLOPT_PASSWORD, "");
}

void live_http_run(live_http *h, live_http_call *c)
{
    live_http_run_many(h, c, 1, 1);
}

static void call_reset(live_http_call *c)
{
    c->status = 0;
    c->sent = RS_SENT_NO;
    c->resp = NULL;
    c->resp_len = 0;
    c->www_auth = c->digest = NULL;
    c->tls_failed = false;
    c->error[0] = '\0';
}

void live_http_run_many(live_http *h, live_http_call *cs, size_t n, int parallelism)
{
    if (parallelism < 1) parallelism = 1;
    if (parallelism > LIVE_HTTP_POOL_MAX) parallelism = LIVE_HTTP_POOL_MAX;
    call_io *io = rs_xcalloc(n + 1, sizeof *io);
    CURLM *m = curl_multi_init();
    curl_multi_setopt(m, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    CURL *slot_easy[LIVE_HTTP_POOL_MAX] = {0};
    size_t slot_call[LIVE_HTTP_POOL_MAX];
    size_t next = 0, running_n = 0;
    for (size_t i = 0; i < n; i++) {
        call_reset(&cs[i]);
        io[i].c = &cs[i];
    }
    for (;;) {
        /* Fill every free slot with the next call. */
        for (int s = 0; s < parallelism && next < n; s++) {
            if (slot_easy[s]) continue;
            size_t i = next++;
            CURL *c = pool_easy(h, (size_t)s);
            if (!c || !io_prepare(h, c, &io[i])) {
                if (!cs[i].error[0])
                    snprintf(cs[i].error, sizeof cs[i].error, "libcurl: no handle");
                if (!cs[i].resp) cs[i].resp = rs_xstrdup("");
                slist_wipe_free(io[i].hdrs);
                io[i].hdrs = NULL;
                s--; /* the slot is still free */
                continue;
            }
            curl_easy_setopt(c, CURLOPT_PRIVATE, (void *)&io[i]);
            curl_multi_add_handle(m, c);
            slot_easy[s] = c;
            slot_call[s] = i;
            running_n++;
        }
        if (running_n == 0) break;
        int still = 0;
        curl_multi_perform(m, &still);
        CURLMsg *msg;
        int left = 0;
        while ((msg = curl_multi_info_read(m, &left))) {
            if (msg->msg != CURLMSG_DONE) continue;
            CURL *c = msg->easy_handle;
            CURLcode rc = msg->data.result;
            for (int s = 0; s < parallelism; s++) {
                if (slot_easy[s] != c) continue;
                io_finish(c, &io[slot_call[s]], rc);
                curl_multi_remove_handle(m, c);
                slot_easy[s] = NULL;
                running_n--;
            }
        }
        if (running_n > 0 && still > 0) curl_multi_poll(m, NULL, 0, 1000, NULL);
    }
    curl_multi_cleanup(m);
    free(io);
}

void live_http_call_free(live_http_call *c)
{
    if (!c) return;
    if (c->resp) cred_bytes_wipe_free(c->resp, c->resp_len + 1);
    free(c->www_auth);
    free(c->digest);
    c->resp = c->www_auth = c->digest = NULL;
    c->resp_len = 0;
}

char *live_http_escape(const char *s)
{
    char *e = curl_easy_escape(NULL, s, 0);
    char *r = rs_xstrdup(e ? e : "");
    curl_free(e);
    return r;
}

void live_http_peer_cert(live_http *h, const char *url, char *buf, size_t len)
{
    snprintf(buf, len, "its certificate could not be read");
    if (strncmp(url, "https://", 8) != 0) return;
    CURL *c = curl_easy_init();
    if (!c) return;
    /* The handshake alone (CONNECT_ONLY): not one byte of a request, so no
     * credential, goes to the server that could not be trusted. */
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CONNECT_ONLY, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    curl_easy_setopt(c, CURLOPT_CERTINFO, 1L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, h->connect_ms);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, h->connect_ms);
    if (h->proxy) curl_easy_setopt(c, CURLOPT_PROXY, h->proxy);
    struct curl_certinfo *ci = NULL;
    if (curl_easy_perform(c) == CURLE_OK &&
        curl_easy_getinfo(c, CURLINFO_CERTINFO, &ci) == CURLE_OK && ci && ci->num_of_certs > 0) {
        const char *subject = "", *issuer = "";
        for (struct curl_slist *s = ci->certinfo[0]; s; s = s->next) {
            if (strncmp(s->data, "Subject:", 8) == 0) subject = s->data + 8;
            if (strncmp(s->data, "Issuer:", 7) == 0) issuer = s->data + 7;
        }
        snprintf(buf, len, "it presented subject %.200s, issued by %.200s%s", subject, issuer,
                 strcmp(subject, issuer) == 0 ? " (self-signed)" : "");
    }
    curl_easy_cleanup(c);
}
