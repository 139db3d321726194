/*
 * rs.h — the one return-code type every fallible function in reassert uses.
 *
 * Modelled on curl's CURLcode: a small enum plus a human sentence. Every
 * function that can fail takes an `rs_err *` and returns its code; the message
 * says what failed and where, so an on-call engineer reading CI output can act
 * without a debugger. Exit codes are the DESIGN.md §7 contract.
 */
#ifndef RS_H
#define RS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The one tri-state of a comparison that needs a read: the read showed the
 * value equal, showed it different, or did not answer (never "differs"). */
typedef enum rs_verdict { RS_EQUAL, RS_DIFFERS, RS_UNKNOWN } rs_verdict;

typedef enum rs_code {
    RS_OK = 0,
    RS_FAILED = 1,   /* the operation failed closed (exit 1) */
    RS_USAGE = 64,   /* usage error (exit 64) */
    RS_DATAERR = 65, /* bad input data: scenario, credential, config, cassette (exit 65) */
    RS_CRASHED = 137 /* a run ended by a `crash` fault, as kill -9 would */
} rs_code;

#define RS_ERR_MSG_MAX 1024

typedef struct rs_err {
    rs_code code;
    char msg[RS_ERR_MSG_MAX];
} rs_err;

/* Sets *e (if non-NULL) and returns code. The message must never contain a
 * credential: callers format names and paths, never values. */
rs_code rs_fail(rs_err *e, rs_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefixes the existing message with "<context>: ". */
rs_code rs_wrap(rs_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void rs_err_clear(rs_err *e);

/* When several apply, 64 wins over 65, and 65 over 1 (DESIGN.md §7). */
rs_code rs_code_worst(rs_code a, rs_code b);

/* Allocation that aborts on OOM: a half-built transaction is worse than a
 * crash before the first write, and every caller would otherwise repeat it. */
void *rs_xmalloc(size_t n);
void *rs_xcalloc(size_t n, size_t size);
void *rs_xrealloc(void *p, size_t n);
char *rs_xstrdup(const char *s);
char *rs_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *rs_xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* A check that stays in every build, unlike assert(), which NDEBUG removes
 * from the release binary and so from what `make lint` analyses: a broken
 * invariant stops the run by abort() (before any further write), naming the
 * line, and the static analyzer reads the condition as proven after it. */
__attribute__((noreturn)) void rs_assert_fail(const char *cond, const char *file, int line);
#define RS_ASSERT(cond) ((cond) ? (void)0 : rs_assert_fail(#cond, __FILE__, __LINE__))

#define RS_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#endif
