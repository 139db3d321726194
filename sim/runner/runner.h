/*
 * runner.h — `reassert sim`: runs scenarios against fresh worlds and checks
 * their expectations, counters and invariants.
 *
 * Each scenario x strategy gets a private {tmp} directory and a fresh world
 * in memory; each run executes the production run path against it, in this
 * process — or, when a `crash` fault may end the run, in a forked child (so
 * the crash ends it exactly as kill -9 would), whose world is handed back
 * for the runner to inspect.
 *
 * The run path itself (options -> credential -> transport stack -> txn_run
 * -> output -> files) belongs to cli/, and sim/ never includes cli/: the
 * caller hands the runner that path as a sim_run_fn, so the child runs
 * exactly what `reassert run --transport sim:FILE.db` runs.
 */
#ifndef SIM_RUNNER_H
#define SIM_RUNNER_H

#include "core/txn.h"
#include "sim/scenario/scenario.h"

#include <stdio.h>

/* What the runner knows about one run beyond its argv. */
typedef struct sim_run_req {
    struct sim_world *world;     /* the world the run's root opens (the runner's), or */
    const char *db_path;         /* a world file, when world is NULL */
    const char *run_name;        /* the run reference becomes "sim.<run_name>" */
    const sc_run *run;           /* its faults/during apply; NULL for none */
    const rs_strategy *strategy; /* used when the args name none; NULL: the default */
    const char *desired_name;    /* the catalogue credential to deploy */
    int argc;                    /* the run's args, {tmp} substituted */
    char **argv;
    const char *unfired_path;  /* faults/during that never fired, one per line; may be NULL */
    const char *scenario_name; /* the scenario's name (cassette meta) */
    const char *record_path;   /* sim --record: this run's cassette; NULL for none */
    /* Where the run writes what it reported for the checker (one JSON
     * object: `annotation_only_nodes`); NULL for none. */
    const char *result_path;
} sim_run_req;

/* Runs one run, printing its text or JSON output to out; returns its exit
 * code. The CLI's implementation is cli_sim_run (cli/cli.h). */
typedef int (*sim_run_fn)(const sim_run_req *req, FILE *out);

/* What a world seeded from sc's cassette (`cluster: {cassette: FILE}`)
 * cannot show, one sentence each (a JSON array; caller frees); NULL with *e
 * set when no world can be built. */
cJSON *sim_scenario_warnings(const sc_scenario *sc, rs_err *e);
/* Those sentences as `warning: ` lines on err (escaped, redacted); nothing
 * for a scenario with a preset cluster. */
void sim_scenario_warn(const sc_scenario *sc, FILE *err);

/* Library API (tests, reports): runs every run of sc under an explicit
 * strategy — also one the CLI does not ship, such as the rejected designs
 * kept in tests/ — checking the expectations written for `expect_as` ("lazy"
 * or "eager"). Returns whether every run passed; *runs_out (may be NULL)
 * receives the runs' JSON as in `reassert sim --json`. */
bool sim_scenario_run(const sc_scenario *sc, const rs_strategy *strategy, const char *expect_as,
                      sim_run_fn run, cJSON **runs_out);

/* One run on a world that already exists (a sweep's plan runs its runs one
 * by one, judging the world between them): the run's `before:` events, the
 * run path (forked only when a `crash` fault may end it), then the §6
 * invariants; the run's `expect`
 * only when check_expect; a fault or `during:` entry that never fired is a
 * failure only when check_unfired (one whose event could not apply always
 * is). tmp is the plan's private directory ({tmp}), world the plan's world. */
typedef struct sim_run_ctx {
    const sc_scenario *sc;
    const rs_strategy *strategy;
    const char *expect_as; /* "lazy" or "eager": whose expectations */
    const char *tmp;
    struct sim_world *world;
    sim_run_fn run_fn;
    bool check_expect;
    bool check_unfired;
} sim_run_ctx;

/* Returns the run's report node as in `reassert sim --json`, plus "output"
 * (stdout and stderr), every string redacted. Caller frees. */
cJSON *sim_run_checked(const sim_run_ctx *c, const sc_run *run);

/* A report the caller writes from every scenario's result (cli/: --report,
 * the GitHub step summary): the array of scenario nodes as in --json, plus
 * each run's "output" and "timeline" (runner_int.h), every string already
 * redacted. Returns false when the report could not be written, which fails
 * the command. */
typedef bool (*sim_report_fn)(const cJSON *scenarios, void *arg);

/* `reassert sim SCENARIO.yaml... [--strategy S] [--seed N] [--json] [--junit FILE]`,
 * as parsed by cli/cmd_sim.c. */
typedef struct sim_opts {
    const char *const *files;
    size_t n_files;
    const char *strategy; /* "lazy", "eager" or NULL for every one that applies */
    bool seed_set;
    uint64_t seed;
    bool json;
    const char *junit; /* may be NULL */
    /* --record DIR: one cassette per run, DIR/<scenario>.<run>.db (under
     * DIR/<strategy>/ when no --strategy picks one); NULL for none. */
    const char *record_dir;
    /* A GitHub Actions step (the caller read GITHUB_ACTIONS): failures as
     * `::error file=,line=::` annotations and failed runs' output in a
     * group; otherwise plain text. */
    bool actions;
    sim_run_fn run;
    sim_report_fn report; /* may be NULL */
    void *report_arg;
} sim_opts;

/* Runs every file, prints the report; exit 0 all passed, 1 some failed, 65
 * some could not be loaded; 64 (before any run) when --record would replace
 * a file. */
int sim_main(const sim_opts *o);

#endif
