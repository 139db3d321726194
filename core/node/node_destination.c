/*
 * node_destination.c — a drain needs somewhere to go (DESIGN.md §3.6 r3
 * "Drain destinations", hazards.md H170).
 *
 * Before a node that will be drained is claimed, its evicted pods (every pod
 * but DaemonSet and mirror pods, as the drain picks them) must have a
 * destination: another node that is Ready, not cordoned, and whose every
 * NoSchedule or NoExecute taint each evicted pod tolerates. Control planes
 * tainted `node-role.kubernetes.io/control-plane:NoSchedule`, as Talos taints
 * them, are no destination for pods that do not tolerate it. With no
 * destination the run refuses the drain before the claim, naming why each
 * other node cannot take the pods: nothing is claimed, nothing is written to
 * the node. A node with nothing to evict needs no destination.
 *
 * Kept as simple as H170 asks: one peer must be able to take every evicted
 * pod; pod affinity, node selectors and capacity are the scheduler's business.
 */
#include "core/node/node_int.h"

#include <stdlib.h>
#include <string.h>

static const char *json_str(const cJSON *obj, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, key));
}

/* One toleration against one taint, as the scheduler matches them: an empty
 * effect matches every effect; an empty key with `Exists` matches every
 * taint; `Equal` (the default) needs the same value. An operator the API
 * would reject matches nothing. */
static bool toleration_matches(const cJSON *tol, const cJSON *taint)
{
    const char *eff = json_str(tol, "effect"), *taint_eff = json_str(taint, "effect");
    if (eff && eff[0] && (!taint_eff || strcmp(eff, taint_eff) != 0)) return false;
    const char *op = json_str(tol, "operator");
    bool exists = op && strcmp(op, "Exists") == 0;
    if (!exists && op && op[0] && strcmp(op, "Equal") != 0) return false;
    const char *key = json_str(tol, "key"), *taint_key = json_str(taint, "key");
    if (!key || !key[0]) return exists;
    if (!taint_key || strcmp(key, taint_key) != 0) return false;
    if (exists) return true;
    const char *val = json_str(tol, "value"), *taint_val = json_str(taint, "value");
    return strcmp(val ? val : "", taint_val ? taint_val : "") == 0;
}

static bool pod_tolerates(const cJSON *pod, const cJSON *taint)
{
    const cJSON *tol;
    cJSON_ArrayForEach(tol, cJSON_GetObjectItemCaseSensitive(
                                cJSON_GetObjectItemCaseSensitive(pod, "spec"), "tolerations"))
    {
        if (toleration_matches(tol, taint)) return true;
    }
    return false;
}

/* Whether peer can take every pod of evicted; if not, why into why. */
static bool peer_takes(const cJSON *peer, const cJSON *const *evicted, size_t n_evicted, char *why,
                       size_t len)
{
    if (!kobj_condition_true(peer, "Ready")) {
        snprintf(why, len, "not Ready");
        return false;
    }
    if (kobj_bool(peer, "spec", "unschedulable")) {
        snprintf(why, len, "cordoned");
        return false;
    }
    const cJSON *taint;
    cJSON_ArrayForEach(taint, cJSON_GetObjectItemCaseSensitive(
                                  cJSON_GetObjectItemCaseSensitive(peer, "spec"), "taints"))
    {
        const char *eff = json_str(taint, "effect");
        if (!eff || (strcmp(eff, "NoSchedule") != 0 && strcmp(eff, "NoExecute") != 0)) continue;
        for (size_t i = 0; i < n_evicted; i++) {
            if (pod_tolerates(evicted[i], taint)) continue;
            const char *key = json_str(taint, "key");
            snprintf(why, len, "tainted %s:%s", key ? key : "", eff);
            return false;
        }
    }
    return true;
}

/* Appends "node (why)" to the ", "-joined list (truncated with "..."). */
static void note_peer(char *list, size_t len, const char *name, const char *why)
{
    size_t used = strlen(list);
    if (used + 4 >= len) return;
    int w = snprintf(list + used, len - used, "%s%s (%s)", used ? ", " : "", name, why);
    if (w < 0 || (size_t)w >= len - used) snprintf(list + len - 4, 4, "...");
}

tx_status node_drain_destination(rs_txn *tx, const node_info *n)
{
    char selector[300];
    snprintf(selector, sizeof selector, "spec.nodeName=%s", n->name);
    /* The node's pods and every Node, one batch. */
    rs_req reqs[2] = {{.op = RS_OP_KUBE_LIST, .kind = "Pod", .field_selector = selector},
                      {.op = RS_OP_KUBE_LIST, .kind = "Node"}};
    rs_resp resps[2];
    gate_read_batch(tx->gate, reqs, resps, 2, tx->cfg->transport_parallelism);
    tx_status s = TX_OK;
    for (size_t i = 0; i < 2 && s == TX_OK; i++) {
        if (resps[i].status == 200 &&
            cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(resps[i].body, "items")))
            continue;
        rs_fail(&tx->err, RS_FAILED,
                "refusing to drain %s: listing %s to prove its pods have somewhere to go "
                "failed (%s)",
                n->name, i == 0 ? "its pods" : "the Nodes", rs_answer_of(&resps[i]).text);
        s = TX_FAIL;
    }
    const cJSON *pods = cJSON_GetObjectItemCaseSensitive(resps[0].body, "items");
    size_t cap = (size_t)cJSON_GetArraySize(pods) + 1, n_evicted = 0;
    const cJSON **evicted = rs_xcalloc(cap, sizeof *evicted);
    if (s == TX_OK) {
        const cJSON *pod;
        cJSON_ArrayForEach(pod, pods)
        {
            if (!node_pod_stays(tx, pod)) evicted[n_evicted++] = pod;
        }
    }
    if (s == TX_OK && n_evicted > 0) {
        char refused[768] = "";
        bool found = false;
        const cJSON *peer;
        cJSON_ArrayForEach(peer, cJSON_GetObjectItemCaseSensitive(resps[1].body, "items"))
        {
            const char *name = kobj_str(peer, "metadata.name");
            if (!name || strcmp(name, n->name) == 0) continue;
            char why[300];
            found = peer_takes(peer, evicted, n_evicted, why, sizeof why);
            if (found) break;
            note_peer(refused, sizeof refused, name, why);
        }
        if (!found) {
            rs_fail(&tx->err, RS_FAILED,
                    "refusing to drain %s: no Ready, schedulable node can take its %zu evicted "
                    "pod(s) (%s); nothing was claimed or written on it",
                    n->name, n_evicted, refused[0] ? refused : "it is the only node");
            s = TX_FAIL;
        }
    }
    free(evicted);
    rs_resp_free(&resps[0]);
    rs_resp_free(&resps[1]);
    return s;
}
