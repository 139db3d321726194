/*
 * live_text.c — a YAML file's bytes, read whole and checked before parsing:
 * size bound, no NUL, strict UTF-8 (see live_text.h).
 */
#include "core/live/live_text.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The length of the well-formed UTF-8 sequence at s (of n bytes left), or 0
 * when it is malformed (RFC 3629 table: no overlongs, no surrogates, no code
 * point above U+10FFFF, no truncation). */
static size_t lt_utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    size_t need;
    unsigned char lo = 0x80, hi = 0xBF; /* the bounds of the second byte */
    if (c >= 0xC2 && c <= 0xDF) {
        need = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        if (c == 0xE0) lo = 0xA0; /* overlong */
        if (c == 0xED) hi = 0x9F; /* UTF-16 surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        if (c == 0xF0) lo = 0x90; /* overlong */
        if (c == 0xF4) hi = 0x8F; /* past U+10FFFF */
    } else {
        return 0;
    }
    if (n < need || s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < need; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return need;
}

rs_code live_text_check(const char *file, const char *buf, size_t len, rs_err *e)
{
    const unsigned char *s = (const unsigned char *)buf;
    long line = 1, col = 1;
    size_t i = 0;
    while (i < len) {
        if (s[i] == '\0')
            return rs_fail(e, RS_DATAERR,
                           "%s:%ld:%ld: (bytes): a NUL byte, which a YAML file may not hold "
                           "(not even in a comment)",
                           file, line, col);
        size_t k = lt_utf8_len(s + i, len - i);
        if (k == 0)
            return rs_fail(e, RS_DATAERR, "%s:%ld:%ld: (bytes): byte 0x%02X is not valid UTF-8%s",
                           file, line, col, s[i],
                           len - i < 4 ? " (or the file ends inside a character)" : "");
        if (s[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
        i += k;
    }
    return RS_OK;
}

rs_code live_text_read(const char *path, const char *what, char **buf, size_t *len, rs_err *e)
{
    *buf = NULL;
    *len = 0;
    /* Only a regular file: opening a FIFO nobody writes would block forever,
     * and a device never ends (DESIGN §5.1: never hang on input). */
    struct stat pre;
    if (stat(path, &pre) == 0 && !S_ISREG(pre.st_mode))
        return rs_fail(e, RS_DATAERR, "%s: cannot read the %s: %s", path, what,
                       S_ISDIR(pre.st_mode) ? "it is a directory" : "it is not a regular file");
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return rs_fail(e, RS_DATAERR, "%s: cannot read the %s: %s", path, what, strerror(errno));
    struct stat st;
    if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(fp);
        return rs_fail(e, RS_DATAERR, "%s: cannot read the %s: it is a directory", path, what);
    }
    size_t cap = 4096, n = 0;
    char *b = rs_xmalloc(cap + 1);
    for (;;) {
        if (n == cap) {
            if (cap > LIVE_TEXT_MAX_BYTES) break;
            cap *= 2;
            b = rs_xrealloc(b, cap + 1);
        }
        size_t got = fread(b + n, 1, cap - n, fp);
        n += got;
        if (got == 0) break;
    }
    bool err = ferror(fp) != 0;
    int saved = errno;
    fclose(fp);
    if (err) {
        free(b);
        return rs_fail(e, RS_DATAERR, "%s: cannot read the %s: %s", path, what, strerror(saved));
    }
    if (n > LIVE_TEXT_MAX_BYTES) {
        free(b);
        return rs_fail(e, RS_DATAERR, "%s:1:1: (file): the %s is larger than %u bytes (4 MiB)",
                       path, what, LIVE_TEXT_MAX_BYTES);
    }
    b[n] = '\0';
    rs_code c = live_text_check(path, b, n, e);
    if (c != RS_OK) {
        free(b);
        return c;
    }
    *buf = b;
    *len = n;
    return RS_OK;
}
