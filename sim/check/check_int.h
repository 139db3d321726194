/*
 * check_int.h — private to sim/check/: what the invariant files share.
 *
 * Calls go one way: check_invariants.c (the after-run checker) ->
 * check_converged.c (invariant 2) -> check_report.c (wording) and
 * check_stamp.c (what was recorded at call time, called by the sim
 * transport). check_expect.c stands apart (expectations, and the plaintext
 * scan invariant 6 reuses).
 */
#ifndef SIM_CHECK_INT_H
#define SIM_CHECK_INT_H

#include "sim/check/check_invariants.h"
#include "sim/world/world_internal.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <string.h>

static inline bool inv_str_eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* The failures of one run being judged, counted per invariant. */
typedef struct inv_report {
    cJSON *failures;
    const inv_run *run;
    int counts[INV_COUNT + 1];
} inv_report;

/* ---- check_report.c ---- */
bool inv_is_off(const inv_run *r, int invariant);
/* Appends "invariant N: <sentence>" unless N is switched off for the run or
 * already has INV_REPORT_MAX sentences. */
void inv_report_add(inv_report *rep, int invariant, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* One "N more violations like the above" line per invariant that overflowed. */
void inv_report_fold(inv_report *rep);

/* ---- check_converged.c ---- */
/* Invariant 2 for a run that exited 0 on the normal path. */
void inv_check_converged(sim_world *w, inv_report *rep);
/* Invariant 2's cordon rule for every other run that did not crash: a
 * node this run cordoned is uncordoned or named in an error line. */
void inv_check_cordons(sim_world *w, inv_report *rep);

/* ---- check_named.c ---- */
/* Invariant 7 for a run that did not crash: every fence still held by it is
 * named in one of its error lines. */
void inv_check_named(sim_world *w, inv_report *rep);

/* ---- check_stamp.c ---- */
bool inv_node_unschedulable(const cJSON *node);
/* Whether call seq of run_name released one of its own fences (recorded
 * at call time by inv_at_kube_write). */
bool inv_was_release(sim_world *w, const char *run_name, long long seq);
/* Whether another actor's `during:` event changed Kind/ns/name after this
 * run's last read of it and before its call seq, with no other write of
 * the run in between: the check-then-write window no client can close
 * (the write right after a proof). A second write in that state is never
 * excused: it had to prove the fence again. */
bool inv_raced(sim_world *w, const char *run_name, const char *kind, const char *ns,
               const char *name, long long seq);
/* Whether run_name turned node unschedulable (recorded at call time). */
bool inv_cordon_is_ours(sim_world *w, const char *run_name, const char *node);

#endif
