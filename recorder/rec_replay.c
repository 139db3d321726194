/*
 * rec_replay.c — strict replay (see the header for the stack).
 *
 * The one idea: the comparison needs no normalisation. The replayed request
 * is turned into cassette text by the very code the recorder used
 * (rec_call.c), with a redactor that maps each synthetic value back to the
 * fingerprint it was made from, so "the same call" is string equality.
 */
#include "recorder/rec_replay.h"

#include "core/cred/cred.h"
#include "core/rs.h"
#include "recorder/rec_call.h"
#include "recorder/rec_config.h"
#include "recorder/rec_redact.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REC_STOPPED_CALL_MS 25 /* the clock still moves for a stopped core */

struct rec_replay {
    const rec_tape *tape;
    rec_redactor *red;
    size_t cursor;  /* the next recorded call the core must make */
    size_t pending; /* the next row the root answers with */
    int64_t vt_ms;  /* the virtual time the root reports */
    bool stopped;   /* diverged, or past the end of an unfinished run */
    bool ended;     /* diverged because the run ended with calls left over */
    int64_t diverged_at;
    char *recorded, *replayed;
    rs_transport root, check;
    rs_transport *below;
    cJSON *config_doc;
    char *desired, *ciphertext, *proof_text;
};

static rec_replay *rp_of(rs_transport *t)
{
    return (rec_replay *)t->ctx;
}

/* ---- divergence ---- */

static char *rp_row_line(const rec_row *r)
{
    return rs_xasprintf("%s %s %s", r->op, r->target ? r->target : "",
                        r->request ? r->request : "");
}

/* The core's call does not match the recording at the cursor (or the
 * recording ends there): the replay stops, and says where. */
static void rp_diverge(rec_replay *rp, const char *replayed_line)
{
    if (rp->stopped) return;
    rp->stopped = true;
    const rec_tape *t = rp->tape;
    if (rp->cursor >= t->n_rows && !t->counters) return; /* the recorded run ended here */
    if (t->rows && rp->cursor < t->n_rows) {
        rp->diverged_at = t->rows[rp->cursor].seq;
        rp->recorded = rp_row_line(&t->rows[rp->cursor]);
    } else {
        rp->diverged_at = t->rows && t->n_rows ? t->rows[t->n_rows - 1].seq + 1 : 1;
        rp->recorded = rs_xstrdup("(the recording ends here)");
    }
    rp->replayed = rs_xstrdup(replayed_line);
}

/* Whether the call (op, target, request text) is the next recorded one;
 * advances the cursor when it is, diverges when not. */
static bool rp_expect(rec_replay *rp, const char *op, const char *target, const char *request)
{
    if (rp->stopped) return false;
    const rec_row *r = rp->cursor < rp->tape->n_rows ? &rp->tape->rows[rp->cursor] : NULL;
    bool same = r && strcmp(r->op, op) == 0 &&
                strcmp(r->target ? r->target : "", target ? target : "") == 0 &&
                strcmp(r->request ? r->request : "", request ? request : "") == 0;
    if (!same) {
        char *line = rs_xasprintf("%s %s %s", op, target ? target : "", request ? request : "");
        rp_diverge(rp, line);
        free(line);
        return false;
    }
    rp->cursor++;
    return true;
}

static void rp_not_sent(rec_replay *rp, rs_resp *resp)
{
    rs_resp_init(resp);
    resp->sent = RS_SENT_NO;
    snprintf(resp->error, sizeof resp->error,
             "strict replay stopped: the call is not the recorded one");
    rp->vt_ms += REC_STOPPED_CALL_MS;
}

/* ---- the root: answers from the row the check shim matched ---- */

static int rp_root_call(rs_transport *t, const rs_req *req, rs_resp *resp)
{
    rec_replay *rp = rp_of(t);
    rs_resp_init(resp);
    if (rp->pending >= rp->tape->n_rows) {
        rp_not_sent(rp, resp);
        return 0;
    }
    const rec_row *r = &rp->tape->rows[rp->pending++];
    resp->status = r->status;
    resp->sent = (rs_sent)r->sent;
    if (r->error) {
        char *err = rec_unredact_string(rp->red, r->error);
        snprintf(resp->error, sizeof resp->error, "%s", err);
        free(err);
    }
    if (r->response) {
        resp->body = cJSON_Parse(r->response);
        rec_unredact_json(rp->red, resp->body);
    }
    rs_resp_mark_secrets(req, resp);
    rp->vt_ms = r->vt_ms;
    return resp->status;
}

static int64_t rp_root_now(rs_transport *t)
{
    return rp_of(t)->vt_ms;
}

static void rp_root_sleep(rs_transport *t, int64_t ms)
{
    rp_of(t)->vt_ms += ms;
}

static uint64_t rp_root_entropy(rs_transport *t)
{
    (void)t;
    return 0;
}

static int rp_root_pid(rs_transport *t)
{
    (void)t;
    return 0;
}

/* ---- the check shim ---- */

static int rp_call(rs_transport *t, const rs_req *req, rs_resp *resp)
{
    rec_replay *rp = rp_of(t);
    char *request = rec_call_request(rp->red, req);
    char *target = rec_call_target(rp->red, req);
    bool ok = rp_expect(rp, rs_op_name(req->op), target, request);
    free(request);
    free(target);
    if (!ok) {
        rp_not_sent(rp, resp);
        return 0;
    }
    rp->pending = rp->cursor - 1;
    return rp->below->call(rp->below, req, resp);
}

static void rp_call_batch(rs_transport *t, const rs_req *reqs, rs_resp *resps, size_t n,
                          int parallelism)
{
    rec_replay *rp = rp_of(t);
    size_t first = rp->cursor;
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        char *request = rec_call_request(rp->red, &reqs[i]);
        char *target = rec_call_target(rp->red, &reqs[i]);
        ok = rp_expect(rp, rs_op_name(reqs[i].op), target, request);
        free(request);
        free(target);
    }
    if (!ok) {
        for (size_t i = 0; i < n; i++)
            rp_not_sent(rp, &resps[i]);
        return;
    }
    rp->pending = first;
    tp_batch_forward(rp->below, reqs, resps, n, parallelism);
}

/* A clock, sleep, entropy or pid call: the recorded row, or NULL after a
 * divergence. */
static const rec_row *rp_clock(rec_replay *rp, const char *op, const char *request)
{
    if (!rp_expect(rp, op, NULL, request)) return NULL;
    const rec_row *r = &rp->tape->rows[rp->cursor - 1];
    rp->vt_ms = r->vt_ms;
    return r;
}

static int64_t rp_now(rs_transport *t)
{
    rec_replay *rp = rp_of(t);
    const rec_row *r = rp_clock(rp, "clock.now", NULL);
    return r ? strtoll(r->response, NULL, 10) : rp->vt_ms;
}

static void rp_sleep(rs_transport *t, int64_t ms)
{
    rec_replay *rp = rp_of(t);
    char buf[48];
    snprintf(buf, sizeof buf, "{\"ms\":%" PRId64 "}", ms);
    if (!rp_clock(rp, "clock.sleep", buf)) rp->vt_ms += ms;
}

static uint64_t rp_entropy(rs_transport *t)
{
    const rec_row *r = rp_clock(rp_of(t), "entropy", NULL);
    return r ? strtoull(r->response + 1, NULL, 10) : 0; /* past the opening quote */
}

static int rp_pid(rs_transport *t)
{
    const rec_row *r = rp_clock(rp_of(t), "pid", NULL);
    return r ? (int)strtol(r->response, NULL, 10) : 0;
}

/* ---- setup ---- */

rec_replay *rec_replay_new(const rec_tape *tape)
{
    rec_replay *rp = rs_xcalloc(1, sizeof *rp);
    rp->tape = tape;
    rp->red = rec_redactor_new();
    rp->diverged_at = -1;
    const char *vt = rec_tape_meta(tape, "vt_start");
    rp->vt_ms = vt ? strtoll(vt, NULL, 10) : 0;
    rp->root = (rs_transport){.version = RS_TRANSPORT_VERSION,
                              .name = "replay",
                              .ctx = rp,
                              .call = rp_root_call,
                              .now_ms = rp_root_now,
                              .sleep_ms = rp_root_sleep,
                              .entropy = rp_root_entropy,
                              .pid = rp_root_pid};
    rp->check = (rs_transport){.version = RS_TRANSPORT_VERSION,
                               .name = "replay-check",
                               .ctx = rp,
                               .call = rp_call,
                               .call_batch = rp_call_batch,
                               .now_ms = rp_now,
                               .sleep_ms = rp_sleep,
                               .entropy = rp_entropy,
                               .pid = rp_pid};
    return rp;
}

void rec_replay_free(rec_replay *rp)
{
    if (!rp) return;
    rec_redactor_free(rp->red);
    free(rp->recorded);
    free(rp->replayed);
    cJSON_Delete(rp->config_doc);
    if (rp->desired) cred_text_wipe_free(rp->desired);
    free(rp->ciphertext);
    free(rp->proof_text);
    free(rp);
}

rs_transport *rec_replay_root(rec_replay *rp)
{
    return &rp->root;
}

rs_transport *rec_replay_check(rec_replay *rp, rs_transport *below)
{
    rp->below = below;
    return &rp->check;
}

/* meta[key] unredacted and parsed as a JSON object; NULL with *e set. */
static cJSON *rp_meta_doc(rec_replay *rp, const char *key, rs_err *e)
{
    const char *text = rec_tape_meta(rp->tape, key);
    char *plain = text ? rec_unredact_string(rp->red, text) : NULL;
    cJSON *doc = plain ? cJSON_Parse(plain) : NULL;
    free(plain);
    if (!cJSON_IsObject(doc)) {
        cJSON_Delete(doc);
        rs_fail(e, RS_DATAERR, "cassette %s: meta %s is missing or not a JSON object",
                rp->tape->path, key);
        return NULL;
    }
    return doc;
}

rs_code rec_replay_inputs(rec_replay *rp, rs_config *cfg, rs_options *opt, const char **desired,
                          const char **ciphertext, rs_err *e)
{
    memset(opt, 0, sizeof *opt);
    rs_config_defaults(cfg);
    const char *path = rp->tape->path;
    const char *strategy = rec_tape_meta(rp->tape, "strategy");
    opt->strategy = strategy ? rs_strategy_find(strategy) : NULL;
    if (!opt->strategy)
        return rs_fail(e, RS_DATAERR, "cassette %s: meta strategy names no strategy this build has",
                       path);
    rp->config_doc = rp_meta_doc(rp, "config", e);
    if (!rp->config_doc) return e->code;
    rs_config_free(cfg);
    if (rec_config_load(rp->config_doc, cfg, path, e) != RS_OK) return e->code;
    cJSON *o = rp_meta_doc(rp, "options", e);
    if (!o) return e->code;
    const cJSON *mode = cJSON_GetObjectItemCaseSensitive(o, "mode");
    if (mode && (!cJSON_IsNumber(mode) || mode->valuedouble != (double)mode->valueint ||
                 mode->valueint < RS_MODE_REPAIR || mode->valueint > RS_MODE_RECOVER_FENCES)) {
        cJSON_Delete(o);
        return rs_fail(e, RS_DATAERR,
                       "cassette %s: meta options field mode: expected a mode this build has "
                       "(%d to %d)",
                       path, (int)RS_MODE_REPAIR, (int)RS_MODE_RECOVER_FENCES);
    }
    static const char *const flags[] = {"allow_incomplete_fanout", "require_auth_proof"};
    for (size_t i = 0; i < RS_ARRAY_LEN(flags); i++) {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, flags[i]);
        if (f && !cJSON_IsBool(f)) {
            cJSON_Delete(o);
            return rs_fail(e, RS_DATAERR,
                           "cassette %s: meta options field %s: expected true or false", path,
                           flags[i]);
        }
    }
    opt->mode = mode ? (rs_mode)mode->valueint : RS_MODE_REPAIR;
    opt->allow_incomplete_fanout =
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "allow_incomplete_fanout"));
    opt->require_auth_proof =
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "require_auth_proof"));
    const char *proof =
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "reuse_proof_text"));
    if (proof) rp->proof_text = rs_xstrdup(proof);
    /* Paths and the proof's error are only named in messages; they live in
     * config_doc's sibling o, kept as strings of the meta instead. */
    cJSON_AddItemToObject(rp->config_doc, "$options", o);
    opt->record_proof_path =
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "record_proof_path"));
    opt->reuse_proof_path =
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "reuse_proof_path"));
    opt->reuse_proof_error =
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "reuse_proof_error"));
    opt->reuse_proof_text = rp->proof_text;
    opt->run_ref = rec_tape_meta(rp->tape, "run_ref");
    const char *d = rec_tape_meta(rp->tape, "desired");
    const char *c = rec_tape_meta(rp->tape, "desired_ciphertext");
    rp->desired = rec_unredact_string(rp->red, d ? d : "");
    rp->ciphertext = c ? rec_unredact_string(rp->red, c) : NULL;
    *desired = rp->desired;
    *ciphertext = rp->ciphertext;
    return RS_OK;
}

void rec_replay_finish(rec_replay *rp)
{
    if (!rp->stopped && rp->cursor < rp->tape->n_rows) {
        rp_diverge(rp, "(the run ended)");
        rp->ended = rp->diverged_at >= 0;
    }
    /* The counting shim's last clock read is the recorded one (meta vt_end,
     * tp_count_stop's), not the last row's: on a real clock time passes
     * between the two. */
    const char *end = rec_tape_meta(rp->tape, "vt_end");
    if (!rp->stopped && end) rp->vt_ms = strtoll(end, NULL, 10);
}

int64_t rec_replay_diverged_at(const rec_replay *rp)
{
    return rp->diverged_at;
}

const char *rec_replay_recorded(const rec_replay *rp)
{
    return rp->recorded;
}

const char *rec_replay_replayed(const rec_replay *rp)
{
    return rp->replayed;
}

size_t rec_replay_matched(const rec_replay *rp)
{
    return rp->cursor;
}

bool rec_replay_run_ended(const rec_replay *rp)
{
    return rp->ended;
}

int64_t rec_replay_last_matched_seq(const rec_replay *rp)
{
    return rp->cursor ? rp->tape->rows[rp->cursor - 1].seq : 0;
}
