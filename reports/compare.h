/*
 * compare.h — the before/after table: every scenario under eager (production
 * today) and lazy (the fix), per run, side by side.
 */
#ifndef REPORTS_COMPARE_H
#define REPORTS_COMPARE_H

#include "sim/runner/runner.h"

/* `reassert sim --compare eager,lazy SCENARIO.yaml... [--markdown]`; every
 * run goes through run (the CLI's run path). */
int reports_compare_main(int argc, char **argv, sim_run_fn run);

#endif
