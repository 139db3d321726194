/*
 * sim_transport_faults.c — fault injection as data (client-go's reactor
 * model): each entry of a run's `faults:` is matched by glob against the
 * §5 operation name of every call that reaches the transport, and the nth
 * match (or every later one with and-after) gets the effect. The core has
 * no test branch: it sees a status, a timeout or a lost answer.
 */
#include "sim/transport/sim_transport_int.h"

#include <fnmatch.h>
#include <stdlib.h>

bool simt_hit(const char *glob, const char *opname, int *seen, int nth, bool and_after)
{
    if (!glob || fnmatch(glob, opname, 0) != 0) return false;
    (*seen)++;
    return *seen == nth || (and_after && *seen > nth);
}

const sc_fault *simt_fault(simt_ctx *c, const char *opname)
{
    const sc_run *run = c->run;
    const sc_fault *hit = NULL;
    for (size_t i = 0; run && i < run->n_faults; i++) {
        const sc_fault *f = &run->faults[i];
        if (!simt_hit(f->on, opname, &c->fault_seen[i], f->nth, f->and_after)) continue;
        c->fault_fired[i] = true;
        if (!hit) hit = f;
    }
    return hit;
}

const char *simt_status_reason(int code)
{
    switch (code) {
    case 400:
        return "BadRequest";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "NotFound";
    case 409:
        return "Conflict";
    case 422:
        return "Invalid";
    case 429:
        return "TooManyRequests";
    case 503:
        return "ServiceUnavailable";
    case 504:
        return "Timeout";
    default:
        return "InternalError";
    }
}

char **sim_transport_unfired(rs_transport *t, size_t *n)
{
    simt_ctx *c = (simt_ctx *)t->ctx;
    const sc_run *run = c->run;
    size_t nf = run ? run->n_faults : 0, nd = run ? run->n_during : 0;
    char **v = rs_xcalloc(nf + 2 * nd + 1, sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < nf; i++)
        if (!c->fault_fired[i])
            v[k++] =
                rs_xasprintf("fault %s nth %d never fired", run->faults[i].on, run->faults[i].nth);
    for (size_t i = 0; i < nd; i++) {
        if (!c->during_fired[i])
            v[k++] = rs_xasprintf("during before-call %s nth %d never fired",
                                  run->during[i].before_call, run->during[i].nth);
        if (c->during_error[i])
            v[k++] =
                rs_xasprintf("during before-call %s nth %d could not apply its event: %s",
                             run->during[i].before_call, run->during[i].nth, c->during_error[i]);
    }
    *n = k;
    return v;
}
