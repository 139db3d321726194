/*
 * sweep.h — `reassert sweep`: searching the failure space mechanically
 * (DESIGN.md §7): a crash at every write, a concurrent actor's event before
 * every call, and a seeded swarm of fault plans that shrinks what it finds.
 *
 * A plan is a handful of faults placed on the calls of one run, each named
 * by its index in that run's fault-free call log ("57:crash",
 * "12:fail=503", "30:perturb=lease-take"). Every plan runs on an in-memory
 * copy of one world image built once per scenario, its runs exactly as
 * `reassert sim` runs them (a run a `crash` fault may end in a forked
 * child), and is judged on the
 * world it leaves: the §6 invariants of every run, then the end state —
 * converged, or failed closed naming every fence still held and the
 * `reassert --fences` command — never silently wrong. Same scenario, same
 * seed: the same plans and byte-identical --json.
 */
#ifndef SIM_SWEEP_H
#define SIM_SWEEP_H

#include "core/txn.h"
#include "sim/runner/runner.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef enum sweep_mode {
    SWEEP_CRASH,   /* crash at every write, recover if needed, run again */
    SWEEP_PERTURB, /* one menu event before every call */
    SWEEP_SWARM,   /* N random plans from a seed, shrunk when they fail */
    SWEEP_PLAN,    /* one given plan (the reproduce command) */
} sweep_mode;

typedef struct sweep_opts {
    const char *file;
    const char *run; /* NULL: every run of the scenario */
    /* NULL: every shipped strategy the scenario applies to. A test-only
     * strategy comes through the library API with expect_as naming the
     * shipped strategy whose expectations apply. */
    const rs_strategy *strategy;
    const char *expect_as;
    sweep_mode mode;
    unsigned swarm_n;
    uint64_t seed;             /* --swarm's (default 1) */
    unsigned shard_i, shard_n; /* 1-based: this is shard I of N (1/1: all) */
    const char *plan;          /* SWEEP_PLAN: the plan spec */
    /* SWEEP_PLAN with --perturb: the plan judged as the perturbation sweep
     * judges its plans (the faulted run alone, no follow-up run), so the
     * command a perturbation sweep prints replays it exactly. */
    bool plan_perturb;
    const char *emit; /* write the first failing (shrunk) plan as a scenario; may be NULL */
    bool json;
    sim_run_fn run_fn;
    FILE *out; /* the report (stdout) */
} sweep_opts;

/* TEST-ONLY defects (core/txn.h rs_broken) by their --test-only-broken
 * names: RS_BROKEN_NONE for a name that is none of them; "" for NONE. */
rs_broken sweep_broken_find(const char *name);
const char *sweep_broken_name(rs_broken b);
#define SWEEP_BROKEN_NAMES                                                                         \
    "skip-cordon-restore, lease-before-policy or root-before-second-inventory"

/* Runs the sweep and prints its table (or --json). Exit 0 every plan of
 * this shard passed; 1 some failed; 64 a bad --plan or --run; 65 the
 * scenario could not be loaded (or its perturbation menu is bad). */
int sweep_main(const sweep_opts *o);

#endif
