/*
 * sweep_int.h — what the sweep's files share: plans (sweep_plan.c), the
 * perturbation menu (sweep_menu.c), running and judging one plan
 * (sweep_exec.c, sweep_fences.c), the scenario a plan becomes
 * (sweep_emit.c) and the modes and report (sweep.c, sweep_report.c).
 */
#ifndef SIM_SWEEP_INT_H
#define SIM_SWEEP_INT_H

#include "sim/sweep/sweep.h"

#include "sim/scenario/scenario.h"
#include "sim/world/world.h"

#include <cjson/cJSON.h>
#include <sqlite3.h>

#define SW_PLAN_MAX 8         /* faults in one plan */
#define SW_SWARM_FAULTS_MAX 4 /* faults a swarm plan draws */
#define SW_SWARM_MAX 1000000  /* --swarm N */
#define SW_SHARD_MAX 10000    /* --shard I/N */
#define SW_LATENCY_MS_MAX 120000
/* Before --recover-fences: past the default Lease duration (120 s). */
#define SW_LEASE_EXPIRY_MS 121000

typedef enum sw_kind {
    SW_CRASH,   /* crash: true — the run ends before the call, as kill -9 */
    SW_FAIL,    /* fail: <status> */
    SW_TIMEOUT, /* timeout: true */
    SW_LOST,    /* lost-response: true */
    SW_LATENCY, /* the virtual clock jumps before the call (an `advance`) */
    SW_EVENT,   /* a concurrent actor's event from the menu, before the call */
} sw_kind;

typedef struct sw_fault {
    sw_kind kind;
    size_t call; /* index in the run's fault-free call log */
    int status;  /* SW_FAIL */
    int64_t ms;  /* SW_LATENCY */
    size_t menu; /* SW_EVENT: index in the menu */
} sw_fault;

typedef struct sw_plan {
    size_t n;
    sw_fault f[SW_PLAN_MAX];
} sw_plan;

/* ---- sweep_menu.c: what other actors do ---- */
typedef struct sw_menu_item {
    char *name;
    sc_event ev; /* owned */
} sw_menu_item;

typedef struct sw_menu {
    sw_menu_item *items;
    size_t n;
} sw_menu;

/* The built-in menu for sc's cluster, then the scenario's `perturb-menu:`
 * (an entry with a built-in's name replaces it). */
void sw_menu_build(const sc_scenario *sc, sw_menu *m);
void sw_menu_free(sw_menu *m);
/* The index of name, or -1. */
long sw_menu_find(const sw_menu *m, const char *name);

/* ---- sweep_plan.c: a plan as text and as scenario entries ---- */
/* "12:fail=503,57:crash": each "<call>:<effect>" with effect crash |
 * fail=<status> | timeout | lost-response | latency=<ms> |
 * perturb=<menu name>. false with why (a sentence) on a bad spec. */
bool sw_plan_parse(const char *spec, const sw_menu *m, sw_plan *p, char *why, size_t whylen);
/* Caller frees. */
char *sw_plan_spec(const sw_plan *p, const sw_menu *m);
char *sw_fault_spec(const sw_fault *f, const sw_menu *m);
void sw_plan_drop(sw_plan *p, size_t i);

/* A run's fault-free call log: "<op> <target>" per call. */
typedef struct sw_base {
    char **calls;
    bool *writes;
    size_t n;
    cJSON *failures; /* the fault-free execution's own failures (strings) */
    int exit;
} sw_base;
void sw_base_free(sw_base *b);

/* The run `orig` with the plan's faults and `during:` entries appended
 * (each placed by (operation, nth) from base). Free with sw_run_free. */
sc_run *sw_run_with_plan(const sc_run *orig, const sw_plan *p, const sw_base *base,
                         const sw_menu *m);
/* A follow-up run: name, the same args as orig, optional before events. */
sc_run *sw_run_follow(const sc_run *orig, const char *suffix, const char *terminal_run);
void sw_run_free(sc_run *r);

/* ---- sweep_fences.c ---- */
typedef struct sw_held {
    char *ref;    /* "ns/name" (Lease, Kustomization) or a node name */
    char *what;   /* "Lease", "Kustomization", "Node" */
    char *holder; /* the owner recorded on it */
} sw_held;
/* Every fence held in the world, by anyone. Caller frees with sw_held_free. */
size_t sw_fences_held(sim_world *w, sw_held **out);
void sw_held_free(sw_held *h, size_t n);
/* Whether any fence of the world names run_name as its holder. */
bool sw_held_by_run(const sw_held *h, size_t n, const char *run_name);

/* ---- sweep_exec.c: one plan on a copy of the image ---- */
typedef struct sw_ctx {
    const sc_scenario *sc;
    const rs_strategy *strategy;
    const char *expect_as;
    sim_run_fn run_fn;
    sim_world *image; /* the world before run `first_run`, built once, in memory */
    size_t first_run;
    const sw_menu *menu;
} sw_ctx;

typedef struct sw_outcome {
    bool passed;
    int exit;       /* the faulted run's */
    int final_exit; /* the last run's (the follow-up's, or the faulted run's) */
    bool recovered; /* a --recover-fences run followed the faulted one */
    char *verdict;  /* "converged", "failed closed", or why not */
    cJSON *failures;
} sw_outcome;
void sw_outcome_free(sw_outcome *o);

/* Builds the scenario's world once into memory. */
rs_code sw_image_build(const sc_scenario *sc, sim_world **image, rs_err *e);
/* The world c->image would be after the runs from c->first_run up to (not
 * including) run, fault-free and judged: every plan of that run starts
 * from it instead of replaying the earlier runs. Their failures are added
 * to failures (strings). NULL when the image could not be made (failures
 * says why). */
sim_world *sw_image_before(const sw_ctx *c, size_t run, cJSON *failures);
/* The run's fault-free execution and its call log. */
void sw_baseline(const sw_ctx *c, size_t run, sw_base *b);
/* Runs the runs before `run`, then `run` with the plan; with follow_up, a
 * --recover-fences run when a fence still names the run, then the same run
 * again without faults; judges every run. expect_crash: the faulted run must
 * have crashed (exit 137). */
void sw_exec(const sw_ctx *c, size_t run, const sw_plan *p, const sw_base *b, bool follow_up,
             bool expect_crash, sw_outcome *o);

/* ---- sweep_emit.c ---- */
/* Writes the scenario file that reproduces plan p on run `run`: the source
 * file with its name and runs replaced. RS_OK or an error naming the file. */
rs_code sw_emit(const sw_ctx *c, size_t run, const sw_plan *p, const sw_base *b, bool follow_up,
                const char *path, rs_err *e);

#endif
