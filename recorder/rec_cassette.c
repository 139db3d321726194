/*
 * rec_cassette.c — the cassette file: schema, one transaction per call, and
 * reading it back with every row checked (see the header).
 *
 * The one idea: a cassette is evidence from an incident, often the only
 * copy, so writing must survive the process dying between any two calls
 * (WAL, a commit per call, synchronous=NORMAL: durable across a crash of the
 * process, which is what a killed deploy job is), and reading must survive
 * whatever a person, a truncated upload or a fuzzer hands it.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "recorder/rec_cassette.h"

#include "recorder/rec_meta.h"

#include "core/transport/transport.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REC_ROWS_MAX (1 << 22) /* far beyond any run; a bound for a hostile file */

struct rec_cassette {
    sqlite3 *db;
    sqlite3_stmt *ins;
    char *path;
};

/* The empty file is made without a sync (it holds no call yet, and a rollback
 * journal's switch to WAL would cost four); every commit after the schema is
 * synchronous=NORMAL. */
static const char rec_schema[] =
    "PRAGMA secure_delete=ON;"
    "PRAGMA synchronous=OFF;"
    "PRAGMA journal_mode=WAL;"
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
    "CREATE TABLE calls(seq INTEGER PRIMARY KEY, op TEXT NOT NULL, target TEXT,"
    " request TEXT, status INTEGER, response TEXT, error TEXT, vt_ms INTEGER,"
    " wall_ms INTEGER, sent INTEGER, batch INTEGER);"
    "CREATE TABLE counters(name TEXT PRIMARY KEY, value TEXT);"
    "PRAGMA synchronous=NORMAL;";

static rs_code rec_sql_fail(rec_cassette *c, rs_err *e, const char *what)
{
    return rs_fail(e, RS_FAILED, "recording into %s: %s failed (%s)", c->path, what,
                   sqlite3_errmsg(c->db));
}

static void rec_remove_with_sidecars(const char *path)
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

/* A cassette this process made and could not start: nothing is left behind
 * (an empty file would refuse the next attempt as "already there"). */
static void rec_remove_made(const char *path)
{
    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < RS_ARRAY_LEN(suffix); i++) {
        char *p = rs_xasprintf("%s%s", path, suffix[i]);
        (void)unlink(p);
        free(p);
    }
}

rs_code rec_cassette_create(const char *path, rec_cassette **out, rs_err *e)
{
    *out = NULL;
    /* A journal beside path would be replayed by SQLite into the new
     * cassette: a planted -wal is refused like a file at path. */
    static const char *const journal[] = {"-wal", "-journal"};
    for (size_t i = 0; i < RS_ARRAY_LEN(journal); i++) {
        char *p = rs_xasprintf("%s%s", path, journal[i]);
        struct stat st;
        bool taken = lstat(p, &st) == 0;
        free(p);
        if (taken) return rec_taken_error(path, " (a journal beside it)", e);
    }
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
        rec_remove_made(real);
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
        rec_remove_made(real);
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
    return rc == SQLITE_DONE ? RS_OK : rec_sql_fail(c, e, "writing meta");
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
    return rc == SQLITE_DONE ? RS_OK : rec_sql_fail(c, e, "writing a call");
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

rs_code rec_cassette_counters(rec_cassette *c, const cJSON *counters, rs_err *e)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_exec(c->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(c->db, "INSERT OR REPLACE INTO counters(name, value) VALUES (?, ?)", -1,
                           &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return rec_sql_fail(c, e, "writing the counters");
    }
    int rc = SQLITE_DONE;
    const cJSON *it;
    cJSON_ArrayForEach(it, counters)
    {
        char *v = cJSON_PrintUnformatted(it);
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, it->string, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, v, -1, SQLITE_TRANSIENT);
        rc = sqlite3_step(st);
        free(v);
        if (rc != SQLITE_DONE) break;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE || sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        return rec_sql_fail(c, e, "writing the counters");
    return RS_OK;
}

void rec_cassette_close(rec_cassette *c)
{
    if (!c) return;
    sqlite3_finalize(c->ins);
    sqlite3_close(c->db);
    free(c->path);
    free(c);
}

/* ---- reading ---- */

bool rec_op_is_clock(const char *op)
{
    return strcmp(op, "clock.now") == 0 || strcmp(op, "clock.sleep") == 0 ||
           strcmp(op, "entropy") == 0 || strcmp(op, "pid") == 0;
}

const char *rec_tape_meta(const rec_tape *t, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t->meta, key));
}

void rec_tape_free(rec_tape *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->n_rows; i++) {
        rec_row *r = &t->rows[i];
        free(r->op);
        free(r->target);
        free(r->request);
        free(r->response);
        free(r->error);
    }
    free(t->rows);
    cJSON_Delete(t->meta);
    cJSON_Delete(t->counters);
    free(t->path);
    free(t);
}

static char *rec_col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return s ? rs_xstrdup((const char *)s) : NULL;
}

static rs_code rec_bad(rs_err *e, const char *path, const char *fmt, const char *detail)
{
    char buf[RS_ERR_MSG_MAX / 2];
    snprintf(buf, sizeof buf, fmt, detail ? detail : "");
    return rs_fail(e, RS_DATAERR, "cassette %s: %s", path, buf);
}

static rs_code rec_load_meta(sqlite3 *db, rec_tape *t, rs_err *e)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT key, value FROM meta", -1, &st, NULL) != SQLITE_OK)
        return rec_bad(e, t->path, "not a cassette (%s)", sqlite3_errmsg(db));
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(st, 0);
        const char *v = (const char *)sqlite3_column_text(st, 1);
        if (k && !cJSON_GetObjectItemCaseSensitive(t->meta, k))
            cJSON_AddStringToObject(t->meta, k, v ? v : "");
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return rec_bad(e, t->path, "not a readable cassette (%s)", sqlite3_errmsg(db));
    const char *v = rec_tape_meta(t, "format_version");
    if (!v) return rec_bad(e, t->path, "not a cassette (meta has no format_version)%s", NULL);
    char *end = NULL;
    errno = 0;
    long fmt = strtol(v, &end, 10);
    if (!v[0] || *end || v[0] == ' ' || v[0] == '+')
        return rec_bad(e, t->path, "meta format_version '%.40s' is not a number", v);
    /* Named as written: a number too large for a long is a newer format
     * all the same (finding M3 of session 7), never a clamped one. */
    if (fmt < 1)
        return rs_fail(e, RS_DATAERR,
                       "cassette %s: meta format_version: format %.40s is not a cassette format "
                       "(formats start at 1; this reassert reads 1 to %d)",
                       t->path, v, REC_FORMAT_VERSION);
    if (errno || fmt > REC_FORMAT_VERSION)
        return rs_fail(e, RS_DATAERR,
                       "cassette %s: written in cassette format %.40s by a newer reassert; this "
                       "one reads format %d and older",
                       t->path, v, REC_FORMAT_VERSION);
    return RS_OK;
}

static bool rec_counts_ok(const cJSON *v)
{
    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        return isfinite(d) && d >= 0;
    }
    for (const cJSON *it = v->child; it; it = it->next)
        if (!rec_counts_ok(it)) return false;
    return true;
}

static rs_code rec_load_counters(sqlite3 *db, rec_tape *t, rs_err *e)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT name, value FROM counters", -1, &st, NULL) != SQLITE_OK)
        return rec_bad(e, t->path, "not a cassette (%s)", sqlite3_errmsg(db));
    int rc;
    cJSON *c = cJSON_CreateObject();
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(st, 0);
        const char *v = (const char *)sqlite3_column_text(st, 1);
        /* The whole text is one JSON value, and every number in it is a
         * count or a time: finite, >= 0 — not 1e999 (read as null), 0x32 (read
         * as 0), "5 0" or -1 (finding M3 of s7). */
        cJSON *val = v ? cJSON_ParseWithOpts(v, NULL, true) : NULL;
        if (val && !rec_counts_ok(val)) {
            cJSON_Delete(val);
            val = NULL;
        }
        if (!k || !val) {
            /* k lives in the statement's row: the message is made first. */
            rs_code bad =
                rec_bad(e, t->path, "counter '%s' is not JSON with counts >= 0", k ? k : "?");
            cJSON_Delete(val);
            cJSON_Delete(c);
            sqlite3_finalize(st);
            return bad;
        }
        if (!cJSON_GetObjectItemCaseSensitive(c, k))
            cJSON_AddItemToObject(c, k, val);
        else
            cJSON_Delete(val);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        cJSON_Delete(c);
        return rec_bad(e, t->path, "not a readable cassette (%s)", sqlite3_errmsg(db));
    }
    if (cJSON_GetArraySize(c) == 0)
        cJSON_Delete(c); /* the run never finished (killed mid-way) */
    else
        t->counters = c;
    return RS_OK;
}

/* One row's fields make sense, or RS_DATAERR naming the seq. */
static rs_code rec_check_row(const rec_tape *t, const rec_row *r, rs_err *e)
{
    const char *why = NULL;
    cJSON *req = r->request ? cJSON_Parse(r->request) : NULL;
    cJSON *resp = r->response ? cJSON_Parse(r->response) : NULL;
    if (!r->op || (!rec_op_is_clock(r->op) && rs_op_parse(r->op) == RS_OP_COUNT))
        why = "the operation is not one reassert makes";
    else if (!rec_op_is_clock(r->op) && !r->target)
        why = "the call has no target";
    else if (r->request && !cJSON_IsObject(req))
        why = "the request is not a JSON object";
    else if (r->response && !resp)
        why = "the response is not JSON";
    else if (r->status < 0 || r->status > 999)
        why = "the status is not an HTTP-like status";
    else if (r->sent < RS_SENT_UNKNOWN || r->sent > RS_SENT_NO)
        why = "the sent column is not 0, 1 or 2";
    else if (strcmp(r->op, "clock.now") == 0 || strcmp(r->op, "pid") == 0)
        why = cJSON_IsNumber(resp) ? NULL : "the recorded value is not a number";
    else if (strcmp(r->op, "entropy") == 0)
        why = cJSON_IsString(resp) ? NULL : "the recorded value is not a decimal string";
    else if (strcmp(r->op, "clock.sleep") == 0)
        why = cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(req, "ms"))
                  ? NULL
                  : "the sleep has no duration";
    cJSON_Delete(req);
    cJSON_Delete(resp);
    if (!why) return RS_OK;
    return rs_fail(e, RS_DATAERR, "cassette %s: seq %lld: %s", t->path, (long long)r->seq, why);
}

/* The seq of row i (stored order) is i + 1: the recorder numbers its calls
 * 1, 2, 3, ... and stores them in that order, so a duplicate, a gap,
 * another start or another order is a hand-edited or damaged file (finding
 * G2). Named by the first seq at fault. */
static rs_code rec_check_seqs(const rec_tape *t, rs_err *e)
{
    for (size_t i = 0; i < t->n_rows; i++) {
        int64_t want = (int64_t)i + 1, got = t->rows[i].seq;
        if (got == want) continue;
        const char *p = t->path;
        if (got < want && got >= 1) /* rows 1..i are seq 1..i exactly */
            return rs_fail(e, RS_DATAERR, "cassette %s: seq %lld: stored twice", p, (long long)got);
        if (got < 1)
            return rs_fail(e, RS_DATAERR, "cassette %s: seq %lld: below 1, where the calls start",
                           p, (long long)got);
        for (size_t j = i + 1; j < t->n_rows; j++)
            if (t->rows[j].seq == want)
                return rs_fail(e, RS_DATAERR,
                               "cassette %s: seq %lld: out of order (stored after seq %lld)", p,
                               (long long)want, (long long)got);
        if (i == 0)
            return rs_fail(e, RS_DATAERR,
                           "cassette %s: seq %lld: the calls start there, not at seq 1", p,
                           (long long)got);
        return rs_fail(e, RS_DATAERR,
                       "cassette %s: seq %lld: missing (the calls go from seq %lld to seq %lld)", p,
                       (long long)want, (long long)(want - 1), (long long)got);
    }
    return RS_OK;
}

static rs_code rec_load_rows(sqlite3 *db, rec_tape *t, rs_err *e)
{
    sqlite3_stmt *st = NULL;
    /* In stored order (rowid): rec_check_seqs judges the order too. */
    if (sqlite3_prepare_v2(db,
                           "SELECT seq, op, target, request, status, response, error, vt_ms, "
                           "wall_ms, sent, batch FROM calls ORDER BY rowid",
                           -1, &st, NULL) != SQLITE_OK)
        return rec_bad(e, t->path, "not a cassette (%s)", sqlite3_errmsg(db));
    size_t cap = 0;
    int rc;
    rs_code code = RS_OK;
    while (code == RS_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (t->n_rows == REC_ROWS_MAX) {
            code = rec_bad(e, t->path, "more calls than any run makes%s", NULL);
            break;
        }
        if (t->n_rows == cap)
            t->rows = rs_xrealloc(t->rows, (cap = cap ? 2 * cap : 256) * sizeof *t->rows);
        rec_row *r = &t->rows[t->n_rows++];
        memset(r, 0, sizeof *r);
        if (sqlite3_column_type(st, 0) != SQLITE_INTEGER) {
            if (t->n_rows == 1)
                code = rec_bad(e, t->path,
                               "the first call stored has a seq that is not an "
                               "integer%s",
                               NULL);
            else
                code = rs_fail(e, RS_DATAERR,
                               "cassette %s: the call stored after seq %lld has a seq that is "
                               "not an integer",
                               t->path, (long long)t->rows[t->n_rows - 2].seq);
            break;
        }
        r->seq = sqlite3_column_int64(st, 0);
        r->op = rec_col_text(st, 1);
        r->target = rec_col_text(st, 2);
        r->request = rec_col_text(st, 3);
        r->status = sqlite3_column_type(st, 4) == SQLITE_INTEGER ? sqlite3_column_int(st, 4) : -1;
        r->response = rec_col_text(st, 5);
        r->error = rec_col_text(st, 6);
        r->vt_ms = sqlite3_column_int64(st, 7);
        r->wall_ms = sqlite3_column_int64(st, 8);
        r->sent = sqlite3_column_int(st, 9);
        r->batch = sqlite3_column_int64(st, 10);
        code = rec_check_row(t, r, e);
    }
    if (code == RS_OK && rc != SQLITE_DONE)
        code = rec_bad(e, t->path, "not a readable cassette (%s)", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return code == RS_OK ? rec_check_seqs(t, e) : code;
}

/* ---- opening an input without writing beside it ---- */

/* "file:PATH?immutable=1", PATH percent-encoded: SQLite reads the file and
 * creates nothing beside it (no -shm, no -wal), even in a read-only
 * directory. */
static char *rec_ro_uri(const char *path)
{
    while (path[0] == '/' && path[1] == '/')
        path++; /* "file://x" would name a host */
    size_t n = strlen(path);
    char *u = rs_xcalloc(n * 3 + 32, 1), *p = u;
    p += sprintf(p, "file:");
    for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
        bool keep = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                    (*c >= '0' && *c <= '9') || strchr("/._~-", *c);
        p += keep ? sprintf(p, "%c", *c) : sprintf(p, "%%%02X", *c);
    }
    strcpy(p, "?immutable=1");
    return u;
}

static bool rec_copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    bool ok = in && out;
    char buf[65536];
    size_t n;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0)
        ok = fwrite(buf, 1, n, out) == n;
    ok = ok && !ferror(in);
    if (in) fclose(in);
    if (out && fclose(out) != 0) ok = false;
    return ok;
}

/* Where a cassette with a -wal is read: a private copy (see rec_open_ro). */
typedef struct rec_ro_copy {
    char *dir, *db;
} rec_ro_copy;

static void rec_ro_copy_remove(rec_ro_copy *c)
{
    if (c->db) rec_remove_with_sidecars(c->db);
    if (c->dir) (void)rmdir(c->dir);
    free(c->db);
    free(c->dir);
}

/* An input is never written beside (no -shm, no -wal appear, nothing
 * changes). A run killed mid-way keeps its last calls in PATH-wal, which
 * only a writer can fold in: then the cassette and its -wal are copied
 * into a private directory and read there; else the file is opened
 * immutable. */
static rs_code rec_open_ro(const char *path, sqlite3 **db, rec_ro_copy *copy, rs_err *e)
{
    *db = NULL;
    char *wal = rs_xasprintf("%s-wal", path);
    struct stat st;
    bool has_wal = stat(wal, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
    int rc;
    if (has_wal) {
        const char *tmp = getenv("TMPDIR");
        copy->dir = rs_xasprintf("%s/reassert-cassette-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
        if (!mkdtemp(copy->dir)) {
            free(copy->dir);
            copy->dir = NULL;
        }
        copy->db = copy->dir ? rs_xasprintf("%s/c.db", copy->dir) : NULL;
        char *cwal = copy->db ? rs_xasprintf("%s-wal", copy->db) : NULL;
        bool ok = cwal && rec_copy_file(path, copy->db) && rec_copy_file(wal, cwal);
        free(cwal);
        free(wal);
        if (!ok)
            return rs_fail(e, RS_FAILED,
                           "cassette %s: cannot copy it and its -wal to read them without "
                           "writing beside it (%s)",
                           path, strerror(errno));
        rc = sqlite3_open_v2(copy->db, db, SQLITE_OPEN_READONLY, NULL);
    } else {
        free(wal);
        char *uri = rec_ro_uri(path);
        rc = sqlite3_open_v2(uri, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
        free(uri);
    }
    if (rc != SQLITE_OK)
        return rec_bad(e, path, "cannot open it as SQLite (%s)", *db ? sqlite3_errmsg(*db) : "");
    return RS_OK;
}

rs_code rec_tape_load(const char *path, rec_tape **out, rs_err *e)
{
    *out = NULL;
    struct stat st;
    if (stat(path, &st) != 0)
        return rs_fail(e, RS_DATAERR, "cassette %s: cannot open it (%s)", path, strerror(errno));
    if (!S_ISREG(st.st_mode)) return rs_fail(e, RS_DATAERR, "cassette %s: not a file", path);
    rec_tape *t = rs_xcalloc(1, sizeof *t);
    t->path = rs_xstrdup(path);
    t->meta = cJSON_CreateObject();
    sqlite3 *db = NULL;
    rec_ro_copy copy = {NULL, NULL};
    rs_code code = rec_open_ro(path, &db, &copy, e);
    if (code == RS_OK) {
        sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
        sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
        code = rec_load_meta(db, t, e);
    }
    if (code == RS_OK) code = rec_load_rows(db, t, e);
    if (code == RS_OK) code = rec_load_counters(db, t, e);
    sqlite3_close(db);
    if (code == RS_OK) code = rec_meta_check(t, e);
    rec_ro_copy_remove(&copy);
    if (code != RS_OK) {
        rec_tape_free(t);
        return code;
    }
    *out = t;
    return RS_OK;
}
