/*
 * node_int.h — what the node procedure's files share (internal to
 * core/node/): the drain and the post-reboot wait (node_drain.c), used by the
 * per-node procedure (node_process.c).
 */
#ifndef RS_NODE_INT_H
#define RS_NODE_INT_H

#include "core/node/node.h"
#include "core/txn_int.h"

#define NODE_BOOT_ID_MAX 128

/* status.nodeInfo.bootID into out ("" when absent or too long). */
void node_boot_id(const cJSON *node, char out[NODE_BOOT_ID_MAX]);
/* Evicts every pod but DaemonSet and mirror pods and waits until the evicted
 * ones are gone, bounded by the drain timeout; a blocked drain fails naming
 * the pod and the API's refusal. */
tx_status node_drain(rs_txn *tx, const node_info *n);
/* Waits until the node is Ready under a boot ID other than boot_before with
 * its lifecycle taints cleared; a failure names what did not happen. */
tx_status node_wait_ready(rs_txn *tx, const node_info *n, const char *boot_before);

#endif
