/*
 * test_cred.c — the desired credential (DESIGN.md §3.1): which Docker configs
 * are accepted, that every other shape is refused with a specific sentence
 * that never quotes the secret, and the primitives underneath (strict JSON,
 * canonical JSON, base64, SHA-256, revision, constant-time compare).
 *
 * Over 600 lines: one Check suite per DESIGN §3.1 rule keeps every accepted
 * and refused shape of the credential side by side with its sentence.
 */
#include "core/cred/cred.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PASS "hunter2-S3CRET"
#define USER "robot"
/* base64("robot:hunter2-S3CRET") */
#define AUTH_OK "cm9ib3Q6aHVudGVyMi1TM0NSRVQ="

static rs_code parse_str(const char *text, rs_cred *c, rs_err *e)
{
    return cred_parse(text, strlen(text), "desired credential", c, e);
}

/* ---- accepted shapes -------------------------------------------------- */

static void assert_accepts(const char *text, const char *user, const char *pass)
{
    rs_cred c;
    rs_err e = {0};
    rs_code rc = parse_str(text, &c, &e);
    ck_assert_msg(rc == RS_OK, "refused %s: %s", text, e.msg);
    ck_assert_str_eq(c.username, user);
    ck_assert_str_eq(c.password, pass);
    ck_assert_ptr_nonnull(c.canonical);
    cred_free(&c);
}

START_TEST(test_accepts_username_password_only)
{
    assert_accepts("{\"auths\":{\"ghcr.io\":{\"username\":\"" USER "\",\"password\":\"" PASS
                   "\"}}}",
                   USER, PASS);
}
END_TEST

START_TEST(test_accepts_auth_only)
{
    assert_accepts("{\"auths\":{\"ghcr.io\":{\"auth\":\"" AUTH_OK "\"}}}", USER, PASS);
}
END_TEST

/* Hazard: H132 — username/password with an agreeing `auth` is valid and accepted. */
START_TEST(test_accepts_both_forms_agreeing)
{
    assert_accepts("{\"auths\":{\"ghcr.io\":{\"username\":\"" USER "\",\"password\":\"" PASS
                   "\",\"auth\":\"" AUTH_OK "\"}}}",
                   USER, PASS);
}
END_TEST

START_TEST(test_accepts_extra_hosts_and_keys)
{
    assert_accepts("  {\"credsStore\":\"desktop\",\"auths\":{\"docker.io\":{\"auth\":\"eDp5\"},"
                   "\"ghcr.io\":{\"email\":\"a@b.c\",\"username\":\"" USER "\",\"password\":\"" PASS
                   "\",\"extra\":[1,2.5e3,true,null,{}]}},\"HttpHeaders\":{\"X\":\"y\"}}\n",
                   USER, PASS);
}
END_TEST

START_TEST(test_accepts_auth_split_at_first_colon)
{
    /* base64("u:p:q") — kubelet splits at the first ':', so the password is "p:q". */
    char *b = base64_encode("u:p:q", 5);
    char *text = rs_xasprintf("{\"auths\":{\"ghcr.io\":{\"auth\":\"%s\"}}}", b);
    assert_accepts(text, "u", "p:q");
    free(text);
    free(b);
}
END_TEST

START_TEST(test_accepts_escaped_strings)
{
    assert_accepts("{\"auths\":{\"ghcr.io\":{\"username\":\"r\\u006fbot\",\"password\":\"a\\\"b\\\\"
                   "\\u00e9\\ud83d\\ude00\"}}}",
                   "robot", "a\"b\\\xc3\xa9\xf0\x9f\x98\x80");
}
END_TEST

/* ---- refused shapes --------------------------------------------------- */

typedef struct refusal {
    const char *text;
    size_t len;         /* 0: strlen(text) */
    const char *needle; /* the message must contain this */
} refusal;

static const char raw_nul_doc[] =
    "{\"auths\":{\"ghcr.io\":{\"username\":\"" USER "\",\"password\":\"hunter2\0-S3CRET\"}}}";

static const refusal refusals[] = {
    {"hello " PASS, 0, "not valid JSON at byte 0"},
    {"", 0, "not valid JSON (unexpected end) at byte 0"},
    {"[\"" PASS "\"]", 0, "is not a JSON object"},
    {"\"" PASS "\"", 0, "is not a JSON object"},
    {"{\"x\":\"" PASS "\"}", 0, "missing auths"},
    {"{\"auths\":[\"" PASS "\"]}", 0, "auths is not an object"},
    {"{\"auths\":{\"docker.io\":{\"username\":\"" USER "\",\"password\":\"" PASS "\"}}}", 0,
     "auths has no \"ghcr.io\" entry"},
    {"{\"auths\":{\"ghcr.io\":\"" PASS "\"}}", 0, "auths[\"ghcr.io\"] is not an object"},
    {"{\"auths\":{\"ghcr.io\":{}}}", 0, "auths[\"ghcr.io\"] has no username/password or auth"},
    {"{\"auths\":{\"ghcr.io\":{\"email\":\"x\"}}}", 0, "has no username/password or auth"},
    {"{\"auths\":{\"ghcr.io\":{\"username\":\"\",\"password\":\"" PASS "\"}}}", 0,
     "auths[\"ghcr.io\"].username is empty"},
    {"{\"auths\":{\"ghcr.io\":{\"username\":\"" USER "\",\"password\":\"\"}}}", 0,
     "auths[\"ghcr.io\"].password is empty"},
    {"{\"auths\":{\"ghcr.io\":{\"username\":7,\"password\":\"" PASS "\"}}}", 0,
     ".username is not a string"},
    {"{\"auths\":{\"ghcr.io\":{\"password\":\"" PASS "\"}}}", 0, "has password without username"},
    {"{\"auths\":{\"ghcr.io\":{\"username\":\"" USER "\"}}}", 0, "has username without password"},
    {"{\"auths\":{\"ghcr.io\":{\"username\":\"a:b\",\"password\":\"" PASS "\"}}}", 0,
     ".username contains ':'"},
    {"{\"auths\":{\"ghcr.io\":{\"auth\":\"" PASS "\"}}}", 0, "auth is not base64 of user:pass"},
    {"{\"auths\":{\"ghcr.io\":{\"auth\":\"\"}}}", 0, ".auth is empty"},
    /* base64("hunter2-S3CRET"): no ':' */
    {"{\"auths\":{\"ghcr.io\":{\"auth\":\"aHVudGVyMi1TM0NSRVQ=\"}}}", 0,
     "auth is not base64 of user:pass (no ':')"},
    /* base64(":hunter2-S3CRET") and base64("robot:") */
    {"{\"auths\":{\"ghcr.io\":{\"auth\":\"Omh1bnRlcjItUzNDUkVU\"}}}", 0,
     "auth has an empty username or password"},
    {"{\"auths\":{\"ghcr.io\":{\"auth\":\"cm9ib3Q6\"}}}", 0,
     "auth has an empty username or password"},
    /* base64("robot:hunter2\0") */
    {"{\"auths\":{\"ghcr.io\":{\"auth\":\"cm9ib3Q6aHVudGVyMgA=\"}}}", 0,
     "auth decodes to text containing a NUL character"},
    {"{\"auths\":{\"ghcr.io\":{\"username\":\"" USER "\",\"password\":\"other\",\"auth\":\"" AUTH_OK
     "\"}}}",
     0, "auth and username/password disagree"},
    {"{\"auths\":{\"ghcr.io\":{\"username\":\"robo\",\"password\":\"" PASS "\",\"auth\":\"" AUTH_OK
     "\"}}}",
     0, "auth and username/password disagree"},
    {"{\"auths\":{},\"auths\":{\"ghcr.io\":{\"username\":\"" USER "\",\"password\":\"" PASS "\"}}}",
     0, "duplicate key auths at byte 12"},
    {"{\"auths\":{\"ghcr.io\":{\"auth\":\"" AUTH_OK "\"},\"ghcr.io\":{\"username\":\"" USER
     "\",\"password\":\"" PASS "\"}}}",
     0, "duplicate key auths.ghcr.io at byte"},
    {"{\"auths\":{\"ghcr.io\":{\"username\":\"" USER "\",\"password\":\"x\",\"password\":\"" PASS
     "\"}}}",
     0, "duplicate key auths.ghcr.io.password at byte"},
    {"{\"auths\":{\"ghcr.io\":{\"username\":\"" USER
     "\",\"password\":\"x\",\"\\u0070assword\":\"" PASS "\"}}}",
     0, "duplicate key auths.ghcr.io.password at byte"},
    {"{\"auths\":{\"ghcr.io\":{\"username\":\"" USER "\",\"password\":\"" PASS
     "\",\"x\\u0000\":1}}}",
     0, "contains a NUL character (\\u0000) at byte"},
    {"{\"auths\":{\"ghcr.io\":{\"username\":\"" USER "\",\"password\":\"" PASS "\\u0000x\"}}}", 0,
     "contains a NUL character (\\u0000) at byte"},
    {raw_nul_doc, sizeof raw_nul_doc - 1, "contains a NUL character at byte 59"},
    {"{\"auths\":{\"ghcr.io\":{\"username\":\"" USER "\",\"password\":\"" PASS "\"}}}x", 0,
     "trailing garbage after the JSON value at byte"},
    {"{\"auths\":{\"ghcr.io\":{\"username\":\"" USER "\",\"password\":\"" PASS "\"}}}{}", 0,
     "trailing garbage"},
    {"{\"auths\":{\"ghcr.io\":{\"username\":\"" USER "\",\"password\":\"" PASS "\xff\"}}}", 0,
     "not valid UTF-8 at byte"},
    {"{\"auths\":{\"ghcr.io\":{\"username\":\"" USER "\",\"password\":\"" PASS "\\ud800\"}}}", 0,
     "lone surrogate"},
    {"{\"auths\":{\"ghcr.io\":{\"username\":\"" USER "\",\"password\":\"" PASS "\t\"}}}", 0,
     "raw control character"},
    {"{\"auths\":{\"ghcr.io\":{\"username\":\"" USER "\",\"password\":\"x\",\"Password\":\"" PASS
     "\"}}}",
     0, "differs from \"password\" only in case"},
    {"{\"auths\":{\"ghcr.io\":{\"username\":\"" USER "\",\"password\":\"" PASS "\"}},\"AUTHS\":{}}",
     0, "differs from \"auths\" only in case"},
    /* "pa\u017fsword": Go folds the long s to 's'. */
    {"{\"auths\":{\"ghcr.io\":{\"username\":\"" USER
     "\",\"password\":\"x\",\"pa\xc5\xbfsword\":\"" PASS "\"}}}",
     0, "differs from \"password\" only in case"},
    {"{\"auths\":{\"ghcr.io\":{\"username\":\"" USER "\",\"password\":\"" PASS "\"}}", 0,
     "not valid JSON (unexpected end)"},
};

/* Hazard: H130 — each malformed desired credential is refused as bad data (65), not echoed. */
START_TEST(test_refuses_each_bad_shape_without_quoting_the_secret)
{
    const refusal *r = &refusals[_i];
    size_t len = r->len ? r->len : strlen(r->text);
    rs_cred c;
    rs_err e = {0};
    rs_code rc = cred_parse(r->text, len, "desired credential", &c, &e);
    ck_assert_msg(rc == RS_DATAERR, "case %d accepted or wrong code: %s", _i, r->text);
    ck_assert_int_eq(e.code, RS_DATAERR);
    ck_assert_ptr_null(c.username);
    ck_assert_ptr_null(c.password);
    ck_assert_ptr_null(c.canonical);
    ck_assert_msg(strncmp(e.msg, "desired credential: ", 20) == 0, "case %d: no source: %s", _i,
                  e.msg);
    ck_assert_msg(strstr(e.msg, r->needle), "case %d: want \"%s\" in \"%s\"", _i, r->needle, e.msg);
    ck_assert_msg(!strstr(e.msg, "hunter2"), "case %d leaks the password: %s", _i, e.msg);
    ck_assert_msg(!strstr(e.msg, AUTH_OK), "case %d leaks the auth: %s", _i, e.msg);
}
END_TEST

static char *nested_arrays(size_t depth)
{
    char *s = rs_xmalloc(2 * depth + 1);
    memset(s, '[', depth);
    memset(s + depth, ']', depth);
    s[2 * depth] = '\0';
    return s;
}

START_TEST(test_refuses_nesting_beyond_the_limit)
{
    rs_err e = {0};
    char *ok = nested_arrays(64);
    ck_assert_msg(json_strict_check(ok, strlen(ok), &e), "64 levels refused: %s", e.msg);
    free(ok);

    char *deep = nested_arrays(65);
    ck_assert(!json_strict_check(deep, strlen(deep), &e));
    ck_assert_str_eq(e.msg, "nested deeper than 64 levels at byte 64");
    rs_cred c;
    ck_assert_int_eq(cred_parse(deep, strlen(deep), "desired credential", &c, &e), RS_DATAERR);
    ck_assert_ptr_nonnull(strstr(e.msg, "desired credential: nested deeper than 64"));
    free(deep);

    /* Far deeper than any C stack would survive with a recursive parser. */
    size_t n = 1000000;
    char *huge = rs_xmalloc(n);
    memset(huge, '[', n);
    ck_assert(!json_strict_check(huge, n, &e));
    free(huge);
}
END_TEST

/* ---- strict JSON scanner ---------------------------------------------- */

START_TEST(test_strict_accepts_valid_json)
{
    static const char *const ok[] = {
        "0",
        "-0",
        "-12.5e+3",
        "1E9",
        "true",
        "false",
        "null",
        "\"\"",
        "[]",
        "{}",
        " [ 1 , [ ] ] ",
        "{\"a\":{\"a\":{\"a\":1}}}",
        "[{\"a\":1},{\"a\":2}]",
        "\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"",
        "\"\xe2\x82\xac\xf0\x9f\x98\x80\"",
        "{\"\":1,\"x\":2}",
    };
    for (size_t i = 0; i < RS_ARRAY_LEN(ok); i++) {
        rs_err e = {0};
        ck_assert_msg(json_strict_check(ok[i], strlen(ok[i]), &e), "refused %s: %s", ok[i], e.msg);
    }
}
END_TEST

START_TEST(test_strict_refuses_invalid_json)
{
    static const char *const bad[] = {
        "01",
        "1.",
        "-",
        ".5",
        "+1",
        "1e",
        "tru",
        "nul",
        "[1,]",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{1:2}",
        "[1 2]",
        "\"abc",
        "\"\\x\"",
        "\"\\u12\"",
        "\"\\u12G4\"",
        "{\"a\":1]",
        "[}",
        "\xef\xbb\xbf{}",
        "\"\xc0\xaf\"",
        "\"\xed\xa0\x80\"",
        "\"\xf4\x90\x80\x80\"",
        "\"\\udc00\"",
        "\"\\ud800\\u0041\"",
        "   ",
        "{\"a\":}",
        "[\"a\" ,",
    };
    for (size_t i = 0; i < RS_ARRAY_LEN(bad); i++) {
        rs_err e = {0};
        ck_assert_msg(!json_strict_check(bad[i], strlen(bad[i]), &e), "accepted %s", bad[i]);
        ck_assert_int_eq(e.code, RS_DATAERR);
        ck_assert_msg(strstr(e.msg, " at byte "), "no offset in: %s", e.msg);
    }
}
END_TEST

START_TEST(test_strict_duplicate_paths_name_arrays_and_offsets)
{
    rs_err e = {0};
    const char *t = "{\"a\":[{\"b\":1},{\"c\":{\"d\":1,\"d\":2}}]}";
    ck_assert(!json_strict_check(t, strlen(t), &e));
    ck_assert_str_eq(e.msg, "duplicate key a[1].c.d at byte 26");

    const char *top = "{\"k\":1, \"\\u006b\":2}";
    ck_assert(!json_strict_check(top, strlen(top), &e));
    ck_assert_str_eq(e.msg, "duplicate key k at byte 8");

    /* Same key in sibling objects is not a duplicate. */
    const char *sib = "[{\"k\":1},{\"k\":2}]";
    ck_assert(json_strict_check(sib, strlen(sib), &e));

    /* A non-printable key is shown without its bytes. */
    const char *ctl = "{\"\\n\\u00e9\":1,\"\\n\\u00e9\":2}";
    ck_assert(!json_strict_check(ctl, strlen(ctl), &e));
    ck_assert_str_eq(e.msg, "duplicate key ??? at byte 14");
}
END_TEST

START_TEST(test_strict_reports_nul_offset)
{
    rs_err e = {0};
    const char t[] = "{\"a\":\"b\0\"}";
    ck_assert(!json_strict_check(t, sizeof t - 1, &e));
    ck_assert_str_eq(e.msg, "contains a NUL character at byte 7");
    const char *esc = "[\"ab\\u0000\"]";
    ck_assert(!json_strict_check(esc, strlen(esc), &e));
    ck_assert_str_eq(e.msg, "contains a NUL character (\\u0000) at byte 4");
}
END_TEST

/* ---- canonical JSON --------------------------------------------------- */

static void assert_canonical(const char *in, const char *want)
{
    cJSON *doc = cJSON_Parse(in);
    ck_assert_ptr_nonnull(doc);
    char *got = json_canonical(doc);
    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got, want);
    free(got);
    cJSON_Delete(doc);
}

START_TEST(test_canonical_sorts_keys_bytewise)
{
    assert_canonical("{ \"b\": 1, \"a\": 2, \"B\": 3, \"aa\": 4, \"\": 5 }",
                     "{\"\":5,\"B\":3,\"a\":2,\"aa\":4,\"b\":1}");
}
END_TEST

START_TEST(test_canonical_sorts_nested_objects_and_keeps_array_order)
{
    assert_canonical("{\"z\":{\"y\":[3,{\"q\":1,\"p\":2},1],\"x\":{}},\"a\":[]}",
                     "{\"a\":[],\"z\":{\"x\":{},\"y\":[3,{\"p\":2,\"q\":1},1]}}");
    assert_canonical("[ \"s\" , 1.5, -0, 1e3, true, false, null ]",
                     "[\"s\",1.5,-0,1000,true,false,null]");
    assert_canonical("\"x\"", "\"x\"");
    assert_canonical("{}", "{}");
}
END_TEST

START_TEST(test_canonical_strings_match_cjson_printer)
{
    /* Already sorted, so cJSON's own unformatted output is the canonical form. */
    const char *in = "{\"a\\u0001\\n\":\"q\\\"b\\\\s\\/\\b\\f\\r\\t\\u001f\\u007f\\u00e9\","
                     "\"b\":[\"\\ud83d\\ude00\",12345678901234567890,0.1,-3]}";
    cJSON *doc = cJSON_Parse(in);
    ck_assert_ptr_nonnull(doc);
    char *want = cJSON_PrintUnformatted(doc);
    char *got = json_canonical(doc);
    ck_assert_str_eq(got, want);
    free(got);
    cJSON_free(want);
    cJSON_Delete(doc);
}
END_TEST

START_TEST(test_canonical_handles_deep_trees_without_recursion)
{
    size_t depth = 5000;
    cJSON *root = cJSON_CreateArray();
    cJSON *cur = root;
    for (size_t i = 1; i < depth; i++) {
        cJSON *next = cJSON_CreateArray();
        cJSON_AddItemToArray(cur, next);
        cur = next;
    }
    char *got = json_canonical(root);
    char *want = nested_arrays(depth);
    ck_assert_str_eq(got, want);
    free(got);
    free(want);
    cJSON_Delete(root);
    ck_assert_ptr_null(json_canonical(NULL));
}
END_TEST

START_TEST(test_parsed_canonical_is_whole_document)
{
    rs_cred c;
    rs_err e = {0};
    ck_assert_int_eq(parse_str("{ \"auths\" : { \"ghcr.io\" : { \"password\" : \"" PASS
                               "\", \"username\" : \"" USER "\" } }, \"x\" : [2,1] }",
                               &c, &e),
                     RS_OK);
    ck_assert_str_eq(c.canonical, "{\"auths\":{\"ghcr.io\":{\"password\":\"" PASS
                                  "\",\"username\":\"" USER "\"}},\"x\":[2,1]}");
    cred_free(&c);
    ck_assert_ptr_null(c.password);
    cred_free(&c); /* idempotent */
}
END_TEST

/* ---- cred_matches_text ------------------------------------------------ */

START_TEST(test_matches_text_ignores_key_order_and_whitespace)
{
    rs_cred c;
    rs_err e = {0};
    ck_assert_int_eq(parse_str("{\"auths\":{\"ghcr.io\":{\"username\":\"" USER
                               "\",\"password\":\"" PASS "\"},\"a.io\":{\"auth\":\"eDp5\"}}}",
                               &c, &e),
                     RS_OK);
    const char *same =
        "{\n  \"auths\": {\n    \"a.io\": {\"auth\": \"eDp5\"},\n"
        "    \"ghcr.io\": {\"password\": \"" PASS "\", \"username\": \"" USER "\"}\n  }\n}\n";
    ck_assert(cred_matches_text(&c, same, strlen(same)));

    const char *other_pass = "{\"auths\":{\"ghcr.io\":{\"username\":\"" USER
                             "\",\"password\":\"hunter3-S3CRET\"},\"a.io\":{\"auth\":\"eDp5\"}}}";
    ck_assert(!cred_matches_text(&c, other_pass, strlen(other_pass)));

    const char *missing_host =
        "{\"auths\":{\"ghcr.io\":{\"username\":\"" USER "\",\"password\":\"" PASS "\"}}}";
    ck_assert(!cred_matches_text(&c, missing_host, strlen(missing_host)));

    const char *dup = "{\"auths\":{\"ghcr.io\":{\"username\":\"" USER "\",\"password\":\"" PASS
                      "\",\"password\":\"" PASS "\"},\"a.io\":{\"auth\":\"eDp5\"}}}";
    ck_assert(!cred_matches_text(&c, dup, strlen(dup)));
    ck_assert(!cred_matches_text(&c, "not json", 8));
    ck_assert(!cred_matches_text(&c, NULL, 0));
    cred_free(&c);
}
END_TEST

/* ---- docker config builder -------------------------------------------- */

START_TEST(test_dockerconfig_build_is_compact_and_round_trips)
{
    char *text = cred_dockerconfig_build("ghcr.io", USER, PASS);
    ck_assert_str_eq(text, "{\"auths\":{\"ghcr.io\":{\"username\":\"" USER "\",\"password\":\"" PASS
                           "\",\"auth\":\"" AUTH_OK "\"}}}");
    rs_cred c;
    rs_err e = {0};
    ck_assert_int_eq(parse_str(text, &c, &e), RS_OK);
    ck_assert(cred_matches_text(&c, text, strlen(text)));
    cred_free(&c);
    free(text);

    const char *pass = "p\"w\\d\n:\xc3\xa9";
    text = cred_dockerconfig_build("ghcr.io", "me", pass);
    ck_assert_int_eq(parse_str(text, &c, &e), RS_OK);
    ck_assert_str_eq(c.username, "me");
    ck_assert_str_eq(c.password, pass);
    cred_free(&c);
    free(text);
    ck_assert_ptr_null(cred_dockerconfig_build(NULL, "a", "b"));
}
END_TEST

/* ---- primitives ------------------------------------------------------- */

START_TEST(test_sha256_known_vectors)
{
    char hex[65];
    sha256_hex("abc", 3, hex);
    ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    sha256_hex("", 0, hex);
    ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}
END_TEST

/* Hazard: H133, H134 — the revision is SHA-256 of the ciphertext; a non-ENC[ value is refused. */
START_TEST(test_revision_hashes_ciphertext_and_refuses_plaintext)
{
    char hex[65], want[65];
    rs_err e = {0};
    const char *ct = "ENC[AES256_GCM,data:Zm9v,iv:YmFy,tag:YmF6,type:str]";
    ck_assert_int_eq(revision_of_ciphertext(ct, hex, &e), RS_OK);
    sha256_hex(ct, strlen(ct), want);
    ck_assert_str_eq(hex, want);
    ck_assert_uint_eq(strlen(hex), 64);

    const char *plain = "{\"auths\":{\"ghcr.io\":{\"auth\":\"" AUTH_OK "\"}}}";
    ck_assert_int_eq(revision_of_ciphertext(plain, hex, &e), RS_DATAERR);
    ck_assert_int_eq(e.code, RS_DATAERR);
    ck_assert_ptr_nonnull(strstr(e.msg, "plaintext SOPS source refused"));
    ck_assert_ptr_null(strstr(e.msg, AUTH_OK));
    ck_assert_int_eq(revision_of_ciphertext("enc[x]", hex, &e), RS_DATAERR);
    ck_assert_int_eq(revision_of_ciphertext("ENC", hex, &e), RS_DATAERR);
    ck_assert_int_eq(revision_of_ciphertext(NULL, hex, &e), RS_DATAERR);
}
END_TEST

START_TEST(test_base64_rfc4648_vectors)
{
    static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *const enc[] = {"",         "Zg==",     "Zm8=",    "Zm9v",
                                      "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (size_t i = 0; i < RS_ARRAY_LEN(plain); i++) {
        char *e = base64_encode(plain[i], strlen(plain[i]));
        ck_assert_str_eq(e, enc[i]);
        size_t n = 99;
        unsigned char *d = base64_decode(enc[i], &n);
        ck_assert_ptr_nonnull(d);
        ck_assert_uint_eq(n, strlen(plain[i]));
        ck_assert_mem_eq(d, plain[i], n);
        free(e);
        free(d);
    }
}
END_TEST

START_TEST(test_base64_round_trips_all_bytes)
{
    unsigned char data[300];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (unsigned char)(i * 37 + 11);
    for (size_t len = 0; len <= sizeof data; len++) {
        char *e = base64_encode(data, len);
        ck_assert_uint_eq(strlen(e), (len + 2) / 3 * 4);
        size_t n = 0;
        unsigned char *d = base64_decode(e, &n);
        ck_assert_ptr_nonnull(d);
        ck_assert_uint_eq(n, len);
        if (len) ck_assert_mem_eq(d, data, len);
        free(e);
        free(d);
    }
}
END_TEST

START_TEST(test_base64_refuses_malformed)
{
    static const char *const bad[] = {
        "Zg",       "Zg=",  "Z===",  "====",   "Zm9v!", "Zh==",     "Zm9=",
        "Zg==Zg==", "Zm=v", " Zm9v", "Zm9v\n", "Zm-_",  "Zm9v====", "=Zm9",
    };
    for (size_t i = 0; i < RS_ARRAY_LEN(bad); i++) {
        size_t n = 42;
        ck_assert_msg(base64_decode(bad[i], &n) == NULL, "accepted %s", bad[i]);
        ck_assert_uint_eq(n, 0);
    }
    ck_assert_ptr_null(base64_decode(NULL, NULL));
}
END_TEST

START_TEST(test_ct_equal)
{
    ck_assert(ct_equal("abc", 3, "abc", 3));
    ck_assert(!ct_equal("abc", 3, "abd", 3));
    ck_assert(!ct_equal("abc", 3, "abcd", 4));
    ck_assert(!ct_equal("abcd", 4, "abc", 3));
    ck_assert(ct_equal("", 0, "", 0));
    ck_assert(ct_equal(NULL, 0, NULL, 0));
    ck_assert(!ct_equal("a", 1, "", 0));
}
END_TEST

static Suite *cred_suite(void)
{
    Suite *s = suite_create("cred");
    TCase *accept = tcase_create("accept");
    tcase_add_test(accept, test_accepts_username_password_only);
    tcase_add_test(accept, test_accepts_auth_only);
    tcase_add_test(accept, test_accepts_both_forms_agreeing);
    tcase_add_test(accept, test_accepts_extra_hosts_and_keys);
    tcase_add_test(accept, test_accepts_auth_split_at_first_colon);
    tcase_add_test(accept, test_accepts_escaped_strings);
    suite_add_tcase(s, accept);

    TCase *refuse = tcase_create("refuse");
    tcase_add_loop_test(refuse, test_refuses_each_bad_shape_without_quoting_the_secret, 0,
                        (int)RS_ARRAY_LEN(refusals));
    tcase_add_test(refuse, test_refuses_nesting_beyond_the_limit);
    suite_add_tcase(s, refuse);

    TCase *strict = tcase_create("strict");
    tcase_add_test(strict, test_strict_accepts_valid_json);
    tcase_add_test(strict, test_strict_refuses_invalid_json);
    tcase_add_test(strict, test_strict_duplicate_paths_name_arrays_and_offsets);
    tcase_add_test(strict, test_strict_reports_nul_offset);
    suite_add_tcase(s, strict);

    TCase *canon = tcase_create("canonical");
    tcase_add_test(canon, test_canonical_sorts_keys_bytewise);
    tcase_add_test(canon, test_canonical_sorts_nested_objects_and_keeps_array_order);
    tcase_add_test(canon, test_canonical_strings_match_cjson_printer);
    tcase_add_test(canon, test_canonical_handles_deep_trees_without_recursion);
    tcase_add_test(canon, test_parsed_canonical_is_whole_document);
    tcase_add_test(canon, test_matches_text_ignores_key_order_and_whitespace);
    tcase_add_test(canon, test_dockerconfig_build_is_compact_and_round_trips);
    suite_add_tcase(s, canon);

    TCase *prim = tcase_create("primitives");
    tcase_add_test(prim, test_sha256_known_vectors);
    tcase_add_test(prim, test_revision_hashes_ciphertext_and_refuses_plaintext);
    tcase_add_test(prim, test_base64_rfc4648_vectors);
    tcase_add_test(prim, test_base64_round_trips_all_bytes);
    tcase_add_test(prim, test_base64_refuses_malformed);
    tcase_add_test(prim, test_ct_equal);
    suite_add_tcase(s, prim);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(cred_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
