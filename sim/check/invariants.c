/*
 * invariants.c — the DESIGN.md §6 invariants: what the sim transport records
 * at call time, and the checker the scenario runner runs after every run.
 *
 * The one idea: the protection a write had is a fact of the moment it was
 * made. The transport stamps every call-log row with whether this run held
 * the Lease and both policy fences just before the call, and records as a
 * violation what only that moment shows (an uncordon of a node this run did
 * not cordon, a second node rebooting, a control plane rebooted beside an
 * unhealthy peer). After the run, the checker reads this run's rows (indexed
 * by run) and a handful of objects — never the whole world — and says, one
 * sentence per violation, which promise was broken. Credentials are compared
 * with the core's own canonical comparison and never printed.
 */
#include "sim/check/invariants.h"

#include "core/cred/cred.h"
#include "sim/check/expect.h"
#include "sim/store/store.h"
#include "sim/world/world_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per invariant, sentences beyond this many are folded into one count, so a
 * core that writes everything unfenced still yields a readable report. */
#define INV_REPORT_MAX 8
#define INV_RUN_REF_MAX 512
/* kube.list Node calls that must separate the last Talos mutation (or the
 * fan-out read) from the root write: the two clean inventories of §3.3. */
#define INV_CLEAN_INVENTORIES 2

static bool str_eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

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

/* ---- call time ---- */

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
    cJSON *ks = simw_get(w, "Kustomization", ns, name);
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(ks, "spec");
    bool held = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "suspend")) &&
                inv_holder_of_run(simw_annotation(ks, owner_key), run_name);
    cJSON_Delete(ks);
    return held;
}

void inv_fence_flags(sim_world *w, const char *run_name, bool *lease_held, bool *fences_held)
{
    const rs_config *c = &w->cfg;
    cJSON *lease = simw_get(w, "Lease", c->lease_ns, c->lease_name);
    const char *path[] = {"spec", "holderIdentity"};
    *lease_held = inv_holder_of_run(simw_json_str(lease, path, 2), run_name);
    cJSON_Delete(lease);
    *fences_held =
        ks_fence_of_run(w, c->parent_ns, c->parent_name, SIMW_ANN_PARENT_OWNER, run_name) &&
        ks_fence_of_run(w, c->child_ns, c->child_name, SIMW_ANN_HANDOFF_OWNER, run_name);
}

static bool node_unschedulable(const cJSON *node)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(node, "spec"), "unschedulable"));
}

static bool cordon_is_ours(sim_world *w, const char *run_name, const char *node)
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
    bool was = node_unschedulable(before), now = node_unschedulable(after);
    if (!was && now) {
        sqlite3_stmt *st = simw_stmt(w, "INSERT OR IGNORE INTO cordons(run, node) VALUES(?1, ?2)");
        sqlite3_bind_text(st, 1, run_name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, node, -1, SQLITE_STATIC);
        simw_step_done(w, st);
        return;
    }
    if (!was || now) return;
    bool owner_ours = inv_holder_of_run(simw_annotation(before, SIMW_ANN_DRAIN_OWNER), run_name);
    bool cordoned_ours = cordon_is_ours(w, run_name, node);
    if (owner_ours && cordoned_ours) return;
    inv_violation(w, run_name, 4, "uncordoned Node/%s, which this run did not cordon (%s)", node,
                  !cordoned_ours ? "it was already unschedulable when this run came to it"
                                 : "its drain owner did not name this run");
}

/* Why a control-plane peer cannot lose a member now; NULL when it can. */
static const char *peer_unhealthy(sim_world *w, const char *peer)
{
    if (simw_talos_int(w, peer, "rebooting")) return "rebooting";
    if (!simw_talos_int(w, peer, "etcd_healthy")) return "etcd unhealthy";
    cJSON *obj = simw_get(w, "Node", NULL, peer);
    const char *ready = obj ? simw_condition_status(obj, "Ready") : NULL;
    bool ok = str_eq(ready, "True");
    cJSON_Delete(obj);
    return ok ? NULL : "Node not Ready";
}

void inv_at_reboot(sim_world *w, const char *run_name, const char *node)
{
    bool cp = false;
    sqlite3_stmt *st = simw_stmt(w, "SELECT role FROM talos WHERE node = ?1");
    sqlite3_bind_text(st, 1, node, -1, SQLITE_STATIC);
    if (simw_step_row(w, st))
        cp = str_eq((const char *)sqlite3_column_text(st, 0), "control-plane");
    sqlite3_reset(st);
    st = simw_stmt(w, "SELECT node, role, rebooting FROM talos WHERE node <> ?1 ORDER BY node");
    sqlite3_bind_text(st, 1, node, -1, SQLITE_STATIC);
    char **peers = NULL;
    size_t n = 0, cap = 0;
    while (simw_step_row(w, st)) {
        char *peer = simw_col_text(st, 0);
        if (sqlite3_column_int(st, 2))
            inv_violation(w, run_name, 4, "rebooted %s while %s was still rebooting", node, peer);
        if (cp && str_eq((const char *)sqlite3_column_text(st, 1), "control-plane")) {
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
        if (why && !str_eq(why, "rebooting"))
            inv_violation(w, run_name, 4,
                          "rebooted control plane %s while control plane %s was"
                          " unhealthy (%s)",
                          node, peers[i], why);
        free(peers[i]);
    }
    free(peers);
}

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

/* ---- reporting ---- */

typedef struct inv_report {
    cJSON *failures;
    const inv_run *run;
    int counts[INV_COUNT + 1];
} inv_report;

static bool inv_is_off(const inv_run *r, int invariant)
{
    for (size_t i = 0; i < r->n_off; i++)
        if (r->off[i] == invariant) return true;
    return false;
}

static void report(inv_report *rep, int invariant, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void report(inv_report *rep, int invariant, const char *fmt, ...)
{
    if (inv_is_off(rep->run, invariant)) return;
    if (++rep->counts[invariant] > INV_REPORT_MAX) return;
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char *line = rs_xasprintf("invariant %d: %s", invariant, msg);
    cJSON_AddItemToArray(rep->failures, cJSON_CreateString(line));
    free(line);
}

static void report_folded(inv_report *rep)
{
    for (int i = 1; i <= INV_COUNT; i++) {
        if (rep->counts[i] <= INV_REPORT_MAX) continue;
        char *line = rs_xasprintf("invariant %d: %d more violations like the above", i,
                                  rep->counts[i] - INV_REPORT_MAX);
        cJSON_AddItemToArray(rep->failures, cJSON_CreateString(line));
        free(line);
    }
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

static bool ref_is(const char *target, const char *kind, const char *ns, const char *name)
{
    char *want = rs_xasprintf("%s/%s/%s", kind, ns, name);
    bool eq = strcmp(target, want) == 0;
    free(want);
    return eq;
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

static void check_fence(const inv_mark *m, const inv_log *log, inv_report *rep)
{
    for (size_t i = 0; i < log->n; i++) {
        const inv_call *k = &log->v[i];
        if (!k->write || !k->applied || k->cls == INV_LEASE) continue;
        char *d = call_desc(m, k);
        if (!k->lease_held)
            report(rep, 1, "%s was applied while this run did not hold the Lease", d);
        else if (log->normal_path && needs_policy_fences(k->cls) && !k->fences_held &&
                 !is_node_cleanup(log, i))
            report(rep, 1,
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
static bool root_write_ok(sim_world *w, const inv_log *log, size_t r, const char **why)
{
    const rs_config *c = &w->cfg;
    if (!log->v[r].fences_held) return *why = "this run did not hold both policy fences", false;
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
        if (root_write_ok(w, log, i, &why)) continue;
        char *d = call_desc(m, &log->v[i]);
        report(rep, 3, "%s wrote the root secret outside a clean round under the fence: %s", d,
               why);
        free(d);
    }
}

/* ---- invariant 5: a failed run leaves the root unchanged unless it passed cutover ---- */

static bool passed_cutover(sim_world *w, const inv_log *log)
{
    for (size_t i = 0; i < log->n; i++) {
        const char *why = NULL;
        if (is_applied_root_write(&log->v[i]) &&
            (!log->normal_path || root_write_ok(w, log, i, &why)))
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
    if (same || passed_cutover(w, log)) return;
    report(rep, 5, "the run exited %d but the root secret %s/%s changed without passing cutover",
           rep->run->exit_code, w->cfg.root_ns, w->cfg.root_name);
}

/* ---- invariant 2: a successful normal-path run leaves everything converged ---- */

typedef struct inv_want {
    rs_cred cred;
    char revision[65];
} inv_want;

static char *secret_key_text(sim_world *w, const char *ns, const char *name, const char *key)
{
    cJSON *obj = simw_get(w, "Secret", ns, name);
    const cJSON *v =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "data"), key);
    char *text = NULL;
    if (cJSON_IsString(v)) {
        size_t len = 0;
        unsigned char *raw = base64_decode(v->valuestring, &len);
        if (raw) {
            text = rs_xmalloc(len + 1);
            memcpy(text, raw, len);
            text[len] = '\0';
            free(raw);
        }
    }
    cJSON_Delete(obj);
    return text;
}

static bool text_is_desired(const inv_want *want, const char *text)
{
    return text && cred_matches_text(&want->cred, text, strlen(text));
}

static void check_secret(sim_world *w, const inv_want *want, const char *ns, const char *name,
                         const char *key, inv_report *rep)
{
    char *text = secret_key_text(w, ns, name, key);
    if (!text_is_desired(want, text))
        report(rep, 2, "exit 0 but Secret %s/%s key %s %s", ns, name, key,
               text ? "does not hold the desired credential" : "is missing");
    free(text);
}

static void check_node(sim_world *w, const inv_want *want, const cJSON *node, const char *run_name,
                       inv_report *rep)
{
    const char *path[] = {"metadata", "name"};
    const char *name = simw_json_str(node, path, 2);
    if (!name) return;
    if (!str_eq(simw_annotation(node, SIMW_ANN_REVISION), want->revision))
        report(rep, 2, "exit 0 but Node/%s does not carry the desired verified revision", name);
    if (!str_eq(simw_annotation(node, SIMW_ANN_IMAGE), w->cfg.operator_image))
        report(rep, 2, "exit 0 but Node/%s does not carry the verified image %s", name,
               w->cfg.operator_image);
    char *auth = sim_world_talos_auth(w, name);
    if (!text_is_desired(want, auth))
        report(rep, 2, "exit 0 but the Talos registry auth of %s is not the desired credential",
               name);
    free(auth);
    if (inv_holder_of_run(simw_annotation(node, SIMW_ANN_DRAIN_OWNER), run_name))
        report(rep, 2, "exit 0 but Node/%s still carries this run's drain owner", name);
    else if (node_unschedulable(node) && cordon_is_ours(w, run_name, name))
        report(rep, 2, "exit 0 but Node/%s is still cordoned by this run", name);
}

static void check_nodes(sim_world *w, const inv_want *want, const char *run_name, inv_report *rep)
{
    cJSON *list = NULL;
    if (store_list(w->db, "Node", NULL, NULL, NULL, &list) != 200) {
        report(rep, 2, "exit 0 but the nodes could not be listed");
        cJSON_Delete(list);
        return;
    }
    const cJSON *node;
    cJSON_ArrayForEach(node, cJSON_GetObjectItemCaseSensitive(list, "items"))
        check_node(w, want, node, run_name, rep);
    cJSON_Delete(list);
}

static void check_policy_released(sim_world *w, const char *ns, const char *name,
                                  const char *owner_key, bool child, inv_report *rep)
{
    cJSON *ks = simw_get(w, "Kustomization", ns, name);
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(ks, "spec");
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "suspend")))
        report(rep, 2, "exit 0 but Kustomization %s/%s is still suspended", ns, name);
    if (simw_annotation(ks, owner_key))
        report(rep, 2, "exit 0 but Kustomization %s/%s still carries %s", ns, name, owner_key);
    if (child && str_eq(simw_annotation(ks, SIMW_ANN_RECONCILE), "disabled"))
        report(rep, 2, "exit 0 but Kustomization %s/%s still has reconcile disabled", ns, name);
    cJSON_Delete(ks);
}

static void check_fences_released(sim_world *w, inv_report *rep)
{
    const rs_config *c = &w->cfg;
    check_policy_released(w, c->parent_ns, c->parent_name, SIMW_ANN_PARENT_OWNER, false, rep);
    check_policy_released(w, c->child_ns, c->child_name, SIMW_ANN_HANDOFF_OWNER, true, rep);
    cJSON *lease = simw_get(w, "Lease", c->lease_ns, c->lease_name);
    const char *path[] = {"spec", "holderIdentity"};
    const char *holder = simw_json_str(lease, path, 2);
    if (holder && holder[0])
        report(rep, 2, "exit 0 but Lease %s/%s is still held", c->lease_ns, c->lease_name);
    cJSON_Delete(lease);
}

static bool want_load(sim_world *w, const char *desired, inv_want *want, inv_report *rep)
{
    char *text = NULL, *cipher = NULL;
    rs_err e;
    rs_err_clear(&e);
    bool ok = sim_world_credential(w, desired, &text, &cipher, &e) == RS_OK &&
              cred_parse(text, strlen(text), "desired credential", &want->cred, &e) == RS_OK;
    if (ok && revision_of_ciphertext(cipher, want->revision, &e) != RS_OK) {
        cred_free(&want->cred);
        ok = false;
    }
    if (!ok) report(rep, 2, "cannot judge convergence: %s", e.msg);
    if (text) memset(text, 0, strlen(text));
    free(text);
    free(cipher);
    return ok;
}

static void check_converged(sim_world *w, inv_report *rep)
{
    const rs_config *c = &w->cfg;
    inv_want want;
    if (!want_load(w, rep->run->desired, &want, rep)) return;
    for (size_t i = 0; i < c->n_fanout; i++)
        check_secret(w, &want, c->fanout_namespaces[i], c->consumer_name, c->consumer_key, rep);
    check_secret(w, &want, c->variables_ns, c->variables_name, c->variables_key, rep);
    char *seed = sim_world_openbao_value(w, c->openbao_path);
    if (!text_is_desired(&want, seed))
        report(rep, 2, "exit 0 but the OpenBao seed %s %s", c->openbao_path,
               seed ? "does not hold the desired credential" : "is missing");
    free(seed);
    check_secret(w, &want, c->root_ns, c->root_name, c->root_key, rep);
    check_nodes(w, &want, rep->run->name, rep);
    check_fences_released(w, rep);
    cred_free(&want.cred);
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
            report(rep, inv, "%s", (const char *)sqlite3_column_text(st, 1));
    }
    sqlite3_reset(st);
}

/* ---- the checker ---- */

#define INV_CRASH_EXIT 137

void inv_check(sim_world *w, const inv_mark *m, const inv_run *r, cJSON *failures)
{
    inv_report rep = {.failures = failures, .run = r};
    inv_log log;
    log_load(w, m, r->name, &log);
    check_fence(m, &log, &rep);
    /* A crashed run did no cleanup by definition: only the call-time
     * invariants and the cutover rule judge it. */
    bool crashed = r->exit_code == INV_CRASH_EXIT;
    if (!crashed && r->exit_code == 0 && args_normal_path(r) && !inv_is_off(r, 2))
        check_converged(w, &rep);
    check_cutover(w, m, &log, &rep);
    check_recorded(w, m, &rep);
    if (!crashed && r->exit_code != 0 && !inv_is_off(r, 5)) check_failed_root(w, m, &log, &rep);
    if (!inv_is_off(r, 6))
        expect_no_plaintext(w, r->output ? r->output : "", "the run's output", failures);
    report_folded(&rep);
    log_free(&log);
}
