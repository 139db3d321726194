/*
 * test_live_e2e.c — live mode end to end: `reassert run
 * --transport live` against `reassert sim serve`, beside the same run in
 * process (`--transport sim:`) on a copy of the same world. Both must end
 * with the same exit, outcome and counters — every one, api_calls and
 * virtual_seconds included — and the two worlds with the same objects,
 * OpenBao, Talos nodes and world counters.
 *
 * The live run goes the whole way, over TLS (a CA and a server certificate
 * made with openssl here: no credential ever goes over plain http): a
 * kubeconfig resolved as kubectl does (a bearer token from a tokenFile
 * through KUBECONFIG's merge of two files; a client certificate the CA
 * signs as the only identity, sim serve --client-ca; an exec credential
 * plugin), the desired credential from a SOPS-shaped file through
 * --decrypt-command, OpenBao at BAO_ADDR/VAULT_ADDR, the registry's token
 * exchange, the stub talosctl on PATH, and the façade's clock
 * (--test-facade-clock, test-only).
 *
 * Hazard: H106 — no credential (registry password, kube or OpenBao token)
 * in the argv or environment the stub talosctl recorded, nor in the run's
 * output.
 */
#include "core/cred/cred.h"
#include "sim/scenario/scenario.h"
#include "sim/world/world.h"
#include "tests/support_transport.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define KUBE_TOKEN "kube-token-e2e-51d7"
#define BAO_TOKEN "bao-token-e2e-93ac"

typedef enum variant { V_BEARER, V_TLS, V_EXEC } variant;

typedef struct e2e {
    char dir[128];
    char world[192], inproc[192], tmp_live[192], tmp_in[192];
    char url[160];
    pid_t serve;
    variant v;
    const char *bin, *src;
    sc_scenario *sc;
    char pass[256];
} e2e;

static const char *bin_path(void)
{
    static char here[4096];
    const char *bin = getenv("REASSERT_BIN");
    if (bin) return bin;
    ssize_t n = readlink("/proc/self/exe", here, sizeof here - 16);
    ck_assert_int_gt(n, 0);
    here[n] = '\0';
    strcpy(strrchr(here, '/') + 1, "reassert");
    return here;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    chmod(path, mode);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return rs_xstrdup("");
    char *buf = rs_xmalloc(1 << 22);
    size_t n = fread(buf, 1, (1 << 22) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void copy_file(const char *from, const char *to)
{
    char *cmd = rs_xasprintf("cp '%s' '%s'", from, to);
    ck_assert_int_eq(system(cmd), 0);
    free(cmd);
}

/* Runs argv with envp (NULL: this environment), stdout to out, stderr to
 * err; returns the exit status. */
static int spawn(char *const argv[], char *const envp[], const char *out, const char *err)
{
    pid_t p = fork();
    if (p == 0) {
        FILE *o = freopen(out, "w", stdout), *e = freopen(err, "w", stderr);
        (void)o;
        (void)e;
        if (envp)
            execve(argv[0], argv, envp);
        else
            execv(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    waitpid(p, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The server's world session is named "cli", as `run --transport sim:`
 * names its own: the world keys per-run bookkeeping (a drain counts once
 * per run and node) by that name. */
static void serve_start(e2e *x)
{
    char tok[256], bao[256], cert[256], key[256], ca[256];
    snprintf(tok, sizeof tok, "%s/kube.token", x->dir);
    snprintf(bao, sizeof bao, "%s/bao.token", x->dir);
    snprintf(cert, sizeof cert, "%s/server.pem", x->dir);
    snprintf(key, sizeof key, "%s/server.key", x->dir);
    snprintf(ca, sizeof ca, "%s/ca.pem", x->dir);
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    x->serve = fork();
    if (x->serve == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        execl(x->bin, x->bin, "sim", "serve", "--db", x->world, "--listen", "127.0.0.1:0",
              "--token-file", tok, "--openbao-token-file", bao, "--tls-cert", cert, "--tls-key",
              key, "--run", "cli", x->v == V_TLS ? "--client-ca" : (char *)NULL, ca, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    FILE *f = fdopen(p[0], "r");
    ck_assert_ptr_nonnull(fgets(x->url, sizeof x->url, f));
    fclose(f);
    x->url[strcspn(x->url, "\n")] = '\0';
}

static void serve_stop(e2e *x)
{
    if (x->serve <= 0) return;
    kill(x->serve, SIGTERM);
    int st;
    waitpid(x->serve, &st, 0);
    x->serve = 0;
}

/* A CA, a server and a client certificate it signs, made with openssl. */
static void make_tls(e2e *x)
{
    char *cmd = rs_xasprintf(
        "cd '%s' && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem "
        "-days 2 -subj /CN=e2e-ca 2>/dev/null >/dev/null && "
        "openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr "
        "-subj /CN=127.0.0.1 2>/dev/null >/dev/null && "
        "printf 'subjectAltName=IP:127.0.0.1,DNS:kube.e2e.test\\n' > san.ext && "
        "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
        "-out server.pem -days 2 -extfile san.ext 2>/dev/null >/dev/null && "
        "openssl req -x509 -newkey rsa:2048 -nodes -keyout client.key -out client.pem -days 2 "
        "-subj /CN=deploy-bot -CA ca.pem -CAkey ca.key -addext extendedKeyUsage=clientAuth "
        "2>/dev/null >/dev/null",
        x->dir);
    ck_assert_msg(system(cmd) == 0, "openssl could not make the test CA");
    free(cmd);
}

/* The kubeconfig(s), the exec plugin, the secret file and decrypt command,
 * the talosconfig and the stub talosctl. */
static void live_files(e2e *x)
{
    char p[512], *t;
    snprintf(p, sizeof p, "%s/bin", x->dir);
    mkdir(p, 0700);
    t = rs_xasprintf("cp '%s/tests/talosctl' '%s/bin/talosctl'", x->src, x->dir);
    ck_assert_int_eq(system(t), 0);
    free(t);
    snprintf(p, sizeof p, "%s/talosconfig", x->dir);
    t = rs_xasprintf("{\"context\":\"sim\",\"contexts\":{\"sim\":{\"endpoints\":[\"%s\"],"
                     "\"reassert-stub\":{\"record\":\"%s/talos.rec\","
                     "\"token-file\":\"%s/kube.token\"}}}}\n",
                     x->url, x->dir, x->dir);
    write_file(p, t, 0600);
    free(t);
    if (x->v == V_BEARER) {
        /* KUBECONFIG = a.yaml:b.yaml — contexts in one, the rest in the
         * other: kubectl's merge must find both. */
        snprintf(p, sizeof p, "%s/a.yaml", x->dir);
        write_file(p,
                   "current-context: sim\ncontexts:\n- name: sim\n  context: {cluster: sim, "
                   "user: bot}\n",
                   0600);
        snprintf(p, sizeof p, "%s/b.yaml", x->dir);
        t = rs_xasprintf("current-context: other\nclusters:\n- name: sim\n  cluster: {server: "
                         "\"%s\", certificate-authority: ca.pem}\nusers:\n- name: bot\n  user: "
                         "{tokenFile: kube.token}\n",
                         x->url);
        write_file(p, t, 0600);
        free(t);
    } else if (x->v == V_TLS) {
        char ca[256];
        snprintf(ca, sizeof ca, "%s/ca.pem", x->dir);
        char *pem = read_file(ca);
        char *b64 = base64_encode(pem, strlen(pem));
        snprintf(ca, sizeof ca, "%s/client.pem", x->dir);
        char *cpem = read_file(ca);
        char *c64 = base64_encode(cpem, strlen(cpem));
        snprintf(ca, sizeof ca, "%s/client.key", x->dir);
        char *kpem = read_file(ca);
        char *k64 = base64_encode(kpem, strlen(kpem));
        snprintf(p, sizeof p, "%s/kubeconfig", x->dir);
        t = rs_xasprintf(
            "apiVersion: v1\nkind: Config\ncurrent-context: tls\nclusters:\n"
            "- name: tls\n  cluster:\n    server: %s\n    tls-server-name: kube.e2e.test\n    "
            "certificate-authority-data: %s\nusers:\n- name: bot\n  user: {"
            "client-certificate-data: %s, client-key-data: %s}\ncontexts:\n- name: tls\n"
            "  context: {cluster: tls, user: bot}\n",
            x->url, b64, c64, k64);
        write_file(p, t, 0600);
        free(t);
        free(b64);
        free(pem);
        free(c64);
        free(cpem);
        free(k64);
        free(kpem);
    } else {
        snprintf(p, sizeof p, "%s/plugin.sh", x->dir);
        t = rs_xasprintf("#!/bin/sh\n[ \"$E2E_PLUGIN_MODE\" = ok ] || exit 3\n"
                         "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
                         "\"kind\":\"ExecCredential\",\"status\":{\"token\":\"%%s\","
                         "\"expirationTimestamp\":\"2099-01-01T00:00:00Z\"}}' "
                         "\"$(cat '%s/kube.token')\"\n",
                         x->dir);
        write_file(p, t, 0700);
        free(t);
        snprintf(p, sizeof p, "%s/kubeconfig", x->dir);
        t = rs_xasprintf("apiVersion: v1\nkind: Config\ncurrent-context: ex\nclusters:\n"
                         "- name: ex\n  cluster: {server: \"%s\", certificate-authority: ca.pem}\n"
                         "users:\n- name: plugin\n"
                         "  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
                         "      command: ./plugin.sh\n      interactiveMode: Never\n"
                         "      env:\n      - {name: E2E_PLUGIN_MODE, value: ok}\n"
                         "contexts:\n- name: ex\n  context: {cluster: ex, user: plugin}\n",
                         x->url);
        write_file(p, t, 0600);
        free(t);
    }
}

/* The world (and its twin for the in-process run), the desired credential
 * as a SOPS-shaped file plus the command that "decrypts" it. */
static void e2e_start(e2e *x, const char *scenario, variant v)
{
    memset(x, 0, sizeof *x);
    x->v = v;
    x->bin = bin_path();
    x->src = getenv("REASSERT_SRC") ? getenv("REASSERT_SRC") : ".";
    snprintf(x->dir, sizeof x->dir, "/tmp/test_live_e2e.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(x->dir));
    char path[4096];
    snprintf(path, sizeof path, "%s/scenarios/%s", x->src, scenario);
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(sc_load(path, &x->sc, &e) == RS_OK, "%s", e.msg);
    char *db = tt_scenario_world(scenario);
    snprintf(x->world, sizeof x->world, "%s/world.db", x->dir);
    snprintf(x->inproc, sizeof x->inproc, "%s/inproc.db", x->dir);
    copy_file(db, x->world);
    copy_file(db, x->inproc);
    unlink(db);
    free(db);
    snprintf(x->tmp_live, sizeof x->tmp_live, "%s/tl", x->dir);
    snprintf(x->tmp_in, sizeof x->tmp_in, "%s/ti", x->dir);
    mkdir(x->tmp_live, 0700);
    mkdir(x->tmp_in, 0700);
    sim_world *w = NULL;
    ck_assert(sim_world_open(x->world, &w, &e) == RS_OK);
    char *cred = NULL, *cipher = NULL;
    ck_assert(sim_world_credential(w, x->sc->desired, &cred, &cipher, &e) == RS_OK);
    sim_world_close(w);
    cJSON *doc = cJSON_Parse(cred);
    char *pwtext = cJSON_GetStringValue(cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "auths"), "ghcr.io"), "password"));
    snprintf(x->pass, sizeof x->pass, "%s", pwtext ? pwtext : "");
    cJSON_Delete(doc);
    snprintf(path, sizeof path, "%s/cred.json", x->dir);
    write_file(path, cred, 0600);
    char *t = rs_xasprintf("stringData:\n  ghcr_dockerconfigjson: \"%s\"\n", cipher);
    snprintf(path, sizeof path, "%s/secret.enc.yaml", x->dir);
    write_file(path, t, 0600);
    free(t);
    snprintf(path, sizeof path, "%s/decrypt.sh", x->dir);
    write_file(path,
               "#!/bin/sh\n# the SOPS file is $1; the plaintext lives beside it\n"
               "exec cat \"$(dirname \"$1\")/cred.json\"\n",
               0700);
    free(cred);
    free(cipher);
    snprintf(path, sizeof path, "%s/kube.token", x->dir);
    write_file(path, KUBE_TOKEN "\n", 0600);
    snprintf(path, sizeof path, "%s/bao.token", x->dir);
    write_file(path, BAO_TOKEN "\n", 0600);
    make_tls(x);
}

static void e2e_end(e2e *x)
{
    serve_stop(x);
    sc_free(x->sc);
    char *cmd = rs_xasprintf("rm -rf '%s'", x->dir);
    ck_assert_int_eq(system(cmd), 0);
    free(cmd);
}

/* The run's `before:` events, applied to both worlds alike. */
static void apply_before(e2e *x, const sc_run *run)
{
    const char *dbs[2] = {x->world, x->inproc};
    for (int i = 0; i < 2; i++) {
        sim_world *w = NULL;
        rs_err e;
        rs_err_clear(&e);
        ck_assert(sim_world_open(dbs[i], &w, &e) == RS_OK);
        for (size_t k = 0; k < run->n_before; k++)
            ck_assert_msg(sim_world_apply_event(w, &run->before[k], &e) == RS_OK, "%s", e.msg);
        sim_world_close(w);
    }
}

/* argv: reassert run <head...> <the run's args, {tmp} -> tmp> --output json */
static char **run_argv(e2e *x, const sc_run *run, const char *const *head, const char *tmp)
{
    char **argv = rs_xcalloc(64 + run->n_args, sizeof *argv);
    size_t n = 0;
    argv[n++] = rs_xstrdup(x->bin);
    argv[n++] = rs_xstrdup("run");
    for (size_t i = 0; head[i]; i++)
        argv[n++] = rs_xstrdup(head[i]);
    for (size_t i = 0; i < run->n_args; i++) {
        const char *a = run->args[i], *at = strstr(a, "{tmp}");
        argv[n++] = at ? rs_xasprintf("%.*s%s%s", (int)(at - a), a, tmp, at + 5) : rs_xstrdup(a);
    }
    argv[n++] = rs_xstrdup("--output");
    argv[n++] = rs_xstrdup("json");
    return argv;
}

static void argv_free(char **argv)
{
    for (size_t i = 0; argv[i]; i++)
        free(argv[i]);
    free(argv);
}

static cJSON *run_inproc(e2e *x, const sc_run *run, const char *db, const char *tmp, int *code)
{
    char transport[256], out[256], err[256];
    snprintf(transport, sizeof transport, "sim:%s", db);
    const char *head[] = {"--transport", transport, "--desired", x->sc->desired, NULL};
    char **argv = run_argv(x, run, head, tmp);
    snprintf(out, sizeof out, "%s/in.out", x->dir);
    snprintf(err, sizeof err, "%s/in.err", x->dir);
    *code = spawn(argv, NULL, out, err);
    argv_free(argv);
    char *text = read_file(out);
    cJSON *doc = cJSON_Parse(text);
    ck_assert_msg(doc, "in-process run printed no JSON: %s", text);
    free(text);
    return doc;
}

static cJSON *run_live(e2e *x, const sc_run *run, int *code)
{
    char kc[256], secret[256], decrypt[256], talosconfig[256], out[256], err[256];
    snprintf(kc, sizeof kc, "%s/kubeconfig", x->dir);
    snprintf(secret, sizeof secret, "%s/secret.enc.yaml", x->dir);
    snprintf(decrypt, sizeof decrypt, "%s/decrypt.sh {file}", x->dir);
    snprintf(talosconfig, sizeof talosconfig, "%s/talosconfig", x->dir);
    const char *head_kc[] = {"--transport",   "live",      "--kubeconfig",        kc,
                             "--secret-file", secret,      "--decrypt-command",   decrypt,
                             "--talosconfig", talosconfig, "--test-facade-clock", NULL};
    const char *head_env[] = {"--transport",          "live",  "--secret-file",       secret,
                              "--decrypt-command",    decrypt, "--talosconfig",       talosconfig,
                              "--openbao-token-file", NULL,    "--test-facade-clock", NULL};
    char baofile[256];
    snprintf(baofile, sizeof baofile, "%s/bao.token", x->dir);
    head_env[9] = baofile;
    char **argv = run_argv(x, run, x->v == V_BEARER ? head_env : head_kc, x->tmp_live);
    char *env[16];
    size_t n = 0;
    env[n++] = rs_xasprintf("PATH=%s/bin:%s", x->dir, getenv("PATH") ? getenv("PATH") : "/bin");
    env[n++] = rs_xasprintf("HOME=%s", x->dir);
    env[n++] = rs_xasprintf("REASSERT_REGISTRY_URL=%s", x->url);
    env[n++] = rs_xasprintf("REASSERT_REGISTRY_CACERT=%s/ca.pem", x->dir);
    /* the stub talosctl (Python) trusts the test CA through OpenSSL's own
     * variable, which the driver's allow-list passes on */
    env[n++] = rs_xasprintf("SSL_CERT_FILE=%s/ca.pem", x->dir);
    if (x->v == V_BEARER) {
        env[n++] =
            rs_xasprintf("KUBECONFIG=%s/a.yaml:%s/missing.yaml:%s/b.yaml", x->dir, x->dir, x->dir);
        env[n++] = rs_xasprintf("BAO_ADDR=%s", x->url);
        env[n++] = rs_xasprintf("BAO_CACERT=%s/ca.pem", x->dir);
    } else if (x->v == V_TLS) {
        env[n++] = rs_xasprintf("BAO_ADDR=%s", x->url);
        env[n++] = rs_xasprintf("BAO_TOKEN=%s", BAO_TOKEN);
        env[n++] = rs_xasprintf("BAO_CACERT=%s/ca.pem", x->dir);
    } else {
        env[n++] = rs_xasprintf("VAULT_ADDR=%s", x->url);
        env[n++] = rs_xasprintf("VAULT_TOKEN=%s", BAO_TOKEN);
        env[n++] = rs_xasprintf("VAULT_CACERT=%s/ca.pem", x->dir);
    }
    env[n] = NULL;
    snprintf(out, sizeof out, "%s/live.out", x->dir);
    snprintf(err, sizeof err, "%s/live.err", x->dir);
    *code = spawn(argv, env, out, err);
    for (size_t i = 0; i < n; i++)
        free(env[i]);
    argv_free(argv);
    char *text = read_file(out), *etext = read_file(err);
    /* H106: no secret in what the run printed. */
    ck_assert_msg(!strstr(text, KUBE_TOKEN) && !strstr(etext, KUBE_TOKEN), "kube token printed");
    ck_assert_msg(!strstr(text, BAO_TOKEN) && !strstr(etext, BAO_TOKEN), "OpenBao token printed");
    ck_assert_msg(!strstr(text, x->pass) && !strstr(etext, x->pass), "password printed");
    cJSON *doc = cJSON_Parse(text);
    ck_assert_msg(doc, "live run printed no JSON: %s %s", text, etext);
    free(text);
    free(etext);
    return doc;
}

/* exit, outcome, fence_taken and every counter must be equal. */
static void same_result(const char *what, const cJSON *live, const cJSON *in)
{
    static const char *const keys[] = {"exit", "outcome", "fence_taken", "counters",
                                       "annotation_only_nodes"};
    for (size_t i = 0; i < RS_ARRAY_LEN(keys); i++) {
        const cJSON *a = cJSON_GetObjectItem(live, keys[i]), *b = cJSON_GetObjectItem(in, keys[i]);
        char *sa = cJSON_PrintUnformatted(a), *sb = cJSON_PrintUnformatted(b);
        ck_assert_msg(a && b && cJSON_Compare(a, b, true), "%s: %s differs:\n live %s\n sim  %s",
                      what, keys[i], sa, sb);
        free(sa);
        free(sb);
    }
    ck_assert_ptr_nonnull(cJSON_GetObjectItem(cJSON_GetObjectItem(live, "counters"), "api_calls"));
}

static char *table_dump(const char *db, const char *sql)
{
    sqlite3 *h = NULL;
    ck_assert_int_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
    char *out = rs_xstrdup("");
    while (sqlite3_step(st) == SQLITE_ROW) {
        for (int c = 0; c < sqlite3_column_count(st); c++) {
            const unsigned char *v = sqlite3_column_text(st, c);
            char *n = rs_xasprintf("%s%s|", out, v ? (const char *)v : "NULL");
            free(out);
            out = n;
        }
        char *n = rs_xasprintf("%s\n", out);
        free(out);
        out = n;
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    return out;
}

static void same_world(e2e *x)
{
    static const char *const sql[] = {
        "SELECT * FROM objects ORDER BY kind, ns, name", "SELECT * FROM openbao ORDER BY 1",
        "SELECT * FROM talos ORDER BY 1", "SELECT * FROM counters ORDER BY 1"};
    for (size_t i = 0; i < RS_ARRAY_LEN(sql); i++) {
        char *a = table_dump(x->world, sql[i]), *b = table_dump(x->inproc, sql[i]);
        ck_assert_msg(strcmp(a, b) == 0,
                      "the worlds differ after the runs: %s\nlive:\n%.3000s\nsim:\n%.3000s", sql[i],
                      a, b);
        ck_assert_int_gt((int)strlen(a), 0);
        free(a);
        free(b);
    }
}

/* Every run of the scenario: in process on both worlds for runs before
 * `first_live` (the live world stays the twin), live from there on. */
static void e2e_scenario(const char *file, variant v, size_t first_live)
{
    e2e x;
    e2e_start(&x, file, v);
    for (size_t r = 0; r < x.sc->n_runs; r++) {
        const sc_run *run = &x.sc->runs[r];
        apply_before(&x, run);
        int in_code = 0, live_code = 0;
        cJSON *in = run_inproc(&x, run, x.inproc, x.tmp_in, &in_code);
        cJSON *live;
        if (r < first_live) {
            live = run_inproc(&x, run, x.world, x.tmp_live, &live_code);
        } else {
            serve_start(&x);
            live_files(&x);
            live = run_live(&x, run, &live_code);
            serve_stop(&x);
        }
        char what[256];
        snprintf(what, sizeof what, "%s run %s", file, run->name);
        ck_assert_msg(live_code == in_code, "%s: live exit %d, in-process %d", what, live_code,
                      in_code);
        same_result(what, live, in);
        cJSON_Delete(live);
        cJSON_Delete(in);
    }
    /* --fences: the read-only report, live and in process, equal too. */
    char *fargs[] = {"--fences"};
    sc_run fences = {.name = "fences", .args = fargs, .n_args = 1};
    int in_code = 0, live_code = 0;
    cJSON *in = run_inproc(&x, &fences, x.inproc, x.tmp_in, &in_code);
    serve_start(&x);
    live_files(&x);
    cJSON *live = run_live(&x, &fences, &live_code);
    serve_stop(&x);
    ck_assert_int_eq(live_code, in_code);
    same_result("--fences", live, in);
    cJSON_Delete(live);
    cJSON_Delete(in);
    same_world(&x);
    char rec[256];
    snprintf(rec, sizeof rec, "%s/talos.rec", x.dir);
    char *t = read_file(rec);
    ck_assert_msg(t[0], "the stub talosctl was never run");
    ck_assert_msg(!strstr(t, x.pass) && !strstr(t, KUBE_TOKEN) && !strstr(t, BAO_TOKEN),
                  "a credential reached talosctl's argv or environment");
    free(t);
    e2e_end(&x);
}

static bool quick(void)
{
    const char *q = getenv("REASSERT_E2E_QUICK");
    return q && q[0] == '1';
}

START_TEST(test_live_rotation_and_no_drift_match_the_sim)
{
    /* Stage (everything drifted: fence, restart, six reboots) and the
     * no-drift Reassert, both live. The sanitizer build runs the Stage in
     * process and only the Reassert live (it is several times slower). */
    e2e_scenario("two-run-stage-reassert.yaml", V_BEARER, quick() ? 1 : 0);
}
END_TEST

START_TEST(test_live_over_tls_with_a_test_ca_matches_the_sim)
{
    e2e_scenario("two-run-stage-reassert.yaml", V_TLS, 1);
}
END_TEST

START_TEST(test_live_with_an_exec_plugin_matches_the_sim)
{
    e2e_scenario("two-run-stage-reassert.yaml", V_EXEC, 1);
}
END_TEST

START_TEST(test_live_stale_openbao_seed_matches_the_sim)
{
    e2e_scenario("fanout/stale-openbao-seed.yaml", V_BEARER, 1);
}
END_TEST

START_TEST(test_live_partial_talos_apply_matches_the_sim)
{
    e2e_scenario("node/partial-talos-apply.yaml", V_BEARER, 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("live_e2e");
    TCase *tc = tcase_create("e2e");
    tcase_set_timeout(tc, 900);
    tcase_add_test(tc, test_live_rotation_and_no_drift_match_the_sim);
    tcase_add_test(tc, test_live_over_tls_with_a_test_ca_matches_the_sim);
    tcase_add_test(tc, test_live_with_an_exec_plugin_matches_the_sim);
    tcase_add_test(tc, test_live_stale_openbao_seed_matches_the_sim);
    tcase_add_test(tc, test_live_partial_talos_apply_matches_the_sim);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
