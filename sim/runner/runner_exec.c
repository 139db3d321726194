/*
 * runner_exec.c — one run through the caller's run path: in this process,
 * or in a forked child when a `crash` fault may end it.
 *
 * The one idea: the world is the runner's, in memory, and one process owns
 * it; a run is a function call on it. Only a crash needs a process of its
 * own — it must end the run exactly as kill -9 would, with no call after
 * the crash point reaching the world and no cleanup run — so that run is
 * forked, and its world comes back from the child (world_image.c).
 */
#define _XOPEN_SOURCE 700
#include "sim/runner/runner_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* "{tmp}" => the execution's private directory. */
static char *subst_tmp(const char *arg, const char *tmp)
{
    size_t cap = strlen(arg) + 1;
    for (const char *p = strstr(arg, "{tmp}"); p; p = strstr(p + 5, "{tmp}"))
        cap += strlen(tmp);
    char *out = rs_xmalloc(cap);
    char *o = out;
    for (const char *p = arg; *p;) {
        if (strncmp(p, "{tmp}", 5) == 0) {
            o += sprintf(o, "%s", tmp);
            p += 5;
        } else {
            *o++ = *p++;
        }
    }
    *o = '\0';
    return out;
}

/* Whether a `crash` fault may end the run: only such a run needs a process
 * of its own. */
static bool run_may_crash(const sc_run *run)
{
    for (size_t i = 0; i < run->n_faults; i++)
        if (run->faults[i].effect == SC_FAULT_CRASH) return true;
    return false;
}

/* The run's argv, {tmp} substituted; caller frees with args_free. */
static char **args_subst(const sc_run *run, const char *tmp)
{
    char **argv = rs_xcalloc(run->n_args + 1, sizeof *argv);
    for (size_t i = 0; i < run->n_args; i++)
        argv[i] = subst_tmp(run->args[i], tmp);
    return argv;
}

static void args_free(char **argv, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(argv[i]);
    free(argv);
}

/* Runs the caller's run path for one run against w, its stdout and stderr
 * into out_path. In this process, unless a `crash` fault may end the run:
 * that one runs in a forked child (the crash then ends it as kill -9 would:
 * no call after it reaches the world, no cleanup runs), which hands its
 * world back (world_image.c). Returns the exit code (128+sig when the child
 * died of a signal, and *sig receives the signal); a world that did not
 * come back is named in *lost. */
int runner_exec(sim_world *w, const sc_scenario *sc, const sc_run *run, const rs_strategy *strategy,
                const char *tmp, const char *out_path, const char *unfired_path,
                const char *result_path, const char *record_path, sim_run_fn run_fn, int *sig,
                rs_err *lost)
{
    *sig = 0;
    sim_run_req req = {.world = w,
                       .run_name = run->name,
                       .run = run,
                       .strategy = strategy,
                       .desired_name = sc->desired,
                       .argc = (int)run->n_args,
                       .unfired_path = unfired_path,
                       .result_path = result_path,
                       .scenario_name = sc->name,
                       .record_path = record_path};
    if (!run_may_crash(run)) {
        FILE *out = fopen(out_path, "w");
        if (!out) return RS_FAILED;
        req.argv = args_subst(run, tmp);
        int code = run_fn(&req, out);
        fclose(out);
        args_free(req.argv, run->n_args);
        return code;
    }
    char image[4200];
    snprintf(image, sizeof image, "%s/%s.world", tmp, run->name);
    unlink(image);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return RS_FAILED;
    if (pid == 0) {
        int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0) _exit(RS_FAILED);
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
        sim_world_handoff_set(w, image);
        req.argv = args_subst(run, tmp);
        int code = run_fn(&req, stdout);
        fflush(stdout);
        args_free(req.argv, run->n_args);
        sim_world_handoff_write(w);
        _exit(code);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    int code = RS_FAILED;
    if (WIFEXITED(status)) code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) {
        *sig = WTERMSIG(status);
        code = 128 + *sig;
    }
    /* A child killed by a signal left no world: the owner keeps the world
     * as it was before the run, and the run fails for the signal. */
    if (sim_world_handoff_take(w, image, lost) == RS_OK || *sig) rs_err_clear(lost);
    unlink(image);
    return code;
}
