/*
 * node_drain.c — the two waits of a node's reboot (DESIGN.md §3.3 "Per
 * node", r2 "Drain like kubectl", "A reboot is proven by a new boot ID",
 * "Taints linger"): the drain before it and the Ready wait after it.
 *
 * The one idea: each wait ends on a fact read from the API (every evicted
 * pod gone; Ready under a new boot ID with the lifecycle taints cleared),
 * never on a guess, and when the bound runs out the error names what was
 * still in the way (the blocked pod and the API's refusal; the lingering
 * taint), so an operator knows where to look.
 */
#include "core/node/node_int.h"

#include <stdlib.h>
#include <string.h>

#define NODE_READY_TIMEOUT_MS (15LL * 60 * 1000)
#define NODE_READY_POLL_MS 10000
#define NODE_DRAIN_POLL_MS 3000

void node_boot_id(const cJSON *node, char out[NODE_BOOT_ID_MAX])
{
    const char *b = kobj_str(node, "status.nodeInfo.bootID");
    snprintf(out, NODE_BOOT_ID_MAX, "%s", b && strlen(b) < NODE_BOOT_ID_MAX ? b : "");
}

/* Pods a drain leaves alone, as `kubectl drain` does: DaemonSet pods (their
 * controller ignores the cordon) and mirror pods (the API's view of a static
 * pod the kubelet runs — every Talos control plane runs kube-apiserver,
 * kube-controller-manager and kube-scheduler that way; evicting one only
 * makes the kubelet register it again, so a drain that waits for it to be
 * gone never ends). */
bool node_pod_stays(rs_txn *tx, const cJSON *pod)
{
    if (kobj_annotation(pod, tx->cfg->ann.config_mirror)) return true;
    const cJSON *refs = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(pod, "metadata"), "ownerReferences");
    const cJSON *ref;
    cJSON_ArrayForEach(ref, refs)
    {
        const char *k = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ref, "kind"));
        if (k && (strcmp(k, "DaemonSet") == 0 || strcmp(k, "Node") == 0)) return true;
    }
    return false;
}

/* Appends "ns/name" of pod to the ", "-joined list (truncated with "..."). */
static void node_drain_note(char *list, size_t len, const cJSON *pod)
{
    const char *ns = kobj_str(pod, "metadata.namespace"), *name = kobj_str(pod, "metadata.name");
    size_t used = strlen(list);
    if (used + 4 >= len) return;
    int w = snprintf(list + used, len - used, "%s%s/%s%s", used ? ", " : "", ns ? ns : "",
                     name ? name : "",
                     kobj_str(pod, "metadata.deletionTimestamp") ? " (terminating)" : "");
    if (w < 0 || (size_t)w >= len - used) snprintf(list + len - 4, 4, "...");
}

/* Evicts every pod but DaemonSet and mirror pods through the Eviction API;
 * 429 (PDB) is retried until the drain timeout; one guarded retry on
 * transport loss. The drain ends when every evicted pod is gone, not merely
 * terminating (DESIGN §3.3 r2): a reboot under a still-running pod kills it
 * without its grace period. The node is rechecked (node_recheck) between the
 * first pod list and the first eviction. */
tx_status node_drain(rs_txn *tx, const node_info *n)
{
    int64_t deadline = gate_now_ms(tx->gate) + tx->cfg->drain_timeout_ms;
    bool transport_retry_used = false;
    char selector[300];
    snprintf(selector, sizeof selector, "spec.nodeName=%s", n->name);
    int polls_max = (int)(tx->cfg->drain_timeout_ms / NODE_DRAIN_POLL_MS) + 2;
    /* The pods still in the way at the last poll and the API's last refusal
     * (H80), to name them if the drain runs out of time. */
    char blocked[512] = "", why[300] = "";
    for (int poll = 0; poll < polls_max; poll++) {
        rs_resp r;
        int st = kobj_list(tx, "Pod", NULL, NULL, selector, &r);
        if (st != 200) {
            rs_fail(&tx->err, RS_FAILED, "drain of %s: listing its pods failed (%s)", n->name,
                    rs_answer_of(&r).text);
            rs_resp_free(&r);
            return TX_FAIL;
        }
        /* H87: the first eviction comes only after a recheck of cordon,
         * owner and taints made after the pods were listed. */
        if (poll == 0 && node_recheck(tx, n, "the drain", NULL) != TX_OK) {
            rs_resp_free(&r);
            return TX_FAIL;
        }
        int remaining = 0;
        blocked[0] = '\0';
        const cJSON *pod;
        const cJSON *items = cJSON_GetObjectItemCaseSensitive(r.body, "items");
        cJSON_ArrayForEach(pod, items)
        {
            if (node_pod_stays(tx, pod)) continue;
            remaining++;
            node_drain_note(blocked, sizeof blocked, pod);
            if (kobj_str(pod, "metadata.deletionTimestamp")) continue; /* going: wait */
            rs_req ev = {.op = RS_OP_KUBE_EVICT,
                         .kind = "Pod",
                         .ns = kobj_str(pod, "metadata.namespace"),
                         .name = kobj_str(pod, "metadata.name")};
            rs_resp w;
            gate_result g = gate_write(tx->gate, GATE_NEED_FULL, &ev, &w, &tx->err);
            int es = w.status;
            rs_answer ans = rs_answer_of(&w);
            if (es == 429) {
                char d[256];
                kobj_describe(&w, d, sizeof d);
                snprintf(why, sizeof why, "; the last eviction refused: %s", d);
            }
            rs_resp_free(&w);
            if (g != GATE_WRITTEN) {
                rs_resp_free(&r);
                return g == GATE_FENCE_TAKEN ? TX_RESTART : TX_FAIL;
            }
            if (es == 0 && !transport_retry_used) {
                transport_retry_used = true; /* the next poll re-lists and retries */
                continue;
            }
            if (es != 200 && es != 201 && es != 404 && es != 429) {
                rs_resp_free(&r);
                rs_fail(&tx->err, RS_FAILED, "drain of %s: eviction failed (%s)", n->name,
                        ans.text);
                return TX_FAIL;
            }
        }
        rs_resp_free(&r);
        if (remaining == 0) return TX_OK;
        if (gate_now_ms(tx->gate) >= deadline) break;
        gate_sleep_ms(tx->gate, NODE_DRAIN_POLL_MS);
    }
    if (blocked[0])
        rs_fail(&tx->err, RS_FAILED,
                "drain of %s did not finish within the drain timeout: still on it: %s%s", n->name,
                blocked, why);
    else
        rs_fail(&tx->err, RS_FAILED, "drain of %s did not finish within the drain timeout",
                n->name);
    return TX_FAIL;
}

/* A taint key in the configured lifecycle list (an entry ending in '/' is a
 * prefix); the cordon's own taint never counts. */
static bool taint_is_lifecycle(const rs_config *c, const char *key)
{
    if (strcmp(key, "node.kubernetes.io/unschedulable") == 0) return false;
    for (size_t i = 0; i < c->n_lifecycle_taints; i++) {
        const char *t = c->lifecycle_taints[i];
        size_t n = strlen(t);
        if (n > 0 && t[n - 1] == '/' ? strncmp(key, t, n) == 0 : strcmp(key, t) == 0) return true;
    }
    return false;
}

/* Whether a lifecycle taint is on node; their keys into keys (", "-joined). */
static bool node_lifecycle_tainted(rs_txn *tx, const cJSON *node, char *keys, size_t len)
{
    bool any = false;
    keys[0] = '\0';
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(
                              cJSON_GetObjectItemCaseSensitive(node, "spec"), "taints"))
    {
        const char *k = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "key"));
        if (!k || !taint_is_lifecycle(tx->cfg, k)) continue;
        size_t used = strlen(keys);
        snprintf(keys + used, len - used, "%s%s", any ? ", " : "", k);
        any = true;
    }
    return any;
}

/* After a reboot: the node is Ready, with lifecycle taints cleared, under a
 * boot ID other than boot_before (DESIGN §3.3 r2). A read that fails says
 * nothing — never "it went down" — and a fast reboot may never show
 * NotReady at all. */
tx_status node_wait_ready(rs_txn *tx, const node_info *n, const char *boot_before)
{
    int polls = (int)(NODE_READY_TIMEOUT_MS / NODE_READY_POLL_MS);
    char boot[NODE_BOOT_ID_MAX] = "", taints[512] = "";
    rs_answer last = {.text = "not read"};
    bool rebooted = false, ready = false, tainted = false; /* as the last good read showed */
    for (int i = 0; i < polls; i++) {
        gate_sleep_ms(tx->gate, NODE_READY_POLL_MS);
        rs_resp r;
        int st = kobj_get(tx, "Node", NULL, n->name, &r);
        last = rs_answer_of(&r);
        if (st == 200 && r.body) {
            node_boot_id(r.body, boot);
            ready = kobj_condition_true(r.body, "Ready");
            tainted = node_lifecycle_tainted(tx, r.body, taints, sizeof taints);
            rebooted = boot[0] && strcmp(boot, boot_before) != 0;
            if (rebooted && ready && !tainted) {
                rs_resp_free(&r);
                return TX_OK;
            }
        }
        rs_resp_free(&r);
    }
    long long secs = NODE_READY_TIMEOUT_MS / 1000;
    if (rebooted && ready && tainted) /* H97: the taints are the cause, not the boot */
        rs_fail(&tx->err, RS_FAILED,
                "Node %s rebooted (new boot ID %s) and reports Ready, but its lifecycle taints "
                "did not clear within %lld s: %s",
                n->name, boot, secs, taints);
    else if (rebooted)
        rs_fail(&tx->err, RS_FAILED,
                "Node %s did not come back Ready within %lld s after the reboot (it rebooted: "
                "new boot ID %s)%s%s",
                n->name, secs, boot, tainted ? "; lifecycle taints: " : "", tainted ? taints : "");
    else
        rs_fail(&tx->err, RS_FAILED,
                "Node %s did not come back Ready under a new boot ID within %lld s after the "
                "reboot (boot ID before %s, last seen %s; last read: %s)",
                n->name, secs, boot_before, boot[0] ? boot : "none", last.text);
    return TX_FAIL;
}
