/*
 * rec_tape.c — reading a cassette back with every row checked (see
 * rec_cassette.h).
 *
 * The one idea: a cassette is input data — reading must survive whatever a
 * person, a truncated upload or a fuzzer hands it, and never write beside it.
 */
#include "recorder/rec_cassette.h"

#include "recorder/rec_call.h"
#include "recorder/rec_meta.h"

#include "core/cred/cred.h"
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

/* Column i of a calls row as text, or NULL; *why says what is wrong with it
 * (left alone when nothing is). The recorder writes C strings: a NUL inside
 * a column would cut its text short — a shorter request or target than the
 * file holds, compared as if whole (DESIGN §5.1) — so it is bad input, as is
 * a target or an op that is not UTF-8 (names, never bytes). */
static char *rec_row_text(sqlite3_stmt *st, int i, bool utf8, const char **why)
{
    static const char *const nul[] = {
        [1] = "calls.op holds a NUL byte",
        [2] = "calls.target holds a NUL byte",
        [3] = "the request is not a JSON object (calls.request holds a NUL byte)",
        [5] = "the response is not JSON (calls.response holds a NUL byte)",
        [6] = "calls.error holds a NUL byte",
    };
    static const char *const bad[] = {
        [1] = "calls.op is not UTF-8", [2] = "calls.target is not UTF-8"};
    char *s = rec_col_text(st, i);
    if (!s || *why) return s;
    size_t n = (size_t)sqlite3_column_bytes(st, i);
    if (strlen(s) != n)
        *why = nul[i];
    else if (utf8 && !json_utf8_valid(s, n))
        *why = bad[i];
    return s;
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
     * all the same, never a clamped one. */
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
         * as 0), "5 0" or -1 (an elapsed time excepted, below). */
        cJSON *val = v ? cJSON_ParseWithOpts(v, NULL, true) : NULL;
        /* virtual_seconds is the run's last clock read minus its first: a
         * clock stepped back during the run (NTP, a scenario's negative
         * advance) makes it negative, and replay reproduces it as it was.
         * It must still be one finite number. */
        bool elapsed = k && strcmp(k, "virtual_seconds") == 0;
        bool ok = val && (elapsed ? cJSON_IsNumber(val) && isfinite(val->valuedouble)
                                  : rec_counts_ok(val));
        if (val && !ok) {
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
    /* Valid JSON of a shape no transport gives would replay as a
     * divergence, blaming today's core for a damaged file (issue 28). */
    char shape[RS_ERR_MSG_MAX / 4];
    if (!why && !rec_op_is_clock(r->op) &&
        !rec_call_shape(rs_op_parse(r->op), req, resp, shape, sizeof shape))
        why = shape;
    cJSON_Delete(req);
    cJSON_Delete(resp);
    if (!why) return RS_OK;
    return rs_fail(e, RS_DATAERR, "cassette %s: seq %lld: %s", t->path, (long long)r->seq, why);
}

/* The seq of row i (stored order) is i + 1: the recorder numbers its calls
 * 1, 2, 3, ... and stores them in that order, so a duplicate, a gap,
 * another start or another order is a hand-edited or damaged file. Named by
 * the first seq at fault. */
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
        const char *why = NULL;
        r->op = rec_row_text(st, 1, true, &why);
        r->target = rec_row_text(st, 2, true, &why);
        r->request = rec_row_text(st, 3, false, &why);
        r->status = sqlite3_column_type(st, 4) == SQLITE_INTEGER ? sqlite3_column_int(st, 4) : -1;
        r->response = rec_row_text(st, 5, false, &why);
        r->error = rec_row_text(st, 6, false, &why);
        r->vt_ms = sqlite3_column_int64(st, 7);
        r->wall_ms = sqlite3_column_int64(st, 8);
        r->sent = sqlite3_column_int(st, 9);
        r->batch = sqlite3_column_int64(st, 10);
        if (why)
            code = rs_fail(e, RS_DATAERR, "cassette %s: seq %lld: %s", t->path, (long long)r->seq,
                           why);
        else
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
    if (c->db) rec_cassette_remove(c->db);
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
