/*
 * test_recorder.c — the recorder's redaction (DESIGN.md §8, invariant 6):
 * every encoding of a secret becomes an fp:<HMAC> fingerprint, equal values
 * equal fingerprints within a cassette and different ones across cassettes,
 * the shape survives so a replay's synthetic credential parses and relates
 * as the real one did, and a replayed request redacts to the recorded text.
 * The whole-suite checks (every cassette strict-replayed, every byte of
 * every cassette scanned) are tests/check_record_replay.sh.
 */
#include "core/cred/cred.h"
#include "core/cred/cred_redact.h"
#include "recorder/rec_call.h"
#include "recorder/rec_redact.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

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
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
