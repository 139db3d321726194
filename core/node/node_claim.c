/*
 * node_claim.c — the node fence (DESIGN.md §3.3 "Per node", §3.4 "node
 * cleanup"): the claim, the recheck before every later step, the phase
 * advance, the release and what cleanup does with a claim a failure left.
 *
 * The one idea: the claim records what the node looked like (cordon,
 * non-lifecycle taints); before every later step a fresh read must show the
 * same node, still fenced by this run, still cordoned, with those taints and
 * not being removed by the autoscaler (H87–H92). Anything else stops the
 * node's procedure naming the cause, and this run never uncordons a node
 * whose scheduling state someone else changed. An unrelated write that only
 * moved the resourceVersion before the claim is re-read and claimed again,
 * bounded (H77).
 */
#include "core/kube/kube_pointer.h"
#include "core/node/node_int.h"

#include <stdlib.h>
#include <string.h>

#define NODE_AUTOSCALER_DELETE_TAINT "ToBeDeletedByClusterAutoscaler"

/* Whether obj (a fresh Node) is still n: same UID, InternalIP and role. */
static bool node_same_identity(rs_txn *tx, const node_info *n, const cJSON *obj)
{
    cJSON *list = cJSON_CreateObject();
    cJSON_AddItemToArray(cJSON_AddArrayToObject(list, "items"), cJSON_Duplicate(obj, 1));
    node_inventory inv;
    rs_err e;
    rs_err_clear(&e);
    bool ok = node_inventory_parse(list, &tx->cfg->ann, &inv, &e) == RS_OK && inv.n == 1;
    const node_info *m = ok ? &inv.nodes[0] : NULL;
    bool same = ok && strcmp(m->uid, n->uid) == 0 && strcmp(m->ip, n->ip) == 0 &&
                m->control_plane == n->control_plane;
    node_inventory_free(&inv);
    return same;
}

/* The autoscaler is removing the node (H92): never reboot or uncordon it. */
static bool node_autoscaler_deleting(const cJSON *node)
{
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(
                              cJSON_GetObjectItemCaseSensitive(node, "spec"), "taints"))
    {
        const char *k = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "key"));
        if (k && strcmp(k, NODE_AUTOSCALER_DELETE_TAINT) == 0) return true;
    }
    return false;
}

static void node_identity_fail(rs_err *e, const node_info *n)
{
    rs_fail(e, RS_FAILED,
            "Node %s changed identity (UID/InternalIP/role) since the inventory; refusing to "
            "mutate it (replaced mid-roll?)",
            n->name);
}

tx_status node_recheck(rs_txn *tx, const node_info *n, const char *before,
                       char boot[NODE_BOOT_ID_MAX])
{
    rs_resp r;
    int st = kobj_get(tx, "Node", NULL, n->name, &r);
    if (st != 200 || !r.body) {
        rs_fail(&tx->err, RS_FAILED, "revalidating Node %s before %s failed (%s); failing closed",
                n->name, before, rs_answer_of(&r).text);
        rs_resp_free(&r);
        return TX_FAIL;
    }
    const cJSON *obj = r.body;
    if (boot) node_boot_id(obj, boot);
    const char *owner = kobj_annotation(obj, tx->cfg->ann.drain_owner);
    const char *phase = kobj_annotation(obj, tx->cfg->ann.drain_phase);
    char *taints = node_taints_signature(obj);
    const char *why = NULL;
    bool lost = false;
    if (!node_same_identity(tx, n, obj)) {
        node_identity_fail(&tx->err, n);
        why = "";
    } else if (!owner || strcmp(owner, tx->holder) != 0) {
        lost = true; /* H91: someone else's fence now; never touched again */
        rs_fail(&tx->err, RS_FAILED,
                "Node %s, rechecked before %s: its fence owner is no longer this run (now %s); "
                "failing closed without touching it",
                n->name, before, owner ? owner : "none");
        why = "";
    } else if (!phase || strcmp(phase, "mutating") != 0) {
        why = "its fence phase is no longer `mutating`";
    } else if (node_autoscaler_deleting(obj)) {
        why = "the cluster autoscaler is removing it (taint " NODE_AUTOSCALER_DELETE_TAINT
              "), so it is never rebooted or uncordoned";
    } else if (!kobj_bool(obj, "spec", "unschedulable")) {
        why = "someone uncordoned it: its scheduling state changed";
    } else if (!tx->claimed_taints || strcmp(taints, tx->claimed_taints) != 0) {
        why = "its taints changed since the claim: its scheduling state changed";
    }
    free(taints);
    rs_resp_free(&r);
    if (!why) return TX_OK;
    if (why[0])
        rs_fail(&tx->err, RS_FAILED, "Node %s, rechecked before %s: %s; failing closed", n->name,
                before, why);
    if (lost) {
        tx->claimed_node[0] = '\0';
        tx->claimed_keep = NULL;
    }
    return TX_FAIL;
}

/* What a node fence write leaves behind, for adopting its lost answer. */
typedef struct node_left {
    rs_txn *tx;
    bool check_owner;
    const char *owner; /* with check_owner: our holder, or NULL for "no owner" */
    const char *phase; /* NULL: not checked */
    /* The phase before our write: a re-read still showing it, with our owner,
     * means the write was not applied — plan it again (DESIGN §3.3
     * "Ambiguous writes": the old value => retry under CAS). NULL: never. */
    const char *retry_phase;
} node_left;

/* After a lost answer: the re-read shows exactly what our write leaves. */
static kube_cas_seen node_left_seen(void *ctx, int status, const cJSON *obj)
{
    node_left *l = ctx;
    if (status != 200 || !obj) return KUBE_CAS_NOT_OURS;
    const char *o = kobj_annotation(obj, l->tx->cfg->ann.drain_owner);
    const char *ph = kobj_annotation(obj, l->tx->cfg->ann.drain_phase);
    bool owner_ok = !l->check_owner || (l->owner ? o && strcmp(o, l->owner) == 0 : o == NULL);
    bool phase_ok = !l->phase || (ph && strcmp(ph, l->phase) == 0);
    if (owner_ok && phase_ok) return KUBE_CAS_ADOPT;
    if (l->retry_phase && o && strcmp(o, l->tx->holder) == 0 && ph &&
        strcmp(ph, l->retry_phase) == 0)
        return KUBE_CAS_RETRY;
    return KUBE_CAS_NOT_OURS;
}

/* The claim's plan: what the first read showed (cordon, taints) is what a
 * retry after a conflict must still show (H77, H79). */
typedef struct node_claim_ctx {
    rs_txn *tx;
    const node_info *n;
    bool was_cordoned;
    char *taints; /* owned; from the first read */
} node_claim_ctx;

static kube_cas_step node_claim_plan(void *ctx, const kube_cas_view *v, kube_cas_req *w, rs_err *e)
{
    node_claim_ctx *c = ctx;
    rs_txn *tx = c->tx;
    const char *name = c->n->name;
    if (v->read_status != 200 || !v->cur) {
        rs_fail(e, RS_FAILED, "revalidating Node %s failed (%s); failing closed", name,
                v->read_answer.text);
        return KUBE_CAS_REFUSE;
    }
    if (!node_same_identity(tx, c->n, v->cur)) {
        node_identity_fail(e, c->n);
        return KUBE_CAS_REFUSE;
    }
    const char *owner = kobj_annotation(v->cur, tx->cfg->ann.drain_owner);
    if (owner || kobj_annotation(v->cur, tx->cfg->ann.drain_journal)) {
        rs_fail(e, RS_FAILED, "Node %s carries a fence (owner %s); failing closed", name,
                owner ? owner : "journal");
        return KUBE_CAS_REFUSE;
    }
    if (node_autoscaler_deleting(v->cur)) {
        rs_fail(e, RS_FAILED,
                "Node %s is being removed by the cluster autoscaler "
                "(taint " NODE_AUTOSCALER_DELETE_TAINT "); refusing to claim it; failing closed",
                name);
        return KUBE_CAS_REFUSE;
    }
    bool cordoned = kobj_bool(v->cur, "spec", "unschedulable");
    char *taints = node_taints_signature(v->cur);
    if (v->attempt == 0) {
        c->was_cordoned = cordoned;
        c->taints = taints;
    } else {
        bool same_taints = strcmp(taints, c->taints) == 0;
        free(taints);
        if (cordoned != c->was_cordoned || !same_taints) {
            rs_fail(e, RS_FAILED,
                    "claiming the cordon on Node %s failed (%s): its %s changed since it "
                    "was read; failing closed",
                    name, v->prev_answer.text,
                    cordoned != c->was_cordoned ? "schedulability (cordon)" : "taints");
            return KUBE_CAS_REFUSE;
        }
    }
    cJSON *patch = cJSON_CreateArray();
    kobj_patch_op(patch, "test", "/metadata/resourceVersion", cJSON_CreateString(kobj_rv(v->cur)));
    kobj_patch_op(patch, "test", "/metadata/uid", cJSON_CreateString(c->n->uid));
    if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(v->cur, "metadata"), "annotations")))
        kobj_patch_op(patch, "add", "/metadata/annotations", cJSON_CreateObject());
    char *po = kube_pointer_annotation(tx->cfg->ann.drain_owner),
         *pp = kube_pointer_annotation(tx->cfg->ann.drain_phase);
    kobj_patch_op(patch, "add", po, cJSON_CreateString(tx->holder));
    kobj_patch_op(patch, "add", pp, cJSON_CreateString("claimed"));
    free(po);
    free(pp);
    kobj_patch_op(patch, "add", "/spec/unschedulable", cJSON_CreateTrue());
    w->body = patch;
    w->cas = true;
    return KUBE_CAS_WRITE;
}

/* A lost claim answer: our exact claim => adopt; no owner at all => not
 * applied, plan again (the plan rechecks cordon and taints); else fail. */
static kube_cas_seen node_claim_seen(void *ctx, int status, const cJSON *obj)
{
    node_claim_ctx *c = ctx;
    if (status != 200 || !obj) return KUBE_CAS_NOT_OURS;
    node_left left = {.tx = c->tx, .check_owner = true, .owner = c->tx->holder, .phase = "claimed"};
    if (node_left_seen(&left, status, obj) == KUBE_CAS_ADOPT) return KUBE_CAS_ADOPT;
    return kobj_annotation(obj, c->tx->cfg->ann.drain_owner) ? KUBE_CAS_NOT_OURS : KUBE_CAS_RETRY;
}

tx_status node_claim(rs_txn *tx, const node_info *n)
{
    node_claim_ctx c = {.tx = tx, .n = n};
    kube_cas_ops ops = {.kind = "Node",
                        .name = n->name,
                        .door = KUBE_CAS_GATED,
                        .need = GATE_NEED_FULL,
                        .read = KUBE_CAS_PLAN_FROM_READ,
                        .attempts_max = TX_CAS_ATTEMPTS_MAX,
                        .plan = node_claim_plan,
                        .seen = node_claim_seen,
                        .ctx = &c};
    kube_cas_result res;
    kube_cas_end end = kube_cas_write(tx->gate, &ops, &res, &tx->err);
    if (!kube_cas_ok(end)) {
        free(c.taints);
        if (end == KUBE_CAS_RESTART) return TX_RESTART;
        if (end == KUBE_CAS_REFUSED || end == KUBE_CAS_GATE_FAILED) return TX_FAIL;
        rs_fail(&tx->err, RS_FAILED, "claiming the cordon on Node %s failed (%s)%s; failing closed",
                n->name, res.answer.text,
                end == KUBE_CAS_CONTENDED ? ": it kept changing since it was read" : "");
        return TX_FAIL;
    }
    snprintf(tx->claimed_node, sizeof tx->claimed_node, "%s", n->name);
    snprintf(tx->claimed_uid, sizeof tx->claimed_uid, "%s", n->uid);
    tx->claimed_mutating = false;
    tx->claimed_keep = NULL;
    tx->claimed_was_cordoned = c.was_cordoned;
    free(tx->claimed_taints);
    tx->claimed_taints = c.taints;
    return TX_OK;
}

#define NODE_ADVANCE_ATTEMPTS 3
/* A release is CAS-guarded (UID and our owner), so sending it again can
 * never undo someone else's change: a timeout, a 5xx or a conflict is
 * re-read and, while the node still shows our fence, sent again. */
#define NODE_RELEASE_ATTEMPTS 3

/* The JSON patch of an advance (`claimed` -> `mutating`) or a release. */
static cJSON *node_claim_patch_body(rs_txn *tx, bool release, bool uncordon)
{
    cJSON *patch = cJSON_CreateArray();
    char *po = kube_pointer_annotation(tx->cfg->ann.drain_owner),
         *pp = kube_pointer_annotation(tx->cfg->ann.drain_phase);
    kobj_patch_op(patch, "test", "/metadata/uid", cJSON_CreateString(tx->claimed_uid));
    kobj_patch_op(patch, "test", po, cJSON_CreateString(tx->holder));
    if (release) {
        kobj_patch_op(patch, "remove", po, NULL);
        kobj_patch_op(patch, "remove", pp, NULL);
        if (uncordon) kobj_patch_op(patch, "replace", "/spec/unschedulable", cJSON_CreateFalse());
    } else {
        kobj_patch_op(patch, "test", pp, cJSON_CreateString("claimed"));
        kobj_patch_op(patch, "replace", pp, cJSON_CreateString("mutating"));
    }
    free(po);
    free(pp);
    return patch;
}

/* CAS phase change on our own claim. An advance whose answer was lost and
 * whose re-read still shows phase `claimed` under our owner was not
 * applied: it is sent again (bounded), never failed on a guess. */
static tx_status node_claim_advance(rs_txn *tx, const char *name)
{
    kube_cas_result res;
    for (int attempt = 0; attempt < NODE_ADVANCE_ATTEMPTS; attempt++) {
        /* A lost answer: adopted when the phase reads `mutating`. */
        node_left left = {.tx = tx, .phase = "mutating", .retry_phase = "claimed"};
        kube_cas_end end =
            kobj_patch_once(tx, KUBE_CAS_FENCE, GATE_NEED_NONE, "Node", NULL, name,
                            node_claim_patch_body(tx, false, false), node_left_seen, &left, &res);
        if (kube_cas_ok(end)) return TX_OK;
        /* The gate refused the advance (the Lease is no longer proven): it
         * said why, and nothing went out. */
        if (end == KUBE_CAS_GATE_FAILED) return TX_FAIL;
        /* Only "not applied" (the re-read showed the old phase) goes round. */
        if (end != KUBE_CAS_CONTENDED || res.status != 0) break;
    }
    rs_fail(&tx->err, RS_FAILED, "advancing the fence on Node %s failed (%s)", name,
            res.answer.text);
    return TX_FAIL;
}

/* What a re-read after a release shows: released (no owner: ours is gone,
 * so the lost answer or a 5xx that was applied is adopted), still ours
 * (same UID, our owner: not applied, send again) or anything else. */
static kube_cas_seen node_release_seen(void *ctx, int status, const cJSON *obj)
{
    rs_txn *tx = ctx;
    if (status != 200 || !obj) return KUBE_CAS_RETRY; /* unknown: the CAS makes a resend safe */
    const char *o = kobj_annotation(obj, tx->cfg->ann.drain_owner);
    const char *uid = kobj_str(obj, "metadata.uid");
    if (!uid || strcmp(uid, tx->claimed_uid) != 0) return KUBE_CAS_NOT_OURS;
    if (!o) return KUBE_CAS_ADOPT;
    return strcmp(o, tx->holder) == 0 ? KUBE_CAS_RETRY : KUBE_CAS_NOT_OURS;
}

/* Releases our claim (DESIGN §3.3 "Ambiguous writes", H103–H105): an answer
 * that is not a success is resolved by a re-read — released => adopted;
 * still ours, or unreadable => sent again, bounded; anything else fails
 * closed. Failure after the bound means the fence may still be held: the
 * caller keeps it and names it (H103), never claims it released. */
static tx_status node_claim_release(rs_txn *tx, const char *name, bool uncordon, bool *may_hold)
{
    *may_hold = false;
    kube_cas_result res;
    kube_cas_seen last = KUBE_CAS_RETRY;
    for (int attempt = 0; attempt < NODE_RELEASE_ATTEMPTS && last == KUBE_CAS_RETRY; attempt++) {
        if (attempt > 0) {
            out_warning(tx->out,
                        "releasing the fence on Node %s: %s; re-read: still ours, sending "
                        "the release again",
                        name, res.answer.text);
            gate_wait_ms(tx->gate, tx->cfg->sync_interval_ms);
        }
        kube_cas_end end =
            kobj_patch_once(tx, KUBE_CAS_RELEASE, GATE_NEED_NONE, "Node", NULL, name,
                            node_claim_patch_body(tx, true, uncordon), node_release_seen, tx, &res);
        if (kube_cas_ok(end)) return TX_OK;
        if (end == KUBE_CAS_CONTENDED) continue; /* lost, and the re-read showed it ours */
        if (end == KUBE_CAS_UNRESOLVED) {
            last = KUBE_CAS_NOT_OURS;
            break;
        }
        /* A refusal (4xx, 5xx): what does the node show now? */
        rs_resp r;
        int st = kobj_get(tx, "Node", NULL, name, &r);
        last = node_release_seen(tx, st, r.body);
        rs_resp_free(&r);
        if (last == KUBE_CAS_ADOPT) return TX_OK;
    }
    if (last == KUBE_CAS_NOT_OURS)
        rs_fail(&tx->err, RS_FAILED,
                "releasing the fence on Node %s failed (%s): the node no longer shows this run's "
                "fence (another owner, or replaced); not touching it",
                name, res.answer.text);
    else
        rs_fail(&tx->err, RS_FAILED,
                "releasing the fence on Node %s failed %d times (last: %s); it may still be held "
                "(owner %s)",
                name, NODE_RELEASE_ATTEMPTS, res.answer.text, tx->holder);
    *may_hold = last != KUBE_CAS_NOT_OURS;
    return TX_FAIL;
}

tx_status node_advance(rs_txn *tx, const node_info *n)
{
    return node_claim_advance(tx, n->name);
}

/* Why a release that failed after its retries keeps the fence (H103). */
#define NODE_KEEP_RELEASE                                                                          \
    "its verified marker is written, but releasing its fence failed after every retry"

/* The claim is over (released, or proved not ours): never touched again. */
static void node_claim_forget(rs_txn *tx)
{
    tx->claimed_node[0] = '\0';
    tx->claimed_keep = NULL;
    free(tx->claimed_taints);
    tx->claimed_taints = NULL;
}

/* Restores the original schedulability only if owner, UID and taints are as
 * we left them, the node was not cordoned before our claim and is still
 * cordoned now (an uncordon by someone else is not ours to repeat), and the
 * autoscaler is not removing it. */
static tx_status node_release_on(rs_txn *tx, bool error_path)
{
    rs_resp r;
    int st = kobj_get(tx, "Node", NULL, tx->claimed_node, &r);
    bool ours = false, uncordon = false, left_cordoned = false, fail_now = false;
    if (st == 200 && r.body) {
        const char *o = kobj_annotation(r.body, tx->cfg->ann.drain_owner);
        const char *uid = kobj_str(r.body, "metadata.uid");
        ours = o && strcmp(o, tx->holder) == 0 && uid && strcmp(uid, tx->claimed_uid) == 0;
        char *taints = node_taints_signature(r.body);
        bool same_taints = tx->claimed_taints && strcmp(taints, tx->claimed_taints) == 0 &&
                           !node_autoscaler_deleting(r.body);
        /* TEST-ONLY defect (rs_broken): the cordon kept on an error path. */
        bool broken = error_path && tx->opt->strategy->broken == RS_BROKEN_SKIP_CORDON_RESTORE;
        uncordon = ours && !tx->claimed_was_cordoned && same_taints &&
                   kobj_bool(r.body, "spec", "unschedulable") && !broken;
        /* Left cordoned on purpose (DESIGN §3.3), so not a success: exit 0
         * means no node cordoned by this run (§6 invariant 2; H92). */
        left_cordoned = ours && !tx->claimed_was_cordoned && !same_taints &&
                        kobj_bool(r.body, "spec", "unschedulable");
        free(taints);
    }
    rs_resp_free(&r);
    bool may_hold = false;
    if (!ours) {
        out_warning(tx->out, "Node %s no longer carries our fence; not touching its cordon",
                    tx->claimed_node);
    } else if (node_claim_release(tx, tx->claimed_node, uncordon, &may_hold) != TX_OK) {
        /* H103: a release that may not have happened keeps the fence, named
         * by node_cleanup with the command to inspect it — never reported
         * released, never released again blindly by the cleanup. */
        if (may_hold && !error_path) tx->claimed_keep = NODE_KEEP_RELEASE;
        if (!may_hold) node_claim_forget(tx);
        return TX_FAIL;
    } else if (left_cordoned) {
        char msg[RS_ERR_MSG_MAX];
        snprintf(msg, sizeof msg,
                 "Node %s is left cordoned: its taints changed while this run held it "
                 "(another actor's maintenance, or the autoscaler removing it); its fence is "
                 "released — inspect its taints, then `kubectl uncordon %s` if it should serve",
                 tx->claimed_node, tx->claimed_node);
        /* On a run already failing (node_cleanup) the first cause stays the
         * run's error; this one is said beside it. */
        fail_now = tx->err.code == RS_OK;
        if (fail_now)
            rs_fail(&tx->err, RS_FAILED, "%s", msg);
        else
            out_error(tx->out, "%s", msg);
    }
    node_claim_forget(tx);
    return fail_now ? TX_FAIL : TX_OK;
}

tx_status node_release(rs_txn *tx)
{
    return node_release_on(tx, false);
}

void node_cleanup(rs_txn *tx, rs_result *res)
{
    if (!tx->claimed_node[0]) return;
    if (tx->claimed_keep) {
        /* A reboot was issued and not confirmed, or the image work or marker
         * after it failed (H97–H99, H110, H114, H115; DESIGN r2): the node's
         * state is not one we can vouch for, so keep the self-describing
         * fence (owner + phase mutating) for a human rather than uncordon it. */
        out_error(tx->out,
                  "Node %s retained its fence (owner %s, phase mutating): %s — inspect it, then "
                  "see `reassert --fences`",
                  tx->claimed_node, tx->holder, tx->claimed_keep);
        res->exit = rs_code_worst(res->exit, RS_FAILED);
        res->outcome = "failed";
        return;
    }
    if (node_release_on(tx, true) != TX_OK) {
        out_error(tx->out, "%s; Node %s fence retained", tx->err.msg, tx->claimed_node);
        res->exit = rs_code_worst(res->exit, RS_FAILED);
        res->outcome = "failed";
    }
}
