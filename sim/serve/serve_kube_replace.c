/*
 * serve_kube_replace.c — PUT of a named object (`kubectl replace -f`, a
 * client's update, the Python client's replace_*): the object in the body
 * becomes the stored one, as the API server's update does. The server
 * keeps what is its own — uid, creationTimestamp, generation,
 * deletionTimestamp, the managedFields when the body carries none — and
 * `status`, which a PUT of the main resource never changes. A
 * `metadata.resourceVersion` in the body is a precondition (409 Conflict
 * when the object has moved on); a body without one replaces
 * unconditionally, as the API server allows for the kinds the sim holds.
 * An object that does not exist is 404 (none of these kinds is created by
 * an update). A body naming another kind, name or namespace than the URL
 * is 400.
 *
 * The one idea: the replacement is computed here against the object read
 * under the world lock, and reaches the world as the one JSON merge patch
 * it amounts to (every field the body drops set to null), guarded by the
 * resourceVersion the body names or, without one, the revision it was
 * computed from — so a PUT is one call of the world, counted and faulted
 * as a patch (`kube.patch`), and a change between the read and the write
 * cannot be overwritten unseen.
 */
#include "sim/serve/serve_int.h"

#include "core/cred/cred.h"
#include "sim/store/store.h"

#include <string.h>

/* What the server owns in metadata: taken from the stored object, never
 * from the body (managedFields only when the body has none). */
static const char *const server_meta[] = {"uid", "creationTimestamp", "generation",
                                          "deletionTimestamp", "selfLink"};

static void take_from(cJSON *dst, const cJSON *src, const char *key)
{
    cJSON_DeleteItemFromObjectCaseSensitive(dst, key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(src, key);
    if (v) cJSON_AddItemToObject(dst, key, cJSON_Duplicate(v, true));
}

/* The object the store should hold after the PUT: the body, with the
 * server's own fields and status taken from current. */
static cJSON *replacement(const cJSON *body, const cJSON *current)
{
    cJSON *r = cJSON_Duplicate(body, true);
    const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(current, "metadata");
    cJSON *md = cJSON_GetObjectItemCaseSensitive(r, "metadata");
    if (!cJSON_IsObject(md)) {
        cJSON_DeleteItemFromObjectCaseSensitive(r, "metadata");
        md = cJSON_AddObjectToObject(r, "metadata");
    }
    for (size_t i = 0; i < sizeof server_meta / sizeof *server_meta; i++)
        take_from(md, cmd, server_meta[i]);
    if (!cJSON_GetObjectItemCaseSensitive(md, "managedFields")) take_from(md, cmd, "managedFields");
    /* The stored revision: the precondition is set on the patch itself. */
    take_from(md, cmd, "resourceVersion");
    take_from(r, current, "status");
    return r;
}

/* The body must be the object the URL names. false with *a set. */
static bool body_names_target(const cJSON *body, const kube_target *t, serve_answer *a)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(body, "metadata");
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(body, "kind"));
    const char *av = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(body, "apiVersion"));
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(md, "name");
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(md, "namespace");
    if ((cJSON_GetObjectItemCaseSensitive(body, "kind") && (!kind || strcmp(kind, t->kind) != 0)) ||
        (cJSON_GetObjectItemCaseSensitive(body, "apiVersion") &&
         (!av || strcmp(av, store_api_version(t->kind)) != 0))) {
        serve_answer_status(a, 400, "BadRequest", "the object's kind does not match %s",
                            t->resource);
        return false;
    }
    if (!cJSON_IsString(name) || strcmp(name->valuestring, t->name) != 0) {
        serve_answer_status(a, 400, "BadRequest",
                            "the name of the object (%s) does not match the name on the URL (%s)",
                            cJSON_IsString(name) ? name->valuestring : "", t->name);
        return false;
    }
    if (ns && t->ns && !(cJSON_IsString(ns) && strcmp(ns->valuestring, t->ns) == 0)) {
        serve_answer_status(a, 400, "BadRequest",
                            "the namespace of the provided object does not match the namespace "
                            "sent on the request");
        return false;
    }
    return true;
}

void serve_kube_replace(serve_server *s, const serve_http *h, const kube_target *t, cJSON *body,
                        serve_answer *a)
{
    if (!cJSON_IsObject(body)) {
        serve_answer_status(a, 400, "BadRequest", "the object to replace must be a JSON object");
        return;
    }
    if (!body_names_target(body, t, a)) return;
    const cJSON *bmd = cJSON_GetObjectItemCaseSensitive(body, "metadata");
    const cJSON *want_rv = cJSON_GetObjectItemCaseSensitive(bmd, "resourceVersion");
    if (want_rv && !(cJSON_IsString(want_rv) && want_rv->valuestring[0])) want_rv = NULL;
    cJSON *current = NULL;
    int got = store_get(sim_world_store(s->w), t->kind, t->ns, t->name, &current);
    rs_req req = {.op = RS_OP_KUBE_PATCH,
                  .patch_type = RS_PATCH_MERGE,
                  .kind = t->kind,
                  .ns = t->ns,
                  .name = t->name};
    cJSON *patch;
    if (got != 200) {
        /* Gone: the world answers the patch 404, as the API server
         * answers an update of an object that does not exist. */
        patch = cJSON_Duplicate(body, true);
    } else {
        cJSON *r = replacement(body, current);
        patch = serve_merge_diff(current, r);
        cred_json_wipe_delete(r);
        cJSON *md = cJSON_GetObjectItemCaseSensitive(patch, "metadata");
        if (!md) md = cJSON_AddObjectToObject(patch, "metadata");
        cJSON_DeleteItemFromObjectCaseSensitive(md, "resourceVersion");
        const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(current, "metadata");
        const char *rv =
            want_rv
                ? want_rv->valuestring
                : cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cmd, "resourceVersion"));
        cJSON_AddStringToObject(md, "resourceVersion", rv ? rv : "");
    }
    cred_json_wipe_delete(current);
    req.body = patch;
    serve_kube_write(s, h, &req, a);
    cred_json_wipe_delete(patch);
}
