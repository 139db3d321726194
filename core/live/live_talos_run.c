/*
 * live_talos_run.c — one talos.* operation as one talosctl invocation (the
 * table of invocations and of outcome -> status is in live_talos.h).
 *
 * The one idea: nothing about an invocation is trusted by default. The node
 * and image go into argv only when they cannot be read as a flag; the patch
 * (it holds the credential) goes by file, in a fresh private directory that
 * is removed on every path out; an exit code without a gRPC code we know is
 * "may have been applied", never "failed cleanly" and never "succeeded".
 */
#define _GNU_SOURCE
#include "core/live/live_talos.h"

#include "core/cred/cred.h"
#include "core/live/live_talos_exec.h"
#include "core/live/live_talos_text.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct live_talos {
    char *talosctl;
    char *talosconfig; /* NULL: talosctl reads TALOSCONFIG itself */
    rs_talos_auth_shape shape;
    int64_t timeout_ms;
    char *tmp_parent;
};

/* TALOSCONFIG reaches talosctl (it names a file, not a secret). */
static const char *const lt_env_extra[] = {"TALOSCONFIG", NULL};

rs_code live_talos_open(const live_talos_opts *o, live_talos **out, rs_err *e)
{
    *out = NULL;
    if ((o->talosctl && !o->talosctl[0]) || (o->talosconfig && !o->talosconfig[0]))
        return rs_fail(e, RS_USAGE, "the talosctl path and --talosconfig must not be empty");
    if (o->timeout_ms < 0) return rs_fail(e, RS_USAGE, "the talosctl timeout must be positive");
    /* talosctl would wait on a FIFO until its timeout, on every call: a path
     * that is there but is not a regular file is bad input (DESIGN §5.1). A
     * missing one `reassert run` refuses in its preflight (cli_preflight.c). */
    struct stat tc;
    if (o->talosconfig && stat(o->talosconfig, &tc) == 0 && !S_ISREG(tc.st_mode))
        return rs_fail(e, RS_DATAERR, "--talosconfig %s: it is not a regular file", o->talosconfig);
    const char *tmp = o->tmp_parent ? o->tmp_parent : getenv("TMPDIR");
    if (!tmp || tmp[0] != '/') tmp = "/tmp";
    live_talos *lt = rs_xcalloc(1, sizeof *lt);
    lt->talosctl = rs_xstrdup(o->talosctl ? o->talosctl : "talosctl");
    lt->talosconfig = o->talosconfig ? rs_xstrdup(o->talosconfig) : NULL;
    lt->shape = o->shape;
    lt->timeout_ms = o->timeout_ms ? o->timeout_ms : LIVE_TALOS_TIMEOUT_MS_DEFAULT;
    lt->tmp_parent = rs_xstrdup(tmp);
    *out = lt;
    return RS_OK;
}

void live_talos_close(live_talos *lt)
{
    if (!lt) return;
    free(lt->talosctl);
    free(lt->talosconfig);
    free(lt->tmp_parent);
    free(lt);
}

/* A node name or image that can stand in argv: not empty, not a flag, no
 * space or control byte. */
static bool lt_arg_ok(const char *s)
{
    if (!s || !s[0] || s[0] == '-' || strlen(s) > 512) return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= ' ' || *p == 0x7f) return false;
    return true;
}

static int lt_ok(rs_resp *resp, cJSON *body)
{
    resp->status = 200;
    resp->sent = RS_SENT_YES;
    resp->body = body;
    return 200;
}

/* A failed answer: status (0 = transport error), whether it was sent, and
 * the sentence (also the body's "error" for a status other than 0). */
static int lt_fail(rs_resp *resp, int status, rs_sent sent, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int lt_fail(rs_resp *resp, int status, rs_sent sent, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(resp->error, sizeof resp->error, fmt, ap);
    va_end(ap);
    resp->status = status;
    resp->sent = sent;
    cJSON_Delete(resp->body);
    resp->body = NULL;
    if (status != 0) {
        resp->body = cJSON_CreateObject();
        cJSON_AddStringToObject(resp->body, "error", resp->error);
    }
    return status;
}

/* The gRPC status talosctl printed ("rpc error: code = NotFound desc = ..."). */
static int lt_grpc_status(const char *err)
{
    static const struct {
        const char *code;
        int status;
    } codes[] = {{"NotFound", 404},
                 {"PermissionDenied", 403},
                 {"Unauthenticated", 401},
                 {"InvalidArgument", 400},
                 {"FailedPrecondition", 409},
                 {"AlreadyExists", 409},
                 {"Unimplemented", 501},
                 {"Unknown", 500},
                 {"Internal", 500}};
    const char *at = strstr(err, "code = ");
    if (!at) return 0;
    at += strlen("code = ");
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        size_t n = strlen(codes[i].code);
        if (strncmp(at, codes[i].code, n) == 0 && (at[n] == ' ' || at[n] == '\0' || at[n] == '\n'))
            return codes[i].status;
    }
    return 0;
}

/* The last stderr line, printable ASCII only, bounded: what the operator
 * reads in the error (the output layer redacts any credential besides). */
static void lt_err_tail(const char *err, char *buf, size_t cap)
{
    size_t len = strlen(err);
    while (len > 0 && (err[len - 1] == '\n' || err[len - 1] == ' '))
        len--;
    size_t s = len;
    while (s > 0 && err[s - 1] != '\n')
        s--;
    size_t k = 0;
    for (size_t i = s; i < len && k + 1 < cap; i++)
        buf[k++] = (err[i] >= ' ' && err[i] < 0x7f) ? err[i] : '?';
    buf[k] = '\0';
}

/* Parses a read op's stdout into resp (200) or answers 502. */
static int lt_read_answer(live_talos *lt, const rs_req *req, const live_exec_result *x,
                          rs_resp *resp)
{
    rs_err e;
    rs_err_clear(&e);
    cJSON *body = NULL;
    rs_code rc;
    const char *host = req->host;
    if (req->op == RS_OP_TALOS_ETCD_STATUS)
        rc = live_talos_etcd_status_parse(x->out, x->out_len, req->target, &body, &e);
    else if (req->op == RS_OP_TALOS_ETCD_ALARMS)
        rc = live_talos_etcd_alarms_parse(x->out, x->out_len, req->target, &body, &e);
    else
        rc = live_talos_auth_parse(x->out, x->out_len, host, lt->shape, &body, &e);
    if (rc != RS_OK) return lt_fail(resp, 502, RS_SENT_YES, "%s", e.msg);
    if (!body)
        return lt_fail(resp, 404, RS_SENT_YES, "node %s holds no registry auth for %s", req->target,
                       host);
    return lt_ok(resp, body);
}

/* What one finished invocation means (live_talos.h's outcome table). */
static int lt_outcome(live_talos *lt, const rs_req *req, const live_exec_result *x, rs_resp *resp)
{
    const char *node = req->target;
    char tail[160];
    if (x->timed_out || x->overflow || x->exit_code < 0) {
        char why[64];
        snprintf(why, sizeof why, "%s",
                 x->timed_out  ? "timed out"
                 : x->overflow ? "printed more than the output bound"
                               : "was killed by a signal");
        return lt_fail(resp, 0, RS_SENT_UNKNOWN, "talosctl for node %s %s", node, why);
    }
    if (x->exit_code == 0) {
        bool read = req->op == RS_OP_TALOS_ETCD_STATUS || req->op == RS_OP_TALOS_ETCD_ALARMS ||
                    req->op == RS_OP_TALOS_READ_AUTH;
        if (read) return lt_read_answer(lt, req, x, resp);
        return lt_ok(resp, cJSON_CreateObject());
    }
    lt_err_tail(x->err, tail, sizeof tail);
    int st = lt_grpc_status(x->err);
    if (st == 0)
        return lt_fail(resp, 0, RS_SENT_UNKNOWN, "talosctl for node %s failed: %s", node, tail);
    return lt_fail(resp, st, RS_SENT_YES, "talosctl for node %s: %s", node, tail);
}

/* The patch text for the intent in req->body (wiped by the caller). */
static char *lt_patch_text(live_talos *lt, const rs_req *req, rs_err *e)
{
    const cJSON *b = req->body;
    if (!cJSON_IsObject(b) || cJSON_GetArraySize(b) != 1) {
        rs_fail(e, RS_DATAERR, "talos.patch takes one intent: registry-auth or node-annotations");
        return NULL;
    }
    if (cJSON_GetObjectItemCaseSensitive(b, "registry-auth"))
        return live_talos_auth_patch(b, lt->shape, e);
    return live_talos_annotations_patch(b, e);
}

/* Writes text to a fresh private directory (0700) as a 0600 file. */
static bool lt_patch_file(live_talos *lt, const char *text, char *dir, size_t dcap, char *file,
                          size_t fcap, rs_err *e)
{
    snprintf(dir, dcap, "%s/reassert-talos-XXXXXX", lt->tmp_parent);
    if (!mkdtemp(dir)) {
        rs_fail(e, RS_FAILED, "could not make a private directory under %s: %s", lt->tmp_parent,
                strerror(errno));
        dir[0] = '\0';
        return false;
    }
    snprintf(file, fcap, "%s/patch.yaml", dir);
    int fd = -1;
    bool ok = chmod(dir, 0700) == 0 &&
              (fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) >= 0 &&
              fchmod(fd, 0600) == 0;
    size_t len = strlen(text), done = 0;
    while (ok && done < len) {
        ssize_t w = write(fd, text + done, len - done);
        if (w < 0 && errno == EINTR) continue;
        ok = w > 0;
        if (ok) done += (size_t)w;
    }
    if (fd >= 0 && close(fd) != 0) ok = false;
    if (!ok) rs_fail(e, RS_FAILED, "could not write the Talos patch file: %s", strerror(errno));
    return ok;
}

static void lt_patch_remove(const char *dir, const char *file)
{
    if (file[0]) unlink(file);
    if (dir[0]) rmdir(dir);
}

/* One invocation being prepared, run and finished. */
typedef struct lt_inv {
    const char *argv[24];
    char dir[4096], file[4200], patch_arg[4300];
} lt_inv;

/* Builds the invocation for req; false (resp answered) when it must not run. */
static bool lt_prepare(live_talos *lt, const rs_req *req, lt_inv *v, rs_resp *resp)
{
    rs_resp_init(resp);
    v->dir[0] = v->file[0] = '\0';
    const char *image = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req->body, "image"));
    bool image_op = req->op == RS_OP_TALOS_IMAGE_REMOVE || req->op == RS_OP_TALOS_IMAGE_PULL;
    if (!lt_arg_ok(req->target)) {
        lt_fail(resp, 400, RS_SENT_NO, "talos request for an unusable node name");
        return false;
    }
    if (image_op && !lt_arg_ok(image)) {
        lt_fail(resp, 400, RS_SENT_NO, "talos image request for node %s needs an image",
                req->target);
        return false;
    }
    if (req->op == RS_OP_TALOS_READ_AUTH && !lt_arg_ok(req->host)) {
        lt_fail(resp, 400, RS_SENT_NO, "talos read-auth for node %s needs a host", req->target);
        return false;
    }
    const char **argv = v->argv;
    size_t n = 0;
    argv[n++] = lt->talosctl;
    if (lt->talosconfig) {
        argv[n++] = "--talosconfig";
        argv[n++] = lt->talosconfig;
    }
    argv[n++] = "--nodes";
    argv[n++] = req->target;
    const char *words[8] = {NULL};
    switch (req->op) {
    case RS_OP_TALOS_PATCH: {
        rs_err e;
        rs_err_clear(&e);
        char *text = lt_patch_text(lt, req, &e);
        bool built = text != NULL;
        bool ok =
            built && lt_patch_file(lt, text, v->dir, sizeof v->dir, v->file, sizeof v->file, &e);
        cred_text_wipe_free(text);
        if (!ok) {
            lt_patch_remove(v->dir, v->file);
            {
                lt_fail(resp, built ? 0 : 400, RS_SENT_NO, "%s", e.msg);
                return false;
            }
        }
        snprintf(v->patch_arg, sizeof v->patch_arg, "@%s", v->file);
        const char *w[] = {"patch",   "machineconfig", "--mode", "no-reboot",
                           "--patch", v->patch_arg,    NULL};
        memcpy(words, w, sizeof w);
        break;
    }
    case RS_OP_TALOS_READ_AUTH: {
        const char *w[] = {"get", "machineconfig", "-o", "jsonpath={.spec}", NULL};
        memcpy(words, w, sizeof w);
        break;
    }
    case RS_OP_TALOS_REBOOT:
        words[0] = "reboot";
        words[1] = "--wait=false";
        break;
    case RS_OP_TALOS_IMAGE_REMOVE:
    case RS_OP_TALOS_IMAGE_PULL: {
        const char *w[] = {"image",       req->op == RS_OP_TALOS_IMAGE_PULL ? "pull" : "remove",
                           "--namespace", "cri",
                           image,         NULL};
        memcpy(words, w, sizeof w);
        break;
    }
    case RS_OP_TALOS_ETCD_STATUS:
        words[0] = "etcd";
        words[1] = "status";
        break;
    case RS_OP_TALOS_ETCD_ALARMS:
        words[0] = "etcd";
        words[1] = "alarm";
        words[2] = "list";
        break;
    default: {
        lt_fail(resp, 400, RS_SENT_NO, "%s is not a Talos operation", rs_op_name(req->op));
        return false;
    }
    }
    for (size_t i = 0; words[i]; i++)
        argv[n++] = words[i];
    argv[n] = NULL;
    return true;
}

/* After the invocation: the patch gone, the outcome read, secrets declared. */
static void lt_finish(live_talos *lt, const rs_req *req, lt_inv *v, live_exec_job *job,
                      rs_resp *resp)
{
    lt_patch_remove(v->dir, v->file);
    if (job->rc != RS_OK)
        lt_fail(resp, 0, RS_SENT_NO, "%s", job->err.msg);
    else
        lt_outcome(lt, req, &job->result, resp);
    live_exec_result_free(&job->result);
    rs_resp_mark_secrets(req, resp);
}

int live_talos_call(live_talos *lt, const rs_req *req, rs_resp *resp)
{
    live_talos_call_batch(lt, req, resp, 1, 1);
    return resp->status;
}

void live_talos_call_batch(live_talos *lt, const rs_req *reqs, rs_resp *resps, size_t n,
                           int parallelism)
{
    size_t wave = parallelism > 0 ? (size_t)parallelism : 1;
    if (wave > n) wave = n;
    lt_inv *inv = rs_xcalloc(wave + 1, sizeof *inv);
    live_exec_job *jobs = rs_xcalloc(wave + 1, sizeof *jobs);
    size_t *idx = rs_xcalloc(wave + 1, sizeof *idx);
    for (size_t at = 0; at < n; at += wave) {
        size_t nj = 0;
        for (size_t i = at; i < n && i < at + wave; i++) {
            if (!lt_prepare(lt, &reqs[i], &inv[nj], &resps[i])) continue;
            jobs[nj] = (live_exec_job){.argv = (char *const *)inv[nj].argv};
            idx[nj++] = i;
        }
        live_exec_run_many(jobs, nj, lt_env_extra, lt->timeout_ms, LIVE_TALOS_OUTPUT_MAX);
        for (size_t j = 0; j < nj; j++)
            lt_finish(lt, &reqs[idx[j]], &inv[j], &jobs[j], &resps[idx[j]]);
    }
    free(inv);
    free(jobs);
    free(idx);
}
