/*
 * test_live_talos.c — Talos intents become the machine-config patch the node
 * expects (core/live/live_talos.c).
 *
 * Hazard: H106 — Talos v1.13 reads registry auth from a RegistryAuthConfig
 * document; a legacy machine.registries.config.<host>.auth patch can look
 * right in a fake and fail live. The default shape is the document (username,
 * password, name = the registry host); the legacy field only behind
 * `talos.auth-shape: legacy`; a password with quotes, newlines or YAML
 * syntax round-trips exactly through a YAML parser.
 */
#include "core/config.h"
#include "core/live/live_config.h"
#include "core/live/live_talos.h"
#include "core/live/live_yaml.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static cJSON *intent(const char *host, const char *user, const char *pass)
{
    cJSON *i = cJSON_CreateObject();
    cJSON *ra = cJSON_AddObjectToObject(i, "registry-auth");
    cJSON_AddStringToObject(ra, "host", host);
    cJSON *a = cJSON_AddObjectToObject(ra, "auth");
    cJSON_AddStringToObject(a, "username", user);
    cJSON_AddStringToObject(a, "password", pass);
    return i;
}

/* Parses YAML text with the project's reader (through a temp file). */
static live_yaml_doc *parse(const char *text)
{
    char path[] = "/tmp/reassert-talos-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    live_yaml_doc *d = NULL;
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(live_yaml_load(path, "patch", &d, &e) == RS_OK, "%s", e.msg);
    unlink(path);
    return d;
}

static const char *str_at(const cJSON *o, const char *k)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

START_TEST(test_document_shape_is_the_default_and_round_trips)
{
    const char *pass = "p\"a'ss: [x] #y\n\tz\\";
    cJSON *i = intent("ghcr.io", "deploy-bot", pass);
    rs_err e;
    rs_err_clear(&e);
    char *text = live_talos_auth_patch(i, RS_TALOS_AUTH_DOCUMENT, &e);
    ck_assert_ptr_nonnull(text);
    live_yaml_doc *d = parse(text);
    const cJSON *root = live_yaml_root(d);
    ck_assert_str_eq(str_at(root, "apiVersion"), "v1alpha1");
    ck_assert_str_eq(str_at(root, "kind"), "RegistryAuthConfig");
    ck_assert_str_eq(str_at(root, "name"), "ghcr.io");
    ck_assert_str_eq(str_at(root, "username"), "deploy-bot");
    ck_assert_str_eq(str_at(root, "password"), pass);
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(root, "machine"));
    live_yaml_free(d);
    free(text);
    cJSON_Delete(i);
    /* The default configuration asks for the document. */
    rs_config c;
    rs_config_defaults(&c);
    ck_assert_int_eq(c.talos_auth_shape, RS_TALOS_AUTH_DOCUMENT);
    rs_config_free(&c);
}
END_TEST

START_TEST(test_legacy_shape_only_on_request)
{
    cJSON *i = intent("ghcr.io", "u", "p");
    rs_err e;
    rs_err_clear(&e);
    char *text = live_talos_auth_patch(i, RS_TALOS_AUTH_LEGACY, &e);
    cJSON *p = cJSON_Parse(text);
    const cJSON *auth = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "machine"),
                                                 "registries"),
                "config"),
            "ghcr.io"),
        "auth");
    ck_assert_str_eq(str_at(auth, "password"), "p");
    cJSON_Delete(p);
    free(text);
    /* A malformed intent is refused, never half-built. */
    cJSON_DeleteItemFromObjectCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(i, "registry-auth"),
                                         "auth"),
        "password");
    ck_assert_ptr_null(live_talos_auth_patch(i, RS_TALOS_AUTH_DOCUMENT, &e));
    ck_assert_int_eq(e.code, RS_DATAERR);
    cJSON_Delete(i);
}
END_TEST

START_TEST(test_auth_shape_config_key)
{
    const char *texts[] = {"talos: {auth-shape: legacy}\n", "talos.auth-shape: documents\n"};
    for (int k = 0; k < 2; k++) {
        char path[] = "/tmp/reassert-shape-XXXXXX";
        int fd = mkstemp(path);
        ck_assert_int_eq(write(fd, texts[k], strlen(texts[k])), (ssize_t)strlen(texts[k]));
        close(fd);
        rs_config c;
        rs_config_defaults(&c);
        rs_err e;
        rs_err_clear(&e);
        rs_code rc = live_config_load(path, &c, &e);
        if (k == 0) {
            ck_assert_msg(rc == RS_OK, "%s", e.msg);
            ck_assert_int_eq(c.talos_auth_shape, RS_TALOS_AUTH_LEGACY);
        } else {
            ck_assert_int_eq(rc, RS_DATAERR);
            ck_assert_ptr_nonnull(strstr(e.msg, ":1:19: talos.auth-shape: expected document"));
        }
        rs_config_free(&c);
        unlink(path);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("live_talos");
    TCase *tc = tcase_create("live_talos");
    tcase_add_test(tc, test_document_shape_is_the_default_and_round_trips);
    tcase_add_test(tc, test_legacy_shape_only_on_request);
    tcase_add_test(tc, test_auth_shape_config_key);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
