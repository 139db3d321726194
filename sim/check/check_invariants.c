/*
 * check_invariants.c — the checker the scenario runner runs after every run:
 * DESIGN.md §6 invariants 1, 3, 4, 5 and 6 judged from this run's call-log
 * rows, with invariant 2 delegated to check_converged.c and invariant 7 to
 * check_named.c.
 *
 * The one idea: a run is judged on evidence, never on its own word. The rows
 * check_stamp.c wrote at call time say what protected each write; after the
 * run the checker reads only this run's rows (indexed by run) and a handful
 * of objects — never the whole world — and says, one sentence per violation,
 * which promise was broken (worded by check_report.c).
 */
#include "sim/check/check_int.h"

#include "sim/check/check_expect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* kube.list Node calls that must separate the last Talos mutation (or the
 * fan-out read) from the root write: the two clean inventories of §3.3. */
#define INV_CLEAN_INVENTORIES 2
#define INV_CRASH_EXIT 137

/* ---- the mark ---- */

static long long max_seq(sim_world *w, const char *sql)
{
    sqlite3_stmt *st = simw_stmt(w, sql);
    long long v = simw_step_row(w, st) ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return v;
}

static cJSON *root_data(sim_world *w)
{
    const rs_config *c = &w->cfg;
    cJSON *obj = simw_get(w, "Secret", c->root_ns, c->root_name);
    cJSON *data = obj ? cJSON_DetachItemFromObjectCaseSensitive(obj, "data") : NULL;
    cJSON_Delete(obj);
    return data ? data : (obj ? cJSON_CreateObject() : NULL);
}

void inv_mark_take(sim_world *w, inv_mark *m)
{
    m->call_seq = max_seq(w, "SELECT coalesce(max(seq), 0) FROM call_log");
    m->violation_seq = max_seq(w, "SELECT coalesce(max(seq), 0) FROM violations");
    m->root_data = root_data(w);
}

void inv_mark_free(inv_mark *m)
{
    cJSON_Delete(m->root_data);
    m->root_data = NULL;
}

/* ---- the run's call log ---- */

/* What a logged call touched, as far as the fences are concerned. */
typedef enum inv_class {
    INV_OTHER,     /* reads; writes the invariants say nothing about */
    INV_LEASE,     /* the Lease itself */
    INV_FENCE,     /* the policy Kustomizations and the controller: the fence itself */
    INV_ROOT,      /* Secret flux-system/ksail-registry-credentials */
    INV_VARIABLES, /* Secret flux-system/variables-base */
    INV_FANOUT,    /* PushSecret, ExternalSecret, consumer Secrets, OpenBao */
    INV_NODE,      /* Node, eviction, talos.* mutations */
} inv_class;

typedef struct inv_call {
    long long seq;
    char *op;
    char *target;
    int status;
    bool applied, write, lease_held, fences_held;
    inv_class cls;
} inv_call;

typedef struct inv_log {
    inv_call *v;
    size_t n;
    bool normal_path;    /* the run wrote on the normal path, or ever held both policy fences */
    size_t cleanup_from; /* index after the last call made under both policy fences; 0 if none */
} inv_log;

static bool has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* target == "<kind>/<ns>/<name>" */
static bool ref_is(const char *target, const char *kind, const char *ns, const char *name)
{
    size_t k = strlen(kind), n = strlen(ns);
    return strncmp(target, kind, k) == 0 && target[k] == '/' &&
           strncmp(target + k + 1, ns, n) == 0 && target[k + 1 + n] == '/' &&
           strcmp(target + k + n + 2, name) == 0;
}

static bool is_consumer(const rs_config *c, const char *target)
{
    for (size_t i = 0; i < c->n_fanout; i++)
        if (ref_is(target, "Secret", c->fanout_namespaces[i], c->consumer_name)) return true;
    return false;
}

static inv_class kube_class(const rs_config *c, const char *t)
{
    if (ref_is(t, "Lease", c->lease_ns, c->lease_name)) return INV_LEASE;
    if (ref_is(t, "Kustomization", c->parent_ns, c->parent_name) ||
        ref_is(t, "Kustomization", c->child_ns, c->child_name) ||
        ref_is(t, "Deployment", c->controller_ns, c->controller_name))
        return INV_FENCE;
    if (ref_is(t, "Secret", c->root_ns, c->root_name)) return INV_ROOT;
    if (ref_is(t, "Secret", c->variables_ns, c->variables_name)) return INV_VARIABLES;
    if (has_prefix(t, "PushSecret/") || has_prefix(t, "ExternalSecret/") || is_consumer(c, t))
        return INV_FANOUT;
    if (has_prefix(t, "Node/")) return INV_NODE;
    return INV_OTHER;
}

static inv_class call_class(const rs_config *c, const char *op, const char *target)
{
    if (strcmp(op, "kube.evict") == 0) return INV_NODE;
    if (has_prefix(op, "kube.")) return kube_class(c, target);
    if (strcmp(op, "openbao.write") == 0) return INV_FANOUT;
    if (has_prefix(op, "talos.") && rs_op_is_write(rs_op_parse(op))) return INV_NODE;
    return INV_OTHER;
}

static void log_load(sim_world *w, const inv_mark *m, const char *run_name, inv_log *log)
{
    memset(log, 0, sizeof *log);
    size_t cap = 0;
    sqlite3_stmt *st = simw_stmt(w, "SELECT seq, op, target, status, applied, lease_held,"
                                    " fences_held FROM call_log WHERE run = ?1 AND seq > ?2"
                                    " ORDER BY seq");
    sqlite3_bind_text(st, 1, run_name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, m->call_seq);
    while (simw_step_row(w, st)) {
        if (log->n == cap)
            log->v = rs_xrealloc(log->v, (cap = cap ? cap * 2 : 256) * sizeof *log->v);
        inv_call *k = &log->v[log->n++];
        k->seq = sqlite3_column_int64(st, 0);
        k->op = simw_col_text(st, 1);
        k->target = simw_col_text(st, 2);
        k->status = sqlite3_column_int(st, 3);
        k->applied = sqlite3_column_int(st, 4) != 0;
        k->lease_held = sqlite3_column_int(st, 5) != 0;
        k->fences_held = sqlite3_column_int(st, 6) != 0;
        k->write = rs_op_is_write(rs_op_parse(k->op));
        k->cls = call_class(&w->cfg, k->op, k->target);
        bool normal_write = k->applied && (k->cls == INV_FANOUT || k->cls == INV_NODE);
        if (normal_write || k->fences_held) log->normal_path = true;
        if (k->fences_held) log->cleanup_from = log->n;
    }
    sqlite3_reset(st);
}

static void log_free(inv_log *log)
{
    for (size_t i = 0; i < log->n; i++) {
        free(log->v[i].op);
        free(log->v[i].target);
    }
    free(log->v);
}

/* "call 12 (kube.patch Secret/flux-system/variables-base)" */
static char *call_desc(const inv_mark *m, const inv_call *k)
{
    return rs_xasprintf("call %lld (%s %s)", k->seq - m->call_seq, k->op, k->target);
}

/* ---- invariant 1: no write outside the fence ---- */

static bool needs_policy_fences(inv_class cls)
{
    return cls == INV_ROOT || cls == INV_VARIABLES || cls == INV_FANOUT || cls == INV_NODE;
}

/* §3.4 orders cleanup child resume, parent resume, node cleanup, Lease
 * release: releasing a node claim after this run released its policy fences
 * is the design, not a write outside the fence (the Lease still covers it,
 * and invariant 4 judges any uncordon). Claims, drains and Talos writes get
 * no such pass. */
static bool is_node_cleanup(const inv_log *log, size_t i)
{
    const inv_call *k = &log->v[i];
    return log->cleanup_from > 0 && i >= log->cleanup_from && strcmp(k->op, "kube.patch") == 0 &&
           has_prefix(k->target, "Node/");
}

/* --recover-fences on the state a crash leaves (DESIGN §3.4 r2) releases the
 * dead run's child, then parent, then reclaims its `claimed` node fences, all
 * under the Lease it took over: those node writes come after the policy
 * fences by design. §6 still words the recovery exemption as "only the CAS
 * release of a terminal holder's Lease" (written before r2); the Lease
 * requirement stays. */
static bool is_recovery_reclaim(const inv_run *r, const inv_call *k)
{
    if (strcmp(k->op, "kube.patch") != 0 || !has_prefix(k->target, "Node/")) return false;
    for (size_t i = 0; i < r->n_args; i++)
        if (r->args[i] && strcmp(r->args[i], "--recover-fences") == 0) return true;
    return false;
}

/* Cleanup's CAS-guarded release of this run's own fence (a policy resume,
 * a claim hand-back) while another holder has the Lease: §3.4 releases what
 * this run holds on every exit path, and the suite's Lease-theft scenarios
 * call that race "by design". The Lease requirement is waived for exactly
 * those writes — recorded at call time as having removed this run's owner —
 * and for nothing else: a fence taken, a controller restarted or any
 * fan-out, Talos or root write without the Lease is still a violation. */
static bool is_release_after_theft(sim_world *w, const inv_report *rep, const inv_call *k)
{
    return inv_was_release(w, rep->run->name, k->seq);
}

/* Whether another actor released a policy fence between this run's last
 * proof of it and the write at seq (narrowing (b)): no client can see that
 * race, so the one raced write is judged as made under the fence — for the
 * root write's invariants 3 and 5 as for invariant 1. */
static bool policy_fence_raced(sim_world *w, const char *run, long long seq)
{
    const rs_config *c = &w->cfg;
    return inv_raced(w, run, "Kustomization", c->parent_ns, c->parent_name, seq) ||
           inv_raced(w, run, "Kustomization", c->child_ns, c->child_name, seq);
}

static void check_fence(sim_world *w, const inv_mark *m, const inv_log *log, inv_report *rep)
{
    for (size_t i = 0; i < log->n; i++) {
        const inv_call *k = &log->v[i];
        if (!k->write || !k->applied || k->cls == INV_LEASE) continue;
        char *d = call_desc(m, k);
        const rs_config *c = &w->cfg;
        if (!k->lease_held && is_release_after_theft(w, rep, k)) {
            /* cleanup of this run's own fence, racing the theft */
        } else if (!k->lease_held &&
                   inv_raced(w, rep->run->name, "Lease", c->lease_ns, c->lease_name, k->seq)) {
            /* taken between this run's last proof and this write */
        } else if (!k->lease_held)
            inv_report_add(rep, 1, "%s was applied while this run did not hold the Lease", d);
        else if (log->normal_path && needs_policy_fences(k->cls) && !k->fences_held &&
                 !is_node_cleanup(log, i) && !is_recovery_reclaim(rep->run, k) &&
                 !policy_fence_raced(w, rep->run->name, k->seq))
            inv_report_add(rep, 1,
                           "%s was applied on the normal path while this run did not hold both"
                           " policy fences",
                           d);
        free(d);
    }
}

/* ---- invariant 3: the root is written only after a clean round under the fence ---- */

static bool is_talos_mutation(const inv_call *k)
{
    return k->applied && has_prefix(k->op, "talos.") && k->write;
}

/* Whether the root write at index r passed cutover; *why (static text) says
 * what was missing when not. */
static bool root_write_ok(sim_world *w, const char *run, const inv_log *log, size_t r,
                          const char **why)
{
    const rs_config *c = &w->cfg;
    if (!log->v[r].fences_held && !policy_fence_raced(w, run, log->v[r].seq))
        return *why = "this run did not hold both policy fences", false;
    size_t vb = r;
    for (size_t i = r; i-- > 0;) {
        const inv_call *k = &log->v[i];
        if (strcmp(k->op, "kube.get") == 0 && k->status == 200 &&
            ref_is(k->target, "Secret", c->variables_ns, c->variables_name)) {
            vb = i;
            break;
        }
    }
    if (vb == r) return *why = "no fan-out read of variables-base preceded it", false;
    if (!log->v[vb].fences_held)
        return *why = "the round's fan-out read was not made under both policy fences", false;
    size_t lists = 0;
    for (size_t i = vb + 1; i < r; i++) {
        const inv_call *k = &log->v[i];
        if (is_talos_mutation(k))
            return *why = "a Talos mutation came between the round's fan-out read and it", false;
        if (strcmp(k->op, "kube.list") == 0 && k->status == 200 && strcmp(k->target, "Node") == 0)
            lists++;
    }
    if (lists < INV_CLEAN_INVENTORIES)
        return *why = "fewer than two node inventories followed the round's fan-out read", false;
    return true;
}

static bool is_applied_root_write(const inv_call *k)
{
    return k->cls == INV_ROOT && k->write && k->applied;
}

static void check_cutover(sim_world *w, const inv_mark *m, const inv_log *log, inv_report *rep)
{
    if (!log->normal_path) return; /* bootstrap paths write the root under the Lease alone */
    for (size_t i = 0; i < log->n; i++) {
        if (!is_applied_root_write(&log->v[i])) continue;
        const char *why = NULL;
        if (root_write_ok(w, rep->run->name, log, i, &why)) continue;
        char *d = call_desc(m, &log->v[i]);
        inv_report_add(rep, 3, "%s wrote the root secret outside a clean round under the fence: %s",
                       d, why);
        free(d);
    }
}

/* ---- invariant 5: a failed run leaves the root unchanged unless it passed cutover ---- */

static bool passed_cutover(sim_world *w, const char *run, const inv_log *log)
{
    for (size_t i = 0; i < log->n; i++) {
        const char *why = NULL;
        if (is_applied_root_write(&log->v[i]) &&
            (!log->normal_path || root_write_ok(w, run, log, i, &why)))
            return true;
    }
    return false;
}

static void check_failed_root(sim_world *w, const inv_mark *m, const inv_log *log, inv_report *rep)
{
    cJSON *now = root_data(w);
    bool same =
        (!now && !m->root_data) || (now && m->root_data && cJSON_Compare(now, m->root_data, true));
    cJSON_Delete(now);
    if (same || passed_cutover(w, rep->run->name, log)) return;
    inv_report_add(rep, 5,
                   "the run exited %d but the root secret %s/%s changed without passing cutover",
                   rep->run->exit_code, w->cfg.root_ns, w->cfg.root_name);
}

/* A run on the normal path of §3.3: none of the modes that stop early,
 * report, recover or take the bootstrap path. */
static bool args_normal_path(const inv_run *r)
{
    static const char *const other[] = {"--check-only", "--fences", "--recover-fences",
                                        "--allow-incomplete-fanout"};
    for (size_t i = 0; i < r->n_args; i++)
        for (size_t j = 0; j < RS_ARRAY_LEN(other); j++)
            if (r->args[i] && strcmp(r->args[i], other[j]) == 0) return false;
    return true;
}

/* ---- invariant 4 (recorded at call time) ---- */

static void check_recorded(sim_world *w, const inv_mark *m, inv_report *rep)
{
    sqlite3_stmt *st = simw_stmt(w, "SELECT invariant, message FROM violations"
                                    " WHERE run = ?1 AND seq > ?2 ORDER BY seq");
    sqlite3_bind_text(st, 1, rep->run->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, m->violation_seq);
    while (simw_step_row(w, st)) {
        int inv = sqlite3_column_int(st, 0);
        if (inv >= 1 && inv <= INV_COUNT)
            inv_report_add(rep, inv, "%s", (const char *)sqlite3_column_text(st, 1));
    }
    sqlite3_reset(st);
}

/* ---- the checker ---- */

void inv_check(sim_world *w, const inv_mark *m, const inv_run *r, cJSON *failures)
{
    inv_report rep = {.failures = failures, .run = r};
    inv_log log;
    log_load(w, m, r->name, &log);
    check_fence(w, m, &log, &rep);
    /* A crashed run did no cleanup by definition: only the call-time
     * invariants and the cutover rule judge it. */
    bool crashed = r->exit_code == INV_CRASH_EXIT;
    bool converged_judged = r->exit_code == 0 && args_normal_path(r);
    if (!crashed && converged_judged && !inv_is_off(r, 2)) inv_check_converged(w, &rep);
    if (!crashed && !converged_judged && !inv_is_off(r, 2)) inv_check_cordons(w, &rep);
    check_cutover(w, m, &log, &rep);
    check_recorded(w, m, &rep);
    if (!crashed && r->exit_code != 0 && !inv_is_off(r, 5)) check_failed_root(w, m, &log, &rep);
    if (!crashed && !inv_is_off(r, 7)) inv_check_named(w, &rep);
    if (!inv_is_off(r, 6))
        expect_no_plaintext(w, r->output ? r->output : "", "the run's output", failures);
    inv_report_fold(&rep);
    log_free(&log);
}
