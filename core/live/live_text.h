/*
 * live_text.h — reading a YAML file's bytes strictly, before any parser sees
 * them (DESIGN.md §5.1).
 *
 * A parser that stops at the first NUL or at a byte that is not UTF-8 ends
 * the document there, silently: the runs after it vanish and the file
 * "passes". So the whole file is read and checked first: at most
 * LIVE_TEXT_MAX_BYTES, no NUL anywhere (comments included), well-formed
 * UTF-8 only (no overlong forms, no surrogates, nothing past U+10FFFF, no
 * sequence cut by the end of the file). A failure names file:line:col of the
 * offending byte (col counts characters, as the YAML reader's positions do)
 * and returns RS_DATAERR.
 */
#ifndef CORE_LIVE_TEXT_H
#define CORE_LIVE_TEXT_H

#include "core/rs.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define LIVE_TEXT_MAX_BYTES (4u * 1024u * 1024u) /* 4 MiB: documented in README "Input bounds" */

/* Opens path read-only only if it is a regular file (DESIGN §5.1: open()
 * of a FIFO nobody writes blocks forever, a device never ends, a directory
 * is no file). Never blocks: the path is looked at first, then opened
 * O_NONBLOCK and judged again on the descriptor (the path may be swapped in
 * between), blocking mode restored. flags: more open flags (O_NOFOLLOW).
 * Returns the descriptor, or -1 with why[] saying why not ("it is not a
 * regular file (a FIFO)", "it is a directory", strerror) and *irregular
 * (may be NULL) true when the path exists but is not a regular file. */
int live_open_regular(const char *path, int flags, bool *irregular, char *why, size_t whylen);
/* The same as a stdio stream ("rb"), or NULL. */
FILE *live_fopen_regular(const char *path, bool *irregular, char *why, size_t whylen);

/* Reads path whole into *buf (NUL-terminated, caller frees) and *len; `what`
 * names the file in errors ("scenario", "configuration"). */
rs_code live_text_read(const char *path, const char *what, char **buf, size_t *len, rs_err *e);

/* Checks buf[0..len) as above; file names it in the error. */
rs_code live_text_check(const char *file, const char *buf, size_t len, rs_err *e);

#endif
