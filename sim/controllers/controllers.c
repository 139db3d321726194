/*
 * controllers.c — the simulated controllers and the virtual clock they run on:
 * ESO (PushSecret, ExternalSecret), Flux Kustomizations, the
 * kustomize-controller rollout, Talos reboots and pod evictions.
 *
 * The one idea: a controller is a set of timers in the world file. A write
 * (by the core or a world event) is looked at for the triggers a controller
 * watches and schedules a timer; moving the clock fires every due timer in
 * (due_ms, id) order. Nothing happens on wall-clock time and nothing lives in
 * memory, so one seed gives one history and a killed run leaves the pending
 * reactions behind in the file, as a real cluster would.
 */
#include "sim/world/world_internal.h"

#include "sim/store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CTL_TIMERS_PER_ADVANCE_MAX 1000000 /* a runaway controller loop is a sim bug */
#define CTL_FLUX_INTERVAL_MS (10LL * 60 * 1000)
#define CTL_FLUX_RESUME_MS 1000 /* Flux reconciles "immediately-ish" after a resume */
#define CTL_ROLLOUT_REPLICAS 2
#define CTL_POD_LIST_MAX 4096

static void ctl_fire(sim_world *w, const char *kind, const char *payload);

/* ---- timers and the clock ---- */

void ctl_schedule(sim_world *w, int64_t due_ms, const char *kind, const char *payload)
{
    sqlite3_stmt *st = simw_stmt(w, "INSERT INTO timers(due_ms, kind, payload) VALUES(?1, ?2, ?3)");
    sqlite3_bind_int64(st, 1, due_ms);
    sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, payload, -1, SQLITE_STATIC);
    simw_step_done(w, st);
}

/* Pops the earliest timer due at or before target_ms. */
static bool ctl_pop(sim_world *w, int64_t target_ms, int64_t *due, char **kind, char **payload)
{
    sqlite3_stmt *st = simw_stmt(w, "SELECT id, due_ms, kind, payload FROM timers"
                                    " WHERE due_ms <= ?1 ORDER BY due_ms, id LIMIT 1");
    sqlite3_bind_int64(st, 1, target_ms);
    if (!simw_step_row(w, st)) {
        sqlite3_reset(st);
        return false;
    }
    int64_t id = sqlite3_column_int64(st, 0);
    *due = sqlite3_column_int64(st, 1);
    *kind = simw_col_text(st, 2);
    *payload = simw_col_text(st, 3);
    sqlite3_reset(st);
    st = simw_stmt(w, "DELETE FROM timers WHERE id = ?1");
    sqlite3_bind_int64(st, 1, id);
    simw_step_done(w, st);
    return true;
}

void ctl_advance_to(sim_world *w, int64_t target_ms)
{
    int64_t now = simw_now(w);
    for (int i = 0; i < CTL_TIMERS_PER_ADVANCE_MAX; i++) {
        int64_t due = 0;
        char *kind = NULL, *payload = NULL;
        if (!ctl_pop(w, target_ms, &due, &kind, &payload)) {
            if (target_ms > now) simw_set_now(w, target_ms);
            return;
        }
        if (due > now) simw_set_now(w, now = due);
        ctl_fire(w, kind, payload);
        free(kind);
        free(payload);
    }
    simw_die(w, "controller timers (more than a million due in one advance)");
}

/* ---- small object helpers ---- */

static char *ctl_ref(const char *kind, const char *ns, const char *name)
{
    return ns && ns[0] ? rs_xasprintf("%s/%s/%s", kind, ns, name)
                       : rs_xasprintf("%s/%s", kind, name);
}

static const char *obj_str(const cJSON *obj, const char *a, const char *b, const char *c)
{
    const char *path[] = {a, b, c};
    return simw_json_str(obj, path, c ? 3 : (b ? 2 : 1));
}

static const cJSON *first_item(const cJSON *obj, const char *a, const char *b)
{
    const cJSON *cur = cJSON_GetObjectItemCaseSensitive(obj, a);
    cur = cJSON_GetObjectItemCaseSensitive(cur, b);
    return cJSON_GetArrayItem(cur, 0);
}

static void patch_status(sim_world *w, const char *kind, const char *ns, const char *name,
                         cJSON *status)
{
    cJSON *patch = cJSON_CreateObject();
    cJSON_AddItemToObject(patch, "status", status);
    simw_merge(w, kind, ns, name, patch);
}

static cJSON *ready_conditions(const char *status, const char *reason, const char *message,
                               int64_t now)
{
    cJSON *conds = cJSON_CreateArray();
    cJSON_AddItemToArray(conds, simw_condition("Ready", status, reason, message, now));
    return conds;
}

/* ---- ESO: PushSecret and ExternalSecret ---- */

/* PushSecret sync: the source Secret's key becomes a new KV v2 version (only
 * when different). Its status says Ready either way — status never proves
 * the remote value, which is the hazard a raft restore exposes. */
static void eso_push_sync(sim_world *w, const char *ns, const char *name)
{
    cJSON *ps = simw_get(w, "PushSecret", ns, name);
    if (!ps) return;
    int64_t now = simw_now(w);
    const char *sel_path[] = {"spec", "selector", "secret", "name"};
    const char *src_name = simw_json_str(ps, sel_path, 4);
    src_name = src_name ? src_name : w->cfg.variables_name;
    const cJSON *item = first_item(ps, "spec", "data");
    const char *key = obj_str(item, "match", "secretKey", NULL);
    const char *remote = obj_str(item, "match", "remoteRef", "remoteKey");
    const char *prop = obj_str(item, "match", "remoteRef", "property");
    key = key ? key : w->cfg.variables_key;
    remote = remote ? remote : w->cfg.openbao_path;
    prop = prop ? prop : w->cfg.openbao_property;
    cJSON *src = simw_get(w, "Secret", ns, src_name);
    const char *b64 = obj_str(src, "data", key, NULL);
    size_t len = 0;
    unsigned char *value = b64 ? base64_decode(b64, &len) : NULL;
    cJSON *status = cJSON_CreateObject();
    char ts[32];
    simw_rfc3339(now, ts);
    if (!value) {
        char *msg = rs_xasprintf("could not get source secret %s key %s", src_name, key);
        cJSON_AddItemToObject(status, "conditions", ready_conditions("False", "Errored", msg, now));
        free(msg);
    } else {
        cJSON *data = simw_bao_current(w, remote, NULL);
        if (!cJSON_IsObject(data)) {
            cJSON_Delete(data);
            data = cJSON_CreateObject();
        }
        const cJSON *cur = cJSON_GetObjectItemCaseSensitive(data, prop);
        if (!cJSON_IsString(cur) || strcmp(cur->valuestring, (char *)value) != 0) {
            cJSON_DeleteItemFromObjectCaseSensitive(data, prop);
            cJSON_AddStringToObject(data, prop, (char *)value);
            simw_bao_write(w, remote, data);
        }
        cJSON_Delete(data);
        cJSON_AddStringToObject(status, "refreshTime", ts);
        const char *rv = obj_str(src, "metadata", "resourceVersion", NULL);
        cJSON_AddStringToObject(status, "syncedResourceVersion", rv ? rv : "");
        cJSON_AddItemToObject(
            status, "conditions",
            ready_conditions("True", "Synced", "PushSecret synced successfully", now));
    }
    free(value);
    patch_status(w, "PushSecret", ns, name, status);
    cJSON_Delete(src);
    cJSON_Delete(ps);
}

static void eso_consumer_write(sim_world *w, const cJSON *es, const char *ns, const char *target,
                               const char *key, const char *value)
{
    char *b64 = base64_encode(value, strlen(value));
    cJSON *consumer = simw_get(w, "Secret", ns, target);
    if (!consumer) {
        const char *type_path[] = {"spec", "target", "template", "type"};
        const char *type = simw_json_str(es, type_path, 4);
        type = type ? type : "Opaque";
        cJSON *obj = cJSON_CreateObject();
        cJSON_AddStringToObject(obj, "apiVersion", "v1");
        cJSON_AddStringToObject(obj, "kind", "Secret");
        cJSON *meta = cJSON_AddObjectToObject(obj, "metadata");
        cJSON_AddStringToObject(meta, "name", target);
        cJSON_AddStringToObject(meta, "namespace", ns);
        cJSON_AddStringToObject(obj, "type", type);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(obj, "data"), key, b64);
        cJSON *out = NULL;
        store_create(w->db, "Secret", ns, obj, &out);
        cJSON_Delete(out);
        cJSON_Delete(obj);
    } else {
        const char *cur = obj_str(consumer, "data", key, NULL);
        if (!cur || strcmp(cur, b64) != 0) {
            cJSON *patch = cJSON_CreateObject();
            cJSON_AddStringToObject(cJSON_AddObjectToObject(patch, "data"), key, b64);
            simw_merge(w, "Secret", ns, target, patch);
        }
    }
    cJSON_Delete(consumer);
    free(b64);
}

/* ExternalSecret sync: OpenBao's current value into the consumer Secret. */
static void eso_external_sync(sim_world *w, const char *ns, const char *name)
{
    cJSON *es = simw_get(w, "ExternalSecret", ns, name);
    if (!es) return;
    int64_t now = simw_now(w);
    const char *target = obj_str(es, "spec", "target", "name");
    const cJSON *item = first_item(es, "spec", "data");
    const char *key = obj_str(item, "secretKey", NULL, NULL);
    const char *remote = obj_str(item, "remoteRef", "key", NULL);
    const char *prop = obj_str(item, "remoteRef", "property", NULL);
    target = target ? target : name;
    key = key ? key : w->cfg.consumer_key;
    remote = remote ? remote : w->cfg.openbao_path;
    prop = prop ? prop : w->cfg.openbao_property;
    cJSON *data = simw_bao_current(w, remote, NULL);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(data, prop);
    cJSON *status = cJSON_CreateObject();
    if (!cJSON_IsString(v)) {
        cJSON_AddItemToObject(status, "conditions",
                              ready_conditions("False", "SecretSyncedError",
                                               "could not get secret data from provider", now));
    } else {
        eso_consumer_write(w, es, ns, target, key, v->valuestring);
        char ts[32];
        simw_rfc3339(now, ts);
        cJSON_AddStringToObject(status, "refreshTime", ts);
        cJSON_AddItemToObject(status, "conditions",
                              ready_conditions("True", "SecretSynced", "secret synced", now));
    }
    patch_status(w, "ExternalSecret", ns, name, status);
    cJSON_Delete(data);
    cJSON_Delete(es);
}

static void eso_sync(sim_world *w, const char *ref)
{
    char kind[SIMW_NAME_MAX], ns[SIMW_NAME_MAX], name[SIMW_NAME_MAX];
    if (!simw_ref_parse(ref, kind, ns, name)) return;
    if (strcmp(kind, "PushSecret") == 0)
        eso_push_sync(w, ns, name);
    else
        eso_external_sync(w, ns, name);
}

/* A force-sync annotation value ESO has not handled yet schedules one sync. */
static void eso_notice(sim_world *w, const char *kind, const char *ns, const char *name)
{
    cJSON *obj = simw_get(w, kind, ns, name);
    const char *fs = simw_annotation(obj, SIMW_ANN_FORCE_SYNC);
    if (!fs) {
        cJSON_Delete(obj);
        return;
    }
    char *ref = ctl_ref(kind, ns, name);
    sqlite3_stmt *st = simw_stmt(w, "SELECT force_sync FROM eso_state WHERE ref = ?1");
    sqlite3_bind_text(st, 1, ref, -1, SQLITE_STATIC);
    char *handled = simw_step_row(w, st) ? simw_col_text(st, 0) : NULL;
    sqlite3_reset(st);
    if (!handled || strcmp(handled, fs) != 0) {
        st = simw_stmt(w, "INSERT INTO eso_state(ref, force_sync) VALUES(?1, ?2)"
                          " ON CONFLICT(ref) DO UPDATE SET force_sync = excluded.force_sync");
        sqlite3_bind_text(st, 1, ref, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, fs, -1, SQLITE_STATIC);
        simw_step_done(w, st);
        ctl_schedule(w, simw_now(w) + SIM_ESO_REACT_MS, "eso.sync", ref);
    }
    free(handled);
    free(ref);
    cJSON_Delete(obj);
}

/* ---- Flux Kustomizations ---- */

typedef struct flux_row {
    bool found;
    bool suspended;
    bool reconciling;
    char *requested_at;
} flux_row;

static flux_row flux_load(sim_world *w, const char *ref)
{
    flux_row r = {0};
    sqlite3_stmt *st =
        simw_stmt(w, "SELECT suspended, requested_at, reconciling FROM flux_state WHERE ref = ?1");
    sqlite3_bind_text(st, 1, ref, -1, SQLITE_STATIC);
    if (simw_step_row(w, st)) {
        r.found = true;
        r.suspended = sqlite3_column_int(st, 0) != 0;
        r.requested_at = simw_col_text(st, 1);
        r.reconciling = sqlite3_column_int(st, 2) != 0;
    }
    sqlite3_reset(st);
    if (!r.requested_at) r.requested_at = rs_xstrdup("");
    return r;
}

static void flux_save(sim_world *w, const char *ref, const flux_row *r)
{
    sqlite3_stmt *st =
        simw_stmt(w, "INSERT OR REPLACE INTO flux_state(ref, suspended, requested_at, reconciling)"
                     " VALUES(?1, ?2, ?3, ?4)");
    sqlite3_bind_text(st, 1, ref, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, r->suspended);
    sqlite3_bind_text(st, 3, r->requested_at, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, r->reconciling);
    simw_step_done(w, st);
}

static bool ks_suspended(const cJSON *ks)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(ks, "spec");
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "suspend"));
}

static void flux_notice(sim_world *w, const char *ns, const char *name)
{
    cJSON *ks = simw_get(w, "Kustomization", ns, name);
    if (!ks) return;
    char *ref = ctl_ref("Kustomization", ns, name);
    flux_row r = flux_load(w, ref);
    bool suspended = ks_suspended(ks);
    const char *req = simw_annotation(ks, SIMW_ANN_REQUESTED_AT);
    req = req ? req : "";
    bool resumed = r.found && r.suspended && !suspended;
    bool requested = r.found && strcmp(r.requested_at, req) != 0 && !suspended;
    if (resumed || requested) ctl_schedule(w, simw_now(w) + CTL_FLUX_RESUME_MS, "flux.start", ref);
    r.suspended = suspended;
    free(r.requested_at);
    r.requested_at = rs_xstrdup(req);
    flux_save(w, ref, &r);
    free(r.requested_at);
    free(ref);
    cJSON_Delete(ks);
}

/* Starting a reconcile honours suspend; finishing one does not — Flux
 * documents that suspension does not stop an execution already running,
 * which is why the parent fence waits for Reconciling to clear. */
static void flux_start(sim_world *w, const char *ref)
{
    char kind[SIMW_NAME_MAX], ns[SIMW_NAME_MAX], name[SIMW_NAME_MAX];
    if (!simw_ref_parse(ref, kind, ns, name)) return;
    cJSON *ks = simw_get(w, "Kustomization", ns, name);
    flux_row r = flux_load(w, ref);
    if (ks && !ks_suspended(ks) && !r.reconciling) {
        int64_t now = simw_now(w);
        r.reconciling = true;
        flux_save(w, ref, &r);
        const char *ready = simw_condition_status(ks, "Ready");
        cJSON *status = cJSON_CreateObject();
        cJSON *conds = cJSON_AddArrayToObject(status, "conditions");
        cJSON_AddItemToArray(conds,
                             simw_condition("Ready", ready ? ready : "Unknown", "Progressing",
                                            "reconciliation in progress", now));
        cJSON_AddItemToArray(conds, simw_condition("Reconciling", "True", "Progressing",
                                                   "reconciliation in progress", now));
        patch_status(w, "Kustomization", ns, name, status);
        ctl_schedule(w, now + SIM_FLUX_RECONCILE_MS, "flux.finish", ref);
    }
    free(r.requested_at);
    cJSON_Delete(ks);
}

static void flux_finish(sim_world *w, const char *ref)
{
    char kind[SIMW_NAME_MAX], ns[SIMW_NAME_MAX], name[SIMW_NAME_MAX];
    if (!simw_ref_parse(ref, kind, ns, name)) return;
    flux_row r = flux_load(w, ref);
    r.reconciling = false;
    if (r.found) flux_save(w, ref, &r);
    free(r.requested_at);
    cJSON *ks = simw_get(w, "Kustomization", ns, name);
    if (!ks) return;
    int64_t now = simw_now(w);
    cJSON *status = cJSON_CreateObject();
    cJSON *conds = cJSON_AddArrayToObject(status, "conditions");
    cJSON_AddItemToArray(
        conds, simw_condition("Ready", "True", "ReconciliationSucceeded", "Applied revision", now));
    cJSON_AddItemToArray(conds, simw_condition("Reconciling", "False", "ReconciliationSucceeded",
                                               "reconciliation finished", now));
    const char *req = simw_annotation(ks, SIMW_ANN_REQUESTED_AT);
    char ts[32];
    simw_rfc3339(now, ts);
    cJSON_AddStringToObject(status, "lastHandledReconcileAt", req ? req : ts);
    const cJSON *gen = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(ks, "metadata"), "generation");
    if (cJSON_IsNumber(gen))
        cJSON_AddNumberToObject(status, "observedGeneration", gen->valuedouble);
    patch_status(w, "Kustomization", ns, name, status);
    cJSON_Delete(ks);
}

static void flux_tick(sim_world *w, const char *ref)
{
    flux_start(w, ref);
    ctl_schedule(w, simw_now(w) + CTL_FLUX_INTERVAL_MS, "flux.tick", ref);
}

/* ---- kustomize-controller rollout ---- */

static void rollout_hash(int64_t seq, char out[11])
{
    char *seed = rs_xasprintf("kustomize-controller-rollout-%lld", (long long)seq);
    char hex[65];
    sha256_hex(seed, strlen(seed), hex);
    free(seed);
    memcpy(out, hex, 10);
    out[10] = '\0';
}

static void rollout_pods_create(sim_world *w, const char *hash, bool ready)
{
    const rs_config *c = &w->cfg;
    int64_t now = simw_now(w);
    for (int i = 0; i < CTL_ROLLOUT_REPLICAS; i++) {
        char *seed = rs_xasprintf("%s-%d", hash, i);
        char hex[65];
        sha256_hex(seed, strlen(seed), hex);
        free(seed);
        char *name = rs_xasprintf("%s-%s-%.5s", c->controller_name, hash, hex);
        cJSON *pod = cJSON_CreateObject();
        cJSON_AddStringToObject(pod, "apiVersion", "v1");
        cJSON_AddStringToObject(pod, "kind", "Pod");
        cJSON *meta = cJSON_AddObjectToObject(pod, "metadata");
        cJSON_AddStringToObject(meta, "name", name);
        cJSON_AddStringToObject(meta, "namespace", c->controller_ns);
        cJSON *labels = cJSON_AddObjectToObject(meta, "labels");
        cJSON_AddStringToObject(labels, "app", "kustomize-controller");
        cJSON_AddStringToObject(labels, "pod-template-hash", hash);
        cJSON *owner = cJSON_CreateObject();
        char *rs_name = rs_xasprintf("%s-%s", c->controller_name, hash);
        cJSON_AddStringToObject(owner, "apiVersion", "apps/v1");
        cJSON_AddStringToObject(owner, "kind", "ReplicaSet");
        cJSON_AddStringToObject(owner, "name", rs_name);
        cJSON_AddBoolToObject(owner, "controller", true);
        cJSON_AddItemToArray(cJSON_AddArrayToObject(meta, "ownerReferences"), owner);
        free(rs_name);
        cJSON *cont = cJSON_CreateObject();
        cJSON_AddStringToObject(cont, "name", "manager");
        cJSON_AddStringToObject(cont, "image", "ghcr.io/fluxcd/kustomize-controller:v1.5.1");
        cJSON_AddItemToArray(
            cJSON_AddArrayToObject(cJSON_AddObjectToObject(pod, "spec"), "containers"), cont);
        cJSON *status = cJSON_AddObjectToObject(pod, "status");
        cJSON_AddStringToObject(status, "phase", ready ? "Running" : "Pending");
        cJSON_AddItemToObject(
            status, "conditions",
            ready_conditions(ready ? "True" : "False", ready ? "PodReady" : "ContainersNotReady",
                             ready ? "pod is ready" : "containers not ready", now));
        cJSON *out = NULL;
        store_create(w->db, "Pod", c->controller_ns, pod, &out);
        cJSON_Delete(out);
        cJSON_Delete(pod);
        free(name);
    }
}

static cJSON *rollout_pods(sim_world *w)
{
    cJSON *list = NULL;
    store_list(w->db, "Pod", w->cfg.controller_ns, w->cfg.controller_selector, NULL, &list);
    return list;
}

static bool pod_terminating(const cJSON *pod)
{
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pod, "metadata"),
                                            "deletionTimestamp") != NULL;
}

/* Deployment status from its pods: terminating pods no longer count. */
void ctl_rollout_status_refresh(sim_world *w)
{
    const rs_config *c = &w->cfg;
    cJSON *dep = simw_get(w, "Deployment", c->controller_ns, c->controller_name);
    if (!dep) return;
    char *hash = simw_meta_get(w, "rollout.hash");
    cJSON *list = rollout_pods(w);
    int replicas = 0, updated = 0, ready = 0;
    const cJSON *pod;
    cJSON_ArrayForEach(pod, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        if (pod_terminating(pod)) continue;
        replicas++;
        const char *h = simw_label(pod, "pod-template-hash");
        if (h && hash && strcmp(h, hash) == 0) updated++;
        const char *r = simw_condition_status(pod, "Ready");
        if (r && strcmp(r, "True") == 0) ready++;
    }
    bool complete = updated == CTL_ROLLOUT_REPLICAS && replicas == CTL_ROLLOUT_REPLICAS &&
                    ready == CTL_ROLLOUT_REPLICAS;
    int64_t now = simw_now(w);
    cJSON *status = cJSON_CreateObject();
    const cJSON *gen = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(dep, "metadata"), "generation");
    cJSON_AddNumberToObject(status, "observedGeneration",
                            cJSON_IsNumber(gen) ? gen->valuedouble : 1);
    cJSON_AddNumberToObject(status, "replicas", replicas);
    cJSON_AddNumberToObject(status, "updatedReplicas", updated);
    cJSON_AddNumberToObject(status, "readyReplicas", ready);
    cJSON_AddNumberToObject(status, "availableReplicas", ready);
    cJSON *conds = cJSON_AddArrayToObject(status, "conditions");
    cJSON_AddItemToArray(conds, simw_condition("Available",
                                               ready >= CTL_ROLLOUT_REPLICAS ? "True" : "False",
                                               "MinimumReplicasAvailable",
                                               "Deployment has minimum availability.", 0));
    cJSON_AddItemToArray(conds,
                         simw_condition("Progressing", "True",
                                        complete ? "NewReplicaSetAvailable" : "ReplicaSetUpdated",
                                        complete ? "ReplicaSet has successfully progressed."
                                                 : "ReplicaSet is progressing.",
                                        now));
    patch_status(w, "Deployment", c->controller_ns, c->controller_name, status);
    cJSON_Delete(list);
    free(hash);
    cJSON_Delete(dep);
}

static const char *restarted_at(const cJSON *dep)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(dep, "spec");
    const cJSON *tmpl = cJSON_GetObjectItemCaseSensitive(spec, "template");
    const char *path[] = {"metadata", "annotations", SIMW_ANN_RESTARTED_AT};
    return simw_json_str(tmpl, path, 3);
}

/* A new restartedAt starts a rollout: new pods now, Ready after
 * SIM_ROLLOUT_READY_MS, then the old ones terminate. */
static void rollout_notice(sim_world *w)
{
    const rs_config *c = &w->cfg;
    cJSON *dep = simw_get(w, "Deployment", c->controller_ns, c->controller_name);
    if (!dep) return;
    const char *ra = restarted_at(dep);
    ra = ra ? ra : "";
    char *last = simw_meta_get(w, "rollout.restarted_at");
    if (!last || strcmp(last, ra) != 0) {
        simw_meta_set(w, "rollout.restarted_at", ra);
        int64_t seq = simw_meta_int(w, "rollout.seq", 0) + 1;
        simw_meta_set_int(w, "rollout.seq", seq);
        char hash[11];
        rollout_hash(seq, hash);
        simw_meta_set(w, "rollout.hash", hash);
        rollout_pods_create(w, hash, false);
        ctl_schedule(w, simw_now(w) + SIM_ROLLOUT_READY_MS, "rollout.ready", hash);
    }
    free(last);
    cJSON_Delete(dep);
    ctl_rollout_status_refresh(w);
}

static void pod_terminate(sim_world *w, const char *ns, const char *name, int64_t after_ms)
{
    char ts[32];
    int64_t now = simw_now(w);
    simw_rfc3339(now, ts);
    cJSON *patch = cJSON_CreateObject();
    cJSON_AddStringToObject(cJSON_AddObjectToObject(patch, "metadata"), "deletionTimestamp", ts);
    simw_merge(w, "Pod", ns, name, patch);
    char *ref = ctl_ref("Pod", ns, name);
    ctl_schedule(w, now + after_ms, "pod.delete", ref);
    free(ref);
}

static void rollout_ready(sim_world *w, const char *hash)
{
    char *current = simw_meta_get(w, "rollout.hash");
    bool superseded = !current || strcmp(current, hash) != 0;
    free(current);
    if (superseded) return;
    int64_t now = simw_now(w);
    cJSON *list = rollout_pods(w);
    const cJSON *pod;
    cJSON_ArrayForEach(pod, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        const char *name = obj_str(pod, "metadata", "name", NULL);
        const char *h = simw_label(pod, "pod-template-hash");
        if (h && strcmp(h, hash) == 0) {
            cJSON *status = cJSON_CreateObject();
            cJSON_AddStringToObject(status, "phase", "Running");
            cJSON_AddItemToObject(status, "conditions",
                                  ready_conditions("True", "PodReady", "pod is ready", now));
            patch_status(w, "Pod", w->cfg.controller_ns, name, status);
        } else if (!pod_terminating(pod)) {
            pod_terminate(w, w->cfg.controller_ns, name, SIM_POD_TERMINATE_MS);
        }
    }
    cJSON_Delete(list);
    char *ra = simw_meta_get(w, "rollout.restarted_at");
    simw_meta_set(w, "rollout.ready_for", ra ? ra : "");
    free(ra);
    ctl_rollout_status_refresh(w);
}

static void pod_delete(sim_world *w, const char *ref)
{
    char kind[SIMW_NAME_MAX], ns[SIMW_NAME_MAX], name[SIMW_NAME_MAX];
    if (!simw_ref_parse(ref, kind, ns, name)) return;
    cJSON *out = NULL;
    store_delete(w->db, "Pod", ns, name, &out);
    cJSON_Delete(out);
    if (strcmp(ns, w->cfg.controller_ns) == 0) ctl_rollout_status_refresh(w);
}

/* ---- Talos reboots and evictions ---- */

/* Node Ready condition and the lifecycle not-ready taint, other taints kept. */
static void node_set_ready(sim_world *w, const char *node, bool ready)
{
    cJSON *obj = simw_get(w, "Node", NULL, node);
    if (!obj) return;
    const cJSON *taints =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "spec"), "taints");
    cJSON *kept = cJSON_CreateArray();
    const cJSON *t;
    cJSON_ArrayForEach(t, taints)
    {
        const char *key = obj_str(t, "key", NULL, NULL);
        if (!key || strcmp(key, SIMW_TAINT_NOT_READY) != 0)
            cJSON_AddItemToArray(kept, cJSON_Duplicate(t, 1));
    }
    if (!ready) {
        cJSON *taint = cJSON_CreateObject();
        cJSON_AddStringToObject(taint, "key", SIMW_TAINT_NOT_READY);
        cJSON_AddStringToObject(taint, "effect", "NoSchedule");
        cJSON_AddItemToArray(kept, taint);
    }
    cJSON *patch = cJSON_CreateObject();
    cJSON *spec = cJSON_AddObjectToObject(patch, "spec");
    if (cJSON_GetArraySize(kept) > 0)
        cJSON_AddItemToObject(spec, "taints", kept);
    else {
        cJSON_Delete(kept);
        cJSON_AddNullToObject(spec, "taints");
    }
    cJSON_AddItemToObject(cJSON_AddObjectToObject(patch, "status"), "conditions",
                          ready_conditions(ready ? "True" : "False",
                                           ready ? "KubeletReady" : "NodeStatusUnknown",
                                           ready ? "kubelet is posting ready status"
                                                 : "Kubelet stopped posting node status.",
                                           simw_now(w)));
    simw_merge(w, "Node", NULL, node, patch);
    cJSON_Delete(obj);
}

void ctl_talos_reboot(sim_world *w, const char *node)
{
    int64_t seq = simw_talos_int(w, node, "reboot_seq") + 1;
    simw_talos_set_int(w, node, "reboot_seq", seq);
    simw_talos_set_int(w, node, "rebooting", 1);
    node_set_ready(w, node, false);
    char *payload = rs_xasprintf("%lld:%s", (long long)seq, node);
    ctl_schedule(w, simw_now(w) + SIM_REBOOT_MS, "talos.reboot-done", payload);
    free(payload);
}

/* Boot: containerd loads the machine config's auth, Talos re-applies its
 * node annotations, the node turns Ready and evicted pods come back. */
static void talos_reboot_done(sim_world *w, const char *payload)
{
    char *colon = strchr(payload, ':');
    if (!colon) return;
    const char *node = colon + 1;
    long long seq = strtoll(payload, NULL, 10);
    if (simw_talos_int(w, node, "reboot_seq") != seq) return;
    simw_talos_set_int(w, node, "rebooting", 0);
    cJSON *auth = simw_talos_json(w, node, "registry_auth");
    simw_talos_set_json(w, node, "loaded_auth", auth);
    cJSON_Delete(auth);
    node_set_ready(w, node, true);
    cJSON *ann = simw_talos_json(w, node, "node_annotations");
    if (cJSON_GetArraySize(ann) > 0) simw_node_annotations_apply(w, node, ann);
    cJSON_Delete(ann);
    simw_node_pods_ensure(w, node);
}

static cJSON *eviction_status(int code, const char *status, const char *reason, const char *msg)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "kind", "Status");
    cJSON_AddStringToObject(s, "apiVersion", "v1");
    cJSON_AddStringToObject(s, "status", status);
    if (reason) cJSON_AddStringToObject(s, "reason", reason);
    if (msg) cJSON_AddStringToObject(s, "message", msg);
    cJSON_AddNumberToObject(s, "code", code);
    return s;
}

int ctl_evict(sim_world *w, const char *ns, const char *name, char **node_out, cJSON **body)
{
    *node_out = NULL;
    cJSON *pod = simw_get(w, "Pod", ns, name);
    if (!pod) {
        *body = store_status(404, "NotFound", "pods \"%s\" not found", name);
        return 404;
    }
    const char *node = obj_str(pod, "spec", "nodeName", NULL);
    *node_out = node ? rs_xstrdup(node) : NULL;
    const char *owner_kind =
        obj_str(first_item(pod, "metadata", "ownerReferences"), "kind", NULL, NULL);
    bool daemonset = owner_kind && strcmp(owner_kind, "DaemonSet") == 0;
    if (node && !daemonset && simw_talos_int(w, node, "pdb_block_until") > simw_now(w)) {
        cJSON_Delete(pod);
        *body =
            eviction_status(429, "Failure", "TooManyRequests",
                            "Cannot evict pod as it would violate the pod's disruption budget.");
        return 429;
    }
    if (!pod_terminating(pod)) pod_terminate(w, ns, name, SIM_EVICT_MS);
    cJSON_Delete(pod);
    *body = eviction_status(201, "Success", NULL, NULL);
    return 201;
}

/* ---- dispatch and init ---- */

static void ctl_fire(sim_world *w, const char *kind, const char *payload)
{
    if (strcmp(kind, "eso.sync") == 0) {
        eso_sync(w, payload);
    } else if (strcmp(kind, "eso.refresh") == 0) {
        eso_sync(w, payload);
        ctl_schedule(w, simw_now(w) + SIM_ESO_REFRESH_MS, "eso.refresh", payload);
    } else if (strcmp(kind, "flux.tick") == 0) {
        flux_tick(w, payload);
    } else if (strcmp(kind, "flux.start") == 0) {
        flux_start(w, payload);
    } else if (strcmp(kind, "flux.finish") == 0) {
        flux_finish(w, payload);
    } else if (strcmp(kind, "rollout.ready") == 0) {
        rollout_ready(w, payload);
    } else if (strcmp(kind, "pod.delete") == 0) {
        pod_delete(w, payload);
    } else if (strcmp(kind, "talos.reboot-done") == 0) {
        talos_reboot_done(w, payload);
    } else {
        simw_die(w, "controller timer dispatch (unknown timer kind)");
    }
}

void ctl_after_write(sim_world *w, const char *kind, const char *ns, const char *name)
{
    if (!kind || !name) return;
    if (strcmp(kind, "PushSecret") == 0 || strcmp(kind, "ExternalSecret") == 0)
        eso_notice(w, kind, ns, name);
    else if (strcmp(kind, "Kustomization") == 0)
        flux_notice(w, ns, name);
    else if (strcmp(kind, "Deployment") == 0 && ns && strcmp(ns, w->cfg.controller_ns) == 0 &&
             strcmp(name, w->cfg.controller_name) == 0)
        rollout_notice(w);
}

void ctl_init(sim_world *w)
{
    const rs_config *c = &w->cfg;
    char hash[11];
    rollout_hash(0, hash);
    simw_meta_set(w, "rollout.hash", hash);
    simw_meta_set_int(w, "rollout.seq", 0);
    simw_meta_set(w, "rollout.restarted_at", "");
    simw_meta_set(w, "rollout.ready_for", "");
    rollout_pods_create(w, hash, true);
    ctl_rollout_status_refresh(w);
    char *ref = ctl_ref("PushSecret", c->pushsecret_ns, c->pushsecret_name);
    ctl_schedule(w, SIM_ESO_REFRESH_MS, "eso.refresh", ref);
    free(ref);
    for (size_t i = 0; i < c->n_fanout; i++) {
        ref = ctl_ref("ExternalSecret", c->fanout_namespaces[i], c->externalsecret_name);
        ctl_schedule(w, SIM_ESO_REFRESH_MS, "eso.refresh", ref);
        free(ref);
    }
    const char *ks_ns[] = {c->parent_ns, c->child_ns};
    const char *ks_name[] = {c->parent_name, c->child_name};
    for (size_t i = 0; i < 2; i++) {
        flux_notice(w, ks_ns[i], ks_name[i]);
        ref = ctl_ref("Kustomization", ks_ns[i], ks_name[i]);
        ctl_schedule(w, CTL_FLUX_INTERVAL_MS, "flux.tick", ref);
        free(ref);
    }
}
