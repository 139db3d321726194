/*
 * world_image.c — the world as one image in memory: copied (each plan of a
 * sweep starts from a copy of the scenario's world) and handed back from a
 * forked run to the process that owns the world.
 *
 * The one idea: `reassert sim` and `reassert sweep` keep the world in memory
 * for one execution and run each run in their own process; only a run that
 * a `crash` fault may end runs in a forked child, so the crash ends it as
 * kill -9 would (no call after the crash point reaches the world, no
 * cleanup runs). The child's world is its own copy, so at its end — at the
 * crash, or when its run returns — it writes the world's image to a file,
 * and the owner takes its world back from that file.
 */
#include "sim/world/world_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The statements prepared on w's connection, finalized: a connection's
 * content is replaced only with none of them open. */
static void image_drop_statements(sim_world *w)
{
    for (size_t i = 0; i < w->n_stmt; i++)
        sqlite3_finalize(w->stmt[i]);
    w->n_stmt = 0;
    store_close(w->st);
    w->st = store_open(w->db);
    if (w->mem) store_cache_on(w->st);
}

/* Puts buf (sqlite3_malloc'd, consumed) in place of db's content. */
static bool image_load(sqlite3 *db, unsigned char *buf, sqlite3_int64 n)
{
    return sqlite3_deserialize(db, "main", buf, n, n,
                               SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE) ==
           SQLITE_OK;
}

rs_code sim_world_clone(sim_world *w, sim_world **out, rs_err *e)
{
    *out = NULL;
    simw_flush(w);
    sqlite3_int64 n = 0;
    unsigned char *buf = sqlite3_serialize(w->db, "main", &n, 0);
    sim_world *c = rs_xcalloc(1, sizeof *c);
    if (!buf || sqlite3_open(":memory:", &c->db) != SQLITE_OK || !image_load(c->db, buf, n)) {
        rs_fail(e, RS_FAILED, "copying the world failed: %s",
                c->db ? sqlite3_errmsg(c->db) : "out of memory");
        if (!c->db) sqlite3_free(buf);
        simw_free(c);
        return RS_FAILED;
    }
    c->st = store_open(c->db);
    c->mem = true;
    store_cache_on(c->st);
    simw_load_config(c);
    *out = c;
    return RS_OK;
}

void sim_world_handoff_set(sim_world *w, const char *path)
{
    free(w->handoff_path);
    w->handoff_path = path ? rs_xstrdup(path) : NULL;
}

/* Writes the world's image where the owner waits for it: every call made,
 * as a killed process would have left a world file. Between calls (the
 * only place a process ends: a crash fault fires after its call's commit),
 * so the calls' shared transaction is committed first. Best effort: an
 * image that cannot be written is missing, and the owner fails the run for
 * it. */
static void image_write(sim_world *w)
{
    simw_flush(w);
    sqlite3_int64 n = 0;
    unsigned char *buf = sqlite3_serialize(w->db, "main", &n, 0);
    if (!buf) return;
    int fd = open(w->handoff_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    bool ok = fd >= 0;
    for (sqlite3_int64 done = 0; ok && done < n;) {
        ssize_t k = write(fd, buf + done, (size_t)(n - done));
        if (k < 0 && errno == EINTR) continue;
        ok = k > 0;
        done += ok ? k : 0;
    }
    if (fd >= 0 && close(fd) != 0) ok = false;
    if (!ok) unlink(w->handoff_path);
    sqlite3_free(buf);
}

_Noreturn void simw_exit(sim_world *w, int code)
{
    if (w && w->handoff_path) image_write(w);
    _exit(code);
}

void sim_world_handoff_write(sim_world *w)
{
    if (w->handoff_path) image_write(w);
}

rs_code sim_world_handoff_take(sim_world *w, const char *path, rs_err *e)
{
    int fd = open(path, O_RDONLY);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0 || sb.st_size <= 0) {
        if (fd >= 0) close(fd);
        return rs_fail(e, RS_FAILED, "the run's world was never handed back (%s)",
                       fd < 0 ? strerror(errno) : "empty");
    }
    sqlite3_int64 n = sb.st_size;
    unsigned char *buf = sqlite3_malloc64((sqlite3_uint64)n);
    if (!buf) simw_die(w, "memory for the run's world");
    bool ok = true;
    for (sqlite3_int64 done = 0; ok && done < n;) {
        ssize_t k = read(fd, buf + done, (size_t)(n - done));
        if (k < 0 && errno == EINTR) continue;
        ok = k > 0;
        done += ok ? k : 0;
    }
    close(fd);
    if (!ok) {
        sqlite3_free(buf);
        return rs_fail(e, RS_FAILED, "the run's world could not be read back");
    }
    /* The owner's own view is replaced whole: its shared transaction (no
     * change in it since the fork) ends first. */
    if (w->txn_open && !sqlite3_get_autocommit(w->db))
        sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
    w->txn_open = false;
    image_drop_statements(w);
    if (!image_load(w->db, buf, n))
        return rs_fail(e, RS_FAILED, "the run's world could not be taken back: %s",
                       sqlite3_errmsg(w->db));
    w->txn_depth = 0;
    simw_meta_forget(w);
    return RS_OK;
}
