/*
 * sim_transport.c — the sim root of `struct rs_transport`: every core call
 * answered from the world file, with the latency model, fault injection,
 * mid-run `during:` events, the call log and the §4 counters.
 *
 * The one idea: one call is one transaction. It advances the clock by
 * SIM_CALL_MS (firing due controllers), applies any `during:` event, decides
 * the fault, performs the operation, logs and counts it, and commits — so a
 * `crash` fault can _exit(137) with the world exactly as the cluster would be.
 * Faults are data matched against the §5 operation name (client-go's reactor
 * model), never branches in the core.
 */
#include "sim/transport/sim_transport_int.h"

#include "sim/store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static simt_ctx *ctx_of(rs_transport *t)
{
    return (simt_ctx *)t->ctx;
}

bool simt_str_eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

bool simt_is_object(const rs_req *req, const char *kind, const char *ns, const char *name)
{
    return simt_str_eq(req->kind, kind) && simt_str_eq(req->ns, ns) && simt_str_eq(req->name, name);
}

static int simt_perform(simt_ctx *c, const rs_req *req, rs_resp *resp, simt_effect *fx)
{
    sim_world *w = c->w;
    switch (req->op) {
    case RS_OP_KUBE_GET:
    case RS_OP_KUBE_LIST:
    case RS_OP_KUBE_CREATE:
    case RS_OP_KUBE_PATCH:
    case RS_OP_KUBE_DELETE:
        return simt_kube(w, c->run_name, req, resp, fx);
    case RS_OP_KUBE_EVICT:
        return simt_evict(w, req, resp, fx);
    case RS_OP_OPENBAO_READ:
    case RS_OP_OPENBAO_WRITE:
        return simt_openbao(w, req, resp, fx);
    case RS_OP_REGISTRY_TOKEN:
    case RS_OP_REGISTRY_MANIFEST:
        return simt_registry(w, req, resp);
    case RS_OP_RUN_LIVENESS:
        return simt_liveness(w, req, resp);
    case RS_OP_COUNT:
        return 400;
    default:
        return simt_talos(w, c->run_name, req, resp, fx);
    }
}

/* One call as one world transaction; cost_ms is the round trip it pays
 * (SIM_CALL_MS alone, 0 when it shares a batch's round trip). */
static int simt_call_cost(simt_ctx *c, const rs_req *req, rs_resp *resp, int64_t cost_ms)
{
    sim_world *w = c->w;
    rs_resp_init(resp);
    simw_begin(w);
    ctl_advance_to(w, simw_now(w) + cost_ms);
    char *opname = rs_req_opname(req);
    simt_during(c, opname);
    const sc_fault *f = simt_fault(c, opname);
    free(opname);
    simt_held_refresh(c);
    cnt_add(w, "api_calls", 1);
    const char *service = cnt_service_of(req->op);
    if (service) cnt_add(w, service, 1);
    simt_effect fx = {0};
    int status = 0;
    if (f && f->effect == SC_FAULT_CRASH) {
        simt_log(c, req, 0, false);
        simw_commit(w);
        simw_exit(w, SIMT_CRASH_EXIT);
    } else if (f && f->effect == SC_FAULT_FAIL) {
        status = f->fail_status;
        resp->body =
            store_status(status, simt_status_reason(status), "injected fault: HTTP %d", status);
    } else if (f && f->effect == SC_FAULT_TIMEOUT) {
        ctl_advance_to(w, simw_now(w) + SIM_TIMEOUT_MS);
        snprintf(resp->error, sizeof resp->error, "timeout");
        resp->sent = RS_SENT_UNKNOWN; /* not applied, but the client cannot know */
    } else {
        status = simt_perform(c, req, resp, &fx);
        if (f && f->effect == SC_FAULT_LOST_RESPONSE) {
            ctl_advance_to(w, simw_now(w) + SIM_TIMEOUT_MS);
            cJSON_Delete(resp->body);
            resp->body = NULL;
            status = 0;
            snprintf(resp->error, sizeof resp->error, "lost response");
        }
    }
    resp->status = status;
    if (status != 0 || (f && f->effect == SC_FAULT_LOST_RESPONSE)) resp->sent = RS_SENT_YES;
    if (resp->body) rs_resp_mark_secrets(req, resp);
    if (fx.applied && rs_op_is_write(req->op)) simt_count_write(c, req);
    if (fx.drain_node) simt_count_drain(c, fx.drain_node);
    free(fx.drain_node);
    simt_log(c, req, status, fx.applied);
    simt_see_rollout(c, req, resp);
    simt_fence_check(c);
    simw_commit(w);
    return status;
}

static int simt_call(rs_transport *t, const rs_req *req, rs_resp *resp)
{
    return simt_call_cost(ctx_of(t), req, resp, SIM_CALL_MS);
}

/* A batch of independent reads costs ceil(n / parallelism) round trips:
 * the first call of each group of `parallelism` pays SIM_CALL_MS, the rest
 * ride along. Each call is still its own transaction (faults, `during:`,
 * counting and the call log see every call); a timeout or lost answer in a
 * batch costs its full timeout on top, as if the group waited for it. */
static void simt_call_batch(rs_transport *t, const rs_req *reqs, rs_resp *resps, size_t n,
                            int parallelism)
{
    simt_ctx *c = ctx_of(t);
    size_t p = parallelism > 0 ? (size_t)parallelism : 1;
    for (size_t i = 0; i < n; i++)
        simt_call_cost(c, &reqs[i], &resps[i], i % p == 0 ? SIM_CALL_MS : 0);
}

int sim_transport_call_riding(rs_transport *t, const rs_req *req, rs_resp *resp)
{
    return simt_call_cost(ctx_of(t), req, resp, 0);
}

/* The core reads the world's wall clock (one epoch with every timestamp
 * the world writes), offset by its run's `skew:`: a machine whose clock is
 * ahead of (or behind) the API server's. */
static int64_t simt_now_ms(rs_transport *t)
{
    simt_ctx *c = ctx_of(t);
    int64_t ms = simw_wall(c->w) + (c->run ? c->run->skew_ms : 0);
    return ms > 0 ? ms : 0; /* no machine reports a time before the Unix epoch */
}

static void simt_sleep_ms(rs_transport *t, int64_t ms)
{
    simt_ctx *c = ctx_of(t);
    simw_begin(c->w);
    ctl_advance_to(c->w, simw_now(c->w) + (ms > 0 ? ms : 0));
    simt_fence_check(c);
    simw_commit(c->w);
}

static uint64_t simt_entropy(rs_transport *t)
{
    sim_world *w = ctx_of(t)->w;
    simw_begin(w);
    char *s = simw_meta_get(w, "rng");
    uint64_t state = s ? strtoull(s, NULL, 10) : 0;
    free(s);
    uint64_t v = simw_splitmix64(&state);
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)state);
    simw_meta_set(w, "rng", buf);
    simw_commit(w);
    return v;
}

static int simt_pid(rs_transport *t)
{
    return ctx_of(t)->pid;
}

/* One process id per run, derived from the seed and the run name: holder
 * identities are reproducible, and two runs of one scenario differ. */
static int simt_derive_pid(sim_world *w, const char *run_name)
{
    char *seed = simw_meta_get(w, "seed");
    char *text = rs_xasprintf("sim-pid\n%s\n%s", seed ? seed : "", run_name);
    char hex[65];
    sha256_hex(text, strlen(text), hex);
    free(text);
    free(seed);
    return SIMT_PID_MIN + (int)(strtoul(hex + 56, NULL, 16) % (SIMT_PID_MAX - SIMT_PID_MIN));
}

static void simt_close(rs_transport *t)
{
    if (!t) return;
    simt_ctx *c = ctx_of(t);
    size_t nd = c->run ? c->run->n_during : 0;
    for (size_t i = 0; i < nd; i++)
        free(c->during_error[i]);
    free(c->during_error);
    free(c->check_failed);
    free(c->during_seen);
    free(c->during_fired);
    free(c->fault_seen);
    free(c->fault_fired);
    free(c->run_name);
    free(c);
}

rs_transport *sim_transport_open(sim_world *w, const char *run_name, const sc_run *run)
{
    simt_ctx *c = rs_xcalloc(1, sizeof *c);
    c->w = w;
    c->run_name = rs_xstrdup(run_name ? run_name : "");
    c->run = run;
    size_t nf = run ? run->n_faults : 0, nd = run ? run->n_during : 0;
    c->fault_seen = rs_xcalloc(nf + 1, sizeof *c->fault_seen);
    c->fault_fired = rs_xcalloc(nf + 1, sizeof *c->fault_fired);
    c->during_seen = rs_xcalloc(nd + 1, sizeof *c->during_seen);
    c->during_fired = rs_xcalloc(nd + 1, sizeof *c->during_fired);
    c->during_error = rs_xcalloc(nd + 1, sizeof *c->during_error);
    c->check_failed = rs_xcalloc(nd + 1, sizeof *c->check_failed);
    c->fence_rev = -1;
    c->held_rev = -1;
    c->pid = simt_derive_pid(w, c->run_name);
    simw_begin(w);
    simw_meta_set(w, "run", c->run_name);
    simw_meta_set(w, "run.restarted_at", "");
    simw_meta_set_int(w, "run.fence_held", 0);
    simw_meta_set(w, "run.rollout_seen", "");
    inv_run_begin(w, c->run_name);
    simw_commit(w);
    c->t = (rs_transport){.version = RS_TRANSPORT_VERSION,
                          .name = "sim",
                          .ctx = c,
                          .call = simt_call,
                          .call_batch = simt_call_batch,
                          .now_ms = simt_now_ms,
                          .sleep_ms = simt_sleep_ms,
                          .entropy = simt_entropy,
                          .pid = simt_pid,
                          .close = simt_close};
    return &c->t;
}
