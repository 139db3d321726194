/*
 * fence_held.c — before every normal-path write, the policy fences are still
 * this run's (DESIGN §3.4 r2, §6 invariant 1).
 *
 * The Lease is asserted before every mutation; the two policy fences are
 * Kustomizations another actor can change (unsuspend, replace the owner,
 * re-enable reconciliation) while the run works under them. A read showing
 * another holder or no fence proves the fence lost: the write is refused and
 * the fence leaves this run's books (it is no longer ours to release). A read
 * that fails proves nothing: the write is refused and the fence stays in the
 * books for cleanup. Both Kustomizations are read in one batch.
 */
#include "core/txn_int.h"

#include <stdlib.h>
#include <string.h>

/* The exact tuple this run wrote (UID is not known here: owner, suspend and,
 * on the child, reconcile disabled). */
static bool held_tuple(rs_txn *tx, const cJSON *obj, const char *owner_key, bool child)
{
    const char *owner = kobj_annotation(obj, owner_key);
    const char *rec = kobj_annotation(obj, tx->cfg->ann.reconcile);
    return owner && strcmp(owner, tx->holder) == 0 && kobj_bool(obj, "spec", "suspend") &&
           (!child || (rec && strcmp(rec, "disabled") == 0));
}

/* Judges the two Kustomizations read in resps (parent, child). */
static rs_code policy_judge(rs_txn *tx, const rs_req *reqs, const rs_resp *resps, rs_err *e)
{
    const rs_config *c = tx->cfg;
    rs_code rc = RS_OK;
    for (int i = 0; i < 2 && rc == RS_OK; i++) {
        bool child = i == 1;
        const char *owner_key = child ? c->ann.child_owner : c->ann.parent_owner;
        if (resps[i].status == 404) {
            /* Proved lost: the object is gone, and this run's fence with it
             * (another actor deleted it); nothing is left to release. */
            if (child)
                tx->child_held = false;
            else
                tx->parent_held = false;
            rc = rs_fail(e, RS_FAILED,
                         "Kustomization %s/%s is gone (HTTP 404: deleted by another actor), and "
                         "this run's fence with it; refusing to write (see `reassert --fences`)",
                         reqs[i].ns, reqs[i].name);
        } else if (resps[i].status != 200 || !resps[i].body) {
            rc = rs_fail(e, RS_FAILED,
                         "reading Kustomization %s/%s to prove this run's fence failed (%s); "
                         "refusing to write",
                         reqs[i].ns, reqs[i].name, rs_answer_of(&resps[i]).text);
        } else if (!held_tuple(tx, resps[i].body, owner_key, child)) {
            /* Proved lost: not ours any more, so not ours to release. */
            if (child)
                tx->child_held = false;
            else
                tx->parent_held = false;
            rc = rs_fail(e, RS_FAILED,
                         "Kustomization %s/%s no longer carries this run's fence (unsuspended, "
                         "re-enabled or taken by another actor); refusing to write (see "
                         "`reassert --fences`)",
                         reqs[i].ns, reqs[i].name);
        }
    }
    return rc;
}

static void policy_reqs(const rs_config *c, rs_req reqs[2])
{
    reqs[0] = (rs_req){
        .op = RS_OP_KUBE_GET, .kind = "Kustomization", .ns = c->parent_ns, .name = c->parent_name};
    reqs[1] = (rs_req){
        .op = RS_OP_KUBE_GET, .kind = "Kustomization", .ns = c->child_ns, .name = c->child_name};
}

/* Every write is proven to happen under the Lease at the moment it goes
 * out — never on an earlier proof: another actor can take the Lease between
 * two writes (found by the perturbation sweep: the child fence and the
 * controller restart once went out on the parent pause's proof). Once the
 * policy fences are held the Lease rides in their batch, so the proof costs
 * no extra round trip. */
rs_code fence_assert_held(rs_txn *tx, rs_err *e)
{
    if (!tx->fence_taken || !tx->parent_held || !tx->child_held) return lease_assert_held(tx, e);
    const rs_config *c = tx->cfg;
    rs_req reqs[3];
    reqs[0] =
        (rs_req){.op = RS_OP_KUBE_GET, .kind = "Lease", .ns = c->lease_ns, .name = c->lease_name};
    policy_reqs(c, &reqs[1]);
    rs_resp resps[3];
    gate_read_batch(tx->gate, reqs, resps, 3, c->transport_parallelism);
    bool unreadable = false;
    rs_code rc = lease_assert_read(tx, resps[0].status, resps[0].body, &unreadable, e);
    if (rc == RS_OK && unreadable) {
        /* The Lease read failed: re-prove it with lease_assert_held's
         * bounded retries, then the policy fences from this batch. */
        rc = lease_assert_held(tx, e);
    }
    if (rc == RS_OK) rc = policy_judge(tx, &reqs[1], &resps[1], e);
    for (int i = 0; i < 3; i++)
        rs_resp_free(&resps[i]);
    return rc;
}
