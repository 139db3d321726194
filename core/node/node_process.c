/*
 * node_process.c — the per-node procedure (DESIGN.md §3.3 "Per node"), all
 * under the full fence:
 *
 *   revalidate identity -> [control-plane reboot: prove etcd quorum of the
 *   others] -> [reboot: prove the evicted pods have a destination] -> claim
 *   the cordon (CAS: owner, phase `claimed`, unschedulable) -> phase
 *   `mutating` -> [reboot: patch RegistryAuthConfig, drain, quorum again,
 *   reboot, wait Ready] -> [not proof-only: remove + pull the
 *   operator image] -> record the revision marker in Talos nodeAnnotations
 *   -> restore the original schedulability and drop owner/phase.
 *
 * Identity is revalidated before every Talos mutation: Talos writes cannot be
 * fenced by a token, so a node replaced under us (same name, new UID) must be
 * caught before we patch or reboot the wrong machine.
 */
#include "core/node/node_int.h"

#include <stdlib.h>
#include <string.h>

/* Why a failure from the image work on keeps the node fence (H110, H114,
 * H115; DESIGN r2 §3.4 "node cleanup"). */
#define NODE_KEEP_IMAGE                                                                            \
    "its image work or verified marker did not complete (the cached operator image may be gone)"

/* One Talos write after the recheck (node_recheck: identity, our fence,
 * cordon, taints). boot_before (may be NULL) receives the boot ID the
 * rechecking read showed: a reboot is later proven by a different one
 * (DESIGN §3.3 r2). keep (may be NULL): once the write has been sent, a
 * failure keeps the node fence for this reason (DESIGN r2 §3.4). */
static tx_status node_talos_write_boot(rs_txn *tx, const node_info *n, rs_op op, cJSON *body,
                                       const char *what, char *boot_before, const char *keep)
{
    char before[96];
    snprintf(before, sizeof before, "the %s", what);
    tx_status s = node_recheck(tx, n, before, boot_before);
    if (s == TX_OK && boot_before && !boot_before[0]) {
        rs_fail(&tx->err, RS_FAILED,
                "Node %s reports no status.nodeInfo.bootID, so a reboot could not be "
                "proven; refusing to reboot it",
                n->name);
        s = TX_FAIL;
    }
    if (s != TX_OK) {
        cJSON_Delete(body);
        return s;
    }
    rs_req req = {.op = op, .target = n->name, .host = tx->cfg->registry_host, .body = body};
    rs_resp r;
    gate_result g = gate_write(tx->gate, GATE_NEED_FULL, &req, &r, &tx->err);
    cJSON_Delete(body);
    int st = r.status;
    rs_answer ans = rs_answer_of(&r);
    rs_resp_free(&r);
    if (g == GATE_FENCE_TAKEN) return TX_RESTART;
    /* The gate refused before sending (the Lease is not proven: H6, H10):
     * nothing reached Talos, so this write gives no reason to keep the
     * fence (it would claim "a reboot was issued" with no reboot sent: H26,
     * H37). */
    if (g != GATE_WRITTEN) return TX_FAIL;
    if (keep) tx->claimed_keep = keep;
    bool ok = st == 200 || (op == RS_OP_TALOS_IMAGE_REMOVE && st == 404);
    if (!ok) {
        rs_fail(&tx->err, RS_FAILED, "Talos %s on node %s failed (%s)", what, n->name, ans.text);
        return TX_FAIL;
    }
    return TX_OK;
}

static tx_status node_talos_write(rs_txn *tx, const node_info *n, rs_op op, cJSON *body,
                                  const char *what)
{
    return node_talos_write_boot(tx, n, op, body, what, NULL, NULL);
}

/* Every other control plane Ready, etcd healthy, not a learner, no alarms. */
static tx_status node_quorum(rs_txn *tx, const node_info *n, const char *when)
{
    node_inventory inv;
    if (node_inventory_read(tx, "node-role.kubernetes.io/control-plane", &inv) != TX_OK) {
        rs_wrap(&tx->err, "quorum proof for %s", n->name);
        return TX_FAIL;
    }
    tx_status s = TX_OK;
    for (size_t i = 0; i < inv.n && s == TX_OK; i++) {
        const node_info *p = &inv.nodes[i];
        if (strcmp(p->name, n->name) == 0) continue;
        rs_req es = {.op = RS_OP_TALOS_ETCD_STATUS, .target = p->name};
        rs_req ea = {.op = RS_OP_TALOS_ETCD_ALARMS, .target = p->name};
        rs_resp sr, ar;
        int s1 = gate_read(tx->gate, &es, &sr);
        int s2 = gate_read(tx->gate, &ea, &ar);
        bool healthy = s1 == 200 &&
                       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sr.body, "healthy")) &&
                       !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sr.body, "learner"));
        bool alarms = s2 != 200 ||
                      cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(ar.body, "alarms")) > 0;
        rs_resp_free(&sr);
        rs_resp_free(&ar);
        if (!p->ready || !healthy || alarms) {
            rs_fail(&tx->err, RS_FAILED, "refusing to reboot control plane %s %s: peer %s is %s",
                    n->name, when, p->name,
                    !p->ready  ? "not Ready"
                    : !healthy ? "not a healthy etcd voter"
                               : "raising etcd alarms");
            s = TX_FAIL;
        }
    }
    node_inventory_free(&inv);
    return s;
}

/* The intent "set the registry auth for host H to the desired credential";
 * the root builds the machine-config document its Talos version expects. */
static cJSON *talos_auth_patch(rs_txn *tx)
{
    cJSON *p = cJSON_CreateObject();
    cJSON *ra = cJSON_AddObjectToObject(p, "registry-auth");
    cJSON_AddStringToObject(ra, "host", tx->cfg->registry_host);
    cJSON *auth = cJSON_AddObjectToObject(ra, "auth");
    cJSON_AddStringToObject(auth, "username", tx->cred.username);
    cJSON_AddStringToObject(auth, "password", tx->cred.password);
    return p;
}

static cJSON *image_body(rs_txn *tx)
{
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "image", tx->cfg->operator_image);
    return b;
}

static tx_status node_mark_verified(rs_txn *tx, const node_info *n)
{
    cJSON *p = cJSON_CreateObject();
    cJSON *ann = cJSON_AddObjectToObject(p, "node-annotations"); /* the intent */
    cJSON_AddStringToObject(ann, tx->cfg->ann.revision, tx->revision);
    cJSON_AddStringToObject(ann, tx->cfg->ann.image, tx->cfg->operator_image);
    tx_status s = node_talos_write_boot(tx, n, RS_OP_TALOS_PATCH, p, "verified-marker patch", NULL,
                                        NODE_KEEP_IMAGE);
    for (int i = 0; s == TX_OK && i < tx->cfg->sync_attempts; i++) {
        rs_resp r;
        int st = kobj_get(tx, "Node", NULL, n->name, &r);
        const char *rev = st == 200 ? kobj_annotation(r.body, tx->cfg->ann.revision) : NULL;
        const char *img = st == 200 ? kobj_annotation(r.body, tx->cfg->ann.image) : NULL;
        bool seen = rev && img && strcmp(rev, tx->revision) == 0 &&
                    strcmp(img, tx->cfg->operator_image) == 0;
        rs_resp_free(&r);
        if (seen) return TX_OK;
        gate_sleep_ms(tx->gate, tx->cfg->sync_interval_ms);
    }
    if (s == TX_OK) {
        rs_fail(&tx->err, RS_FAILED, "Node %s never showed the verified-revision marker", n->name);
        s = TX_FAIL;
    }
    return s;
}

tx_status node_process(rs_txn *tx, const node_info *n, int mode_i)
{
    node_mode mode = (node_mode)mode_i;
    bool cp_reboot = mode == NODE_REBOOT && n->control_plane;
    tx_status s = TX_OK;
    if (cp_reboot) s = node_quorum(tx, n, "before the drain");
    /* A drain with nowhere to go is refused before the claim (H170). */
    if (s == TX_OK && mode == NODE_REBOOT) s = node_drain_destination(tx, n);
    if (s == TX_OK) s = node_claim(tx, n); /* revalidates identity on its read */
    if (s != TX_OK) return s;
    s = node_advance(tx, n);
    if (s != TX_OK) return s;
    tx->claimed_mutating = true;
    if (mode == NODE_REBOOT) {
        s = node_talos_write(tx, n, RS_OP_TALOS_PATCH, talos_auth_patch(tx),
                             "RegistryAuthConfig patch");
        if (s == TX_OK) s = node_drain(tx, n);
        if (s == TX_OK && cp_reboot) s = node_quorum(tx, n, "after the drain");
        char boot_before[NODE_BOOT_ID_MAX] = "";
        /* From the moment the reboot is sent the node's state is unknown
         * until it proves Ready under a new boot ID: a failure keeps the
         * fence. Refused before sending (the recheck), nothing was issued
         * and the claim is handed back as usual. */
        if (s == TX_OK)
            s = node_talos_write_boot(tx, n, RS_OP_TALOS_REBOOT, NULL, "reboot", boot_before,
                                      "a reboot was issued and not confirmed");
        if (s == TX_OK) s = node_wait_ready(tx, n, boot_before);
        if (s == TX_OK) tx->claimed_keep = NODE_KEEP_IMAGE;
    }
    if (s == TX_OK && mode != NODE_PROOF_ONLY) {
        s = node_talos_write_boot(tx, n, RS_OP_TALOS_IMAGE_REMOVE, image_body(tx), "image remove",
                                  NULL, NODE_KEEP_IMAGE);
        if (s == TX_OK)
            s = node_talos_write(tx, n, RS_OP_TALOS_IMAGE_PULL, image_body(tx), "image pull");
    }
    if (s == TX_OK) s = node_mark_verified(tx, n);
    if (s != TX_OK) return s;
    tx->claimed_mutating = false;
    tx->claimed_keep = NULL; /* the marker is seen: the node is vouched for */
    return node_release(tx);
}
