/*
 * summary.h — the GitHub Actions job summary (summary.c): Markdown appended
 * to the file GITHUB_STEP_SUMMARY names, by `reassert sim` and `reassert run`.
 */
#ifndef REPORTS_SUMMARY_H
#define REPORTS_SUMMARY_H

#include "core/rs.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

/* The sim's summary: scenarios (failures first, with their failing
 * expectations) and the before/after table, from the runner's scenario
 * nodes (redacted). */
void reports_summary_sim(FILE *f, const cJSON *scenarios);
/* The run's outcome, exit, strategy, fence, counters, errors and warnings,
 * from its result document (the `run --output json` shape). wall_clock: the
 * run's clock was the wall clock (a live run), so its virtual_seconds
 * counter is called wall_seconds here. */
void reports_summary_run(FILE *f, const cJSON *doc, bool wall_clock);

/* What reports_summary_append appends. */
typedef enum reports_summary_of {
    SUMMARY_SIM,           /* doc is the runner's scenario array */
    SUMMARY_RUN,           /* a run on a virtual clock (the sim transport) */
    SUMMARY_RUN_WALL_CLOCK /* a run on the wall clock (live) */
} reports_summary_of;

/* Appends one of the above to path. RS_FAILED naming the path when it
 * cannot be written. */
rs_code reports_summary_append(const char *path, const cJSON *doc, reports_summary_of of,
                               rs_err *e);

#endif
