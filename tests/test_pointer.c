/*
 * test_pointer.c — the one RFC 6901 escaper (core/kube/kube_pointer): an
 * annotation key holding '/' or '~' becomes one reference token, '~' is
 * escaped before '/' so "~1" in a key does not decode to '/', and the decoder
 * inverts the escaper and refuses malformed escapes.
 */
#include "core/kube/kube_pointer.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

START_TEST(test_pointer_escapes_slash_and_tilde_in_annotation_keys)
{
    char *p = kube_pointer_annotation("kubectl.kubernetes.io/restartedAt");
    ck_assert_str_eq(p, "/metadata/annotations/kubectl.kubernetes.io~1restartedAt");
    free(p);
    p = kube_pointer_annotation("a~b/c");
    ck_assert_str_eq(p, "/metadata/annotations/a~0b~1c");
    free(p);
    p = kube_pointer_join("/data/", ".dockerconfigjson");
    ck_assert_str_eq(p, "/data/.dockerconfigjson");
    free(p);
}
END_TEST

START_TEST(test_pointer_escapes_tilde_before_slash)
{
    /* A key spelled "~1" must stay "~1" after a round trip, never become "/". */
    char *p = kube_pointer_join("/", "~1");
    ck_assert_str_eq(p, "/~01");
    char buf[16];
    ck_assert(kube_pointer_token_decode(p + 1, strlen(p + 1), buf, sizeof buf));
    ck_assert_str_eq(buf, "~1");
    free(p);
}
END_TEST

START_TEST(test_pointer_decoder_inverts_the_escaper)
{
    const char *keys[] = {"", "plain", "a/b", "a~b", "/~/~~//", "platform.devantler.tech/x-v2"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char *p = kube_pointer_join("", keys[i]);
        char buf[64];
        ck_assert_msg(kube_pointer_token_decode(p, strlen(p), buf, sizeof buf), "key %s", keys[i]);
        ck_assert_str_eq(buf, keys[i]);
        ck_assert_ptr_null(strchr(p, '/'));
        free(p);
    }
}
END_TEST

START_TEST(test_pointer_decoder_refuses_malformed_escapes_and_overflow)
{
    char buf[8];
    ck_assert(!kube_pointer_token_decode("a~", 2, buf, sizeof buf));
    ck_assert(!kube_pointer_token_decode("a~2", 3, buf, sizeof buf));
    ck_assert(!kube_pointer_token_decode("~a", 2, buf, sizeof buf));
    ck_assert(!kube_pointer_token_decode("12345678", 8, buf, sizeof buf));
    ck_assert(kube_pointer_token_decode("1234567", 7, buf, sizeof buf));
    ck_assert_str_eq(buf, "1234567");
    /* Only len bytes are decoded: the rest of a longer pointer is not. */
    ck_assert(kube_pointer_token_decode("a~1b/c", 4, buf, sizeof buf));
    ck_assert_str_eq(buf, "a/b");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pointer");
    TCase *tc = tcase_create("pointer");
    tcase_add_test(tc, test_pointer_escapes_slash_and_tilde_in_annotation_keys);
    tcase_add_test(tc, test_pointer_escapes_tilde_before_slash);
    tcase_add_test(tc, test_pointer_decoder_inverts_the_escaper);
    tcase_add_test(tc, test_pointer_decoder_refuses_malformed_escapes_and_overflow);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
