/*
 * world_counters.c — the DESIGN.md §4 counters (a contract): storage, the full-fence
 * predicate behind fence_acquisitions, snapshots and per-run deltas.
 *
 * The one idea: counters are rows in the world file, bumped by the sim
 * transport as each core call completes (never by world events or
 * controllers), so a run killed by a `crash` fault still leaves exactly the
 * counts of the calls it made. A world in memory keeps them in its handle
 * and writes the rows when it is copied or handed over (simw_flush), which
 * a crash does before the process ends.
 */
#include "sim/world/world_internal.h"

#include "sim/store/store.h"

#include <stdlib.h>
#include <string.h>

static const char *const cnt_names[] = {
    "controller_restarts", "lease_writes", "writes",          "fence_acquisitions", "policy_pauses",
    "node_reboots",        "node_drains",  "talos_mutations", "api_calls",          "kube_calls",
    "openbao_calls",       "talos_calls",  "registry_calls",
};

/* The per-service counter a call also bumps besides api_calls; NULL for the
 * run-liveness oracle, which is no service of the cluster. */
const char *cnt_service_of(rs_op op)
{
    const char *name = rs_op_name(op);
    if (strncmp(name, "kube.", 5) == 0) return "kube_calls";
    if (strncmp(name, "openbao.", 8) == 0) return "openbao_calls";
    if (strncmp(name, "talos.", 6) == 0) return "talos_calls";
    if (strncmp(name, "registry.", 9) == 0) return "registry_calls";
    return NULL;
}

/* name's index in cnt_names, or -1. */
static int cnt_index(const char *name)
{
    for (size_t i = 0; i < RS_ARRAY_LEN(cnt_names); i++)
        if (strcmp(cnt_names[i], name) == 0) return (int)i;
    return -1;
}

static int64_t cnt_row(sim_world *w, const char *name)
{
    sqlite3_stmt *st = simw_stmt(w, "SELECT value FROM counters WHERE name = ?1");
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int64_t v = simw_step_row(w, st) ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return v;
}

/* The kept counter (in memory only), loaded on first use; NULL otherwise. */
static int64_t *cnt_kept(sim_world *w, const char *name, int *index)
{
    _Static_assert(RS_ARRAY_LEN(cnt_names) == SIMW_CNT_N, "SIMW_CNT_N counts cnt_names");
    *index = w->mem ? cnt_index(name) : -1;
    if (*index < 0) return NULL;
    if (!w->cnt_loaded) {
        for (size_t i = 0; i < SIMW_CNT_N; i++)
            w->cnt[i] = cnt_row(w, cnt_names[i]);
        w->cnt_loaded = true;
    }
    return &w->cnt[*index];
}

void cnt_flush(sim_world *w)
{
    sqlite3_stmt *st = simw_stmt(w, "INSERT INTO counters(name, value) VALUES(?1, ?2)"
                                    " ON CONFLICT(name) DO UPDATE SET value = ?2");
    for (size_t i = 0; i < SIMW_CNT_N; i++) {
        if (!w->cnt_dirty[i]) continue;
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, cnt_names[i], -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, w->cnt[i]);
        simw_step_done(w, st);
        w->cnt_dirty[i] = false;
    }
}

void cnt_add(sim_world *w, const char *name, int64_t delta)
{
    int i = -1;
    int64_t *kept = cnt_kept(w, name, &i);
    if (kept) {
        *kept += delta;
        w->cnt_dirty[i] = true;
        return;
    }
    sqlite3_stmt *st = simw_stmt(w, "INSERT INTO counters(name, value) VALUES(?1, ?2)"
                                    " ON CONFLICT(name) DO UPDATE SET value = value + ?2");
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, delta);
    simw_step_done(w, st);
}

void cnt_kind_add(sim_world *w, const char *kind, int64_t delta)
{
    sqlite3_stmt *st = simw_stmt(w, "INSERT INTO writes_by_kind(kind, value) VALUES(?1, ?2)"
                                    " ON CONFLICT(kind) DO UPDATE SET value = value + ?2");
    sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, delta);
    simw_step_done(w, st);
}

int64_t cnt_get(sim_world *w, const char *name)
{
    int i = -1;
    const int64_t *kept = cnt_kept(w, name, &i);
    return kept ? *kept : cnt_row(w, name);
}

static bool str_eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static bool ks_fenced(sim_world *w, const char *ns, const char *name, const char *owner_key,
                      const char *holder, bool child)
{
    cJSON *hold = NULL;
    const cJSON *ks = simw_peek(w, "Kustomization", ns, name, &hold);
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(ks, "spec");
    bool ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "suspend")) &&
              str_eq(simw_annotation(ks, owner_key), holder) &&
              (!child || str_eq(simw_annotation(ks, w->cfg.ann.reconcile), "disabled"));
    cJSON_Delete(hold);
    return ok;
}

/* The full fence of §3.4: the Lease, both policy fences naming the same
 * holder, and a controller restart this run wrote whose rollout completed
 * and which a Pod list of this run showed complete.
 * Reads only the Lease, two Kustomizations and the Deployment. */
bool cnt_fence_held(sim_world *w, const char *restarted_at_by_run)
{
    const rs_config *c = &w->cfg;
    if (!restarted_at_by_run || !restarted_at_by_run[0]) return false;
    char *ready_for = simw_meta_get(w, "rollout.ready_for");
    bool rolled = str_eq(ready_for, restarted_at_by_run);
    free(ready_for);
    if (!rolled) return false;
    /* DESIGN §4: only a restart the run proved complete counts: the run
     * must have listed the controller's pods and seen the rollout done. */
    char *seen = simw_meta_get(w, "run.rollout_seen");
    bool proved = str_eq(seen, restarted_at_by_run);
    free(seen);
    if (!proved) return false;
    cJSON *hold = NULL;
    const cJSON *lease = simw_peek(w, "Lease", c->lease_ns, c->lease_name, &hold);
    const char *path[] = {"spec", "holderIdentity"};
    const char *holder = simw_json_str(lease, path, 2);
    bool held =
        holder && holder[0] &&
        ks_fenced(w, c->parent_ns, c->parent_name, w->cfg.ann.parent_owner, holder, false) &&
        ks_fenced(w, c->child_ns, c->child_name, w->cfg.ann.child_owner, holder, true);
    cJSON_Delete(hold);
    if (!held) return false;
    const cJSON *dep = simw_peek(w, "Deployment", c->controller_ns, c->controller_name, &hold);
    const char *tpath[] = {"spec", "template", "metadata", "annotations", w->cfg.ann.restarted_at};
    held = str_eq(simw_json_str(dep, tpath, 5), restarted_at_by_run);
    cJSON_Delete(hold);
    return held;
}

cJSON *sim_counters_snapshot(sim_world *w)
{
    const rs_config *c = &w->cfg;
    cJSON *snap = cJSON_CreateObject();
    for (size_t i = 0; i < RS_ARRAY_LEN(cnt_names); i++)
        cJSON_AddNumberToObject(snap, cnt_names[i], (double)cnt_get(w, cnt_names[i]));
    cJSON *lease = simw_get(w, "Lease", c->lease_ns, c->lease_name);
    const char *path[] = {"metadata", "resourceVersion"};
    const char *rv = simw_json_str(lease, path, 2);
    cJSON_AddStringToObject(snap, "lease_rv", rv ? rv : "");
    cJSON_Delete(lease);
    cJSON *kinds = cJSON_AddObjectToObject(snap, "writes_by_kind");
    sqlite3_stmt *st = simw_stmt(w, "SELECT kind, value FROM writes_by_kind ORDER BY kind");
    while (simw_step_row(w, st))
        cJSON_AddNumberToObject(kinds, (const char *)sqlite3_column_text(st, 0),
                                (double)sqlite3_column_int64(st, 1));
    sqlite3_reset(st);
    cJSON_AddNumberToObject(snap, "virtual_seconds", (double)simw_now(w) / 1000.0);
    return snap;
}

static double num_or_zero(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

static cJSON *delta_kinds(const cJSON *before, const cJSON *after)
{
    cJSON *out = cJSON_CreateObject();
    const cJSON *it;
    cJSON_ArrayForEach(it, after)
    {
        cJSON_AddNumberToObject(out, it->string, it->valuedouble - num_or_zero(before, it->string));
    }
    cJSON_ArrayForEach(it, before)
    {
        if (!cJSON_GetObjectItemCaseSensitive(out, it->string))
            cJSON_AddNumberToObject(out, it->string, -it->valuedouble);
    }
    return out;
}

/* Rounds to the nearest ms without libm. */
static long long secs_to_ms(double s)
{
    double ms = s * 1000.0;
    return (long long)(ms >= 0 ? ms + 0.5 : ms - 0.5);
}

cJSON *sim_counters_delta(const cJSON *before, const cJSON *after)
{
    cJSON *delta = cJSON_CreateObject();
    const cJSON *it;
    cJSON_ArrayForEach(it, after)
    {
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(before, it->string);
        if (strcmp(it->string, "writes_by_kind") == 0) {
            cJSON_AddItemToObject(delta, "writes_by_kind", delta_kinds(b, it));
        } else if (strcmp(it->string, "lease_rv") == 0) {
            const char *rb = cJSON_IsString(b) ? b->valuestring : "";
            cJSON_AddBoolToObject(delta, "lease_rv_moved",
                                  strcmp(rb, cJSON_IsString(it) ? it->valuestring : "") != 0);
        } else if (strcmp(it->string, "virtual_seconds") == 0) {
            /* Kept in integer ms so 3-decimal printing never shows float noise. */
            long long ms =
                secs_to_ms(it->valuedouble) - secs_to_ms(cJSON_IsNumber(b) ? b->valuedouble : 0.0);
            cJSON_AddNumberToObject(delta, "virtual_seconds", (double)ms / 1000.0);
        } else if (cJSON_IsNumber(it)) {
            cJSON_AddNumberToObject(delta, it->string,
                                    it->valuedouble - (cJSON_IsNumber(b) ? b->valuedouble : 0));
        }
    }
    return delta;
}
