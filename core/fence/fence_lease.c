/*
 * lease.c — the transaction's Lease (DESIGN.md §3.4).
 *
 * Absent => create; present with an empty holder => CAS patch (test
 * resourceVersion and holder). A non-empty holder always refuses: expiry never
 * authorises a takeover, because Talos writes cannot be fenced by a token — a
 * stale holder may still be mid-reboot on a node. Every write is CAS-guarded
 * and a lost response is resolved by re-reading the holder.
 */
#include "core/txn_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static void lease_time(rs_txn *tx, char *buf, size_t len)
{
    int64_t ms = gate_now_ms(&tx->gate);
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char base[32];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%06dZ", base, (int)(ms % 1000) * 1000);
}

static const char *lease_holder(const cJSON *lease, bool *present)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(lease, "spec");
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(spec, "holderIdentity");
    *present = cJSON_IsString(h);
    return cJSON_IsString(h) ? h->valuestring : "";
}

static int lease_get(rs_txn *tx, rs_resp *r)
{
    rs_req req = {.op = RS_OP_KUBE_GET,
                  .kind = "Lease",
                  .ns = tx->cfg->lease_ns,
                  .name = tx->cfg->lease_name};
    return gate_read(&tx->gate, &req, r);
}

static void add_op(cJSON *patch, const char *op, const char *path, const char *value)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "op", op);
    cJSON_AddStringToObject(o, "path", path);
    cJSON_AddStringToObject(o, "value", value);
    cJSON_AddItemToArray(patch, o);
}

static int lease_patch(rs_txn *tx, cJSON *patch, rs_resp *r)
{
    rs_req req = {.op = RS_OP_KUBE_PATCH,
                  .kind = "Lease",
                  .ns = tx->cfg->lease_ns,
                  .name = tx->cfg->lease_name,
                  .patch_type = RS_PATCH_JSON,
                  .body = patch};
    int st = gate_fence_write(&tx->gate, &req, r);
    cJSON_Delete(patch);
    return st;
}

/* What a read of the Lease shows about this run's hold on it. */
typedef enum lease_seen { LEASE_OURS, LEASE_FREE, LEASE_OTHER, LEASE_UNREADABLE } lease_seen;

/* Reads the Lease; when it is ours, remembers its resourceVersion. *status
 * (may be NULL) receives the HTTP status of the read. */
static lease_seen lease_look(rs_txn *tx, int *status)
{
    rs_resp r;
    int st = lease_get(tx, &r);
    if (status) *status = st;
    lease_seen seen = LEASE_UNREADABLE;
    if (st == 404) {
        seen = LEASE_FREE;
    } else if (st == 200 && r.body) {
        bool present;
        const char *h = lease_holder(r.body, &present);
        if (strcmp(h, tx->holder) == 0) {
            seen = LEASE_OURS;
            snprintf(tx->lease_rv, sizeof tx->lease_rv, "%s", kobj_rv(r.body));
        } else {
            seen = h[0] == '\0' ? LEASE_FREE : LEASE_OTHER;
        }
    }
    rs_resp_free(&r);
    return seen;
}

/* A CAS write that leaves the Lease ours (acquire, renew): on success or an
 * adopted lost response, remembers its resourceVersion and the renewal time. */
static bool lease_write_ours(rs_txn *tx, cJSON *patch, int *status)
{
    rs_resp w;
    int ws = lease_patch(tx, patch, &w);
    if (ws == 200) snprintf(tx->lease_rv, sizeof tx->lease_rv, "%s", kobj_rv(w.body));
    rs_resp_free(&w);
    *status = ws;
    bool ours = ws == 200 || (ws == 0 && lease_look(tx, NULL) == LEASE_OURS);
    if (ours) tx->lease_renewed_ms = gate_now_ms(&tx->gate);
    return ours;
}

static rs_code lease_create(rs_txn *tx, rs_err *e)
{
    char now[48];
    lease_time(tx, now, sizeof now);
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
    rs_req req = {.op = RS_OP_KUBE_CREATE, .kind = "Lease", .ns = tx->cfg->lease_ns, .body = obj};
    rs_resp r;
    int st = gate_fence_write(&tx->gate, &req, &r);
    cJSON_Delete(obj);
    if (st == 201 || st == 200) snprintf(tx->lease_rv, sizeof tx->lease_rv, "%s", kobj_rv(r.body));
    char why[256];
    kobj_describe(&r, why, sizeof why);
    rs_resp_free(&r);
    if (st == 201 || st == 200 || (st == 0 && lease_look(tx, NULL) == LEASE_OURS)) return RS_OK;
    return rs_fail(e, RS_FAILED, "creating Lease %s/%s: %s", tx->cfg->lease_ns, tx->cfg->lease_name,
                   why);
}

rs_code lease_acquire(rs_txn *tx, rs_err *e)
{
    for (int attempt = 0; attempt < TX_CAS_ATTEMPTS_MAX; attempt++) {
        rs_resp r;
        int st = lease_get(tx, &r);
        if (st == 404) {
            rs_resp_free(&r);
            rs_code c = lease_create(tx, e);
            if (c == RS_OK) {
                tx->lease_held = true;
                tx->lease_renewed_ms = gate_now_ms(&tx->gate);
            }
            return c;
        }
        if (st != 200 || !r.body) {
            char why[256];
            kobj_describe(&r, why, sizeof why);
            rs_resp_free(&r);
            return rs_fail(e, RS_FAILED, "reading Lease %s/%s: %s", tx->cfg->lease_ns,
                           tx->cfg->lease_name, why);
        }
        bool present;
        const char *holder = lease_holder(r.body, &present);
        if (holder[0] != '\0') {
            rs_fail(e, RS_FAILED,
                    "Lease %s/%s is held by %s; refusing (expiry never authorises a takeover; "
                    "inspect with `reassert --fences`)",
                    tx->cfg->lease_ns, tx->cfg->lease_name, holder);
            rs_resp_free(&r);
            return RS_FAILED;
        }
        char rv[TX_RV_MAX];
        snprintf(rv, sizeof rv, "%s", kobj_rv(r.body));
        rs_resp_free(&r);
        char now[48];
        lease_time(tx, now, sizeof now);
        cJSON *patch = cJSON_CreateArray();
        add_op(patch, "test", "/metadata/resourceVersion", rv);
        if (present) add_op(patch, "test", "/spec/holderIdentity", "");
        add_op(patch, "add", "/spec/holderIdentity", tx->holder);
        add_op(patch, "add", "/spec/acquireTime", now);
        add_op(patch, "add", "/spec/renewTime", now);
        int ws = 0;
        if (lease_write_ours(tx, patch, &ws)) {
            tx->lease_held = true;
            return RS_OK;
        }
        if (ws != 409 && ws != 422 && ws != 0)
            return rs_fail(e, RS_FAILED, "acquiring Lease %s/%s: HTTP %d", tx->cfg->lease_ns,
                           tx->cfg->lease_name, ws);
    }
    return rs_fail(e, RS_FAILED, "acquiring Lease %s/%s: still contended after %d attempts",
                   tx->cfg->lease_ns, tx->cfg->lease_name, TX_CAS_ATTEMPTS_MAX);
}

/* Renews the Lease by CAS on its resourceVersion and our holder. A CAS that
 * fails because someone else touched the Lease (a label, an annotation: H5,
 * DESIGN §3.4 r2) is re-read and, while the holder is still ours, renewed
 * again. Only a read showing another holder (or none) proves the Lease lost;
 * a failure to read or write proves nothing: the renewal fails, the Lease
 * stays in this run's books and cleanup still releases it. */
static rs_code lease_renew(rs_txn *tx, rs_err *e)
{
    int ws = 0;
    for (int attempt = 0; attempt < TX_CAS_ATTEMPTS_MAX; attempt++) {
        char now[48];
        lease_time(tx, now, sizeof now);
        cJSON *patch = cJSON_CreateArray();
        add_op(patch, "test", "/metadata/resourceVersion", tx->lease_rv);
        add_op(patch, "test", "/spec/holderIdentity", tx->holder);
        add_op(patch, "add", "/spec/renewTime", now);
        if (lease_write_ours(tx, patch, &ws)) return RS_OK;
        int rs = 0;
        lease_seen seen = lease_look(tx, &rs);
        if (seen == LEASE_OURS) {
            if (ws == 409 || ws == 422) {
                out_info(tx->out,
                         "Lease %s/%s changed under us but is still ours (HTTP %d on renewal); "
                         "renewing again",
                         tx->cfg->lease_ns, tx->cfg->lease_name, ws);
                continue;
            }
            break; /* still ours, but the renewal itself keeps failing */
        }
        if (seen == LEASE_FREE || seen == LEASE_OTHER) {
            tx->lease_held = false;
            return rs_fail(e, RS_FAILED,
                           "renewing Lease %s/%s failed (HTTP %d): it is now %s; the fence is "
                           "lost",
                           tx->cfg->lease_ns, tx->cfg->lease_name, ws,
                           seen == LEASE_FREE ? "free" : "held by another run");
        }
        return rs_fail(e, RS_FAILED,
                       "renewing Lease %s/%s failed (HTTP %d) and re-reading it failed (HTTP "
                       "%d); whether this run still holds it is unknown",
                       tx->cfg->lease_ns, tx->cfg->lease_name, ws, rs);
    }
    return rs_fail(e, RS_FAILED, "renewing Lease %s/%s failed (HTTP %d); it is still ours",
                   tx->cfg->lease_ns, tx->cfg->lease_name, ws);
}

#define LEASE_READ_ATTEMPTS 3

/* Before every mutation: the Lease must still be ours. A read that fails is
 * retried within a small budget (H6) and said so; only a read showing
 * another holder (or none) drops the Lease from this run's books. */
rs_code lease_assert_held(rs_txn *tx, rs_err *e)
{
    if (!tx->lease_held)
        return rs_fail(e, RS_FAILED, "Lease %s/%s is not held by this run", tx->cfg->lease_ns,
                       tx->cfg->lease_name);
    int st = 0;
    lease_seen seen = lease_look(tx, &st);
    for (int attempt = 1; seen == LEASE_UNREADABLE && attempt < LEASE_READ_ATTEMPTS; attempt++) {
        out_warning(tx->out, "reading Lease %s/%s failed (HTTP %d); re-proving its holder",
                    tx->cfg->lease_ns, tx->cfg->lease_name, st);
        gate_sleep_ms(&tx->gate, tx->cfg->sync_interval_ms);
        seen = lease_look(tx, &st);
    }
    if (seen == LEASE_UNREADABLE)
        return rs_fail(e, RS_FAILED,
                       "Lease %s/%s could not be read (HTTP %d, %d attempts); refusing to write "
                       "while its holder is unproven",
                       tx->cfg->lease_ns, tx->cfg->lease_name, st, LEASE_READ_ATTEMPTS);
    if (seen != LEASE_OURS) {
        tx->lease_held = false;
        return rs_fail(e, RS_FAILED,
                       "Lease %s/%s is no longer held by this run (it is %s); refusing to write",
                       tx->cfg->lease_ns, tx->cfg->lease_name,
                       seen == LEASE_FREE ? "free" : "held by another run");
    }
    int64_t heartbeat_ms = (int64_t)tx->cfg->lease_heartbeat_s * 1000;
    if (gate_now_ms(&tx->gate) - tx->lease_renewed_ms >= heartbeat_ms) return lease_renew(tx, e);
    return RS_OK;
}

rs_code lease_take_over(rs_txn *tx, const char *holder, const char *rv, rs_err *e)
{
    char now[48];
    lease_time(tx, now, sizeof now);
    cJSON *patch = cJSON_CreateArray();
    add_op(patch, "test", "/metadata/resourceVersion", rv);
    add_op(patch, "test", "/spec/holderIdentity", holder);
    add_op(patch, "replace", "/spec/holderIdentity", tx->holder);
    add_op(patch, "add", "/spec/acquireTime", now);
    add_op(patch, "add", "/spec/renewTime", now);
    int ws = 0;
    if (lease_write_ours(tx, patch, &ws)) {
        tx->lease_held = true;
        return RS_OK;
    }
    return rs_fail(e, RS_FAILED,
                   "taking over Lease %s/%s from %s failed (HTTP %d): it changed since it was "
                   "read (CAS on holder and resourceVersion %s); refusing",
                   tx->cfg->lease_ns, tx->cfg->lease_name, holder, ws, rv);
}

rs_code lease_release(rs_txn *tx, rs_err *e)
{
    if (!tx->lease_held) return RS_OK;
    for (int attempt = 0; attempt < TX_CAS_ATTEMPTS_MAX; attempt++) {
        cJSON *patch = cJSON_CreateArray();
        add_op(patch, "test", "/metadata/resourceVersion", tx->lease_rv);
        add_op(patch, "test", "/spec/holderIdentity", tx->holder);
        add_op(patch, "replace", "/spec/holderIdentity", "");
        rs_resp w;
        int ws = lease_patch(tx, patch, &w);
        rs_resp_free(&w);
        if (ws == 200) {
            tx->lease_held = false;
            return RS_OK;
        }
        lease_seen seen = lease_look(tx, NULL); /* refreshes lease_rv when still ours */
        if (seen == LEASE_FREE) {
            tx->lease_held = false;
            return RS_OK;
        }
        if (seen != LEASE_OURS) break;
    }
    return rs_fail(e, RS_FAILED, "releasing Lease %s/%s failed; it is retained by %s",
                   tx->cfg->lease_ns, tx->cfg->lease_name, tx->holder);
}

void lease_heartbeat(rs_txn *tx)
{
    if (!tx->lease_held) return;
    int64_t heartbeat_ms = (int64_t)tx->cfg->lease_heartbeat_s * 1000;
    if (gate_now_ms(&tx->gate) - tx->lease_renewed_ms < heartbeat_ms) return;
    rs_err e;
    rs_err_clear(&e);
    /* A failed renewal is noticed (and fails closed) at the next mutation's
     * lease_assert_held; a wait has nothing to undo. */
    if (lease_renew(tx, &e) != RS_OK) out_warning(tx->out, "%s", e.msg);
}
