/*
 * live_http.h — HTTP over libcurl for the live clients (Kubernetes, OpenBao,
 * the registry, the façade's test-only clock): one connection pool per
 * service, bounded in time and in bytes, and an answer that says whether the
 * request left this process.
 *
 * The one idea: "not sent" and "sent, answer lost" are different facts, and
 * the core needs to know which (DESIGN §3.3: a write whose answer was lost
 * may have been applied; one that never left may be retried). libcurl counts
 * the request bytes it issued (CURLINFO_REQUEST_SIZE): none means the request
 * never left — a refused connection, a failed TLS handshake, a name that does
 * not resolve; some, then no answer, means it may have been applied.
 *
 * A pool is one shared connection cache (a CURLSH) behind every easy handle
 * it owns, so sequential reads reuse one connection, and a batch (curl
 * multi) multiplexes over HTTP/2 where the server offers it (ALPN over TLS).
 * A write opens a connection of its own: libcurl replays a request whose
 * reused connection died before the answer, and a replayed write may apply
 * twice.
 * Credentials reach libcurl through options only (a header list built in
 * memory, CURLOPT_USERNAME/PASSWORD) and are wiped when the call ends.
 */
#ifndef CORE_LIVE_HTTP_H
#define CORE_LIVE_HTTP_H

#include "core/rs.h"
#include "core/transport/transport.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LIVE_HTTP_CONNECT_MS_DEFAULT 10000
#define LIVE_HTTP_TOTAL_MS_DEFAULT 30000
#define LIVE_HTTP_BODY_MAX (64u * 1024u * 1024u) /* an answer past this is refused */
#define LIVE_HTTP_HEADERS_MAX 8

/* TLS and routing of one service. Pointers are copied at open. */
typedef struct live_http_conf {
    const char *ca_file;         /* PEM bundle path; NULL: the system's */
    const char *ca_path;         /* a directory of hashed certificates (BAO_CAPATH) */
    const unsigned char *ca_pem; /* PEM bytes (certificate-authority-data) */
    size_t ca_pem_len;
    bool insecure;                           /* insecure-skip-tls-verify */
    const char *cert_file, *key_file;        /* client certificate and key paths */
    const unsigned char *cert_pem, *key_pem; /* ... or their PEM bytes */
    size_t cert_pem_len, key_pem_len;
    const char *proxy;            /* proxy-url; NULL: none (never the environment's) */
    const char *tls_server_name;  /* SNI and the name the certificate must carry */
    int64_t connect_ms, total_ms; /* 0: the defaults above */
} live_http_conf;

typedef struct live_http live_http;

rs_code live_http_open(const live_http_conf *conf, live_http **out, rs_err *e);
void live_http_close(live_http *h);

/* One request and its answer. Fill the request half; live_http_run fills the
 * rest (free it with live_http_call_free). */
typedef struct live_http_call {
    const char *method; /* "GET", "POST", "PATCH", "DELETE", "HEAD" */
    const char *url;
    const char *headers[LIVE_HTTP_HEADERS_MAX + 1]; /* "Name: value", NULL-terminated */
    const char *body;
    size_t body_len;
    const char *username, *password; /* basic auth, when set */
    /* the answer */
    long status; /* 0: no answer */
    rs_sent sent;
    char *resp; /* the body, NUL-terminated (never NULL after a run) */
    size_t resp_len;
    char *www_auth;  /* the last WWW-Authenticate header, or NULL */
    char *digest;    /* Docker-Content-Digest, or NULL */
    bool tls_failed; /* the handshake or the certificate check failed */
    char error[RS_RESP_ERROR_MAX];
} live_http_call;

void live_http_run(live_http *h, live_http_call *c);
/* n calls concurrently (curl multi), at most parallelism in flight. */
void live_http_run_many(live_http *h, live_http_call *cs, size_t n, int parallelism);
void live_http_call_free(live_http_call *c);

/* For an error that must say which certificate could not be trusted:
 * "it presented subject S, issued by I" of the server behind an https url,
 * read by a TLS handshake that verifies nothing and sends no request (so
 * no credential); a fixed sentence when it cannot be read. */
void live_http_peer_cert(live_http *h, const char *url, char *buf, size_t len);

/* The URL-encoded form of s (caller frees). */
char *live_http_escape(const char *s);

#endif
