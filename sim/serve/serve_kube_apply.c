/*
 * serve_kube_apply.c — server-side apply (`kubectl apply --server-side`,
 * PATCH with `Content-Type: application/apply-patch+yaml`): the applied
 * configuration merged into the object, each field owned by the managers
 * that set it (metadata.managedFields, FieldsV1), a field another manager
 * owns with a different value a 409 Conflict naming manager and field
 * unless `force=true` (which takes it over), and a field this manager
 * applied before but applies no more removed when no one else owns it.
 * An apply of an object that does not exist creates it.
 *
 * What is simplified (sim/serve/README.md): lists are atomic (a list is one
 * field, never merged by key); only Apply managers own fields — a create or
 * patch (kubectl label, edit, a controller of the world) records no Update
 * manager, so it never conflicts with a later apply, and an apply takes a
 * field such a write set without a conflict; `status` is not tracked.
 *
 * The one idea: the apply is computed here, against the object read under
 * the world lock, and reaches the world as the one write it amounts to (a
 * create, or a merge patch guarded by the resourceVersion it was computed
 * from), so it is one call of the world, counted as a patch or create is.
 */
#include "sim/serve/serve_int.h"

#include "core/cred/cred.h"
#include "core/live/live_yaml.h"
#include "sim/store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define APPLY_PATH_MAX 32
#define APPLY_CONFLICTS_MAX 16

/* Fields the server owns: never in a field set. */
static bool server_field(int depth, const char *parent, const char *key)
{
    static const char *const top[] = {"apiVersion", "kind", "status"};
    static const char *const meta[] = {"name",
                                       "namespace",
                                       "uid",
                                       "resourceVersion",
                                       "generation",
                                       "creationTimestamp",
                                       "managedFields",
                                       "selfLink",
                                       "deletionTimestamp"};
    if (depth == 0) {
        for (size_t i = 0; i < sizeof top / sizeof *top; i++)
            if (strcmp(key, top[i]) == 0) return true;
    } else if (depth == 1 && strcmp(parent, "metadata") == 0) {
        for (size_t i = 0; i < sizeof meta / sizeof *meta; i++)
            if (strcmp(key, meta[i]) == 0) return true;
    }
    return false;
}

/* The field set of obj in FieldsV1 form: {"f:metadata": {"f:labels":
 * {"f:a": {}}}}. A non-empty object is walked; anything else (a list, a
 * scalar, an empty object) is one field. */
static void fields_of(const cJSON *obj, cJSON *set, int depth, const char *parent)
{
    const cJSON *m;
    cJSON_ArrayForEach(m, obj)
    {
        if (server_field(depth, parent, m->string)) continue;
        char key[300];
        snprintf(key, sizeof key, "f:%s", m->string);
        cJSON *sub = cJSON_GetObjectItemCaseSensitive(set, key);
        bool fresh = !sub;
        if (!sub) sub = cJSON_AddObjectToObject(set, key);
        if (cJSON_IsObject(m) && m->child && depth < APPLY_PATH_MAX - 1) {
            fields_of(m, sub, depth + 1, m->string);
            /* An object of server fields alone (metadata: {name}) is no field. */
            if (fresh && !sub->child) cJSON_DeleteItemFromObjectCaseSensitive(set, key);
        }
    }
}

/* Calls fn for every leaf path of set (keys without "f:"). */
typedef void (*leaf_fn)(const char *const *path, int n, void *arg);
static void leaves(const cJSON *set, const char **path, int n, leaf_fn fn, void *arg)
{
    const cJSON *m;
    cJSON_ArrayForEach(m, set)
    {
        if (strncmp(m->string, "f:", 2) != 0 || n >= APPLY_PATH_MAX) continue;
        path[n] = m->string + 2;
        if (m->child)
            leaves(m, path, n + 1, fn, arg);
        else
            fn(path, n + 1, arg);
    }
}

/* True when the set holds path as a field of its own (a leaf). */
static bool set_has(const cJSON *set, const char *const *path, int n)
{
    char key[300];
    for (int i = 0; i < n && set; i++) {
        snprintf(key, sizeof key, "f:%s", path[i]);
        set = cJSON_GetObjectItemCaseSensitive(set, key);
    }
    return set != NULL && set->child == NULL;
}

static void set_remove(cJSON *set, const char *const *path, int n)
{
    char key[300];
    snprintf(key, sizeof key, "f:%s", path[0]);
    cJSON *sub = cJSON_GetObjectItemCaseSensitive(set, key);
    if (!sub) return;
    if (n == 1) {
        cJSON_DeleteItemFromObjectCaseSensitive(set, key);
        return;
    }
    set_remove(sub, path + 1, n - 1);
    if (!sub->child) cJSON_DeleteItemFromObjectCaseSensitive(set, key);
}

static const cJSON *value_at(const cJSON *obj, const char *const *path, int n)
{
    for (int i = 0; i < n && obj; i++)
        obj = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, path[i]) : NULL;
    return obj;
}

static void value_remove(cJSON *obj, const char *const *path, int n)
{
    for (int i = 0; i < n - 1 && obj; i++)
        obj = cJSON_GetObjectItemCaseSensitive(obj, path[i]);
    if (cJSON_IsObject(obj)) cJSON_DeleteItemFromObjectCaseSensitive(obj, path[n - 1]);
}

/* Merges src into dst: objects member by member, anything else replaced. */
static void merge_into(cJSON *dst, const cJSON *src)
{
    const cJSON *m;
    cJSON_ArrayForEach(m, src)
    {
        cJSON *d = cJSON_GetObjectItemCaseSensitive(dst, m->string);
        if (cJSON_IsObject(d) && cJSON_IsObject(m) && m->child) {
            merge_into(d, m);
        } else if (d) {
            cJSON_ReplaceItemInObjectCaseSensitive(dst, m->string, cJSON_Duplicate(m, true));
        } else {
            cJSON_AddItemToObject(dst, m->string, cJSON_Duplicate(m, true));
        }
    }
}

/* The JSON merge patch that turns a into b (arrays replaced whole). */
cJSON *serve_merge_diff(const cJSON *a, const cJSON *b)
{
    cJSON *d = cJSON_CreateObject();
    const cJSON *m;
    cJSON_ArrayForEach(m, b)
    {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(a, m->string);
        if (cJSON_IsObject(o) && cJSON_IsObject(m)) {
            cJSON *sub = serve_merge_diff(o, m);
            if (sub->child)
                cJSON_AddItemToObject(d, m->string, sub);
            else
                cJSON_Delete(sub);
        } else if (!o || !cJSON_Compare(o, m, true)) {
            cJSON_AddItemToObject(d, m->string, cJSON_Duplicate(m, true));
        }
    }
    cJSON_ArrayForEach(m, a)
    {
        if (!cJSON_GetObjectItemCaseSensitive(b, m->string)) cJSON_AddNullToObject(d, m->string);
    }
    return d;
}

/* ---- managedFields ------------------------------------------------------- */

static const char *entry_str(const cJSON *e, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, key));
}

static cJSON *entry_fields(cJSON *e)
{
    cJSON *f = cJSON_GetObjectItemCaseSensitive(e, "fieldsV1");
    if (!cJSON_IsObject(f)) {
        f = cJSON_CreateObject();
        if (cJSON_GetObjectItemCaseSensitive(e, "fieldsV1"))
            cJSON_ReplaceItemInObjectCaseSensitive(e, "fieldsV1", f);
        else
            cJSON_AddItemToObject(e, "fieldsV1", f);
    }
    return f;
}

static void now_text(serve_server *s, char out[32])
{
    time_t t = (time_t)(store_now(sim_world_db(s->w)) / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The entry of manager with operation op in mf, made when absent. */
static cJSON *entry_for(serve_server *s, cJSON *mf, const char *manager, const char *op,
                        const char *api_version)
{
    cJSON *e;
    cJSON_ArrayForEach(e, mf)
    {
        const char *m = entry_str(e, "manager"), *o = entry_str(e, "operation");
        if (m && o && strcmp(m, manager) == 0 && strcmp(o, op) == 0) break;
    }
    if (!e) {
        e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "manager", manager);
        cJSON_AddStringToObject(e, "operation", op);
        cJSON_AddStringToObject(e, "apiVersion", api_version);
        cJSON_AddStringToObject(e, "time", "");
        cJSON_AddStringToObject(e, "fieldsType", "FieldsV1");
        cJSON_AddItemToObject(e, "fieldsV1", cJSON_CreateObject());
        cJSON_AddItemToArray(mf, e);
    }
    char now[32];
    now_text(s, now);
    cJSON_ReplaceItemInObjectCaseSensitive(e, "time", cJSON_CreateString(now));
    return e;
}

static void drop_empty_entries(cJSON *mf)
{
    for (cJSON *e = mf->child; e;) {
        cJSON *next = e->next;
        cJSON *f = cJSON_GetObjectItemCaseSensitive(e, "fieldsV1");
        if (!f || !f->child) cJSON_Delete(cJSON_DetachItemViaPointer(mf, e));
        e = next;
    }
}

/* ---- the apply ------------------------------------------------------------ */

typedef struct apply_ctx {
    const char *manager;
    bool force;
    const cJSON *applied, *current;
    cJSON *mf;     /* managedFields being rewritten */
    cJSON *result; /* the object being built */
    const cJSON *mine_now;
    char conflicts[APPLY_CONFLICTS_MAX][320];
    int n_conflicts;
} apply_ctx;

static void path_text(const char *const *path, int n, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, ".%s", path[i]);
}

static bool is_self(const apply_ctx *c, const cJSON *e)
{
    const char *m = entry_str(e, "manager"), *o = entry_str(e, "operation");
    return m && o && strcmp(m, c->manager) == 0 && strcmp(o, "Apply") == 0;
}

/* A field this apply sets: owned by another manager with another value is
 * a conflict (or, forced, taken from it). */
static void check_leaf(const char *const *path, int n, void *arg)
{
    apply_ctx *c = arg;
    const cJSON *want = value_at(c->applied, path, n), *have = value_at(c->current, path, n);
    /* A field the object does not hold (a Secret's stringData, folded into
     * data) has no live value to fight over. */
    bool same = !have || (want && cJSON_Compare(have, want, true));
    cJSON *e;
    cJSON_ArrayForEach(e, c->mf)
    {
        if (is_self(c, e) || !set_has(entry_fields(e), path, n) || same) continue;
        if (c->force) {
            set_remove(entry_fields(e), path, n);
        } else if (c->n_conflicts < APPLY_CONFLICTS_MAX) {
            char field[256];
            path_text(path, n, field, sizeof field);
            snprintf(c->conflicts[c->n_conflicts++], sizeof c->conflicts[0],
                     "conflict with \"%s\": %s", entry_str(e, "manager"), field);
        } else {
            c->n_conflicts++;
        }
    }
}

/* A field this manager applied before and applies no more: removed, when
 * no other manager owns it. */
static void drop_leaf(const char *const *path, int n, void *arg)
{
    apply_ctx *c = arg;
    if (set_has(c->mine_now, path, n)) return;
    const cJSON *e;
    cJSON_ArrayForEach(e, c->mf)
    {
        if (!is_self(c, e) && set_has(cJSON_GetObjectItemCaseSensitive(e, "fieldsV1"), path, n))
            return;
    }
    value_remove(c->result, path, n);
}

static void conflict_answer(apply_ctx *c, const kube_target *t, serve_answer *a)
{
    char msg[512];
    int shown = c->n_conflicts < APPLY_CONFLICTS_MAX ? c->n_conflicts : APPLY_CONFLICTS_MAX;
    snprintf(msg, sizeof msg, "Apply failed with %d conflict%s: %s", c->n_conflicts,
             c->n_conflicts == 1 ? "" : "s", c->conflicts[0]);
    cJSON *st = store_status(409, "Conflict", "%s", msg);
    cJSON *details = cJSON_AddObjectToObject(st, "details");
    cJSON_AddStringToObject(details, "name", t->name);
    cJSON_AddStringToObject(details, "kind", t->resource);
    cJSON *causes = cJSON_AddArrayToObject(details, "causes");
    for (int i = 0; i < shown; i++) {
        cJSON *cause = cJSON_CreateObject();
        cJSON_AddStringToObject(cause, "reason", "FieldManagerConflict");
        const char *colon = strstr(c->conflicts[i], ": ");
        char head[320];
        snprintf(head, sizeof head, "%.*s", colon ? (int)(colon - c->conflicts[i]) : 0,
                 c->conflicts[i]);
        cJSON_AddStringToObject(cause, "message", head);
        cJSON_AddStringToObject(cause, "field", colon ? colon + 2 : "");
        cJSON_AddItemToArray(causes, cause);
    }
    serve_answer_json(a, 409, st);
}

/* The applied configuration: YAML (JSON is YAML), one object. */
static cJSON *applied_body(const serve_http *h, const char **why)
{
    *why = "the apply configuration must be one YAML or JSON object";
    if (!h->body || h->body_len == 0 || memchr(h->body, '\0', h->body_len)) return NULL;
    size_t len = h->body_len;
    char *fixed = serve_body_utf8(h->body, h->body_len, &len);
    rs_err e;
    rs_err_clear(&e);
    live_yaml_doc *doc = NULL;
    cJSON *obj = NULL;
    if (live_yaml_load_text(fixed ? fixed : h->body, len, "request body", "apply configuration",
                            &doc, &e) == RS_OK &&
        cJSON_IsObject(live_yaml_root(doc)))
        obj = cJSON_Duplicate(live_yaml_root(doc), true);
    live_yaml_free(doc);
    if (fixed) cred_bytes_wipe_free(fixed, len + 1);
    return obj;
}

void serve_kube_apply(serve_server *s, const serve_http *h, const kube_target *t, serve_answer *a)
{
    const char *manager = serve_arg(h, "fieldManager");
    if (!manager || !manager[0]) {
        serve_answer_status(a, 422, "Invalid",
                            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required "
                            "value: is required for apply patch");
        return;
    }
    const char *why = NULL;
    cJSON *applied = applied_body(h, &why);
    if (!applied) {
        serve_answer_status(a, 400, "BadRequest", "%s", why);
        return;
    }
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(applied, "kind"));
    const char *av = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(applied, "apiVersion"));
    const cJSON *amd = cJSON_GetObjectItemCaseSensitive(applied, "metadata");
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(amd, "name"));
    const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(amd, "namespace"));
    if (!kind || !av || strcmp(kind, t->kind) != 0 || strcmp(av, store_api_version(t->kind)) != 0 ||
        !name || strcmp(name, t->name) != 0 || (ns && t->ns && strcmp(ns, t->ns) != 0)) {
        cred_json_wipe_delete(applied);
        serve_answer_status(a, 400, "BadRequest",
                            "the apply configuration must name the object of the URL (its "
                            "apiVersion, kind, name and namespace)");
        return;
    }
    cJSON *current = NULL;
    int got = store_get(sim_world_store(s->w), t->kind, t->ns, t->name, &current);
    if (got != 200) {
        cred_json_wipe_delete(current);
        current = NULL;
    }
    const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(current, "metadata");
    cJSON *mf = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(cmd, "managedFields"), true);
    if (!cJSON_IsArray(mf)) {
        cJSON_Delete(mf);
        mf = cJSON_CreateArray();
    }
    apply_ctx c = {.manager = manager,
                   .force = serve_arg_true(h, "force"),
                   .applied = applied,
                   .current = current,
                   .mf = mf};
    cJSON *mine_now = cJSON_CreateObject();
    fields_of(applied, mine_now, 0, "");
    const char *path[APPLY_PATH_MAX];
    leaves(mine_now, path, 0, check_leaf, &c);
    if (c.n_conflicts > 0) {
        conflict_answer(&c, t, a);
    } else {
        c.result = current ? cJSON_Duplicate(current, true) : cJSON_CreateObject();
        c.mine_now = mine_now;
        cJSON *self = entry_for(s, mf, manager, "Apply", av);
        leaves(entry_fields(self), path, 0, drop_leaf, &c);
        merge_into(c.result, applied);
        cJSON_ReplaceItemInObjectCaseSensitive(self, "fieldsV1", cJSON_Duplicate(mine_now, true));
        cJSON_ReplaceItemInObjectCaseSensitive(self, "apiVersion", cJSON_CreateString(av));
        drop_empty_entries(mf);
        cJSON *rmd = cJSON_GetObjectItemCaseSensitive(c.result, "metadata");
        if (cJSON_GetObjectItemCaseSensitive(rmd, "managedFields"))
            cJSON_ReplaceItemInObjectCaseSensitive(rmd, "managedFields", mf);
        else
            cJSON_AddItemToObject(rmd, "managedFields", mf);
        mf = NULL;
        rs_req req = {.kind = t->kind, .ns = t->ns, .name = t->name};
        cJSON *body = NULL;
        if (!current) {
            req.op = RS_OP_KUBE_CREATE;
            req.name = NULL;
            body = cJSON_Duplicate(c.result, true);
        } else {
            req.op = RS_OP_KUBE_PATCH;
            req.patch_type = RS_PATCH_MERGE;
            body = serve_merge_diff(current, c.result);
            /* Guarded by the revision it was computed from. */
            cJSON *md = cJSON_GetObjectItemCaseSensitive(body, "metadata");
            if (!md) md = cJSON_AddObjectToObject(body, "metadata");
            cJSON_DeleteItemFromObjectCaseSensitive(md, "resourceVersion");
            cJSON_AddStringToObject(
                md, "resourceVersion",
                cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cmd, "resourceVersion")));
        }
        req.body = body;
        serve_kube_write(s, h, &req, a);
        /* An apply that creates answers 201; one that updates, 200. */
        cred_json_wipe_delete(body);
        cred_json_wipe_delete(c.result);
    }
    cJSON_Delete(mf);
    cJSON_Delete(mine_now);
    cred_json_wipe_delete(current);
    cred_json_wipe_delete(applied);
}
