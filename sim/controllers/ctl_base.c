/*
 * ctl_base.c — what every simulated controller is built from: the timer
 * table in the world file, the object helpers their reactions share, and pod
 * termination (a rollout's old pods and an evicted pod end the same way).
 *
 * The one idea: a controller's future is a row, never memory. ctl_schedule
 * inserts a timer and ctl_clock.c pops them in (due_ms, id) order, so one
 * seed gives one history and a killed run leaves its pending reactions in the
 * file, as a real cluster would. This file calls no controller.
 */
#include "sim/controllers/ctl_int.h"

#include "sim/store/store.h"

#include <stdlib.h>
#include <string.h>

/* ---- timers ---- */

void ctl_schedule(sim_world *w, int64_t due_ms, const char *kind, const char *payload)
{
    sqlite3_stmt *st = simw_stmt(w, "INSERT INTO timers(due_ms, kind, payload) VALUES(?1, ?2, ?3)");
    sqlite3_bind_int64(st, 1, due_ms);
    sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, payload, -1, SQLITE_STATIC);
    simw_step_done(w, st);
}

/* Pops the earliest timer due at or before target_ms. */
bool ctl_timer_pop(sim_world *w, int64_t target_ms, int64_t *due, char **kind, char **payload)
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

void ctl_timers_skip(sim_world *w, const char *kind, int64_t period_ms, int64_t horizon_ms)
{
    sqlite3_stmt *st = simw_stmt(w, "UPDATE timers SET due_ms = due_ms + ((?3 - due_ms) / ?2) * ?2"
                                    " WHERE kind = ?1 AND due_ms <= ?3");
    sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, period_ms);
    sqlite3_bind_int64(st, 3, horizon_ms);
    simw_step_done(w, st);
}

void ctl_timers_cancel(sim_world *w, const char *kind, const char *payload)
{
    sqlite3_stmt *st = simw_stmt(w, "DELETE FROM timers WHERE kind = ?1 AND payload = ?2");
    sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, payload, -1, SQLITE_STATIC);
    simw_step_done(w, st);
}

/* ---- object helpers ---- */

char *ctl_ref(const char *kind, const char *ns, const char *name)
{
    return ns && ns[0] ? rs_xasprintf("%s/%s/%s", kind, ns, name)
                       : rs_xasprintf("%s/%s", kind, name);
}

const char *ctl_obj_str(const cJSON *obj, const char *a, const char *b, const char *c)
{
    const char *path[] = {a, b, c};
    return simw_json_str(obj, path, c ? 3 : (b ? 2 : 1));
}

const cJSON *ctl_first_item(const cJSON *obj, const char *a, const char *b)
{
    const cJSON *cur = cJSON_GetObjectItemCaseSensitive(obj, a);
    cur = cJSON_GetObjectItemCaseSensitive(cur, b);
    return cJSON_GetArrayItem(cur, 0);
}

void ctl_patch_status(sim_world *w, const char *kind, const char *ns, const char *name,
                      cJSON *status)
{
    cJSON *patch = cJSON_CreateObject();
    cJSON_AddItemToObject(patch, "status", status);
    simw_merge(w, kind, ns, name, patch);
}

cJSON *ctl_ready_conditions(const char *status, const char *reason, const char *message,
                            int64_t wall_ms)
{
    cJSON *conds = cJSON_CreateArray();
    cJSON_AddItemToArray(conds, simw_condition("Ready", status, reason, message, wall_ms));
    return conds;
}

/* ---- pods ---- */

bool ctl_pod_terminating(const cJSON *pod)
{
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pod, "metadata"),
                                            "deletionTimestamp") != NULL;
}

void ctl_pod_terminate(sim_world *w, const char *ns, const char *name, int64_t after_ms)
{
    char ts[32];
    int64_t now = simw_now(w);
    int64_t wall = simw_wall(w);
    simw_rfc3339(wall, ts);
    cJSON *patch = cJSON_CreateObject();
    cJSON_AddStringToObject(cJSON_AddObjectToObject(patch, "metadata"), "deletionTimestamp", ts);
    simw_merge(w, "Pod", ns, name, patch);
    char *ref = ctl_ref("Pod", ns, name);
    ctl_schedule(w, now + after_ms, "pod.delete", ref);
    free(ref);
}

void ctl_pod_delete(sim_world *w, const char *ns, const char *name)
{
    cJSON *out = NULL;
    store_delete(w->st, "Pod", ns, name, &out);
    cJSON_Delete(out);
}
