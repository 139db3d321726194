/*
 * rs.c — error values and allocation helpers shared by every module.
 */
#include "core/rs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rs_code rs_fail(rs_err *e, rs_code code, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
        e->code = code;
    }
    return code;
}

rs_code rs_wrap(rs_err *e, const char *fmt, ...)
{
    if (!e) return RS_FAILED;
    char prefix[RS_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    char old[RS_ERR_MSG_MAX];
    memcpy(old, e->msg, sizeof old);
    size_t n = strlen(prefix);
    if (n + 2 >= sizeof e->msg) n = sizeof e->msg - 3;
    memcpy(e->msg, prefix, n);
    e->msg[n] = ':';
    e->msg[n + 1] = ' ';
    size_t rest = sizeof e->msg - n - 2;
    size_t olen = strnlen(old, rest - 1);
    memcpy(e->msg + n + 2, old, olen);
    e->msg[n + 2 + olen] = '\0';
    return e->code;
}

void rs_err_clear(rs_err *e)
{
    if (!e) return;
    e->code = RS_OK;
    e->msg[0] = '\0';
}

static int code_rank(rs_code c)
{
    switch (c) {
    case RS_USAGE:
        return 4;
    case RS_DATAERR:
        return 3;
    case RS_CRASHED:
        return 2;
    case RS_FAILED:
        return 1;
    default:
        return 0;
    }
}

rs_code rs_code_worst(rs_code a, rs_code b)
{
    return code_rank(a) >= code_rank(b) ? a : b;
}

/* One of the two places the core writes to a stream itself (rs_assert_fail
 * below is the other). It is the abort path:
 * the output sink may need memory to format a line and the run is about to
 * end by abort() anyway, so a fixed string straight to stderr is the only
 * message that can still get out. It names no value, so it cannot leak a
 * credential. */
__attribute__((noreturn)) static void rs_oom(void)
{
    fputs("reassert: out of memory\n", stderr);
    abort();
}

/* The abort path of RS_ASSERT, straight to stderr for the reason above; the
 * condition's source text names variables, never their values. */
void rs_assert_fail(const char *cond, const char *file, int line)
{
    fprintf(stderr, "reassert: internal check failed at %s:%d: %s\n", file, line, cond);
    abort();
}

void *rs_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) rs_oom();
    return p;
}

void *rs_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) rs_oom();
    return p;
}

void *rs_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) rs_oom();
    return q;
}

char *rs_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = rs_xmalloc(n);
    memcpy(p, s, n);
    return p;
}

char *rs_xvasprintf(const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (n < 0) n = 0;
    char *p = rs_xmalloc((size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, again);
    va_end(again);
    return p;
}

char *rs_xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = rs_xvasprintf(fmt, ap);
    va_end(ap);
    return p;
}
