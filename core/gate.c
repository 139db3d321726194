/*
 * gate.c — the write gate (see gate.h for the one idea).
 */
#include "core/gate.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rs_gate {
    rs_transport *t;
    rs_gate_ops ops;
    void *owner;
    gate_need held;
    bool restart_on_fence;
    int writes;  /* writes performed through the gate (incl. fence writes) */
    int changes; /* gated (non-fence) writes the cluster accepted: the run changed the world */
};

rs_gate *gate_new(rs_transport *t, rs_gate_ops ops, void *owner, bool restart_on_fence)
{
    rs_gate *g = rs_xcalloc(1, sizeof *g);
    g->t = t;
    g->ops = ops;
    g->owner = owner;
    g->held = GATE_NEED_NONE;
    g->restart_on_fence = restart_on_fence;
    return g;
}

void gate_free(rs_gate *g)
{
    free(g);
}

rs_code gate_take(rs_gate *g, gate_need need, rs_err *e)
{
    if (g->held >= need) return RS_OK;
    rs_code c = g->ops.take(g->owner, need, e);
    if (c == RS_OK) g->held = need;
    return c;
}

int gate_read(rs_gate *g, const rs_req *req, rs_resp *resp)
{
    /* A write smuggled through the read path would bypass the fence. */
    assert(!rs_op_is_write(req->op));
    if (rs_op_is_write(req->op)) {
        rs_resp_init(resp);
        snprintf(resp->error, sizeof resp->error, "write attempted through the read path");
        resp->sent = RS_SENT_NO;
        return 0;
    }
    rs_resp_init(resp);
    return tp_call(g->t, req, resp);
}

/* Reads only: a write in a batch would have no order and no fence check. */
void gate_read_batch(rs_gate *g, const rs_req *reqs, rs_resp *resps, size_t n, int parallelism)
{
    bool smuggled = false;
    for (size_t i = 0; i < n; i++) {
        assert(!rs_op_is_write(reqs[i].op));
        smuggled = smuggled || rs_op_is_write(reqs[i].op);
        rs_resp_init(&resps[i]);
    }
    for (size_t i = 0; smuggled && i < n; i++) {
        snprintf(resps[i].error, sizeof resps[i].error, "write attempted through the read path");
        resps[i].sent = RS_SENT_NO;
    }
    if (!smuggled) tp_call_batch(g->t, reqs, resps, n, parallelism);
}

/* Asserts the fence is still held (the owner's check reads the Lease). */
static rs_code gate_check(rs_gate *g, rs_err *e)
{
    if (!g->ops.check) return RS_OK;
    return g->ops.check(g->owner, e);
}

gate_result gate_write(rs_gate *g, gate_need need, const rs_req *req, rs_resp *resp, rs_err *e)
{
    assert(rs_op_is_write(req->op));
    assert(need != GATE_NEED_NONE);
    rs_resp_init(resp);
    if (g->held < need) {
        if (g->ops.take(g->owner, need, e) != RS_OK) return GATE_FAILED;
        g->held = need;
        if (g->restart_on_fence) return GATE_FENCE_TAKEN;
    }
    if (gate_check(g, e) != RS_OK) return GATE_FAILED;
    g->writes++;
    int st = tp_call(g->t, req, resp);
    if (st >= 200 && st < 300) g->changes++;
    return GATE_WRITTEN;
}

gate_result gate_fence_write(rs_gate *g, const rs_req *req, rs_resp *resp, rs_err *e)
{
    assert(rs_op_is_write(req->op));
    rs_resp_init(resp);
    /* Proven now, never on an earlier proof: another actor can take the
     * Lease between two fence writes (scenario lease/taken-during-fence-take). */
    if (gate_check(g, e) != RS_OK) return GATE_FAILED;
    g->writes++;
    tp_call(g->t, req, resp);
    return GATE_WRITTEN;
}

int gate_release_write(rs_gate *g, const rs_req *req, rs_resp *resp)
{
    assert(rs_op_is_write(req->op));
    rs_resp_init(resp);
    g->writes++;
    return tp_call(g->t, req, resp);
}

gate_need gate_held(const rs_gate *g)
{
    return g->held;
}

int gate_writes(const rs_gate *g)
{
    return g->writes;
}

int gate_changes(const rs_gate *g)
{
    return g->changes;
}

int64_t gate_now_ms(rs_gate *g)
{
    return g->t->now_ms(g->t);
}

void gate_sleep_ms(rs_gate *g, int64_t ms)
{
    if (g->ops.heartbeat && g->held != GATE_NEED_NONE) g->ops.heartbeat(g->owner);
    g->t->sleep_ms(g->t, ms);
}

void gate_wait_ms(rs_gate *g, int64_t ms)
{
    g->t->sleep_ms(g->t, ms);
}

uint64_t gate_entropy(rs_gate *g)
{
    return g->t->entropy(g->t);
}

int gate_pid(rs_gate *g)
{
    return g->t->pid ? g->t->pid(g->t) : 0;
}
