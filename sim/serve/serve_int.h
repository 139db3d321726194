/*
 * serve_int.h — what the façade's files share: the server context, one
 * request as a handler sees it, one answer as a handler builds it.
 *
 *   serve.c            start/stop, the listen address, the world and run
 *   serve_http.c       libmicrohttpd: bodies in, answers out, routing
 *   serve_call.c       the batch-aware door to the sim root, the façade's
 *                      clock/sleep/entropy/pid/batch endpoints
 *   serve_kube.c       Kubernetes paths and verbs -> kube.* requests
 *   serve_body.c       Kubernetes bodies, strings holding U+0000 kept whole
 *   serve_kube_disc.c  discovery (/version, /api, /apis, resource lists)
 *   serve_kube_dry.c   dryRun=All writes, answered in a rolled-back savepoint
 *   serve_backends.c   OpenBao KV v2 and the registry
 */
#ifndef SIM_SERVE_INT_H
#define SIM_SERVE_INT_H

#include "core/transport/transport.h"
#include "sim/scenario/scenario.h"
#include "sim/serve/serve.h"
#include "sim/world/world.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define SERVE_BODY_MAX (3u << 20)  /* the API server's MaxRequestBodyBytes (413 beyond) */
#define SERVE_BATCH_MAX (1L << 20) /* calls one batch may announce */
#define SERVE_SLEEP_MAX_MS (366LL * 24 * 3600 * 1000)
#define SERVE_WATCH_LOG_MAX 20000     /* changes a watch may start from */
#define SERVE_WATCH_COMPACT_EVERY 512 /* revisions between compactions */

/* A batch the live root announced: its next calls share round trips as the
 * in-process root's call_batch costs them. */
typedef struct serve_batch {
    bool open;
    long n;           /* calls announced */
    long parallelism; /* calls per round trip */
    long made;        /* calls that reached the root so far */
} serve_batch;

struct serve_server {
    sim_world *w;
    sc_scenario *sc;
    const sc_run *run;
    char *run_name;
    long long check_mark; /* `during:` check failures before this session */
    rs_transport *sim;    /* the sim root over the world */
    rs_transport door;    /* what every handler calls: sim, batch-aware */
    serve_batch batch;
    char *kube_token, *bao_token;
    char *kube_token_path; /* read again at each bearer check */
    char *bao_namespace;   /* NULL: the root namespace */
    char *url;
    char *registry_host;
    void *daemon; /* struct MHD_Daemon */
    /* One request at a time touches the world (one SQLite connection, one
     * virtual clock), as the in-process root serialises calls; a watch
     * waits on `changed` without it. */
    pthread_mutex_t lock;
    pthread_cond_t changed; /* broadcast when the revision moved, and at stop */
    bool stopping;
    long long rev_seen; /* the revision at the last broadcast */
    unsigned header_timeout_s, idle_timeout_s, conns_per_client;
    bool client_ca; /* client certificates are identities */
    long call_log_max;
    bool call_log_told;
    unsigned long tls_failures; /* handshakes a client broke off (counted, said at stop) */
    void (*say)(const char *sentence, void *arg);
    void *say_arg;
};

/* One request as a handler sees it (the body is NUL-terminated). */
typedef struct serve_http {
    void *conn; /* struct MHD_Connection */
    const char *method;
    const char *path; /* decoded; cut at a %00 the client sent (see path_nul) */
    bool path_nul;    /* the path as sent decodes to U+0000: it names nothing */
    const char *body;
    size_t body_len;
    /* The verified client certificate's subject CN (--client-ca), else
     * NULL. */
    const char *cert_user;
} serve_http;

typedef struct serve_watch serve_watch;

/* One answer. status 0: close the connection without answering (a
 * transport error: the world already paid the timeout). */
typedef struct serve_answer {
    int status;
    char *body; /* malloc'd; NULL: empty */
    const char *ctype;
    char *www_auth;     /* WWW-Authenticate, or NULL */
    char *digest;       /* Docker-Content-Digest, or NULL */
    serve_watch *watch; /* non-NULL: a stream of watch events (status 200) */
} serve_answer;

/* serve_http.c: request headers and query arguments (NULL when absent). */
const char *serve_header(const serve_http *h, const char *name);
const char *serve_arg(const serve_http *h, const char *name);
bool serve_method_is(const serve_http *h, const char *method);
/* A boolean query parameter as Go's strconv.ParseBool reads it: "1", "t",
 * "T", "TRUE", "true", "True" (the Python client sends "True"). */
bool serve_arg_true(const serve_http *h, const char *name);
/* Sets a plain-text answer (text is copied). */
void serve_answer_text(serve_answer *a, int status, const char *text);
/* Sets a JSON answer (consumes body). */
void serve_answer_json(serve_answer *a, int status, cJSON *body);
/* A Kubernetes Status answer. */
void serve_answer_status(serve_answer *a, int code, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* {"errors": [msg]}, as OpenBao and the façade's own endpoints answer. */
void serve_answer_errors(serve_answer *a, int status, const char *msg);
/* The root's answer: status 0 closes the connection, anything else is the
 * body as JSON (an empty object when there is none). Frees resp. */
void serve_answer_resp(serve_answer *a, rs_resp *resp);
/* The request body as JSON, or NULL (empty or malformed: *bad says which). */
cJSON *serve_body_json(const serve_http *h, bool *malformed);
/* A secret compared in constant time; false when either is NULL. */
bool serve_secret_eq(const char *want, const char *got);
/* True when the request may pass the bearer check: no --token-file, or
 * `Authorization: Bearer <token>` with a token of the file (one per line,
 * the file read again at each check: a rotation or revocation applies at
 * once; a file that cannot be read keeps the tokens taken so far). */
bool serve_bearer_ok(serve_server *s, const serve_http *h);
/* True when a JSON string in the body holds U+0000 (the escape, or a raw
 * control byte): cJSON would end the string there, and a Secret's
 * stringData would be stored truncated. serve_body_json refuses such a
 * body as malformed. */
bool serve_body_has_nul(const serve_http *h);

/* serve_body.c: a Kubernetes body as JSON, each string value holding
 * U+0000 carried whole as the store's bytes object (sim/store/store.h).
 * NULL when empty or malformed (*malformed set, *why the 400's message:
 * not JSON, U+0000 in a key, a carrier the client forged). */
cJSON *serve_body_json_bytes(const serve_http *h, bool *malformed, const char **why);
/* body with every byte that starts no well-formed UTF-8 sequence replaced
 * by U+FFFD, as Go's encoding/json decodes strings (the API server and
 * OpenBao store the replacement, never the byte); NULL when body is
 * already UTF-8. The copy holds *out_len bytes (NUL-terminated): free it
 * with cred_bytes_wipe_free(copy, *out_len + 1). */
char *serve_body_utf8(const char *body, size_t len, size_t *out_len);

/* serve_http.c: the daemon (struct MHD_Daemon *) answering on listen_fd
 * (bound, listening; the daemon closes it when stopped) on a thread of its
 * own. NULL when it cannot start. */
void *serve_http_start(serve_server *s, int listen_fd, const char *cert, const char *key,
                       const char *client_ca);
/* Ends every open watch, then stops the daemon. */
void serve_http_stop(serve_server *s);

/* serve_watch.c: `?watch=true` on a collection. serve_watch_open answers
 * (under the lock) with a->watch set, or a Status when the request cannot
 * be a watch. The stream is libmicrohttpd's (serve_watch_response, a
 * struct MHD_Response *): it waits for the world to change without the
 * lock, then reads the events under it. */
void serve_watch_open(serve_server *s, const serve_http *h, const char *kind, const char *ns,
                      serve_answer *a);
void *serve_watch_response(serve_watch *w);
void serve_watch_free(serve_watch *w);

/* serve_http.c: the identity the request authenticated as: the client
 * certificate's CN, "system:serviceaccount:..." is not modelled — a bearer
 * token's user is "reassert-sim-token", none "system:anonymous". */
const char *serve_user(serve_server *s, const serve_http *h);

/* serve_call.c */
void serve_door_init(serve_server *s);
void serve_facade(serve_server *s, const serve_http *h, const char *rest, serve_answer *a);

/* serve_kube.c: every path under /api, /apis and /version. */
void serve_kube(serve_server *s, const serve_http *h, serve_answer *a);

/* serve_kube_disc.c */
typedef struct serve_kind {
    const char *kind;
    const char *resource; /* plural */
    const char *singular;
    const char *short_name; /* NULL: none */
} serve_kind;
/* The i-th kind served, NULL past the last. */
const serve_kind *serve_kind_at(size_t i);
/* serve_kube_openapi.c: /openapi/v3 and its documents (false: not one). */
bool serve_openapi(serve_server *s, const serve_http *h, serve_answer *a);
/* The kind a group/version serves under a resource name, or NULL. */
const serve_kind *serve_kind_find(const char *group_version, const char *resource);
/* Answers discovery paths; false when path is not one. */
bool serve_discovery(serve_server *s, const char *const *seg, size_t nseg, serve_answer *a);

/* serve_kube_table.c: true when the client asks for a Table (kubectl get's
 * `Accept: application/json;as=Table;g=meta.k8s.io;v=v1`). serve_table
 * renders items (an array of objects of kind) as one, rv its
 * resourceVersion (NULL: none). */
bool serve_table_wanted(const serve_http *h);
cJSON *serve_table(serve_server *s, const serve_http *h, const char *kind, const cJSON *items,
                   const char *rv);
/* The same with includeObject given: NULL or "Metadata", "Object", "None". */
cJSON *serve_table_items(serve_server *s, const char *kind, const cJSON *items, const char *rv,
                         const char *include);

/* serve_proto.c: a body in Kubernetes protobuf (the Content-Type says
 * so), for the kinds a typed client sends that way (Secret, ConfigMap,
 * Namespace, SelfSubjectAccessReview, SelfSubjectReview). decode: the
 * object as JSON, or NULL with *why. */
bool serve_proto_is(const serve_http *h);
bool serve_proto_kind(const char *kind);
cJSON *serve_proto_decode(const serve_http *h, const char *expect_kind, const char **why);

/* serve_kube_auth.c: `auth can-i` and `auth whoami` (false: not their
 * path). */
bool serve_kube_review(serve_server *s, const serve_http *h, const char *path, serve_answer *a);

/* The object a Kubernetes path names (serve_kube.c). */
typedef struct kube_target {
    const char *kind, *ns, *name;
    const char *resource; /* plural */
} kube_target;
/* serve_kube.c: a write through the door (or, dryRun=All, the store in a
 * rolled-back savepoint), answered as the store answers it. */
void serve_kube_write(serve_server *s, const serve_http *h, rs_req *req, serve_answer *a);
/* serve_kube_apply.c: PATCH application/apply-patch+yaml. */
void serve_kube_apply(serve_server *s, const serve_http *h, const kube_target *t, serve_answer *a);
/* The JSON merge patch that turns a into b (a list replaced whole; a field
 * b lacks set to null). */
cJSON *serve_merge_diff(const cJSON *a, const cJSON *b);
/* serve_kube_replace.c: PUT of a named object (body stays the caller's). */
void serve_kube_replace(serve_server *s, const serve_http *h, const kube_target *t, cJSON *body,
                        serve_answer *a);

/* serve_kube_dry.c: a dry-run write answered by the store alone, in a
 * savepoint rolled back at once (no call counted, no controller runs, no
 * fault or during: entry fires). */
int serve_dry_run(serve_server *s, const rs_req *req, cJSON **out);

/* serve_backends.c */
void serve_openbao(serve_server *s, const serve_http *h, const char *rest, serve_answer *a);
void serve_registry(serve_server *s, const serve_http *h, serve_answer *a);

#endif
