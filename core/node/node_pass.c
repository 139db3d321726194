/*
 * node_pass.c — the Talos pass of the convergence loop (DESIGN.md §3.3 item 2).
 *
 * Inventories are read until two consecutive ones have no targets. A target
 * is a node whose verified revision or image annotation differs from desired,
 * or whose Talos RegistryAuthConfig differs from the desired credential (the
 * case a partial `ksail cluster update` leaves behind and annotations cannot
 * show). Targets are processed strictly one at a time, workers first, each
 * UID at most once per round. The pass result is `clean` when no node was
 * processed, `processed` otherwise; only a clean pass may precede cutover.
 * Every inventory proves every fact again — identity, annotations and the
 * Talos auth, batched — and a fact that changed since the previous inventory
 * is drift even where the node now looks current (DESIGN §3.3 r3).
 */
#include "core/kube/kube_pointer.h"
#include "core/node/node.h"
#include "core/txn_int.h"

#include <stdlib.h>
#include <string.h>

#define NODE_SEEN_MAX 4096

/* The one Talos auth read's verdict (unreadable or redacted: RS_UNKNOWN,
 * never RS_DIFFERS); remembered by UID for the inventory that read it. */
static rs_verdict node_auth_verdict(rs_txn *tx, const node_info *n, int st, const rs_resp *r)
{
    rs_verdict verdict = RS_UNKNOWN;
    if (st == 200 && r->body) {
        const cJSON *auth = cJSON_GetObjectItemCaseSensitive(r->body, "auth");
        const char *u = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(auth, "username"));
        const char *p = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(auth, "password"));
        bool redacted = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r->body, "redacted"));
        if (u && p && !redacted)
            verdict = ct_equal(u, strlen(u), tx->cred.username, strlen(tx->cred.username)) &&
                              ct_equal(p, strlen(p), tx->cred.password, strlen(tx->cred.password))
                          ? RS_EQUAL
                          : RS_DIFFERS;
    }
    if (tx->auth_cache_n < RS_ARRAY_LEN(tx->auth_cache)) {
        snprintf(tx->auth_cache[tx->auth_cache_n].uid, sizeof tx->auth_cache[0].uid, "%s", n->uid);
        tx->auth_cache[tx->auth_cache_n++].verdict = verdict;
    }
    if (verdict == RS_UNKNOWN) {
        bool listed = false;
        for (size_t i = 0; i < tx->n_annotation_only && !listed; i++)
            listed = strcmp(tx->annotation_only[i], n->name) == 0;
        if (!listed) {
            /* Once per node: every inventory reads the auth again (r3). */
            out_warning(tx->out,
                        "Talos auth of node %s could not be read; deciding on its "
                        "annotations alone",
                        n->name);
            tx->annotation_only = rs_xrealloc(tx->annotation_only, (tx->n_annotation_only + 1) *
                                                                       sizeof *tx->annotation_only);
            tx->annotation_only[tx->n_annotation_only++] = rs_xstrdup(n->name);
        }
    }
    return verdict;
}

static bool node_auth_cached(rs_txn *tx, const node_info *n, rs_verdict *verdict)
{
    for (size_t i = 0; i < tx->auth_cache_n; i++) {
        if (strcmp(tx->auth_cache[i].uid, n->uid) != 0) continue;
        *verdict = tx->auth_cache[i].verdict;
        return true;
    }
    return false;
}

/* The intent "read the registry auth for host H" for one node. */
static rs_req node_auth_req(rs_txn *tx, const node_info *n, const cJSON *body)
{
    return (rs_req){.op = RS_OP_TALOS_READ_AUTH,
                    .target = n->name,
                    .host = tx->cfg->registry_host,
                    .body = body};
}

/* Talos auth of a node vs desired. Cached by UID for one inventory: one read
 * per node per inventory. */
static rs_verdict node_auth_matches(rs_txn *tx, const node_info *n)
{
    rs_verdict verdict;
    if (node_auth_cached(tx, n, &verdict)) return verdict;
    cJSON *body = cJSON_CreateObject();
    cJSON_AddStringToObject(body, "host", tx->cfg->registry_host);
    rs_req req = node_auth_req(tx, n, body);
    rs_resp r;
    int st = gate_read(tx->gate, &req, &r);
    cJSON_Delete(body);
    verdict = node_auth_verdict(tx, n, st, &r);
    rs_resp_free(&r);
    return verdict;
}

/* Every uncached node's auth in one batch (transport v2): the no-drift
 * proof's Talos cost grows with ceil(nodes / parallelism) round trips, not
 * with the node count. Verdicts land in the cache node_auth_matches reads. */
static void node_auth_prefetch(rs_txn *tx, const node_inventory *inv)
{
    cJSON *body = cJSON_CreateObject();
    cJSON_AddStringToObject(body, "host", tx->cfg->registry_host);
    rs_req *reqs = rs_xcalloc(inv->n + 1, sizeof *reqs);
    rs_resp *resps = rs_xcalloc(inv->n + 1, sizeof *resps);
    const node_info **who = rs_xcalloc(inv->n + 1, sizeof *who);
    size_t k = 0;
    size_t room = RS_ARRAY_LEN(tx->auth_cache) - tx->auth_cache_n;
    for (size_t i = 0; i < inv->n && k < room; i++) {
        rs_verdict v;
        if (node_auth_cached(tx, &inv->nodes[i], &v)) continue;
        who[k] = &inv->nodes[i];
        reqs[k++] = node_auth_req(tx, &inv->nodes[i], body);
    }
    gate_read_batch(tx->gate, reqs, resps, k, tx->cfg->transport_parallelism);
    for (size_t i = 0; i < k; i++) {
        node_auth_verdict(tx, who[i], resps[i].status, &resps[i]);
        rs_resp_free(&resps[i]);
    }
    free(who);
    free(resps);
    free(reqs);
    cJSON_Delete(body);
}

/* A processed node's auth changed under us: forget the cached verdict. */
static void node_auth_forget(rs_txn *tx, const char *uid)
{
    for (size_t i = 0; i < tx->auth_cache_n; i++) {
        if (strcmp(tx->auth_cache[i].uid, uid) != 0) continue;
        tx->auth_cache[i] = tx->auth_cache[--tx->auth_cache_n];
        return;
    }
}

static node_mode node_target_mode(rs_txn *tx, const node_info *n)
{
    bool rev_ok = n->revision && strcmp(n->revision, tx->revision) == 0;
    bool img_ok = n->image && strcmp(n->image, tx->cfg->operator_image) == 0;
    rs_verdict auth = node_auth_matches(tx, n);
    if (rev_ok && img_ok && auth != RS_DIFFERS) return NODE_OK;
    if (auth == RS_EQUAL && proof_excuses(tx, n)) return NODE_PROOF_ONLY;
    if (!rev_ok || auth == RS_DIFFERS) return NODE_REBOOT;
    return NODE_IMAGE_ONLY;
}

static const char *mode_name(node_mode m)
{
    switch (m) {
    case NODE_PROOF_ONLY:
        return "proof-only";
    case NODE_IMAGE_ONLY:
        return "image-only";
    case NODE_REBOOT:
        return "reboot";
    default:
        return "none";
    }
}

tx_status node_inventory_read(rs_txn *tx, const char *label_selector, node_inventory *inv)
{
    rs_req req = {.op = RS_OP_KUBE_LIST, .kind = "Node", .label_selector = label_selector};
    rs_resp r;
    int st = gate_read(tx->gate, &req, &r);
    if (st != 200 || !r.body) {
        rs_fail(&tx->err, RS_FAILED, "listing Nodes%s%s failed (%s)",
                label_selector ? " with " : "", label_selector ? label_selector : "",
                rs_answer_of(&r).text);
        rs_resp_free(&r);
        return TX_FAIL;
    }
    rs_err e;
    rs_err_clear(&e);
    if (node_inventory_parse(r.body, &tx->cfg->ann, inv, &e) != RS_OK) {
        node_inventory_free(inv);
        rs_fail(&tx->err, RS_FAILED, "invalid node inventory: %s; failing closed", e.msg);
        return TX_FAIL;
    }
    node_inventory_sort(inv);
    return TX_OK;
}

/* An orphaned fence a reclaim may clear: owner, no journal, phase exactly
 * `claimed` (a missing phase is not innocent: it may predate phases). */
static bool node_reclaimable(const node_info *n)
{
    return n->owner && !n->journal && n->phase && strcmp(n->phase, "claimed") == 0;
}

/* After a lost reclaim: adopted only when the node shows no owner left. */
static kube_cas_seen node_reclaim_seen(void *ctx, int status, const cJSON *obj)
{
    rs_txn *tx = ctx;
    bool gone = status == 200 && obj && !kobj_annotation(obj, tx->cfg->ann.drain_owner);
    return gone ? KUBE_CAS_ADOPT : KUBE_CAS_NOT_OURS;
}

static tx_status node_reclaim(rs_txn *tx, const node_info *n)
{
    txn_drift(tx, "orphaned node fence (Node %s, owner %s, phase claimed)", n->name, n->owner);
    cJSON *patch = cJSON_CreateArray();
    kobj_patch_op(patch, "test", "/metadata/uid", cJSON_CreateString(n->uid));
    char *owner = kube_pointer_annotation(tx->cfg->ann.drain_owner);
    char *phase = kube_pointer_annotation(tx->cfg->ann.drain_phase);
    kobj_patch_op(patch, "test", owner, cJSON_CreateString(n->owner));
    kobj_patch_op(patch, "test", phase, cJSON_CreateString("claimed"));
    kobj_patch_op(patch, "remove", owner, NULL);
    kobj_patch_op(patch, "remove", phase, NULL);
    free(owner);
    free(phase);
    kube_cas_result res;
    kube_cas_end end = kobj_patch_once(tx, KUBE_CAS_GATED, GATE_NEED_FULL, "Node", NULL, n->name,
                                       patch, node_reclaim_seen, tx, &res);
    if (end == KUBE_CAS_RESTART) return TX_RESTART;
    if (end == KUBE_CAS_GATE_FAILED) return TX_FAIL;
    if (!kube_cas_ok(end)) {
        rs_fail(&tx->err, RS_FAILED, "reclaiming the fence on Node %s failed (%s)", n->name,
                res.answer.text);
        return TX_FAIL;
    }
    if (n->unschedulable)
        out_warning(tx->out,
                    "Node %s: orphaned fence reclaimed; the node is left cordoned on "
                    "purpose (its pre-claim schedulability is unknown)",
                    n->name);
    return TX_OK;
}

/* Names every node fence no reclaim can clear (owner, journal or a phase,
 * and not a plain `claimed` fence) into names; returns whether there is any.
 * A phase with no owner is a half-removed fence that may have a Talos write
 * in flight: residual, as `--fences` reports it (H26 over DESIGN §3.3). */
static bool node_unreclaimable(const node_inventory *inv, char *names, size_t len)
{
    names[0] = '\0';
    for (size_t i = 0; i < inv->n; i++) {
        const node_info *n = &inv->nodes[i];
        if ((!n->owner && !n->journal && !n->phase) || node_reclaimable(n)) continue;
        size_t used = strlen(names);
        snprintf(names + used, len - used, "%s%s (owner %s, phase %s%s)", used ? ", " : "", n->name,
                 n->owner ? n->owner : "none", n->phase ? n->phase : "missing",
                 n->journal ? ", recovery journal" : "");
    }
    return names[0] != '\0';
}

static tx_status node_residual_fail(rs_txn *tx, const char *names)
{
    rs_fail(&tx->err, RS_FAILED,
            "residual node fences: %s; failing closed (see "
            "`reassert --fences`)",
            names);
    return TX_FAIL;
}

/* Fences no reclaim can clear are looked for first (DESIGN §3.5 item 4 r2):
 * if any exist, fail naming them before reclaiming anything. Otherwise
 * reclaim orphaned `claimed` fences on the first inventory under the Lease.
 * Sets *again when a reclaim happened (re-read). */
static tx_status node_fences_check(rs_txn *tx, const node_inventory *inv, bool *again)
{
    *again = false;
    char names[1024];
    if (node_unreclaimable(inv, names, sizeof names)) return node_residual_fail(tx, names);
    for (size_t i = 0; i < inv->n; i++) {
        const node_info *n = &inv->nodes[i];
        if (!node_reclaimable(n)) continue;
        if (tx->lease_held && tx->reclaim_done) {
            /* Reclaimed once under this Lease and back again: someone else. */
            char one[300];
            snprintf(one, sizeof one, "%s (owner %s, phase claimed)", n->name, n->owner);
            return node_residual_fail(tx, one);
        }
        tx_status s = node_reclaim(tx, n);
        if (s != TX_OK) return s;
        *again = true;
    }
    if (tx->lease_held) tx->reclaim_done = true;
    return TX_OK;
}

tx_status node_fences_preflight(rs_txn *tx)
{
    node_inventory inv;
    tx_status s = node_inventory_read(tx, NULL, &inv);
    if (s != TX_OK) return s;
    char names[1024];
    if (node_unreclaimable(&inv, names, sizeof names)) s = node_residual_fail(tx, names);
    node_inventory_free(&inv);
    return s;
}

/* TEST-ONLY (rs_broken RS_BROKEN_ROOT_EARLY): a node someone else cordoned. */
static bool node_foreign_cordon(const node_inventory *inv)
{
    for (size_t i = 0; i < inv->n; i++)
        if (inv->nodes[i].unschedulable && !inv->nodes[i].owner) return true;
    return false;
}

/* A node whose identity differs from the one the previous inventory showed
 * under its name (another UID or InternalIP), or that the previous inventory
 * did not show at all: the facts proven there are not this node's (DESIGN
 * §3.3 r3). Writes what changed into why. */
static bool node_identity_changed(const node_inventory *prev, const node_info *n, char *why,
                                  size_t len)
{
    for (size_t i = 0; i < prev->n; i++) {
        const node_info *p = &prev->nodes[i];
        if (strcmp(p->name, n->name) != 0) continue;
        if (strcmp(p->uid, n->uid) != 0) {
            snprintf(why, len, "UID %s -> %s", p->uid, n->uid);
            return true;
        }
        if (strcmp(p->ip, n->ip) != 0) {
            snprintf(why, len, "InternalIP %s -> %s", p->ip, n->ip);
            return true;
        }
        return false;
    }
    snprintf(why, len, "joined with UID %s", n->uid);
    return true;
}

/* A fact changed between two inventories on a node that is no target now:
 * drift all the same (DESIGN §3.3 r3). Without the full fence (lazy's
 * read-only pass) take it and restart the round, so the node is proven again
 * under the fence; under it, the clean streak starts over. */
static tx_status node_changed_between(rs_txn *tx, int *clean_streak)
{
    *clean_streak = 0;
    if (gate_held(tx->gate) >= GATE_NEED_FULL) return TX_OK;
    if (gate_take(tx->gate, GATE_NEED_FULL, &tx->err) != RS_OK) return TX_FAIL;
    return TX_RESTART;
}

/* One inventory's reads: the Node list and, in one batch, every node's Talos
 * auth — read again on every inventory, never taken from an earlier one, so
 * an auth reverted between two inventories is seen (DESIGN §3.3 r3). */
static tx_status node_inventory_prove(rs_txn *tx, node_inventory *inv, bool *again)
{
    tx_status s = node_inventory_read(tx, NULL, inv);
    if (s != TX_OK) return s;
    s = node_fences_check(tx, inv, again);
    if (s != TX_OK || *again) return s;
    tx->auth_cache_n = 0;
    node_auth_prefetch(tx, inv);
    if (!tx->opt->require_auth_proof) return TX_OK;
    /* Every node's auth must be proven before any node is touched. */
    for (size_t i = 0; i < inv->n; i++) {
        if (node_auth_matches(tx, &inv->nodes[i]) != RS_UNKNOWN) continue;
        rs_fail(&tx->err, RS_FAILED,
                "Talos auth of node %s could not be read and --require-auth-proof "
                "is set; failing before any Talos write (a reader-role talosconfig "
                "sees the auth redacted)",
                inv->nodes[i].name);
        return TX_FAIL;
    }
    return TX_OK;
}

tx_status node_pass(rs_txn *tx, bool *processed)
{
    *processed = false;
    char(*seen)[NODE_UID_MAX] = rs_xcalloc(NODE_SEEN_MAX, NODE_UID_MAX);
    size_t n_seen = 0;
    int clean_streak = 0;
    int inventories_max = tx->cfg->sync_attempts * 4;
    node_inventory prev = {0};
    bool have_prev = false;
    int64_t reads_ms = 0;
    out_group_begin(tx->out, "Talos pass");
    tx_status s = TX_OK;
    for (int inv_i = 0; inv_i < inventories_max && s == TX_OK; inv_i++) {
        /* One sync interval between two observations of each fact: the
         * previous inventory's own reads count towards it (its 1,000 auth
         * reads take 63 round trips), so each node's auth is read twice one
         * interval apart, and a larger cluster does not pay its reads twice. */
        if (inv_i > 0)
            gate_sleep_ms(tx->gate, reads_ms < tx->cfg->sync_interval_ms
                                        ? tx->cfg->sync_interval_ms - reads_ms
                                        : 0);
        int64_t reads_begin = gate_now_ms(tx->gate);
        node_inventory inv = {0};
        bool again = false;
        s = node_inventory_prove(tx, &inv, &again);
        reads_ms = gate_now_ms(tx->gate) - reads_begin;
        if (s != TX_OK) {
            node_inventory_free(&inv);
            break;
        }
        if (again) {
            node_inventory_free(&prev);
            prev = inv;
            have_prev = true;
            clean_streak = 0;
            continue;
        }
        bool any = false, changed = false;
        for (size_t i = 0; i < inv.n && s == TX_OK; i++) {
            node_info *n = &inv.nodes[i];
            bool done = false;
            for (size_t j = 0; j < n_seen; j++)
                done = done || strcmp(seen[j], n->uid) == 0;
            node_mode m = node_target_mode(tx, n);
            if (m == NODE_OK) {
                char why[300];
                if (have_prev && node_identity_changed(&prev, n, why, sizeof why)) {
                    txn_drift(tx, "node changed between two inventories: %s (Node %s)", why,
                              n->name);
                    changed = true;
                }
                continue;
            }
            any = true;
            if (done) {
                /* Processed this round and still a target: the next round re-proves it. */
                continue;
            }
            txn_drift(tx, "node needs %s (Node %s)", mode_name(m), n->name);
            s = node_process(tx, n, m);
            node_auth_forget(tx, n->uid);
            if (s == TX_OK) {
                *processed = true;
                if (n_seen < NODE_SEEN_MAX) snprintf(seen[n_seen++], NODE_UID_MAX, "%s", n->uid);
            }
        }
        if (s == TX_OK && !any && changed) s = node_changed_between(tx, &clean_streak);
        if (s == TX_OK && !any && !changed) proof_remember(tx, &inv);
        bool root_early =
            tx->opt->strategy->broken == RS_BROKEN_ROOT_EARLY && node_foreign_cordon(&inv);
        node_inventory_free(&prev);
        prev = inv;
        have_prev = true;
        if (s != TX_OK) break;
        clean_streak = any || changed ? 0 : clean_streak + 1;
        /* Two clean inventories in a row (one: a TEST-ONLY defect, rs_broken). */
        if (clean_streak >= (root_early ? 1 : 2)) {
            out_info(tx->out, "Talos pass %s", *processed ? "processed nodes" : "clean");
            out_group_end(tx->out);
            node_inventory_free(&prev);
            free(seen);
            return TX_OK;
        }
    }
    out_group_end(tx->out);
    node_inventory_free(&prev);
    free(seen);
    if (s == TX_OK) {
        rs_fail(&tx->err, RS_FAILED, "Talos pass did not settle within %d inventories",
                inventories_max);
        s = TX_FAIL;
    }
    return s;
}
