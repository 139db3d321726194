/*
 * test_store_admit.c — the sim store refuses what the Kubernetes API server
 * refuses before storing, in process as over HTTP (tests/check_serve_limits.sh
 * proves the same through `sim serve`): names that are not DNS-1123,
 * annotations over 256 KiB, Secret data that is not base64, objects over
 * etcd's 1.5 MiB, and JSON Patches that grow an object by copying (the API
 * server's copy budget), nest it past what can be read back, or hold more
 * than 10000 operations. Every refusal leaves the stored object unchanged.
 */
#include "sim/store/jsonpatch.h"
#include "sim/store/store.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sqlite3 *raw; /* the connection */
static store *db;    /* the store over it */

static void setup(void)
{
    ck_assert_int_eq(sqlite3_open(":memory:", &raw), SQLITE_OK);
    ck_assert_int_eq(store_init(raw), SQLITE_OK);
    db = store_open(raw);
}

static void teardown(void)
{
    store_close(db);
    sqlite3_close(raw);
    db = NULL;
    raw = NULL;
}

/* The Status answer's code, reason and whether its message holds want;
 * consumes out. */
static void expect_status(cJSON *out, int code, const char *reason, const char *want)
{
    ck_assert_ptr_nonnull(out);
    const char *r = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(out, "reason"));
    const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(out, "message"));
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(out, "kind")), "Status");
    ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(out, "code")->valueint, code);
    ck_assert_str_eq(r, reason);
    ck_assert_msg(m && strstr(m, want), "message \"%s\" lacks \"%s\"", m ? m : "", want);
    cJSON_Delete(out);
}

static int create_text(const char *kind, const char *ns, const char *text, cJSON **out)
{
    cJSON *obj = cJSON_Parse(text);
    ck_assert_ptr_nonnull(obj);
    int code = store_create(db, kind, ns, obj, out);
    cJSON_Delete(obj);
    return code;
}

static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);
    ck_assert_ptr_nonnull(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

static const char *rv_of(const char *kind, const char *ns, const char *name, char *buf, size_t len)
{
    cJSON *o = NULL;
    ck_assert_int_eq(store_get(db, kind, ns, name, &o), 200);
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(o, "metadata");
    snprintf(buf, len, "%s",
             cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "resourceVersion")));
    cJSON_Delete(o);
    return buf;
}

START_TEST(test_names_must_be_dns1123)
{
    static const char *const bad[] = {"Bad_Name", "UPPER", "-lead",  "trail-", "a..b",
                                      ".dot",     "dot.",  "sp ace", "a/b",    "a.-b"};
    char text[512];
    cJSON *out = NULL;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "{\"metadata\":{\"name\":\"%s\"}}", bad[i]);
        ck_assert_msg(create_text("ConfigMap", "ns", text, &out) == 422, "name %s", bad[i]);
        expect_status(out, 422, "Invalid", "metadata.name: Invalid value");
    }
    char *long_name = repeat('x', 254);
    snprintf(text, sizeof text, "{\"metadata\":{\"name\":\"%s\"}}", long_name);
    ck_assert_int_eq(create_text("ConfigMap", "ns", text, &out), 422);
    expect_status(out, 422, "Invalid", "must be no more than 253 characters");
    long_name[253] = '\0';
    snprintf(text, sizeof text, "{\"metadata\":{\"name\":\"%s\"}}", long_name);
    ck_assert_int_eq(create_text("ConfigMap", "ns", text, &out), 201);
    cJSON_Delete(out);
    free(long_name);
    ck_assert_int_eq(create_text("ConfigMap", "ns", "{\"metadata\":{\"name\":\"a.b-c.9\"}}", &out),
                     201);
    cJSON_Delete(out);
    /* A Namespace's name is a label: no dots, at most 63. */
    ck_assert_int_eq(create_text("Namespace", NULL, "{\"metadata\":{\"name\":\"a.b\"}}", &out),
                     422);
    expect_status(out, 422, "Invalid", "RFC 1123 label");
    ck_assert_int_eq(create_text("Namespace", NULL, "{\"metadata\":{\"name\":\"a-b\"}}", &out),
                     201);
    cJSON_Delete(out);
}
END_TEST

START_TEST(test_annotations_over_256_kib_are_422)
{
    char *v = repeat('v', 256 * 1024 - 1); /* "k" + value = exactly the limit */
    cJSON *obj = cJSON_Parse("{\"metadata\":{\"name\":\"n1\",\"annotations\":{}}}");
    cJSON *ann = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"),
                                                  "annotations");
    cJSON_AddStringToObject(ann, "k", v);
    cJSON *out = NULL;
    ck_assert_int_eq(store_create(db, "Node", NULL, obj, &out), 201);
    cJSON_Delete(out);
    /* One byte more, by patch: refused, the node unchanged. */
    char rv[32], rv2[32];
    rv_of("Node", NULL, "n1", rv, sizeof rv);
    cJSON *p = cJSON_Parse("{\"metadata\":{\"annotations\":{\"j\":\"x\"}}}");
    ck_assert_int_eq(store_patch(db, "Node", NULL, "n1", RS_PATCH_MERGE, p, &out), 422);
    expect_status(out, 422, "Invalid",
                  "metadata.annotations: Too long: must have at most 262144 bytes");
    ck_assert_str_eq(rv_of("Node", NULL, "n1", rv2, sizeof rv2), rv);
    cJSON_Delete(p);
    /* And on create. */
    cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"),
                                           "name", cJSON_CreateString("n2"));
    cJSON_AddStringToObject(ann, "j", "x");
    ck_assert_int_eq(store_create(db, "Node", NULL, obj, &out), 422);
    expect_status(out, 422, "Invalid", "metadata.annotations: Too long");
    cJSON_Delete(obj);
    free(v);
}
END_TEST

START_TEST(test_secret_data_must_be_base64)
{
    static const char *const bad[] = {"not base64!", "abc", "ab=c", "a*bc", "YWJj=", "===="};
    char text[256];
    cJSON *out = NULL;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "{\"metadata\":{\"name\":\"s\"},\"data\":{\"k\":\"%s\"}}",
                 bad[i]);
        ck_assert_msg(create_text("Secret", "ns", text, &out) == 400, "data %s", bad[i]);
        expect_status(out, 400, "BadRequest", "illegal base64 data");
    }
    ck_assert_int_eq(
        create_text("Secret", "ns", "{\"metadata\":{\"name\":\"s\"},\"data\":{\"k\":7}}", &out),
        400);
    expect_status(out, 400, "BadRequest", "expected a base64 string");
    ck_assert_int_eq(
        create_text("Secret", "ns",
                    "{\"metadata\":{\"name\":\"s\"},\"data\":{\"k\":\"YWJj\",\"e\":\"\"}}", &out),
        201);
    cJSON_Delete(out);
    char rv[32], rv2[32];
    rv_of("Secret", "ns", "s", rv, sizeof rv);
    cJSON *p = cJSON_Parse("{\"data\":{\"k2\":\"a*bc\"}}");
    ck_assert_int_eq(store_patch(db, "Secret", "ns", "s", RS_PATCH_MERGE, p, &out), 400);
    expect_status(out, 400, "BadRequest", "data[\"k2\"]");
    ck_assert_str_eq(rv_of("Secret", "ns", "s", rv2, sizeof rv2), rv);
    cJSON_Delete(p);
}
END_TEST

/* Secret data is decoded as the API server's JSON decoder decodes []byte
 * (Go's base64.StdEncoding: standard alphabet, padding required, CR and LF
 * skipped anywhere, bits under the padding ignored) and stored as the bytes,
 * so it reads back in the canonical spelling; what Go refuses is a 400. */
START_TEST(test_secret_data_decodes_as_go_and_reads_back_canonical)
{
    static const char *const go_ok[][2] = {
        {"YW\\r\\nJj", "YWJj"},     {"YWJ\\nj\\n", "YWJj"}, {"QR==", "QQ=="},
        {"YQ=\\n=", "YQ=="},        {"\\r\\n", ""},         {"YQ==\\r\\n", "YQ=="},
        {"\\nYWJjZA==", "YWJjZA=="}};
    static const char *const go_bad[] = {"YQ",      "YQ=",  "YQ==YQ==", "YW Jj", "YW-_",
                                         "YW\\tJj", "Y===", "=YWJ",     "YQ==x"};
    char text[256];
    cJSON *out = NULL;
    for (size_t i = 0; i < sizeof go_ok / sizeof go_ok[0]; i++) {
        snprintf(text, sizeof text, "{\"metadata\":{\"name\":\"s%zu\"},\"data\":{\"k\":\"%s\"}}", i,
                 go_ok[i][0]);
        ck_assert_msg(create_text("Secret", "ns", text, &out) == 201, "data %s", go_ok[i][0]);
        cJSON_Delete(out);
        char name[16];
        snprintf(name, sizeof name, "s%zu", i);
        ck_assert_int_eq(store_get(db, "Secret", "ns", name, &out), 200);
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(out, "data");
        ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "k")),
                         go_ok[i][1]);
        cJSON_Delete(out);
    }
    for (size_t i = 0; i < sizeof go_bad / sizeof go_bad[0]; i++) {
        snprintf(text, sizeof text, "{\"metadata\":{\"name\":\"b\"},\"data\":{\"k\":\"%s\"}}",
                 go_bad[i]);
        ck_assert_msg(create_text("Secret", "ns", text, &out) == 400, "data %s", go_bad[i]);
        expect_status(out, 400, "BadRequest", "illegal base64 data");
    }
    /* A merge patch is admitted the same way: the stored text is canonical. */
    cJSON *p = cJSON_Parse("{\"data\":{\"k\":\"YWJj\\r\\nZA==\"}}");
    ck_assert_int_eq(store_patch(db, "Secret", "ns", "s0", RS_PATCH_MERGE, p, &out), 200);
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(out, "data");
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "k")), "YWJjZA==");
    cJSON_Delete(out);
    cJSON_Delete(p);
}
END_TEST

START_TEST(test_objects_over_etcd_limit_are_413)
{
    char *v = repeat('x', 1536 * 1024);
    cJSON *obj = cJSON_Parse("{\"metadata\":{\"name\":\"big\"},\"data\":{}}");
    cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(obj, "data"), "a", v);
    cJSON *out = NULL;
    ck_assert_int_eq(store_create(db, "ConfigMap", "ns", obj, &out), 413);
    expect_status(out, 413, "RequestEntityTooLarge", "etcdserver: request is too large");
    ck_assert_int_eq(store_get(db, "ConfigMap", "ns", "big", &out), 404);
    cJSON_Delete(out);
    cJSON_Delete(obj);
    free(v);
}
END_TEST

/* A patch of n copies of /data/b (40 KiB) into /data/c<i>, or copy-then-
 * remove pairs when churn. */
static cJSON *copy_patch(int n, bool churn)
{
    cJSON *ops = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        char to[32];
        snprintf(to, sizeof to, churn ? "/data/t" : "/data/c%d", i);
        cJSON *op = cJSON_CreateObject();
        cJSON_AddStringToObject(op, "op", "copy");
        cJSON_AddStringToObject(op, "from", "/data/b");
        cJSON_AddStringToObject(op, "path", to);
        cJSON_AddItemToArray(ops, op);
        if (!churn) continue;
        op = cJSON_CreateObject();
        cJSON_AddStringToObject(op, "op", "remove");
        cJSON_AddStringToObject(op, "path", "/data/t");
        cJSON_AddItemToArray(ops, op);
    }
    return ops;
}

START_TEST(test_json_patch_growth_is_bounded)
{
    char *v = repeat('z', 40 * 1024);
    cJSON *obj = cJSON_Parse("{\"metadata\":{\"name\":\"amp\"},\"data\":{}}");
    cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(obj, "data"), "b", v);
    cJSON *out = NULL;
    ck_assert_int_eq(store_create(db, "ConfigMap", "ns", obj, &out), 201);
    cJSON_Delete(out);
    cJSON_Delete(obj);
    free(v);
    char rv[32], rv2[32];
    rv_of("ConfigMap", "ns", "amp", rv, sizeof rv);
    /* 40 copies: within the copy budget, over etcd's limit. */
    cJSON *p = copy_patch(40, false);
    ck_assert_int_eq(store_patch(db, "ConfigMap", "ns", "amp", RS_PATCH_JSON, p, &out), 413);
    expect_status(out, 413, "RequestEntityTooLarge", "request is too large");
    cJSON_Delete(p);
    /* 80 copies removed at once: the object never grows; the budget does. */
    p = copy_patch(80, true);
    ck_assert_int_eq(store_patch(db, "ConfigMap", "ns", "amp", RS_PATCH_JSON, p, &out), 422);
    expect_status(out, 422, "Invalid", "accumulated size increase of copy");
    cJSON_Delete(p);
    /* A few copies are fine. */
    p = copy_patch(3, false);
    ck_assert_int_eq(store_patch(db, "ConfigMap", "ns", "amp", RS_PATCH_JSON, p, &out), 200);
    cJSON_Delete(out);
    cJSON_Delete(p);
    ck_assert_str_ne(rv_of("ConfigMap", "ns", "amp", rv2, sizeof rv2), rv);
}
END_TEST

START_TEST(test_json_patch_doubling_stops_at_the_budget)
{
    cJSON *doc = cJSON_Parse("{\"data\":{\"a\":\"0123456789abcdef0123456789abcdef\"}}");
    cJSON *ops = cJSON_CreateArray();
    for (int i = 0; i < 64; i++) { /* 2^64 times the data map, unbounded */
        char to[32];
        snprintf(to, sizeof to, "/data/d%d", i);
        cJSON *op = cJSON_CreateObject();
        cJSON_AddStringToObject(op, "op", "copy");
        cJSON_AddStringToObject(op, "from", "/data");
        cJSON_AddStringToObject(op, "path", to);
        cJSON_AddItemToArray(ops, op);
    }
    char err[256];
    ck_assert_int_eq(jsonpatch_apply(&doc, ops, err, sizeof err), JP_INVALID);
    ck_assert_ptr_nonnull(strstr(err, "exceeding the limit 3145728"));
    /* Unchanged on failure. */
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "data")), 1);
    cJSON_Delete(ops);
    cJSON_Delete(doc);
}
END_TEST

/* Adds a chain name/k/k/... of depth levels to doc; returns its pointer. */
static char *deep_chain(cJSON *doc, const char *name, int levels)
{
    cJSON *cur = cJSON_AddObjectToObject(doc, name);
    char *path = malloc(strlen(name) + 2 + (size_t)levels * 2 + 1);
    ck_assert_ptr_nonnull(path);
    sprintf(path, "/%s", name);
    for (int i = 0; i < levels; i++) {
        cur = cJSON_AddObjectToObject(cur, "k");
        strcat(path, "/k");
    }
    return path;
}

static cJSON *one_op(const char *name, const char *from, const char *path)
{
    cJSON *ops = cJSON_CreateArray();
    cJSON *op = cJSON_CreateObject();
    cJSON_AddStringToObject(op, "op", name);
    cJSON_AddStringToObject(op, "from", from);
    cJSON_AddStringToObject(op, "path", path);
    cJSON_AddItemToArray(ops, op);
    return ops;
}

START_TEST(test_json_patch_nesting_and_length_are_bounded)
{
    /* 900 levels, copied under its own deepest point: 1800 > 1000, an
     * object the store could never parse again. */
    cJSON *doc = cJSON_CreateObject();
    char *s = deep_chain(doc, "s", 900);
    char *u = deep_chain(doc, "u", 900);
    char err[256];
    cJSON *ops = one_op("copy", "/s", s);
    ck_assert_int_eq(jsonpatch_apply(&doc, ops, err, sizeof err), JP_INVALID);
    ck_assert_ptr_nonnull(strstr(err, "deeper than 1000"));
    cJSON_Delete(ops);
    /* The same through move: nothing grows, the nesting does. */
    ops = one_op("move", "/s", u);
    ck_assert_int_eq(jsonpatch_apply(&doc, ops, err, sizeof err), JP_INVALID);
    ck_assert_ptr_nonnull(strstr(err, "deeper than 1000"));
    cJSON_Delete(ops);
    /* Within the bound, both work. */
    ops = one_op("copy", "/s/k/k/k/k/k/k/k/k/k/k/k/k/k/k/k/k/k/k/k/k/k/k/k/k/k/k/k/k/k/k", "/t");
    ck_assert_int_eq(jsonpatch_apply(&doc, ops, err, sizeof err), JP_OK);
    cJSON_Delete(ops);
    free(s);
    free(u);
    /* More than 10000 operations: too large (413 at the store). */
    ops = cJSON_CreateArray();
    for (int i = 0; i < JP_OPS_MAX + 1; i++) {
        cJSON *op = cJSON_CreateObject();
        cJSON_AddStringToObject(op, "op", "remove");
        cJSON_AddStringToObject(op, "path", "/t");
        cJSON_AddItemToArray(ops, op);
    }
    ck_assert_int_eq(jsonpatch_apply(&doc, ops, err, sizeof err), JP_TOO_LARGE);
    ck_assert_ptr_nonnull(strstr(err, "maximum operations in a JSON patch is 10000"));
    ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(doc, "t"));
    cJSON_Delete(ops);
    cJSON_Delete(doc);
}
END_TEST

static Suite *store_admit_suite(void)
{
    Suite *s = suite_create("store_admit");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_names_must_be_dns1123);
    tcase_add_test(tc, test_annotations_over_256_kib_are_422);
    tcase_add_test(tc, test_secret_data_must_be_base64);
    tcase_add_test(tc, test_secret_data_decodes_as_go_and_reads_back_canonical);
    tcase_add_test(tc, test_objects_over_etcd_limit_are_413);
    tcase_add_test(tc, test_json_patch_growth_is_bounded);
    tcase_add_test(tc, test_json_patch_doubling_stops_at_the_budget);
    tcase_add_test(tc, test_json_patch_nesting_and_length_are_bounded);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(store_admit_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
