/*
 * transport.h — the one interface through which the core touches the world.
 *
 * Modelled on SQLite's VFS: a struct of function pointers, an opaque context
 * and a version so the struct can grow. The core never knows which root it
 * has: the SQLite fake cluster (sim/), the live clients (core/live/), or a
 * shim wrapping another transport (the recorder, fault injection).
 *
 * Every Kubernetes, OpenBao, Talos and registry verb is one `rs_req` passed to
 * the single `call` entry point, so a shim wraps exactly one function and sees
 * every operation by its DESIGN.md §5 name (`kube.patch Secret/ns/name`).
 * Clock, sleep and entropy are separate entry points: they are how all
 * non-determinism is injected, so one seed reproduces one run exactly.
 *
 * `call` never aborts: every outcome is an HTTP-like status plus a body the
 * core can inspect; status 0 is a transport error (timeout, lost response),
 * with the sentence in resp->error. A root says whether a status-0 request
 * was *not sent* (safe to retry: connection refused, the gate refused it) or
 * may have been sent (the ambiguous case of DESIGN.md §3.3: a write may have
 * been applied, so it is adopted by a re-read or failed closed on).
 *
 * Version 2 (this one): requests carry the OpenBao mount and the registry
 * host; responses say whether they were sent; requests and responses declare
 * which fields carry secrets (rs_secret_marks), so a recorder redacts by
 * declaration rather than by guessing; Talos operations are intents (set or
 * read the registry auth of a host, set node annotations), so a live root
 * builds the machine-config document its Talos version expects.
 */
#ifndef RS_TRANSPORT_H
#define RS_TRANSPORT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RS_TRANSPORT_VERSION 2

/* Independent reads in flight at once in a batch (`transport.parallelism`). */
#define RS_TRANSPORT_PARALLELISM_DEFAULT 16
#define RS_TRANSPORT_PARALLELISM_MAX 256

typedef enum rs_op {
    RS_OP_KUBE_GET,
    RS_OP_KUBE_LIST,
    RS_OP_KUBE_CREATE,
    RS_OP_KUBE_PATCH,
    RS_OP_KUBE_DELETE,
    RS_OP_KUBE_EVICT,
    RS_OP_OPENBAO_READ,
    RS_OP_OPENBAO_WRITE,
    RS_OP_TALOS_PATCH,
    RS_OP_TALOS_REBOOT,
    RS_OP_TALOS_IMAGE_REMOVE,
    RS_OP_TALOS_IMAGE_PULL,
    RS_OP_TALOS_ETCD_STATUS,
    RS_OP_TALOS_ETCD_ALARMS,
    RS_OP_TALOS_READ_AUTH,
    RS_OP_REGISTRY_TOKEN,
    RS_OP_REGISTRY_MANIFEST,
    RS_OP_RUN_LIVENESS, /* the run-liveness oracle behind --fences/--recover-fences */
    RS_OP_COUNT
} rs_op;

typedef enum rs_patch_type {
    RS_PATCH_NONE = 0,
    RS_PATCH_JSON,      /* RFC 6902, application/json-patch+json */
    RS_PATCH_MERGE,     /* RFC 7386, application/merge-patch+json */
    RS_PATCH_STRATEGIC, /* strategic merge (metadata maps only, as kubectl sends it) */
} rs_patch_type;

/*
 * One operation. Which fields matter depends on `op`:
 *   kube.*            kind, ns (NULL or "" for cluster-scoped), name
 *                     (NULL for list), label_selector/field_selector (list),
 *                     patch_type + body (patch), body = object (create).
 *   kube.evict        kind "Pod", ns, name.
 *   openbao.*         mount = KV v2 mount ("secret"); target = logical KV
 *                     path (no mount, no "data/"); write body = the KV data map.
 *   talos.*           target = node name; image ops body = {"image": "<ref>"}.
 *   talos.patch       an intent, one key: {"registry-auth": {"host": H,
 *                     "auth": {"username", "password"}}} (host also in
 *                     req.host), or {"node-annotations": {key: value|null}}.
 *   talos.read-auth   host = registry host; body = {"host": H}; answer
 *                     {"auth": {"username", "password"}} or {"redacted": true}.
 *   registry.token    host = registry host; target = repository
 *                     ("devantler-tech/ksail"), body = {"username", "password"}.
 *   registry.manifest host; target = "repo:ref", body = {"token"}.
 *   run.liveness      target = run reference ("sim.stage", "gh123.1").
 */
/* JSON pointers (RFC 6901, from the body's root; a "*" segment matches every
 * member or element; "" is the whole body) of the values that carry a
 * secret. NULL-terminated; set with rs_secret_mark. */
#define RS_SECRET_MARKS_MAX 6
typedef struct rs_secret_marks {
    const char *paths[RS_SECRET_MARKS_MAX + 1];
} rs_secret_marks;

typedef struct rs_req {
    rs_op op;
    const char *kind;
    const char *ns;
    const char *name;
    const char *label_selector;
    const char *field_selector;
    rs_patch_type patch_type;
    const char *target;
    const cJSON *body;
    const char *mount;      /* openbao.*: the KV v2 mount */
    const char *host;       /* registry.*, talos registry auth: the registry host */
    rs_secret_marks secret; /* which body values carry a secret */
} rs_req;

#define RS_RESP_ERROR_MAX 512

/* Whether a request left the client. Any status other than 0 means yes. */
typedef enum rs_sent {
    RS_SENT_UNKNOWN = 0, /* a timeout: it may have been sent and applied */
    RS_SENT_YES,         /* sent (an answer came, or it was lost on the way back) */
    RS_SENT_NO,          /* never left: safe to retry */
} rs_sent;

typedef struct rs_resp {
    int status;  /* HTTP-like; 0 = transport error */
    cJSON *body; /* owned by the caller after `call`; NULL when none */
    rs_sent sent;
    rs_secret_marks secret; /* which body values carry a secret (set by the root) */
    char error[RS_RESP_ERROR_MAX];
} rs_resp;

typedef struct rs_transport rs_transport;
struct rs_transport {
    int version; /* RS_TRANSPORT_VERSION */
    const char *name;
    void *ctx;
    /* Performs req; fills *resp (resp->body owned by caller); returns resp->status. */
    int (*call)(rs_transport *t, const rs_req *req, rs_resp *resp);
    /* Performs n independent reads (never a write: a batch has no order),
     * at most `parallelism` in flight at once; resps[i] answers reqs[i]. The
     * sim costs it ceil(n / parallelism) round trips; the live side runs it
     * concurrently with the same bound. May be NULL: tp_call_batch then
     * calls one at a time. */
    void (*call_batch)(rs_transport *t, const rs_req *reqs, rs_resp *resps, size_t n,
                       int parallelism);
    /* Milliseconds since an arbitrary epoch (virtual in the sim). */
    int64_t (*now_ms)(rs_transport *t);
    /* Waits ms milliseconds (advances virtual time in the sim). */
    void (*sleep_ms)(rs_transport *t, int64_t ms);
    /* 64 random bits (seeded in the sim). */
    uint64_t (*entropy)(rs_transport *t);
    /* The process id recorded in holder identities (seeded in the sim, so a
     * sim run's holder is reproducible; getpid() live). */
    int (*pid)(rs_transport *t);
    /* Releases the transport and its context. May be NULL. */
    void (*close)(rs_transport *t);
};

/* "kube.get", "openbao.read", "talos.read-auth", ... (the §5 verb part). */
const char *rs_op_name(rs_op op);
/* Parses a §5 verb ("kube.patch"); returns RS_OP_COUNT when unknown. */
rs_op rs_op_parse(const char *name);
/* True for every verb that can change the world (kube create/patch/delete/
 * evict, openbao.write, talos patch/reboot/image-remove/image-pull). */
bool rs_op_is_write(rs_op op);
/* The §5 target: "Secret/flux-system/variables-base", "Node/prod-worker-1",
 * "Secret/kyverno" (list), "infrastructure/ghcr/auth", "prod-worker-1",
 * "devantler-tech/ksail:v7.178.30". Caller frees. */
char *rs_req_target(const rs_req *req);
/* "kube.patch Secret/flux-system/variables-base". Caller frees. */
char *rs_req_opname(const rs_req *req);

void rs_resp_init(rs_resp *resp);
void rs_resp_free(rs_resp *resp);
/* No answer, and the request may have been sent: a write may have been
 * applied (adopt by re-reading, or fail closed). */
bool rs_resp_ambiguous(const rs_resp *resp);
/* No answer, and the request never left: retrying cannot apply it twice. */
bool rs_resp_not_sent(const rs_resp *resp);

/* The one way a message says what an answer was: "HTTP 503", or, when no
 * status came, what the transport error was — "timed out", "connection lost"
 * or "not sent", with the transport's detail. Never "HTTP 0". Used as
 * rs_answer_of(&r).text inside the formatting call (a C11 temporary). */
#define RS_ANSWER_MAX (RS_RESP_ERROR_MAX + 64)
typedef struct rs_answer {
    char text[RS_ANSWER_MAX];
} rs_answer;
rs_answer rs_answer_of(const rs_resp *resp);
/* The same from what a caller kept of an answer (error may be NULL). */
rs_answer rs_answer_from(int status, rs_sent sent, const char *error);

/* Adds pointer to marks (once); false when marks is full. pointer must
 * outlive the marks (string literals in practice). */
bool rs_secret_mark(rs_secret_marks *marks, const char *pointer);
/* Calls fn on every value of doc a mark names; returns how many. The
 * recorder's redaction is one such fn. */
size_t rs_secret_visit(cJSON *doc, const rs_secret_marks *marks,
                       void (*fn)(cJSON *value, void *arg), void *arg);
/* The marks the core declares for a request it sends: a Secret's data on
 * create and merge patches, every value of a Secret's JSON patch, OpenBao
 * KV data, Talos registry auth, registry passwords and tokens. */
void rs_req_mark_secrets(rs_req *req);
/* The marks every root declares for an answer: Secret data (get, list,
 * create, patch), OpenBao KV data, Talos auth, registry tokens. */
void rs_resp_mark_secrets(const rs_req *req, rs_resp *resp);

/* The core's one door to `call`: declares the request's secrets, then calls. */
int tp_call(rs_transport *t, const rs_req *req, rs_resp *resp);
/* The batch door: declares each request's secrets, then t->call_batch (or
 * one call at a time when the transport has none). Reads only. */
void tp_call_batch(rs_transport *t, const rs_req *reqs, rs_resp *resps, size_t n, int parallelism);
/* For shims: hands an already-declared batch to inner the same way. */
void tp_batch_forward(rs_transport *inner, const rs_req *reqs, rs_resp *resps, size_t n,
                      int parallelism);

/* Convenience wrappers: build the request and call t->call. */
int tp_kube_get(rs_transport *t, const char *kind, const char *ns, const char *name, rs_resp *r);
int tp_kube_list(rs_transport *t, const char *kind, const char *ns, const char *label_selector,
                 const char *field_selector, rs_resp *r);
int tp_openbao_read(rs_transport *t, const char *mount, const char *path, rs_resp *r);

#endif
