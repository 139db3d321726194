/*
 * node_int.h — what the node procedure's files share (internal to
 * core/node/): the drain and the post-reboot wait (node_drain.c), the drain's
 * destination check (node_destination.c), used by the per-node procedure
 * (node_process.c); the node fence (node_claim.c).
 */
#ifndef RS_NODE_INT_H
#define RS_NODE_INT_H

#include "core/node/node.h"
#include "core/txn_int.h"

#define NODE_BOOT_ID_MAX 128

/* status.nodeInfo.bootID into out ("" when absent or too long). */
void node_boot_id(const cJSON *node, char out[NODE_BOOT_ID_MAX]);
/* Whether a drain leaves pod alone (a DaemonSet or a mirror pod). */
bool node_pod_stays(rs_txn *tx, const cJSON *pod);
/* Before a drain's claim: every pod the drain would evict has a Ready,
 * schedulable node whose NoSchedule/NoExecute taints it tolerates (H170);
 * else fails closed naming why each other node cannot take them. */
tx_status node_drain_destination(rs_txn *tx, const node_info *n);
/* Evicts every pod but DaemonSet and mirror pods and waits until the evicted
 * ones are gone, bounded by the drain timeout; a blocked drain fails naming
 * the pod and the API's refusal. */
tx_status node_drain(rs_txn *tx, const node_info *n);
/* Waits until the node is Ready under a boot ID other than boot_before with
 * its lifecycle taints cleared; a failure names what did not happen. */
tx_status node_wait_ready(rs_txn *tx, const node_info *n, const char *boot_before);

/* Claims the cordon by one CAS write (owner, phase `claimed`,
 * unschedulable), recording the cordon and taints it found; a conflict from
 * an unrelated write is re-read and retried (bounded) while UID, fences,
 * cordon and taints are unchanged (H77); anything else fails closed. */
tx_status node_claim(rs_txn *tx, const node_info *n);
/* Advances our claim's phase to `mutating` (CAS). */
tx_status node_advance(rs_txn *tx, const node_info *n);
/* The guard before every step after the claim (H87–H92): a fresh read must
 * show the same node (UID, InternalIP, role), our owner with phase
 * `mutating`, still cordoned, the non-lifecycle taints the claim recorded
 * and no ToBeDeletedByClusterAutoscaler; else fails closed naming the cause
 * "before <before>". An owner that is no longer ours drops the claim from
 * this run's bookkeeping (proved lost: never touched again). boot (may be
 * NULL) receives the read's boot ID. */
tx_status node_recheck(rs_txn *tx, const node_info *n, const char *before,
                       char boot[NODE_BOOT_ID_MAX]);
/* Drops our owner/phase; uncordons only a node this run cordoned whose
 * owner, UID and taints are as the claim left them. */
tx_status node_release(rs_txn *tx);

#endif
