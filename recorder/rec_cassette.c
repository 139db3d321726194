/*
 * rec_cassette.c — writing the cassette file: schema, one transaction per
 * call (see the header; rec_tape.c reads it back).
 *
 * The one idea: a cassette is evidence from an incident, often the only
 * copy, and people copy it as one file (`cp inc.db elsewhere/`, `git add`).
 * So writing must survive the process dying between any two calls (WAL, a
 * commit per call: durable across a crash of the process, which is what a
 * killed deploy job is), and the .db alone must be the whole cassette after
 * every commit: each commit is checkpointed into the file at once, never
 * left in the -wal, where a killed run's calls would sit out of a copy's
 * reach. (A kill that lands inside a checkpoint's own page writes leaves
 * the file torn and the -wal whole: the -wal beside it, when copied too,
 * repairs it — a window of microseconds per call, against every call
 * after the last automatic checkpoint before.) No sync per call
 * (synchronous=OFF: the OS holds every write a killed process made); the
 * end record is synced, so a finished cassette also survives the machine.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "recorder/rec_cassette.h"

#include "recorder/rec_meta.h"

#include "core/transport/transport.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct rec_cassette {
    sqlite3 *db;
    sqlite3_stmt *ins;
    char *path;
};

/* synchronous=OFF until the end record (see the file comment): a sync per
 * call would cost milliseconds where the budget is 50 us (issue 29), and
 * would buy survival of the machine, not of the process. The locking mode
 * stays NORMAL: an exclusive writer keeps its WAL index in its own memory,
 * and a reader opening a killed run's cassette must then rebuild it, which
 * sqlite3 sometimes refuses ("database is locked") right after the kill. */
static const char rec_schema[] =
    "PRAGMA secure_delete=ON;"
    "PRAGMA synchronous=OFF;"
    "PRAGMA journal_mode=WAL;"
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
    "CREATE TABLE calls(seq INTEGER PRIMARY KEY, op TEXT NOT NULL, target TEXT,"
    " request TEXT, status INTEGER, response TEXT, error TEXT, vt_ms INTEGER,"
    " wall_ms INTEGER, sent INTEGER, batch INTEGER);"
    "CREATE TABLE counters(name TEXT PRIMARY KEY, value TEXT);";

static rs_code rec_sql_fail(rec_cassette *c, rs_err *e, const char *what)
{
    return rs_fail(e, RS_FAILED, "recording into %s: %s failed (%s)", c->path, what,
                   sqlite3_errmsg(c->db));
}

/* After a commit: its pages into the .db at once (see the file comment). A
 * reader holding an older snapshot can hold the checkpoint back; the next
 * commit's takes it the rest of the way. */
static rs_code rec_checkpoint(rec_cassette *c, rs_err *e, const char *what)
{
    if (sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL) != SQLITE_OK)
        return rec_sql_fail(c, e, what);
    return RS_OK;
}

void rec_cassette_remove(const char *path)
{
    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < RS_ARRAY_LEN(suffix); i++) {
        char *p = rs_xasprintf("%s%s", path, suffix[i]);
        (void)unlink(p);
        free(p);
    }
}

static rs_code rec_taken_error(const char *path, const char *what, rs_err *e)
{
    return rs_fail(e, RS_USAGE,
                   "--record %s: something is already there%s; a cassette never replaces a file "
                   "nor writes through a symbolic link",
                   path, what);
}

const char *rec_cassette_taken(const char *path)
{
    struct stat st;
    if (lstat(path, &st) == 0 || errno != ENOENT) return "is already there";
    /* A journal beside path would be replayed by SQLite into the new
     * cassette: a planted -wal is refused like a file at path. */
    static const char *const journal[] = {"-wal", "-journal"};
    for (size_t i = 0; i < RS_ARRAY_LEN(journal); i++) {
        char *p = rs_xasprintf("%s%s", path, journal[i]);
        bool taken = lstat(p, &st) == 0;
        free(p);
        if (taken) return "has a journal beside it";
    }
    return NULL;
}

rs_code rec_cassette_create(const char *path, rec_cassette **out, rs_err *e)
{
    *out = NULL;
    const char *why = rec_cassette_taken(path);
    if (why && strcmp(why, "is already there") != 0)
        return rec_taken_error(path, " (a journal beside it)", e);
    /* Made here, exclusively and never through a symlink: a cassette is
     * evidence, and never replaces someone's file. */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && (errno == EEXIST || errno == ELOOP)) return rec_taken_error(path, "", e);
    if (fd < 0)
        return rs_fail(e, RS_FAILED, "--record %s: cannot create the cassette (%s)", path,
                       strerror(errno));
    /* SQLite refuses a symlink anywhere in the name it opens: it is given the
     * file just made, by its real name (a symlinked folder on the way is the
     * user's choice), checked to be that same file. */
    struct stat made, found;
    char *real = fstat(fd, &made) == 0 ? realpath(path, NULL) : NULL;
    close(fd);
    if (!real || stat(real, &found) != 0 || found.st_dev != made.st_dev ||
        found.st_ino != made.st_ino) {
        free(real);
        (void)unlink(path);
        return rs_fail(e, RS_FAILED, "--record %s: the cassette changed while it was made", path);
    }
    rec_cassette *c = rs_xcalloc(1, sizeof *c);
    c->path = rs_xstrdup(path);
    if (sqlite3_open_v2(real, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL) !=
        SQLITE_OK) {
        rs_code rc = rs_fail(e, RS_FAILED, "--record %s: cannot create the cassette (%s)", path,
                             c->db ? sqlite3_errmsg(c->db) : "out of memory");
        rec_cassette_close(c);
        rec_cassette_remove(real); /* nothing left behind */
        free(real);
        return rc;
    }
    if (sqlite3_exec(c->db, rec_schema, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(c->db,
                           "INSERT INTO calls(seq, op, target, request, status, response, "
                           "error, vt_ms, wall_ms, sent, batch) VALUES "
                           "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           -1, &c->ins, NULL) != SQLITE_OK) {
        rs_code rc = rec_sql_fail(c, e, "creating the schema");
        rec_cassette_close(c);
        rec_cassette_remove(real); /* nothing left behind */
        free(real);
        return rc;
    }
    free(real);
    *out = c;
    return RS_OK;
}

rs_code rec_cassette_meta(rec_cassette *c, const char *key, const char *value, rs_err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(c->db, "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", -1,
                                &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, value ? value : "", -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return rec_sql_fail(c, e, "writing meta");
    return rec_checkpoint(c, e, "writing meta");
}

static void rec_bind_text(sqlite3_stmt *st, int i, const char *s)
{
    if (s)
        sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

rs_code rec_cassette_call(rec_cassette *c, const rec_row *row, rs_err *e)
{
    sqlite3_stmt *st = c->ins;
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    sqlite3_bind_int64(st, 1, row->seq);
    rec_bind_text(st, 2, row->op);
    rec_bind_text(st, 3, row->target);
    rec_bind_text(st, 4, row->request);
    sqlite3_bind_int(st, 5, row->status);
    rec_bind_text(st, 6, row->response);
    rec_bind_text(st, 7, row->error);
    sqlite3_bind_int64(st, 8, row->vt_ms);
    sqlite3_bind_int64(st, 9, row->wall_ms);
    sqlite3_bind_int(st, 10, row->sent);
    sqlite3_bind_int64(st, 11, row->batch);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) return rec_sql_fail(c, e, "writing a call");
    return rec_checkpoint(c, e, "writing a call");
}

rs_code rec_cassette_rewrite(rec_cassette *c, rec_text_fn fn, void *ctx, rs_err *e)
{
    static const char *const cols[] = {"target", "request", "response", "error"};
    sqlite3_stmt *sel = NULL, *upd = NULL;
    if (sqlite3_exec(c->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        return rec_sql_fail(c, e, "rewriting the calls");
    int rc = SQLITE_OK;
    for (size_t k = 0; k < RS_ARRAY_LEN(cols) && rc == SQLITE_OK; k++) {
        char *q = rs_xasprintf("SELECT seq, %s FROM calls WHERE %s IS NOT NULL", cols[k], cols[k]);
        char *u = rs_xasprintf("UPDATE calls SET %s = ? WHERE seq = ?", cols[k]);
        if (sqlite3_prepare_v2(c->db, q, -1, &sel, NULL) != SQLITE_OK ||
            sqlite3_prepare_v2(c->db, u, -1, &upd, NULL) != SQLITE_OK)
            rc = SQLITE_ERROR;
        free(q);
        free(u);
        int step;
        while (rc == SQLITE_OK && (step = sqlite3_step(sel)) == SQLITE_ROW) {
            char *text = fn(ctx, (int)k, (const char *)sqlite3_column_text(sel, 1));
            if (!text) continue;
            sqlite3_reset(upd);
            sqlite3_bind_text(upd, 1, text, -1, SQLITE_TRANSIENT);
            sqlite3_bind_int64(upd, 2, sqlite3_column_int64(sel, 0));
            if (sqlite3_step(upd) != SQLITE_DONE) rc = SQLITE_ERROR;
            free(text);
        }
        if (rc == SQLITE_OK && step != SQLITE_DONE) rc = SQLITE_ERROR;
        sqlite3_finalize(sel);
        sqlite3_finalize(upd);
        sel = upd = NULL;
    }
    if (rc != SQLITE_OK) {
        rs_code bad = rec_sql_fail(c, e, "rewriting the calls");
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
        return bad;
    }
    if (sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL) != SQLITE_OK)
        return rec_sql_fail(c, e, "rewriting the calls");
    return RS_OK;
}

/* Each (key, value) of obj through st, a statement of two parameters. */
static int rec_put_pairs(sqlite3_stmt *st, const cJSON *obj, bool as_json)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, obj)
    {
        char *v = as_json ? cJSON_PrintUnformatted(it) : rs_xstrdup(it->valuestring);
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, it->string, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, v, -1, SQLITE_TRANSIENT);
        int rc = sqlite3_step(st);
        free(v);
        if (rc != SQLITE_DONE) return rc;
    }
    return SQLITE_DONE;
}

rs_code rec_cassette_end(rec_cassette *c, const cJSON *meta, const cJSON *counters, rs_err *e)
{
    sqlite3_stmt *m = NULL, *k = NULL;
    /* The end record's checkpoint syncs the -wal and the file (NORMAL):
     * a finished cassette survives the machine too. */
    if (sqlite3_exec(c->db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(c->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(c->db, "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", -1, &m,
                           NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(c->db, "INSERT OR REPLACE INTO counters(name, value) VALUES (?, ?)", -1,
                           &k, NULL) != SQLITE_OK) {
        rs_code bad = rec_sql_fail(c, e, "writing the end of the recording");
        sqlite3_finalize(m);
        sqlite3_finalize(k);
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
        return bad;
    }
    int rc = rec_put_pairs(m, meta, false);
    if (rc == SQLITE_DONE) rc = rec_put_pairs(k, counters, true);
    sqlite3_finalize(m);
    sqlite3_finalize(k);
    if (rc != SQLITE_DONE || sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        rs_code bad = rec_sql_fail(c, e, "writing the end of the recording");
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
        return bad;
    }
    return rec_checkpoint(c, e, "writing the end of the recording");
}

rs_code rec_cassette_end_killed(const char *path, int exit_code, rs_err *e)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    /* The writer is dead: SQLite folds in whatever of its last commit the
     * checkpoint had not copied yet, then this one row is added. */
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db,
                                "INSERT INTO meta(key, value) SELECT 'exit', ? WHERE NOT EXISTS "
                                "(SELECT 1 FROM meta WHERE key = 'exit')",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) {
        char buf[16];
        snprintf(buf, sizeof buf, "%d", exit_code);
        sqlite3_bind_text(st, 1, buf, -1, SQLITE_TRANSIENT);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    }
    rs_code code = RS_OK;
    if (rc != SQLITE_OK)
        code =
            rs_fail(e, RS_FAILED, "recording into %s: writing the end of a killed run failed (%s)",
                    path, db ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_finalize(st);
    sqlite3_close(db); /* the last connection: checkpointed, the -wal removed */
    return code;
}

void rec_cassette_close(rec_cassette *c)
{
    if (!c) return;
    sqlite3_finalize(c->ins);
    sqlite3_close(c->db);
    free(c->path);
    free(c);
}
