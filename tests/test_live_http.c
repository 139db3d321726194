/*
 * test_live_http.c — the live HTTP layer (core/live/live_http.c) against a
 * scripted HTTP/1.1 server that can read a request and close the connection
 * without answering: the one case where libcurl sends a request again by
 * itself (a reused connection that dies before any answer byte).
 *
 * What it pins (DESIGN §3.3: "not sent" vs "sent, answer lost"): a read on
 * the reused connection is re-sent once and answered; a
 * write never rides a reused connection, so a write whose connection dies
 * after it was sent is reported sent (it may have been applied) and reaches
 * the server exactly once — never re-sent, which would apply it twice; a
 * write that could not connect is "not sent". The server logs every request
 * it read with the number of the connection it came on, before it acts.
 */
#include "core/live/live_http.h"

#include <check.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define SRV_CONNS_MAX 16
#define SRV_REQ_MAX 8192

typedef enum { ACT_ANSWER, ACT_DROP } srv_act;

typedef struct srv_conn {
    int fd, id;
    size_t len;
    char buf[SRV_REQ_MAX];
} srv_conn;

/* The length of the first whole request in c->buf (headers and
 * Content-Length body), or 0 when it has not all arrived. */
static size_t srv_request_len(const srv_conn *c)
{
    const char *end = strstr(c->buf, "\r\n\r\n");
    if (!end) return 0;
    size_t head = (size_t)(end + 4 - c->buf), body = 0;
    for (const char *p = strstr(c->buf, "\r\n"); p && p < end; p = strstr(p + 2, "\r\n"))
        if (strncasecmp(p + 2, "Content-Length:", 15) == 0) body = strtoul(p + 17, NULL, 10);
    return c->len >= head + body ? head + body : 0;
}

/* Serves until killed: the k-th request read (from 0) is answered 200 or
 * dropped (the connection closed unanswered) as script[k] says; every
 * request is logged as "<connection> <method> <path>\n" to logfd first. */
static void srv_loop(int lfd, int logfd, const srv_act *script, size_t nscript)
{
    static srv_conn conns[SRV_CONNS_MAX];
    size_t n = 0, req = 0;
    int next_id = 1;
    for (;;) {
        struct pollfd p[SRV_CONNS_MAX + 1];
        p[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
        for (size_t i = 0; i < n; i++)
            p[i + 1] = (struct pollfd){.fd = conns[i].fd, .events = POLLIN};
        if (poll(p, n + 1, -1) < 0) continue;
        if ((p[0].revents & POLLIN) && n < SRV_CONNS_MAX) {
            int fd = accept(lfd, NULL, NULL);
            if (fd >= 0) {
                conns[n].fd = fd, conns[n].id = next_id++, conns[n].len = 0;
                n++;
            }
        }
        for (size_t i = 0; i < n; i++) {
            if (!(p[i + 1].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            srv_conn *c = &conns[i];
            ssize_t r = read(c->fd, c->buf + c->len, sizeof c->buf - 1 - c->len);
            size_t whole = 0;
            if (r > 0) {
                c->len += (size_t)r;
                c->buf[c->len] = '\0';
                whole = srv_request_len(c);
            }
            bool drop = r <= 0;
            if (whole) {
                char method[16] = "", path[128] = "";
                sscanf(c->buf, "%15s %127s", method, path);
                dprintf(logfd, "%d %s %s\n", c->id, method, path);
                srv_act a = req < nscript ? script[req] : ACT_ANSWER;
                req++;
                drop = a == ACT_DROP;
                if (!drop)
                    dprintf(c->fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                   "Content-Length: 11\r\n\r\n{\"ok\":true}");
                memmove(c->buf, c->buf + whole, c->len - whole);
                c->len -= whole;
                c->buf[c->len] = '\0';
            }
            if (drop) {
                close(c->fd);
                conns[i] = conns[--n];
                p[i + 1] = p[n + 1];
                i--;
            }
        }
    }
}

static pid_t srv_pid;
static int srv_log = -1;
static char srv_url[64];

static void srv_start(const srv_act *script, size_t nscript)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(lfd, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    ck_assert_int_eq(bind(lfd, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(listen(lfd, 16), 0);
    ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&a, &len), 0);
    snprintf(srv_url, sizeof srv_url, "http://127.0.0.1:%d", ntohs(a.sin_port));
    int lp[2];
    ck_assert_int_eq(pipe(lp), 0);
    srv_pid = fork();
    ck_assert_int_ge(srv_pid, 0);
    if (srv_pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        close(lp[0]);
        srv_loop(lfd, lp[1], script, nscript);
        _exit(0);
    }
    close(lp[1]);
    close(lfd);
    srv_log = lp[0];
}

static void srv_stop(void)
{
    kill(srv_pid, SIGKILL);
    waitpid(srv_pid, NULL, 0);
}

/* Every log line written so far (the server logs before it answers or
 * drops, so a finished call's requests are all there); at most max-1 bytes. */
static void srv_read_log(char *out, size_t max)
{
    size_t n = strlen(out);
    struct pollfd p = {.fd = srv_log, .events = POLLIN};
    while (n + 1 < max && poll(&p, 1, 0) > 0 && (p.revents & POLLIN)) {
        ssize_t r = read(srv_log, out + n, max - 1 - n);
        if (r <= 0) break;
        n += (size_t)r;
    }
    out[n] = '\0';
}

static size_t count_of(const char *hay, const char *needle)
{
    size_t k = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        k++;
    return k;
}

static live_http_call call(live_http *h, const char *method, const char *path)
{
    static char url[128];
    snprintf(url, sizeof url, "%s%s", srv_url, path);
    live_http_call c = {.method = method, .url = url};
    if (strcmp(method, "GET") != 0) {
        c.headers[0] = "Content-Type: application/json";
        c.body = "{\"w\":1}";
        c.body_len = strlen(c.body);
    }
    live_http_run(h, &c);
    return c;
}

START_TEST(test_read_resent_once_write_never)
{
    /* 1 GET answered (its connection kept); 2 GET read on that reused
     * connection and dropped: libcurl sends it again (3) on a new one;
     * 4 PATCH read and dropped; then everything answered. */
    static const srv_act script[] = {ACT_ANSWER, ACT_DROP, ACT_ANSWER, ACT_DROP};
    srv_start(script, sizeof script / sizeof script[0]);
    live_http *h = NULL;
    rs_err e;
    rs_err_clear(&e);
    live_http_conf conf = {.connect_ms = 5000, .total_ms = 20000};
    ck_assert(live_http_open(&conf, &h, &e) == RS_OK);
    char log[4096] = "";

    live_http_call c = call(h, "GET", "/r");
    ck_assert_int_eq(c.status, 200);
    live_http_call_free(&c);
    c = call(h, "GET", "/r");
    ck_assert_msg(c.status == 200, "the re-sent read: %ld %s", c.status, c.error);
    live_http_call_free(&c);
    srv_read_log(log, sizeof log);
    ck_assert_str_eq(log, "1 GET /r\n1 GET /r\n2 GET /r\n"); /* re-sent once, on a new connection */

    /* A write dropped after it was read: sent (it may have been applied),
     * no answer, and the server saw it once — it came on a connection of
     * its own, which libcurl never re-sends on. */
    c = call(h, "PATCH", "/w");
    ck_assert_int_eq(c.status, 0);
    ck_assert_int_eq(c.sent, RS_SENT_YES);
    live_http_call_free(&c);
    /* Each later write opens a connection of its own too. */
    c = call(h, "POST", "/w");
    ck_assert_int_eq(c.status, 200);
    live_http_call_free(&c);
    c = call(h, "DELETE", "/w");
    ck_assert_int_eq(c.status, 200);
    live_http_call_free(&c);
    c = call(h, "GET", "/r");
    ck_assert_int_eq(c.status, 200);
    live_http_call_free(&c);
    srv_read_log(log, sizeof log);
    static const char writes[] =
        "1 GET /r\n1 GET /r\n2 GET /r\n3 PATCH /w\n4 POST /w\n5 DELETE /w\n";
    ck_assert_msg(strncmp(log, writes, strlen(writes)) == 0, "the server saw:\n%s", log);
    ck_assert_int_eq((int)count_of(log, "PATCH"), 1);
    ck_assert_int_eq((int)count_of(log, "\n"), 7); /* and the last read, once */

    /* A write that could not connect never left: "not sent", retry is safe. */
    srv_stop();
    c = call(h, "PATCH", "/w");
    ck_assert_int_eq(c.status, 0);
    ck_assert_int_eq(c.sent, RS_SENT_NO);
    live_http_call_free(&c);
    live_http_close(h);
    close(srv_log);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("live_http");
    TCase *tc = tcase_create("resend");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_read_resent_once_write_never);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
