/*
 * check_invariants.h — the DESIGN.md §6 invariants, checked by the scenario runner
 * after every run against the world the run left behind.
 *
 * The one idea: a run is judged on evidence, never on its own word. What
 * protected a write (the Lease, the policy fences) is recorded by the sim
 * transport in the call log at the moment of the call, and what only the
 * moment of a call can show (an uncordon, a second reboot) is recorded there
 * as a violation; after the run the checker reads those rows — only this
 * run's — and a handful of objects, and turns each violation into one
 * sentence "invariant N: ...". Credentials are compared, never printed.
 */
#ifndef SIM_CHECK_INVARIANTS_H
#define SIM_CHECK_INVARIANTS_H

#include "sim/world/world.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#define INV_COUNT 7

/* What the checker needs from before the run (taken after its `before:`
 * events): where its call-log and violation rows start, and the root
 * secret's data (invariant 5). */
typedef struct inv_mark {
    long long call_seq;      /* last call_log seq before the run */
    long long violation_seq; /* last violations seq before the run */
    cJSON *root_data;        /* the root Secret's data map; NULL when absent */
} inv_mark;

/* One finished run as the runner saw it. */
typedef struct inv_run {
    const char *name;  /* the run name ("sim.<name>" is its run reference) */
    char *const *args; /* the run's args as given */
    size_t n_args;
    const char *desired; /* catalogue name of the desired credential */
    int exit_code;       /* 137 for a crash */
    const char *output;  /* stdout+stderr of the run */
    const int *off;      /* invariants switched off for this run */
    size_t n_off;
    /* The nodes the run reported in annotation_only_nodes: invariant 2
     * checks their annotations, not their Talos auth (DESIGN §6 r2). */
    const cJSON *annotation_only; /* a JSON array of names; may be NULL */
} inv_run;

void inv_mark_take(sim_world *w, inv_mark *m);
void inv_mark_free(inv_mark *m);

/* Appends one sentence per violated invariant (not switched off) to failures,
 * a JSON array. Reads only the run's rows after the mark. */
void inv_check(sim_world *w, const inv_mark *m, const inv_run *r, cJSON *failures);

/* Whether a holder identity `<rev16>-<run ref>-<pid>-<random>` belongs to the
 * run named run_name (run reference "sim.<run_name>"; the reference may
 * itself contain '-', so it is everything between the first '-' and the
 * second-to-last '-'). */
bool inv_holder_of_run(const char *holder, const char *run_name);

/* Whether some error line of output (an `::error` line, or an "error" field
 * of JSON output) carries text; "" asks for any error line at all. */
bool inv_named_in_errors(const char *output, const char *text);

#endif
