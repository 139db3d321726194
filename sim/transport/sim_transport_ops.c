/*
 * sim_transport_ops.c — the sim root's answers for Kubernetes (the store,
 * with the §4 counting of what a write changed), evictions, OpenBao KV v2,
 * the registry (token, then manifest) and the run-liveness oracle.
 */
#include "sim/transport/sim_transport_int.h"

#include "sim/store/store.h"

#include <stdlib.h>
#include <string.h>

static bool is_kube_write(rs_op op)
{
    return op == RS_OP_KUBE_CREATE || op == RS_OP_KUBE_PATCH || op == RS_OP_KUBE_DELETE;
}

static bool is_node_patch(const rs_req *req)
{
    return req->op == RS_OP_KUBE_PATCH && simt_str_eq(req->kind, "Node");
}

int simt_kube(sim_world *w, const char *run_name, const rs_req *req, rs_resp *resp, simt_effect *fx)
{
    store *db = w->st;
    bool tracked =
        simt_is_policy_object(w, req) || simt_is_controller(w, req) || is_node_patch(req);
    cJSON *before = tracked && req->name ? simw_get(w, req->kind, req->ns, req->name) : NULL;
    int status = 0;
    switch (req->op) {
    case RS_OP_KUBE_GET:
        status = store_get(db, req->kind, req->ns, req->name, &resp->body);
        break;
    case RS_OP_KUBE_LIST:
        status = store_list(db, req->kind, req->ns, req->label_selector, req->field_selector,
                            &resp->body);
        break;
    case RS_OP_KUBE_CREATE:
        status = store_create(db, req->kind, req->ns, req->body, &resp->body);
        break;
    case RS_OP_KUBE_PATCH:
        status =
            store_patch(db, req->kind, req->ns, req->name, req->patch_type, req->body, &resp->body);
        break;
    case RS_OP_KUBE_DELETE:
        status = store_delete(db, req->kind, req->ns, req->name, &resp->body);
        break;
    default:
        break;
    }
    if (is_kube_write(req->op) && status >= 200 && status < 300) {
        fx->applied = true;
        const char *npath[] = {"metadata", "name"};
        const char *name = req->name ? req->name : simw_json_str(req->body, npath, 2);
        cJSON *after = req->op == RS_OP_KUBE_DELETE ? NULL : resp->body;
        simt_count_kube(w, req, before, after);
        inv_at_kube_write(w, run_name, req->kind, before, after);
        if (is_node_patch(req)) inv_at_node_patch(w, run_name, req->name, before, after);
        ctl_after_write(w, req->kind, req->ns, name);
    }
    cJSON_Delete(before);
    return status;
}

int simt_evict(sim_world *w, const rs_req *req, rs_resp *resp, simt_effect *fx)
{
    char *node = NULL;
    int status = ctl_evict(w, req->ns, req->name, &node, &resp->body);
    fx->applied = status == 201;
    /* A drain has begun at the node's first eviction call that reached it,
     * PDB-blocked or not. */
    if (status == 201 || status == 429)
        fx->drain_node = node;
    else
        free(node);
    return status;
}

/* ---- OpenBao ---- */

int simt_openbao(sim_world *w, const rs_req *req, rs_resp *resp, simt_effect *fx)
{
    const char *path = req->target ? req->target : "";
    /* Transport v2: the mount travels; a wrong one is a wrong OpenBao path. */
    if (!req->mount || strcmp(req->mount, w->cfg.openbao_mount) != 0) {
        resp->body = cJSON_Parse("{\"errors\":[\"no handler for route: unknown mount\"]}");
        return 404;
    }
    if (req->op == RS_OP_OPENBAO_WRITE) {
        if (!cJSON_IsObject(req->body)) {
            resp->body = cJSON_Parse("{\"errors\":[\"the request body must be a data map\"]}");
            return 400;
        }
        int version = simw_bao_write(w, path, req->body);
        fx->applied = true;
        resp->body = cJSON_CreateObject();
        cJSON_AddNumberToObject(cJSON_AddObjectToObject(resp->body, "data"), "version", version);
        return 200;
    }
    int version = 0;
    cJSON *data = simw_bao_current(w, path, &version);
    if (!data) {
        resp->body = cJSON_Parse("{\"errors\":[]}");
        return 404;
    }
    resp->body = cJSON_CreateObject();
    cJSON *outer = cJSON_AddObjectToObject(resp->body, "data");
    cJSON_AddItemToObject(outer, "data", data);
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(outer, "metadata"), "version", version);
    return 200;
}

static cJSON *registry_error(const char *code)
{
    cJSON *b = cJSON_CreateObject();
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "code", code);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(b, "errors"), e);
    return b;
}

int simt_registry(sim_world *w, const rs_req *req, rs_resp *resp)
{
    const char *target = req->target ? req->target : "";
    if (!req->host || strcmp(req->host, w->cfg.registry_host) != 0) {
        resp->body = registry_error("NAME_UNKNOWN");
        return 404; /* another registry: the sim serves one */
    }
    if (req->op == RS_OP_REGISTRY_TOKEN) {
        const cJSON *u = cJSON_GetObjectItemCaseSensitive(req->body, "username");
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(req->body, "password");
        const char *user = cJSON_IsString(u) ? u->valuestring : NULL;
        const char *pass = cJSON_IsString(p) ? p->valuestring : NULL;
        char *grant = simw_registry_grant(w, user, pass, target);
        /* GHCR grants per package at the manifest read, not at the token:
         * a catalogue entry with a manifest denial gets a token for any
         * package (H136). */
        if (!grant) grant = simw_registry_any_package(w, user, pass);
        if (!grant) {
            resp->body = registry_error("UNAUTHORIZED");
            return 401;
        }
        char tok[72];
        simw_registry_token(grant, target, tok);
        free(grant);
        resp->body = cJSON_CreateObject();
        cJSON_AddStringToObject(resp->body, "token", tok);
        return 200;
    }
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(req->body, "token");
    char repo[SIMW_NAME_MAX];
    const char *colon = strrchr(target, ':');
    size_t rl = colon ? (size_t)(colon - target) : strlen(target);
    if (rl >= sizeof repo) rl = sizeof repo - 1;
    memcpy(repo, target, rl);
    repo[rl] = '\0';
    char *owner = cJSON_IsString(t) ? simw_registry_token_owner(w, t->valuestring, repo) : NULL;
    char *user = NULL, *pass = NULL;
    char *grant = NULL;
    if (owner && simw_cred_userpass(w, owner, &user, &pass))
        grant = simw_registry_grant(w, user, pass, target);
    int denial = owner && !grant ? simw_registry_manifest_denial(w, owner) : 0;
    int status = !owner ? 401 : grant ? 200 : denial ? denial : 404;
    resp->body = status == 200   ? cJSON_CreateObject()
                 : status == 401 ? registry_error("UNAUTHORIZED")
                 : status == 403 ? registry_error("DENIED")
                                 : registry_error("MANIFEST_UNKNOWN");
    if (status == 200) {
        char hex[65];
        sha256_hex(target, strlen(target), hex);
        char *digest = rs_xasprintf("sha256:%s", hex);
        cJSON_AddStringToObject(resp->body, "digest", digest);
        free(digest);
    }
    free(owner);
    free(user);
    free(pass);
    free(grant);
    return status;
}

int simt_liveness(sim_world *w, const rs_req *req, rs_resp *resp)
{
    const char *run = req->target ? req->target : "";
    char *key = rs_xasprintf("silent.%s", run);
    char *silent = simw_meta_get(w, key);
    free(key);
    resp->body = cJSON_CreateObject();
    if (silent) {
        /* Answered, with no status (runs.silent; H20). */
        free(silent);
        return 200;
    }
    key = rs_xasprintf("terminal.%s", run);
    char *v = simw_meta_get(w, key);
    free(key);
    cJSON_AddBoolToObject(resp->body, "terminal", v != NULL);
    free(v);
    return 200;
}
