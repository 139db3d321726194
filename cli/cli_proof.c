/*
 * cli_proof.c — reading and writing the runtime proof file.
 *
 * The core hands the recorded proof back as text and never opens a file;
 * this is where it lands on disk. The proof decides which nodes a later
 * Reassert may excuse from a reboot, so the file must be exactly what a
 * successful run proved: written once, after success, never half-written
 * (temp file in the same directory, fsync, then one atomic step), never over
 * an existing file and never through a symlink someone planted at the path.
 *
 * The atomic step is link(2), not rename(2): rename would silently replace a
 * file or symlink that appeared after the check, and "an existing file is
 * never overwritten" is part of the CLI contract.
 */
#include "cli/cli.h"

#include "core/live/live_text.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CLI_PROOF_MODE 0600
#define CLI_PROOF_WRITE_ATTEMPTS_MAX 1024 /* short writes before giving up */

char *cli_proof_read(const char *path, bool *irregular, char *why, size_t whylen)
{
    /* A FIFO, a directory or a device is refused, never waited on or read
     * (DESIGN §5.1); a missing or unreadable file is the caller's warning. */
    int fd = live_open_regular(path, O_NOFOLLOW, irregular, why, whylen);
    if (fd < 0) return NULL;
    char *buf = rs_xmalloc(CLI_PROOF_MAX_BYTES + 1);
    size_t n = 0;
    ssize_t got;
    /* A longer file is cut here and then fails to parse: ignored, verified fully. */
    while (n < CLI_PROOF_MAX_BYTES && (got = read(fd, buf + n, CLI_PROOF_MAX_BYTES - n)) > 0)
        n += (size_t)got;
    close(fd);
    buf[n] = '\0';
    return buf;
}

static rs_code proof_exists_error(const char *path, bool symlink, rs_err *e)
{
    if (symlink)
        return rs_fail(e, RS_FAILED,
                       "recording the runtime proof: cannot create %s (it is a symbolic link: a "
                       "proof is never written through one; an existing file is never "
                       "overwritten)",
                       path);
    return rs_fail(e, RS_FAILED,
                   "recording the runtime proof: cannot create %s (%s; an existing file is never "
                   "overwritten)",
                   path, strerror(EEXIST));
}

rs_code cli_proof_check_absent(const char *path, rs_err *e)
{
    struct stat st;
    if (lstat(path, &st) == 0) return proof_exists_error(path, S_ISLNK(st.st_mode), e);
    if (errno != ENOENT)
        return rs_fail(e, RS_FAILED, "recording the runtime proof: cannot create %s (%s)", path,
                       strerror(errno));
    return RS_OK;
}

/* "<dir>/.<base>.XXXXXX" beside path, so the final link never crosses a
 * filesystem. Caller frees; *dir_out too. */
static char *proof_temp_template(const char *path, char **dir_out)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (!slash)
        *dir_out = rs_xstrdup(".");
    else if (slash == path)
        *dir_out = rs_xstrdup("/");
    else
        *dir_out = rs_xasprintf("%.*s", (int)(slash - path), path);
    return rs_xasprintf("%s/.%s.XXXXXX", *dir_out, base);
}

static bool proof_write_all(int fd, const char *text, size_t len)
{
    size_t off = 0;
    for (int i = 0; off < len && i < CLI_PROOF_WRITE_ATTEMPTS_MAX; i++) {
        ssize_t n = write(fd, text + off, len - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        off += (size_t)n;
    }
    return off == len;
}

/* The directory entry is durable only once the directory is synced; a
 * failure here is not worth failing a repaired run for. */
static void proof_sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    (void)fsync(fd);
    close(fd);
}

rs_code cli_proof_write(const char *path, const char *text, rs_err *e)
{
    rs_code c = cli_proof_check_absent(path, e);
    if (c != RS_OK) return c;
    char *dir = NULL;
    char *tmp = proof_temp_template(path, &dir);
    int fd = mkstemp(tmp); /* O_EXCL, mode 0600: never follows a planted name */
    if (fd < 0) {
        c = rs_fail(e, RS_FAILED,
                    "recording the runtime proof: cannot create a temporary file in %s (%s)", dir,
                    strerror(errno));
        free(tmp);
        free(dir);
        return c;
    }
    size_t len = strlen(text);
    bool ok = fchmod(fd, CLI_PROOF_MODE) == 0 && proof_write_all(fd, text, len) &&
              proof_write_all(fd, "\n", 1) && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok) {
        c = rs_fail(e, RS_FAILED, "recording the runtime proof: writing %s failed", path);
    } else if (link(tmp, path) != 0) {
        int err = errno;
        struct stat st;
        bool is_link = lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
        c = err == EEXIST
                ? proof_exists_error(path, is_link, e)
                : rs_fail(e, RS_FAILED, "recording the runtime proof: cannot create %s (%s)", path,
                          strerror(err));
    }
    unlink(tmp);
    if (c == RS_OK) proof_sync_dir(dir);
    free(tmp);
    free(dir);
    return c;
}
