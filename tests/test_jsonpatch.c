/*
 * test_jsonpatch.c — RFC 6902 JSON Patch and RFC 7386 merge patch vectors.
 *
 * The vectors are the RFCs' own appendices, so a disagreement with them is a
 * bug here, not a matter of taste; the extra cases pin what the store leans
 * on: atomicity, `~0`/`~1` escapes in annotation keys, and order-insensitive
 * `test`.
 */
#include "sim/store/jsonpatch.h"

#include <check.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static cJSON *parse(const char *text)
{
    cJSON *j = cJSON_Parse(text);
    ck_assert_msg(j != NULL, "test vector does not parse: %s", text);
    return j;
}

/* One JSON Patch vector: expect == NULL means the patch must fail with want. */
typedef struct jp_vector {
    const char *name;
    const char *doc;
    const char *patch;
    const char *expect;
    jp_result want;
} jp_vector;

static const jp_vector rfc6902_vectors[] = {
    {"A.1 adding an object member", "{\"foo\":\"bar\"}",
     "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\"}]", "{\"baz\":\"qux\",\"foo\":\"bar\"}",
     JP_OK},
    {"A.2 adding an array element", "{\"foo\":[\"bar\",\"baz\"]}",
     "[{\"op\":\"add\",\"path\":\"/foo/1\",\"value\":\"qux\"}]",
     "{\"foo\":[\"bar\",\"qux\",\"baz\"]}", JP_OK},
    {"A.3 removing an object member", "{\"baz\":\"qux\",\"foo\":\"bar\"}",
     "[{\"op\":\"remove\",\"path\":\"/baz\"}]", "{\"foo\":\"bar\"}", JP_OK},
    {"A.4 removing an array element", "{\"foo\":[\"bar\",\"qux\",\"baz\"]}",
     "[{\"op\":\"remove\",\"path\":\"/foo/1\"}]", "{\"foo\":[\"bar\",\"baz\"]}", JP_OK},
    {"A.5 replacing a value", "{\"baz\":\"qux\",\"foo\":\"bar\"}",
     "[{\"op\":\"replace\",\"path\":\"/baz\",\"value\":\"boo\"}]",
     "{\"baz\":\"boo\",\"foo\":\"bar\"}", JP_OK},
    {"A.6 moving a value",
     "{\"foo\":{\"bar\":\"baz\",\"waldo\":\"fred\"},\"qux\":{\"corge\":\"grault\"}}",
     "[{\"op\":\"move\",\"from\":\"/foo/waldo\",\"path\":\"/qux/thud\"}]",
     "{\"foo\":{\"bar\":\"baz\"},\"qux\":{\"corge\":\"grault\",\"thud\":\"fred\"}}", JP_OK},
    {"A.7 moving an array element", "{\"foo\":[\"all\",\"grass\",\"cows\",\"eat\"]}",
     "[{\"op\":\"move\",\"from\":\"/foo/1\",\"path\":\"/foo/3\"}]",
     "{\"foo\":[\"all\",\"cows\",\"eat\",\"grass\"]}", JP_OK},
    {"A.8 testing a value: success", "{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}",
     "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"qux\"},"
     "{\"op\":\"test\",\"path\":\"/foo/1\",\"value\":2}]",
     "{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}", JP_OK},
    {"A.9 testing a value: error", "{\"baz\":\"qux\"}",
     "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"bar\"}]", NULL, JP_TEST_FAILED},
    {"A.10 adding a nested member object", "{\"foo\":\"bar\"}",
     "[{\"op\":\"add\",\"path\":\"/child\",\"value\":{\"grandchild\":{}}}]",
     "{\"foo\":\"bar\",\"child\":{\"grandchild\":{}}}", JP_OK},
    {"A.11 ignoring unrecognized elements", "{\"foo\":\"bar\"}",
     "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\",\"xyz\":123}]",
     "{\"foo\":\"bar\",\"baz\":\"qux\"}", JP_OK},
    {"A.12 adding to a nonexistent target", "{\"foo\":\"bar\"}",
     "[{\"op\":\"add\",\"path\":\"/baz/bat\",\"value\":\"qux\"}]", NULL, JP_INVALID},
    {"A.13 invalid JSON patch document", "{\"foo\":\"bar\"}",
     "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\",\"op\":\"remove\"}]", NULL, JP_INVALID},
    {"A.14 ~ escape ordering", "{\"/\":9,\"~1\":10}",
     "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":10}]", "{\"/\":9,\"~1\":10}", JP_OK},
    {"A.15 comparing strings and numbers", "{\"/\":9,\"~1\":10}",
     "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":\"10\"}]", NULL, JP_TEST_FAILED},
    {"A.16 adding an array value", "{\"foo\":[\"bar\"]}",
     "[{\"op\":\"add\",\"path\":\"/foo/-\",\"value\":[\"abc\",\"def\"]}]",
     "{\"foo\":[\"bar\",[\"abc\",\"def\"]]}", JP_OK},
    /* Beyond the appendix: what the store and the core rely on. */
    {"~1 escape reaches an annotation key with a slash",
     "{\"a\":{\"kubectl.kubernetes.io/restartedAt\":\"t0\"}}",
     "[{\"op\":\"replace\",\"path\":\"/a/kubectl.kubernetes.io~1restartedAt\",\"value\":\"t1\"}]",
     "{\"a\":{\"kubectl.kubernetes.io/restartedAt\":\"t1\"}}", JP_OK},
    {"~0 escape reaches a key with a tilde", "{\"m~n\":1}",
     "[{\"op\":\"remove\",\"path\":\"/m~0n\"}]", "{}", JP_OK},
    {"malformed ~ escape is invalid", "{\"a\":1}",
     "[{\"op\":\"add\",\"path\":\"/a~2\",\"value\":1}]", NULL, JP_INVALID},
    {"add at - appends", "{\"a\":[1]}", "[{\"op\":\"add\",\"path\":\"/a/-\",\"value\":2}]",
     "{\"a\":[1,2]}", JP_OK},
    {"add at index == length appends", "{\"a\":[1]}",
     "[{\"op\":\"add\",\"path\":\"/a/1\",\"value\":2}]", "{\"a\":[1,2]}", JP_OK},
    {"add past the end is invalid", "{\"a\":[1]}",
     "[{\"op\":\"add\",\"path\":\"/a/2\",\"value\":2}]", NULL, JP_INVALID},
    {"leading-zero index is invalid", "{\"a\":[1,2]}", "[{\"op\":\"remove\",\"path\":\"/a/01\"}]",
     NULL, JP_INVALID},
    {"remove of a missing member is invalid", "{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"/b\"}]",
     NULL, JP_INVALID},
    {"replace of a missing member is invalid", "{\"a\":1}",
     "[{\"op\":\"replace\",\"path\":\"/b\",\"value\":2}]", NULL, JP_INVALID},
    {"replace of an array element", "{\"a\":[1,2,3]}",
     "[{\"op\":\"replace\",\"path\":\"/a/1\",\"value\":9}]", "{\"a\":[1,9,3]}", JP_OK},
    {"replace of the root", "{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"\",\"value\":[1]}]",
     "[1]", JP_OK},
    {"add at the root replaces the document", "{\"a\":1}",
     "[{\"op\":\"add\",\"path\":\"\",\"value\":{\"b\":2}}]", "{\"b\":2}", JP_OK},
    {"copy duplicates a subtree", "{\"a\":{\"x\":[1]},\"b\":{}}",
     "[{\"op\":\"copy\",\"from\":\"/a/x\",\"path\":\"/b/y\"}]",
     "{\"a\":{\"x\":[1]},\"b\":{\"y\":[1]}}", JP_OK},
    {"copy from a missing path is invalid", "{\"a\":1}",
     "[{\"op\":\"copy\",\"from\":\"/z\",\"path\":\"/b\"}]", NULL, JP_INVALID},
    {"move into its own child is invalid", "{\"a\":{\"b\":{}}}",
     "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a/b/c\"}]", NULL, JP_INVALID},
    {"move onto itself is a no-op", "{\"a\":1}",
     "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a\"}]", "{\"a\":1}", JP_OK},
    {"test ignores object member order", "{\"a\":{\"x\":1,\"y\":[true,null]}}",
     "[{\"op\":\"test\",\"path\":\"/a\",\"value\":{\"y\":[true,null],\"x\":1}}]",
     "{\"a\":{\"x\":1,\"y\":[true,null]}}", JP_OK},
    {"test compares numbers by value", "{\"a\":1}",
     "[{\"op\":\"test\",\"path\":\"/a\",\"value\":1.0}]", "{\"a\":1}", JP_OK},
    {"test sees array order", "{\"a\":[1,2]}",
     "[{\"op\":\"test\",\"path\":\"/a\",\"value\":[2,1]}]", NULL, JP_TEST_FAILED},
    {"test sees an extra member", "{\"a\":{\"x\":1}}",
     "[{\"op\":\"test\",\"path\":\"/a\",\"value\":{\"x\":1,\"y\":2}}]", NULL, JP_TEST_FAILED},
    {"test of a missing path fails", "{\"a\":1}", "[{\"op\":\"test\",\"path\":\"/b\",\"value\":1}]",
     NULL, JP_TEST_FAILED},
    {"unknown op is invalid", "{\"a\":1}", "[{\"op\":\"frobnicate\",\"path\":\"/a\"}]", NULL,
     JP_INVALID},
    {"add without value is invalid", "{\"a\":1}", "[{\"op\":\"add\",\"path\":\"/b\"}]", NULL,
     JP_INVALID},
    {"add with a null value is valid", "{\"a\":1}",
     "[{\"op\":\"add\",\"path\":\"/b\",\"value\":null}]", "{\"a\":1,\"b\":null}", JP_OK},
    {"op without path is invalid", "{\"a\":1}", "[{\"op\":\"remove\"}]", NULL, JP_INVALID},
    {"path not starting with / is invalid", "{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"a\"}]",
     NULL, JP_INVALID},
    {"operation that is not an object is invalid", "{\"a\":1}", "[1]", NULL, JP_INVALID},
    {"patch that is not an array is invalid", "{\"a\":1}", "{\"op\":\"remove\"}", NULL, JP_INVALID},
    {"empty patch changes nothing", "{\"a\":1}", "[]", "{\"a\":1}", JP_OK},
};

START_TEST(test_rfc6902_vector)
{
    const jp_vector *v = &rfc6902_vectors[_i];
    cJSON *doc = parse(v->doc);
    cJSON *patch = parse(v->patch);
    cJSON *before = cJSON_Duplicate(doc, true);
    char err[256] = "untouched";
    jp_result r = jsonpatch_apply(&doc, patch, err, sizeof err);
    ck_assert_msg(r == v->want, "%s: got result %d, want %d (%s)", v->name, r, v->want, err);
    if (v->expect) {
        cJSON *want = parse(v->expect);
        char *got = cJSON_PrintUnformatted(doc);
        ck_assert_msg(cJSON_Compare(doc, want, true), "%s: got %s, want %s", v->name, got,
                      v->expect);
        free(got);
        cJSON_Delete(want);
    } else {
        ck_assert_msg(cJSON_Compare(doc, before, true), "%s: failed patch changed the doc",
                      v->name);
        ck_assert_msg(strlen(err) > 10 && strcmp(err, "untouched") != 0, "%s: no error sentence",
                      v->name);
    }
    cJSON_Delete(before);
    cJSON_Delete(patch);
    cJSON_Delete(doc);
}
END_TEST

START_TEST(test_failed_patch_is_atomic_and_names_op_and_path)
{
    cJSON *doc = parse("{\"spec\":{\"suspend\":false},\"n\":[1]}");
    cJSON *orig = doc;
    cJSON *patch =
        parse("[{\"op\":\"replace\",\"path\":\"/spec/suspend\",\"value\":true},"
              "{\"op\":\"add\",\"path\":\"/n/-\",\"value\":2},"
              "{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\"7\"}]");
    char err[256];
    ck_assert_int_eq(jsonpatch_apply(&doc, patch, err, sizeof err), JP_TEST_FAILED);
    ck_assert_ptr_eq(doc, orig);
    cJSON *want = parse("{\"spec\":{\"suspend\":false},\"n\":[1]}");
    ck_assert(cJSON_Compare(doc, want, true));
    ck_assert_ptr_nonnull(strstr(err, "operation 2"));
    ck_assert_ptr_nonnull(strstr(err, "/metadata/resourceVersion"));
    ck_assert_ptr_nonnull(strstr(err, "test"));
    cJSON_Delete(want);
    cJSON_Delete(patch);
    cJSON_Delete(doc);
}
END_TEST

START_TEST(test_invalid_patch_error_names_index_and_path)
{
    cJSON *doc = parse("{\"a\":1}");
    cJSON *patch = parse("[{\"op\":\"test\",\"path\":\"/a\",\"value\":1},"
                         "{\"op\":\"remove\",\"path\":\"/nope/x\"}]");
    char err[256];
    ck_assert_int_eq(jsonpatch_apply(&doc, patch, err, sizeof err), JP_INVALID);
    ck_assert_ptr_nonnull(strstr(err, "operation 1 (remove)"));
    ck_assert_ptr_nonnull(strstr(err, "\"/nope/x\""));
    /* A NULL err buffer is allowed. */
    ck_assert_int_eq(jsonpatch_apply(&doc, patch, NULL, 0), JP_INVALID);
    cJSON_Delete(patch);
    cJSON_Delete(doc);
}
END_TEST

START_TEST(test_jsonpointer_get_escapes_and_root)
{
    cJSON *doc = parse("{\"a/b\":{\"c~d\":[10,20]},\"\":5}");
    ck_assert_ptr_eq(jsonpointer_get(doc, ""), doc);
    ck_assert_int_eq(jsonpointer_get(doc, "/a~1b/c~0d/1")->valueint, 20);
    ck_assert_int_eq(jsonpointer_get(doc, "/")->valueint, 5);
    ck_assert_ptr_null(jsonpointer_get(doc, "/a~1b/c~0d/2"));
    ck_assert_ptr_null(jsonpointer_get(doc, "a"));
    cJSON_Delete(doc);
}
END_TEST

/* RFC 7386 Appendix A, in order, plus the §3 example. */
typedef struct mp_vector {
    const char *target;
    const char *patch;
    const char *expect;
} mp_vector;

static const mp_vector rfc7386_vectors[] = {
    {"{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}"},
    {"{\"a\":\"b\"}", "{\"b\":\"c\"}", "{\"a\":\"b\",\"b\":\"c\"}"},
    {"{\"a\":\"b\"}", "{\"a\":null}", "{}"},
    {"{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}", "{\"b\":\"c\"}"},
    {"{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}"},
    {"{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}"},
    {"{\"a\":{\"b\":\"c\"}}", "{\"a\":{\"b\":\"d\",\"c\":null}}", "{\"a\":{\"b\":\"d\"}}"},
    {"{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", "{\"a\":[1]}"},
    {"[\"a\",\"b\"]", "[\"c\",\"d\"]", "[\"c\",\"d\"]"},
    {"{\"a\":\"b\"}", "[\"c\"]", "[\"c\"]"},
    {"{\"a\":\"foo\"}", "null", "null"},
    {"{\"a\":\"foo\"}", "\"bar\"", "\"bar\""},
    {"{\"e\":null}", "{\"a\":1}", "{\"e\":null,\"a\":1}"},
    {"[1,2]", "{\"a\":\"b\",\"c\":null}", "{\"a\":\"b\"}"},
    {"{}", "{\"a\":{\"bb\":{\"ccc\":null}}}", "{\"a\":{\"bb\":{}}}"},
    /* §3 example */
    {"{\"title\":\"Goodbye!\",\"author\":{\"givenName\":\"John\",\"familyName\":\"Doe\"},"
     "\"tags\":[\"example\",\"sample\"],\"content\":\"This will be unchanged\"}",
     "{\"title\":\"Hello!\",\"phoneNumber\":\"+01-123-456-7890\",\"author\":{\"familyName\":null},"
     "\"tags\":[\"example\"]}",
     "{\"title\":\"Hello!\",\"author\":{\"givenName\":\"John\"},\"tags\":[\"example\"],"
     "\"content\":\"This will be unchanged\",\"phoneNumber\":\"+01-123-456-7890\"}"},
    /* Beyond the RFC: deep nesting and a repeated key must stay memory-safe. */
    {"{\"m\":{\"labels\":{\"x\":\"1\"}}}",
     "{\"m\":{\"labels\":{\"y\":\"2\",\"x\":null},\"a\":{\"b\":{\"c\":{}}}}}",
     "{\"m\":{\"labels\":{\"y\":\"2\"},\"a\":{\"b\":{\"c\":{}}}}}"},
    {"{\"a\":{\"k\":1}}", "{\"a\":{\"q\":{\"z\":1}},\"a\":5}", "{\"a\":{\"q\":{\"z\":1}}}"},
};

START_TEST(test_rfc7386_vector)
{
    const mp_vector *v = &rfc7386_vectors[_i];
    cJSON *target = parse(v->target);
    cJSON *patch = parse(v->patch);
    cJSON *want = parse(v->expect);
    cJSON *got = mergepatch_apply(target, patch);
    char *text = cJSON_PrintUnformatted(got);
    ck_assert_msg(cJSON_Compare(got, want, true), "vector %d: got %s, want %s", _i, text,
                  v->expect);
    free(text);
    cJSON_Delete(got);
    cJSON_Delete(want);
    cJSON_Delete(patch);
}
END_TEST

static Suite *jsonpatch_suite(void)
{
    Suite *s = suite_create("jsonpatch");
    TCase *tc = tcase_create("rfc6902");
    tcase_add_loop_test(tc, test_rfc6902_vector, 0,
                        (int)(sizeof rfc6902_vectors / sizeof rfc6902_vectors[0]));
    tcase_add_test(tc, test_failed_patch_is_atomic_and_names_op_and_path);
    tcase_add_test(tc, test_invalid_patch_error_names_index_and_path);
    tcase_add_test(tc, test_jsonpointer_get_escapes_and_root);
    suite_add_tcase(s, tc);
    TCase *mp = tcase_create("rfc7386");
    tcase_add_loop_test(mp, test_rfc7386_vector, 0,
                        (int)(sizeof rfc7386_vectors / sizeof rfc7386_vectors[0]));
    suite_add_tcase(s, mp);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(jsonpatch_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
