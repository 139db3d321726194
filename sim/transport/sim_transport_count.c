/*
 * sim_transport_count.c — the world-side DESIGN.md §4 counters and the call
 * log: what the scenarios assert, because only the world knows whether a
 * write whose answer was lost was applied.
 *
 * Each call is logged with whether this run held the Lease and both policy
 * fences as it was performed (the invariants read that, not the post-run
 * state), and the full fence is re-evaluated only when the store moved.
 */
#include "sim/transport/sim_transport_int.h"

#include "sim/store/store.h"

#include <stdlib.h>
#include <string.h>

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

bool simt_is_policy_object(sim_world *w, const rs_req *req)
{
    const rs_config *c = &w->cfg;
    return simt_is_object(req, "Kustomization", c->parent_ns, c->parent_name) ||
           simt_is_object(req, "Kustomization", c->child_ns, c->child_name);
}

bool simt_is_controller(sim_world *w, const rs_req *req)
{
    return simt_is_object(req, "Deployment", w->cfg.controller_ns, w->cfg.controller_name);
}

/* lease_writes, controller_restarts, policy_pauses for one applied kube write;
 * before/after are the object around the write (NULL when absent). */
void simt_count_kube(sim_world *w, const rs_req *req, const cJSON *before, const cJSON *after)
{
    const rs_config *c = &w->cfg;
    if (simt_is_object(req, "Lease", c->lease_ns, c->lease_name)) cnt_add(w, "lease_writes", 1);
    if (simt_is_policy_object(w, req) && after && ks_suspend(after) && !ks_suspend(before))
        cnt_add(w, "policy_pauses", 1);
    if (req->op == RS_OP_KUBE_PATCH && simt_is_controller(w, req)) {
        const char *b = dep_restarted_at(w, before), *a = dep_restarted_at(w, after);
        if (a && !simt_str_eq(a, b)) {
            cnt_add(w, "controller_restarts", 1);
            simw_meta_set(w, "run.restarted_at", a);
        }
    }
}

void simt_log(simt_ctx *c, const rs_req *req, int status, bool applied)
{
    char *target = rs_req_target(req);
    sqlite3_stmt *st =
        simw_stmt(c->w, "INSERT INTO call_log(run, op, target, status, applied, vt_ms,"
                        " lease_held, fences_held, held_mask)"
                        " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    sqlite3_bind_text(st, 1, c->run_name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, rs_op_name(req->op), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, target, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, status);
    sqlite3_bind_int(st, 5, applied);
    sqlite3_bind_int64(st, 6, simw_now(c->w));
    sqlite3_bind_int(st, 7, c->lease_held);
    sqlite3_bind_int(st, 8, c->fences_held);
    sqlite3_bind_int(st, 9, c->held_mask);
    simw_step_done(c->w, st);
    free(target);
    c->logged++;
}

/* Looked at every SIMT_LOG_TRIM_EVERY calls, so a long-running `sim serve`
 * keeps between keep and keep + SIMT_LOG_TRIM_EVERY rows of its run. */
#define SIMT_LOG_TRIM_EVERY 512

long long sim_transport_log_trim(rs_transport *t, long keep)
{
    simt_ctx *c = (simt_ctx *)t->ctx;
    if (keep <= 0 || c->logged < SIMT_LOG_TRIM_EVERY) return 0;
    c->logged = 0;
    sim_world *w = c->w;
    simw_begin(w);
    /* The seq of the oldest row to keep: the keep-th newest of this run. */
    sqlite3_stmt *st =
        simw_stmt(w, "SELECT seq FROM call_log WHERE run = ?1 ORDER BY seq DESC LIMIT 1 OFFSET ?2");
    sqlite3_bind_text(st, 1, c->run_name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, keep - 1);
    long long oldest = simw_step_row(w, st) ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_reset(st);
    long long dropped = 0;
    if (oldest > 0) {
        st = simw_stmt(w, "DELETE FROM call_log WHERE run = ?1 AND seq < ?2");
        sqlite3_bind_text(st, 1, c->run_name, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, oldest);
        simw_step_done(w, st);
        dropped = sqlite3_changes(w->db);
        if (dropped > 0)
            simw_meta_set_int(w, "call_log.dropped",
                              simw_meta_int(w, "call_log.dropped", 0) + dropped);
    }
    simw_commit(w);
    return dropped;
}

long long sim_transport_log_dropped(rs_transport *t)
{
    simt_ctx *c = (simt_ctx *)t->ctx;
    simw_begin(c->w);
    long long n = simw_meta_int(c->w, "call_log.dropped", 0);
    simw_commit(c->w);
    return n;
}

void simt_count_write(simt_ctx *c, const rs_req *req)
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

void simt_count_drain(simt_ctx *c, const char *node)
{
    sqlite3_stmt *st = simw_stmt(c->w, "INSERT OR IGNORE INTO drains(run, node) VALUES(?1, ?2)");
    sqlite3_bind_text(st, 1, c->run_name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, node, -1, SQLITE_STATIC);
    simw_step_done(c->w, st);
    if (sqlite3_changes(c->w->db) > 0) cnt_add(c->w, "node_drains", 1);
}

/* A 200 list of the controller's pods, made after this run's restart rolled
 * out, in which every pod is Ready and none is terminating: the run has seen
 * its restart complete (DESIGN §4: a fence whose restart the run never saw
 * complete is partial and does not count). Remembered as the restart it
 * proved; simt_fence_check then re-evaluates. */
void simt_see_rollout(simt_ctx *c, const rs_req *req, const rs_resp *resp)
{
    const rs_config *g = &c->w->cfg;
    if (req->op != RS_OP_KUBE_LIST || resp->status != 200 || !simt_str_eq(req->kind, "Pod") ||
        !simt_str_eq(req->ns, g->controller_ns) ||
        !simt_str_eq(req->label_selector, g->controller_selector))
        return;
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(resp->body, "items");
    if (cJSON_GetArraySize(items) == 0) return;
    const cJSON *pod;
    cJSON_ArrayForEach(pod, items)
    {
        const char *dt[] = {"metadata", "deletionTimestamp"};
        const char *ready = simw_condition_status(pod, "Ready");
        if (simw_json_str(pod, dt, 2) || !simt_str_eq(ready, "True")) return;
    }
    char *ra = simw_meta_get(c->w, "run.restarted_at");
    char *rf = simw_meta_get(c->w, "rollout.ready_for");
    if (ra && ra[0] && simt_str_eq(ra, rf)) {
        simw_meta_set(c->w, "run.rollout_seen", ra);
        c->fence_rev = -1;
    }
    free(ra);
    free(rf);
}

/* fence_acquisitions counts false->true transitions of the full fence; it is
 * re-evaluated only when the store moved (every ingredient is an object). */
void simt_fence_check(simt_ctx *c)
{
    long long rev = store_revision(c->w->st);
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
void simt_held_refresh(simt_ctx *c)
{
    long long rev = store_revision(c->w->st);
    if (rev == c->held_rev) return;
    c->held_rev = rev;
    c->held_mask = inv_fence_flags(c->w, c->run_name, &c->lease_held, &c->fences_held);
}
