/*
 * live_oracle.h — the run-liveness oracle of a live run (DESIGN §3.4):
 * answers RS_OP_RUN_LIVENESS for `--fences` and `--recover-fences` by running
 * a configured command and parsing its JSON answer strictly.
 *
 * The command is a template, split into words without a shell (single and
 * double quotes group words; no expansion of any kind), in which `{run}` and
 * `{attempt}` are replaced by the run id and attempt of a run reference
 * "gh<run id>.<attempt>", e.g.
 *     gh run view {run} --attempt {attempt} --json status,conclusion
 * Both must appear: a re-run reuses the run id, and an answer about another
 * attempt could vouch for a live one (H22).
 * Its stdout must be one JSON object {"status": S, "conclusion": C} (an
 * "attempt" member, when present, must equal the attempt). status
 * "completed" with a known conclusion (success, failure, cancelled, skipped,
 * timed_out, action_required, neutral, stale, startup_failure) is terminal;
 * queued, in_progress, waiting, requested or pending with an empty
 * conclusion is live. Anything else — another reference shape, a non-zero
 * exit, a timeout, more output than the bound, another key, another value —
 * is not an answer: the op fails (status 0 or 502), and the core refuses.
 * Answer body: {"terminal": true|false}.
 */
#ifndef CORE_LIVE_ORACLE_H
#define CORE_LIVE_ORACLE_H

#include "core/rs.h"
#include "core/transport/transport.h"

#include <stdint.h>

#define LIVE_ORACLE_TIMEOUT_MS_DEFAULT 30000
#define LIVE_ORACLE_OUTPUT_MAX (64u * 1024u)

typedef struct live_oracle_opts {
    const char *command; /* the template; NULL or "": no oracle (every answer refuses) */
    int64_t timeout_ms;  /* 0: LIVE_ORACLE_TIMEOUT_MS_DEFAULT */
} live_oracle_opts;

typedef struct live_oracle live_oracle;

/* RS_USAGE when the template is malformed (unbalanced quote, no {run} or
 * no {attempt}). */
rs_code live_oracle_open(const live_oracle_opts *o, live_oracle **out, rs_err *e);
/* Answers one run.liveness request (req->target = the run reference). */
int live_oracle_call(live_oracle *o, const rs_req *req, rs_resp *resp);
void live_oracle_close(live_oracle *o);

/* The strict parse of the command's stdout (exposed for tests): RS_OK with
 * *terminal set, or RS_FAILED with e naming what was not understood. */
rs_code live_oracle_parse(const char *text, size_t len, int attempt, bool *terminal, rs_err *e);

/* A command template split into words without a shell: blanks separate,
 * '...' is literal, "..." honours \" and \\, a backslash outside quotes
 * takes the next byte. RS_USAGE naming `what` when a quote is unbalanced
 * or there are too many words. Free with live_words_free. */
rs_code live_words_split(const char *t, const char *what, char ***out, size_t *n, rs_err *e);
void live_words_free(char **w, size_t n);

#endif
