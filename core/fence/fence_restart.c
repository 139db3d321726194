/*
 * fence_restart.c — the kustomize-controller restart of the policy fence
 * (DESIGN.md §3.4): Flux documents that suspension does not stop a running
 * execution, so the child fence is complete only once every pre-restart
 * controller pod was replaced by a Ready pod. The restart stamp is a
 * CAS-guarded patch; a lost answer is adopted only if our stamp is present.
 */
#include "core/kube/kube_cas.h"
#include "core/kube/kube_pointer.h"
#include "core/txn_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The UIDs of a set of pods; grows as needed, never truncated. */
typedef struct pod_set {
    char (*uid)[64];
    int n, cap;
} pod_set;

static void pod_set_free(pod_set *ps)
{
    free(ps->uid);
    memset(ps, 0, sizeof *ps);
}

static bool pod_set_has(const pod_set *ps, const char *uid)
{
    for (int i = 0; i < ps->n; i++)
        if (strcmp(ps->uid[i], uid) == 0) return true;
    return false;
}

/* Lists the controller's pods into *now (emptied first). With old given,
 * counts the pods of old still present and the Ready, non-terminating pods
 * not in old. Returns the HTTP status; a UID too long to hold is an error. */
static int controller_pods(rs_txn *tx, pod_set *now, const pod_set *old, int *ready_new,
                           int *old_left, rs_answer *ans)
{
    rs_resp r;
    rs_req req = {.op = RS_OP_KUBE_LIST,
                  .kind = "Pod",
                  .ns = tx->cfg->controller_ns,
                  .label_selector = tx->cfg->controller_selector};
    int st = gate_read(tx->gate, &req, &r);
    if (ans) *ans = rs_answer_of(&r);
    now->n = 0;
    if (ready_new) *ready_new = 0;
    if (old_left) *old_left = 0;
    const cJSON *it;
    const cJSON *items = r.body ? cJSON_GetObjectItemCaseSensitive(r.body, "items") : NULL;
    if (st == 200 && !cJSON_IsArray(items)) st = 0;
    cJSON_ArrayForEach(it, items)
    {
        const char *uid = kobj_str(it, "metadata.uid");
        if (!uid || strlen(uid) >= 64) {
            st = 0; /* a pod we cannot name cannot be proven replaced */
            break;
        }
        bool is_old = old && pod_set_has(old, uid);
        if (is_old && old_left) (*old_left)++;
        bool terminating = kobj_str(it, "metadata.deletionTimestamp") != NULL;
        if (!is_old && !terminating && kobj_condition_true(it, "Ready") && ready_new)
            (*ready_new)++;
        if (now->n == now->cap) {
            now->cap = now->cap ? now->cap * 2 : 8;
            now->uid = rs_xrealloc(now->uid, (size_t)now->cap * sizeof *now->uid);
        }
        snprintf(now->uid[now->n++], 64, "%s", uid);
    }
    rs_resp_free(&r);
    if (st == 0 && ans && r.status == 200)
        snprintf(ans->text, sizeof ans->text,
                 "HTTP 200, but no pod list, or a pod without a usable UID");
    return st;
}

/* The restart patch: a fresh restartedAt stamp, CAS on resourceVersion. */
static cJSON *restart_patch(const cJSON *deploy, const char *key, const char *stamp)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(deploy, "spec");
    const cJSON *tmd = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(spec, "template"), "metadata");
    bool has_ann = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(tmd, "annotations"));
    cJSON *patch = cJSON_CreateArray();
    kobj_patch_op(patch, "test", "/metadata/resourceVersion", cJSON_CreateString(kobj_rv(deploy)));
    if (!has_ann) {
        if (!cJSON_IsObject(tmd))
            kobj_patch_op(patch, "add", "/spec/template/metadata", cJSON_CreateObject());
        kobj_patch_op(patch, "add", "/spec/template/metadata/annotations", cJSON_CreateObject());
    }
    char *p = kube_pointer_join("/spec/template/metadata/annotations/", key);
    kobj_patch_op(patch, "add", p, cJSON_CreateString(stamp));
    free(p);
    return patch;
}

static bool restart_stamp_is(const cJSON *deploy, const char *key, const char *stamp)
{
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(deploy, "spec"),
                                             "template"),
            "metadata"),
        "annotations");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(ann, key);
    return cJSON_IsString(v) && strcmp(v->valuestring, stamp) == 0;
}

typedef struct restart_write {
    rs_txn *tx;
    char stamp[64];
    int *want; /* spec.replicas of the last read */
} restart_write;

static void restart_note_replicas(restart_write *rw, const cJSON *deploy)
{
    const cJSON *replicas = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(deploy, "spec"), "replicas");
    *rw->want = cJSON_IsNumber(replicas) ? replicas->valueint : 1;
}

static kube_cas_step restart_plan(void *ctx, const kube_cas_view *v, kube_cas_req *w, rs_err *e)
{
    restart_write *rw = ctx;
    const rs_config *c = rw->tx->cfg;
    if (v->read_status != 200 || !v->cur) {
        rs_fail(e, RS_FAILED, "reading Deployment %s/%s failed (%s)", c->controller_ns,
                c->controller_name, v->read_answer.text);
        return KUBE_CAS_REFUSE;
    }
    restart_note_replicas(rw, v->cur);
    w->body = restart_patch(v->cur, c->ann.restarted_at, rw->stamp);
    w->cas = true;
    return KUBE_CAS_WRITE;
}

/* After a lost restart: our stamp => adopt; otherwise restart again. */
static kube_cas_seen restart_seen(void *ctx, int status, const cJSON *obj)
{
    restart_write *rw = ctx;
    if (status != 200 || !obj) return KUBE_CAS_RETRY; /* the plan names the failed read */
    restart_note_replicas(rw, obj);
    return restart_stamp_is(obj, rw->tx->cfg->ann.restarted_at, rw->stamp) ? KUBE_CAS_ADOPT
                                                                           : KUBE_CAS_RETRY;
}

/* Restarts the controller Deployment by CAS, with the same retry as the
 * pauses: a conflict re-reads and tries again; a lost answer re-reads and
 * adopts our stamp if it is there. *want receives spec.replicas. */
static tx_status restart_deployment(rs_txn *tx, int *want)
{
    const rs_config *c = tx->cfg;
    restart_write rw = {.tx = tx, .want = want};
    snprintf(rw.stamp, sizeof rw.stamp, "%.16s-%" PRId64, tx->holder, gate_now_ms(tx->gate));
    kube_cas_ops ops = {.kind = "Deployment",
                        .ns = c->controller_ns,
                        .name = c->controller_name,
                        .door = KUBE_CAS_FENCE,
                        .read = KUBE_CAS_PLAN_FROM_READ,
                        .attempts_max = TX_CAS_ATTEMPTS_MAX,
                        .plan = restart_plan,
                        .seen = restart_seen,
                        .ctx = &rw};
    kube_cas_result res;
    kube_cas_end end = kube_cas_write(tx->gate, &ops, &res, &tx->err);
    if (kube_cas_ok(end)) return TX_OK;
    if (end != KUBE_CAS_REFUSED && end != KUBE_CAS_GATE_FAILED) /* the gate said why */
        rs_fail(&tx->err, RS_FAILED, "restarting Deployment %s/%s failed (%s)", c->controller_ns,
                c->controller_name, res.answer.text);
    return TX_FAIL;
}

/* Restarts kustomize-controller and proves every pre-restart pod was
 * replaced by a Ready pod. */
tx_status fence_restart_controller(rs_txn *tx)
{
    const rs_config *c = tx->cfg;
    pod_set old = {0}, now = {0};
    rs_answer ans;
    int st = controller_pods(tx, &old, NULL, NULL, NULL, &ans);
    if (st != 200) {
        pod_set_free(&old);
        rs_fail(&tx->err, RS_FAILED, "listing %s pods failed (%s)", c->controller_name, ans.text);
        return TX_FAIL;
    }
    int want = 1;
    if (restart_deployment(tx, &want) != TX_OK) {
        pod_set_free(&old);
        return TX_FAIL;
    }
    out_info(tx->out, "restarted %s/%s; waiting for every pre-restart pod to be replaced",
             c->controller_ns, c->controller_name);
    int attempts =
        (c->rollout_timeout_s * 1000) / (c->sync_interval_ms > 0 ? c->sync_interval_ms : 1000);
    tx_status s = TX_FAIL;
    for (int attempt = 0; attempt < attempts && s != TX_OK; attempt++) {
        gate_sleep_ms(tx->gate, c->sync_interval_ms);
        int ready_new = 0, old_left = 0;
        if (controller_pods(tx, &now, &old, &ready_new, &old_left, NULL) == 200 && old_left == 0 &&
            ready_new >= want)
            s = TX_OK;
    }
    pod_set_free(&old);
    pod_set_free(&now);
    if (s != TX_OK)
        rs_fail(&tx->err, RS_FAILED,
                "kustomize-controller rollout did not replace every pod within "
                "%d s; root auth unchanged",
                c->rollout_timeout_s);
    return s;
}
