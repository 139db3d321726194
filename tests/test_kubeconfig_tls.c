/*
 * test_kubeconfig_tls.c — the TLS files and data a kubeconfig names, checked
 * as kubectl (client-go) checks them before any connection
 * (core/live/live_pem.c): each refusal is a malformed kubeconfig (RS_DATAERR,
 * exit 65) naming file:line:column, context, cluster or user, and field —
 * never left for the TLS handshake to fail as an untrusted server (exit 1).
 *
 * Each test can fail: insecure-skip-tls-verify beside a CA accepted, a
 * missing or non-PEM CA or client file accepted, or -data not winning over
 * a file without PEM as it wins in client-go.
 */
#include "core/live/live_kubeconfig.h"
#include "core/live/live_pem.h"
#include "tests/support_pem.h"
#include "tests/support_tmpdir.h"

#include <check.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void setup(void)
{
    ts_tmpdir_make("test_kubeconfig_tls");
    char certs[128];
    snprintf(certs, sizeof certs, "%s/certs", ts_dir);
    ck_assert_int_eq(mkdir(certs, 0700), 0);
}

static void teardown(void)
{
    ts_tmpdir_remove();
}

/* A throwaway EC private key (PEM) at ts_dir/name; its path in abs. */
static void put_key(const char *name, char *abs, size_t len)
{
    snprintf(abs, len, "%s/%s", ts_dir, name);
    EVP_PKEY *pk = EVP_EC_gen("P-256");
    ck_assert_ptr_nonnull(pk);
    FILE *f = fopen(abs, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(PEM_write_PrivateKey(f, pk, NULL, NULL, 0, NULL, NULL), 1);
    fclose(f);
    EVP_PKEY_free(pk);
}

static void load_ok(const live_kubeconfig_src *src)
{
    live_kubeconfig *k = NULL;
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(live_kubeconfig_load(src, &k, &e) == RS_OK, "%s", e.msg);
    live_kubeconfig_free(k);
}

static rs_err load_fail(const live_kubeconfig_src *src)
{
    live_kubeconfig *k = NULL;
    rs_err e;
    rs_err_clear(&e);
    rs_code c = live_kubeconfig_load(src, &k, &e);
    ck_assert_msg(c == RS_DATAERR, "expected RS_DATAERR, got %d (%s)", c, e.msg);
    ck_assert_ptr_null(k);
    return e;
}

/* What client-go refuses about a certificate authority is a malformed
 * kubeconfig (RS_DATAERR, exit 65) naming file:line:col, context, cluster
 * and field — never left for the TLS handshake to fail (exit 1). */
START_TEST(test_ca_that_kubectl_refuses_is_malformed)
{
    ts_put("certs/ca.pem", CA_PEM);
    ts_put("notpem.pem",
           "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n");
    static const struct {
        const char *cluster, *field, *why;
    } bad[] = {
        {"insecure-skip-tls-verify: true, certificate-authority-data: " CA_B64,
         "insecure-skip-tls-verify", "with the insecure flag is not allowed"},
        {"insecure-skip-tls-verify: true, certificate-authority: certs/ca.pem",
         "insecure-skip-tls-verify", "with the insecure flag is not allowed"},
        {"certificate-authority: certs/none.pem", "certificate-authority", "cannot be read"},
        {"certificate-authority: certs/none.pem, certificate-authority-data: " CA_B64,
         "certificate-authority", "cannot be read"},
        {"certificate-authority: notpem.pem", "certificate-authority", "holds no PEM certificate"},
        {"certificate-authority: certs", "certificate-authority", "is not a regular file"},
        {"certificate-authority-data: aGVsbG8=", "certificate-authority-data",
         "no PEM certificate"},
    };
    char text[2048], want[256];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text,
                 "current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n"
                 "clusters: [{name: c, cluster: {server: 'https://k', %s}}]\n",
                 bad[i].cluster);
        live_kubeconfig_src src = {.explicit_path = ts_put("config", text)};
        rs_err e = load_fail(&src);
        snprintf(want, sizeof want, "%s:3:", src.explicit_path);
        ck_assert_msg(strstr(e.msg, want) != NULL, "case %zu: %s", i, e.msg);
        snprintf(want, sizeof want, "context x, cluster c: %s: ", bad[i].field);
        ck_assert_msg(strstr(e.msg, want) != NULL, "case %zu: %s", i, e.msg);
        ck_assert_msg(strstr(e.msg, bad[i].why) != NULL, "case %zu: %s", i, e.msg);
    }
    /* -data wins over a file holding no certificate, as in client-go. */
    snprintf(text, sizeof text,
             "current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n"
             "clusters: [{name: c, cluster: {server: 'https://k', certificate-authority: "
             "notpem.pem, certificate-authority-data: %s}}]\n",
             CA_B64);
    live_kubeconfig_src src = {.explicit_path = ts_put("config", text)};
    load_ok(&src);
    ck_assert(live_pem_has_cert((const unsigned char *)CA_PEM, strlen(CA_PEM)));
    ck_assert(!live_pem_has_cert(NULL, 0));
    ck_assert(!live_pem_has_cert((const unsigned char *)"x", 0));
}
END_TEST

/* A client-certificate or client-key file kubectl cannot use is a
 * malformed kubeconfig naming file:line:column, context, user and field;
 * -data beside a file holding no PEM wins, as in client-go. */
START_TEST(test_client_files_kubectl_refuses_are_malformed)
{
    char key_abs[256];
    ts_put("c.pem", CA_PEM);
    put_key("k.pem", key_abs, sizeof key_abs);
    ts_put("notpem.pem", "not a pem\n");
    static const struct {
        const char *user, *field, *why;
    } bad[] = {
        {"client-certificate: none.pem, client-key: k.pem", "client-certificate", "cannot be read"},
        {"client-certificate: notpem.pem, client-key: k.pem", "client-certificate",
         "holds no PEM certificate"},
        {"client-certificate: c.pem, client-key: none.pem", "client-key", "cannot be read"},
        {"client-certificate: c.pem, client-key: c.pem", "client-key", "holds no PEM private key"},
        {"client-certificate: c.pem, client-key: certs", "client-key", "is not a regular file"},
    };
    char text[2048], want[256];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text,
                 "current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
                 "clusters: [{name: c, cluster: {server: 'https://k'}}]\n"
                 "users: [{name: u, user: {%s}}]\n",
                 bad[i].user);
        live_kubeconfig_src src = {.explicit_path = ts_put("config", text)};
        rs_err e = load_fail(&src);
        snprintf(want, sizeof want, "%s:4:", src.explicit_path);
        ck_assert_msg(strstr(e.msg, want) != NULL, "case %zu: %s", i, e.msg);
        snprintf(want, sizeof want, "context x, user u: %s: ", bad[i].field);
        ck_assert_msg(strstr(e.msg, want) != NULL, "case %zu: %s", i, e.msg);
        ck_assert_msg(strstr(e.msg, bad[i].why) != NULL, "case %zu: %s", i, e.msg);
    }
    snprintf(text, sizeof text,
             "current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
             "clusters: [{name: c, cluster: {server: 'https://k'}}]\n"
             "users: [{name: u, user: {client-certificate: notpem.pem, client-certificate-data: "
             "%s, client-key: %s}}]\n",
             CA_B64, key_abs);
    live_kubeconfig_src src = {.explicit_path = ts_put("config", text)};
    load_ok(&src);
    ck_assert(!live_pem_has_key((const unsigned char *)CA_PEM, strlen(CA_PEM)));
    ck_assert(!live_pem_has_key(NULL, 0));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kubeconfig_tls");
    TCase *tc = tcase_create("tls");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_ca_that_kubectl_refuses_is_malformed);
    tcase_add_test(tc, test_client_files_kubectl_refuses_are_malformed);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
