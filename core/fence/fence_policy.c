/*
 * fence_policy.c — the Flux policy fences (DESIGN.md §3.4): pause, quiet waits,
 * resume. Suspension does not stop a running execution (Flux documents this):
 * the child fence is complete only once the controller restart
 * (fence_restart.c) replaced every pre-restart pod and two identical
 * observations of the fenced child show nothing writes it. Fence writes are
 * CAS-guarded (UID, resourceVersion); a lost response is adopted only if the
 * exact tuple this run wrote — (UID, owner, suspend[, reconcile-disabled]) —
 * is present. A Kustomization another actor deleted holds no fence: a 404,
 * confirmed by a read, is nothing left to release, never "retained".
 */
#include "core/kube/kube_cas.h"
#include "core/kube/kube_pointer.h"
#include "core/txn_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct fence_ks {
    const char *ns, *name, *owner_key, *reconcile_key;
    bool child;
} fence_ks;

static fence_ks fence_parent(rs_txn *tx)
{
    return (fence_ks){tx->cfg->parent_ns, tx->cfg->parent_name, tx->cfg->ann.parent_owner,
                      tx->cfg->ann.reconcile, false};
}

static fence_ks fence_child(rs_txn *tx)
{
    return (fence_ks){tx->cfg->child_ns, tx->cfg->child_name, tx->cfg->ann.child_owner,
                      tx->cfg->ann.reconcile, true};
}

/* Is the exact tuple (UID, owner, suspend[, reconcile-disabled]) present? */
static bool fence_tuple_is(const fence_ks *k, const cJSON *obj, const char *uid, const char *who)
{
    const char *owner = kobj_annotation(obj, k->owner_key);
    const char *rec = kobj_annotation(obj, k->reconcile_key);
    const char *u = kobj_str(obj, "metadata.uid");
    return owner && strcmp(owner, who) == 0 && u && strcmp(u, uid) == 0 &&
           kobj_bool(obj, "spec", "suspend") &&
           (!k->child || (rec && strcmp(rec, "disabled") == 0));
}

static bool fence_tuple_ours(rs_txn *tx, const fence_ks *k, const cJSON *obj, const char *uid)
{
    return fence_tuple_is(k, obj, uid, tx->holder);
}

/* Is the Kustomization free of any fence (ours or anyone's)? */
static bool fence_ks_free(const fence_ks *k, const cJSON *obj)
{
    const char *rec = kobj_annotation(obj, k->reconcile_key);
    return !kobj_annotation(obj, k->owner_key) && !kobj_bool(obj, "spec", "suspend") &&
           !(k->child && rec && strcmp(rec, "disabled") == 0);
}

/* Polls until a fresh read shows no Reconciling=True. */
static tx_status fence_wait_quiet(rs_txn *tx, const fence_ks *k)
{
    cJSON *last = NULL; /* the last busy read, to say why it stayed busy */
    for (int attempt = 0; attempt < tx->cfg->sync_attempts; attempt++) {
        rs_resp r;
        int st = kobj_get(tx, "Kustomization", k->ns, k->name, &r);
        bool busy = st == 200 && kobj_condition_true(r.body, "Reconciling");
        if (busy) {
            cJSON_Delete(last);
            last = r.body;
            r.body = NULL;
        }
        rs_answer ans = rs_answer_of(&r);
        rs_resp_free(&r);
        if (st != 200) {
            cJSON_Delete(last);
            rs_fail(&tx->err, RS_FAILED, "reading Kustomization %s/%s failed (%s)", k->ns, k->name,
                    ans.text);
            return TX_FAIL;
        }
        if (!busy) {
            cJSON_Delete(last);
            return TX_OK;
        }
        gate_sleep_ms(tx->gate, tx->cfg->sync_interval_ms);
    }
    char why[768];
    fence_busy_why(tx, last, k->ns, why, sizeof why);
    cJSON_Delete(last);
    rs_fail(&tx->err, RS_FAILED, "Kustomization %s/%s is still reconciling after %d attempts%s",
            k->ns, k->name, tx->cfg->sync_attempts, why);
    return TX_FAIL;
}

static cJSON *fence_pause_patch(rs_txn *tx, const fence_ks *k, const cJSON *obj)
{
    cJSON *patch = cJSON_CreateArray();
    kobj_patch_op(patch, "test", "/metadata/resourceVersion", cJSON_CreateString(kobj_rv(obj)));
    kobj_patch_op(
        patch, "test", "/metadata/uid",
        cJSON_CreateString(kobj_str(obj, "metadata.uid") ? kobj_str(obj, "metadata.uid") : ""));
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(md, "annotations")))
        kobj_patch_op(patch, "add", "/metadata/annotations", cJSON_CreateObject());
    char *p = kube_pointer_annotation(k->owner_key);
    kobj_patch_op(patch, "add", p, cJSON_CreateString(tx->holder));
    free(p);
    if (k->child) {
        p = kube_pointer_annotation(k->reconcile_key);
        kobj_patch_op(patch, "add", p, cJSON_CreateString("disabled"));
        free(p);
    }
    kobj_patch_op(patch, "add", "/spec/suspend", cJSON_CreateTrue());
    return patch;
}

typedef struct fence_write {
    rs_txn *tx;
    const fence_ks *k;
    const char *who;  /* resume: the holder whose tuple is cleared */
    bool may_be_free; /* resume: the pause was never confirmed */
} fence_write;

static const char *fence_uid(const cJSON *obj)
{
    const char *u = kobj_str(obj, "metadata.uid");
    return u ? u : "";
}

static void fence_refuse_taken(rs_err *e, const fence_ks *k, const cJSON *obj)
{
    const char *owner = kobj_annotation(obj, k->owner_key);
    rs_fail(e, RS_FAILED,
            "Kustomization %s/%s is already fenced (owner %s, suspend %s); refusing to "
            "take it over (inspect with `reassert --fences`)",
            k->ns, k->name, owner ? owner : "none",
            kobj_bool(obj, "spec", "suspend") ? "true" : "false");
}

static kube_cas_step fence_pause_plan(void *ctx, const kube_cas_view *v, kube_cas_req *w, rs_err *e)
{
    fence_write *f = ctx;
    const fence_ks *k = f->k;
    if (v->read_status != 200 || !v->cur) {
        rs_fail(e, RS_FAILED, "reading Kustomization %s/%s failed (%s)", k->ns, k->name,
                v->read_answer.text);
        return KUBE_CAS_REFUSE;
    }
    if (fence_tuple_ours(f->tx, k, v->cur, fence_uid(v->cur))) return KUBE_CAS_DONE;
    if (!fence_ks_free(k, v->cur)) {
        fence_refuse_taken(e, k, v->cur);
        return KUBE_CAS_REFUSE;
    }
    w->body = fence_pause_patch(f->tx, k, v->cur);
    w->cas = true;
    return KUBE_CAS_WRITE;
}

/* After a lost pause: our exact tuple => adopt; otherwise the plan decides
 * again from this read (free => pause again; anyone else's => refuse). */
static kube_cas_seen fence_pause_seen(void *ctx, int status, const cJSON *obj)
{
    fence_write *f = ctx;
    bool ours = status == 200 && obj && fence_tuple_ours(f->tx, f->k, obj, fence_uid(obj));
    return ours ? KUBE_CAS_ADOPT : KUBE_CAS_RETRY;
}

/* CAS-pauses one Kustomization with our owner tuple. *unconfirmed is set when
 * a pause was sent and its answer lost: from then on the fence may be ours
 * even if this fails, and cleanup must try to release it (DESIGN §3.4 r2). */
static tx_status fence_pause(rs_txn *tx, const fence_ks *k, bool *unconfirmed)
{
    fence_write f = {.tx = tx, .k = k};
    kube_cas_ops ops = {.kind = "Kustomization",
                        .ns = k->ns,
                        .name = k->name,
                        .door = KUBE_CAS_FENCE,
                        .read = KUBE_CAS_PLAN_FROM_READ,
                        .attempts_max = TX_CAS_ATTEMPTS_MAX,
                        .plan = fence_pause_plan,
                        .seen = fence_pause_seen,
                        .ctx = &f};
    kube_cas_result res;
    kube_cas_end end = kube_cas_write(tx->gate, &ops, &res, &tx->err);
    if (res.unconfirmed) *unconfirmed = true;
    if (kube_cas_ok(end)) return TX_OK;
    if (end == KUBE_CAS_FAILED)
        rs_fail(&tx->err, RS_FAILED, "pausing Kustomization %s/%s failed (%s)", k->ns, k->name,
                res.answer.text);
    else if (end != KUBE_CAS_REFUSED && end != KUBE_CAS_GATE_FAILED) /* the gate said why */
        rs_fail(&tx->err, RS_FAILED,
                "pausing Kustomization %s/%s: still contended after %d attempts", k->ns, k->name,
                TX_CAS_ATTEMPTS_MAX);
    return TX_FAIL;
}

/* Two identical consecutive observations of the fenced child. */
static tx_status fence_child_settled(rs_txn *tx, const fence_ks *k)
{
    char last[TX_RV_MAX] = "";
    for (int attempt = 0; attempt < tx->cfg->sync_attempts; attempt++) {
        rs_resp r;
        int st = kobj_get(tx, "Kustomization", k->ns, k->name, &r);
        char uid[128];
        snprintf(uid, sizeof uid, "%s",
                 st == 200 && kobj_str(r.body, "metadata.uid") ? kobj_str(r.body, "metadata.uid")
                                                               : "");
        bool ours = st == 200 && fence_tuple_ours(tx, k, r.body, uid);
        char rv[TX_RV_MAX];
        snprintf(rv, sizeof rv, "%s", st == 200 ? kobj_rv(r.body) : "");
        rs_resp_free(&r);
        if (!ours) {
            rs_fail(&tx->err, RS_FAILED, "Kustomization %s/%s lost our fence while settling", k->ns,
                    k->name);
            return TX_FAIL;
        }
        if (last[0] && strcmp(last, rv) == 0) return TX_OK;
        snprintf(last, sizeof last, "%s", rv);
        gate_sleep_ms(tx->gate, tx->cfg->sync_interval_ms);
    }
    rs_fail(&tx->err, RS_FAILED, "Kustomization %s/%s never showed two identical observations",
            k->ns, k->name);
    return TX_FAIL;
}

/* H58: another run's fence on the child (alone, or on both) means a
 * transaction is in flight or leaked. Seen before the parent is paused, so the
 * refusal mutates nothing; the child's own pause re-checks under CAS. */
static tx_status fence_child_unclaimed(rs_txn *tx, const fence_ks *k)
{
    rs_resp r;
    int st = kobj_get(tx, "Kustomization", k->ns, k->name, &r);
    tx_status s = TX_OK;
    if (st != 200) {
        rs_fail(&tx->err, RS_FAILED, "reading Kustomization %s/%s failed (%s)", k->ns, k->name,
                rs_answer_of(&r).text);
        s = TX_FAIL;
    } else if (!fence_ks_free(k, r.body) && !fence_tuple_ours(tx, k, r.body, fence_uid(r.body))) {
        fence_refuse_taken(&tx->err, k, r.body);
        s = TX_FAIL;
    }
    rs_resp_free(&r);
    return s;
}

tx_status fence_policy_take(rs_txn *tx)
{
    fence_ks parent = fence_parent(tx), child = fence_child(tx);
    tx_status s = fence_child_unclaimed(tx, &child);
    if (s == TX_OK) s = fence_pause(tx, &parent, &tx->parent_unconfirmed);
    if (s == TX_OK) tx->parent_held = true;
    if (s == TX_OK) s = fence_wait_quiet(tx, &parent);
    if (s == TX_OK) s = fence_wait_quiet(tx, &child);
    if (s == TX_OK) s = fence_pause(tx, &child, &tx->child_unconfirmed);
    if (s == TX_OK) tx->child_held = true;
    if (s == TX_OK) s = fence_restart_controller(tx);
    if (s == TX_OK) s = fence_child_settled(tx, &child);
    return s;
}

/* A Kustomization another actor deleted holds no fence: said once, the same
 * way, wherever a resume finds it gone. */
static void fence_ks_say_gone(rs_txn *tx, const fence_ks *k)
{
    out_warning(tx->out,
                "Kustomization %s/%s is gone (HTTP 404: deleted by another actor); no fence of "
                "this run is left on it to release",
                k->ns, k->name);
}

static kube_cas_step fence_resume_plan(void *ctx, const kube_cas_view *v, kube_cas_req *w,
                                       rs_err *e)
{
    fence_write *f = ctx;
    const fence_ks *k = f->k;
    if (v->read_status == 404) {
        fence_ks_say_gone(f->tx, k); /* no fence of ours is left on it */
        return KUBE_CAS_DONE;
    }
    if (v->read_status != 200 || !v->cur) {
        rs_fail(e, RS_FAILED, "reading Kustomization %s/%s for resume failed (%s)", k->ns, k->name,
                v->read_answer.text);
        return KUBE_CAS_REFUSE;
    }
    const char *uid = fence_uid(v->cur);
    if (!fence_tuple_is(k, v->cur, uid, f->who)) {
        /* Our lost or conflicting resume was applied, or our unconfirmed
         * pause never was. */
        if (fence_ks_free(k, v->cur) && (v->attempt > 0 || f->may_be_free)) return KUBE_CAS_DONE;
        rs_fail(e, RS_FAILED,
                "Kustomization %s/%s no longer carries our fence; "
                "not resuming it",
                k->ns, k->name);
        return KUBE_CAS_REFUSE;
    }
    cJSON *patch = cJSON_CreateArray();
    kobj_patch_op(patch, "test", "/metadata/uid", cJSON_CreateString(uid));
    /* And the resourceVersion it was judged on: a change in between is
     * re-read and judged again. */
    kobj_patch_op(patch, "test", "/metadata/resourceVersion", cJSON_CreateString(kobj_rv(v->cur)));
    char *owner = kube_pointer_annotation(k->owner_key);
    kobj_patch_op(patch, "test", owner, cJSON_CreateString(f->who));
    char *rec = kube_pointer_annotation(k->reconcile_key);
    if (k->child) kobj_patch_op(patch, "test", rec, cJSON_CreateString("disabled"));
    kobj_patch_op(patch, "test", "/spec/suspend", cJSON_CreateTrue());
    kobj_patch_op(patch, "replace", "/spec/suspend", cJSON_CreateFalse());
    kobj_patch_op(patch, "remove", owner, NULL);
    if (k->child) kobj_patch_op(patch, "remove", rec, NULL);
    free(owner);
    free(rec);
    w->body = patch;
    w->cas = true;
    return KUBE_CAS_WRITE;
}

/* After a lost resume: free of any fence => adopt; otherwise the plan
 * decides again from this read. */
static kube_cas_seen fence_resume_seen(void *ctx, int status, const cJSON *obj)
{
    fence_write *f = ctx;
    return status == 200 && obj && fence_ks_free(f->k, obj) ? KUBE_CAS_ADOPT : KUBE_CAS_RETRY;
}

/* Whether a read proves the Kustomization gone (404), after a write that
 * said so: one answer is not taken alone for "no fence left to release". */
static bool fence_ks_gone(rs_txn *tx, const fence_ks *k)
{
    rs_resp r;
    int st = kobj_get(tx, "Kustomization", k->ns, k->name, &r);
    rs_resp_free(&r);
    return st == 404;
}

/* Resumes one Kustomization fenced by `who`: CAS-test the tuple, then clear it.
 * may_be_free: the pause was never confirmed, so finding the Kustomization
 * free of any fence means there is nothing to release. */
static rs_code fence_resume(rs_txn *tx, const fence_ks *k, const char *who, bool may_be_free,
                            rs_err *e)
{
    fence_write f = {.tx = tx, .k = k, .who = who, .may_be_free = may_be_free};
    kube_cas_ops ops = {.kind = "Kustomization",
                        .ns = k->ns,
                        .name = k->name,
                        .door = KUBE_CAS_RELEASE, /* must work with the Lease lost */
                        .read = KUBE_CAS_PLAN_FROM_READ,
                        .attempts_max = TX_CAS_ATTEMPTS_MAX,
                        .plan = fence_resume_plan,
                        .seen = fence_resume_seen,
                        .ctx = &f};
    kube_cas_result res;
    kube_cas_end end = kube_cas_write(tx->gate, &ops, &res, e);
    if (kube_cas_ok(end)) return RS_OK;
    if (end != KUBE_CAS_REFUSED && res.status == 404 && fence_ks_gone(tx, k)) {
        fence_ks_say_gone(tx, k); /* deleted between the read and the resume */
        rs_err_clear(e);
        return RS_OK;
    }
    if (end == KUBE_CAS_REFUSED) return e ? e->code : RS_FAILED;
    if (res.why[0])
        return rs_fail(e, RS_FAILED, "resuming Kustomization %s/%s failed (%s)", k->ns, k->name,
                       res.why);
    return rs_fail(e, RS_FAILED, "resuming Kustomization %s/%s failed", k->ns, k->name);
}

/* Releases one policy fence this run holds, or may hold because a pause's
 * answer was lost and never confirmed. Returns whether it is now released. */
static bool fence_release_one(rs_txn *tx, const fence_ks *k, bool *held, bool *unconfirmed,
                              const char *which, rs_result *res)
{
    if (!*held && !*unconfirmed) return true;
    rs_err e;
    rs_err_clear(&e);
    if (fence_resume(tx, k, tx->holder, !*held, &e) == RS_OK) {
        *held = *unconfirmed = false;
        return true;
    }
    out_error(tx->out, "%s; %s fence %s/%s %s (owner %s); inspect it with `reassert --fences`",
              e.msg, which, k->ns, k->name,
              *held ? "retained" : "may be retained: its pause was sent and never confirmed",
              tx->holder);
    res->exit = rs_code_worst(res->exit, RS_FAILED);
    res->outcome = "failed";
    return false;
}

void fence_policy_release(rs_txn *tx, rs_result *res)
{
    fence_ks parent = fence_parent(tx), child = fence_child(tx);
    bool child_free =
        fence_release_one(tx, &child, &tx->child_held, &tx->child_unconfirmed, "child", res);
    if (!tx->parent_held && !tx->parent_unconfirmed) return;
    if (!child_free) {
        /* Resuming the parent while the child is still fenced would let Flux
         * re-apply the child's owner annotations away: keep both. */
        out_error(tx->out,
                  "parent fence %s/%s retained because the child fence is retained "
                  "(owner %s); see `reassert --fences`",
                  parent.ns, parent.name, tx->holder);
        res->exit = rs_code_worst(res->exit, RS_FAILED);
        res->outcome = "failed";
        return;
    }
    fence_release_one(tx, &parent, &tx->parent_held, &tx->parent_unconfirmed, "parent", res);
}

rs_code fence_policy_residual(rs_txn *tx, char *what, size_t len, rs_err *e)
{
    fence_ks ks[2] = {fence_parent(tx), fence_child(tx)};
    what[0] = '\0';
    for (int i = 0; i < 2; i++) {
        rs_resp r;
        int st = kobj_get(tx, "Kustomization", ks[i].ns, ks[i].name, &r);
        if (st != 200) {
            /* A read that did not answer proves nothing either way: it is a
             * read failure, never a residual fence (H28). */
            rs_code rc = rs_fail(e, RS_FAILED, "reading Kustomization %s/%s failed (%s)", ks[i].ns,
                                 ks[i].name, rs_answer_of(&r).text);
            rs_resp_free(&r);
            return rc;
        }
        if (!fence_ks_free(&ks[i], r.body) && !what[0]) {
            const char *owner = kobj_annotation(r.body, ks[i].owner_key);
            snprintf(what, len, "Kustomization %s/%s (owner %s, suspend %s)", ks[i].ns, ks[i].name,
                     owner ? owner : "none",
                     kobj_bool(r.body, "spec", "suspend") ? "true" : "false");
        }
        rs_resp_free(&r);
    }
    return RS_OK;
}

rs_code fence_policy_recover(rs_txn *tx, bool child, const char *who, rs_err *e)
{
    fence_ks k = child ? fence_child(tx) : fence_parent(tx);
    return fence_resume(tx, &k, who, false, e);
}
