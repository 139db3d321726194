/*
 * fuzz_support.h — what every fuzz target shares: a property check that
 * aborts (so libFuzzer and the replay main both report it as a crash) and a
 * private file for the loaders that read a path, not a buffer.
 *
 * Header-only (static functions) so each target is one .c file plus either
 * libFuzzer's main or tests/fuzz/replay_main.c.
 */
#ifndef TESTS_FUZZ_SUPPORT_H
#define TESTS_FUZZ_SUPPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken property is a crash: print what broke and abort. */
#define FUZZ_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz: %s:%d: property failed: %s: ", __FILE__, __LINE__, #cond);      \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static char fuzz_path_buf[4096];

static inline void fuzz_path_cleanup(void)
{
    if (fuzz_path_buf[0]) unlink(fuzz_path_buf);
}

/* Writes data into the process's private file (created once under $TMPDIR
 * or /tmp, removed at exit) and returns its path. A failure to write is a
 * harness failure, not a finding: exit 2. */
static inline const char *fuzz_write_file(const uint8_t *data, size_t size)
{
    if (!fuzz_path_buf[0]) {
        const char *dir = getenv("TMPDIR");
        if (!dir || !dir[0]) dir = "/tmp";
        snprintf(fuzz_path_buf, sizeof fuzz_path_buf, "%s/reassert-fuzz-XXXXXX", dir);
        int fd = mkstemp(fuzz_path_buf);
        if (fd < 0) {
            perror("fuzz: mkstemp");
            exit(2);
        }
        close(fd);
        atexit(fuzz_path_cleanup);
    }
    FILE *fp = fopen(fuzz_path_buf, "wb");
    if (!fp || (size && fwrite(data, 1, size, fp) != size) || fclose(fp) != 0) {
        perror("fuzz: write");
        exit(2);
    }
    return fuzz_path_buf;
}

/* The input as a NUL-terminated copy (the input may hold NULs of its own).
 * Caller frees. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s) abort();
    if (size) memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

#endif
