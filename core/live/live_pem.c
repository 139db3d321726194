/*
 * live_pem.c — a kubeconfig's certificate authority checked as client-go
 * checks it, before any connection (see the header).
 *
 * The one idea: a CA that cannot vouch for any server is a malformed input,
 * not a TLS failure — so it is found here, with the field that named it,
 * and never left for libcurl to report as "the server is not trusted".
 */
#include "core/live/live_pem.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PEM_BLOCKS_MAX 4096 /* certificates looked at in one bundle */

bool live_pem_has_cert(const unsigned char *pem, size_t len)
{
    if (!pem || len == 0 || len > LIVE_PEM_FILE_MAX) return false;
    BIO *b = BIO_new_mem_buf(pem, (int)len);
    if (!b) return false;
    bool ok = false;
    for (int i = 0; i < PEM_BLOCKS_MAX && !ok; i++) {
        X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
        if (!x) break; /* the end, or no further CERTIFICATE block parses */
        ok = true;
        X509_free(x);
    }
    BIO_free(b);
    ERR_clear_error(); /* libcurl shares OpenSSL's error queue */
    return ok;
}

/* Reads a regular file whole (O_NONBLOCK: a FIFO never blocks the run). */
static const char *pem_read(const char *path, unsigned char **buf, size_t *len)
{
    static char why[160];
    *buf = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, sizeof why, "cannot be read: %s", strerror(errno));
        return why;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return "is not a regular file";
    }
    if ((unsigned long long)st.st_size > LIVE_PEM_FILE_MAX) {
        close(fd);
        return "is larger than 4 MiB";
    }
    unsigned char *b = malloc((size_t)st.st_size + 1);
    if (!b) {
        close(fd);
        return "cannot be read: out of memory";
    }
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t n = read(fd, b + got, (size_t)st.st_size - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(fd);
    *buf = b;
    *len = got;
    return NULL;
}

const char *live_pem_file_problem(const char *path)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    const char *why = pem_read(path, &buf, &len);
    if (!why && !live_pem_has_cert(buf, len)) why = "holds no PEM certificate";
    free(buf); /* a CA bundle is public: nothing to wipe */
    return why;
}
