/*
 * node_process.c — the per-node procedure (DESIGN.md §3.3 "Per node"), all
 * under the full fence:
 *
 *   revalidate identity -> [control-plane reboot: prove etcd quorum of the
 *   others] -> claim the cordon (CAS: owner, phase `claimed`, unschedulable)
 *   -> phase `mutating` -> [reboot: patch RegistryAuthConfig, drain,
 *   quorum again, reboot, wait Ready] -> [not proof-only: remove + pull the
 *   operator image] -> record the revision marker in Talos nodeAnnotations
 *   -> restore the original schedulability and drop owner/phase.
 *
 * Identity is revalidated before every Talos mutation: Talos writes cannot be
 * fenced by a token, so a node replaced under us (same name, new UID) must be
 * caught before we patch or reboot the wrong machine.
 */
#include "core/kube/kube_pointer.h"
#include "core/node/node_int.h"

#include <stdlib.h>
#include <string.h>

/* Fresh read of the node; fails closed when name/UID/InternalIP/role moved. */
static tx_status node_revalidate(rs_txn *tx, const node_info *n, cJSON **fresh)
{
    rs_resp r;
    int st = kobj_get(tx, "Node", NULL, n->name, &r);
    if (st != 200 || !r.body) {
        rs_resp_free(&r);
        rs_fail(&tx->err, RS_FAILED, "revalidating Node %s failed (HTTP %d); failing closed",
                n->name, st);
        return TX_FAIL;
    }
    cJSON *list = cJSON_CreateObject();
    cJSON_AddItemToArray(cJSON_AddArrayToObject(list, "items"), r.body);
    r.body = NULL;
    node_inventory inv;
    rs_err e;
    rs_err_clear(&e);
    bool ok = node_inventory_parse(list, &tx->cfg->ann, &inv, &e) == RS_OK && inv.n == 1;
    const node_info *m = ok ? &inv.nodes[0] : NULL;
    bool same = ok && strcmp(m->uid, n->uid) == 0 && strcmp(m->ip, n->ip) == 0 &&
                m->control_plane == n->control_plane;
    if (same && fresh)
        *fresh = cJSON_Duplicate(
            cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(inv.list, "items"), 0), 1);
    node_inventory_free(&inv);
    if (!same) {
        rs_fail(&tx->err, RS_FAILED,
                "Node %s changed identity (UID/InternalIP/role) since the "
                "inventory; refusing to mutate it (replaced mid-roll?)",
                n->name);
        return TX_FAIL;
    }
    return TX_OK;
}

/* One Talos write after revalidating the node's identity. boot_before (may
 * be NULL) receives the boot ID the revalidating read showed: a reboot is
 * later proven by a different one (DESIGN §3.3 r2). */
static tx_status node_talos_write_boot(rs_txn *tx, const node_info *n, rs_op op, cJSON *body,
                                       const char *what, char *boot_before)
{
    cJSON *fresh = NULL;
    tx_status s = node_revalidate(tx, n, boot_before ? &fresh : NULL);
    if (s == TX_OK && boot_before) {
        node_boot_id(fresh, boot_before);
        if (!boot_before[0]) {
            rs_fail(&tx->err, RS_FAILED,
                    "Node %s reports no status.nodeInfo.bootID, so a reboot could not be "
                    "proven; refusing to reboot it",
                    n->name);
            s = TX_FAIL;
        }
    }
    cJSON_Delete(fresh);
    if (s != TX_OK) {
        cJSON_Delete(body);
        return s;
    }
    rs_req req = {.op = op, .target = n->name, .host = tx->cfg->registry_host, .body = body};
    rs_resp r;
    gate_result g = gate_write(tx->gate, GATE_NEED_FULL, &req, &r, &tx->err);
    cJSON_Delete(body);
    int st = r.status;
    rs_resp_free(&r);
    if (g == GATE_FENCE_TAKEN) return TX_RESTART;
    if (g != GATE_WRITTEN) return TX_FAIL;
    bool ok = st == 200 || (op == RS_OP_TALOS_IMAGE_REMOVE && st == 404);
    if (!ok) {
        rs_fail(&tx->err, RS_FAILED, "Talos %s on node %s failed (HTTP %d)", what, n->name, st);
        return TX_FAIL;
    }
    return TX_OK;
}

static tx_status node_talos_write(rs_txn *tx, const node_info *n, rs_op op, cJSON *body,
                                  const char *what)
{
    return node_talos_write_boot(tx, n, op, body, what, NULL);
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

/* What a node fence write leaves behind, for adopting its lost answer. */
typedef struct node_left {
    rs_txn *tx;
    bool check_owner;
    const char *owner; /* with check_owner: our holder, or NULL for "no owner" */
    const char *phase; /* NULL: not checked */
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
    return owner_ok && phase_ok ? KUBE_CAS_ADOPT : KUBE_CAS_NOT_OURS;
}

static tx_status node_claim(rs_txn *tx, const node_info *n)
{
    cJSON *fresh = NULL;
    tx_status s = node_revalidate(tx, n, &fresh);
    if (s != TX_OK) return s;
    const char *owner = kobj_annotation(fresh, tx->cfg->ann.drain_owner);
    if (owner || kobj_annotation(fresh, tx->cfg->ann.drain_journal)) {
        rs_fail(&tx->err, RS_FAILED, "Node %s carries a fence (owner %s); failing closed", n->name,
                owner ? owner : "journal");
        cJSON_Delete(fresh);
        return TX_FAIL;
    }
    bool was_cordoned = kobj_bool(fresh, "spec", "unschedulable");
    char *taints = node_taints_signature(fresh);
    cJSON *patch = cJSON_CreateArray();
    kobj_patch_op(patch, "test", "/metadata/resourceVersion", cJSON_CreateString(kobj_rv(fresh)));
    kobj_patch_op(patch, "test", "/metadata/uid", cJSON_CreateString(n->uid));
    if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(fresh, "metadata"), "annotations")))
        kobj_patch_op(patch, "add", "/metadata/annotations", cJSON_CreateObject());
    cJSON_Delete(fresh);
    char *po = kube_pointer_annotation(tx->cfg->ann.drain_owner),
         *pp = kube_pointer_annotation(tx->cfg->ann.drain_phase);
    kobj_patch_op(patch, "add", po, cJSON_CreateString(tx->holder));
    kobj_patch_op(patch, "add", pp, cJSON_CreateString("claimed"));
    free(po);
    free(pp);
    kobj_patch_op(patch, "add", "/spec/unschedulable", cJSON_CreateTrue());
    /* A lost answer is adopted only for our exact claim. */
    node_left left = {.tx = tx, .check_owner = true, .owner = tx->holder, .phase = "claimed"};
    kube_cas_result res;
    kube_cas_end end = kobj_patch_once(tx, KUBE_CAS_GATED, GATE_NEED_FULL, "Node", NULL, n->name,
                                       patch, node_left_seen, &left, &res);
    if (end == KUBE_CAS_RESTART || end == KUBE_CAS_GATE_FAILED) {
        free(taints);
        return end == KUBE_CAS_RESTART ? TX_RESTART : TX_FAIL;
    }
    if (!kube_cas_ok(end)) {
        int st = res.status;
        free(taints);
        rs_fail(&tx->err, RS_FAILED,
                "claiming the cordon on Node %s failed (HTTP %d%s); failing "
                "closed",
                n->name, st, st == 422 ? ": it changed since it was read — replaced?" : "");
        return TX_FAIL;
    }
    snprintf(tx->claimed_node, sizeof tx->claimed_node, "%s", n->name);
    snprintf(tx->claimed_uid, sizeof tx->claimed_uid, "%s", n->uid);
    tx->claimed_mutating = false;
    tx->claimed_was_cordoned = was_cordoned;
    free(tx->claimed_taints);
    tx->claimed_taints = taints;
    return TX_OK;
}

/* CAS phase change / release on our own claim. */
static tx_status node_claim_patch(rs_txn *tx, const char *name, bool release, bool uncordon)
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
    /* A lost answer: a release is adopted when no owner is left, an advance
     * when the phase reads `mutating`. */
    node_left left = {.tx = tx, .check_owner = release, .phase = release ? NULL : "mutating"};
    kube_cas_result res;
    if (kube_cas_ok(kobj_patch_once(tx, release ? KUBE_CAS_RELEASE : KUBE_CAS_FENCE, GATE_NEED_NONE,
                                    "Node", NULL, name, patch, node_left_seen, &left, &res)))
        return TX_OK;
    rs_fail(&tx->err, RS_FAILED, "%s the fence on Node %s failed (HTTP %d)",
            release ? "releasing" : "advancing", name, res.status);
    return TX_FAIL;
}

/* Restores the original schedulability only if owner, UID and taints are as
 * we left them and the node was not cordoned before our claim. */
static tx_status node_release(rs_txn *tx)
{
    rs_resp r;
    int st = kobj_get(tx, "Node", NULL, tx->claimed_node, &r);
    bool ours = false, uncordon = false;
    if (st == 200 && r.body) {
        const char *o = kobj_annotation(r.body, tx->cfg->ann.drain_owner);
        const char *uid = kobj_str(r.body, "metadata.uid");
        ours = o && strcmp(o, tx->holder) == 0 && uid && strcmp(uid, tx->claimed_uid) == 0;
        char *taints = node_taints_signature(r.body);
        uncordon = ours && !tx->claimed_was_cordoned && tx->claimed_taints &&
                   strcmp(taints, tx->claimed_taints) == 0;
        if (ours && !tx->claimed_was_cordoned && !uncordon)
            out_warning(tx->out, "Node %s: taints changed while fenced; leaving it cordoned",
                        tx->claimed_node);
        free(taints);
    }
    rs_resp_free(&r);
    if (!ours) {
        out_warning(tx->out, "Node %s no longer carries our fence; not touching its cordon",
                    tx->claimed_node);
    } else if (node_claim_patch(tx, tx->claimed_node, true, uncordon) != TX_OK) {
        return TX_FAIL;
    }
    tx->claimed_node[0] = '\0';
    free(tx->claimed_taints);
    tx->claimed_taints = NULL;
    return TX_OK;
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
    tx_status s = node_talos_write(tx, n, RS_OP_TALOS_PATCH, p, "nodeAnnotations patch");
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
    tx_status s = node_revalidate(tx, n, NULL);
    if (s == TX_OK && cp_reboot) s = node_quorum(tx, n, "before the drain");
    if (s == TX_OK) s = node_claim(tx, n);
    if (s != TX_OK) return s;
    s = node_claim_patch(tx, n->name, false, false);
    if (s != TX_OK) return s;
    tx->claimed_mutating = true;
    if (mode == NODE_REBOOT) {
        s = node_talos_write(tx, n, RS_OP_TALOS_PATCH, talos_auth_patch(tx),
                             "RegistryAuthConfig patch");
        if (s == TX_OK) s = node_drain(tx, n);
        if (s == TX_OK && cp_reboot) s = node_quorum(tx, n, "after the drain");
        char boot_before[NODE_BOOT_ID_MAX] = "";
        if (s == TX_OK) {
            tx->claimed_rebooting = true;
            s = node_talos_write_boot(tx, n, RS_OP_TALOS_REBOOT, NULL, "reboot", boot_before);
            /* Refused before sending (no boot ID to prove it by): no reboot
             * was issued, so the claim is released as usual. */
            if (s != TX_OK && !boot_before[0]) tx->claimed_rebooting = false;
        }
        if (s == TX_OK) s = node_wait_ready(tx, n, boot_before);
        if (s == TX_OK) tx->claimed_rebooting = false;
    }
    if (s == TX_OK && mode != NODE_PROOF_ONLY) {
        s = node_talos_write(tx, n, RS_OP_TALOS_IMAGE_REMOVE, image_body(tx), "image remove");
        if (s == TX_OK)
            s = node_talos_write(tx, n, RS_OP_TALOS_IMAGE_PULL, image_body(tx), "image pull");
    }
    if (s == TX_OK) s = node_mark_verified(tx, n);
    if (s != TX_OK) return s;
    tx->claimed_mutating = false;
    return node_release(tx);
}

void node_cleanup(rs_txn *tx, rs_result *res)
{
    if (!tx->claimed_node[0]) return;
    if (tx->claimed_rebooting) {
        /* A reboot was issued and the node never proved Ready: its state is
         * unknown, so keep the self-describing fence (owner + phase mutating)
         * for a human rather than uncordon a machine we cannot vouch for. */
        out_error(tx->out,
                  "Node %s retained its fence (owner %s, phase mutating): a reboot was "
                  "issued and not confirmed — inspect it, then see `reassert --fences`",
                  tx->claimed_node, tx->holder);
        res->exit = rs_code_worst(res->exit, RS_FAILED);
        res->outcome = "failed";
        return;
    }
    if (node_release(tx) != TX_OK) {
        out_error(tx->out, "%s; Node %s fence retained", tx->err.msg, tx->claimed_node);
        res->exit = rs_code_worst(res->exit, RS_FAILED);
        res->outcome = "failed";
    }
}
