/*
 * ctl_int.h — private to sim/controllers/: what the controller files share.
 *
 * The controllers' public face (ctl_advance_to, ctl_after_write, ctl_init,
 * ctl_talos_reboot, ctl_evict, ctl_rollout_status_refresh, ctl_schedule) is
 * declared in sim/world/world_internal.h, because the world's write path and
 * events call it; this header adds what the files of this folder call of each
 * other. Calls go one way: ctl_clock.c -> the controllers (ctl_eso.c,
 * ctl_flux.c, ctl_rollout.c, ctl_node.c) -> ctl_base.c. No controller calls
 * another; they meet only through timers and the objects they write.
 */
#ifndef SIM_CTL_INT_H
#define SIM_CTL_INT_H

#include "sim/world/world_internal.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

/* ---- ctl_base.c: timers, object helpers, pods ---- */

/* Pops the earliest timer due at or before target_ms (caller frees kind and
 * payload); false when none is due. */
bool ctl_timer_pop(sim_world *w, int64_t target_ms, int64_t *due, char **kind, char **payload);
/* Moves every `kind` timer due at or before horizon_ms forward by whole
 * periods, into (horizon_ms - period_ms, horizon_ms]: a periodic timer's
 * firings in between are skipped (ctl_clock.c's long advance). */
void ctl_timers_skip(sim_world *w, const char *kind, int64_t period_ms, int64_t horizon_ms);
/* Drops every pending `kind` timer with this payload. */
void ctl_timers_cancel(sim_world *w, const char *kind, const char *payload);

#define CTL_FLUX_INTERVAL_MS (10LL * 60 * 1000) /* flux.tick's period */

/* A periodic timer's first firing in a new world: the next whole period
 * after the clock. A preset world starts at 0; a world seeded from a
 * cassette starts at the recorded clock, and a timer "due" in its past would
 * fire at the first call as if it had been missed. */
static inline int64_t ctl_first_period(sim_world *w, int64_t period_ms)
{
    return (simw_now(w) / period_ms + 1) * period_ms;
}
/* "Kind/ns/name", or "Kind/name" for ns NULL or "". Caller frees. */
char *ctl_ref(const char *kind, const char *ns, const char *name);
/* The string at obj.a[.b[.c]], or NULL. */
const char *ctl_obj_str(const cJSON *obj, const char *a, const char *b, const char *c);
/* obj.a.b[0], or NULL. */
const cJSON *ctl_first_item(const cJSON *obj, const char *a, const char *b);
/* Merge-patches status (consumed) into the object's status. */
void ctl_patch_status(sim_world *w, const char *kind, const char *ns, const char *name,
                      cJSON *status);
/* A conditions array holding one Ready condition, stamped wall_ms (a
 * wall-clock time, simw_wall). */
cJSON *ctl_ready_conditions(const char *status, const char *reason, const char *message,
                            int64_t wall_ms);
bool ctl_pod_terminating(const cJSON *pod);
/* Sets deletionTimestamp now and schedules "pod.delete" after after_ms. */
void ctl_pod_terminate(sim_world *w, const char *ns, const char *name, int64_t after_ms);
void ctl_pod_delete(sim_world *w, const char *ns, const char *name);

/* ---- ctl_eso.c ---- */
void ctl_eso_init(sim_world *w);
void ctl_eso_notice(sim_world *w, const char *kind, const char *ns, const char *name);
void ctl_eso_sync(sim_world *w, const char *ref);
/* A sync, then the next hourly refresh. */
void ctl_eso_refresh(sim_world *w, const char *ref);

/* ---- ctl_flux.c ---- */
void ctl_flux_init(sim_world *w);
void ctl_flux_notice(sim_world *w, const char *ns, const char *name);
void ctl_flux_start(sim_world *w, const char *ref);
void ctl_flux_finish(sim_world *w, const char *ref);
void ctl_flux_tick(sim_world *w, const char *ref);
/* Timer "flux.cancel": the controller's pods were replaced; every reconcile in
 * flight is cancelled and reports HealthCheckFailed until its retry. */
void ctl_flux_cancel_all(sim_world *w);

/* ---- ctl_rollout.c ---- */
void ctl_rollout_init(sim_world *w);
void ctl_rollout_notice(sim_world *w);
void ctl_rollout_ready(sim_world *w, const char *hash);

/* ---- ctl_node.c ---- */
/* payload "<reboot seq>:<node>"; a superseded reboot is a no-op. */
void ctl_talos_reboot_done(sim_world *w, const char *payload);
/* Timer "node.untaint": clears one startup taint ("<seq>:<key>:<node>"). */
void ctl_node_untaint(sim_world *w, const char *payload);

#endif
