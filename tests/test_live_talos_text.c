/*
 * test_live_talos_text.c — reading talosctl's text strictly
 * (core/live/live_talos_text*.c).
 *
 * Hazard: H118 — `talosctl etcd status` has compact and extended output; a
 * healthy compact answer parses as healthy and permits the control-plane
 * reboot, and an unparsable one counts as unhealthy (H85): every layout
 * talosctl prints is read, and every other shape (garbage, a header alone,
 * an empty answer, a misaligned or truncated row, a row for another node,
 * two rows, a column too many) is a failure, never a pass.
 * `etcd alarm list`: empty output and the header alone both mean no alarms.
 * Hazard: H106 — the auth read back from the machine config is the
 * RegistryAuthConfig document (or the legacy field when configured so); a
 * reader-role redaction is an answer of its own, never a credential.
 */
#include "core/live/live_talos_text.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NODE "prod-control-plane-2"

/* What talosctl 1.7+ prints (compact) and what 1.10+ prints (extended),
 * byte for byte as Go's tabwriter aligns them. */
static const char *const compact =
    "NODE                   MEMBER             DB SIZE   IN USE           LEADER             RAFT "
    "INDEX   RAFT TERM   RAFT APPLIED INDEX   LEARNER   ERRORS\n"
    "prod-control-plane-2   6457a4e8ecba5c61   25 MB     18 MB (72.00%)   6457a4e8ecba5c61   "
    "123456       12          123456               false     \n";
static const char *const compact_no_node =
    "MEMBER             DB SIZE   IN USE           LEADER             RAFT INDEX   RAFT TERM   "
    "RAFT APPLIED INDEX   LEARNER   ERRORS\n"
    "6457a4e8ecba5c61   25 MB     18 MB (72.00%)   6457a4e8ecba5c61   123456       12          "
    "123456               false     \n";
static const char *const extended =
    "NODE                   MEMBER             DB SIZE   IN USE           LEADER             RAFT "
    "INDEX   RAFT TERM   RAFT APPLIED INDEX   LEARNER   PROTOCOL   STORAGE   ERRORS\n"
    "prod-control-plane-2   6457a4e8ecba5c61   25 MB     18 MB (72.00%)   6457a4e8ecba5c61   "
    "123456       12          123456               false     3.5.0      3.5.0     \n";

/* Go's tabwriter (minwidth 0, padding 3, ' '): every cell but the last
 * padded to its column's width + 3. rows[r][c], ncols cells a row. */
static char *tabwrite(const char *rows[][12], size_t nrows, size_t ncols)
{
    size_t w[12] = {0};
    for (size_t r = 0; r < nrows; r++)
        for (size_t c = 0; c + 1 < ncols; c++)
            if (strlen(rows[r][c]) > w[c]) w[c] = strlen(rows[r][c]);
    char *out = calloc(1, 8192);
    for (size_t r = 0; r < nrows; r++) {
        for (size_t c = 0; c + 1 < ncols; c++)
            sprintf(out + strlen(out), "%-*s", (int)(w[c] + 3), rows[r][c]);
        sprintf(out + strlen(out), "%s\n", rows[r][ncols - 1]);
    }
    return out;
}

/* An extended table with one row whose leader, learner and errors vary. */
static char *extended_row(const char *member, const char *leader, const char *learner,
                          const char *errors)
{
    const char *rows[2][12] = {{"NODE", "MEMBER", "DB SIZE", "IN USE", "LEADER", "RAFT INDEX",
                                "RAFT TERM", "RAFT APPLIED INDEX", "LEARNER", "PROTOCOL", "STORAGE",
                                "ERRORS"},
                               {NODE, member, "4.1 GB", "1.2 GB (29.27%)", leader, "9", "3", "9",
                                learner, "3.6.0", "3.6.0", errors}};
    return tabwrite(rows, 2, 12);
}

static cJSON *status_ok(const char *text)
{
    cJSON *a = NULL;
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(live_talos_etcd_status_parse(text, strlen(text), NODE, &a, &e) == RS_OK,
                  "refused: %s\n%s", e.msg, text);
    ck_assert_ptr_nonnull(a);
    return a;
}

static void status_refused(const char *text, const char *why)
{
    cJSON *a = NULL;
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(live_talos_etcd_status_parse(text, strlen(text), NODE, &a, &e) == RS_FAILED,
                  "accepted %s:\n%s", why, text);
    ck_assert_ptr_null(a);
    ck_assert_msg(strstr(e.msg, NODE) != NULL, "the error names no node: %s", e.msg);
}

static bool is_true(const cJSON *a, const char *k)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, k));
}

START_TEST(test_every_etcd_status_layout_reads_healthy)
{
    const char *texts[] = {compact, compact_no_node, extended};
    const char *layouts[] = {"compact", "compact", "extended"};
    for (size_t i = 0; i < 3; i++) {
        cJSON *a = status_ok(texts[i]);
        ck_assert(is_true(a, "healthy"));
        ck_assert(!is_true(a, "learner"));
        ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "layout")),
                         layouts[i]);
        cJSON_Delete(a);
    }
    /* No final newline, trailing blank lines: the same answer. */
    char buf[1024];
    snprintf(buf, sizeof buf, "%.*s", (int)strlen(compact) - 1, compact);
    cJSON *a = status_ok(buf);
    ck_assert(is_true(a, "healthy"));
    cJSON_Delete(a);
    snprintf(buf, sizeof buf, "%s\n\n", extended);
    a = status_ok(buf);
    cJSON_Delete(a);
}
END_TEST

START_TEST(test_errors_a_learner_or_no_leader_is_not_healthy)
{
    char *t = extended_row("6457a4e8ecba5c61", "6457a4e8ecba5c61", "false",
                           "etcdserver: mvcc: database space exceeded, alarm:NOSPACE");
    cJSON *a = status_ok(t);
    ck_assert(!is_true(a, "healthy"));
    cJSON_Delete(a);
    free(t);
    t = extended_row("6457a4e8ecba5c61", "0000000000000000", "false", "");
    a = status_ok(t);
    ck_assert(!is_true(a, "healthy"));
    cJSON_Delete(a);
    free(t);
    t = extended_row("6457a4e8ecba5c61", "7d3c4c7e8f9a1b2c", "true", "");
    a = status_ok(t);
    ck_assert(is_true(a, "healthy"));
    ck_assert(is_true(a, "learner"));
    cJSON_Delete(a);
    free(t);
    /* A short member ID (older talosctl printed %x, not %016x). */
    t = extended_row("6457a4e8ecba5c6", "6457a4e8ecba5c6", "false", "");
    a = status_ok(t);
    ck_assert(is_true(a, "healthy"));
    cJSON_Delete(a);
    free(t);
}
END_TEST

START_TEST(test_any_other_etcd_status_shape_is_refused)
{
    status_refused("", "an empty answer");
    status_refused("\n\n", "blank lines");
    /* The header alone: no member answered. */
    char head[512];
    snprintf(head, sizeof head, "%.*s", (int)(strchr(extended, '\n') - extended + 1), extended);
    status_refused(head, "a header without a row");
    status_refused("MEMBER  DB SIZE  ???\n", "the sim's garbled answer (etcd.garbled)");
    status_refused("error: rpc error: code = Unavailable\n", "an error on stdout");
    status_refused("{\"healthy\": true}\n", "JSON");
    /* A row for another node, two rows, a truncated row. */
    char *t = calloc(1, 4096);
    strcpy(t, compact);
    memcpy(strstr(t, "\nprod-control-plane-2") + 1, "prod-control-plane-3", 20);
    status_refused(t, "a row for another node");
    strcpy(t, extended);
    strcat(t, strchr(extended, '\n') + 1);
    status_refused(t, "two rows");
    snprintf(t, 4096, "%.*s", (int)(strstr(compact, "123456       12") - compact), compact);
    status_refused(t, "a row cut before RAFT INDEX");
    /* Cells shifted by one column (a space lost), a tab, a CR. */
    strcpy(t, compact);
    char *cell = strstr(t, "25 MB     ");
    memmove(cell, cell + 1, strlen(cell));
    status_refused(t, "a misaligned row");
    strcpy(t, compact);
    *strstr(t, "   25 MB") = '\t';
    status_refused(t, "a tab");
    strcpy(t, compact);
    *strchr(t, '\n') = '\r';
    status_refused(t, "a CR");
    /* Grammar per cell: DB SIZE, IN USE, LEARNER, RAFT, a member ID. */
    const char *bad[][2] = {{"25 MB     ", "25 XB     "},
                            {"18 MB (72.00%)", "18 MB (72.0%) "},
                            {"false     \n", "no        \n"},
                            {"123456       12", "12345x       12"},
                            {"6457a4e8ecba5c61   25", "6457A4E8ECBA5C61   25"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        strcpy(t, compact);
        char *at = strstr(strchr(t, '\n'), bad[i][0]);
        ck_assert_ptr_nonnull(at);
        memcpy(at, bad[i][1], strlen(bad[i][1]));
        status_refused(t, bad[i][1]);
    }
    /* A column this version does not know, and a renamed one. */
    strcpy(t, extended);
    char *err = strstr(t, "ERRORS");
    memcpy(err, "ALARMS", 6);
    status_refused(t, "an unknown column");
    free(t);
    const char *rows[2][12] = {{"NODE", "MEMBER", "DB SIZE", "IN USE", "LEADER", "RAFT INDEX",
                                "RAFT TERM", "LEARNER", "ERRORS"},
                               {NODE, "6457a4e8ecba5c61", "25 MB", "18 MB (72.00%)",
                                "6457a4e8ecba5c61", "1", "1", "false", ""}};
    char *old = tabwrite(rows, 2, 9);
    status_refused(old, "a layout without RAFT APPLIED INDEX");
    free(old);
}
END_TEST

static cJSON *alarms_of(const char *text, rs_code want)
{
    cJSON *a = NULL;
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(live_talos_etcd_alarms_parse(text, strlen(text), NODE, &a, &e) == want, "%s: %s",
                  text, e.msg);
    return a;
}

START_TEST(test_alarm_list_empty_or_header_only_means_no_alarms)
{
    const char *none[] = {"", "\n", "NODE                   MEMBER             ALARM\n",
                          "MEMBER   ALARM\n"};
    for (size_t i = 0; i < 4; i++) {
        cJSON *a = alarms_of(none[i], RS_OK);
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(a, "alarms");
        ck_assert(cJSON_IsArray(list));
        ck_assert_int_eq(cJSON_GetArraySize(list), 0);
        cJSON_Delete(a);
    }
    cJSON *a = alarms_of("NODE                   MEMBER             ALARM\n"
                         "prod-control-plane-2   6457a4e8ecba5c61   NOSPACE\n"
                         "prod-control-plane-2   7d3c4c7e8f9a1b2c   CORRUPT\n",
                         RS_OK);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(a, "alarms");
    ck_assert_int_eq(cJSON_GetArraySize(list), 2);
    ck_assert_str_eq(cJSON_GetStringValue(
                         cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(list, 0), "alarm")),
                     "NOSPACE");
    cJSON_Delete(a);
}
END_TEST

START_TEST(test_alarm_list_of_another_shape_is_refused)
{
    const char *bad[] = {
        "garbage\n",
        "NODE   MEMBER   ALARMS\n",
        "NODE                   MEMBER             ALARM\n"
        "prod-control-plane-2   6457a4e8ecba5c61   NOSPAC\n",
        "NODE                   MEMBER             ALARM\n"
        "prod-control-plane-3   6457a4e8ecba5c61   NOSPACE\n",
        "NODE                   MEMBER             ALARM\n"
        "prod-control-plane-2   not-a-member-id    NOSPACE\n",
        "prod-control-plane-2   6457a4e8ecba5c61   NOSPACE\n",
        "NODE                   MEMBER             ALARM\n\x01\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cJSON *a = alarms_of(bad[i], RS_FAILED);
        ck_assert_ptr_null(a);
    }
}
END_TEST

static cJSON *auth_of(const char *text, rs_talos_auth_shape shape, rs_code want)
{
    cJSON *a = NULL;
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(live_talos_auth_parse(text, strlen(text), "ghcr.io", shape, &a, &e) == want,
                  "%s: %s", text, e.msg);
    if (want != RS_OK) ck_assert_ptr_null(a);
    return a;
}

static const char *auth_field(const cJSON *a, const char *k)
{
    return cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(a, "auth"), k));
}

START_TEST(test_registry_auth_read_back_in_each_shape)
{
    const char *doc = "version: v1alpha1\nmachine:\n    type: worker\n---\n"
                      "apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: quay.io\n"
                      "username: other\npassword: other-pass\n---\n"
                      "apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: \"ghcr.io\"\n"
                      "username: \"deploy-bot\"\npassword: \"p: \\\"q\\\" #x\"\n";
    cJSON *a = auth_of(doc, RS_TALOS_AUTH_DOCUMENT, RS_OK);
    ck_assert_str_eq(auth_field(a, "username"), "deploy-bot");
    ck_assert_str_eq(auth_field(a, "password"), "p: \"q\" #x");
    cJSON_Delete(a);
    /* The document shape configured, only the legacy field present: no auth
     * (the caller answers 404), and the reverse. */
    const char *legacy = "version: v1alpha1\nmachine:\n  registries:\n    config:\n"
                         "      ghcr.io:\n        auth:\n          username: deploy-bot\n"
                         "          password: tok\n";
    ck_assert_ptr_null(auth_of(legacy, RS_TALOS_AUTH_DOCUMENT, RS_OK));
    ck_assert_ptr_null(auth_of(doc, RS_TALOS_AUTH_LEGACY, RS_OK));
    a = auth_of(legacy, RS_TALOS_AUTH_LEGACY, RS_OK);
    ck_assert_str_eq(auth_field(a, "password"), "tok");
    cJSON_Delete(a);
    /* auth: base64("user:pass"). */
    a = auth_of("apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\n"
                "auth: ZGVwbG95LWJvdDp0b2s6d2l0aDpjb2xvbnM=\n",
                RS_TALOS_AUTH_DOCUMENT, RS_OK);
    ck_assert_str_eq(auth_field(a, "username"), "deploy-bot");
    ck_assert_str_eq(auth_field(a, "password"), "tok:with:colons");
    cJSON_Delete(a);
    /* A reader role sees "******": redacted, not a credential. */
    a = auth_of("apiVersion: v1alpha1\nkind: RegistryAuthConfig\nname: ghcr.io\n"
                "username: deploy-bot\npassword: '******'\n",
                RS_TALOS_AUTH_DOCUMENT, RS_OK);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "redacted")));
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(a, "auth"));
    cJSON_Delete(a);
    /* No document for the host at all. */
    ck_assert_ptr_null(auth_of("version: v1alpha1\n", RS_TALOS_AUTH_DOCUMENT, RS_OK));
}
END_TEST

START_TEST(test_an_unreadable_machine_config_is_refused)
{
    const char *bad[] = {
        /* not YAML */
        "kind: [RegistryAuthConfig\n",
        /* two documents for the host */
        "kind: RegistryAuthConfig\nname: ghcr.io\nusername: a\npassword: b\n---\n"
        "kind: RegistryAuthConfig\nname: ghcr.io\nusername: c\npassword: d\n",
        /* a duplicate key */
        "kind: RegistryAuthConfig\nname: ghcr.io\nusername: a\npassword: b\npassword: c\n",
        /* neither username/password nor auth, or a non-scalar password */
        "kind: RegistryAuthConfig\nname: ghcr.io\nusername: a\n",
        "kind: RegistryAuthConfig\nname: ghcr.io\nusername: a\npassword: [b]\n",
        /* auth that is not base64 of user:pass */
        "kind: RegistryAuthConfig\nname: ghcr.io\nauth: bm9jb2xvbg==\n",
        "kind: RegistryAuthConfig\nname: ghcr.io\nauth: '***not base64'\n",
        /* bytes that are not UTF-8 (in a directive they hang libfyaml 0.7) */
        "%YAML\xff\n",
        "kind: RegistryAuthConfig\nname: ghcr.io\nusername: a\npassword: \xc3\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        auth_of(bad[i], RS_TALOS_AUTH_DOCUMENT, RS_FAILED);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("live_talos_text");
    TCase *tc = tcase_create("text");
    tcase_add_test(tc, test_every_etcd_status_layout_reads_healthy);
    tcase_add_test(tc, test_errors_a_learner_or_no_leader_is_not_healthy);
    tcase_add_test(tc, test_any_other_etcd_status_shape_is_refused);
    tcase_add_test(tc, test_alarm_list_empty_or_header_only_means_no_alarms);
    tcase_add_test(tc, test_alarm_list_of_another_shape_is_refused);
    tcase_add_test(tc, test_registry_auth_read_back_in_each_shape);
    tcase_add_test(tc, test_an_unreadable_machine_config_is_refused);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
