/*
 * runner_int.h — what runner.c shares with its report helpers: the
 * redaction set of a scenario and the GitHub Actions text of a failed run.
 */
#ifndef SIM_RUNNER_INT_H
#define SIM_RUNNER_INT_H

#include "core/cred/cred_redact.h"
#include "sim/runner/runner.h"
#include "sim/scenario/scenario.h"
#include "sim/world/world.h"

#include <stdio.h>

/* The redaction set of sc: every catalogue credential (the preset's and the
 * file's) in every encoding. Caller frees with cred_redact_free. Every
 * string a report writer emits for sc passes through it (runner_redact). */
cred_redact *runner_redact_set(const sc_scenario *sc);

/* Redacts a run's (or any report node's) strings in place. */
void runner_redact(const cred_redact *set, cJSON *node);

/* Writes s with %, CR and LF escaped as in workflow command messages
 * (property: also ':' and ','), so no value can end a group or forge a
 * command. */
void runner_actions_escape(FILE *out, const char *s, bool property);

/* The text report of the scenario report s (runner_text.c); actions: in a
 * GitHub Actions step (annotations, a group per failed run's output). */
void runner_text_scenario(FILE *out, const cJSON *s, bool actions);

/* One `::error file=F,line=N::` annotation per failure of every failed run
 * of the scenario report s, pointing at the run's `expect:` (the run's own
 * line when it has none); without actions (not a GitHub Actions step) one
 * "F:N: error: ..." line instead. */
void runner_actions_annotate(FILE *out, const cJSON *s, bool actions);

/* The output of each failed run of s — never a passed one's — inside its
 * own ::group::, with workflow commands stopped (::stop-commands::) so the
 * core's own annotations in it do not become the sim's; without actions,
 * between two rules with every line in plain form (out_plain_line). */
void runner_actions_dump(FILE *out, const cJSON *s, bool actions);

/* One run's timeline (runner_timeline.c) from its call-log rows after
 * after_seq, on the axis [from_ms, to_ms] of virtual time: {"from_ms",
 * "to_ms", "spans": [{"lane": lease|parent|child|claim|drain|reboot,
 * "from", "to", "label"?, "open"?}], "marks": [{"lane": write|restart|
 * cutover, "at", "label"}], "marks_dropped"?}. Caller owns it. */
cJSON *runner_timeline(sim_world *w, long long after_seq, const char *run_name, int64_t from_ms,
                       int64_t to_ms);

/* Runs the caller's run path for one run against w (runner_exec.c), its
 * stdout and stderr into out_path, {tmp} in its args being tmp. Returns the
 * exit code (128+sig when a forked run died of a signal: *sig receives it);
 * a forked run's world that did not come back is named in *lost. */
int runner_exec(sim_world *w, const sc_scenario *sc, const sc_run *run, const rs_strategy *strategy,
                const char *tmp, const char *out_path, const char *unfired_path,
                const char *result_path, const char *record_path, sim_run_fn run_fn, int *sig,
                rs_err *lost);

/* `sim --record DIR` (runner_record.c): the folder of strategy's cassettes
 * (NULL without --record) and a run's cassette in it; both caller-frees. */
char *runner_record_dir(const sim_opts *c, const char *strategy);
char *runner_record_path(const char *dir, const sc_scenario *sc, const sc_run *run);
/* False, with one line on stderr naming the path, when a cassette this
 * command would record is already there (a file, a symlink, a -wal beside
 * it) or would be recorded twice: checked before any run. */
bool runner_record_preflight(const sim_opts *c);

/* The nodes the run reported in annotation_only_nodes, read from the file
 * it wrote (runner_result.c): [] when it wrote none; a file of another shape
 * adds a failure to failures and gives []. */
cJSON *runner_annotation_only(const char *path, cJSON *failures);

#endif
