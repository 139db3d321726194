/*
 * test_config.c — `--config FILE`: every key applies, an unknown key or a bad
 * value names file:line:column, and a failed load changes nothing.
 */
#include "core/config.h"
#include "core/live/live_config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *write_tmp_n(const char *text, size_t n)
{
    char *path = strdup("/tmp/reassert-config-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, n), (ssize_t)n);
    close(fd);
    return path;
}

static char *write_tmp(const char *text)
{
    return write_tmp_n(text, strlen(text));
}

START_TEST(test_config_keys_apply_nested_and_dotted)
{
    char *p = write_tmp("fanout-namespaces: [a, b]\n"
                        "lease: {name: l2, duration-s: 90}\n"
                        "sync.attempts: 7\n"
                        "sync:\n  interval-s: 3\n"
                        "drain-timeout: 10m\n"
                        "operator-image: ghcr.io/x/y:1\n"
                        "required-pull-targets: [x/y:1]\n"
                        "openbao: {path: p/q}\n");
    rs_config c;
    rs_config_defaults(&c);
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(live_config_load(p, &c, &e) == RS_OK, "%s", e.msg);
    ck_assert_uint_eq(c.n_fanout, 2);
    ck_assert_str_eq(c.fanout_namespaces[1], "b");
    ck_assert_str_eq(c.lease_name, "l2");
    ck_assert_int_eq(c.lease_duration_s, 90);
    ck_assert_int_eq(c.sync_attempts, 7);
    ck_assert_int_eq(c.sync_interval_ms, 3000);
    ck_assert_int_eq(c.drain_timeout_ms, 600000);
    ck_assert_str_eq(c.operator_image, "ghcr.io/x/y:1");
    ck_assert_uint_eq(c.n_pull_targets, 1);
    ck_assert_str_eq(c.openbao_path, "p/q");
    ck_assert_str_eq(c.openbao_mount, "secret");
    rs_config_free(&c);
    unlink(p);
    free(p);
}
END_TEST

static void expect_error_n(const char *text, size_t n, const char *suffix)
{
    char *p = write_tmp_n(text, n);
    rs_config c;
    rs_config_defaults(&c);
    rs_err e;
    rs_err_clear(&e);
    ck_assert_int_eq(live_config_load(p, &c, &e), RS_DATAERR);
    ck_assert_msg(strncmp(e.msg, p, strlen(p)) == 0 && strstr(e.msg, suffix), "got: %s", e.msg);
    /* Nothing half-applied. */
    ck_assert_int_eq(c.sync_attempts, 60);
    ck_assert_str_eq(c.lease_name, "ghcr-auth-refresh");
    rs_config_free(&c);
    unlink(p);
    free(p);
}

static void expect_error(const char *text, const char *suffix)
{
    expect_error_n(text, strlen(text), suffix);
}

START_TEST(test_config_errors_name_line_column_and_key)
{
    expect_error("sync.attempts: 9\nbogus: 1\n", ":2:1: bogus: unknown configuration key");
    expect_error("lease:\n  name: x\n  colour: red\n",
                 ":3:3: lease.colour: unknown configuration key");
    expect_error("sync.attempts: 9\nsync: {attempts: zero}\n",
                 ":2:18: sync.attempts: expected a positive integer");
    expect_error("drain-timeout: 45 minutes\n", ":1:16: drain-timeout: expected a duration");
    expect_error("fanout-namespaces: []\n", ":1:20: fanout-namespaces: expected a non-empty list");
    expect_error("sync: [1\n", ":");
}
END_TEST

/* Hazard: H140 — a drain timeout that is not a plain duration is refused.
 * Hazard: H141 — fewer than 2 sync attempts; H142 — fewer than 3 Talos
 * convergence attempts (refused, never clamped); H143 — a heartbeat at or
 * above the Lease duration. DESIGN §3 r2: names are DNS labels/subdomains,
 * lists have no duplicates, a key given twice (dotted and nested) is an
 * error. Each is exit 65 naming file:line:column and the key. */
START_TEST(test_config_values_are_refused_never_clamped)
{
    expect_error("drain-timeout: 45m --disable-eviction\n",
                 ":1:16: drain-timeout: expected a duration");
    expect_error("sync:\n  attempts: 1\n", ":2:3: sync.attempts: must be at least 2");
    expect_error("sync.attempts: 2\n", ":1:1: sync.attempts: Talos convergence attempts default");
    expect_error("sync.attempts: 2\ntalos: {convergence-attempts: 2}\n",
                 ":2:9: talos.convergence-attempts: must be at least 3");
    expect_error("lease: {heartbeat-s: 120}\n", ":1:9: lease.heartbeat-s: the heartbeat (120 s)");
    expect_error("lease: {duration-s: 30}\n", ":1:9: lease.duration-s: the heartbeat (30 s)");
    expect_error("lease.name: Ghcr_Lease\n", ":1:13: lease.name: expected a DNS subdomain");
    expect_error("parent.namespace: flux.system\n",
                 ":1:19: parent.namespace: expected a DNS label");
    expect_error("fanout-namespaces: [a, b, a]\n",
                 ":1:27: fanout-namespaces: a value is listed twice");
    expect_error("fanout-namespaces: [a, B]\n", ":1:24: fanout-namespaces: expected a DNS label");
    expect_error("lease.name: l1\nlease: {name: l2}\n", ":2:9: lease.name: given twice");
    /* The registry proof's targets are checked at load, naming
     * file:line:column like every other key (H138: the operator image is
     * proved on the credential's own registry). */
    expect_error("operator-image: quay.io/x/y:1\n",
                 ":1:1: operator-image: operator-image quay.io/x/y:1 is not on the registry "
                 "ghcr.io");
    expect_error(
        "sync.attempts: 3\noperator-image: ghcr.io/x/y\n",
        ":2:1: operator-image: operator-image ghcr.io/x/y is not <registry-host>/repo:ref");
    expect_error(
        "registry-host: quay.io\n",
        ":1:1: registry-host: operator-image ghcr.io/devantler-tech/ksail:v7.178.30 is not "
        "on the registry quay.io");
    expect_error("required-pull-targets: [x/y:1, x/y]\n",
                 ":1:1: required-pull-targets: required pull target x/y is not repo:ref");
}
END_TEST

START_TEST(test_config_talos_attempts_apply)
{
    char *p = write_tmp("sync.attempts: 2\ntalos.convergence-attempts: 4\nlease.name: a.b-c\n");
    rs_config c;
    rs_config_defaults(&c);
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(live_config_load(p, &c, &e) == RS_OK, "%s", e.msg);
    ck_assert_int_eq(c.sync_attempts, 2);
    ck_assert_int_eq(rs_config_talos_attempts(&c), 4);
    ck_assert_str_eq(c.lease_name, "a.b-c");
    rs_config_free(&c);
    unlink(p);
    free(p);
}
END_TEST

/* A NUL or a byte that is not UTF-8, even in a comment, refuses the whole
 * file: a reader that stopped there would silently drop the lines after it
 * (here an invalid lease name that must still be seen). */
START_TEST(test_config_nul_and_invalid_utf8_refuse_the_file)
{
    static const char nul[] = "sync.attempts: 5\n# \0\nlease.name: \"NOT A DNS LABEL\"\n";
    expect_error_n(nul, sizeof nul - 1, ":2:3: (bytes): a NUL byte");
    static const char ff[] = "sync.attempts: 5\n# \xff\nlease.name: \"NOT A DNS LABEL\"\n";
    expect_error_n(ff, sizeof ff - 1, ":2:3: (bytes): byte 0xFF is not valid UTF-8");
    static const char cut[] = "sync.attempts: 5\n# \xe2\x82";
    expect_error_n(cut, sizeof cut - 1, ":2:3: (bytes): byte 0xE2 is not valid UTF-8");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("config");
    tcase_add_test(tc, test_config_keys_apply_nested_and_dotted);
    tcase_add_test(tc, test_config_errors_name_line_column_and_key);
    tcase_add_test(tc, test_config_values_are_refused_never_clamped);
    tcase_add_test(tc, test_config_talos_attempts_apply);
    tcase_add_test(tc, test_config_nul_and_invalid_utf8_refuse_the_file);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
