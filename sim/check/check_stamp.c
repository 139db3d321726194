/*
 * check_stamp.c — the invariants that only the moment of a call can show,
 * recorded by the sim transport as the call happens (DESIGN.md §6).
 *
 * The one idea: the protection a write had is a fact of the moment it was
 * made. The transport stamps every call-log row with whether this run held
 * the Lease and both policy fences just before the call (inv_fence_flags),
 * and records as a violation what only that moment shows: an uncordon of a
 * node this run did not cordon, a second node rebooting, a control plane
 * rebooted beside an unhealthy peer. check_invariants.c reads these rows
 * after the run; nothing here judges a run as a whole.
 */
#include "sim/check/check_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INV_RUN_REF_MAX 512

/* ---- holder identities ---- */

bool inv_holder_of_run(const char *holder, const char *run_name)
{
    if (!holder || !run_name) return false;
    const char *first = strchr(holder, '-');
    const char *last = strrchr(holder, '-');
    if (!first || last == first) return false;
    const char *second_last = NULL;
    for (const char *p = first + 1; p < last; p++)
        if (*p == '-') second_last = p;
    if (!second_last) return false;
    size_t len = (size_t)(second_last - first - 1);
    char want[INV_RUN_REF_MAX];
    int n = snprintf(want, sizeof want, "sim.%s", run_name);
    return n > 0 && (size_t)n == len && strncmp(first + 1, want, len) == 0;
}

static void inv_violation(sim_world *w, const char *run_name, int invariant, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void inv_violation(sim_world *w, const char *run_name, int invariant, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sqlite3_stmt *st =
        simw_stmt(w, "INSERT INTO violations(run, invariant, message) VALUES(?1, ?2, ?3)");
    sqlite3_bind_text(st, 1, run_name, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, invariant);
    sqlite3_bind_text(st, 3, msg, -1, SQLITE_STATIC);
    simw_step_done(w, st);
}

void inv_run_begin(sim_world *w, const char *run_name)
{
    sqlite3_stmt *st = simw_stmt(w, "DELETE FROM cordons WHERE run = ?1");
    sqlite3_bind_text(st, 1, run_name, -1, SQLITE_STATIC);
    simw_step_done(w, st);
}

static bool ks_fence_of_run(sim_world *w, const char *ns, const char *name, const char *owner_key,
                            const char *run_name)
{
    cJSON *hold = NULL;
    const cJSON *ks = simw_peek(w, "Kustomization", ns, name, &hold);
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(ks, "spec");
    bool held = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "suspend")) &&
                inv_holder_of_run(simw_annotation(ks, owner_key), run_name);
    cJSON_Delete(hold);
    return held;
}

int inv_fence_flags(sim_world *w, const char *run_name, bool *lease_held, bool *fences_held)
{
    const rs_config *c = &w->cfg;
    cJSON *hold = NULL;
    const cJSON *lease = simw_peek(w, "Lease", c->lease_ns, c->lease_name, &hold);
    const char *path[] = {"spec", "holderIdentity"};
    *lease_held = inv_holder_of_run(simw_json_str(lease, path, 2), run_name);
    cJSON_Delete(hold);
    bool parent =
        ks_fence_of_run(w, c->parent_ns, c->parent_name, w->cfg.ann.parent_owner, run_name);
    bool child = ks_fence_of_run(w, c->child_ns, c->child_name, w->cfg.ann.child_owner, run_name);
    *fences_held = parent && child;
    return (*lease_held ? INV_HELD_LEASE : 0) | (parent ? INV_HELD_PARENT : 0) |
           (child ? INV_HELD_CHILD : 0);
}

bool inv_node_unschedulable(const cJSON *node)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(node, "spec"), "unschedulable"));
}

bool inv_cordon_is_ours(sim_world *w, const char *run_name, const char *node)
{
    sqlite3_stmt *st = simw_stmt(w, "SELECT 1 FROM cordons WHERE run = ?1 AND node = ?2");
    sqlite3_bind_text(st, 1, run_name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, node, -1, SQLITE_STATIC);
    bool ours = simw_step_row(w, st);
    sqlite3_reset(st);
    return ours;
}

/* A node may be uncordoned only by the run that both cordoned it (turned it
 * unschedulable) and still owns its drain claim: a node cordoned before the
 * claim — by an operator, or by another actor mid-run — stays cordoned. */
void inv_at_node_patch(sim_world *w, const char *run_name, const char *node, const cJSON *before,
                       const cJSON *after)
{
    if (!node || !before || !after) return;
    bool was = inv_node_unschedulable(before), now = inv_node_unschedulable(after);
    if (!was && now) {
        sqlite3_stmt *st = simw_stmt(w, "INSERT OR IGNORE INTO cordons(run, node) VALUES(?1, ?2)");
        sqlite3_bind_text(st, 1, run_name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, node, -1, SQLITE_STATIC);
        simw_step_done(w, st);
        return;
    }
    if (!was || now) return;
    bool owner_ours = inv_holder_of_run(simw_annotation(before, w->cfg.ann.drain_owner), run_name);
    bool cordoned_ours = inv_cordon_is_ours(w, run_name, node);
    if (owner_ours && cordoned_ours) {
        /* Restored: a later cordon of this node is another actor's, and
         * an exit 0 must not be blamed for it (invariant 2; scenario
         * node/cordoned-after-release). */
        sqlite3_stmt *st = simw_stmt(w, "DELETE FROM cordons WHERE run = ?1 AND node = ?2");
        sqlite3_bind_text(st, 1, run_name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, node, -1, SQLITE_STATIC);
        simw_step_done(w, st);
        return;
    }
    inv_violation(w, run_name, 4, "uncordoned Node/%s, which this run did not cordon (%s)", node,
                  !cordoned_ours ? "it was already unschedulable when this run came to it"
                                 : "its drain owner did not name this run");
}

/* Why a control-plane peer cannot lose a member now; NULL when it can. */
static const char *peer_unhealthy(sim_world *w, const char *peer)
{
    if (simw_talos_int(w, peer, "rebooting")) return "rebooting";
    if (!simw_talos_int(w, peer, "etcd_healthy")) return "etcd unhealthy";
    cJSON *hold = NULL;
    const cJSON *obj = simw_peek(w, "Node", NULL, peer, &hold);
    const char *ready = obj ? simw_condition_status(obj, "Ready") : NULL;
    bool ok = inv_str_eq(ready, "True");
    cJSON_Delete(hold);
    return ok ? NULL : "Node not Ready";
}

void inv_at_reboot(sim_world *w, const char *run_name, const char *node)
{
    bool cp = false;
    sqlite3_stmt *st = simw_stmt(w, "SELECT role FROM talos WHERE node = ?1");
    sqlite3_bind_text(st, 1, node, -1, SQLITE_STATIC);
    if (simw_step_row(w, st))
        cp = inv_str_eq((const char *)sqlite3_column_text(st, 0), "control-plane");
    sqlite3_reset(st);
    st = simw_stmt(w, "SELECT node, role, rebooting FROM talos WHERE node <> ?1 ORDER BY node");
    sqlite3_bind_text(st, 1, node, -1, SQLITE_STATIC);
    char **peers = NULL;
    size_t n = 0, cap = 0;
    while (simw_step_row(w, st)) {
        char *peer = simw_col_text(st, 0);
        if (sqlite3_column_int(st, 2))
            inv_violation(w, run_name, 4, "rebooted %s while %s was still rebooting", node, peer);
        if (cp && inv_str_eq((const char *)sqlite3_column_text(st, 1), "control-plane")) {
            if (n == cap) peers = rs_xrealloc(peers, (cap = cap ? cap * 2 : 4) * sizeof *peers);
            peers[n++] = peer;
        } else {
            free(peer);
        }
    }
    sqlite3_reset(st);
    /* Peers are judged after the scan: the health reads reuse statements. */
    for (size_t i = 0; i < n; i++) {
        const char *why = peer_unhealthy(w, peers[i]);
        if (why && !inv_str_eq(why, "rebooting"))
            inv_violation(w, run_name, 4,
                          "rebooted control plane %s while control plane %s was"
                          " unhealthy (%s)",
                          node, peers[i], why);
        free(peers[i]);
    }
    free(peers);
}

void inv_at_image_work(sim_world *w, const char *run_name, const char *node)
{
    cJSON *obj = simw_get(w, "Node", NULL, node);
    if (!obj) return;
    const char *ready = NULL;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(
                              cJSON_GetObjectItemCaseSensitive(obj, "status"), "conditions"))
    {
        const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "type"));
        if (inv_str_eq(type, "Ready"))
            ready = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "status"));
    }
    if (!inv_str_eq(ready, "True"))
        inv_violation(w, run_name, 4, "image work on %s while it was not Ready", node);
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(
                              cJSON_GetObjectItemCaseSensitive(obj, "spec"), "taints"))
    {
        const char *key = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "key"));
        if (key && simw_taint_is_lifecycle(key))
            inv_violation(w, run_name, 4, "image work on %s while its %s taint was still on", node,
                          key);
    }
    cJSON_Delete(obj);
}

/* The owner annotation a kind's fence carries, NULL for other kinds. */
static const char *owner_key(sim_world *w, const char *kind, const cJSON *obj, const char **second)
{
    *second = NULL;
    if (kind && strcmp(kind, "Node") == 0) return w->cfg.ann.drain_owner;
    if (!kind || strcmp(kind, "Kustomization") != 0 || !obj) return NULL;
    *second = w->cfg.ann.child_owner;
    return w->cfg.ann.parent_owner;
}

/* Whether the Lease's empty holder is another actor's doing: its last
 * change is a recorded foreign write after this run's last applied write of
 * the Lease. Emptied by another actor, the Lease is lost to this run exactly
 * as a taken one (the core refuses at its next proof and releases what it
 * holds, H8/H10); emptied by this run itself, before releasing its policy
 * fences, it is the §3.4 order reversed and gets no waiver. */
static bool lease_emptied_by_another(sim_world *w, const char *run_name)
{
    const rs_config *c = &w->cfg;
    char *ref = rs_xasprintf("Lease/%s/%s", c->lease_ns, c->lease_name);
    sqlite3_stmt *st =
        simw_stmt(w, "SELECT 1 FROM foreign_writes f WHERE f.run = ?1 AND f.ref = ?2"
                     " AND f.after_call >= (SELECT coalesce(max(seq), 0) FROM call_log"
                     "  WHERE run = ?1 AND target = ?2 AND applied = 1 AND op NOT IN ('kube.get', "
                     "'kube.list'))");
    sqlite3_bind_text(st, 1, run_name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, ref, -1, SQLITE_STATIC);
    bool hit = simw_step_row(w, st);
    sqlite3_reset(st);
    free(ref);
    return hit;
}

void inv_at_kube_write(sim_world *w, const char *run_name, const char *kind, const cJSON *before,
                       const cJSON *after)
{
    const char *second = NULL;
    const char *key = owner_key(w, kind, before, &second);
    if (!key || !before) return;
    bool released = false;
    const char *keys[] = {key, second};
    for (size_t i = 0; i < 2; i++)
        if (keys[i] && inv_holder_of_run(simw_annotation(before, keys[i]), run_name) &&
            !inv_holder_of_run(after ? simw_annotation(after, keys[i]) : NULL, run_name))
            released = true;
    if (!released) return;
    /* Only cleanup racing a theft: the Lease names another holder, or
     * another actor deleted it or emptied its holder (the core never
     * deletes the Lease: a deleted or emptied Lease is lost exactly as a
     * taken one). A run that freed
     * the Lease itself before releasing its fences (the §3.4 order
     * reversed) gets no waiver: the next run could take the Lease while
     * this one's fences still stand. */
    const rs_config *c = &w->cfg;
    cJSON *hold = NULL;
    const cJSON *lease = simw_peek(w, "Lease", c->lease_ns, c->lease_name, &hold);
    const char *path[] = {"spec", "holderIdentity"};
    const char *holder = simw_json_str(lease, path, 2);
    bool stolen = !lease || (holder && holder[0] && !inv_holder_of_run(holder, run_name)) ||
                  ((!holder || !holder[0]) && lease_emptied_by_another(w, run_name));
    cJSON_Delete(hold);
    if (!stolen) return;
    /* The call being performed is logged right after this, as max(seq)+1. */
    sqlite3_stmt *st = simw_stmt(w, "INSERT OR IGNORE INTO releases(run, call_seq) SELECT ?1,"
                                    " coalesce(max(seq), 0) + 1 FROM call_log");
    sqlite3_bind_text(st, 1, run_name, -1, SQLITE_STATIC);
    simw_step_done(w, st);
}

bool inv_was_release(sim_world *w, const char *run_name, long long seq)
{
    sqlite3_stmt *st = simw_stmt(w, "SELECT 1 FROM releases WHERE run = ?1 AND call_seq = ?2");
    sqlite3_bind_text(st, 1, run_name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, seq);
    bool hit = simw_step_row(w, st);
    sqlite3_reset(st);
    return hit;
}

bool inv_raced(sim_world *w, const char *run_name, const char *kind, const char *ns,
               const char *name, long long seq)
{
    char *ref = rs_xasprintf("%s/%s/%s", kind, ns, name);
    sqlite3_stmt *st = simw_stmt(
        w, "SELECT 1 FROM foreign_writes f WHERE f.run = ?1 AND f.ref = ?2 AND f.after_call < ?3"
           " AND f.after_call >= (SELECT coalesce(max(seq), 0) FROM call_log"
           "  WHERE run = ?1 AND target = ?2 AND op = 'kube.get' AND seq < ?3)"
           " AND NOT EXISTS (SELECT 1 FROM call_log WHERE run = ?1 AND seq > f.after_call"
           "  AND seq < ?3 AND applied = 1 AND op NOT IN ('kube.get', 'kube.list',"
           "  'openbao.read', 'talos.read-auth', 'talos.etcd-status', 'talos.etcd-alarms',"
           "  'registry.token', 'registry.manifest'))");
    sqlite3_bind_text(st, 1, run_name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, ref, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, seq);
    bool hit = simw_step_row(w, st);
    sqlite3_reset(st);
    free(ref);
    return hit;
}
