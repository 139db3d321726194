/*
 * store_int.h — private to sim/store/: what store.c (the decisions) calls of
 * store_kind.c (kinds, Status bodies) and store_row.c (SQLite rows). Calls go
 * one way: store.c -> store_kind.c, store_row.c; those two call nothing of the
 * folder.
 */
#ifndef SIM_STORE_INT_H
#define SIM_STORE_INT_H

#include "sim/store/store.h"

#include "core/rs.h"

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stdbool.h>

/* What the store knows about a kind: its group/version, the resource name
 * the API server puts in its messages, and its scope. */
typedef struct store_kind_info {
    const char *kind;
    const char *api_version;
    const char *resource; /* plural, with group: "deployments.apps" */
    bool cluster_scoped;
} store_kind_info;

/* ---- store_kind.c ---- */

/* NULL for a kind the sim does not serve. */
const store_kind_info *store_kind_find(const char *kind);
/* Cluster-scoped objects live under ns "" whatever the caller passed: the
 * API server has no namespace in their URL. */
const char *store_ns(const store_kind_info *ki, const char *ns);
/* Each sets *out to the API server's Status body and returns its code;
 * store_fail_obj adds the "details" (name, group, resource kind). */
int store_fail_obj(cJSON **out, int code, const char *reason, const store_kind_info *ki,
                   const char *name, const char *msg);
int store_not_found(cJSON **out, const store_kind_info *ki, const char *name);
int store_unknown_kind(cJSON **out, const char *kind);
int store_conflict(cJSON **out, const store_kind_info *ki, const char *name);
int store_invalid(cJSON **out, const store_kind_info *ki, const char *name, const char *why);
int store_bad_request(cJSON **out, const char *why);
/* 413 RequestEntityTooLarge, "Request entity too large: <why>". */
int store_too_large(cJSON **out, const char *why);
/* store_admit.c: a create's name must be what the API server accepts (a
 * DNS-1123 subdomain; a label for a Namespace). 0, or 422 with *out set. */
int store_admit_name(const store_kind_info *ki, const char *name, cJSON **out);
/* store_admit.c: what the API server does to obj before storing it (merges
 * a Secret's stringData, refuses Secret data that is not base64 or over
 * 1 MiB, a Lease time that is not MicroTime, annotations over 256 KiB in
 * total, an object over etcd's 1.5 MiB). 0, or the failure code with *out
 * set. */
int store_admit(const store_kind_info *ki, const char *name, cJSON *obj, cJSON **out);
int store_internal(cJSON **out, store *db);

/* ---- store_cache.c: parsed objects by (kind, ns, name) ---- */
typedef struct store_cache store_cache;
store_cache *store_cache_new(void);
void store_cache_free(store_cache *c);
void store_cache_clear(store_cache *c);
/* The kept object (borrowed, valid until the next change), or NULL. */
const cJSON *store_cache_get(store_cache *c, const char *kind, const char *ns, const char *name);
/* Keeps obj (consumed) as the object's parse; an object whose text would
 * not parse back to it is not kept (and any older one dropped). */
void store_cache_put(store_cache *c, const char *kind, const char *ns, const char *name,
                     cJSON *obj);
void store_cache_drop(store_cache *c, const char *kind, const char *ns, const char *name);

/* ---- store_row.c (SQLite result codes) ---- */

/* Takes the next global revision. */
int store_bump(store *db, long long *rev);
/* Reads one object: SQLITE_OK with *obj NULL when it does not exist. */
int store_load(store *db, const char *kind, const char *ns, const char *name, cJSON **obj);
/* store_load without a copy when the store keeps the object parsed: *obj
 * borrowed, valid until the store next changes; otherwise loaded into *hold
 * (*obj == *hold), which the caller frees. */
int store_peek(store *db, const char *kind, const char *ns, const char *name, const cJSON **obj,
               cJSON **hold);
/* Every object of kind in ns ("" for every namespace), sorted by ns then
 * name, parsed and shown to fn (borrowed: fn copies what it keeps).
 * SQLITE_OK or the error. */
typedef void (*store_scan_fn)(const cJSON *obj, void *arg);
int store_scan(store *db, const char *kind, const char *ns, store_scan_fn fn, void *arg);
/* metadata.<key> when it is a string, else NULL. */
const char *store_meta_str(const cJSON *obj, const char *key);
int store_write(store *db, const char *kind, const char *ns, const char *name, const cJSON *obj,
                long long rev);
int store_erase(store *db, const char *kind, const char *ns, const char *name);
/* A write either lands whole or not at all; a SAVEPOINT nests inside a
 * transaction the world may already hold. */
int store_tx_begin(store *db);
void store_tx_end(store *db, bool commit);

#endif
