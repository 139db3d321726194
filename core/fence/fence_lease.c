/*
 * lease.c — the transaction's Lease (DESIGN.md §3.4).
 *
 * Absent => create; present with an empty holder => CAS patch (test
 * resourceVersion and holder). A non-empty holder always refuses: expiry never
 * authorises a takeover, because Talos writes cannot be fenced by a token — a
 * stale holder may still be mid-reboot on a node. Every write is CAS-guarded
 * and a lost response is resolved by re-reading the holder (kube_cas_write;
 * the plans below say what each write is made of).
 */
#include "core/kube/kube_cas.h"
#include "core/txn_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static void lease_time(rs_txn *tx, char *buf, size_t len)
{
    int64_t ms = gate_now_ms(tx->gate);
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char base[32];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%06dZ", base, (int)(ms % 1000) * 1000);
}

#define LEASE_MALFORMED KOBJ_LEASE_MALFORMED

static int lease_get(rs_txn *tx, rs_resp *r)
{
    rs_req req = {.op = RS_OP_KUBE_GET,
                  .kind = "Lease",
                  .ns = tx->cfg->lease_ns,
                  .name = tx->cfg->lease_name};
    return gate_read(tx->gate, &req, r);
}

/* What a read of the Lease shows about this run's hold on it. */
typedef enum lease_seen { LEASE_OURS, LEASE_FREE, LEASE_OTHER, LEASE_UNREADABLE } lease_seen;

/* The Lease is no longer this run's. */
static void lease_drop(rs_txn *tx)
{
    tx->lease_held = false;
}

/* What a read (status, object) shows about this run's hold on the Lease;
 * when ours, remembers its resourceVersion. */
static lease_seen lease_judge(rs_txn *tx, int st, const cJSON *lease)
{
    if (st == 404) return LEASE_FREE;
    if (st != 200 || !lease) return LEASE_UNREADABLE;
    bool present;
    const char *h = kobj_lease_holder(lease, &present);
    if (!h) return LEASE_OTHER; /* malformed: never ours, never free */
    if (strcmp(h, tx->holder) == 0) {
        snprintf(tx->lease_rv, sizeof tx->lease_rv, "%s", kobj_rv(lease));
        return LEASE_OURS;
    }
    return h[0] == '\0' ? LEASE_FREE : LEASE_OTHER;
}

/* Reads the Lease and judges it. *ans (may be NULL) receives what the
 * read's answer was, for a message. */
static lease_seen lease_look(rs_txn *tx, rs_answer *ans)
{
    rs_resp r;
    int st = lease_get(tx, &r);
    if (ans) *ans = rs_answer_of(&r);
    lease_seen seen = lease_judge(tx, st, r.body);
    rs_resp_free(&r);
    return seen;
}

/* One CAS write on the Lease: acquire (with create), renew, take over,
 * release. The plan per purpose is below; the loop is kube_cas_write's. */
typedef enum lease_purpose {
    LEASE_ACQUIRE,
    LEASE_RENEW,
    LEASE_TAKE_OVER,
    LEASE_RELEASE
} lease_purpose;

typedef struct lease_write {
    rs_txn *tx;
    lease_purpose purpose;
    const char *from_holder, *from_rv; /* take over: the terminal holder's tuple */
    bool creating;                     /* acquire: the last write sent was the create */
    lease_seen seen;                   /* the last re-read's judgement */
    char seen_holder[128];             /* release: the holder that re-read showed */
} lease_write;

static void add_op(cJSON *patch, const char *op, const char *path, const char *value)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "op", op);
    cJSON_AddStringToObject(o, "path", path);
    cJSON_AddStringToObject(o, "value", value);
    cJSON_AddItemToArray(patch, o);
}

static cJSON *lease_object(rs_txn *tx, const char *now)
{
    cJSON *obj = cJSON_CreateObject();
    cJSON_AddStringToObject(obj, "apiVersion", "coordination.k8s.io/v1");
    cJSON_AddStringToObject(obj, "kind", "Lease");
    cJSON *md = cJSON_AddObjectToObject(obj, "metadata");
    cJSON_AddStringToObject(md, "name", tx->cfg->lease_name);
    cJSON_AddStringToObject(md, "namespace", tx->cfg->lease_ns);
    cJSON *spec = cJSON_AddObjectToObject(obj, "spec");
    cJSON_AddStringToObject(spec, "holderIdentity", tx->holder);
    cJSON_AddNumberToObject(spec, "leaseDurationSeconds", tx->cfg->lease_duration_s);
    cJSON_AddStringToObject(spec, "acquireTime", now);
    cJSON_AddStringToObject(spec, "renewTime", now);
    return obj;
}

/* Absent => create; empty holder => CAS patch; any holder => refuse. */
static kube_cas_step lease_plan_acquire(lease_write *l, const kube_cas_view *v, kube_cas_req *w,
                                        rs_err *e)
{
    rs_txn *tx = l->tx;
    char now[48];
    l->creating = v->read_status == 404;
    if (l->creating) {
        lease_time(tx, now, sizeof now);
        w->op = RS_OP_KUBE_CREATE;
        w->body = lease_object(tx, now);
        return KUBE_CAS_WRITE;
    }
    if (v->read_status != 200 || !v->cur) {
        char why[256];
        kobj_describe(v->read, why, sizeof why);
        rs_fail(e, RS_FAILED, "reading Lease %s/%s: %s", tx->cfg->lease_ns, tx->cfg->lease_name,
                why);
        return KUBE_CAS_REFUSE;
    }
    bool present;
    const char *holder = kobj_lease_holder(v->cur, &present);
    if (!holder) holder = LEASE_MALFORMED;
    if (holder[0] != '\0') {
        rs_fail(e, RS_FAILED,
                "Lease %s/%s is held by %s; refusing (expiry never authorises a takeover; "
                "inspect with `reassert --fences`)",
                tx->cfg->lease_ns, tx->cfg->lease_name, holder);
        return KUBE_CAS_REFUSE;
    }
    lease_time(tx, now, sizeof now);
    w->body = cJSON_CreateArray();
    add_op(w->body, "test", "/metadata/resourceVersion", kobj_rv(v->cur));
    if (present) add_op(w->body, "test", "/spec/holderIdentity", "");
    add_op(w->body, "add", "/spec/holderIdentity", tx->holder);
    add_op(w->body, "add", "/spec/acquireTime", now);
    add_op(w->body, "add", "/spec/renewTime", now);
    w->cas = true;
    return KUBE_CAS_WRITE;
}

/* An answer that says the API server could not serve the renewal now
 * (throttled, unavailable, a gateway's timeout), not that it refused it. */
static bool lease_transient(int status)
{
    return status == 429 || (status >= 500 && status <= 599);
}

/* A renewal whose re-read shows the Lease free or another holder's: the
 * fence is lost, and what this run still holds (policy fences, a node
 * claim) is for the operator to inspect (H28), as every Lease-lost message
 * says. */
static rs_code lease_lost(rs_txn *tx, const char *answer, lease_seen seen, rs_err *e)
{
    lease_drop(tx);
    return rs_fail(e, RS_FAILED,
                   "renewing Lease %s/%s failed (%s): it is now %s; the fence is lost "
                   "(inspect what is held with `reassert --fences`)",
                   tx->cfg->lease_ns, tx->cfg->lease_name, answer,
                   seen == LEASE_FREE ? "free" : "held by another run");
}

/* First blind on the remembered resourceVersion. A CAS that failed because
 * someone else touched the Lease (a label, an annotation: H5, DESIGN §3.4
 * r2), or a transient answer (429, 5xx: H6), is re-read and, while the
 * holder is still ours, renewed again (after a wait, for a transient one).
 * Only a read showing another holder (or none) proves the Lease lost; a
 * failure to read proves nothing. */
static kube_cas_step lease_plan_renew(lease_write *l, const kube_cas_view *v, kube_cas_req *w,
                                      rs_err *e)
{
    rs_txn *tx = l->tx;
    if (v->read) { /* the re-read after a failed renewal */
        int ws = v->prev_status;
        l->seen = lease_judge(tx, v->read_status, v->cur);
        if (l->seen == LEASE_FREE || l->seen == LEASE_OTHER) {
            lease_lost(tx, v->prev_answer.text, l->seen, e);
            return KUBE_CAS_REFUSE;
        }
        if (l->seen == LEASE_UNREADABLE) {
            rs_fail(e, RS_FAILED,
                    "renewing Lease %s/%s failed (%s) and re-reading it failed (%s); whether "
                    "this run still holds it is unknown",
                    tx->cfg->lease_ns, tx->cfg->lease_name, v->prev_answer.text,
                    v->read_answer.text);
            return KUBE_CAS_REFUSE;
        }
        bool conflict = ws == 409 || ws == 422;
        if ((!conflict && !lease_transient(ws)) || v->last) {
            if (v->last)
                rs_fail(e, RS_FAILED,
                        "renewing Lease %s/%s failed (%s on the last of %d attempts); it "
                        "is still ours",
                        tx->cfg->lease_ns, tx->cfg->lease_name, v->prev_answer.text, v->attempt);
            else
                rs_fail(e, RS_FAILED, "renewing Lease %s/%s failed (%s); it is still ours",
                        tx->cfg->lease_ns, tx->cfg->lease_name, v->prev_answer.text);
            return KUBE_CAS_REFUSE;
        }
        if (conflict) {
            out_info(tx->out,
                     "Lease %s/%s changed under us but is still ours (%s on renewal); "
                     "renewing again",
                     tx->cfg->lease_ns, tx->cfg->lease_name, v->prev_answer.text);
        } else {
            /* H6, DESIGN §3.4 r2: a transient answer never turns held into
             * lost. The re-read proved the same holder: wait, renew again. */
            out_warning(tx->out,
                        "renewing Lease %s/%s failed (%s); re-read: it is still ours; "
                        "renewing again",
                        tx->cfg->lease_ns, tx->cfg->lease_name, v->prev_answer.text);
            gate_wait_ms(tx->gate, tx->cfg->sync_interval_ms);
        }
    }
    char now[48];
    lease_time(tx, now, sizeof now);
    w->body = cJSON_CreateArray();
    add_op(w->body, "test", "/metadata/resourceVersion", tx->lease_rv);
    add_op(w->body, "test", "/spec/holderIdentity", tx->holder);
    add_op(w->body, "add", "/spec/renewTime", now);
    w->cas = true;
    w->reread_on_error = true; /* whether a failed renewal lost the Lease is read, never guessed */
    return KUBE_CAS_WRITE;
}

/* One CAS on the holder and resourceVersion read when liveness was judged. */
static kube_cas_step lease_plan_take_over(lease_write *l, kube_cas_req *w)
{
    char now[48];
    lease_time(l->tx, now, sizeof now);
    w->body = cJSON_CreateArray();
    add_op(w->body, "test", "/metadata/resourceVersion", l->from_rv);
    add_op(w->body, "test", "/spec/holderIdentity", l->from_holder);
    add_op(w->body, "replace", "/spec/holderIdentity", l->tx->holder);
    add_op(w->body, "add", "/spec/acquireTime", now);
    add_op(w->body, "add", "/spec/renewTime", now);
    return KUBE_CAS_WRITE;
}

/* A release's re-read: judged, and the holder it showed kept for the
 * message (a malformed one as such). */
static void lease_release_seen(lease_write *l, int status, const cJSON *obj)
{
    l->seen = lease_judge(l->tx, status, obj);
    const char *h = status == 200 && obj ? kobj_lease_holder(obj, NULL) : NULL;
    if (status == 200 && obj && !h) h = LEASE_MALFORMED;
    snprintf(l->seen_holder, sizeof l->seen_holder, "%s", h ? h : "");
}

/* A release that did not end with the Lease free, said as the last re-read
 * proved it (DESIGN §3.4 r2): another holder took it (lost: this run's
 * books drop it, and the message names that holder, never this run), the
 * re-read failed (unknown: it may still be ours), or it is still ours
 * (retained). Each names the Lease and `reassert --fences` (invariant 7). */
static rs_code lease_release_failed(lease_write *l, const char *answer, const char *read_answer,
                                    rs_err *e)
{
    rs_txn *tx = l->tx;
    const char *ns = tx->cfg->lease_ns, *name = tx->cfg->lease_name;
    if (l->seen == LEASE_OTHER) {
        lease_drop(tx);
        return rs_fail(e, RS_FAILED,
                       "releasing Lease %s/%s failed (%s): it is held by another run (%s), not "
                       "by this run (%s); the fence was lost before the release (inspect what "
                       "is held with `reassert --fences`)",
                       ns, name, answer, l->seen_holder, tx->holder);
    }
    if (l->seen == LEASE_UNREADABLE)
        return rs_fail(e, RS_FAILED,
                       "releasing Lease %s/%s failed (%s) and re-reading it failed (%s); it may "
                       "still be held by this run (%s) (inspect with `reassert --fences`)",
                       ns, name, answer, read_answer, tx->holder);
    return rs_fail(e, RS_FAILED,
                   "releasing Lease %s/%s failed (%s); it is retained by this run (%s) "
                   "(inspect with `reassert --fences`)",
                   ns, name, answer, tx->holder);
}

/* First blind on the remembered resourceVersion; after any failure the
 * re-read decides: free => released; still ours => again (its fresh
 * resourceVersion); anyone else => lost; unreadable => unknown. */
static kube_cas_step lease_plan_release(lease_write *l, const kube_cas_view *v, kube_cas_req *w,
                                        rs_err *e)
{
    rs_txn *tx = l->tx;
    if (v->read) { /* the re-read after a failed release */
        lease_release_seen(l, v->read_status, v->cur);
        if (l->seen == LEASE_FREE) return KUBE_CAS_DONE;
        if (l->seen != LEASE_OURS) {
            lease_release_failed(l, v->prev_answer.text, v->read_answer.text, e);
            return KUBE_CAS_REFUSE;
        }
    }
    w->body = cJSON_CreateArray();
    add_op(w->body, "test", "/metadata/resourceVersion", tx->lease_rv);
    add_op(w->body, "test", "/spec/holderIdentity", tx->holder);
    add_op(w->body, "replace", "/spec/holderIdentity", "");
    w->cas = true;
    w->reread_on_error = true;
    return KUBE_CAS_WRITE;
}

static kube_cas_step lease_plan(void *ctx, const kube_cas_view *v, kube_cas_req *w, rs_err *e)
{
    lease_write *l = ctx;
    switch (l->purpose) {
    case LEASE_ACQUIRE:
        return lease_plan_acquire(l, v, w, e);
    case LEASE_RENEW:
        return lease_plan_renew(l, v, w, e);
    case LEASE_TAKE_OVER:
        return lease_plan_take_over(l, w);
    case LEASE_RELEASE:
        return lease_plan_release(l, v, w, e);
    }
    return KUBE_CAS_REFUSE;
}

/* After a lost answer: acquire, renew and take over wrote our holder, so a
 * Lease held by us shows our write; a release wrote an empty holder. A lost
 * create is adopted only when ours, never retried. */
static kube_cas_seen lease_seen_after_lost(void *ctx, int status, const cJSON *obj)
{
    lease_write *l = ctx;
    if (l->purpose == LEASE_RELEASE) {
        lease_release_seen(l, status, obj);
        if (l->seen == LEASE_FREE) return KUBE_CAS_ADOPT;
        return l->seen == LEASE_OURS ? KUBE_CAS_RETRY : KUBE_CAS_NOT_OURS;
    }
    l->seen = lease_judge(l->tx, status, obj);
    if (l->seen == LEASE_OURS) return KUBE_CAS_ADOPT;
    return l->purpose == LEASE_ACQUIRE && !l->creating ? KUBE_CAS_RETRY : KUBE_CAS_NOT_OURS;
}

static void lease_written(void *ctx, const rs_resp *answer)
{
    lease_write *l = ctx;
    if (l->purpose != LEASE_RELEASE)
        snprintf(l->tx->lease_rv, sizeof l->tx->lease_rv, "%s", kobj_rv(answer->body));
}

static kube_cas_end lease_cas(lease_write *l, kube_cas_result *res, rs_err *e)
{
    rs_txn *tx = l->tx;
    kube_cas_ops ops = {.kind = "Lease",
                        .ns = tx->cfg->lease_ns,
                        .name = tx->cfg->lease_name,
                        .door = KUBE_CAS_RELEASE, /* the Lease cannot assert itself */
                        .read = l->purpose == LEASE_ACQUIRE ? KUBE_CAS_PLAN_FROM_READ
                                                            : KUBE_CAS_PLAN_BLIND,
                        .attempts_max = l->purpose == LEASE_TAKE_OVER ? 1 : TX_CAS_ATTEMPTS_MAX,
                        .plan = lease_plan,
                        .seen = lease_seen_after_lost,
                        .written = lease_written,
                        .ctx = l};
    kube_cas_end end = kube_cas_write(tx->gate, &ops, res, e);
    if (kube_cas_ok(end) && l->purpose != LEASE_RELEASE) {
        tx->lease_held = true;
        tx->lease_renewed_ms = gate_now_ms(tx->gate);
    }
    if (kube_cas_ok(end) && l->purpose == LEASE_RELEASE) lease_drop(tx);
    return end;
}

rs_code lease_acquire(rs_txn *tx, rs_err *e)
{
    lease_write l = {.tx = tx, .purpose = LEASE_ACQUIRE};
    kube_cas_result res;
    kube_cas_end end = lease_cas(&l, &res, e);
    if (kube_cas_ok(end)) return RS_OK;
    if (end == KUBE_CAS_REFUSED) return RS_FAILED;
    if (l.creating)
        return rs_fail(e, RS_FAILED, "creating Lease %s/%s: %s", tx->cfg->lease_ns,
                       tx->cfg->lease_name, res.why);
    if (end == KUBE_CAS_CONTENDED)
        return rs_fail(e, RS_FAILED, "acquiring Lease %s/%s: still contended after %d attempts",
                       tx->cfg->lease_ns, tx->cfg->lease_name, TX_CAS_ATTEMPTS_MAX);
    /* The API's own answer (an admission webhook's denial text), not just a
     * status code (H3). */
    return rs_fail(e, RS_FAILED, "acquiring Lease %s/%s: %s", tx->cfg->lease_ns,
                   tx->cfg->lease_name, res.why[0] ? res.why : "no answer");
}

static rs_code lease_renew(rs_txn *tx, rs_err *e)
{
    lease_write l = {.tx = tx, .purpose = LEASE_RENEW};
    kube_cas_result res;
    kube_cas_end end = lease_cas(&l, &res, e);
    if (kube_cas_ok(end)) return RS_OK;
    if (end == KUBE_CAS_REFUSED) return RS_FAILED;
    /* A lost answer whose re-read did not show the Lease ours. */
    if (l.seen == LEASE_FREE || l.seen == LEASE_OTHER)
        return lease_lost(tx, res.answer.text, l.seen, e);
    return rs_fail(e, RS_FAILED,
                   "renewing Lease %s/%s failed (%s) and re-reading it failed (%s); "
                   "whether this run still holds it is unknown",
                   tx->cfg->lease_ns, tx->cfg->lease_name, res.answer.text,
                   res.read_answer.text[0] ? res.read_answer.text : "not read");
}

#define LEASE_READ_ATTEMPTS 3

/* The judgement of a read that showed the Lease readable: ours (renewed
 * when the heartbeat is due) or not ours any more (dropped from the books). */
static rs_code lease_assert_seen(rs_txn *tx, lease_seen seen, rs_err *e)
{
    if (seen != LEASE_OURS) {
        lease_drop(tx);
        return rs_fail(e, RS_FAILED,
                       "Lease %s/%s is no longer held by this run (it is %s); refusing to write "
                       "(inspect what is held with `reassert --fences`)",
                       tx->cfg->lease_ns, tx->cfg->lease_name,
                       seen == LEASE_FREE ? "free" : "held by another run");
    }
    int64_t heartbeat_ms = (int64_t)tx->cfg->lease_heartbeat_s * 1000;
    if (gate_now_ms(tx->gate) - tx->lease_renewed_ms >= heartbeat_ms) return lease_renew(tx, e);
    return RS_OK;
}

/* Before every mutation: the Lease must still be ours. A read that fails is
 * retried within a small budget (H6) and said so; only a read showing
 * another holder (or none) drops the Lease from this run's books. */
rs_code lease_assert_held(rs_txn *tx, rs_err *e)
{
    if (!tx->lease_held)
        return rs_fail(e, RS_FAILED, "Lease %s/%s is not held by this run", tx->cfg->lease_ns,
                       tx->cfg->lease_name);
    rs_answer ans;
    lease_seen seen = lease_look(tx, &ans);
    for (int attempt = 1; seen == LEASE_UNREADABLE && attempt < LEASE_READ_ATTEMPTS; attempt++) {
        out_warning(tx->out, "reading Lease %s/%s failed (%s); re-proving its holder",
                    tx->cfg->lease_ns, tx->cfg->lease_name, ans.text);
        gate_sleep_ms(tx->gate, tx->cfg->sync_interval_ms);
        seen = lease_look(tx, &ans);
    }
    if (seen == LEASE_UNREADABLE)
        return rs_fail(e, RS_FAILED,
                       "Lease %s/%s could not be read (%s, %d attempts); refusing to write "
                       "while its holder is unproven",
                       tx->cfg->lease_ns, tx->cfg->lease_name, ans.text, LEASE_READ_ATTEMPTS);
    return lease_assert_seen(tx, seen, e);
}

rs_code lease_assert_read(rs_txn *tx, int status, const cJSON *body, bool *unreadable, rs_err *e)
{
    *unreadable = false;
    if (!tx->lease_held)
        return rs_fail(e, RS_FAILED, "Lease %s/%s is not held by this run", tx->cfg->lease_ns,
                       tx->cfg->lease_name);
    lease_seen seen = lease_judge(tx, status, body);
    if (seen == LEASE_UNREADABLE) {
        *unreadable = true;
        return RS_OK;
    }
    return lease_assert_seen(tx, seen, e);
}

rs_code lease_take_over(rs_txn *tx, const char *holder, const char *rv, rs_err *e)
{
    lease_write l = {.tx = tx, .purpose = LEASE_TAKE_OVER, .from_holder = holder, .from_rv = rv};
    kube_cas_result res;
    if (kube_cas_ok(lease_cas(&l, &res, e))) return RS_OK;
    return rs_fail(e, RS_FAILED,
                   "taking over Lease %s/%s from %s failed (%s): it changed since it was "
                   "read (CAS on holder and resourceVersion %s); refusing",
                   tx->cfg->lease_ns, tx->cfg->lease_name, holder,
                   res.sent ? res.answer.text : "not sent", rv);
}

rs_code lease_release(rs_txn *tx, rs_err *e)
{
    if (!tx->lease_held) return RS_OK;
    lease_write l = {.tx = tx, .purpose = LEASE_RELEASE, .seen = LEASE_OURS};
    kube_cas_result res;
    kube_cas_end end = lease_cas(&l, &res, e);
    if (kube_cas_ok(end)) return RS_OK;
    if (end == KUBE_CAS_REFUSED) return RS_FAILED;
    /* Attempts ran out, or a lost answer's re-read did not show it free. */
    return lease_release_failed(&l, res.answer.text,
                                res.read_answer.text[0] ? res.read_answer.text : "not read", e);
}

void lease_heartbeat(rs_txn *tx)
{
    if (!tx->lease_held) return;
    int64_t heartbeat_ms = (int64_t)tx->cfg->lease_heartbeat_s * 1000;
    if (gate_now_ms(tx->gate) - tx->lease_renewed_ms < heartbeat_ms) return;
    rs_err e;
    rs_err_clear(&e);
    /* A failed renewal is noticed (and fails closed) at the next mutation's
     * lease_assert_held; a wait has nothing to undo. */
    if (lease_renew(tx, &e) != RS_OK) out_warning(tx->out, "%s", e.msg);
}
