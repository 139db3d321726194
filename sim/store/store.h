/*
 * store.h — Kubernetes object store in SQLite, with the API server's semantics.
 *
 * One global, monotonically increasing revision; an object's
 * metadata.resourceVersion is the revision of its last change; metadata.uid
 * (deterministic, derived from the revision at creation) and
 * metadata.generation (bumped when anything outside metadata/status changes);
 * a patch that changes nothing does not move resourceVersion; create of an
 * existing name and a PUT/patch with a stale metadata.resourceVersion are 409
 * Conflict; unknown objects are 404; a failed JSON Patch `test` is 422.
 * Every non-2xx answer carries a Kubernetes `Status` object
 * ({"kind":"Status","apiVersion":"v1","status":"Failure","message",
 * "reason":"NotFound|AlreadyExists|Conflict|Invalid|BadRequest","code"}).
 *
 * The store does not count calls (the sim transport does) and knows nothing of
 * controllers. Objects are cJSON documents; the caller owns what it gets.
 * Cluster-scoped objects use ns == NULL or "".
 */
#ifndef SIM_STORE_H
#define SIM_STORE_H

#include "core/transport/transport.h"

#include <cjson/cJSON.h>
#include <sqlite3.h>

/* The store over one SQLite connection: the connection (borrowed) and its
 * statements, each prepared once for the connection's life (a statement
 * parsed again on every call was a third of a sim run's time). */
typedef struct store store;

/* Creates the store's tables if absent (idempotent). Returns 0 or an SQLite code. */
int store_init(sqlite3 *db);
/* A store over db, whose tables store_init made. store_close finalizes its
 * statements and must come before sqlite3_close(db). */
store *store_open(sqlite3 *db);
void store_close(store *s);
sqlite3 *store_db(store *s);
/* This process owns the connection (an in-memory world nobody else can
 * open): objects and the revision are kept parsed beside their rows and
 * read from there (store_cache.c). Only the store may then change its
 * tables; a caller that rolls back a savepoint of its own around store
 * writes calls store_forget after. */
void store_cache_on(store *s);
void store_forget(store *s);

/* All return an HTTP status; *out receives the object (or list, or Status). */
int store_get(store *db, const char *kind, const char *ns, const char *name, cJSON **out);
/* ns NULL/"" lists across all namespaces. Selectors as kubectl passes them:
 * label "a=b,c!=d,e,!f" (also "in (...)"/"notin (...)"); field
 * "metadata.name=x,metadata.namespace=y,spec.unschedulable=true" (any dotted
 * path, = / == / !=). Result: {"kind":"<Kind>List","apiVersion":..,
 * "metadata":{"resourceVersion":"<global>"},"items":[...]} sorted by ns, name. */
int store_list(store *db, const char *kind, const char *ns, const char *label_selector,
               const char *field_selector, cJSON **out);
/* obj must carry metadata.name; its namespace comes from ns. 201 on success. */
int store_create(store *db, const char *kind, const char *ns, const cJSON *obj, cJSON **out);
/* PUT: 409 if obj carries a resourceVersion other than the current one. */
int store_replace(store *db, const char *kind, const char *ns, const char *name, const cJSON *obj,
                  cJSON **out);
int store_patch(store *db, const char *kind, const char *ns, const char *name, rs_patch_type type,
                const cJSON *patch, cJSON **out);
int store_delete(store *db, const char *kind, const char *ns, const char *name, cJSON **out);

/* store_get for a reader that only looks: the object borrowed from the
 * store's parsed copy (valid until the store next changes), or loaded into
 * *hold, which the caller frees; NULL when absent or on an error. */
const cJSON *store_lookup(store *db, const char *kind, const char *ns, const char *name,
                          cJSON **hold);

/* The current global revision. */
long long store_revision(store *db);

/* The store's clock (ms of the world's virtual time), set by the world as
 * its clock moves: a create stamps metadata.creationTimestamp from it, as
 * the API server stamps its own time. ms since the Unix epoch. */
void store_set_now(sqlite3 *db, long long ms);
/* The store's clock: ms since the Unix epoch (0 until set). */
long long store_now(sqlite3 *db);

/* ---- the watch log (store_watch.c), `sim serve` only ----------------- */

/* One change of an object: obj as it became (a DELETED one: as it was),
 * prev as it was before (NULL for ADDED). Valid during the callback. */
typedef struct store_event {
    long long rev;
    const char *type; /* "ADDED", "MODIFIED", "DELETED" */
    const char *ns, *name;
    const cJSON *obj, *prev;
} store_event;
typedef void (*store_watch_fn)(const store_event *ev, void *arg);
/* From now on, this connection logs every change of an object (a TEMP
 * table: nothing in the world file). 0 or an SQLite code. */
int store_watch_enable(sqlite3 *db);
/* The oldest revision a watch may start after: the revision when the log
 * was enabled, or the last compaction's. */
long long store_watch_horizon(sqlite3 *db);
/* Calls fn for up to max changes of kind after revision `after`, oldest
 * first; returns how many, or -1 when the log cannot be read. */
int store_watch_events(sqlite3 *db, const char *kind, long long after, size_t max,
                       store_watch_fn fn, void *arg);
/* Keeps the newest keep changes; the horizon moves past the rest. */
void store_watch_compact(sqlite3 *db, long long keep);

/* apiVersion for a kind ("v1", "apps/v1", "coordination.k8s.io/v1",
 * "external-secrets.io/v1beta1", "external-secrets.io/v1alpha1",
 * "kustomize.toolkit.fluxcd.io/v1", "policy/v1", "apiextensions.k8s.io/v1");
 * NULL for an unknown kind. */
const char *store_api_version(const char *kind);
/* True for cluster-scoped kinds (Node, CustomResourceDefinition, Namespace). */
int store_kind_cluster_scoped(const char *kind);

/* A JSON string holding U+0000, as sim serve hands it to the store. cJSON
 * ends a string at its first NUL, so the façade carries such a string as
 * the one-member object {STORE_BYTES_KEY: "<base64 of every byte>"}. A
 * Secret's stringData value may be one (stored in data exactly, as an API
 * server stores a Go string); anywhere else the write is refused (400),
 * never stored truncated. */
#define STORE_BYTES_KEY                                                                            \
    "\001"                                                                                         \
    "bytes" /* U+0001, then "bytes" */
/* The bytes v carries when it is such an object, else NULL; *len their
 * count. Caller frees with cred_bytes_wipe_free(p, *len + 1). */
unsigned char *store_bytes_of(const cJSON *v, size_t *len);
/* How many such objects the tree holds (no recursion). */
size_t store_bytes_count(const cJSON *root);

/* Builds a Status body. Caller owns it. */
cJSON *store_status(int code, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
