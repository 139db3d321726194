/*
 * test_redact.c — the redaction filter (DESIGN.md §5.1): every encoding of a
 * known credential a report could carry is replaced by <redacted:NAME>, in
 * plain text and inside JSON, and the text around it survives.
 */
#include "core/cred/cred.h"
#include "core/cred/cred_redact.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define USER "leak-bot"
#define PASS "PwCurr-Zq71-LEAKCANARY-b2"
#define QPASS "PwQuot\"Hh08\\LEAKCANARY-d4"

static cred_redact *set_with(const char *name, const char *user, const char *pass)
{
    cred_redact *r = cred_redact_new();
    char *dc = cred_dockerconfig_build("ghcr.io", user, pass);
    cred_redact_add_dockerconfig(r, name, dc, strlen(dc));
    free(dc);
    return r;
}

static char *red(const cred_redact *r, const char *text)
{
    return cred_redact_text(r, text, strlen(text), NULL);
}

static void assert_no_leak_of(const char *out, const char *needle)
{
    ck_assert_msg(strstr(out, needle) == NULL, "\"%s\" survives in: %s", needle, out);
}

/* The password percent-encoded (as in a URL's userinfo,
 * upper and lower hex digits; every reserved byte or only the gen-delims)
 * and as hex (upper and lower) is caught too. Fails if cred_redact_add
 * loses those forms. */
#define UPASS "P4ss+rdct7/q9z=x@y"
START_TEST(test_percent_and_hex_forms_are_caught)
{
    cred_redact *r = set_with("current", USER, UPASS);
    const char *forms[] = {
        "P4ss%2Brdct7%2Fq9z%3Dx%40y",           /* encodeURIComponent, quote(safe='') */
        "P4ss%2brdct7%2fq9z%3dx%40y",           /* lower-case hex digits */
        "P4ss+rdct7%2Fq9z=x%40y",               /* userinfo: sub-delims kept */
        "P4ss+rdct7%2fq9z=x%40y",               /* the same, lower case */
        "503473732B72646374372F71397A3D784079", /* hex */
        "503473732b72646374372f71397a3d784079",
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        char text[256];
        snprintf(text, sizeof text, "https://u:%s@ghcr.io/v2/", forms[i]);
        char *out = red(r, text);
        assert_no_leak_of(out, forms[i]);
        ck_assert_msg(strstr(out, "<redacted:current>") != NULL, "%s", out);
        free(out);
    }
    cred_redact_free(r);
}
END_TEST

START_TEST(test_raw_password_is_replaced_by_its_name)
{
    cred_redact *r = set_with("current", USER, PASS);
    char *out = red(r, "found " PASS " in the output");
    ck_assert_str_eq(out, "found <redacted:current> in the output");
    free(out);
    cred_redact_free(r);
}
END_TEST

START_TEST(test_user_password_and_its_base64_auth_are_replaced)
{
    cred_redact *r = set_with("current", USER, PASS);
    char *auth = base64_encode(USER ":" PASS, strlen(USER ":" PASS));
    char *text = rs_xasprintf("auth=%s and pair " USER ":" PASS ".", auth);
    char *out = red(r, text);
    assert_no_leak_of(out, PASS);
    assert_no_leak_of(out, auth);
    ck_assert_ptr_nonnull(strstr(out, "auth=<redacted:current>"));
    /* The username alone is not a secret; "user:password" is, as a whole. */
    ck_assert_ptr_nonnull(strstr(out, "and pair <redacted:current>."));
    free(out);
    free(text);
    free(auth);
    cred_redact_free(r);
}
END_TEST

/* The Secret's data is base64 of the whole docker config: the password sits
 * at some byte offset in it. Every offset mod 3 must be caught. */
START_TEST(test_base64_of_a_larger_text_at_every_alignment)
{
    cred_redact *r = set_with("current", USER, PASS);
    for (int pad = 0; pad < 6; pad++) {
        char plain[256];
        snprintf(plain, sizeof plain, "%.*s{\"password\":\"" PASS "\"}", pad, "xxxxxx");
        char *b64 = base64_encode(plain, strlen(plain));
        char *out = red(r, b64);
        ck_assert_msg(strstr(out, "<redacted:current>"), "pad %d: not redacted: %s", pad, out);
        /* What is left cannot decode to the password. */
        char *inner = base64_encode(PASS, strlen(PASS));
        inner[12] = '\0';
        if ((pad + 13) % 3 == 0) assert_no_leak_of(out, inner); /* 13: {"password":" */
        free(inner);
        free(out);
        free(b64);
    }
    cred_redact_free(r);
}
END_TEST

START_TEST(test_url_safe_base64_is_caught)
{
    cred_redact *r = cred_redact_new();
    const char secret[] = "\xfb\xff\xfe\xfb\xff\xfe-needs+and/";
    cred_redact_add(r, "bin", secret, sizeof secret - 1);
    char *b64 = base64_encode(secret, sizeof secret - 1);
    for (char *p = b64; *p; p++)
        *p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
    char *out = red(r, b64);
    ck_assert_msg(strncmp(out, "<redacted:bin>", 14) == 0, "not redacted: %s", out);
    free(out);
    free(b64);
    cred_redact_free(r);
}
END_TEST

START_TEST(test_json_escaped_forms_once_and_twice)
{
    cred_redact *r = set_with("quoted", USER, QPASS);
    const char *once = "{\"password\":\"PwQuot\\\"Hh08\\\\LEAKCANARY-d4\"}";
    const char *twice = "\"{\\\"password\\\":\\\"PwQuot\\\\\\\"Hh08\\\\\\\\LEAKCANARY-d4\\\"}\"";
    char *a = red(r, once), *b = red(r, twice), *c = red(r, "raw " QPASS " end");
    assert_no_leak_of(a, "LEAKCANARY");
    assert_no_leak_of(b, "LEAKCANARY");
    ck_assert_str_eq(c, "raw <redacted:quoted> end");
    free(a);
    free(b);
    free(c);
    cred_redact_free(r);
}
END_TEST

START_TEST(test_go_style_escapes_are_caught)
{
    cred_redact *r = cred_redact_new();
    cred_redact_add(r, "html", "a<b>&c-LONGER", 13);
    char *out = red(r, "x a\\u003cb\\u003e\\u0026c-LONGER y");
    ck_assert_str_eq(out, "x <redacted:html> y");
    free(out);
    cred_redact_free(r);
}
END_TEST

START_TEST(test_ensure_ascii_escapes_are_caught)
{
    cred_redact *r = cred_redact_new();
    cred_redact_add(r, "uni", "caf\xc3\xa9-\xf0\x9f\x98\x80-pw", 13);
    char *out = red(r, "x caf\\u00e9-\\ud83d\\ude00-pw y");
    ck_assert_str_eq(out, "x <redacted:uni> y");
    free(out);
    cred_redact_free(r);
}
END_TEST

/* A shorter form inside a longer one must not leave the longer one's tail:
 * overlapping matches merge into one redaction. */
START_TEST(test_overlapping_forms_merge)
{
    cred_redact *r = cred_redact_new();
    cred_redact_add(r, "a", "abcdef", 6);
    cred_redact_add(r, "b", "defghi", 6);
    char *out = red(r, "<abcdefghi>");
    ck_assert_str_eq(out, "<<redacted:a>>");
    free(out);
    cred_redact_free(r);
}
END_TEST

START_TEST(test_json_tree_strings_and_keys_redacted)
{
    cred_redact *r = set_with("current", USER, PASS);
    cJSON *doc = cJSON_Parse("{\"failures\":[\"found " PASS "\"],\"" PASS "\":{\"x\":[1,\"" PASS
                             "\"]},\"ok\":\"plain\"}");
    cred_redact_json(r, doc);
    char *txt = cJSON_PrintUnformatted(doc);
    assert_no_leak_of(txt, "LEAKCANARY");
    ck_assert_ptr_nonnull(strstr(txt, "\"found <redacted:current>\""));
    ck_assert_ptr_nonnull(strstr(txt, "\"ok\":\"plain\""));
    free(txt);
    cJSON_Delete(doc);
    cred_redact_free(r);
}
END_TEST

START_TEST(test_names_are_sanitised_and_null_set_copies)
{
    cred_redact *r = cred_redact_new();
    cred_redact_add(r, "we<ird>\nname", "s3cr3t-value", 12);
    char *out = red(r, "s3cr3t-value");
    ck_assert_str_eq(out, "<redacted:we_ird__name>");
    free(out);
    char *copy = cred_redact_text(NULL, "as is", 5, NULL);
    ck_assert_str_eq(copy, "as is");
    free(copy);
    cred_redact_add(r, "empty", "", 0);
    size_t n = cred_redact_count(r);
    cred_redact_add(r, "dup", "s3cr3t-value", 12);
    ck_assert_uint_eq(cred_redact_count(r), n);
    cred_redact_free(r);
}
END_TEST

START_TEST(test_fingerprint_is_stable_and_short)
{
    char a[CRED_FINGERPRINT_LEN], b[CRED_FINGERPRINT_LEN];
    cred_redact_fingerprint("abc", 3, a);
    ck_assert_str_eq(a, "sha256:ba7816bf8f01");
    cred_redact_fingerprint("abd", 3, b);
    ck_assert_str_ne(a, b);
}
END_TEST

static Suite *redact_suite(void)
{
    Suite *s = suite_create("redact");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_raw_password_is_replaced_by_its_name);
    tcase_add_test(tc, test_user_password_and_its_base64_auth_are_replaced);
    tcase_add_test(tc, test_base64_of_a_larger_text_at_every_alignment);
    tcase_add_test(tc, test_url_safe_base64_is_caught);
    tcase_add_test(tc, test_percent_and_hex_forms_are_caught);
    tcase_add_test(tc, test_json_escaped_forms_once_and_twice);
    tcase_add_test(tc, test_go_style_escapes_are_caught);
    tcase_add_test(tc, test_ensure_ascii_escapes_are_caught);
    tcase_add_test(tc, test_overlapping_forms_merge);
    tcase_add_test(tc, test_json_tree_strings_and_keys_redacted);
    tcase_add_test(tc, test_names_are_sanitised_and_null_set_copies);
    tcase_add_test(tc, test_fingerprint_is_stable_and_short);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(redact_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
