/*
 * ctl_flux.c — Flux Kustomizations: suspend, resume, requested reconciles and
 * the ten-minute interval.
 *
 * The one idea: starting a reconcile honours spec.suspend, finishing one does
 * not (Flux documents that suspension does not stop an execution already
 * running), so a fence is only in force once Reconciling has cleared. What
 * the controller last saw of each Kustomization is a flux_state row, so a
 * resume or a new requestedAt is noticed exactly once. A reconcile the
 * controller's pod is replaced in is cancelled (ctl_flux_cancel_all): the
 * Kustomization reports HealthCheckFailed until its retry succeeds.
 */
#include "sim/controllers/ctl_int.h"

#include "sim/store/store.h"

#include <stdlib.h>
#include <string.h>

#define CTL_FLUX_RESUME_MS 1000 /* Flux reconciles "immediately-ish" after a resume */
/* Sim-only: how long this Kustomization's health checks take after its apply
 * (a duration, "<integer>(ms|s|m|h)"); absent, the reconcile takes
 * SIM_FLUX_RECONCILE_MS. The sim has no workloads to wait on, so a scenario
 * says how long they take. */
#define CTL_FLUX_HEALTH_ANN "sim.reassert/health-checks-take"
#define CTL_FLUX_HEALTH_MAX_MS (24LL * 3600 * 1000)

typedef struct flux_row {
    bool found;
    bool suspended;
    bool reconciling;
    char *requested_at;
} flux_row;

static flux_row flux_load(sim_world *w, const char *ref)
{
    flux_row r = {0};
    sqlite3_stmt *st =
        simw_stmt(w, "SELECT suspended, requested_at, reconciling FROM flux_state WHERE ref = ?1");
    sqlite3_bind_text(st, 1, ref, -1, SQLITE_STATIC);
    if (simw_step_row(w, st)) {
        r.found = true;
        r.suspended = sqlite3_column_int(st, 0) != 0;
        r.requested_at = simw_col_text(st, 1);
        r.reconciling = sqlite3_column_int(st, 2) != 0;
    }
    sqlite3_reset(st);
    if (!r.requested_at) r.requested_at = rs_xstrdup("");
    return r;
}

static void flux_save(sim_world *w, const char *ref, const flux_row *r)
{
    sqlite3_stmt *st =
        simw_stmt(w, "INSERT OR REPLACE INTO flux_state(ref, suspended, requested_at, reconciling)"
                     " VALUES(?1, ?2, ?3, ?4)");
    sqlite3_bind_text(st, 1, ref, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, r->suspended);
    sqlite3_bind_text(st, 3, r->requested_at, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, r->reconciling);
    simw_step_done(w, st);
}

static bool ks_suspended(const cJSON *ks)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(ks, "spec");
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "suspend"));
}

void ctl_flux_notice(sim_world *w, const char *ns, const char *name)
{
    cJSON *ks = simw_get(w, "Kustomization", ns, name);
    if (!ks) return;
    char *ref = ctl_ref("Kustomization", ns, name);
    flux_row r = flux_load(w, ref);
    bool suspended = ks_suspended(ks);
    const char *req = simw_annotation(ks, w->cfg.ann.requested_at);
    req = req ? req : "";
    bool resumed = r.found && r.suspended && !suspended;
    bool requested = r.found && strcmp(r.requested_at, req) != 0 && !suspended;
    if (resumed || requested) ctl_schedule(w, simw_now(w) + CTL_FLUX_RESUME_MS, "flux.start", ref);
    r.suspended = suspended;
    free(r.requested_at);
    r.requested_at = rs_xstrdup(req);
    flux_save(w, ref, &r);
    free(r.requested_at);
    free(ref);
    cJSON_Delete(ks);
}

/* A duration field of spec (Flux writes "2m", "10m", "1h"), or def_ms when
 * absent or not of the "<integer>(ms|s|m|h)" form. */
static int64_t ks_spec_ms(const cJSON *ks, const char *field, int64_t def_ms)
{
    const char *text = ctl_obj_str(ks, "spec", field, NULL);
    int64_t ms = 0;
    if (!text || !sc_parse_duration_ms(text, &ms) || ms <= 0) return def_ms;
    return ms;
}

/* The apply, then the health checks the scenario says this one takes. */
static int64_t ks_reconcile_ms(const cJSON *ks)
{
    const char *text = simw_annotation(ks, CTL_FLUX_HEALTH_ANN);
    int64_t ms = 0;
    if (!text || !sc_parse_duration_ms(text, &ms) || ms < 0 || ms > CTL_FLUX_HEALTH_MAX_MS) ms = 0;
    return SIM_FLUX_RECONCILE_MS + ms;
}

/* Starting a reconcile honours suspend; finishing one does not — Flux
 * documents that suspension does not stop an execution already running,
 * which is why the parent fence waits for Reconciling to clear. */
void ctl_flux_start(sim_world *w, const char *ref)
{
    char kind[SIMW_NAME_MAX], ns[SIMW_NAME_MAX], name[SIMW_NAME_MAX];
    if (!simw_ref_parse(ref, kind, ns, name)) return;
    cJSON *ks = simw_get(w, "Kustomization", ns, name);
    flux_row r = flux_load(w, ref);
    if (ks && !ks_suspended(ks) && !r.reconciling) {
        int64_t now = simw_now(w);
        int64_t wall = simw_wall(w);
        r.reconciling = true;
        flux_save(w, ref, &r);
        const char *ready = simw_condition_status(ks, "Ready");
        cJSON *status = cJSON_CreateObject();
        cJSON *conds = cJSON_AddArrayToObject(status, "conditions");
        cJSON_AddItemToArray(conds,
                             simw_condition("Ready", ready ? ready : "Unknown", "Progressing",
                                            "reconciliation in progress", wall));
        cJSON_AddItemToArray(conds, simw_condition("Reconciling", "True", "Progressing",
                                                   "reconciliation in progress", wall));
        ctl_patch_status(w, "Kustomization", ns, name, status);
        ctl_schedule(w, now + ks_reconcile_ms(ks), "flux.finish", ref);
    }
    free(r.requested_at);
    cJSON_Delete(ks);
}

void ctl_flux_finish(sim_world *w, const char *ref)
{
    char kind[SIMW_NAME_MAX], ns[SIMW_NAME_MAX], name[SIMW_NAME_MAX];
    if (!simw_ref_parse(ref, kind, ns, name)) return;
    flux_row r = flux_load(w, ref);
    r.reconciling = false;
    if (r.found) flux_save(w, ref, &r);
    free(r.requested_at);
    cJSON *ks = simw_get(w, "Kustomization", ns, name);
    if (!ks) return;
    int64_t wall = simw_wall(w);
    cJSON *status = cJSON_CreateObject();
    cJSON *conds = cJSON_AddArrayToObject(status, "conditions");
    cJSON_AddItemToArray(conds, simw_condition("Ready", "True", "ReconciliationSucceeded",
                                               "Applied revision", wall));
    cJSON_AddItemToArray(conds, simw_condition("Reconciling", "False", "ReconciliationSucceeded",
                                               "reconciliation finished", wall));
    const char *req = simw_annotation(ks, w->cfg.ann.requested_at);
    char ts[32];
    simw_rfc3339(wall, ts);
    cJSON_AddStringToObject(status, "lastHandledReconcileAt", req ? req : ts);
    const cJSON *gen = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(ks, "metadata"), "generation");
    if (cJSON_IsNumber(gen))
        cJSON_AddNumberToObject(status, "observedGeneration", gen->valuedouble);
    ctl_patch_status(w, "Kustomization", ns, name, status);
    cJSON_Delete(ks);
}

/* One cancelled reconcile: its finish never comes; the status patch the
 * terminating controller was making fails with its context, so Flux reports
 * the health check failed, and retries after spec.retryInterval (Flux's
 * default: spec.interval). Suspended or not: a suspended one is not retried
 * until it is resumed (flux.start honours suspend; the resume schedules one). */
static void flux_cancel(sim_world *w, const char *ref)
{
    char kind[SIMW_NAME_MAX], ns[SIMW_NAME_MAX], name[SIMW_NAME_MAX];
    if (!simw_ref_parse(ref, kind, ns, name)) return;
    ctl_timers_cancel(w, "flux.finish", ref);
    flux_row r = flux_load(w, ref);
    r.reconciling = false;
    flux_save(w, ref, &r);
    free(r.requested_at);
    cJSON *ks = simw_get(w, "Kustomization", ns, name);
    if (!ks) return;
    int64_t now = simw_now(w);
    int64_t wall = simw_wall(w);
    const char *msg = "health check canceled: context canceled (the controller pod reconciling it"
                      " was terminated)";
    cJSON *status = cJSON_CreateObject();
    cJSON *conds = cJSON_AddArrayToObject(status, "conditions");
    cJSON_AddItemToArray(conds, simw_condition("Ready", "False", "HealthCheckFailed", msg, wall));
    cJSON_AddItemToArray(conds,
                         simw_condition("Reconciling", "False", "HealthCheckFailed", msg, wall));
    ctl_patch_status(w, "Kustomization", ns, name, status);
    int64_t retry =
        ks_spec_ms(ks, "retryInterval", ks_spec_ms(ks, "interval", CTL_FLUX_INTERVAL_MS));
    ctl_schedule(w, now + retry, "flux.start", ref);
    cJSON_Delete(ks);
}

void ctl_flux_cancel_all(sim_world *w)
{
    size_t n = 0, cap = 0;
    char **refs = NULL;
    sqlite3_stmt *st =
        simw_stmt(w, "SELECT ref FROM flux_state WHERE reconciling != 0 ORDER BY ref");
    while (simw_step_row(w, st)) {
        if (n == cap) {
            cap = cap ? cap * 2 : 4;
            refs = rs_xrealloc(refs, cap * sizeof *refs);
        }
        refs[n++] = simw_col_text(st, 0);
    }
    sqlite3_reset(st);
    for (size_t i = 0; i < n; i++) {
        if (refs[i]) flux_cancel(w, refs[i]);
        free(refs[i]);
    }
    free(refs);
}

void ctl_flux_tick(sim_world *w, const char *ref)
{
    ctl_flux_start(w, ref);
    ctl_schedule(w, simw_now(w) + CTL_FLUX_INTERVAL_MS, "flux.tick", ref);
}

/* What Flux knows of both Kustomizations at start, and their interval. */
void ctl_flux_init(sim_world *w)
{
    const rs_config *c = &w->cfg;
    const char *ks_ns[] = {c->parent_ns, c->child_ns};
    const char *ks_name[] = {c->parent_name, c->child_name};
    for (size_t i = 0; i < RS_ARRAY_LEN(ks_ns); i++) {
        ctl_flux_notice(w, ks_ns[i], ks_name[i]);
        char *ref = ctl_ref("Kustomization", ks_ns[i], ks_name[i]);
        ctl_schedule(w, ctl_first_period(w, CTL_FLUX_INTERVAL_MS), "flux.tick", ref);
        free(ref);
    }
}
