/*
 * live_text.c — a YAML file's bytes, read whole and checked before parsing:
 * size bound, no NUL, strict UTF-8 (see live_text.h).
 */
#include "core/live/live_text.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static const char *lt_not_regular(mode_t m)
{
    if (S_ISDIR(m)) return "it is a directory";
    if (S_ISFIFO(m)) return "it is not a regular file (a FIFO)";
    if (S_ISCHR(m) || S_ISBLK(m)) return "it is not a regular file (a device)";
    if (S_ISSOCK(m)) return "it is not a regular file (a socket)";
    return "it is not a regular file";
}

int live_open_regular(const char *path, int flags, bool *irregular, char *why, size_t whylen)
{
    if (irregular) *irregular = false;
    /* Looked at first, so a device is never even opened (an open can have
     * effects of its own); a symlink refused by O_NOFOLLOW is open's to say. */
    struct stat pre;
    int looked = (flags & O_NOFOLLOW) ? lstat(path, &pre) : stat(path, &pre);
    if (looked == 0 && !S_ISLNK(pre.st_mode) && !S_ISREG(pre.st_mode)) {
        if (irregular) *irregular = true;
        snprintf(why, whylen, "%s", lt_not_regular(pre.st_mode));
        return -1;
    }
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | flags);
    if (fd < 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        if (irregular) *irregular = true;
        snprintf(why, whylen, "%s", lt_not_regular(st.st_mode));
        close(fd);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

FILE *live_fopen_regular(const char *path, bool *irregular, char *why, size_t whylen)
{
    int fd = live_open_regular(path, 0, irregular, why, whylen);
    if (fd < 0) return NULL;
    FILE *fp = fdopen(fd, "rb");
    if (!fp) {
        snprintf(why, whylen, "%s", strerror(errno));
        close(fd);
    }
    return fp;
}

rs_code live_text_read(const char *path, const char *what, char **buf, size_t *len, rs_err *e)
{
    *buf = NULL;
    *len = 0;
    /* Only a regular file: opening a FIFO nobody writes would block forever,
     * and a device never ends (DESIGN §5.1: never hang on input). */
    char why[160];
    FILE *fp = live_fopen_regular(path, NULL, why, sizeof why);
    if (!fp) return rs_fail(e, RS_DATAERR, "%s: cannot read the %s: %s", path, what, why);
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
