/*
 * runner_junit.h — the JUnit XML report of `reassert sim --junit FILE`.
 *
 * The shape CI test reporters read (GitHub Actions reporters, GitLab,
 * Jenkins), validated against tests/junit.xsd: one <testsuite> per scenario
 * file, one <testcase> per scenario x strategy x run (classname = the
 * scenario), <failure> for unmet expectations and violated invariants,
 * <error> when the scenario could not be loaded or its world not built,
 * <skipped/> for each run of a strategy the scenario does not apply to or
 * --strategy did not select. Text is XML-escaped; control characters and
 * bytes that are not UTF-8 are removed, so any scenario or cluster text
 * leaves the document valid. Times are 0: the report is byte-for-byte the
 * same on every execution (virtual time is in the JSON report).
 */
#ifndef SIM_RUNNER_JUNIT_H
#define SIM_RUNNER_JUNIT_H

#include "core/rs.h"

#include <cjson/cJSON.h>

/* Writes the report of scenarios (the array `reassert sim --json` prints
 * under "scenarios") at path. RS_FAILED, with e naming the path and why,
 * when the file cannot be written completely. */
rs_code sim_junit_write(const char *path, const cJSON *scenarios, rs_err *e);

#endif
