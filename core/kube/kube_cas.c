/*
 * kube_cas.c — the one CAS-write-and-adopt loop (see kube_cas.h for the one
 * idea). Every decision about *what* to write or *whether* a re-read shows
 * our write belongs to the caller's plan and seen callbacks; this file only
 * decides *when* to read, send, re-read and stop.
 */
#include "core/kube/kube_cas.h"

#include "core/txn_int.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

bool kube_cas_ok(kube_cas_end end)
{
    return end == KUBE_CAS_WRITTEN || end == KUBE_CAS_ADOPTED || end == KUBE_CAS_ALREADY;
}

static void cas_read(rs_gate *g, const kube_cas_ops *ops, rs_resp *r)
{
    rs_req req = {.op = RS_OP_KUBE_GET, .kind = ops->kind, .ns = ops->ns, .name = ops->name};
    gate_read(g, &req, r);
}

/* Sends w through the door ops->need names; *gr receives the gate's verdict. */
static void cas_send(rs_gate *g, const kube_cas_ops *ops, const kube_cas_req *w, rs_resp *a,
                     gate_result *gr, rs_err *e)
{
    rs_op op = w->op == RS_OP_KUBE_CREATE ? RS_OP_KUBE_CREATE : RS_OP_KUBE_PATCH;
    rs_req req = {.op = op,
                  .kind = ops->kind,
                  .ns = ops->ns,
                  .name = op == RS_OP_KUBE_CREATE ? NULL : ops->name,
                  .patch_type = op == RS_OP_KUBE_PATCH
                                    ? (w->patch_type ? w->patch_type : RS_PATCH_JSON)
                                    : RS_PATCH_NONE,
                  .body = w->body};
    switch (ops->door) {
    case KUBE_CAS_GATED:
        *gr = gate_write(g, ops->need, &req, a, e);
        break;
    case KUBE_CAS_FENCE:
        *gr = gate_fence_write(g, &req, a, e);
        break;
    case KUBE_CAS_RELEASE:
        gate_release_write(g, &req, a);
        *gr = GATE_WRITTEN;
        break;
    }
}

static kube_cas_end cas_end(kube_cas_result *res, kube_cas_end end)
{
    res->end = end;
    return end;
}

/* Asks the plan; a read it was handed is consumed. */
static kube_cas_step cas_plan(const kube_cas_ops *ops, kube_cas_view *v, rs_resp *cur, bool *have,
                              kube_cas_req *w, kube_cas_result *res, rs_err *e)
{
    v->read = *have ? cur : NULL;
    v->read_status = *have ? cur->status : 0;
    v->cur = *have ? cur->body : NULL;
    if (*have)
        v->read_answer = rs_answer_of(cur);
    else
        snprintf(v->read_answer.text, sizeof v->read_answer.text, "not read");
    if (*have) {
        res->read_status = cur->status;
        res->read_answer = rs_answer_of(cur);
    }
    memset(w, 0, sizeof *w);
    w->op = RS_OP_KUBE_PATCH;
    kube_cas_step step = ops->plan(ops->ctx, v, w, e);
    if (*have) rs_resp_free(cur);
    *have = false;
    if (step != KUBE_CAS_WRITE) {
        cJSON_Delete(w->body);
        w->body = NULL;
    }
    return step;
}

kube_cas_end kube_cas_write(rs_gate *g, const kube_cas_ops *ops, kube_cas_result *res, rs_err *e)
{
    assert(ops->plan && ops->attempts_max > 0);
    memset(res, 0, sizeof *res);
    rs_resp cur;
    rs_resp_init(&cur);
    bool have = false; /* cur holds a read the next plan builds from */
    kube_cas_view v = {0};
    for (int attempt = 0; attempt < ops->attempts_max; attempt++) {
        if (ops->read == KUBE_CAS_PLAN_FROM_READ && !have) {
            cas_read(g, ops, &cur);
            have = true;
        }
        v.attempt = attempt;
        v.last = false;
        kube_cas_req w;
        kube_cas_step step = cas_plan(ops, &v, &cur, &have, &w, res, e);
        if (step == KUBE_CAS_DONE) return cas_end(res, KUBE_CAS_ALREADY);
        if (step == KUBE_CAS_REFUSE) return cas_end(res, KUBE_CAS_REFUSED);

        rs_resp a;
        gate_result gr = GATE_FAILED;
        cas_send(g, ops, &w, &a, &gr, e);
        cJSON_Delete(w.body);
        if (gr != GATE_WRITTEN) {
            rs_resp_free(&a);
            return cas_end(res, gr == GATE_FENCE_TAKEN ? KUBE_CAS_RESTART : KUBE_CAS_GATE_FAILED);
        }
        res->sent++;
        res->status = a.status;
        res->answer = rs_answer_of(&a);
        v.prev_status = a.status;
        v.prev_answer = res->answer;
        kobj_describe(&a, res->why, sizeof res->why);
        if (a.status >= 200 && a.status < 300) {
            if (ops->written) ops->written(ops->ctx, &a);
            rs_resp_free(&a);
            return cas_end(res, KUBE_CAS_WRITTEN);
        }
        bool not_sent = rs_resp_not_sent(&a);
        bool lost = a.status == 0 && !not_sent;
        rs_resp_free(&a);
        if (not_sent) continue; /* nothing happened: plan again from a fresh start */
        if (lost) {
            res->unconfirmed = true;
            if (!ops->seen) return cas_end(res, KUBE_CAS_UNRESOLVED);
            /* The re-read resolves the lost answer and, when the write was
             * not applied, is the read the next attempt plans from. */
            cas_read(g, ops, &cur);
            have = true;
            res->read_status = cur.status;
            res->read_answer = rs_answer_of(&cur);
            kube_cas_seen s = ops->seen(ops->ctx, cur.status, cur.body);
            if (s == KUBE_CAS_RETRY) continue;
            rs_resp_free(&cur);
            return cas_end(res, s == KUBE_CAS_ADOPT ? KUBE_CAS_ADOPTED : KUBE_CAS_UNRESOLVED);
        }
        bool conflict = w.cas && (res->status == 409 || res->status == 422);
        if (!conflict && !w.reread_on_error) return cas_end(res, KUBE_CAS_FAILED);
        bool last = attempt + 1 >= ops->attempts_max;
        if (ops->read == KUBE_CAS_PLAN_FROM_READ && last) break;
        cas_read(g, ops, &cur);
        have = true;
        if (last) {
            /* A blind plan concludes from the re-read; nothing more is sent. */
            v.attempt = attempt + 1;
            v.last = true;
            step = cas_plan(ops, &v, &cur, &have, &w, res, e);
            if (step == KUBE_CAS_DONE) return cas_end(res, KUBE_CAS_ALREADY);
            if (step == KUBE_CAS_REFUSE) return cas_end(res, KUBE_CAS_REFUSED);
            cJSON_Delete(w.body);
        }
    }
    if (have) rs_resp_free(&cur);
    return cas_end(res, KUBE_CAS_CONTENDED);
}
