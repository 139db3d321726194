/*
 * live_talos_exec.h — running one child program the way a credential-
 * carrying tool must: fork + execve of an argv (never a shell), stdin from
 * /dev/null, an environment built from an allow-list of the parent's
 * variables (nothing else reaches the child), every descriptor but the three
 * standard ones closed, a wall-clock bound after which the child's process
 * group is killed, and stdout/stderr captured up to a size bound.
 *
 * Shared by the talosctl driver (live_talos_run.c) and the liveness oracle
 * (live_oracle.c).
 */
#ifndef CORE_LIVE_TALOS_EXEC_H
#define CORE_LIVE_TALOS_EXEC_H

#include "core/rs.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct live_exec_result {
    bool started;    /* false: the program could not be run (not found, not executable) */
    bool timed_out;  /* killed at the time bound */
    bool overflow;   /* an output stream passed the size bound (the child was killed) */
    int exit_code;   /* the exit status; -1 when killed or ended by a signal */
    int signal;      /* the signal that ended it, or 0 */
    char *out, *err; /* captured stdout / stderr, NUL-terminated (never NULL after a run) */
    size_t out_len, err_len;
} live_exec_result;

/* The variables every child may see, when the parent has them. */
extern const char *const live_exec_env_base[];

/* Runs argv[0] (a path, or a name looked up on the parent's PATH) with
 * argv; env_extra (NULL-terminated, may be NULL) names variables allowed
 * besides live_exec_env_base. Returns RS_OK when the child ran to an end the
 * result describes (including a non-zero exit, a timeout or an overflow),
 * RS_FAILED when it could not be started (r->started false, e says why). */
rs_code live_exec_run(char *const argv[], const char *const env_extra[], int64_t timeout_ms,
                      size_t output_max, live_exec_result *r, rs_err *e);
/* The same, with env_set's "NAME=VALUE" entries added to the child's
 * environment (an exec credential plugin's `env`, KUBERNETES_EXEC_INFO). */
rs_code live_exec_run_env(char *const argv[], const char *const env_extra[],
                          const char *const env_set[], int64_t timeout_ms, size_t output_max,
                          live_exec_result *r, rs_err *e);
void live_exec_result_free(live_exec_result *r);

/* Several children at once (a batch of independent reads): each job's argv
 * runs concurrently with the others, each bounded as live_exec_run bounds
 * one; job.rc/err say whether it started, job.result how it ended. */
typedef struct live_exec_job {
    char *const *argv;
    rs_code rc;
    rs_err err;
    live_exec_result result; /* free with live_exec_result_free */
} live_exec_job;
void live_exec_run_many(live_exec_job *jobs, size_t n, const char *const env_extra[],
                        int64_t timeout_ms, size_t output_max);

#endif
