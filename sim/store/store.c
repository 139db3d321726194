/*
 * store.c — Kubernetes objects in SQLite, answered the way the API server
 * answers them.
 *
 * The one idea: every write goes through one place (store_commit_update for
 * replace and patch, store_create, store_delete) that decides whether the
 * object changed, and only a real change takes the next global revision. The
 * core's idempotence is measured against this store (a no-op patch must not
 * move resourceVersion, a stale resourceVersion must be a 409), so those
 * decisions must match a real API server or the sim would bless a core that
 * churns production.
 *
 * The kinds and the Status bodies live in store_kind.c, the SQLite rows and
 * the SAVEPOINT in store_row.c; this file is where reads and writes are
 * decided.
 */
#include "sim/store/store_int.h"

#include "sim/store/jsonpatch.h"
#include "sim/store/store_select.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- Object normalisation ------------------------------------------------ */

static void store_set(cJSON *obj, const char *key, cJSON *value)
{
    if (cJSON_GetObjectItemCaseSensitive(obj, key))
        cJSON_ReplaceItemInObjectCaseSensitive(obj, key, value);
    else
        cJSON_AddItemToObject(obj, key, value);
}

static cJSON *store_metadata(cJSON *obj)
{
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    if (cJSON_IsObject(meta)) return meta;
    meta = cJSON_CreateObject();
    store_set(obj, "metadata", meta);
    return meta;
}

/* A UUID-shaped uid derived only from the creation revision: deterministic
 * (one seed, one run) and unique, since revisions are never reused. */
static void store_uid(long long rev, char *buf, size_t len)
{
    unsigned long long x = (unsigned long long)rev + 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    snprintf(buf, len, "%08llx-%04llx-4%03llx-8%03llx-%012llx", x >> 32, (x >> 16) & 0xffff,
             (x >> 4) & 0xfff, x & 0xfff, (unsigned long long)rev & 0xffffffffffffULL);
}

/* Stamps the identity the store owns: kind, apiVersion, name, namespace,
 * uid, resourceVersion, generation, creationTimestamp (NULL: none, an
 * object stored before the store stamped it). */
static void store_stamp(cJSON *obj, const store_kind_info *ki, const char *ns, const char *name,
                        const char *uid, long long rv, double generation, const char *created)
{
    store_set(obj, "kind", cJSON_CreateString(ki->kind));
    store_set(obj, "apiVersion", cJSON_CreateString(ki->api_version));
    cJSON *meta = store_metadata(obj);
    store_set(meta, "name", cJSON_CreateString(name));
    if (ki->cluster_scoped)
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "namespace");
    else
        store_set(meta, "namespace", cJSON_CreateString(ns));
    store_set(meta, "uid", cJSON_CreateString(uid));
    char rvbuf[32];
    snprintf(rvbuf, sizeof rvbuf, "%lld", rv);
    store_set(meta, "resourceVersion", cJSON_CreateString(rvbuf));
    store_set(meta, "generation", cJSON_CreateNumber(generation));
    if (created)
        store_set(meta, "creationTimestamp", cJSON_CreateString(created));
    else
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "creationTimestamp");
}

/* The store's clock as RFC 3339 (the API server's metav1.Time: seconds). */
long long store_now(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    long long ms = 0;
    if (sqlite3_prepare_v2(db, "SELECT value FROM store_meta WHERE key = 'now_ms'", -1, &st,
                           NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        ms = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return ms;
}

static void store_now_text(sqlite3 *db, char out[32])
{
    time_t t = (time_t)(store_now(db) / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* True when anything outside metadata and status differs: that is what
 * bumps metadata.generation on the API server. */
static bool store_spec_changed(const cJSON *a, const cJSON *b)
{
    cJSON *x = cJSON_Duplicate(a, true);
    cJSON *y = cJSON_Duplicate(b, true);
    const char *skip[] = {"metadata", "status"};
    for (size_t i = 0; i < RS_ARRAY_LEN(skip); i++) {
        cJSON_DeleteItemFromObjectCaseSensitive(x, skip[i]);
        cJSON_DeleteItemFromObjectCaseSensitive(y, skip[i]);
    }
    bool changed = !cJSON_Compare(x, y, true);
    cJSON_Delete(x);
    cJSON_Delete(y);
    return changed;
}

/* A fresh copy with apiVersion, kind and metadata first, as kubectl shows. */
static cJSON *store_canonical_copy(const cJSON *obj)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddNullToObject(c, "apiVersion");
    cJSON_AddNullToObject(c, "kind");
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    cJSON_AddItemToObject(c, "metadata", cJSON_Duplicate(meta, true));
    for (const cJSON *m = obj->child; m; m = m->next) {
        if (!m->string || !strcmp(m->string, "apiVersion") || !strcmp(m->string, "kind") ||
            !strcmp(m->string, "metadata"))
            continue;
        cJSON_AddItemToObject(c, m->string, cJSON_Duplicate(m, true));
    }
    return c;
}

/* ---- Reads -------------------------------------------------------------- */

int store_get(store *db, const char *kind, const char *ns, const char *name, cJSON **out)
{
    *out = NULL;
    const store_kind_info *ki = store_kind_find(kind);
    if (!ki) return store_unknown_kind(out, kind);
    cJSON *obj = NULL;
    if (store_load(db, kind, store_ns(ki, ns), name ? name : "", &obj) != SQLITE_OK)
        return store_internal(out, db);
    if (!obj) return store_not_found(out, ki, name);
    *out = obj;
    return 200;
}

/* store_list's scan: the objects its selectors keep. */
typedef struct store_list_acc {
    const store_selector *labels, *fields;
    cJSON *items;
} store_list_acc;

static void store_list_take(const cJSON *obj, void *arg)
{
    store_list_acc *acc = arg;
    if (store_selector_match(acc->labels, obj) && store_selector_match(acc->fields, obj))
        cJSON_AddItemToArray(acc->items, cJSON_Duplicate(obj, true));
}

const cJSON *store_lookup(store *db, const char *kind, const char *ns, const char *name,
                          cJSON **hold)
{
    *hold = NULL;
    const store_kind_info *ki = store_kind_find(kind);
    const cJSON *obj = NULL;
    if (!ki || store_peek(db, kind, store_ns(ki, ns), name ? name : "", &obj, hold) != SQLITE_OK)
        return NULL;
    return obj;
}

int store_list(store *db, const char *kind, const char *ns, const char *label_selector,
               const char *field_selector, cJSON **out)
{
    *out = NULL;
    const store_kind_info *ki = store_kind_find(kind);
    if (!ki) return store_unknown_kind(out, kind);
    char why[256];
    store_selector *labels = store_selector_parse_labels(label_selector, why, sizeof why);
    if (!labels) return store_bad_request(out, why);
    store_selector *fields = store_selector_parse_fields(field_selector, why, sizeof why);
    if (!fields || !store_selector_fields_supported(fields, kind, why, sizeof why)) {
        store_selector_free(labels);
        store_selector_free(fields);
        return store_bad_request(out, why);
    }
    store_list_acc acc = {.labels = labels, .fields = fields, .items = cJSON_CreateArray()};
    int rc = store_scan(db, kind, store_ns(ki, ns), store_list_take, &acc);
    store_selector_free(labels);
    store_selector_free(fields);
    if (rc != SQLITE_OK) {
        cJSON_Delete(acc.items);
        return store_internal(out, db);
    }
    cJSON *items = acc.items;
    cJSON *list = cJSON_CreateObject();
    char list_kind[64], rv[32];
    snprintf(list_kind, sizeof list_kind, "%sList", ki->kind);
    snprintf(rv, sizeof rv, "%lld", store_revision(db));
    cJSON_AddStringToObject(list, "kind", list_kind);
    cJSON_AddStringToObject(list, "apiVersion", ki->api_version);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(list, "metadata"), "resourceVersion", rv);
    cJSON_AddItemToObject(list, "items", items);
    *out = list;
    return 200;
}

/* ---- Writes ------------------------------------------------------------- */

int store_create(store *db, const char *kind, const char *ns, const cJSON *obj, cJSON **out)
{
    *out = NULL;
    const store_kind_info *ki = store_kind_find(kind);
    if (!ki) return store_unknown_kind(out, kind);
    if (!cJSON_IsObject(obj))
        return store_bad_request(out, "the object to create is not a JSON object");
    const char *name = store_meta_str(obj, "name");
    if (!name || !name[0])
        return store_invalid(out, ki, "", "metadata.name: Required value: name is required");
    int bad_name = store_admit_name(ki, name, out);
    if (bad_name) return bad_name;
    const char *obj_ns = store_meta_str(obj, "namespace");
    const char *want_ns = store_ns(ki, ns && ns[0] ? ns : obj_ns);
    if (!ki->cluster_scoped && !want_ns[0])
        return store_bad_request(out, "a namespaced object needs a namespace to be created in");
    if (!ki->cluster_scoped && obj_ns && obj_ns[0] && strcmp(obj_ns, want_ns) != 0)
        return store_bad_request(out, "the namespace of the provided object does not match the "
                                      "namespace sent on the request");
    if (store_tx_begin(db) != SQLITE_OK) return store_internal(out, db);
    const cJSON *existing = NULL;
    cJSON *hold = NULL;
    long long rev = 0;
    int code = 201;
    if (store_peek(db, kind, want_ns, name, &existing, &hold) != SQLITE_OK) {
        code = store_internal(out, db);
    } else if (existing) {
        char msg[384];
        snprintf(msg, sizeof msg, "%s \"%s\" already exists", ki->resource, name);
        code = store_fail_obj(out, 409, "AlreadyExists", ki, name, msg);
    } else if (store_bump(db, &rev) != SQLITE_OK) {
        code = store_internal(out, db);
    } else {
        char uid[48], created[32];
        store_uid(rev, uid, sizeof uid);
        store_now_text(store_db(db), created);
        cJSON *body = store_canonical_copy(obj);
        store_stamp(body, ki, want_ns, name, uid, rev, 1, created);
        int refused = store_admit(ki, name, body, out);
        if (refused) {
            cJSON_Delete(body);
            code = refused;
        } else if (store_write(db, kind, want_ns, name, body, rev) != SQLITE_OK) {
            cJSON_Delete(body);
            code = store_internal(out, db);
        } else {
            *out = body;
        }
    }
    cJSON_Delete(hold);
    store_tx_end(db, code == 201);
    return code;
}

/* Checks that cand keeps old's identity. Returns 0 or the failure code. */
static int store_check_identity(const store_kind_info *ki, const char *ns, const char *name,
                                const cJSON *old, const cJSON *cand, cJSON **out)
{
    const char *old_uid = store_meta_str(old, "uid");
    const char *old_rv = store_meta_str(old, "resourceVersion");
    const char *cname = store_meta_str(cand, "name");
    const char *cns = store_meta_str(cand, "namespace");
    const char *cuid = store_meta_str(cand, "uid");
    const char *crv = store_meta_str(cand, "resourceVersion");
    if (!cname || strcmp(cname, name) != 0)
        return store_invalid(out, ki, name, "metadata.name: Invalid value: field is immutable");
    if (cns && strcmp(cns, ns) != 0)
        return store_invalid(out, ki, name,
                             "metadata.namespace: Invalid value: field is immutable");
    if (cuid && strcmp(cuid, old_uid ? old_uid : "") != 0)
        return store_invalid(out, ki, name, "metadata.uid: Invalid value: field is immutable");
    /* Optimistic concurrency: a resourceVersion in the request is a
     * precondition, exactly as the API server treats it on PUT and PATCH. */
    if (crv && strcmp(crv, old_rv ? old_rv : "") != 0) return store_conflict(out, ki, name);
    return 0;
}

/* The one place an update is decided: identity kept, and a new revision
 * taken only when the stamped candidate differs from what is stored.
 * Consumes cand. old may be the store's own parsed copy: it is not used
 * once the write is made. */
static int store_commit_update(store *db, const store_kind_info *ki, const char *ns,
                               const char *name, const cJSON *old, cJSON *cand, cJSON **out)
{
    if (!cJSON_IsObject(cand)) {
        cJSON_Delete(cand);
        return store_invalid(out, ki, name, "the result is not a JSON object");
    }
    int code = store_check_identity(ki, ns, name, old, cand, out);
    if (!code) code = store_admit(ki, name, cand, out);
    if (code) {
        cJSON_Delete(cand);
        return code;
    }
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(old, "metadata");
    const cJSON *gen = cJSON_GetObjectItemCaseSensitive(meta, "generation");
    double generation = cJSON_IsNumber(gen) ? gen->valuedouble : 1;
    const char *uid = store_meta_str(old, "uid");
    const char *rv_text = store_meta_str(old, "resourceVersion");
    /* creationTimestamp is the server's: an update keeps the stored one. */
    const char *created = store_meta_str(old, "creationTimestamp");
    uid = uid ? uid : "";
    long long old_rv = rv_text ? atoll(rv_text) : 0;
    store_stamp(cand, ki, ns, name, uid, old_rv, generation, created);
    if (cJSON_Compare(cand, old, true)) {
        cJSON_Delete(cand);
        *out = cJSON_Duplicate(old, true);
        return 200;
    }
    if (store_spec_changed(old, cand)) generation += 1;
    long long rev = 0;
    if (store_tx_begin(db) != SQLITE_OK) {
        cJSON_Delete(cand);
        return store_internal(out, db);
    }
    if (store_bump(db, &rev) == SQLITE_OK) {
        store_stamp(cand, ki, ns, name, uid, rev, generation, created);
        if (store_write(db, ki->kind, ns, name, cand, rev) == SQLITE_OK) {
            store_tx_end(db, true);
            *out = cand;
            return 200;
        }
    }
    code = store_internal(out, db);
    store_tx_end(db, false);
    cJSON_Delete(cand);
    return code;
}

int store_replace(store *db, const char *kind, const char *ns, const char *name, const cJSON *obj,
                  cJSON **out)
{
    *out = NULL;
    const store_kind_info *ki = store_kind_find(kind);
    if (!ki) return store_unknown_kind(out, kind);
    const char *want_ns = store_ns(ki, ns);
    name = name ? name : "";
    if (!cJSON_IsObject(obj))
        return store_bad_request(out, "the object to replace is not a JSON object");
    const char *oname = store_meta_str(obj, "name");
    const char *ons = store_meta_str(obj, "namespace");
    if (!oname || strcmp(oname, name) != 0)
        return store_bad_request(out, "the name of the object does not match the name on the URL");
    if (!ki->cluster_scoped && ons && strcmp(ons, want_ns) != 0)
        return store_bad_request(out, "the namespace of the provided object does not match the "
                                      "namespace sent on the request");
    const cJSON *old = NULL;
    cJSON *hold = NULL;
    if (store_peek(db, kind, want_ns, name, &old, &hold) != SQLITE_OK)
        return store_internal(out, db);
    if (!old) return store_not_found(out, ki, name);
    int code = store_commit_update(db, ki, want_ns, name, old, cJSON_Duplicate(obj, true), out);
    cJSON_Delete(hold);
    return code;
}

/* Applies patch to a copy of old. Returns 0 with *result set, or the
 * failure code with *out set to its Status. */
static int store_patch_apply(const store_kind_info *ki, const char *name, const cJSON *old,
                             rs_patch_type type, const cJSON *patch, cJSON **result, cJSON **out)
{
    *result = NULL;
    if (type == RS_PATCH_JSON) {
        if (!cJSON_IsArray(patch))
            return store_bad_request(out, "a JSON patch must be a JSON array of operations");
        cJSON *doc = cJSON_Duplicate(old, true);
        char err[512];
        jp_result r = jsonpatch_apply(&doc, patch, err, sizeof err);
        if (r != JP_OK) {
            cJSON_Delete(doc);
            return r == JP_TOO_LARGE ? store_too_large(out, err)
                                     : store_invalid(out, ki, name, err);
        }
        *result = doc;
        return 0;
    }
    /* Strategic merge is sent only for metadata maps, where it equals a
     * merge patch (no list-merge keys are involved). */
    if (type == RS_PATCH_MERGE || type == RS_PATCH_STRATEGIC) {
        if (!cJSON_IsObject(patch))
            return store_bad_request(out, "a merge patch must be a JSON object");
        *result = mergepatch_apply(cJSON_Duplicate(old, true), patch);
        return 0;
    }
    return store_bad_request(out, "the patch type is not supported (use JSON, merge or "
                                  "strategic merge)");
}

int store_patch(store *db, const char *kind, const char *ns, const char *name, rs_patch_type type,
                const cJSON *patch, cJSON **out)
{
    *out = NULL;
    const store_kind_info *ki = store_kind_find(kind);
    if (!ki) return store_unknown_kind(out, kind);
    const char *want_ns = store_ns(ki, ns);
    name = name ? name : "";
    const cJSON *old = NULL;
    cJSON *hold = NULL;
    if (store_peek(db, kind, want_ns, name, &old, &hold) != SQLITE_OK)
        return store_internal(out, db);
    if (!old) return store_not_found(out, ki, name);
    cJSON *cand = NULL;
    int code = store_patch_apply(ki, name, old, type, patch, &cand, out);
    if (code == 0) code = store_commit_update(db, ki, want_ns, name, old, cand, out);
    cJSON_Delete(hold);
    return code;
}

int store_delete(store *db, const char *kind, const char *ns, const char *name, cJSON **out)
{
    *out = NULL;
    const store_kind_info *ki = store_kind_find(kind);
    if (!ki) return store_unknown_kind(out, kind);
    const char *want_ns = store_ns(ki, ns);
    name = name ? name : "";
    cJSON *old = NULL;
    if (store_load(db, kind, want_ns, name, &old) != SQLITE_OK) return store_internal(out, db);
    if (!old) return store_not_found(out, ki, name);
    long long rev = 0;
    if (store_tx_begin(db) != SQLITE_OK) {
        cJSON_Delete(old);
        return store_internal(out, db);
    }
    /* A delete is a change of the world: it takes a revision, as in etcd. */
    if (store_erase(db, kind, want_ns, name) != SQLITE_OK || store_bump(db, &rev) != SQLITE_OK) {
        int code = store_internal(out, db);
        store_tx_end(db, false);
        cJSON_Delete(old);
        return code;
    }
    store_tx_end(db, true);
    *out = old;
    return 200;
}
