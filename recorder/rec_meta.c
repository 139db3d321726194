/*
 * rec_meta.c — a cassette's meta checked whole when it is read (see the
 * header).
 *
 * The one idea: each key is judged by the validator the recorded run itself
 * obeyed, never by a second copy: the configuration and options by
 * rec_replay_inputs (--config's rules), the credential by the core's own
 * preflight (cred_parse, revision_of_ciphertext). A credential the core
 * refuses is what the recorder writes only for a run that the refusal
 * stopped: exit 65 before its first call.
 */
#include "recorder/rec_meta.h"

#include "core/cred/cred.h"
#include "core/live/live_kube_exec.h"
#include "core/txn.h"
#include "recorder/rec_replay.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* meta[key], when present, is a decimal integer in [lo, hi]. */
static rs_code rm_int(const rec_tape *t, const char *key, long long lo, long long hi,
                      const char *what, rs_err *e)
{
    const char *v = rec_tape_meta(t, key);
    if (!v) return RS_OK;
    char *end = NULL;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (v[0] && !isspace((unsigned char)v[0]) && v[0] != '+' && !*end && !errno && n >= lo &&
        n <= hi)
        return RS_OK;
    return rs_fail(e, RS_DATAERR, "cassette %s: meta %s '%.40s' is not %s", t->path, key, v, what);
}

/* How many calls the recording holds that reached the transport (the clock,
 * entropy and pid rows are not calls). */
static size_t rm_calls(const rec_tape *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n_rows; i++)
        n += !rec_op_is_clock(t->rows[i].op);
    return n;
}

/* The core checks the credential before its first call in a mode that needs
 * one; a credential it refuses fits only a recording of that refusal. */
static rs_code rm_credential(const rec_tape *t, const rs_options *opt, const char *desired,
                             const char *ciphertext, rs_err *e)
{
    if (!txn_mode_needs_credential(opt->mode)) return RS_OK;
    rs_err why;
    rs_err_clear(&why);
    rs_cred cred;
    memset(&cred, 0, sizeof cred);
    const char *key = "desired";
    rs_code c = cred_parse(desired, strlen(desired), "desired credential", &cred, &why);
    cred_free(&cred);
    if (c == RS_OK) {
        char hex[65];
        key = "desired_ciphertext";
        c = revision_of_ciphertext(ciphertext ? ciphertext : "", hex, &why);
    }
    if (c == RS_OK) return RS_OK;
    size_t calls = rm_calls(t);
    const char *exit_code = rec_tape_meta(t, "exit");
    if (calls == 0 && (!exit_code || strcmp(exit_code, "65") == 0)) return RS_OK;
    if (calls > 0)
        return rs_fail(e, RS_DATAERR,
                       "cassette %s: meta %s is one the core refuses before any call (%s), yet "
                       "the recorded run made %zu calls",
                       t->path, key, why.msg, calls);
    return rs_fail(e, RS_DATAERR,
                   "cassette %s: meta %s is one the core refuses (%s), yet the recorded run "
                   "exited %.8s, not 65",
                   t->path, key, why.msg, exit_code);
}

/* meta transport, started and run_ref, when present, hold what the recorder
 * writes: "sim" or "live"; the RFC 3339 time the run started; a run
 * reference of a shape the core names its holders by (txn_run_ref_valid) —
 * a replay makes the recorded run's holder from it, so any other text would
 * replay as a divergence blaming today's core. */
static rs_code rm_texts(const rec_tape *t, rs_err *e)
{
    const char *v = rec_tape_meta(t, "transport");
    if (v && strcmp(v, "sim") != 0 && strcmp(v, "live") != 0)
        return rs_fail(e, RS_DATAERR, "cassette %s: meta transport is neither sim nor live",
                       t->path);
    int64_t unix_s;
    v = rec_tape_meta(t, "started");
    if (v && !live_rfc3339_unix(v, &unix_s))
        return rs_fail(e, RS_DATAERR,
                       "cassette %s: meta started is not an RFC 3339 time "
                       "(2026-01-02T03:04:05Z)",
                       t->path);
    v = rec_tape_meta(t, "run_ref");
    if (v && !txn_run_ref_valid(v))
        return rs_fail(e, RS_DATAERR,
                       "cassette %s: meta run_ref is no run reference (sim.<run name>, "
                       "gh<run id>.<attempt> or local)",
                       t->path);
    return RS_OK;
}

rs_code rec_meta_check(const rec_tape *t, rs_err *e)
{
    if (rm_int(t, "exit", 0, 255, "an exit code (0 to 255)", e) != RS_OK ||
        rm_int(t, "vt_start", 0, INT64_MAX / 4, "a virtual time in milliseconds", e) != RS_OK ||
        rm_int(t, "vt_end", 0, INT64_MAX / 4, "a virtual time in milliseconds", e) != RS_OK ||
        rm_texts(t, e) != RS_OK)
        return e->code;
    rec_replay *rp = rec_replay_new(t);
    rs_config cfg;
    rs_options opt;
    const char *desired = NULL, *ciphertext = NULL;
    rs_code c = rec_replay_inputs(rp, &cfg, &opt, &desired, &ciphertext, e);
    if (c == RS_OK) c = rm_credential(t, &opt, desired, ciphertext, e);
    rs_config_free(&cfg);
    rec_replay_free(rp);
    return c;
}
