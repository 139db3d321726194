/*
 * fuzz_serve.c — `reassert sim serve` (sim/serve/) on arbitrary requests:
 * each input is the raw bytes a client sends on one connection — request
 * line, path, query string (label and field selectors, watch, dryRun,
 * resourceVersion), headers (content types, the bearer, X-Vault-Token) and
 * body (objects, JSON Patch, merge and strategic-merge patches, OpenBao
 * data) — to a server started once over a world built from a small
 * scenario, through the public serve.h door only (libmicrohttpd's parser,
 * the router, the Kubernetes, OpenBao, registry, Talos and façade handlers,
 * the body decoders and the sim root behind them).
 *
 * fuzz-seeds: none
 *
 * Properties beyond "no crash, leak, sanitizer report or hang":
 * - every connection gets an answer, an "HTTP/1.x NNN" status line, or a
 *   close (what the façade does for a transport error) within FZ_ANSWER_MS,
 *   never silence (a watch may stream after its status line);
 * - no 500: bad input is a 4xx, never the façade failing;
 * - a JSON answer (Content-Type application/json, status line and headers
 *   seen whole, Content-Length given and read) is JSON;
 * - the server still answers GET /version after every input.
 * The world accumulates what earlier inputs wrote (the server lives as long
 * as the process): libFuzzer explores states, the replay reads each input
 * once in name order from the same fresh world.
 */
#include "sim/scenario/scenario.h"
#include "sim/serve/serve.h"
#include "sim/world/world.h"
#include "tests/fuzz/fuzz_support.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>

/* Under libFuzzer's own -timeout=10 (fuzz_run.sh), for the whole input. */
#define FZ_ANSWER_MS 8000
#define FZ_READ_MAX (1u << 20)

static serve_server *fz_server;
static int fz_port;
static char fz_dir[4096];

static void fz_stop(void)
{
    if (fz_server) serve_stop(fz_server, NULL, NULL);
    fz_server = NULL;
    if (fz_dir[0]) {
        char p[4200];
        static const char *const names[] = {"world.db", "world.db-wal", "world.db-shm",
                                            "world.db-journal", "scenario.yaml"};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            snprintf(p, sizeof p, "%s/%s", fz_dir, names[i]);
            unlink(p);
        }
        rmdir(fz_dir);
    }
}

/* The world: the prod preset converged on the current credential, a
 * previous one in the catalogue (so a fan-out write has somewhere to go). */
static void fz_start(void)
{
    signal(SIGPIPE, SIG_IGN);
    const char *tmp = getenv("TMPDIR");
    snprintf(fz_dir, sizeof fz_dir, "%s/reassert-fuzz-serve-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(fz_dir)) {
        perror("fuzz: mkdtemp");
        exit(2);
    }
    atexit(fz_stop);
    char scn[4200], db[4200];
    snprintf(scn, sizeof scn, "%s/scenario.yaml", fz_dir);
    snprintf(db, sizeof db, "%s/world.db", fz_dir);
    FILE *f = fopen(scn, "w");
    if (!f ||
        fputs("name: fuzz-serve\nseed: 7\ncluster: {preset: prod, credential: current}\n"
              "desired: current\nruns:\n  - name: r\n",
              f) < 0 ||
        fclose(f) != 0) {
        perror("fuzz: scenario");
        exit(2);
    }
    sc_scenario *sc = NULL;
    rs_err e = {0};
    if (sc_load(scn, &sc, &e) != RS_OK || sim_world_build(db, sc, &e) != RS_OK) {
        fprintf(stderr, "fuzz: world: %s\n", e.msg);
        exit(2);
    }
    sc_free(sc);
    serve_config cfg = {.db_path = db, .host = "127.0.0.1", .port = 0};
    if (serve_start(&cfg, &fz_server, &e) != RS_OK) {
        fprintf(stderr, "fuzz: serve: %s\n", e.msg);
        exit(2);
    }
    const char *url = serve_url(fz_server);
    const char *colon = strrchr(url, ':');
    fz_port = colon ? atoi(colon + 1) : 0;
    if (fz_port <= 0) {
        fprintf(stderr, "fuzz: no port in %s\n", url);
        exit(2);
    }
}

/* The value of header name (case-insensitive) in the answer's head (before
 * end), or NULL. */
static const char *fz_header(const char *buf, const char *end, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = strstr(buf, "\r\n"); p && p < end; p = strstr(p + 2, "\r\n")) {
        const char *h = p + 2;
        size_t i = 0;
        while (i < n && h[i] && tolower((unsigned char)h[i]) == tolower((unsigned char)name[i]))
            i++;
        if (i == n && h[n] == ':') {
            h += n + 1;
            while (*h == ' ')
                h++;
            return h;
        }
    }
    return NULL;
}

static long fz_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Sends data on a fresh connection, half-closes it, and reads until the
 * server closes it — having answered every request the bytes held (a
 * client may pipeline several; one left running would hold the next
 * input's answer) — or the deadline passes, or the answer is a stream
 * (chunked, no length: a watch). Returns the bytes read (*len); *closed
 * when the server closed the connection. */
/* Every wait below is resumed after a signal: libFuzzer's -timeout arms a
 * SIGALRM each second, and a poll or recv it interrupts is not an answer. */
static void fz_connect(int fd)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)fz_port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) return;
    FUZZ_CHECK(errno == EINTR, "connect: %s", strerror(errno));
    /* Interrupted: the handshake goes on; wait for it. */
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int r;
    while ((r = poll(&p, 1, FZ_ANSWER_MS)) < 0 && errno == EINTR) {
    }
    int err = 0;
    socklen_t n = sizeof err;
    FUZZ_CHECK(r == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &n) == 0 && err == 0,
               "connect: %s", strerror(err ? err : ETIMEDOUT));
}

static char *fz_exchange(const uint8_t *data, size_t size, size_t *len, bool *closed)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    FUZZ_CHECK(fd >= 0, "socket: %s", strerror(errno));
    fz_connect(fd);
    for (size_t off = 0; off < size;) {
        ssize_t n = send(fd, data + off, size - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break; /* the server may refuse a request before reading it all */
        off += (size_t)n;
    }
    shutdown(fd, SHUT_WR);
    char *buf = malloc(FZ_READ_MAX + 1);
    if (!buf) abort();
    *len = 0;
    *closed = false;
    long deadline = fz_now_ms() + FZ_ANSWER_MS;
    while (*len < FZ_READ_MAX) {
        long left = deadline - fz_now_ms();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = left > 0 ? poll(&p, 1, (int)left) : 0;
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        ssize_t n = recv(fd, buf + *len, FZ_READ_MAX - *len, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            *closed = true;
            break;
        }
        *len += (size_t)n;
        buf[*len] = '\0';
        const char *end = strstr(buf, "\r\n\r\n");
        const char *te = end ? fz_header(buf, end, "Transfer-Encoding") : NULL;
        if (te && !fz_header(buf, end, "Content-Length") && strncmp(te, "chunked", 7) == 0) break;
    }
    buf[*len] = '\0';
    /* Closed by a reset, not a FIN: tens of thousands of connections a
     * minute would otherwise leave as many sockets in TIME-WAIT on a shared
     * machine. */
    struct linger abort_close = {.l_onoff = 1, .l_linger = 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort_close, sizeof abort_close);
    close(fd);
    return buf;
}

/* The status of an answer, 0 when there is no status line. */
static int fz_status(const char *buf, size_t len)
{
    int code = 0;
    if (len < 12 || strncmp(buf, "HTTP/1.", 7) != 0 || sscanf(buf + 8, " %3d", &code) != 1)
        return 0;
    return code;
}

static void fz_check_json(const char *buf, size_t len)
{
    const char *end = strstr(buf, "\r\n\r\n");
    if (!end) return;
    const char *ct = fz_header(buf, end, "Content-Type");
    const char *cl = fz_header(buf, end, "Content-Length");
    if (!ct || strncmp(ct, "application/json", 16) != 0 || !cl) return;
    size_t body = (size_t)(end + 4 - buf), want = strtoul(cl, NULL, 10);
    if (body + want > len || want == 0) return;
    cJSON *j = cJSON_ParseWithLength(buf + body, want);
    FUZZ_CHECK(j != NULL, "a JSON answer that is not JSON: %.300s", buf);
    cJSON_Delete(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fz_server) fz_start();
    if (getenv("FZ_SEQ")) { /* DEBUG */
        static int seq;
        char pth[256];
        snprintf(pth, sizeof pth, "%s/%08d", getenv("FZ_SEQ"), seq++);
        FILE *q = fopen(pth, "wb");
        if (q) {
            fwrite(data, 1, size, q);
            fclose(q);
        }
    }
    size_t len = 0;
    bool closed = false;
    char *buf = fz_exchange(data, size, &len, &closed);
    int status = fz_status(buf, len);
    FUZZ_CHECK(status != 0 || closed, "no answer within %d ms and no close: %.200s", FZ_ANSWER_MS,
               buf);
    FUZZ_CHECK(status != 500, "the façade failed (500) on a request: %.400s", buf);
    if (status) fz_check_json(buf, len);
    free(buf);
    static const char probe[] = "GET /version HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n\r\n";
    long t0 = fz_now_ms();
    buf = fz_exchange((const uint8_t *)probe, sizeof probe - 1, &len, &closed);
    FUZZ_CHECK(fz_status(buf, len) == 200,
               "the server stopped answering GET /version (%s after %ld ms): %.200s",
               closed ? "closed" : "still open", fz_now_ms() - t0, buf);
    free(buf);
    return 0;
}
