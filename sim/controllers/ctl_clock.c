/*
 * ctl_clock.c — the virtual clock and the one place that knows every
 * controller: due timers are dispatched here, writes are routed here, and a
 * fresh world's controllers start here.
 *
 * The one idea: nothing happens on wall-clock time. Moving the clock fires
 * every due timer in (due_ms, id) order, and a write (by the core or a world
 * event) is looked at for the triggers a controller watches. The controllers
 * (ctl_eso.c, ctl_flux.c, ctl_rollout.c, ctl_node.c) only schedule timers
 * through ctl_base.c and never call each other, so their reactions compose
 * here and only here.
 */
#include "sim/controllers/ctl_int.h"

#include "sim/store/store.h"

#include <stdlib.h>
#include <string.h>

#define CTL_TIMERS_PER_ADVANCE_MAX 1000000 /* a runaway controller loop is a sim bug */

/* A pod's grace period is over. The rollout's status counts pods, so it is
 * recomputed when one of the controller's pods goes. */
static void ctl_pod_gone(sim_world *w, const char *ref)
{
    char kind[SIMW_NAME_MAX], ns[SIMW_NAME_MAX], name[SIMW_NAME_MAX];
    if (!simw_ref_parse(ref, kind, ns, name)) return;
    ctl_pod_delete(w, ns, name);
    if (strcmp(ns, w->cfg.controller_ns) == 0) ctl_rollout_status_refresh(w);
}

static void ctl_fire(sim_world *w, const char *kind, const char *payload)
{
    if (strcmp(kind, "eso.sync") == 0) {
        ctl_eso_sync(w, payload);
    } else if (strcmp(kind, "eso.refresh") == 0) {
        ctl_eso_refresh(w, payload);
    } else if (strcmp(kind, "flux.tick") == 0) {
        ctl_flux_tick(w, payload);
    } else if (strcmp(kind, "flux.start") == 0) {
        ctl_flux_start(w, payload);
    } else if (strcmp(kind, "flux.finish") == 0) {
        ctl_flux_finish(w, payload);
    } else if (strcmp(kind, "flux.cancel") == 0) {
        ctl_flux_cancel_all(w);
    } else if (strcmp(kind, "rollout.ready") == 0) {
        ctl_rollout_ready(w, payload);
    } else if (strcmp(kind, "pod.delete") == 0) {
        ctl_pod_gone(w, payload);
    } else if (strcmp(kind, "talos.reboot-done") == 0) {
        ctl_talos_reboot_done(w, payload);
    } else if (strcmp(kind, "node.untaint") == 0) {
        ctl_node_untaint(w, payload);
    } else {
        simw_die(w, "controller timer dispatch (unknown timer kind)");
    }
}

/* Fires every timer due up to target_ms, in (due_ms, id) order. */
static void ctl_tick_to(sim_world *w, int64_t target_ms)
{
    int64_t now = simw_now(w);
    for (int i = 0; i < CTL_TIMERS_PER_ADVANCE_MAX; i++) {
        int64_t due = 0;
        char *kind = NULL, *payload = NULL;
        if (!ctl_timer_pop(w, target_ms, &due, &kind, &payload)) {
            if (target_ms > now) simw_set_now(w, target_ms);
            return;
        }
        if (due > now) simw_set_now(w, now = due);
        ctl_fire(w, kind, payload);
        free(kind);
        free(payload);
    }
    simw_die(w, "controller timers (more than a million due in one advance)");
}

/* A long advance jumps instead of ticking through every period (an `advance:
 * 100000h` once cost minutes of wall time): the first day ticks normally, so
 * one-shot timers (rollouts, grace periods, reboots, Flux applies) settle;
 * then the periodic timers (ESO refresh, Flux interval) skip whole periods up
 * to one day before the target, and the last day ticks normally again. With
 * no event in between, a skipped firing would have seen the same state as
 * the one before it, so the world at the target is the one a full tick gives
 * (apart from the timestamps of the skipped firings). Advances of up to two
 * days, all the scenarios use today, tick every timer as before. */
#define CTL_JUMP_SPAN_MS (24LL * 3600 * 1000)

void ctl_advance_to(sim_world *w, int64_t target_ms)
{
    int64_t now = simw_now(w);
    if (target_ms - now > 2 * CTL_JUMP_SPAN_MS) {
        ctl_tick_to(w, now + CTL_JUMP_SPAN_MS);
        int64_t horizon = target_ms - CTL_JUMP_SPAN_MS;
        ctl_timers_skip(w, "eso.refresh", SIM_ESO_REFRESH_MS, horizon);
        ctl_timers_skip(w, "flux.tick", CTL_FLUX_INTERVAL_MS, horizon);
    }
    ctl_tick_to(w, target_ms);
}

void ctl_after_write(sim_world *w, const char *kind, const char *ns, const char *name)
{
    if (!kind || !name) return;
    if (strcmp(kind, "PushSecret") == 0 || strcmp(kind, "ExternalSecret") == 0)
        ctl_eso_notice(w, kind, ns, name);
    else if (strcmp(kind, "Kustomization") == 0)
        ctl_flux_notice(w, ns, name);
    else if (strcmp(kind, "Deployment") == 0 && ns && strcmp(ns, w->cfg.controller_ns) == 0 &&
             strcmp(name, w->cfg.controller_name) == 0)
        ctl_rollout_notice(w);
}

void ctl_init(sim_world *w)
{
    ctl_rollout_init(w);
    ctl_eso_init(w);
    ctl_flux_init(w);
}
