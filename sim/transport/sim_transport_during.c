/*
 * sim_transport_during.c — a run's `during:` entries: a world event applied
 * just before the nth core call matching `before-call`, inside that call's
 * transaction, so the core's next read sees another actor's change exactly
 * where a scenario put it. An event that cannot apply is remembered and
 * reported with the unfired entries (a scenario that did not test what it
 * says must fail).
 */
#include "sim/transport/sim_transport_int.h"

void simt_during(simt_ctx *c, const char *opname)
{
    const sc_run *run = c->run;
    for (size_t i = 0; run && i < run->n_during; i++) {
        const sc_during *d = &run->during[i];
        if (!simt_hit(d->before_call, opname, &c->during_seen[i], d->nth, d->and_after)) continue;
        c->during_fired[i] = true;
        rs_err e = {0};
        if (simw_apply_event(c->w, &d->action, &e) != RS_OK && !c->during_error[i])
            c->during_error[i] = rs_xstrdup(e.msg);
    }
}
