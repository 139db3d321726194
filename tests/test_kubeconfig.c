/*
 * test_kubeconfig.c — the kubeconfig resolved as kubectl resolves it
 * (core/live/live_kubeconfig.c), the exec credential contract
 * (live_kube_exec.c), and the small pure parts of the live clients (the
 * kube path of a request, the registry's bearer challenge).
 *
 * Each test can fail: a merge that let a later file win, a current-context
 * taken from the wrong file, a relative path left relative, an unknown
 * context accepted, an expired credential taken, a challenge without a
 * realm accepted — each is a way a live run would talk to the wrong
 * server, as the wrong user, or with a credential it should have refused.
 */
#include "core/live/live_backends.h"
#include "core/live/live_kube.h"
#include "core/live/live_kube_exec.h"
#include "core/live/live_kubeconfig.h"
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
    ts_tmpdir_make("test_kubeconfig");
}

static void teardown(void)
{
    ts_tmpdir_remove();
}

static live_kubeconfig *load_ok(const live_kubeconfig_src *src)
{
    live_kubeconfig *k = NULL;
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(live_kubeconfig_load(src, &k, &e) == RS_OK, "%s", e.msg);
    return k;
}

static rs_err load_fail(const live_kubeconfig_src *src, rs_code want)
{
    live_kubeconfig *k = NULL;
    rs_err e;
    rs_err_clear(&e);
    rs_code c = live_kubeconfig_load(src, &k, &e);
    ck_assert_msg(c == want, "expected %d, got %d (%s)", want, c, e.msg);
    ck_assert_ptr_null(k);
    return e;
}

static const char *const FULL =
    "apiVersion: v1\nkind: Config\ncurrent-context: a\n"
    "clusters:\n- name: ca\n  cluster:\n    server: https://10.0.0.1:6443/\n"
    "    certificate-authority: certs/ca.pem\n    tls-server-name: kube.internal\n"
    "    proxy-url: http://proxy:3128\n"
    "- name: cb\n  cluster: {server: 'https://127.0.0.1:8080', certificate-authority-data: " CA_B64
    "}\n"
    "- name: cc\n  cluster: {server: 'https://127.0.0.1:6443', insecure-skip-tls-verify: true}\n"
    "users:\n- name: ua\n  user: {token: 12345, client-certificate: c.pem, client-key: "
    "/abs/k.pem}\n"
    "- name: ub\n  user: {tokenFile: tok, client-certificate-data: Y2VydA==, client-key-data: "
    "a2V5}\n"
    "contexts:\n- name: a\n  context: {cluster: ca, user: ua}\n"
    "- name: b\n  context: {cluster: cb, user: ub}\n"
    "- name: c\n  context: {cluster: cc, user: ub}\n";

/* FULL's certificate-authority file (context a), relative to its folder. */
static void put_ca_file(void)
{
    char certs[128];
    snprintf(certs, sizeof certs, "%s/certs", ts_dir);
    mkdir(certs, 0700);
    ts_put("certs/ca.pem", CA_PEM);
}

/* A throwaway EC private key (PEM) at path: a client-key must hold one. */
static void put_key_file(const char *path)
{
    EVP_PKEY *pk = EVP_EC_gen("P-256");
    ck_assert_ptr_nonnull(pk);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(PEM_write_PrivateKey(f, pk, NULL, NULL, 0, NULL, NULL), 1);
    fclose(f);
    EVP_PKEY_free(pk);
}

/* FULL with its absolute client-key path (/abs/k.pem) under the test directory, the files
 * context a names (CA, client certificate, client key) written. */
static const char *put_full_for_a(char *key_abs, size_t len)
{
    put_ca_file();
    ts_put("c.pem", CA_PEM);
    snprintf(key_abs, len, "%s/k.pem", ts_dir);
    put_key_file(key_abs);
    static char text[4096];
    const char *at = strstr(FULL, "/abs/k.pem");
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - FULL), FULL, key_abs,
             at + strlen("/abs/k.pem"));
    return ts_put("config", text);
}

START_TEST(test_explicit_file_current_context_and_relative_paths)
{
    char key_abs[256];
    live_kubeconfig_src src = {.explicit_path = put_full_for_a(key_abs, sizeof key_abs)};
    live_kubeconfig *k = load_ok(&src);
    ck_assert_str_eq(k->context, "a");
    ck_assert_str_eq(k->server, "https://10.0.0.1:6443"); /* trailing '/' dropped */
    char want[256];
    snprintf(want, sizeof want, "%s/certs/ca.pem", ts_dir);
    ck_assert_str_eq(k->ca_file, want); /* relative to the file's folder */
    ck_assert_str_eq(k->tls_server_name, "kube.internal");
    ck_assert_str_eq(k->proxy_url, "http://proxy:3128");
    ck_assert_str_eq(k->token, "12345"); /* a plain number is still the token's text */
    snprintf(want, sizeof want, "%s/c.pem", ts_dir);
    ck_assert_str_eq(k->cert_file, want);
    ck_assert_str_eq(k->key_file, key_abs); /* an absolute path stays as it is */
    ck_assert(!k->insecure);
    char where[512];
    ck_assert_ptr_nonnull(strstr(live_kubeconfig_where(k, where, sizeof where), "context a"));
    live_kubeconfig_free(k);
}
END_TEST

START_TEST(test_context_flag_overrides_current_context)
{
    live_kubeconfig_src src = {.explicit_path = ts_put("config", FULL), .context = "b"};
    live_kubeconfig *k = load_ok(&src);
    ck_assert_str_eq(k->cluster, "cb");
    ck_assert(!k->insecure);
    ck_assert_int_eq((int)k->ca_pem_len, (int)strlen(CA_PEM));
    ck_assert(memcmp(k->ca_pem, CA_PEM, strlen(CA_PEM)) == 0);
    ck_assert_int_eq((int)k->cert_pem_len, 4);
    ck_assert_int_eq((int)k->key_pem_len, 3);
    char want[256];
    snprintf(want, sizeof want, "%s/tok", ts_dir);
    ck_assert_str_eq(k->token_file, want);
    ck_assert_ptr_null(k->token);
    live_kubeconfig_free(k);
    src.context = "c";
    k = load_ok(&src);
    ck_assert(k->insecure);
    ck_assert_ptr_null(k->ca_pem);
    live_kubeconfig_free(k);
}
END_TEST

START_TEST(test_kubeconfig_env_merges_first_file_wins)
{
    /* a: current-context x and cluster c1 -> server one; b: current-context
     * y, cluster c1 -> two (ignored: a defined c1 first), context x. */
    char env[1024];
    const char *a = ts_put("a", "current-context: x\nclusters:\n- name: c1\n  cluster: {server: "
                                "'https://one'}\n");
    const char *b =
        ts_put("b", "current-context: y\nclusters:\n- name: c1\n  cluster: {server: "
                    "'https://two'}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n"
                    "- name: x\n  context: {cluster: c1, user: u}\n- name: y\n  context: "
                    "{cluster: c1}\n");
    snprintf(env, sizeof env, "%s/missing::%s:%s:%s", ts_dir, a, b, a);
    live_kubeconfig_src src = {.env = env, .home = "/nonexistent"};
    live_kubeconfig *k = load_ok(&src);
    ck_assert_str_eq(k->context, "x");
    ck_assert_str_eq(k->server, "https://one");
    ck_assert_str_eq(k->token, "t");
    ck_assert_str_eq(k->origin, b); /* the file that defined the context */
    ck_assert_ptr_nonnull(strstr(k->files, a));
    live_kubeconfig_free(k);
}
END_TEST

START_TEST(test_home_kube_config_is_the_last_file)
{
    char kube[256];
    snprintf(kube, sizeof kube, "%s/.kube", ts_dir);
    mkdir(kube, 0700);
    ts_put(".kube/config", "current-context: h\nclusters: [{name: c, cluster: {server: "
                           "'http://home'}}]\ncontexts: [{name: h, context: {cluster: c}}]\n");
    live_kubeconfig_src src = {.home = ts_dir};
    live_kubeconfig *k = load_ok(&src);
    ck_assert_str_eq(k->server, "http://home");
    ck_assert_str_eq(k->user, ""); /* no user: anonymous */
    live_kubeconfig_free(k);
}
END_TEST

START_TEST(test_in_cluster_fallback_and_no_config_at_all)
{
    ts_put("token", "sa-token\n");
    live_kubeconfig_src src = {
        .home = "/nonexistent", .sa_host = "10.96.0.1", .sa_port = "443", .sa_dir = ts_dir};
    live_kubeconfig *k = load_ok(&src);
    ck_assert_str_eq(k->server, "https://10.96.0.1:443");
    ck_assert_str_eq(k->context, "in-cluster");
    ck_assert_ptr_nonnull(strstr(k->ca_file, "/ca.crt"));
    live_kubeconfig_free(k);
    src.sa_host = "fd00::1";
    k = load_ok(&src);
    ck_assert_str_eq(k->server, "https://[fd00::1]:443");
    live_kubeconfig_free(k);
    src.sa_host = NULL;
    rs_err e = load_fail(&src, RS_DATAERR);
    ck_assert_ptr_nonnull(strstr(e.msg, "no kubeconfig"));
}
END_TEST

START_TEST(test_bad_kubeconfigs_name_file_context_and_field)
{
    live_kubeconfig_src src = {.explicit_path = "/nonexistent/kc"};
    rs_err e = load_fail(&src, RS_DATAERR);
    ck_assert_ptr_nonnull(strstr(e.msg, "/nonexistent/kc"));
    src.explicit_path = ts_put("bad", "clusters: [\n");
    e = load_fail(&src, RS_DATAERR);
    ck_assert_ptr_nonnull(strstr(e.msg, "bad:"));
    src.explicit_path = ts_put("list", "- a\n- b\n");
    load_fail(&src, RS_DATAERR);
    src.explicit_path = ts_put("config", FULL);
    src.context = "nope";
    e = load_fail(&src, RS_DATAERR);
    ck_assert_ptr_nonnull(strstr(e.msg, "context \"nope\" is not defined"));
    ck_assert_ptr_nonnull(strstr(e.msg, src.explicit_path));
    src.context = NULL;
    src.explicit_path = ts_put("nocur", "clusters: []\n");
    e = load_fail(&src, RS_DATAERR);
    ck_assert_ptr_nonnull(strstr(e.msg, "no current-context"));
    src.explicit_path = ts_put("nocl", "current-context: a\ncontexts: [{name: a, context: "
                                       "{cluster: gone}}]\n");
    e = load_fail(&src, RS_DATAERR);
    ck_assert_ptr_nonnull(strstr(e.msg, "cluster \"gone\""));
    src.explicit_path = ts_put("nous", "current-context: a\ncontexts: [{name: a, context: "
                                       "{cluster: c, user: gone}}]\nclusters: [{name: c, cluster: "
                                       "{server: 'https://x'}}]\n");
    e = load_fail(&src, RS_DATAERR);
    ck_assert_ptr_nonnull(strstr(e.msg, "user \"gone\""));
    const char *const bad[] = {
        "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\nclusters: [{name: c, "
        "cluster: {server: 'ftp://x'}}]\n",
        "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\nclusters: [{name: c, "
        "cluster: {}}]\n",
        "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\nclusters: [{name: c, "
        "cluster: {server: 'https://x', insecure-skip-tls-verify: maybe}}]\n",
        "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\nclusters: [{name: c, "
        "cluster: {server: 'https://x', certificate-authority-data: '!!!'}}]\n",
        "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\nclusters: {c: 1}\n",
        "current-context: a\ncontexts: [{name: a, context: {cluster: [c]}}]\n",
        "current-context: a\ncontexts: [{name: a, context: {}}]\n",
        "current-context: a\ncontexts: [a]\n",
        "current-context: [a]\n",
        "current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\nclusters: "
        "[{name: c, cluster: {server: 'https://x'}}]\nusers: [{name: u, user: {exec: {args: "
        "[a]}}}]\n",
        "current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\nclusters: "
        "[{name: c, cluster: {server: 'https://x'}}]\nusers: [{name: u, user: {exec: {command: x,"
        " args: a}}}]\n",
        "current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\nclusters: "
        "[{name: c, cluster: {server: 'https://x'}}]\nusers: [{name: u, user: {exec: {command: x,"
        " env: [{value: v}]}}}]\n",
        "current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\nclusters: "
        "[{name: c, cluster: {server: 'https://x'}}]\nusers: [{name: u, user: {exec: 3}}]\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        src.explicit_path = ts_put("case", bad[i]);
        e = load_fail(&src, RS_DATAERR);
        ck_assert_msg(strstr(e.msg, "kubeconfig") != NULL, "case %zu: %s", i, e.msg);
    }
}
END_TEST

START_TEST(test_exec_entry_is_read_with_relative_command)
{
    live_kubeconfig_src src = {
        .explicit_path = ts_put(
            "config", "current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n"
                      "clusters: [{name: c, cluster: {server: 'https://x'}}]\nusers:\n- name: u\n"
                      "  user:\n    exec:\n      command: ./bin/plug\n      args: [get, 7]\n"
                      "      env: [{name: A, value: b}]\n      provideClusterInfo: true\n")};
    live_kubeconfig *k = load_ok(&src);
    ck_assert(k->has_exec);
    char want[256];
    snprintf(want, sizeof want, "%s/./bin/plug", ts_dir);
    ck_assert_str_eq(k->exec.command, want);
    ck_assert_int_eq((int)k->exec.n_args, 2);
    ck_assert_str_eq(k->exec.args[1], "7");
    ck_assert_str_eq(k->exec.env[0], "A=b");
    ck_assert_str_eq(k->exec.api_version, "client.authentication.k8s.io/v1");
    ck_assert_str_eq(k->exec.interactive, "IfAvailable");
    ck_assert(k->exec.provide_cluster_info);
    live_kubeconfig_free(k);
}
END_TEST

#define V1 "client.authentication.k8s.io/v1"

START_TEST(test_exec_credential_is_read_strictly)
{
    live_exec_cred c;
    rs_err e;
    rs_err_clear(&e);
    ck_assert_int_eq(live_exec_cred_parse("{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\","
                                          "\"status\":{\"token\":\"tk\",\"expirationTimestamp\":"
                                          "\"2030-01-02T03:04:05Z\"}}",
                                          V1, &c, &e),
                     RS_OK);
    ck_assert_str_eq(c.token, "tk");
    ck_assert(c.expires_unix == 1893553445);
    live_exec_cred_free(&c);
    ck_assert_int_eq(live_exec_cred_parse("{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\","
                                          "\"status\":{\"clientCertificateData\":\"C\","
                                          "\"clientKeyData\":\"K\"}}",
                                          V1, &c, &e),
                     RS_OK);
    ck_assert_str_eq(c.key_pem, "K");
    ck_assert(c.expires_unix == 0);
    live_exec_cred_free(&c);
    const char *const bad[] = {
        "not json",
        "{\"apiVersion\":\"" V1 "\",\"kind\":\"Other\",\"status\":{\"token\":\"t\"}}",
        "{\"apiVersion\":\"v1beta1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\"}}",
        "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\"}",
        "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{}}",
        "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\","
        "\"clientKeyData\":\"K\"}}",
        "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\","
        "\"expirationTimestamp\":\"tomorrow\"}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(live_exec_cred_parse(bad[i], V1, &c, &e) == RS_DATAERR, "case %zu", i);
}
END_TEST

START_TEST(test_rfc3339_offsets_and_garbage)
{
    int64_t t = 0;
    ck_assert(live_rfc3339_unix("1970-01-01T01:00:00+01:00", &t) && t == 0);
    ck_assert(live_rfc3339_unix("1970-01-01T00:00:10.999Z", &t) && t == 10);
    ck_assert(live_rfc3339_unix("1970-01-01T00:00:00-00:30", &t) && t == 1800);
    ck_assert(!live_rfc3339_unix("1970-01-01 00:00:00Z", &t));
    ck_assert(!live_rfc3339_unix("1970-13-01T00:00:00Z", &t));
    ck_assert(!live_rfc3339_unix("1970-01-01T00:00:00", &t));
    ck_assert(!live_rfc3339_unix("1970-01-01T00:00:00Zjunk", &t));
    ck_assert(!live_rfc3339_unix("1970-01-01T00:00:00.Z", &t));
    ck_assert(!live_rfc3339_unix("1970-01-01T00:00:00+1:00", &t));
    /* a sign or a space where a digit belongs (sscanf's %2d took both) */
    ck_assert(!live_rfc3339_unix("1970-01-01T00:00:+1Z", &t));
    ck_assert(!live_rfc3339_unix("1970-01-01T00: 0:01Z", &t));
    ck_assert(!live_rfc3339_unix(NULL, &t));
}
END_TEST

/* An exec plugin that runs: its credential, an expired one, a failure. */
START_TEST(test_exec_plugin_runs_with_its_env_and_expiry)
{
    const char *plug = ts_put(
        "plug.sh", "#!/bin/sh\n[ \"$MODE\" = fail ] && { echo secret-ish >&2; exit 2; }\n"
                   "case \"$KUBERNETES_EXEC_INFO\" in *ExecCredential*) ;; *) exit 4;; esac\n"
                   "case \"$KUBERNETES_EXEC_INFO\" in *'\"server\":\"https://x\"'*) "
                   "[ \"$WANT_CLUSTER\" = 1 ] || exit 5;; "
                   "*) [ \"$WANT_CLUSTER\" = 1 ] && exit 6;; esac\n"
                   "printf '{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\","
                   "\"status\":{\"token\":\"%s\",\"expirationTimestamp\":\"%s\"}}' "
                   "\"$MODE\" \"$EXP\"\n");
    chmod(plug, 0700);
    live_kubeconfig k = {
        .user = "u", .context = "c", .server = "https://x", .origin = "f", .has_exec = true};
    k.exec.command = (char *)plug;
    k.exec.api_version = V1;
    k.exec.interactive = "Never";
    k.exec.env[0] = "MODE=tok-1";
    k.exec.env[1] = "EXP=2030-01-01T00:00:00Z";
    k.exec.n_env = 2;
    live_exec_cred c;
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(live_exec_cred_get(&k, 1000, &c, &e) == RS_OK, "%s", e.msg);
    ck_assert_str_eq(c.token, "tok-1");
    live_exec_cred_free(&c);
    /* provideClusterInfo: the cluster reaches the plugin in the exec info */
    k.exec.provide_cluster_info = true;
    k.exec.env[2] = "WANT_CLUSTER=1";
    k.exec.n_env = 3;
    k.ca_pem = (unsigned char *)"pem";
    k.ca_pem_len = 3;
    k.tls_server_name = "kube.internal";
    k.proxy_url = "http://proxy:1";
    k.insecure = true;
    ck_assert_msg(live_exec_cred_get(&k, 1000, &c, &e) == RS_OK, "%s", e.msg);
    live_exec_cred_free(&c);
    k.exec.provide_cluster_info = false;
    ck_assert_int_eq(live_exec_cred_get(&k, 1000, &c, &e), RS_FAILED); /* 6: it was there */
    k.exec.n_env = 2;
    ck_assert_int_eq(live_exec_cred_get(&k, 4000000000LL, &c, &e), RS_FAILED);
    ck_assert_ptr_nonnull(strstr(e.msg, "expired"));
    k.exec.env[0] = "MODE=fail";
    ck_assert_int_eq(live_exec_cred_get(&k, 1000, &c, &e), RS_FAILED);
    ck_assert_ptr_null(strstr(e.msg, "secret-ish")); /* its stderr is never repeated */
    k.exec.interactive = "Always";
    ck_assert_int_eq(live_exec_cred_get(&k, 1000, &c, &e), RS_DATAERR);
    k.exec.interactive = "Never";
    k.exec.api_version = "client.authentication.k8s.io/v2";
    ck_assert_int_eq(live_exec_cred_get(&k, 1000, &c, &e), RS_DATAERR);
    k.exec.api_version = V1;
    k.exec.command = "/nonexistent/plugin";
    ck_assert_int_eq(live_exec_cred_get(&k, 1000, &c, &e), RS_FAILED);
}
END_TEST

START_TEST(test_kube_paths_per_kind)
{
    rs_req r = {.op = RS_OP_KUBE_GET, .kind = "Secret", .ns = "flux-system", .name = "a b"};
    char *p = live_kube_path(&r);
    ck_assert_str_eq(p, "/api/v1/namespaces/flux-system/secrets/a%20b");
    free(p);
    r = (rs_req){.op = RS_OP_KUBE_LIST, .kind = "Node"};
    p = live_kube_path(&r);
    ck_assert_str_eq(p, "/api/v1/nodes");
    free(p);
    r = (rs_req){.op = RS_OP_KUBE_EVICT, .kind = "Pod", .ns = "n", .name = "p"};
    p = live_kube_path(&r);
    ck_assert_str_eq(p, "/api/v1/namespaces/n/pods/p/eviction");
    free(p);
    r = (rs_req){.op = RS_OP_KUBE_PATCH, .kind = "Kustomization", .ns = "flux-system", .name = "x"};
    p = live_kube_path(&r);
    ck_assert_str_eq(p, "/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/flux-system/"
                        "kustomizations/x");
    free(p);
    r = (rs_req){.op = RS_OP_KUBE_GET,
                 .kind = "CustomResourceDefinition",
                 .ns = "ignored",
                 .name = "pushsecrets.external-secrets.io"};
    p = live_kube_path(&r);
    ck_assert_str_eq(p, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                        "pushsecrets.external-secrets.io");
    free(p);
    r.kind = "Widget";
    ck_assert_ptr_null(live_kube_path(&r));
}
END_TEST

START_TEST(test_registry_challenge_needs_a_bearer_realm)
{
    char *realm = NULL, *service = NULL;
    ck_assert(live_registry_challenge(
        "Bearer realm=\"https://ghcr.io/token\",service=\"ghcr.io\",scope=\"x\"", &realm,
        &service));
    ck_assert_str_eq(realm, "https://ghcr.io/token");
    ck_assert_str_eq(service, "ghcr.io");
    free(realm);
    free(service);
    ck_assert(!live_registry_challenge("Basic realm=\"https://x\"", &realm, &service));
    ck_assert(!live_registry_challenge("Bearer service=\"x\"", &realm, &service));
    ck_assert(!live_registry_challenge("Bearer realm=\"file:///etc/passwd\"", &realm, &service));
    ck_assert(!live_registry_challenge("Bearer xrealm=\"https://x\"", &realm, &service));
    ck_assert(!live_registry_challenge("Bearer realm=\"https://x", &realm, &service));
    ck_assert(!live_registry_challenge(NULL, &realm, &service));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kubeconfig");
    TCase *tc = tcase_create("kubeconfig");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_explicit_file_current_context_and_relative_paths);
    tcase_add_test(tc, test_context_flag_overrides_current_context);
    tcase_add_test(tc, test_kubeconfig_env_merges_first_file_wins);
    tcase_add_test(tc, test_home_kube_config_is_the_last_file);
    tcase_add_test(tc, test_in_cluster_fallback_and_no_config_at_all);
    tcase_add_test(tc, test_bad_kubeconfigs_name_file_context_and_field);
    tcase_add_test(tc, test_exec_entry_is_read_with_relative_command);
    tcase_add_test(tc, test_exec_credential_is_read_strictly);
    tcase_add_test(tc, test_rfc3339_offsets_and_garbage);
    tcase_add_test(tc, test_exec_plugin_runs_with_its_env_and_expiry);
    tcase_add_test(tc, test_kube_paths_per_kind);
    tcase_add_test(tc, test_registry_challenge_needs_a_bearer_realm);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
