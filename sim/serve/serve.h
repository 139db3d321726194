/*
 * serve.h — `reassert sim serve`: the SQLite world served over HTTP on
 * loopback, as a Kubernetes API subset, an OpenBao KV v2 subset, a registry
 * subset, the test-only Talos endpoints and the façade's own test-only
 * clock, entropy, pid and batch endpoints (DESIGN.md §7).
 *
 * The one idea: every HTTP request that a cluster would answer is turned into
 * the rs_req the live transport would have been asked for, and handed to the
 * very sim root an in-process run uses; the rs_resp becomes the HTTP answer.
 * So the world's counters, faults, `during:` entries and virtual clock behave
 * exactly as in-process, and a live run against the façade matches the
 * in-process sim call for call. Only what no cluster call corresponds to —
 * discovery, the token and registry challenges, dry runs — is answered
 * without the root (and so is never counted).
 */
#ifndef SIM_SERVE_H
#define SIM_SERVE_H

#include "core/rs.h"

#include <stddef.h>

#define SERVE_SECRET_MAX 4096 /* a token file's bound */
#define SERVE_PEM_MAX (1 << 20)

typedef struct serve_config {
    const char *db_path;       /* an existing world (built by `sim init`) */
    const char *scenario_path; /* NULL: no faults, no during: entries */
    const char *run_name;      /* NULL: the scenario's first run, else "serve" */
    const char *host;          /* a loopback literal: "127.0.0.1" or "::1" */
    int port;                  /* 0: any free port */
    const char *tls_cert_pem;  /* both or neither: HTTPS */
    const char *tls_key_pem;
    /* NULL: no client certificates. Else PEM CA certificates: a client
     * certificate they sign (for client authentication) is an identity, its
     * subject's CN the user, as the API server's --client-ca-file. */
    const char *client_ca_pem;
    const char *kube_token; /* NULL: the Kubernetes API takes any bearer */
    /* The file kube_token came from (NULL: none). Each non-blank line is a
     * token the server takes, and the file is read again at each bearer
     * check, so a test can rotate the token mid-run (add the new line,
     * then drop the old). */
    const char *kube_token_path;
    const char *bao_token; /* NULL: OpenBao takes any X-Vault-Token */
    /* NULL: OpenBao's root namespace. Else every OpenBao request must name
     * this namespace in X-Vault-Namespace (403 otherwise), as a token
     * issued in a namespace is valid only there. */
    const char *bao_namespace;
    /* Connections: at most max_conns_per_client open from one address (0:
     * SERVE_CONNS_PER_CLIENT); a connection that sends no complete request
     * header for header_timeout_s seconds of silence, or stays idle between
     * requests for idle_timeout_s, is closed (0: the API server's 32 s and
     * 90 s). */
    unsigned max_conns_per_client;
    unsigned header_timeout_s, idle_timeout_s;
    /* The call log keeps this many rows of the serve run (0:
     * SERVE_CALL_LOG_MAX); the oldest are dropped past it, and counted. */
    long call_log_max;
    /* Told, one sentence each, when the call log first drops rows and, at
     * stop, how many it dropped and how many TLS handshakes failed (may be
     * NULL). */
    void (*say)(const char *sentence, void *arg);
    void *say_arg;
} serve_config;

#define SERVE_CONNS_PER_CLIENT 320 /* above the live transport's pool of 256 */
#define SERVE_CONNS_MAX 4096
#define SERVE_HEADER_TIMEOUT_S 32 /* the API server's ReadHeaderTimeout */
#define SERVE_IDLE_TIMEOUT_S 90   /* the API server's IdleTimeout */
#define SERVE_CALL_LOG_MAX 100000L

typedef struct serve_server serve_server;

/* Parses "--listen" text: "127.0.0.1:PORT" (any 127.0.0.0/8 literal),
 * "localhost:PORT" or "[::1]:PORT", PORT 0..65535. Anything else, a
 * non-loopback address above all, is RS_USAGE naming why. host receives
 * the numeric address. */
rs_code serve_parse_listen(const char *text, char *host, size_t hostlen, int *port, rs_err *e);

/* Opens the world (and the scenario run), binds and starts answering on a
 * thread of its own. RS_DATAERR for a world, scenario or TLS material that
 * cannot be used; RS_USAGE for an unknown run; RS_FAILED when the address
 * cannot be bound. */
rs_code serve_start(const serve_config *cfg, serve_server **out, rs_err *e);
/* "http://127.0.0.1:PORT" or "https://...", the port the kernel chose. */
const char *serve_url(const serve_server *s);
/* Stops answering (open watches end), closes the world. Returns how many
 * of the scenario run's faults and during: entries never fired, plus how
 * many of its during: checks failed, after handing say (may be NULL) one
 * sentence for each. What the server dropped (call log rows) or refused
 * (TLS handshakes) goes to cfg->say. */
size_t serve_stop(serve_server *s, void (*say)(const char *sentence, void *arg), void *arg);

#endif
