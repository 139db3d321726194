/*
 * test_recorder.c — the recorder's redaction (DESIGN.md §8, invariant 6):
 * every encoding of a secret becomes an fp:<HMAC> fingerprint, equal values
 * equal fingerprints within a cassette and different ones across cassettes,
 * the shape survives so a replay's synthetic credential parses and relates
 * as the real one did, and a replayed request redacts to the recorded text.
 * The whole-suite checks (every cassette strict-replayed, every byte of
 * every cassette scanned) are tests/check_record_replay.sh.
 *
 * Then the clock: a recording on a clock that moves between any two reads
 * (a live run's) strict-replays to the very counters it recorded — the
 * counting shim's first and last reads are recorded ones (meta vt_start,
 * vt_end), never reads a replay makes of its own.
 */
#include "core/cred/cred.h"
#include "core/cred/cred_redact.h"
#include "core/transport/transport_count.h"
#include "recorder/rec_call.h"
#include "recorder/rec_cassette.h"
#include "recorder/rec_redact.h"
#include "recorder/rec_replay.h"
#include "recorder/recorder.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define USER "leak-bot"
#define PASS "PwCurr-Zq71-LEAKCANARY-b2"

/* The output holds no encoding of PASS core/cred's filter knows (raw,
 * JSON-escaped, base64 at each alignment, user:password, ...). */
static void assert_clean(const char *out)
{
    cred_redact *net = cred_redact_new();
    char *dc = cred_dockerconfig_build("ghcr.io", USER, PASS);
    cred_redact_add_dockerconfig(net, "x", dc, strlen(dc));
    char *filtered = cred_redact_text(net, out, strlen(out), NULL);
    ck_assert_msg(strcmp(filtered, out) == 0, "a secret survives in: %s", out);
    free(filtered);
    free(dc);
    cred_redact_free(net);
}

static rec_redactor *redactor_knowing_desired(void)
{
    rec_redactor *r = rec_redactor_new();
    char *dc = cred_dockerconfig_build("ghcr.io", USER, PASS);
    rec_redactor_learn(r, dc);
    free(dc);
    return r;
}

START_TEST(test_every_encoding_of_a_secret_is_fingerprinted)
{
    rec_redactor *r = redactor_knowing_desired();
    char *dc = cred_dockerconfig_build("ghcr.io", USER, PASS);
    char *b64dc = base64_encode(dc, strlen(dc));
    char *auth = base64_encode(USER ":" PASS, strlen(USER ":" PASS));
    char *b64pass = base64_encode(PASS, strlen(PASS));
    char *odd = base64_encode("xy" PASS "z", strlen(PASS) + 3); /* another alignment */
    cJSON *str = cJSON_CreateString(dc);
    char *esc = cJSON_PrintUnformatted(str); /* the JSON-escaped config */
    cJSON_Delete(str);
    const char *inputs[] = {PASS,    dc,  b64dc, auth,
                            b64pass, odd, esc,   "error: token " PASS " was refused"};
    for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++) {
        char *out = rec_redact_string(r, inputs[i]);
        assert_clean(out);
        ck_assert_msg(strstr(out, "fp:") != NULL, "no fingerprint in: %s", out);
        free(out);
    }
    free(esc);
    free(odd);
    free(b64pass);
    free(auth);
    free(b64dc);
    free(dc);
    rec_redactor_free(r);
}
END_TEST

START_TEST(test_equal_values_share_a_fingerprint_only_within_a_cassette)
{
    rec_redactor *a = redactor_knowing_desired(), *b = redactor_knowing_desired();
    char *a1 = rec_redact_string(a, PASS), *a2 = rec_redact_string(a, PASS);
    char *b1 = rec_redact_string(b, PASS);
    ck_assert_str_eq(a1, a2);
    ck_assert_str_ne(a1, b1); /* the key is per cassette */
    ck_assert_int_eq((int)strlen(a1), REC_FP_LEN - 1);
    free(a1);
    free(a2);
    free(b1);
    rec_redactor_free(a);
    rec_redactor_free(b);
}
END_TEST

START_TEST(test_the_shape_survives_for_a_synthetic_credential)
{
    rec_redactor *rec = redactor_knowing_desired();
    char *dc = cred_dockerconfig_build("ghcr.io", USER, PASS);
    char *b64dc = base64_encode(dc, strlen(dc));
    char *red_text = rec_redact_string(rec, dc);
    char *red_b64 = rec_redact_string(rec, b64dc);
    ck_assert_ptr_nonnull(strstr(red_b64, "b64:{"));
    /* Replay: fingerprints become synthetic values of the same shape. */
    rec_redactor *rp = rec_redactor_new();
    char *syn_text = rec_unredact_string(rp, red_text);
    char *syn_b64 = rec_unredact_string(rp, red_b64);
    rs_cred c;
    rs_err e;
    rs_err_clear(&e);
    ck_assert_int_eq(cred_parse(syn_text, strlen(syn_text), "synthetic", &c, &e), RS_OK);
    ck_assert_str_eq(c.username, USER);
    ck_assert_str_ne(c.password, PASS);
    /* The Secret's base64 decodes to the same credential as the text. */
    size_t n = 0;
    unsigned char *dec = base64_decode(syn_b64, &n);
    ck_assert_ptr_nonnull(dec);
    ck_assert(cred_matches_text(&c, (const char *)dec, n));
    /* And the synthetic values redact back to the recorded text. */
    char *back = rec_redact_string(rp, syn_b64);
    ck_assert_str_eq(back, red_b64);
    cred_free(&c);
    free(back);
    free(dec);
    free(syn_b64);
    free(syn_text);
    free(red_b64);
    free(red_text);
    free(b64dc);
    free(dc);
    rec_redactor_free(rp);
    rec_redactor_free(rec);
}
END_TEST

START_TEST(test_a_json_patch_keeps_its_resource_version_public)
{
    rec_redactor *r = rec_redactor_new();
    char *dc = cred_dockerconfig_build("ghcr.io", USER, PASS);
    char *b64dc = base64_encode(dc, strlen(dc));
    cJSON *body = cJSON_CreateArray();
    cJSON *t = cJSON_CreateObject(), *add = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "op", "test");
    cJSON_AddStringToObject(t, "path", "/metadata/resourceVersion");
    cJSON_AddStringToObject(t, "value", "68");
    cJSON_AddStringToObject(add, "op", "add");
    cJSON_AddStringToObject(add, "path", "/data/.dockerconfigjson");
    cJSON_AddStringToObject(add, "value", b64dc);
    cJSON_AddItemToArray(body, t);
    cJSON_AddItemToArray(body, add);
    rs_req req = {.op = RS_OP_KUBE_PATCH,
                  .kind = "Secret",
                  .ns = "ns",
                  .name = "ghcr-auth",
                  .patch_type = RS_PATCH_JSON,
                  .body = body};
    rs_req_mark_secrets(&req);
    char *text = rec_call_request(r, &req);
    assert_clean(text);
    ck_assert_ptr_nonnull(strstr(text, "\"value\":\"68\""));
    ck_assert_ptr_null(strstr(text, b64dc));
    free(text);
    cJSON_Delete(body);
    free(b64dc);
    free(dc);
    rec_redactor_free(r);
}
END_TEST

START_TEST(test_a_marked_value_never_reaches_the_cassette_as_it_was)
{
    /* A short OpenBao value no atom rule matches is still fingerprinted. */
    rec_redactor *r = rec_redactor_new();
    cJSON *body = cJSON_CreateObject();
    cJSON_AddStringToObject(body, "token", "s3kr");
    cJSON_AddStringToObject(body, "username", "deploy-bot");
    rs_req req = {.op = RS_OP_OPENBAO_WRITE, .mount = "secret", .target = "a/b", .body = body};
    rs_req_mark_secrets(&req);
    char *text = rec_call_request(r, &req);
    ck_assert_ptr_null(strstr(text, "s3kr"));
    ck_assert_ptr_nonnull(strstr(text, "deploy-bot")); /* a username is public */
    free(text);
    cJSON_Delete(body);
    rec_redactor_free(r);
}
END_TEST

START_TEST(test_an_answer_teaches_its_token_before_it_is_redacted)
{
    rec_redactor *r = rec_redactor_new();
    rs_req req = {.op = RS_OP_REGISTRY_TOKEN, .host = "ghcr.io", .target = "a/b"};
    rs_resp resp;
    rs_resp_init(&resp);
    resp.status = 200;
    resp.body = cJSON_CreateObject();
    cJSON_AddStringToObject(resp.body, "token", "tok-registry-4c1d9a7e");
    rs_resp_mark_secrets(&req, &resp);
    char *text = rec_call_response(r, &resp);
    ck_assert_ptr_null(strstr(text, "tok-registry-4c1d9a7e"));
    /* Later, the same token inside an error message is redacted too. */
    char *err = rec_redact_string(r, "manifest refused for tok-registry-4c1d9a7e");
    ck_assert_ptr_null(strstr(err, "tok-registry-4c1d9a7e"));
    free(err);
    free(text);
    rs_resp_free(&resp);
    rec_redactor_free(r);
}
END_TEST

/* ---- the clock ---- */

/* A root on a clock that moves 3 ms at every read and by each sleep, as a
 * real one does between two reads; every call answers 200 with {}. */
typedef struct tick_root {
    rs_transport t;
    int64_t now_ms;
} tick_root;

static int tick_call(rs_transport *t, const rs_req *req, rs_resp *resp)
{
    (void)t;
    (void)req;
    rs_resp_init(resp);
    resp->status = 200;
    resp->sent = RS_SENT_YES;
    resp->body = cJSON_CreateObject();
    return 200;
}

static int64_t tick_now(rs_transport *t)
{
    tick_root *r = t->ctx;
    return r->now_ms += 3;
}

static void tick_sleep(rs_transport *t, int64_t ms)
{
    ((tick_root *)t->ctx)->now_ms += ms;
}

static uint64_t tick_entropy(rs_transport *t)
{
    (void)t;
    return 7;
}

/* What a core does, in small: calls, a clock read, a sleep, a batch. */
static void tick_procedure(rs_transport *t)
{
    rs_req get = {.op = RS_OP_KUBE_GET, .kind = "Secret", .ns = "a", .name = "b"};
    rs_req reqs[2] = {get, {.op = RS_OP_KUBE_GET, .kind = "Secret", .ns = "a", .name = "c"}};
    rs_resp resp, resps[2];
    t->call(t, &get, &resp);
    rs_resp_free(&resp);
    (void)t->now_ms(t);
    t->sleep_ms(t, 2000);
    tp_call_batch(t, reqs, resps, 2, 16);
    rs_resp_free(&resps[0]);
    rs_resp_free(&resps[1]);
    (void)t->entropy(t);
    t->call(t, &get, &resp);
    rs_resp_free(&resp);
}

START_TEST(test_a_recording_on_a_moving_clock_replays_to_its_counters)
{
    char path[] = "/tmp/reassert-rec-clock-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    unlink(path); /* the recorder makes it, exclusively */
    tick_root root = {.t = {.version = RS_TRANSPORT_VERSION,
                            .name = "tick",
                            .call = tick_call,
                            .now_ms = tick_now,
                            .sleep_ms = tick_sleep,
                            .entropy = tick_entropy},
                      .now_ms = 1700000000000};
    root.t.ctx = &root;
    rs_config cfg;
    rs_config_defaults(&cfg);
    rs_options opt = {.strategy = rs_strategy_find("lazy"), .run_ref = "local"};
    char *dc = cred_dockerconfig_build("ghcr.io", USER, PASS);
    rs_desired d = {.dockerconfigjson = dc,
                    .len = strlen(dc),
                    .ciphertext = "ENC[AES256_GCM,data:x,iv:1,tag:x,type:str]"};
    rs_transport *count = tp_count_open(&root.t, &cfg);
    rec_run_info info = {.transport = "live",
                         .cfg = &cfg,
                         .opt = &opt,
                         .desired = &d,
                         .vt_start_ms = tp_count_start_ms(count)};
    rs_err e;
    rs_err_clear(&e);
    rs_transport *rec = rec_shim_open(count, path, &info, NULL, &e);
    ck_assert_msg(rec != NULL, "%s", e.msg);
    tick_procedure(rec);
    int64_t end = tp_count_stop(count);
    cJSON *counters = tp_count_counters(count);
    ck_assert_int_eq(rec_shim_finish(rec, counters, 0, end, &e), RS_OK);
    cJSON_Delete(counters);
    rec->close(rec);
    count->close(count);

    rec_tape *tape = NULL;
    ck_assert_msg(rec_tape_load(path, &tape, &e) == RS_OK, "%s", e.msg);
    rec_replay *rp = rec_replay_new(tape);
    rs_transport *rcount = tp_count_open(rec_replay_root(rp), &cfg);
    rs_transport *check = rec_replay_check(rp, rcount);
    tick_procedure(check);
    rec_replay_finish(rp);
    ck_assert_int_eq(rec_replay_diverged_at(rp), -1);
    cJSON *replayed = tp_count_counters(rcount);
    char *a = cJSON_PrintUnformatted(tape->counters), *b = cJSON_PrintUnformatted(replayed);
    ck_assert_msg(cJSON_Compare(tape->counters, replayed, true), "recorded %s, replayed %s", a, b);
    free(a);
    free(b);
    cJSON_Delete(replayed);
    rcount->close(rcount);
    rec_replay_free(rp);
    rec_tape_free(tape);
    rec_cassette_remove(path);
    free(dc);
    rs_config_free(&cfg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("recorder");
    TCase *tc = tcase_create("redaction");
    tcase_add_test(tc, test_every_encoding_of_a_secret_is_fingerprinted);
    tcase_add_test(tc, test_equal_values_share_a_fingerprint_only_within_a_cassette);
    tcase_add_test(tc, test_the_shape_survives_for_a_synthetic_credential);
    tcase_add_test(tc, test_a_json_patch_keeps_its_resource_version_public);
    tcase_add_test(tc, test_a_marked_value_never_reaches_the_cassette_as_it_was);
    tcase_add_test(tc, test_an_answer_teaches_its_token_before_it_is_redacted);
    suite_add_tcase(s, tc);
    TCase *clock = tcase_create("clock");
    tcase_add_test(clock, test_a_recording_on_a_moving_clock_replays_to_its_counters);
    suite_add_tcase(s, clock);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
