/*
 * cmd_serve.c — `reassert sim serve`: the flags, the files they name
 * (token files and TLS material are read here, bounded, and never echoed),
 * then the façade (sim/serve/) until SIGTERM or SIGINT.
 *
 * The chosen address is the first line on stdout, flushed before any request
 * can be answered, so a test can start the server on port 0 and read where
 * it listens without racing for a port.
 */
#include "cli/cli.h"

#include "core/cred/cred.h"
#include "core/live/live_text.h"
#include "sim/serve/serve.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct serve_args {
    const char *db, *scenario, *run, *listen;
    const char *tls_cert, *tls_key, *token_file, *bao_token_file, *bao_namespace;
    const char *client_ca, *conns_per_client, *header_timeout, *idle_timeout, *call_log_max;
} serve_args;

static int serve_args_parse(int argc, char **argv, serve_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 0; i < argc; i++) {
        const char *f = argv[i];
        const char **slot = strcmp(f, "--db") == 0                           ? &a->db
                            : strcmp(f, "--scenario") == 0                   ? &a->scenario
                            : strcmp(f, "--run") == 0                        ? &a->run
                            : strcmp(f, "--listen") == 0                     ? &a->listen
                            : strcmp(f, "--tls-cert") == 0                   ? &a->tls_cert
                            : strcmp(f, "--tls-key") == 0                    ? &a->tls_key
                            : strcmp(f, "--token-file") == 0                 ? &a->token_file
                            : strcmp(f, "--openbao-token-file") == 0         ? &a->bao_token_file
                            : strcmp(f, "--openbao-namespace") == 0          ? &a->bao_namespace
                            : strcmp(f, "--client-ca") == 0                  ? &a->client_ca
                            : strcmp(f, "--max-connections-per-client") == 0 ? &a->conns_per_client
                            : strcmp(f, "--header-timeout") == 0             ? &a->header_timeout
                            : strcmp(f, "--idle-timeout") == 0               ? &a->idle_timeout
                            : strcmp(f, "--call-log-max") == 0               ? &a->call_log_max
                                                                             : NULL;
        if (!slot) {
            cli_unknown_arg_say("sim serve", f);
            return RS_USAGE;
        }
        if (cli_no_value(argc, argv, i)) {
            fprintf(stderr, "reassert sim serve: %s needs a value\n", f);
            return RS_USAGE;
        }
        *slot = argv[++i];
    }
    if (!a->db) {
        fprintf(stderr, "reassert sim serve: --db is required\n%s", cli_usage_serve);
        return RS_USAGE;
    }
    if (!a->tls_cert != !a->tls_key) {
        fprintf(stderr, "reassert sim serve: --tls-cert and --tls-key go together\n");
        return RS_USAGE;
    }
    if (a->client_ca && !a->tls_cert) {
        fprintf(stderr, "reassert sim serve: --client-ca needs --tls-cert and --tls-key\n");
        return RS_USAGE;
    }
    return RS_OK;
}

/* A count flag: a whole number from 1 to max, else a usage error naming
 * the flag. Absent: 0 (the default). */
static bool serve_count(const char *flag, const char *text, long max, long *out)
{
    *out = 0;
    if (!text) return true;
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (!text[0] || *end || errno || v < 1 || v > max) {
        char *t = out_escape(text, false);
        fprintf(stderr, "reassert sim serve: %s '%s': give a whole number from 1 to %ld\n", flag, t,
                max);
        free(t);
        return false;
    }
    *out = v;
    return true;
}

/* A whole small file (at most max bytes, no NUL). trim drops trailing
 * blanks, as a token file written by `echo` ends in a newline. NULL with a
 * message on stderr (which names the file, never its content). */
static char *serve_read_file(const char *flag, const char *path, size_t max, bool trim)
{
    char why_open[160];
    FILE *f = live_fopen_regular(path, NULL, why_open, sizeof why_open); /* never blocks */
    if (!f) {
        char *where = out_escape(path, false);
        fprintf(stderr, "reassert sim serve: %s %s: %s\n", flag, where, why_open);
        free(where);
        return NULL;
    }
    char *buf = rs_xmalloc(max + 2);
    size_t n = fread(buf, 1, max + 1, f);
    bool err = ferror(f) != 0;
    fclose(f);
    const char *why = err ? "cannot be read" : n > max ? "is too large" : NULL;
    buf[n] = '\0';
    if (!why && memchr(buf, '\0', n)) why = "contains a NUL byte";
    while (!why && trim && n > 0 && strchr(" \t\r\n", buf[n - 1]))
        buf[--n] = '\0';
    if (!why && n == 0) why = "is empty";
    if (why) {
        char *where = out_escape(path, false);
        fprintf(stderr, "reassert sim serve: %s %s %s\n", flag, where, why);
        free(where);
        cred_bytes_wipe_free(buf, max + 2);
        return NULL;
    }
    return buf;
}

static void serve_say(const char *sentence, void *arg)
{
    (void)arg;
    char *text = out_escape(sentence, false);
    fprintf(stderr, "reassert sim serve: %s\n", text);
    free(text);
}

/* An entry of the run that never fired, or a `during:` check that failed. */
static void serve_say_unfired(const char *sentence, void *arg)
{
    (void)arg;
    char *text = out_escape(sentence, false);
    fprintf(stderr, "reassert sim serve: %s\n", text);
    free(text);
}

/* Blocks the stop signals in every thread (the daemon's inherits the mask),
 * so sigwait below is the one place they arrive. */
static void serve_block_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, set, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static int serve_run(const serve_args *a, serve_config *cfg)
{
    sigset_t set;
    serve_block_signals(&set);
    rs_err e;
    rs_err_clear(&e);
    serve_server *s = NULL;
    if (serve_start(cfg, &s, &e) != RS_OK) {
        char *msg = out_escape(e.msg, false);
        fprintf(stderr, "reassert sim serve: %s\n", msg);
        free(msg);
        return e.code;
    }
    printf("%s\n", serve_url(s));
    fflush(stdout);
    char *db = out_escape(a->db, false);
    fprintf(stderr, "reassert sim serve: serving %s at %s (SIGTERM or SIGINT stops)\n", db,
            serve_url(s));
    free(db);
    int sig = 0;
    while (sigwait(&set, &sig) != 0) {
    }
    size_t unfired = serve_stop(s, serve_say_unfired, NULL);
    fprintf(stderr, "reassert sim serve: stopped (%s)\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    return unfired ? RS_FAILED : RS_OK;
}

int cmd_serve(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(cli_usage_serve, stdout);
        return RS_OK;
    }
    serve_args a;
    int code = serve_args_parse(argc, argv, &a);
    if (code != RS_OK) return code;
    serve_config cfg = {.db_path = a.db,
                        .scenario_path = a.scenario,
                        .run_name = a.run,
                        .bao_namespace = a.bao_namespace,
                        .say = serve_say};
    long conns = 0, header = 0, idle = 0, log_max = 0;
    if (!serve_count("--max-connections-per-client", a.conns_per_client, SERVE_CONNS_MAX, &conns) ||
        !serve_count("--header-timeout", a.header_timeout, 3600, &header) ||
        !serve_count("--idle-timeout", a.idle_timeout, 3600, &idle) ||
        !serve_count("--call-log-max", a.call_log_max, 100000000L, &log_max))
        return RS_USAGE;
    cfg.max_conns_per_client = (unsigned)conns;
    cfg.header_timeout_s = (unsigned)header;
    cfg.idle_timeout_s = (unsigned)idle;
    cfg.call_log_max = log_max;
    char host[64];
    rs_err e;
    rs_err_clear(&e);
    if (serve_parse_listen(a.listen ? a.listen : "127.0.0.1:0", host, sizeof host, &cfg.port, &e) !=
        RS_OK) {
        char *msg = out_escape(e.msg, false); /* it quotes argv */
        fprintf(stderr, "reassert sim serve: %s\n", msg);
        free(msg);
        return e.code;
    }
    cfg.host = host;
    char *kube = NULL, *bao = NULL, *cert = NULL, *key = NULL, *ca = NULL;
    code = RS_OK;
    if (a.token_file &&
        !(kube = serve_read_file("--token-file", a.token_file, SERVE_SECRET_MAX, true)))
        code = RS_DATAERR;
    if (code == RS_OK && a.bao_token_file &&
        !(bao = serve_read_file("--openbao-token-file", a.bao_token_file, SERVE_SECRET_MAX, true)))
        code = RS_DATAERR;
    if (code == RS_OK && a.tls_cert &&
        (!(cert = serve_read_file("--tls-cert", a.tls_cert, SERVE_PEM_MAX, false)) ||
         !(key = serve_read_file("--tls-key", a.tls_key, SERVE_PEM_MAX, false))))
        code = RS_DATAERR;
    if (code == RS_OK && a.client_ca &&
        !(ca = serve_read_file("--client-ca", a.client_ca, SERVE_PEM_MAX, false)))
        code = RS_DATAERR;
    if (code == RS_OK) {
        cfg.kube_token = kube;
        cfg.kube_token_path = a.token_file;
        cfg.bao_token = bao;
        cfg.tls_cert_pem = cert;
        cfg.tls_key_pem = key;
        cfg.client_ca_pem = ca;
        code = serve_run(&a, &cfg);
    }
    cred_text_wipe_free(kube);
    cred_text_wipe_free(bao);
    free(cert);
    free(ca);
    cred_text_wipe_free(key);
    return code;
}
