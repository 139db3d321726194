/*
 * check_expect.h — checking a run's expectations (DESIGN.md §5) and the plaintext
 * leak invariant (§6.6) against what the run did.
 */
#ifndef SIM_CHECK_EXPECT_H
#define SIM_CHECK_EXPECT_H

#include "sim/scenario/scenario.h"
#include "sim/world/world.h"

#include <cjson/cJSON.h>

/* Appends one sentence per unmet expectation to failures (a JSON array)
 * and, when failure_lines is not NULL, the scenario line of that
 * expectation to failure_lines (0 when unknown); lines is the expectation's
 * line mirror (sc_expect_lines_for), or NULL. */
void expect_check(const cJSON *expect, const cJSON *lines, int exit_code, const cJSON *delta,
                  const char *output, sim_world *w, cJSON *failures, cJSON *failure_lines);

/* A `check:` action (sc_event kind "check") evaluated against the world as
 * it is now, exactly as `expect.state` would be: one sentence per failed
 * check, "check (<where>): state ...", appended to failures, and its
 * scenario line to failure_lines (when not NULL). */
void expect_state_now(sim_world *w, const sc_event *check, const char *where, cJSON *failures,
                      cJSON *failure_lines);

/* A `during:` check runs in the run's own process, which may end by a
 * `crash` fault: its failures are rows of the world (check_failures), like
 * the call-time invariant violations. The transport adds one; the runner
 * takes the mark before the run and reads the run's rows after it. */
void expect_during_failure_add(sim_world *w, const char *run_name, int line, const char *message);
long long expect_during_mark(sim_world *w);
void expect_during_failures(sim_world *w, long long after_seq, const char *run_name,
                            cJSON *failures, cJSON *failure_lines);

/* Appends a failure for every catalogue credential found in output in any
 * form the report filter covers (cred_redact.h: raw, base64 at every
 * alignment and URL-safe, base64 of user:password, JSON-escaped). The
 * failure names the credential, never the value. */
void expect_no_plaintext(sim_world *w, const char *output, const char *where, cJSON *failures);

/* ">=N" style comparison of a number. */
bool expect_compare(const cJSON *want, double got, char *desc, size_t desclen);

#endif
