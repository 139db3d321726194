/*
 * transport_sim.c — the sim root of `struct rs_transport`: every core call
 * answered from the world file, with the latency model, fault injection,
 * mid-run `during:` events, the call log and the §4 counters.
 *
 * The one idea: one call is one transaction. It advances the clock by
 * SIM_CALL_MS (firing due controllers), applies any `during:` event, decides
 * the fault, performs the operation, logs and counts it, and commits — so a
 * `crash` fault can _exit(137) with the world exactly as the cluster would be.
 * Faults are data matched against the §5 operation name (client-go's reactor
 * model), never branches in the core.
 */
#include "sim/world/world_internal.h"

#include "sim/store/store.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SIMT_CRASH_EXIT 137
#define SIMT_PID_MIN 1000
#define SIMT_PID_MAX 32768

typedef struct simt_ctx {
    rs_transport t;
    sim_world *w;
    char *run_name;
    const sc_run *run;
    int *fault_seen;
    bool *fault_fired;
    int *during_seen;
    bool *during_fired;
    char **during_error;
    long long fence_rev; /* store revision at the last fence evaluation */
    int pid;             /* this run's simulated process id */
    long long held_rev;  /* store revision lease_held/fences_held were read at */
    bool lease_held;     /* this run holds the Lease (invariant 1) */
    bool fences_held;    /* this run holds both policy fences (invariants 1, 3) */
} simt_ctx;

/* What a performed call did to the world, for counting. */
typedef struct simt_effect {
    bool applied;
    char *drain_node; /* eviction reached the world for this node */
} simt_effect;

static simt_ctx *ctx_of(rs_transport *t)
{
    return (simt_ctx *)t->ctx;
}

static bool is_kube_write(rs_op op)
{
    return op == RS_OP_KUBE_CREATE || op == RS_OP_KUBE_PATCH || op == RS_OP_KUBE_DELETE;
}

static bool str_eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static bool is_object(const rs_req *req, const char *kind, const char *ns, const char *name)
{
    return str_eq(req->kind, kind) && str_eq(req->ns, ns) && str_eq(req->name, name);
}

/* ---- §4 counting of kube writes ---- */

static bool ks_suspend(const cJSON *obj)
{
    return cJSON_IsTrue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "spec"), "suspend"));
}

static const char *dep_restarted_at(const sim_world *w, const cJSON *dep)
{
    const char *path[] = {"spec", "template", "metadata", "annotations", w->cfg.ann.restarted_at};
    return simw_json_str(dep, path, 5);
}

static bool is_policy_object(sim_world *w, const rs_req *req)
{
    const rs_config *c = &w->cfg;
    return is_object(req, "Kustomization", c->parent_ns, c->parent_name) ||
           is_object(req, "Kustomization", c->child_ns, c->child_name);
}

static bool is_controller(sim_world *w, const rs_req *req)
{
    return is_object(req, "Deployment", w->cfg.controller_ns, w->cfg.controller_name);
}

/* lease_writes, controller_restarts, policy_pauses for one applied kube write;
 * before/after are the object around the write (NULL when absent). */
static void simt_count_kube(sim_world *w, const rs_req *req, const cJSON *before,
                            const cJSON *after)
{
    const rs_config *c = &w->cfg;
    if (is_object(req, "Lease", c->lease_ns, c->lease_name)) cnt_add(w, "lease_writes", 1);
    if (is_policy_object(w, req) && after && ks_suspend(after) && !ks_suspend(before))
        cnt_add(w, "policy_pauses", 1);
    if (req->op == RS_OP_KUBE_PATCH && is_controller(w, req)) {
        const char *b = dep_restarted_at(w, before), *a = dep_restarted_at(w, after);
        if (a && !str_eq(a, b)) {
            cnt_add(w, "controller_restarts", 1);
            simw_meta_set(w, "run.restarted_at", a);
        }
    }
}

/* ---- kube ---- */

static bool is_node_patch(const rs_req *req)
{
    return req->op == RS_OP_KUBE_PATCH && str_eq(req->kind, "Node");
}

static int simt_kube(sim_world *w, const char *run_name, const rs_req *req, rs_resp *resp,
                     simt_effect *fx)
{
    sqlite3 *db = w->db;
    bool tracked = is_policy_object(w, req) || is_controller(w, req) || is_node_patch(req);
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
        if (is_node_patch(req)) inv_at_node_patch(w, run_name, req->name, before, after);
        ctl_after_write(w, req->kind, req->ns, name);
    }
    cJSON_Delete(before);
    return status;
}

static int simt_evict(sim_world *w, const rs_req *req, rs_resp *resp, simt_effect *fx)
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

static int simt_openbao(sim_world *w, const rs_req *req, rs_resp *resp, simt_effect *fx)
{
    const char *path = req->target ? req->target : "";
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

/* ---- Talos ---- */

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

/* machine.registries.config["ghcr.io"].auth: username/password, or the
 * base64 "user:pass" form. */
static cJSON *talos_patch_auth(const cJSON *body)
{
    const char *path[] = {"machine", "registries", "config", "ghcr.io"};
    const cJSON *cur = body;
    for (size_t i = 0; i < RS_ARRAY_LEN(path) && cur; i++)
        cur = cJSON_GetObjectItemCaseSensitive(cur, path[i]);
    const cJSON *auth = cJSON_GetObjectItemCaseSensitive(cur, "auth");
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
            cJSON_AddObjectToObject(cJSON_AddObjectToObject(cfg, "auths"), "ghcr.io"), "auth",
            a->valuestring);
        char *cfg_text = cJSON_PrintUnformatted(cfg);
        simw_dockerconfig_auth(cfg_text, &user, &pass);
        free(cfg_text);
        cJSON_Delete(cfg);
    }
    if (!user) return NULL;
    return simw_auth_take(user, pass);
}

static int talos_patch(sim_world *w, const char *node, const cJSON *body, rs_resp *resp)
{
    if (!cJSON_IsObject(body)) {
        resp->body = talos_error("the machine-config patch must be an object");
        return 400;
    }
    cJSON *auth = talos_patch_auth(body);
    if (auth) simw_talos_set_json(w, node, "registry_auth", auth);
    cJSON_Delete(auth);
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(body, "machine"), "nodeAnnotations");
    if (cJSON_IsObject(ann)) simw_node_annotations_apply(w, node, ann);
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

static int talos_read_auth(sim_world *w, const char *node, rs_resp *resp)
{
    cJSON *auth = simw_talos_json(w, node, "registry_auth");
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
    bool healthy = simw_talos_int(w, node, "etcd_healthy") && !simw_talos_int(w, node, "rebooting");
    cJSON_AddBoolToObject(resp->body, "healthy", healthy);
    cJSON_AddBoolToObject(resp->body, "learner", false);
    return 200;
}

static int simt_talos(sim_world *w, const char *run_name, const rs_req *req, rs_resp *resp,
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
        status = talos_patch(w, node, req->body, resp);
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
        return talos_read_auth(w, node, resp);
    default:
        return talos_etcd(w, req, node, resp);
    }
    fx->applied = status == 200;
    if (fx->applied) cnt_add(w, "talos_mutations", 1);
    return status;
}

/* ---- registry and liveness ---- */

static cJSON *registry_error(const char *code)
{
    cJSON *b = cJSON_CreateObject();
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "code", code);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(b, "errors"), e);
    return b;
}

static int simt_registry(sim_world *w, const rs_req *req, rs_resp *resp)
{
    const char *target = req->target ? req->target : "";
    if (req->op == RS_OP_REGISTRY_TOKEN) {
        const cJSON *u = cJSON_GetObjectItemCaseSensitive(req->body, "username");
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(req->body, "password");
        char *grant = simw_registry_grant(w, cJSON_IsString(u) ? u->valuestring : NULL,
                                          cJSON_IsString(p) ? p->valuestring : NULL, target);
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
    int status = !owner ? 401 : (grant ? 200 : 404);
    resp->body = status == 200
                     ? cJSON_CreateObject()
                     : registry_error(status == 401 ? "UNAUTHORIZED" : "MANIFEST_UNKNOWN");
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

static int simt_liveness(sim_world *w, const rs_req *req, rs_resp *resp)
{
    char *key = rs_xasprintf("terminal.%s", req->target ? req->target : "");
    char *v = simw_meta_get(w, key);
    free(key);
    resp->body = cJSON_CreateObject();
    cJSON_AddBoolToObject(resp->body, "terminal", v != NULL);
    free(v);
    return 200;
}

static int simt_perform(simt_ctx *c, const rs_req *req, rs_resp *resp, simt_effect *fx)
{
    sim_world *w = c->w;
    switch (req->op) {
    case RS_OP_KUBE_GET:
    case RS_OP_KUBE_LIST:
    case RS_OP_KUBE_CREATE:
    case RS_OP_KUBE_PATCH:
    case RS_OP_KUBE_DELETE:
        return simt_kube(w, c->run_name, req, resp, fx);
    case RS_OP_KUBE_EVICT:
        return simt_evict(w, req, resp, fx);
    case RS_OP_OPENBAO_READ:
    case RS_OP_OPENBAO_WRITE:
        return simt_openbao(w, req, resp, fx);
    case RS_OP_REGISTRY_TOKEN:
    case RS_OP_REGISTRY_MANIFEST:
        return simt_registry(w, req, resp);
    case RS_OP_RUN_LIVENESS:
        return simt_liveness(w, req, resp);
    case RS_OP_COUNT:
        return 400;
    default:
        return simt_talos(w, c->run_name, req, resp, fx);
    }
}

/* ---- faults and during ---- */

static bool simt_hit(const char *glob, const char *opname, int *seen, int nth, bool and_after)
{
    if (!glob || fnmatch(glob, opname, 0) != 0) return false;
    (*seen)++;
    return *seen == nth || (and_after && *seen > nth);
}

static void simt_during(simt_ctx *c, const char *opname)
{
    const sc_run *run = c->run;
    for (size_t i = 0; run && i < run->n_during; i++) {
        const sc_during *d = &run->during[i];
        if (!simt_hit(d->before_call, opname, &c->during_seen[i], d->nth, d->and_after)) continue;
        c->during_fired[i] = true;
        rs_err e = {0};
        if (simw_apply_event(c->w, &d->action, &e) != RS_OK && !c->during_error[i])
            c->during_error[i] = rs_xstrdup(e.msg);
    }
}

static const sc_fault *simt_fault(simt_ctx *c, const char *opname)
{
    const sc_run *run = c->run;
    const sc_fault *hit = NULL;
    for (size_t i = 0; run && i < run->n_faults; i++) {
        const sc_fault *f = &run->faults[i];
        if (!simt_hit(f->on, opname, &c->fault_seen[i], f->nth, f->and_after)) continue;
        c->fault_fired[i] = true;
        if (!hit) hit = f;
    }
    return hit;
}

static const char *status_reason(int code)
{
    switch (code) {
    case 400:
        return "BadRequest";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "NotFound";
    case 409:
        return "Conflict";
    case 422:
        return "Invalid";
    case 429:
        return "TooManyRequests";
    case 503:
        return "ServiceUnavailable";
    case 504:
        return "Timeout";
    default:
        return "InternalError";
    }
}

/* ---- bookkeeping ---- */

static void simt_log(simt_ctx *c, const rs_req *req, int status, bool applied)
{
    char *target = rs_req_target(req);
    sqlite3_stmt *st =
        simw_stmt(c->w, "INSERT INTO call_log(run, op, target, status, applied, vt_ms,"
                        " lease_held, fences_held) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    sqlite3_bind_text(st, 1, c->run_name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, rs_op_name(req->op), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, target, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, status);
    sqlite3_bind_int(st, 5, applied);
    sqlite3_bind_int64(st, 6, simw_now(c->w));
    sqlite3_bind_int(st, 7, c->lease_held);
    sqlite3_bind_int(st, 8, c->fences_held);
    simw_step_done(c->w, st);
    free(target);
}

static void simt_count_write(simt_ctx *c, const rs_req *req)
{
    cnt_add(c->w, "writes", 1);
    const char *op = rs_op_name(req->op);
    if (strncmp(op, "kube.", 5) == 0) {
        cnt_kind_add(c->w, req->op == RS_OP_KUBE_EVICT ? "Pod" : (req->kind ? req->kind : ""), 1);
    } else if (strncmp(op, "openbao.", 8) == 0) {
        cnt_kind_add(c->w, "openbao", 1);
    } else {
        cnt_kind_add(c->w, op, 1);
    }
}

static void simt_count_drain(simt_ctx *c, const char *node)
{
    sqlite3_stmt *st = simw_stmt(c->w, "INSERT OR IGNORE INTO drains(run, node) VALUES(?1, ?2)");
    sqlite3_bind_text(st, 1, c->run_name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, node, -1, SQLITE_STATIC);
    simw_step_done(c->w, st);
    if (sqlite3_changes(c->w->db) > 0) cnt_add(c->w, "node_drains", 1);
}

/* fence_acquisitions counts false->true transitions of the full fence; it is
 * re-evaluated only when the store moved (every ingredient is an object). */
static void simt_fence_check(simt_ctx *c)
{
    long long rev = store_revision(c->w->db);
    if (rev == c->fence_rev) return;
    c->fence_rev = rev;
    char *ra = simw_meta_get(c->w, "run.restarted_at");
    bool held = cnt_fence_held(c->w, ra);
    free(ra);
    bool was = simw_meta_int(c->w, "run.fence_held", 0) != 0;
    if (held && !was) cnt_add(c->w, "fence_acquisitions", 1);
    if (held != was) simw_meta_set_int(c->w, "run.fence_held", held);
}

/* Whether this run holds the Lease and both policy fences as the call is
 * about to be performed (after any `during:` event), so the call log says
 * what protected each write when it happened — the post-run state cannot.
 * Re-read only when the store moved. */
static void simt_held_refresh(simt_ctx *c)
{
    long long rev = store_revision(c->w->db);
    if (rev == c->held_rev) return;
    c->held_rev = rev;
    inv_fence_flags(c->w, c->run_name, &c->lease_held, &c->fences_held);
}

/* ---- entry points ---- */

static int simt_call(rs_transport *t, const rs_req *req, rs_resp *resp)
{
    simt_ctx *c = ctx_of(t);
    sim_world *w = c->w;
    rs_resp_init(resp);
    simw_begin(w);
    ctl_advance_to(w, simw_now(w) + SIM_CALL_MS);
    char *opname = rs_req_opname(req);
    simt_during(c, opname);
    const sc_fault *f = simt_fault(c, opname);
    free(opname);
    simt_held_refresh(c);
    cnt_add(w, "api_calls", 1);
    const char *service = cnt_service_of(req->op);
    if (service) cnt_add(w, service, 1);
    simt_effect fx = {0};
    int status = 0;
    if (f && f->effect == SC_FAULT_CRASH) {
        simt_log(c, req, 0, false);
        simw_commit(w);
        _exit(SIMT_CRASH_EXIT);
    } else if (f && f->effect == SC_FAULT_FAIL) {
        status = f->fail_status;
        resp->body = store_status(status, status_reason(status), "injected fault: HTTP %d", status);
    } else if (f && f->effect == SC_FAULT_TIMEOUT) {
        ctl_advance_to(w, simw_now(w) + SIM_TIMEOUT_MS);
        snprintf(resp->error, sizeof resp->error, "timeout");
    } else {
        status = simt_perform(c, req, resp, &fx);
        if (f && f->effect == SC_FAULT_LOST_RESPONSE) {
            ctl_advance_to(w, simw_now(w) + SIM_TIMEOUT_MS);
            cJSON_Delete(resp->body);
            resp->body = NULL;
            status = 0;
            snprintf(resp->error, sizeof resp->error, "lost response");
        }
    }
    resp->status = status;
    if (fx.applied && rs_op_is_write(req->op)) simt_count_write(c, req);
    if (fx.drain_node) simt_count_drain(c, fx.drain_node);
    free(fx.drain_node);
    simt_log(c, req, status, fx.applied);
    simt_fence_check(c);
    simw_commit(w);
    return status;
}

static int64_t simt_now_ms(rs_transport *t)
{
    return simw_now(ctx_of(t)->w);
}

static void simt_sleep_ms(rs_transport *t, int64_t ms)
{
    simt_ctx *c = ctx_of(t);
    simw_begin(c->w);
    ctl_advance_to(c->w, simw_now(c->w) + (ms > 0 ? ms : 0));
    simt_fence_check(c);
    simw_commit(c->w);
}

static uint64_t simt_entropy(rs_transport *t)
{
    sim_world *w = ctx_of(t)->w;
    simw_begin(w);
    char *s = simw_meta_get(w, "rng");
    uint64_t state = s ? strtoull(s, NULL, 10) : 0;
    free(s);
    uint64_t v = simw_splitmix64(&state);
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)state);
    simw_meta_set(w, "rng", buf);
    simw_commit(w);
    return v;
}

static int simt_pid(rs_transport *t)
{
    return ctx_of(t)->pid;
}

/* One process id per run, derived from the seed and the run name: holder
 * identities are reproducible, and two runs of one scenario differ. */
static int simt_derive_pid(sim_world *w, const char *run_name)
{
    char *seed = simw_meta_get(w, "seed");
    char *text = rs_xasprintf("sim-pid\n%s\n%s", seed ? seed : "", run_name);
    char hex[65];
    sha256_hex(text, strlen(text), hex);
    free(text);
    free(seed);
    return SIMT_PID_MIN + (int)(strtoul(hex + 56, NULL, 16) % (SIMT_PID_MAX - SIMT_PID_MIN));
}

static void simt_close(rs_transport *t)
{
    if (!t) return;
    simt_ctx *c = ctx_of(t);
    size_t nd = c->run ? c->run->n_during : 0;
    for (size_t i = 0; i < nd; i++)
        free(c->during_error[i]);
    free(c->during_error);
    free(c->during_seen);
    free(c->during_fired);
    free(c->fault_seen);
    free(c->fault_fired);
    free(c->run_name);
    free(c);
}

rs_transport *sim_transport_open(sim_world *w, const char *run_name, const sc_run *run)
{
    simt_ctx *c = rs_xcalloc(1, sizeof *c);
    c->w = w;
    c->run_name = rs_xstrdup(run_name ? run_name : "");
    c->run = run;
    size_t nf = run ? run->n_faults : 0, nd = run ? run->n_during : 0;
    c->fault_seen = rs_xcalloc(nf + 1, sizeof *c->fault_seen);
    c->fault_fired = rs_xcalloc(nf + 1, sizeof *c->fault_fired);
    c->during_seen = rs_xcalloc(nd + 1, sizeof *c->during_seen);
    c->during_fired = rs_xcalloc(nd + 1, sizeof *c->during_fired);
    c->during_error = rs_xcalloc(nd + 1, sizeof *c->during_error);
    c->fence_rev = -1;
    c->held_rev = -1;
    c->pid = simt_derive_pid(w, c->run_name);
    simw_begin(w);
    simw_meta_set(w, "run", c->run_name);
    simw_meta_set(w, "run.restarted_at", "");
    simw_meta_set_int(w, "run.fence_held", 0);
    inv_run_begin(w, c->run_name);
    simw_commit(w);
    c->t = (rs_transport){.version = RS_TRANSPORT_VERSION,
                          .name = "sim",
                          .ctx = c,
                          .call = simt_call,
                          .now_ms = simt_now_ms,
                          .sleep_ms = simt_sleep_ms,
                          .entropy = simt_entropy,
                          .pid = simt_pid,
                          .close = simt_close};
    return &c->t;
}

char **sim_transport_unfired(rs_transport *t, size_t *n)
{
    simt_ctx *c = ctx_of(t);
    const sc_run *run = c->run;
    size_t nf = run ? run->n_faults : 0, nd = run ? run->n_during : 0;
    char **v = rs_xcalloc(nf + 2 * nd + 1, sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < nf; i++)
        if (!c->fault_fired[i])
            v[k++] =
                rs_xasprintf("fault %s nth %d never fired", run->faults[i].on, run->faults[i].nth);
    for (size_t i = 0; i < nd; i++) {
        if (!c->during_fired[i])
            v[k++] = rs_xasprintf("during before-call %s nth %d never fired",
                                  run->during[i].before_call, run->during[i].nth);
        if (c->during_error[i])
            v[k++] =
                rs_xasprintf("during before-call %s nth %d could not apply its event: %s",
                             run->during[i].before_call, run->during[i].nth, c->during_error[i]);
    }
    *n = k;
    return v;
}
