/*
 * rec_shim.c — the recording shim (see recorder.h).
 *
 * The one idea: the recorder sees exactly what the core saw, and nothing it
 * writes has passed anywhere unredacted — every row is built from a copy
 * that is redacted before it is printed. Recording never changes a call's
 * outcome: a cassette that cannot be written (a full disk) is reported by
 * the caller after the run, the run itself goes on untouched.
 */
#include "recorder/recorder.h"

#include "core/cred/cred.h"
#include "recorder/rec_call.h"
#include "recorder/rec_cassette.h"
#include "recorder/rec_config.h"
#include "recorder/rec_redact.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct rec_shim {
    rs_transport t;
    rs_transport *inner;
    rec_cassette *cas;
    rec_redactor *red;
    int64_t seq, batch;
    size_t atoms_written;      /* the secrets known when the rows so far were written */
    rec_secret_source secrets; /* rotating secrets, asked after each call */
    void *secrets_ctx;
    struct timespec t0;
    rs_err err; /* the first failure to write, if any */
} rec_shim;

static rec_shim *rec_of(rs_transport *t)
{
    return (rec_shim *)t->ctx;
}

static int64_t rec_wall_ms(const rec_shim *s)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)(now.tv_sec - s->t0.tv_sec) * 1000 + (now.tv_nsec - s->t0.tv_nsec) / 1000000;
}

static char *rec_rewrite_text(void *ctx, int column, const char *text)
{
    return rec_call_rewrite(ctx, column, text);
}

/* A call taught the redactor a secret (a live run learns the cluster's own
 * credential only when it reads it): the rows written before, which may
 * hold it in cluster text (a Lease annotation), are redacted again. */
static void rec_write(rec_shim *s, rec_row *row)
{
    row->seq = ++s->seq;
    row->wall_ms = rec_wall_ms(s);
    rs_err e;
    rs_err_clear(&e);
    if (s->err.code == RS_OK && rec_cassette_call(s->cas, row, &e) != RS_OK) s->err = e;
    size_t atoms = rec_redactor_size(s->red);
    if (atoms == s->atoms_written) return;
    s->atoms_written = atoms;
    if (s->seq > 1 && s->err.code == RS_OK &&
        rec_cassette_rewrite(s->cas, rec_rewrite_text, s->red, &e) != RS_OK)
        s->err = e;
}

static void rec_record_call(rec_shim *s, const rs_req *req, const rs_resp *resp, int64_t batch)
{
    rec_row row = {.op = (char *)rs_op_name(req->op),
                   .status = resp->status,
                   .sent = (int)resp->sent,
                   .batch = batch};
    row.request = rec_call_request(s->red, req);
    row.target = rec_call_target(s->red, req);
    row.response = rec_call_response(s->red, resp);
    row.error = resp->error[0] ? rec_redact_string(s->red, resp->error) : NULL;
    row.vt_ms = s->inner->now_ms(s->inner);
    rec_write(s, &row);
    free(row.request);
    free(row.target);
    free(row.response);
    free(row.error);
}

#define REC_ROTATING_MAX 8 /* secrets one source answers at a time */

/* A token the root read during the call (a rotated tokenFile, an exec
 * plugin's next credential) is learnt before the call's row, or any later
 * one, is redacted: the list given at open holds only the first. */
static void rec_learn_rotated(rec_shim *s)
{
    if (!s->secrets) return;
    const char *now[REC_ROTATING_MAX + 1] = {NULL};
    size_t n = s->secrets(s->secrets_ctx, now, REC_ROTATING_MAX);
    for (size_t i = 0; i < n && i < REC_ROTATING_MAX; i++)
        if (now[i]) rec_redactor_learn(s->red, now[i]); /* a known atom is not added twice */
}

void rec_shim_secret_source(rs_transport *t, rec_secret_source fn, void *ctx)
{
    rec_shim *s = rec_of(t);
    s->secrets = fn;
    s->secrets_ctx = ctx;
}

static int rec_call(rs_transport *t, const rs_req *req, rs_resp *resp)
{
    rec_shim *s = rec_of(t);
    /* Learnt before the call: a secret this request carries is an atom by
     * the time any answer or error quoting it is redacted. */
    rec_call_learn(s->red, req);
    int status = s->inner->call(s->inner, req, resp);
    rec_learn_rotated(s);
    rec_record_call(s, req, resp, 0);
    return status;
}

static void rec_call_batch(rs_transport *t, const rs_req *reqs, rs_resp *resps, size_t n,
                           int parallelism)
{
    rec_shim *s = rec_of(t);
    for (size_t i = 0; i < n; i++)
        rec_call_learn(s->red, &reqs[i]);
    tp_batch_forward(s->inner, reqs, resps, n, parallelism);
    rec_learn_rotated(s);
    int64_t batch = ++s->batch;
    for (size_t i = 0; i < n; i++)
        rec_record_call(s, &reqs[i], &resps[i], batch);
}

static void rec_record_clock(rec_shim *s, const char *op, const char *request, const char *response)
{
    rec_row row = {.op = (char *)op,
                   .request = (char *)request,
                   .response = (char *)response,
                   .status = 200,
                   .sent = RS_SENT_YES};
    row.vt_ms = s->inner->now_ms(s->inner);
    rec_write(s, &row);
}

static int64_t rec_now_ms(rs_transport *t)
{
    rec_shim *s = rec_of(t);
    int64_t v = s->inner->now_ms(s->inner);
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    rec_record_clock(s, "clock.now", NULL, buf);
    return v;
}

static void rec_sleep_ms(rs_transport *t, int64_t ms)
{
    rec_shim *s = rec_of(t);
    s->inner->sleep_ms(s->inner, ms);
    char buf[48];
    snprintf(buf, sizeof buf, "{\"ms\":%" PRId64 "}", ms);
    rec_record_clock(s, "clock.sleep", buf, NULL);
}

static uint64_t rec_entropy(rs_transport *t)
{
    rec_shim *s = rec_of(t);
    uint64_t v = s->inner->entropy(s->inner);
    char buf[32];
    snprintf(buf, sizeof buf, "\"%" PRIu64 "\"", v); /* 64 bits do not fit a JSON number */
    rec_record_clock(s, "entropy", NULL, buf);
    return v;
}

static int rec_pid(rs_transport *t)
{
    rec_shim *s = rec_of(t);
    int v = s->inner->pid ? s->inner->pid(s->inner) : 0;
    char buf[16];
    snprintf(buf, sizeof buf, "%d", v);
    rec_record_clock(s, "pid", NULL, buf);
    return v;
}

static void rec_close(rs_transport *t)
{
    rec_shim *s = rec_of(t);
    rec_cassette_close(s->cas);
    rec_redactor_free(s->red);
    free(s);
}

/* ---- meta ---- */

static void rec_meta_put(rec_shim *s, cJSON *meta, const char *key, const char *value)
{
    (void)s;
    if (value) cJSON_AddStringToObject(meta, key, value);
}

static void rec_meta_redacted(rec_shim *s, cJSON *meta, const char *key, const char *value)
{
    if (!value) return;
    char *r = rec_redact_string(s->red, value);
    cJSON_AddStringToObject(meta, key, r);
    free(r);
}

static cJSON *rec_meta_options(rec_shim *s, const rs_options *opt)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "mode", opt->mode);
    cJSON_AddBoolToObject(o, "allow_incomplete_fanout", opt->allow_incomplete_fanout);
    cJSON_AddBoolToObject(o, "require_auth_proof", opt->require_auth_proof);
    rec_meta_put(s, o, "record_proof_path", opt->record_proof_path);
    rec_meta_put(s, o, "reuse_proof_path", opt->reuse_proof_path);
    rec_meta_redacted(s, o, "reuse_proof_text", opt->reuse_proof_text);
    rec_meta_put(s, o, "reuse_proof_error", opt->reuse_proof_error);
    return o;
}

static cJSON *rec_meta_build(rec_shim *s, const rec_run_info *info)
{
    cJSON *m = cJSON_CreateObject();
    char buf[64];
    snprintf(buf, sizeof buf, "%d", REC_FORMAT_VERSION);
    rec_meta_put(s, m, "format_version", buf);
    rec_meta_put(s, m, "tool_version", REASSERT_VERSION);
    rec_meta_put(s, m, "strategy", info->opt->strategy ? info->opt->strategy->name : "lazy");
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    rec_meta_put(s, m, "started", buf);
    rec_meta_put(s, m, "transport", info->transport);
    rec_meta_put(s, m, "redaction",
                 "fp:<HMAC-SHA-256 hex> under a random per-cassette key that is never stored; "
                 "shape kept: b64:<text> for base64, JSON texts redacted value by value");
    rec_meta_put(s, m, "run_ref", info->opt->run_ref);
    rec_meta_put(s, m, "scenario", info->scenario);
    rec_meta_put(s, m, "run", info->run);
    if (info->refused) rec_meta_redacted(s, m, "refused", info->refused);
    if (info->desired) {
        rec_meta_redacted(s, m, "desired", info->desired->dockerconfigjson);
        rec_meta_redacted(s, m, "desired_ciphertext", info->desired->ciphertext);
    }
    snprintf(buf, sizeof buf, "%" PRId64, info->vt_start_ms);
    rec_meta_put(s, m, "vt_start", buf);
    cJSON *args = cJSON_CreateArray();
    for (int i = 0; i < info->argc; i++) {
        char *a = rec_redact_string(s->red, info->argv[i]);
        cJSON_AddItemToArray(args, cJSON_CreateString(a));
        free(a);
    }
    cJSON *objs[] = {rec_meta_options(s, info->opt), rec_config_json(info->cfg), args};
    const char *keys[] = {"options", "config", "args"};
    for (size_t i = 0; i < RS_ARRAY_LEN(objs); i++) {
        char *text = cJSON_PrintUnformatted(objs[i]);
        rec_meta_redacted(s, m, keys[i], text);
        free(text);
        cJSON_Delete(objs[i]);
    }
    return m;
}

rs_transport *rec_shim_open(rs_transport *inner, const char *cassette_path,
                            const rec_run_info *info, const char *const *known, rs_err *e)
{
    rec_cassette *cas = NULL;
    if (rec_cassette_create(cassette_path, &cas, e) != RS_OK) return NULL;
    rec_shim *s = rs_xcalloc(1, sizeof *s);
    s->inner = inner;
    s->cas = cas;
    s->red = rec_redactor_new();
    clock_gettime(CLOCK_MONOTONIC, &s->t0);
    s->t = (rs_transport){.version = RS_TRANSPORT_VERSION,
                          .name = "recorder",
                          .ctx = s,
                          .call = rec_call,
                          .call_batch = rec_call_batch,
                          .now_ms = rec_now_ms,
                          .sleep_ms = rec_sleep_ms,
                          .entropy = rec_entropy,
                          .pid = rec_pid,
                          .close = rec_close};
    for (size_t i = 0; known && known[i]; i++)
        rec_redactor_learn(s->red, known[i]);
    if (info->desired && info->desired->dockerconfigjson)
        rec_redactor_learn(s->red, info->desired->dockerconfigjson);
    s->atoms_written = rec_redactor_size(s->red);
    cJSON *meta = rec_meta_build(s, info);
    rs_code rc = RS_OK;
    const cJSON *it;
    cJSON_ArrayForEach(it, meta) if (rc == RS_OK) rc =
        rec_cassette_meta(cas, it->string, it->valuestring, e);
    cJSON_Delete(meta);
    if (rc != RS_OK) {
        rec_close(&s->t);
        return NULL;
    }
    return &s->t;
}

rs_code rec_shim_finish(rs_transport *t, const cJSON *counters, int exit_code, int64_t vt_end_ms,
                        rs_err *e)
{
    rec_shim *s = rec_of(t);
    if (s->err.code != RS_OK) {
        *e = s->err;
        return e->code;
    }
    char buf[32];
    cJSON *meta = cJSON_CreateObject();
    snprintf(buf, sizeof buf, "%d", exit_code);
    cJSON_AddStringToObject(meta, "exit", buf);
    snprintf(buf, sizeof buf, "%" PRId64, vt_end_ms);
    cJSON_AddStringToObject(meta, "vt_end", buf);
    rs_code rc = rec_cassette_end(s->cas, meta, counters, e);
    cJSON_Delete(meta);
    return rc;
}
