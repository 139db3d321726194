/*
 * test_live_bao.c — the live OpenBao client's BAO_NAMESPACE and BAO_CAPATH
 * (core/live/live_backends.c) against `reassert sim serve --openbao-namespace
 * team-a` over HTTPS, with a CA made by openssl at test time:
 *   - the namespace is sent as X-Vault-Namespace: named, the read is 200;
 *     not named or named wrongly, OpenBao's 403 (the token lives in its
 *     namespace), and the probe's error names the namespace;
 *   - BAO_CAPATH, a hashed directory holding the CA (`openssl rehash`),
 *     trusts the server; a directory without it does not (a TLS failure,
 *     nothing sent);
 *   - a namespace or token holding CR/LF is refused before any request
 *     (it would start another header line);
 *   - the client offers HTTP/2 over TLS first (ALPN h2, CURL_HTTP_VERSION_
 *     2TLS), shown by a TLS server offering h2 and http/1.1.
 * The same client against the same server without TLS is test_live_kube.c's.
 */
#include "core/live/live_backends.h"
#include "tests/support_transport.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/rs-live-bao-XXXXXX";
static char url[160];
static pid_t serve_pid;
static char *db;

static const char *bin_path(void)
{
    const char *bin = getenv("REASSERT_BIN");
    static char here[4096];
    if (bin) return bin;
    ssize_t n = readlink("/proc/self/exe", here, sizeof here - 16);
    ck_assert_int_gt(n, 0);
    here[n] = '\0';
    strcpy(strrchr(here, '/') + 1, "reassert");
    return here;
}

/* A CA, a server certificate for 127.0.0.1 signed by it, and two CA
 * directories: capath/ hashed with the CA, empty/ without it. */
static void make_tls(void)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem "
             "-days 2 -subj /CN=bao-ca >/dev/null 2>&1 && "
             "openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr "
             "-subj /CN=127.0.0.1 >/dev/null 2>&1 && "
             "printf 'subjectAltName=IP:127.0.0.1\\n' > san.ext && "
             "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
             "-out server.pem -days 2 -extfile san.ext >/dev/null 2>&1 && "
             "mkdir capath empty && cp ca.pem capath/ && openssl rehash capath >/dev/null 2>&1 "
             "&& printf 'bao-token-ns-61f0\\n' > bao.token",
             dir);
    ck_assert_msg(system(cmd) == 0, "openssl could not make the test CA");
}

static void setup(void)
{
    ck_assert_ptr_nonnull(mkdtemp(dir));
    make_tls();
    db = tt_scenario_world("two-run-stage-reassert.yaml");
    char cert[256], key[256], tok[256];
    snprintf(cert, sizeof cert, "%s/server.pem", dir);
    snprintf(key, sizeof key, "%s/server.key", dir);
    snprintf(tok, sizeof tok, "%s/bao.token", dir);
    const char *bin = bin_path();
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    serve_pid = fork();
    if (serve_pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        execl(bin, bin, "sim", "serve", "--db", db, "--listen", "127.0.0.1:0", "--tls-cert", cert,
              "--tls-key", key, "--openbao-token-file", tok, "--openbao-namespace", "team-a",
              (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    FILE *f = fdopen(p[0], "r");
    ck_assert_ptr_nonnull(fgets(url, sizeof url, f));
    fclose(f);
    url[strcspn(url, "\n")] = '\0';
    ck_assert_msg(strncmp(url, "https://127.0.0.1:", 18) == 0, "served at %s", url);
}

static void teardown(void)
{
    kill(serve_pid, SIGTERM);
    int st;
    waitpid(serve_pid, &st, 0);
    unlink(db);
    free(db);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    strcpy(dir, "/tmp/rs-live-bao-XXXXXX");
}

/* Opens a client with namespace ns and CA directory ca_dir (under dir);
 * returns the probe's code, *msg its error. The read's status in *read. */
static rs_code probe_and_read(const char *ns, const char *ca_dir, int *read, char *msg, size_t len)
{
    char capath[256];
    snprintf(capath, sizeof capath, "%s/%s", dir, ca_dir);
    live_bao_opts o = {.addr = url,
                       .token = "bao-token-ns-61f0",
                       .token_src = "a test file",
                       .ca_path = capath,
                       .name_space = ns};
    live_bao *b = NULL;
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(live_bao_open(&o, &b, &e) == RS_OK, "%s", e.msg);
    rs_code rc = live_bao_probe(b, &e);
    snprintf(msg, len, "%s", rc == RS_OK ? "" : e.msg);
    rs_req rd = {.op = RS_OP_OPENBAO_READ, .mount = "secret", .target = "infrastructure/ghcr/auth"};
    rs_resp r;
    *read = live_bao_call(b, &rd, &r);
    if (*read == 200)
        ck_assert_ptr_nonnull(cJSON_GetObjectItem(cJSON_GetObjectItem(r.body, "data"), "data"));
    if (*read == 0) ck_assert_int_eq(r.sent, RS_SENT_NO);
    rs_resp_free(&r);
    live_bao_close(b);
    return rc;
}

START_TEST(test_namespace_is_sent_as_x_vault_namespace)
{
    char msg[1100];
    int read = 0;
    ck_assert_msg(probe_and_read("team-a", "capath", &read, msg, sizeof msg) == RS_OK, "%s", msg);
    ck_assert_int_eq(read, 200);
    /* Not named: the root namespace, where this token is not valid. */
    ck_assert_int_eq(probe_and_read(NULL, "capath", &read, msg, sizeof msg), RS_FAILED);
    ck_assert_int_eq(read, 403);
    ck_assert_ptr_nonnull(strstr(msg, "refused the token from a test file"));
    /* Named wrongly: 403, and the error names the namespace it used. */
    ck_assert_int_eq(probe_and_read("team-b", "capath", &read, msg, sizeof msg), RS_FAILED);
    ck_assert_int_eq(read, 403);
    ck_assert_ptr_nonnull(strstr(msg, "BAO_NAMESPACE, team-b"));
}
END_TEST

START_TEST(test_capath_trusts_only_its_certificates)
{
    char msg[1100];
    int read = 0;
    ck_assert_int_eq(probe_and_read("team-a", "empty", &read, msg, sizeof msg), RS_FAILED);
    ck_assert_int_eq(read, 0); /* not trusted: nothing sent */
    ck_assert_msg(strstr(msg, "TLS cannot be trusted") && strstr(msg, "BAO_CAPATH"), "%s", msg);
    ck_assert_int_eq(probe_and_read("team-a", "capath", &read, msg, sizeof msg), RS_OK);
    ck_assert_int_eq(read, 200);
}
END_TEST

START_TEST(test_control_characters_never_reach_a_header)
{
    live_bao *b = NULL;
    rs_err e;
    rs_err_clear(&e);
    live_bao_opts o = {.addr = url,
                       .token = "t",
                       .token_src = "BAO_TOKEN",
                       .name_space = "team-a\r\nX-Injected: 1"};
    ck_assert_int_eq(live_bao_open(&o, &b, &e), RS_USAGE);
    ck_assert_ptr_null(b);
    ck_assert_ptr_nonnull(strstr(e.msg, "BAO_NAMESPACE"));
    o.name_space = "team-a";
    o.token = "tok\nX-Injected: 1";
    rs_err_clear(&e);
    ck_assert_int_eq(live_bao_open(&o, &b, &e), RS_DATAERR);
    ck_assert_ptr_null(b);
    ck_assert_ptr_nonnull(strstr(e.msg, "BAO_TOKEN"));
    ck_assert_ptr_null(strstr(e.msg, "Injected")); /* the token is never echoed */
}
END_TEST

/* A TLS server offering h2 and http/1.1 by ALPN that writes the protocol
 * the handshake chose to a file, then closes: what a client that prefers
 * HTTP/2 over TLS gets is "h2". */
static const char alpn_server[] = "import socket, ssl, sys\n"
                                  "d = sys.argv[1]\n"
                                  "ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n"
                                  "ctx.load_cert_chain(d + '/server.pem', d + '/server.key')\n"
                                  "ctx.set_alpn_protocols(['h2', 'http/1.1'])\n"
                                  "ls = socket.socket()\n"
                                  "ls.bind(('127.0.0.1', 0))\n"
                                  "ls.listen(1)\n"
                                  "print(ls.getsockname()[1], flush=True)\n"
                                  "c, _ = ls.accept()\n"
                                  "t = ctx.wrap_socket(c, server_side=True)\n"
                                  "open(d + '/alpn', 'w').write(str(t.selected_alpn_protocol()))\n"
                                  "t.close()\n";

START_TEST(test_http2_is_preferred_over_tls)
{
    char script[256], port[32], ca[256], addr[64], got[32] = "";
    snprintf(script, sizeof script, "%s/alpn.py", dir);
    FILE *f = fopen(script, "w");
    ck_assert_ptr_nonnull(f);
    fputs(alpn_server, f);
    fclose(f);
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        execlp("python3", "python3", script, dir, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    f = fdopen(p[0], "r");
    ck_assert_ptr_nonnull(fgets(port, sizeof port, f));
    fclose(f);
    port[strcspn(port, "\n")] = '\0';
    snprintf(addr, sizeof addr, "https://127.0.0.1:%s", port);
    snprintf(ca, sizeof ca, "%s/ca.pem", dir);
    live_bao_opts o = {.addr = addr, .token = "t", .token_src = "test", .ca_file = ca};
    live_bao *b = NULL;
    rs_err e;
    rs_err_clear(&e);
    ck_assert_int_eq(live_bao_open(&o, &b, &e), RS_OK);
    (void)live_bao_probe(b, &e); /* the server closes after the handshake */
    live_bao_close(b);
    int st = 0;
    waitpid(pid, &st, 0);
    char path[256];
    snprintf(path, sizeof path, "%s/alpn", dir);
    f = fopen(path, "r");
    ck_assert_msg(f != NULL, "the TLS server saw no handshake");
    ck_assert_ptr_nonnull(fgets(got, sizeof got, f));
    fclose(f);
    ck_assert_str_eq(got, "h2");
}
END_TEST

static Suite *live_bao_suite(void)
{
    Suite *s = suite_create("live_bao");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_namespace_is_sent_as_x_vault_namespace);
    tcase_add_test(tc, test_capath_trusts_only_its_certificates);
    tcase_add_test(tc, test_control_characters_never_reach_a_header);
    tcase_add_test(tc, test_http2_is_preferred_over_tls);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(live_bao_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
