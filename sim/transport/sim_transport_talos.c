/*
 * sim_transport_talos.c — the Talos side of the sim root: the intents of
 * transport v2 (set or read a registry host's auth, set node annotations)
 * applied to the node's machine config, containerd's images (pulled with
 * the auth it loaded at boot), reboots and etcd status per node.
 */
#include "sim/transport/sim_transport_int.h"

#include <stdlib.h>
#include <string.h>

static cJSON *talos_error(const char *msg)
{
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "error", msg);
    return b;
}

static bool talos_is_control_plane(sim_world *w, const char *node)
{
    sqlite3_stmt *st = simw_stmt(w, "SELECT role FROM talos WHERE node = ?1");
    sqlite3_bind_text(st, 1, node, -1, SQLITE_STATIC);
    bool cp = simw_step_row(w, st) &&
              strcmp((const char *)sqlite3_column_text(st, 0), "control-plane") == 0;
    sqlite3_reset(st);
    return cp;
}

/* The host a registry-auth intent names (the request's, else the body's). */
static const char *talos_intent_host(const rs_req *req, const cJSON *intent)
{
    const char *h = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(intent, "host"));
    return h ? h : req->host;
}

/* The intent's auth: username/password, or the base64 "user:pass" form. */
static cJSON *talos_intent_auth(const cJSON *intent, const char *host)
{
    const cJSON *auth = cJSON_GetObjectItemCaseSensitive(intent, "auth");
    if (!cJSON_IsObject(auth)) return NULL;
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(auth, "username");
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(auth, "password");
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(auth, "auth");
    char *user = NULL, *pass = NULL;
    if (cJSON_IsString(u) && cJSON_IsString(p)) {
        user = rs_xstrdup(u->valuestring);
        pass = rs_xstrdup(p->valuestring);
    } else if (cJSON_IsString(a)) {
        cJSON *cfg = cJSON_CreateObject();
        cJSON_AddStringToObject(
            cJSON_AddObjectToObject(cJSON_AddObjectToObject(cfg, "auths"), host), "auth",
            a->valuestring);
        char *cfg_text = cJSON_PrintUnformatted(cfg);
        simw_dockerconfig_auth(cfg_text, &user, &pass);
        free(cfg_text);
        cJSON_Delete(cfg);
    }
    if (!user) return NULL;
    return simw_auth_take(user, pass);
}

/* A talos.patch intent (transport v2): {"registry-auth": {host, auth}} or
 * {"node-annotations": {...}} — exactly one; {} changes nothing and, like
 * an empty machine-config patch, is accepted. The simulated node keeps the
 * auth of one registry, the world's. */
static int talos_patch(sim_world *w, const rs_req *req, const char *node, rs_resp *resp)
{
    const cJSON *body = req->body;
    const cJSON *ra = cJSON_GetObjectItemCaseSensitive(body, "registry-auth");
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(body, "node-annotations");
    if (cJSON_IsObject(body) && cJSON_GetArraySize(body) == 0) {
        resp->body = cJSON_CreateObject();
        return 200;
    }
    if (!cJSON_IsObject(body) || cJSON_GetArraySize(body) != 1 ||
        (!cJSON_IsObject(ra) && !cJSON_IsObject(ann))) {
        resp->body = talos_error("talos.patch takes one intent: registry-auth or node-annotations");
        return 400;
    }
    if (cJSON_IsObject(ann)) {
        simw_node_annotations_apply(w, node, ann);
        resp->body = cJSON_CreateObject();
        return 200;
    }
    const char *host = talos_intent_host(req, ra);
    if (!host || strcmp(host, w->cfg.registry_host) != 0) {
        resp->body = talos_error("the simulated node holds auth for its one registry only");
        return 400;
    }
    cJSON *auth = talos_intent_auth(ra, host);
    if (!auth) {
        resp->body = talos_error("registry-auth needs auth {username, password} or {auth}");
        return 400;
    }
    simw_talos_set_json(w, node, "registry_auth", auth);
    cJSON_Delete(auth);
    resp->body = cJSON_CreateObject();
    return 200;
}

static const char *body_image(const cJSON *body)
{
    const cJSON *img = cJSON_GetObjectItemCaseSensitive(body, "image");
    return cJSON_IsString(img) ? img->valuestring : NULL;
}

static void talos_images_edit(sim_world *w, const char *node, const char *image, bool add)
{
    cJSON *images = simw_talos_json(w, node, "images");
    if (!cJSON_IsArray(images)) {
        cJSON_Delete(images);
        images = cJSON_CreateArray();
    }
    for (int i = cJSON_GetArraySize(images) - 1; i >= 0; i--) {
        const cJSON *it = cJSON_GetArrayItem(images, i);
        if (cJSON_IsString(it) && strcmp(it->valuestring, image) == 0)
            cJSON_DeleteItemFromArray(images, i);
    }
    if (add) cJSON_AddItemToArray(images, cJSON_CreateString(image));
    simw_talos_set_json(w, node, "images", images);
    cJSON_Delete(images);
}

/* containerd pulls with the auth it loaded at boot, not the machine config's. */
static int talos_image_pull(sim_world *w, const char *node, const char *image, rs_resp *resp)
{
    ctl_advance_to(w, simw_now(w) + SIM_IMAGE_PULL_MS);
    const char *host = w->cfg.registry_host;
    size_t hl = strlen(host);
    if (strncmp(image, host, hl) != 0 || image[hl] != '/') {
        resp->body = talos_error("image is not on the simulated registry");
        return 404;
    }
    cJSON *auth = simw_talos_json(w, node, "loaded_auth");
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(auth, "username");
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(auth, "password");
    char *grant = simw_registry_grant(w, cJSON_IsString(u) ? u->valuestring : NULL,
                                      cJSON_IsString(p) ? p->valuestring : NULL, image + hl + 1);
    cJSON_Delete(auth);
    if (!grant) {
        resp->body = talos_error("pull failed: 401 Unauthorized");
        return 401;
    }
    free(grant);
    talos_images_edit(w, node, image, true);
    resp->body = cJSON_CreateObject();
    return 200;
}

/* The intent "read the registry auth for host H" ({"host": H}). */
static int talos_read_auth(sim_world *w, const rs_req *req, const char *node, rs_resp *resp)
{
    const char *host = talos_intent_host(req, req->body);
    if (!host) {
        resp->body = talos_error("read-auth needs the registry host");
        return 400;
    }
    cJSON *auth =
        strcmp(host, w->cfg.registry_host) == 0 ? simw_talos_json(w, node, "registry_auth") : NULL;
    if (!auth) {
        resp->body = talos_error("no registry auth configured for the registry");
        return 404;
    }
    resp->body = cJSON_CreateObject();
    cJSON_AddItemToObject(resp->body, "auth", auth);
    return 200;
}

static int talos_etcd(sim_world *w, const rs_req *req, const char *node, rs_resp *resp)
{
    if (!talos_is_control_plane(w, node)) {
        resp->body = talos_error("etcd is not running on a worker");
        return 404;
    }
    resp->body = cJSON_CreateObject();
    if (req->op == RS_OP_TALOS_ETCD_ALARMS) {
        cJSON_AddArrayToObject(resp->body, "alarms");
        return 200;
    }
    char *key = rs_xasprintf("etcd.garbled.%s", node);
    char *garbled = simw_meta_get(w, key);
    free(key);
    if (garbled) {
        /* An answer that parses as no status at all (etcd.garbled; H118). */
        free(garbled);
        cJSON_AddStringToObject(resp->body, "output", "MEMBER  DB SIZE  ???");
        return 200;
    }
    bool healthy = simw_talos_int(w, node, "etcd_healthy") && !simw_talos_int(w, node, "rebooting");
    key = rs_xasprintf("etcd.learner.%s", node);
    char *learner = simw_meta_get(w, key);
    free(key);
    cJSON_AddBoolToObject(resp->body, "healthy", healthy);
    cJSON_AddBoolToObject(resp->body, "learner", learner != NULL); /* etcd.learner (H85) */
    free(learner);
    return 200;
}

int simt_talos(sim_world *w, const char *run_name, const rs_req *req, rs_resp *resp,
               simt_effect *fx)
{
    const char *node = req->target ? req->target : "";
    if (!simw_talos_exists(w, node)) {
        resp->body = talos_error("unknown node");
        return 404;
    }
    const char *image = body_image(req->body);
    int status = 200;
    switch (req->op) {
    case RS_OP_TALOS_PATCH:
        status = talos_patch(w, req, node, resp);
        break;
    case RS_OP_TALOS_REBOOT:
        inv_at_reboot(w, run_name, node);
        ctl_talos_reboot(w, node);
        cnt_add(w, "node_reboots", 1);
        resp->body = cJSON_CreateObject();
        break;
    case RS_OP_TALOS_IMAGE_REMOVE:
    case RS_OP_TALOS_IMAGE_PULL:
        inv_at_image_work(w, run_name, node);
        if (!image) {
            resp->body = talos_error("the request needs an image");
            return 400;
        }
        if (req->op == RS_OP_TALOS_IMAGE_PULL) {
            status = talos_image_pull(w, node, image, resp);
        } else {
            talos_images_edit(w, node, image, false);
            resp->body = cJSON_CreateObject();
        }
        break;
    case RS_OP_TALOS_READ_AUTH:
        return talos_read_auth(w, req, node, resp);
    default:
        return talos_etcd(w, req, node, resp);
    }
    fx->applied = status == 200;
    if (fx->applied) cnt_add(w, "talos_mutations", 1);
    return status;
}
