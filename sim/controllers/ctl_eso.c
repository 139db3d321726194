/*
 * ctl_eso.c — the External Secrets Operator: PushSecret (source Secret ->
 * OpenBao) and ExternalSecret (OpenBao -> consumer Secret).
 *
 * The one idea: ESO reacts to a force-sync annotation value it has not
 * handled yet, after SIM_ESO_REACT_MS, and otherwise only on its hourly
 * refresh; its status says Ready whether or not the remote value is the one
 * the cluster thinks it is, which is the hazard a raft restore exposes.
 */
#include "sim/controllers/ctl_int.h"

#include "sim/store/store.h"

#include <stdlib.h>
#include <string.h>

/* PushSecret sync: the source Secret's key becomes a new KV v2 version (only
 * when different). Its status says Ready either way — status never proves
 * the remote value, which is the hazard a raft restore exposes. */
static void eso_push_sync(sim_world *w, const char *ns, const char *name)
{
    cJSON *ps = simw_get(w, "PushSecret", ns, name);
    if (!ps) return;
    int64_t wall = simw_wall(w);
    const char *sel_path[] = {"spec", "selector", "secret", "name"};
    const char *src_name = simw_json_str(ps, sel_path, 4);
    src_name = src_name ? src_name : w->cfg.variables_name;
    const cJSON *item = ctl_first_item(ps, "spec", "data");
    const char *key = ctl_obj_str(item, "match", "secretKey", NULL);
    const char *remote = ctl_obj_str(item, "match", "remoteRef", "remoteKey");
    const char *prop = ctl_obj_str(item, "match", "remoteRef", "property");
    key = key ? key : w->cfg.variables_key;
    remote = remote ? remote : w->cfg.openbao_path;
    prop = prop ? prop : w->cfg.openbao_property;
    cJSON *src = simw_get(w, "Secret", ns, src_name);
    const char *b64 = ctl_obj_str(src, "data", key, NULL);
    size_t len = 0;
    unsigned char *value = b64 ? base64_decode(b64, &len) : NULL;
    cJSON *status = cJSON_CreateObject();
    char ts[32];
    simw_rfc3339(wall, ts);
    if (!value) {
        char *msg = rs_xasprintf("could not get source secret %s key %s", src_name, key);
        cJSON_AddItemToObject(status, "conditions",
                              ctl_ready_conditions("False", "Errored", msg, wall));
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
        const char *rv = ctl_obj_str(src, "metadata", "resourceVersion", NULL);
        cJSON_AddStringToObject(status, "syncedResourceVersion", rv ? rv : "");
        cJSON_AddItemToObject(
            status, "conditions",
            ctl_ready_conditions("True", "Synced", "PushSecret synced successfully", wall));
    }
    free(value);
    ctl_patch_status(w, "PushSecret", ns, name, status);
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
        store_create(w->st, "Secret", ns, obj, &out);
        cJSON_Delete(out);
        cJSON_Delete(obj);
    } else {
        const char *cur = ctl_obj_str(consumer, "data", key, NULL);
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
    int64_t wall = simw_wall(w);
    const char *target = ctl_obj_str(es, "spec", "target", "name");
    const cJSON *item = ctl_first_item(es, "spec", "data");
    const char *key = ctl_obj_str(item, "secretKey", NULL, NULL);
    const char *remote = ctl_obj_str(item, "remoteRef", "key", NULL);
    const char *prop = ctl_obj_str(item, "remoteRef", "property", NULL);
    target = target ? target : name;
    key = key ? key : w->cfg.consumer_key;
    remote = remote ? remote : w->cfg.openbao_path;
    prop = prop ? prop : w->cfg.openbao_property;
    cJSON *data = simw_bao_current(w, remote, NULL);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(data, prop);
    cJSON *status = cJSON_CreateObject();
    if (!cJSON_IsString(v)) {
        cJSON_AddItemToObject(status, "conditions",
                              ctl_ready_conditions("False", "SecretSyncedError",
                                                   "could not get secret data from provider",
                                                   wall));
    } else {
        eso_consumer_write(w, es, ns, target, key, v->valuestring);
        char ts[32];
        simw_rfc3339(wall, ts);
        /* eso.same-second-refresh: refreshed within the second of the last
         * refresh, so refreshTime reads the same (H66). */
        char *same_key = rs_xasprintf("eso.same_second.ExternalSecret/%s/%s", ns, name);
        char *same = simw_meta_get(w, same_key);
        free(same_key);
        const char *prev = ctl_obj_str(es, "status", "refreshTime", NULL);
        cJSON_AddStringToObject(status, "refreshTime", same && prev ? prev : ts);
        free(same);
        cJSON_AddItemToObject(status, "conditions",
                              ctl_ready_conditions("True", "SecretSynced", "secret synced", wall));
    }
    ctl_patch_status(w, "ExternalSecret", ns, name, status);
    cJSON_Delete(data);
    cJSON_Delete(es);
}

void ctl_eso_sync(sim_world *w, const char *ref)
{
    char kind[SIMW_NAME_MAX], ns[SIMW_NAME_MAX], name[SIMW_NAME_MAX];
    if (!simw_ref_parse(ref, kind, ns, name)) return;
    if (strcmp(kind, "PushSecret") == 0)
        eso_push_sync(w, ns, name);
    else
        eso_external_sync(w, ns, name);
}

/* A force-sync annotation value ESO has not handled yet schedules one sync. */
void ctl_eso_notice(sim_world *w, const char *kind, const char *ns, const char *name)
{
    cJSON *obj = simw_get(w, kind, ns, name);
    const char *fs = simw_annotation(obj, w->cfg.ann.force_sync);
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

void ctl_eso_refresh(sim_world *w, const char *ref)
{
    ctl_eso_sync(w, ref);
    ctl_schedule(w, simw_now(w) + SIM_ESO_REFRESH_MS, "eso.refresh", ref);
}

/* The periodic refresh of the PushSecret and of every fan-out ExternalSecret. */
void ctl_eso_init(sim_world *w)
{
    const rs_config *c = &w->cfg;
    char *ref = ctl_ref("PushSecret", c->pushsecret_ns, c->pushsecret_name);
    ctl_schedule(w, ctl_first_period(w, SIM_ESO_REFRESH_MS), "eso.refresh", ref);
    free(ref);
    for (size_t i = 0; i < c->n_fanout; i++) {
        ref = ctl_ref("ExternalSecret", c->fanout_namespaces[i], c->externalsecret_name);
        ctl_schedule(w, ctl_first_period(w, SIM_ESO_REFRESH_MS), "eso.refresh", ref);
        free(ref);
    }
}
