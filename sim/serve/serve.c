/*
 * serve.c — starting and stopping the façade: the listen address (loopback
 * only), the world and the scenario run whose faults and `during:` entries
 * apply, the sim root and the door over it, the daemon.
 *
 * The one idea: `sim serve` exposes a world that holds credentials and
 * accepts writes, so it never listens beyond this machine — any address that
 * is not a loopback literal is refused before anything is opened.
 */
#include "sim/serve/serve_int.h"

#include "core/config.h"
#include "core/cred/cred.h"
#include "sim/check/check_expect.h"
#include "sim/store/store.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

static rs_code listen_port(const char *text, int *port, rs_err *e)
{
    if (!text[0] || strlen(text) > 5 || strspn(text, "0123456789") != strlen(text))
        return rs_fail(e, RS_USAGE, "--listen: the port must be a number from 0 to 65535");
    long v = strtol(text, NULL, 10);
    if (v > 65535)
        return rs_fail(e, RS_USAGE, "--listen: the port must be a number from 0 to 65535");
    *port = (int)v;
    return RS_OK;
}

rs_code serve_parse_listen(const char *text, char *host, size_t hostlen, int *port, rs_err *e)
{
    char addr[64];
    const char *port_text;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (!close || close[1] != ':' || (size_t)(close - text - 1) >= sizeof addr)
            return rs_fail(e, RS_USAGE, "--listen: expected [::1]:PORT");
        snprintf(addr, sizeof addr, "%.*s", (int)(close - text - 1), text + 1);
        port_text = close + 2;
    } else {
        const char *colon = strrchr(text, ':');
        if (!colon || (size_t)(colon - text) >= sizeof addr)
            return rs_fail(e, RS_USAGE, "--listen: expected 127.0.0.1:PORT");
        snprintf(addr, sizeof addr, "%.*s", (int)(colon - text), text);
        port_text = colon + 1;
    }
    if (listen_port(port_text, port, e) != RS_OK) return e->code;
    if (strcmp(addr, "localhost") == 0) snprintf(addr, sizeof addr, "127.0.0.1");
    struct in_addr v4;
    struct in6_addr v6;
    bool loopback = false;
    if (inet_pton(AF_INET, addr, &v4) == 1)
        loopback = (ntohl(v4.s_addr) >> 24) == 127;
    else if (inet_pton(AF_INET6, addr, &v6) == 1)
        loopback = IN6_IS_ADDR_LOOPBACK(&v6);
    else
        return rs_fail(e, RS_USAGE,
                       "--listen: '%.64s' is not an address (give 127.0.0.1:PORT or [::1]:PORT)",
                       addr);
    if (!loopback)
        return rs_fail(e, RS_USAGE,
                       "--listen: %s is not a loopback address; sim serve listens on loopback "
                       "only (127.0.0.0/8 or ::1)",
                       addr);
    snprintf(host, hostlen, "%s", addr);
    return RS_OK;
}

static rs_code serve_open_run(serve_server *s, const serve_config *cfg, rs_err *e)
{
    if (cfg->scenario_path) {
        if (sc_load(cfg->scenario_path, &s->sc, e) != RS_OK) return e->code;
        if (cfg->run_name) {
            for (size_t i = 0; i < s->sc->n_runs && !s->run; i++)
                if (strcmp(s->sc->runs[i].name, cfg->run_name) == 0) s->run = &s->sc->runs[i];
            if (!s->run)
                return rs_fail(e, RS_USAGE, "--run: scenario %s has no run named '%.64s'",
                               cfg->scenario_path, cfg->run_name);
        } else if (s->sc->n_runs > 0) {
            s->run = &s->sc->runs[0];
        }
    }
    s->run_name = rs_xstrdup(s->run ? s->run->name : cfg->run_name ? cfg->run_name : "serve");
    if (sim_world_open(cfg->db_path, &s->w, e) != RS_OK) return e->code;
    rs_config wc;
    memset(&wc, 0, sizeof wc);
    if (sim_world_config(s->w, &wc, e) != RS_OK) {
        rs_config_free(&wc);
        return e->code;
    }
    s->registry_host = rs_xstrdup(wc.registry_host ? wc.registry_host : "");
    rs_config_free(&wc);
    s->check_mark = expect_during_mark(s->w);
    s->sim = sim_transport_open(s->w, s->run_name, s->run);
    serve_door_init(s);
    return RS_OK;
}

static void serve_free(serve_server *s)
{
    if (!s) return;
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->changed);
    if (s->sim && s->sim->close) s->sim->close(s->sim);
    sim_world_close(s->w);
    sc_free(s->sc);
    free(s->run_name);
    free(s->url);
    free(s->registry_host);
    if (s->kube_token) cred_text_wipe_free(s->kube_token);
    free(s->kube_token_path);
    if (s->bao_token) cred_text_wipe_free(s->bao_token);
    free(s->bao_namespace);
    free(s);
}

/* Binds and listens here, not in the daemon, so the URL (which the
 * registry challenge names) is known before the first request can arrive. */
static int serve_listen(const char *host, int port, int *bound, rs_err *e)
{
    bool ipv6 = strchr(host, ':') != NULL;
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t len;
    if (ipv6) {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        inet_pton(AF_INET6, host, &a6->sin6_addr);
        len = sizeof *a6;
    } else {
        struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        inet_pton(AF_INET, host, &a4->sin_addr);
        len = sizeof *a4;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 1024) != 0 ||
        getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
        int err = errno;
        if (fd >= 0) close(fd);
        rs_fail(e, RS_FAILED, "cannot listen on %s port %d: %s", host, port, strerror(err));
        return -1;
    }
    *bound = ntohs(ipv6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                        : ((struct sockaddr_in *)&ss)->sin_port);
    return fd;
}

/* Room for SERVE_CONNS_MAX connections: the soft limit on descriptors
 * raised towards the hard one (a shell's default 1024 would refuse the
 * 1021st connection before any limit of ours applies). */
static void serve_raise_fd_limit(void)
{
    struct rlimit rl;
    rlim_t want = SERVE_CONNS_MAX + 64;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want) return;
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
}

rs_code serve_start(const serve_config *cfg, serve_server **out, rs_err *e)
{
    *out = NULL;
    if (!cfg->tls_cert_pem != !cfg->tls_key_pem)
        return rs_fail(e, RS_USAGE, "--tls-cert and --tls-key go together");
    if (cfg->client_ca_pem && !cfg->tls_cert_pem)
        return rs_fail(e, RS_USAGE, "--client-ca needs --tls-cert and --tls-key (HTTPS)");
    serve_server *s = rs_xcalloc(1, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->changed, NULL);
    s->header_timeout_s = cfg->header_timeout_s ? cfg->header_timeout_s : SERVE_HEADER_TIMEOUT_S;
    s->idle_timeout_s = cfg->idle_timeout_s ? cfg->idle_timeout_s : SERVE_IDLE_TIMEOUT_S;
    s->conns_per_client =
        cfg->max_conns_per_client ? cfg->max_conns_per_client : SERVE_CONNS_PER_CLIENT;
    s->call_log_max = cfg->call_log_max > 0 ? cfg->call_log_max : SERVE_CALL_LOG_MAX;
    s->client_ca = cfg->client_ca_pem != NULL;
    s->say = cfg->say;
    s->say_arg = cfg->say_arg;
    s->kube_token = cfg->kube_token ? rs_xstrdup(cfg->kube_token) : NULL;
    s->kube_token_path = cfg->kube_token_path ? rs_xstrdup(cfg->kube_token_path) : NULL;
    s->bao_token = cfg->bao_token ? rs_xstrdup(cfg->bao_token) : NULL;
    s->bao_namespace = cfg->bao_namespace ? rs_xstrdup(cfg->bao_namespace) : NULL;
    bool tls = cfg->tls_cert_pem != NULL;
    if (serve_open_run(s, cfg, e) != RS_OK) {
        serve_free(s);
        return e->code;
    }
    serve_raise_fd_limit();
    int port = 0;
    int fd = serve_listen(cfg->host, cfg->port, &port, e);
    if (fd < 0) {
        serve_free(s);
        return e->code;
    }
    bool ipv6 = strchr(cfg->host, ':') != NULL;
    s->url = ipv6 ? rs_xasprintf("%s://[%s]:%d", tls ? "https" : "http", cfg->host, port)
                  : rs_xasprintf("%s://%s:%d", tls ? "https" : "http", cfg->host, port);
    s->rev_seen = store_revision(sim_world_store(s->w));
    if (store_watch_enable(sim_world_db(s->w)) != 0) {
        close(fd);
        serve_free(s);
        return rs_fail(e, RS_FAILED, "the world refused the watch log");
    }
    s->daemon = serve_http_start(s, fd, cfg->tls_cert_pem, cfg->tls_key_pem, cfg->client_ca_pem);
    if (!s->daemon) {
        close(fd);
        serve_free(s);
        return rs_fail(e, tls ? RS_DATAERR : RS_FAILED, "cannot serve on %s port %d%s", cfg->host,
                       port, tls ? ": the TLS certificate, key or client CA was refused" : "");
    }
    *out = s;
    return RS_OK;
}

const char *serve_url(const serve_server *s)
{
    return s->url;
}

size_t serve_stop(serve_server *s, void (*say)(const char *sentence, void *arg), void *arg)
{
    if (!s) return 0;
    serve_http_stop(s);
    char msg[256];
    long long dropped = sim_transport_log_dropped(s->sim);
    if (dropped > 0 && s->say) {
        snprintf(msg, sizeof msg, "the call log dropped its %lld oldest calls (it keeps %ld)",
                 dropped, s->call_log_max);
        s->say(msg, s->say_arg);
    }
    if (s->tls_failures > 0 && s->say) {
        snprintf(msg, sizeof msg,
                 "%lu TLS handshakes failed (a client refused the server's certificate, sent "
                 "one that does not verify, or spoke plain HTTP)",
                 s->tls_failures);
        s->say(msg, s->say_arg);
    }
    size_t n = 0;
    char **v = sim_transport_unfired(s->sim, &n);
    for (size_t i = 0; say && i < n; i++)
        say(v[i], arg);
    sim_strings_free(v, n);
    /* A `during:` check that failed is a failed run as well. */
    cJSON *checks = cJSON_CreateArray(), *lines = cJSON_CreateArray();
    expect_during_failures(s->w, s->check_mark, s->run_name, checks, lines);
    int i = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, checks)
    {
        char *line =
            rs_xasprintf("line %d: %s", cJSON_GetArrayItem(lines, i++)->valueint, f->valuestring);
        if (say) say(line, arg);
        free(line);
        n++;
    }
    cJSON_Delete(checks);
    cJSON_Delete(lines);
    serve_free(s);
    return n;
}
