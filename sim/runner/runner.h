/*
 * runner.h — `reassert sim`: runs scenarios against fresh worlds and checks
 * their expectations, counters and invariants.
 *
 * Each scenario x strategy gets a private {tmp} directory and a fresh world
 * file; each run executes the core in a forked child against that file (so a
 * `crash` fault ends the child exactly as kill -9 would, and the world
 * survives in SQLite for the parent to inspect).
 */
#ifndef SIM_RUNNER_H
#define SIM_RUNNER_H

#include "core/options.h"
#include "sim/scenario/scenario.h"

#include <stdio.h>

/* Runs the core once against the world file, as `reassert run --transport
 * sim:FILE.db` does. Faults/during of `run` (may be NULL) apply. Prints the
 * run's text or JSON output to out. Returns the exit code. When unfired_path
 * is set, the faults/during entries that never fired are written there, one
 * per line. */
int sim_run_core(const char *db_path, const char *run_name, const sc_run *run,
                 const rs_run_args *args, const rs_strategy *fallback, const char *desired_name,
                 FILE *out, const char *unfired_path);

/* Library API (tests): runs every run of sc under an explicit strategy —
 * also one the CLI does not ship, such as the rejected designs kept in
 * tests/ — checking the expectations written for `expect_as` ("lazy" or
 * "eager"). Returns whether every run passed; *runs_out (may be NULL)
 * receives the runs' JSON as in `reassert sim --json`. */
bool sim_scenario_run(const sc_scenario *sc, const rs_strategy *strategy, const char *expect_as,
                      cJSON **runs_out);

/* `reassert sim SCENARIO.yaml... [--strategy S] [--seed N] [--json] [--junit FILE]`. */
int sim_main(int argc, char **argv);

#endif
