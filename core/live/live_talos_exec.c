/*
 * live_talos_exec.c — one bounded child process (see the header).
 *
 * fork + execve rather than posix_spawn: the child must close every
 * descriptor the parent holds (a libcurl socket, an SQLite file) before it
 * runs a program we do not control, and posix_spawn has no portable way to.
 * The child reports an exec failure through a close-on-exec pipe, so "could
 * not be started" (safe to retry: nothing was sent) is never confused with a
 * program that ran and failed.
 */
#define _GNU_SOURCE
#include "core/live/live_talos_exec.h"

#include "core/cred/cred.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h> /* environ (_GNU_SOURCE) */

const char *const live_exec_env_base[] = {"PATH",
                                          "HOME",
                                          "USER",
                                          "LOGNAME",
                                          "LANG",
                                          "LC_ALL",
                                          "LC_CTYPE",
                                          "LC_MESSAGES",
                                          "TZ",
                                          "TMPDIR",
                                          "XDG_CONFIG_HOME",
                                          "SSL_CERT_FILE",
                                          "SSL_CERT_DIR",
                                          "HTTPS_PROXY",
                                          "https_proxy",
                                          "HTTP_PROXY",
                                          "http_proxy",
                                          "NO_PROXY",
                                          "no_proxy",
                                          NULL};

static bool exec_allowed(const char *entry, const char *const *names)
{
    for (size_t i = 0; names && names[i]; i++) {
        size_t n = strlen(names[i]);
        if (strncmp(entry, names[i], n) == 0 && entry[n] == '=') return true;
    }
    return false;
}

/* Whether entry ("NAME=...") names a variable that env_set sets. */
static bool exec_overridden(const char *entry, const char *const *env_set)
{
    size_t n = strcspn(entry, "=");
    for (size_t i = 0; env_set && env_set[i]; i++)
        if (strncmp(entry, env_set[i], n) == 0 && env_set[i][n] == '=') return true;
    return false;
}

/* The child's environment: the allowed subset of environ, then env_set's
 * "NAME=VALUE" entries (which replace a parent's variable of that name);
 * pointers into both. */
static char **exec_env(const char *const env_extra[], const char *const env_set[])
{
    size_t n = 0;
    for (char **p = environ; p && *p; p++)
        n++;
    for (size_t i = 0; env_set && env_set[i]; i++)
        n++;
    char **env = rs_xcalloc(n + 1, sizeof *env);
    size_t k = 0;
    for (char **p = environ; p && *p; p++)
        if ((exec_allowed(*p, live_exec_env_base) || exec_allowed(*p, env_extra)) &&
            !exec_overridden(*p, env_set))
            env[k++] = *p;
    for (size_t i = 0; env_set && env_set[i]; i++)
        env[k++] = (char *)env_set[i];
    env[k] = NULL;
    return env;
}

static int64_t exec_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* In the child, before exec: standard streams, nothing else open. Only
 * async-signal-safe calls from here on. */
static void exec_child(char *const argv[], char **env, int out_w, int err_w, int status_w)
{
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0) goto fail;
    setpgid(0, 0); /* its own group, so a timeout kills what it started too */
    /* status_w is close-on-exec: it closes itself once the exec succeeds. */
    if (status_w > 3) close_range(3, (unsigned)status_w - 1, 0);
    close_range((unsigned)status_w + 1, ~0U, 0);
    signal(SIGPIPE, SIG_DFL);
    execvpe(argv[0], argv, env);
fail:;
    int err = errno;
    ssize_t w = write(status_w, &err, sizeof err);
    (void)w;
    _exit(127);
}

typedef struct exec_buf {
    int fd;
    char *data;
    size_t len, cap;
} exec_buf;

/* Reads what is there; false when the bound was passed. */
static bool exec_drain(exec_buf *b, size_t max)
{
    char chunk[4096];
    ssize_t n = read(b->fd, chunk, sizeof chunk);
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        close(b->fd);
        b->fd = -1;
        return true;
    }
    if (n < 0) return true;
    if (b->len + (size_t)n > max) {
        OPENSSL_cleanse(chunk, (size_t)n);
        return false;
    }
    if (b->len + (size_t)n + 1 > b->cap) {
        /* Grown by copy, the old buffer wiped: an answer (a machine config)
         * can hold the credential, and realloc would leave copies behind. */
        size_t cap = (b->len + (size_t)n + 1) * 2;
        if (cap > max + 1) cap = max + 1;
        char *grown = rs_xmalloc(cap);
        if (b->len) memcpy(grown, b->data, b->len);
        if (b->data) cred_bytes_wipe_free(b->data, b->cap);
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, chunk, (size_t)n);
    OPENSSL_cleanse(chunk, (size_t)n);
    b->len += (size_t)n;
    b->data[b->len] = '\0';
    return true;
}

typedef struct exec_kid {
    pid_t pid;
    exec_buf bufs[2];
    int64_t deadline_ms;
    live_exec_result *r;
} exec_kid;

static void exec_kill(exec_kid *k)
{
    kill(-k->pid, SIGKILL);
    kill(k->pid, SIGKILL);
    for (int i = 0; i < 2; i++)
        if (k->bufs[i].fd >= 0) {
            close(k->bufs[i].fd);
            k->bufs[i].fd = -1;
        }
}

/* Collects every child's two streams until they close, a child's deadline
 * passes or one of its streams overflows (that child's group is killed). */
static void exec_collect(exec_kid *kids, size_t n, size_t max)
{
    struct pollfd *p = rs_xcalloc(2 * n + 1, sizeof *p);
    for (;;) {
        size_t np = 0;
        int64_t now = exec_now_ms(), wait_ms = 1000;
        for (size_t i = 0; i < n; i++) {
            exec_kid *k = &kids[i];
            if (k->bufs[0].fd < 0 && k->bufs[1].fd < 0) continue;
            if (now >= k->deadline_ms) {
                k->r->timed_out = true;
                exec_kill(k);
                continue;
            }
            if (k->deadline_ms - now < wait_ms) wait_ms = k->deadline_ms - now;
            for (int j = 0; j < 2; j++)
                if (k->bufs[j].fd >= 0)
                    p[np++] = (struct pollfd){.fd = k->bufs[j].fd, .events = POLLIN};
        }
        if (np == 0) break;
        int rc = poll(p, np, (int)wait_ms);
        if (rc < 0 && errno != EINTR) break;
        for (size_t i = 0; i < n && rc > 0; i++) {
            exec_kid *k = &kids[i];
            for (int j = 0; j < 2; j++) {
                if (k->bufs[j].fd < 0) continue;
                short ev = 0;
                for (size_t q = 0; q < np; q++)
                    if (p[q].fd == k->bufs[j].fd) ev = p[q].revents;
                if ((ev & (POLLIN | POLLHUP | POLLERR)) && !exec_drain(&k->bufs[j], max)) {
                    k->r->overflow = true;
                    exec_kill(k);
                }
            }
        }
    }
    free(p);
}

/* Reaps one child; its streams are closed, yet it may linger: bounded too. */
static void exec_wait(exec_kid *k)
{
    live_exec_result *r = k->r;
    int st = 0;
    int64_t deadline = r->timed_out || r->overflow ? exec_now_ms() + 60000 : k->deadline_ms;
    for (;;) {
        pid_t w = waitpid(k->pid, &st, WNOHANG);
        if (w == k->pid) break;
        if (w < 0 && errno != EINTR) return;
        if (exec_now_ms() >= deadline && !r->timed_out) {
            r->timed_out = true;
            exec_kill(k);
            deadline = exec_now_ms() + 60000;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (WIFEXITED(st) && !r->timed_out && !r->overflow) {
        r->exit_code = WEXITSTATUS(st);
    } else {
        r->exit_code = -1;
        r->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    }
    for (int i = 0; i < 2; i++) {
        char **text = i ? &r->err : &r->out;
        size_t *len = i ? &r->err_len : &r->out_len;
        if (k->bufs[i].data) {
            free(*text);
            *text = k->bufs[i].data;
            *len = k->bufs[i].len;
            k->bufs[i].data = NULL;
        }
    }
}

static void exec_close_pair(int p[2])
{
    close(p[0]);
    close(p[1]);
}

/* Forks one child; RS_OK once its program runs (k filled), RS_FAILED when
 * it could not be started. */
static rs_code exec_start(char *const argv[], const char *const env_extra[],
                          const char *const env_set[], int64_t timeout_ms, live_exec_result *r,
                          exec_kid *k, rs_err *e)
{
    memset(r, 0, sizeof *r);
    r->exit_code = -1;
    r->out = rs_xstrdup("");
    r->err = rs_xstrdup("");
    int out_p[2], err_p[2], st_p[2];
    if (pipe2(out_p, O_CLOEXEC) != 0) return rs_fail(e, RS_FAILED, "pipe: %s", strerror(errno));
    if (pipe2(err_p, O_CLOEXEC) != 0) {
        exec_close_pair(out_p);
        return rs_fail(e, RS_FAILED, "pipe: %s", strerror(errno));
    }
    if (pipe2(st_p, O_CLOEXEC) != 0) {
        exec_close_pair(out_p);
        exec_close_pair(err_p);
        return rs_fail(e, RS_FAILED, "pipe: %s", strerror(errno));
    }
    char **env = exec_env(env_extra, env_set);
    pid_t pid = fork();
    if (pid == 0) exec_child(argv, env, out_p[1], err_p[1], st_p[1]);
    int fork_errno = errno;
    free(env);
    close(out_p[1]);
    close(err_p[1]);
    close(st_p[1]);
    if (pid < 0) {
        close(out_p[0]);
        close(err_p[0]);
        close(st_p[0]);
        return rs_fail(e, RS_FAILED, "could not start %s: %s", argv[0], strerror(fork_errno));
    }
    int child_errno = 0;
    ssize_t got;
    do
        got = read(st_p[0], &child_errno, sizeof child_errno);
    while (got < 0 && errno == EINTR);
    close(st_p[0]);
    if (got == (ssize_t)sizeof child_errno) {
        close(out_p[0]);
        close(err_p[0]);
        int st;
        waitpid(pid, &st, 0);
        return rs_fail(e, RS_FAILED, "could not start %s: %s", argv[0], strerror(child_errno));
    }
    r->started = true;
    *k = (exec_kid){.pid = pid,
                    .bufs = {{.fd = out_p[0]}, {.fd = err_p[0]}},
                    .deadline_ms = exec_now_ms() + timeout_ms,
                    .r = r};
    return RS_OK;
}

static void exec_run_many(live_exec_job *jobs, size_t n, const char *const env_extra[],
                          const char *const env_set[], int64_t timeout_ms, size_t output_max)
{
    exec_kid *kids = rs_xcalloc(n + 1, sizeof *kids);
    size_t nk = 0;
    for (size_t i = 0; i < n; i++) {
        rs_err_clear(&jobs[i].err);
        jobs[i].rc = exec_start(jobs[i].argv, env_extra, env_set, timeout_ms, &jobs[i].result,
                                &kids[nk], &jobs[i].err);
        if (jobs[i].rc == RS_OK) nk++;
    }
    exec_collect(kids, nk, output_max);
    for (size_t i = 0; i < nk; i++)
        exec_wait(&kids[i]);
    free(kids);
}

void live_exec_run_many(live_exec_job *jobs, size_t n, const char *const env_extra[],
                        int64_t timeout_ms, size_t output_max)
{
    exec_run_many(jobs, n, env_extra, NULL, timeout_ms, output_max);
}

rs_code live_exec_run(char *const argv[], const char *const env_extra[], int64_t timeout_ms,
                      size_t output_max, live_exec_result *r, rs_err *e)
{
    return live_exec_run_env(argv, env_extra, NULL, timeout_ms, output_max, r, e);
}

rs_code live_exec_run_env(char *const argv[], const char *const env_extra[],
                          const char *const env_set[], int64_t timeout_ms, size_t output_max,
                          live_exec_result *r, rs_err *e)
{
    live_exec_job job = {.argv = argv};
    exec_run_many(&job, 1, env_extra, env_set, timeout_ms, output_max);
    *r = job.result;
    if (job.rc != RS_OK && e) *e = job.err;
    return job.rc;
}

void live_exec_result_free(live_exec_result *r)
{
    if (!r) return;
    if (r->out) cred_bytes_wipe_free(r->out, r->out_len + 1);
    if (r->err) cred_bytes_wipe_free(r->err, r->err_len + 1);
    r->out = r->err = NULL;
}
