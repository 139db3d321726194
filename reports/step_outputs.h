/*
 * step_outputs.h — GitHub Actions step outputs (step_outputs.c): the result
 * of `reassert run` and `reassert sim` appended to the file GITHUB_OUTPUT
 * names, so a workflow can branch on it (`steps.<id>.outputs.fence_taken`).
 */
#ifndef REPORTS_STEP_OUTPUTS_H
#define REPORTS_STEP_OUTPUTS_H

#include "core/rs.h"

#include <cjson/cJSON.h>

/* Appends every member of outputs (a flat object of the program's own names;
 * a string as it is, any other value as compact JSON) to path, in the
 * multiline form GitHub documents for GITHUB_OUTPUT:
 *
 *   name<<DELIMITER
 *   value
 *   DELIMITER
 *
 * whatever the value holds (a line break included). The delimiter is
 * "reassert_" and the SHA-256 of the value, which the value cannot contain,
 * so no value ends its own entry early or writes another output. A name
 * outside [A-Za-z0-9_-] is refused. RS_FAILED naming the path when it
 * cannot be written. */
rs_code reports_step_outputs_append(const char *path, const cJSON *outputs, rs_err *e);

/* The outputs of `reassert run` from its result document (the `run
 * --output json` shape): exit, outcome, strategy, fence_taken, the number
 * of errors and warnings, annotation_only_nodes (comma-separated), and each
 * counter under its own name (writes_by_kind as a JSON object). Never a
 * message: those may quote cluster text. Caller frees. */
cJSON *reports_step_outputs_run(const cJSON *doc);

/* The counts `reassert sim` outputs, from the runner's scenario array:
 * scenarios, passed, failed, skipped, unloadable, runs, runs_failed (the
 * caller adds exit and outcome, known once every report is written).
 * Caller frees. */
cJSON *reports_step_outputs_sim(const cJSON *scenarios);

#endif
