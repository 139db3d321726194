/*
 * world_shape.c — a world file is of the shape this reassert builds, or it
 * is bad input, before anything reads or writes it.
 *
 * The one idea: the world is trusted only as far as its shape was checked.
 * A file whose tables have other columns than simw_schema_create makes (an
 * older or newer format, a hand-edited or hostile file), or whose objects
 * table holds a row that is not a JSON object under text keys and an
 * integer revision, is refused at open (65) naming the table, the row and
 * the field. Without this an SQL error mid-run read as "HTTP 404", a
 * non-JSON body as "failed in SQLite: not an error", and the run had already
 * logged calls into the file. The check opens the file read-only, so a
 * refused file is left as it was.
 */
#include "sim/world/world_internal.h"

#include <stdio.h>
#include <string.h>

/* Column descriptions compared position by position. */
#define SHAPE_COLUMN_SQL                                                                           \
    "SELECT name, upper(type), \"notnull\", pk FROM pragma_table_info(?1) ORDER BY cid"

/* "body TEXT NOT NULL PRIMARY KEY(2)" for one pragma_table_info row. */
static void shape_column(sqlite3_stmt *st, char *out, size_t len)
{
    int pk = sqlite3_column_int(st, 3);
    char pks[32] = "";
    if (pk) snprintf(pks, sizeof pks, " (primary key part %d)", pk);
    snprintf(out, len, "%.64s %.32s%s%s", (const char *)sqlite3_column_text(st, 0),
             (const char *)sqlite3_column_text(st, 1), sqlite3_column_int(st, 2) ? " NOT NULL" : "",
             pks);
}

static rs_code shape_table(sqlite3 *ref, sqlite3 *db, const char *path, const char *table,
                           rs_err *e)
{
    sqlite3_stmt *want = NULL, *have = NULL;
    rs_code rc = RS_OK;
    if (sqlite3_prepare_v2(ref, SHAPE_COLUMN_SQL, -1, &want, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, SHAPE_COLUMN_SQL, -1, &have, NULL) != SQLITE_OK) {
        rc = rs_fail(e, RS_DATAERR, "sim world %s: cannot read the columns of table %s: %s", path,
                     table, sqlite3_errmsg(want ? db : ref));
        goto out;
    }
    sqlite3_bind_text(want, 1, table, -1, SQLITE_STATIC);
    sqlite3_bind_text(have, 1, table, -1, SQLITE_STATIC);
    for (int col = 1;; col++) {
        bool w = sqlite3_step(want) == SQLITE_ROW;
        bool h = sqlite3_step(have) == SQLITE_ROW;
        if (!w && !h) break;
        char ws[160] = "", hs[160] = "";
        if (w) shape_column(want, ws, sizeof ws);
        if (h) shape_column(have, hs, sizeof hs);
        if (col == 1 && !h) {
            /* check_failures came later: open makes it in an older world. */
            if (strcmp(table, "check_failures") == 0) break;
            rc = rs_fail(e, RS_DATAERR,
                         "sim world %s: table %s is missing: not a world file this reassert "
                         "builds (sim init makes one)",
                         path, table);
            break;
        }
        if (w && h && strcmp(ws, hs) == 0) continue;
        rc = rs_fail(e, RS_DATAERR,
                     "sim world %s: table %s has another schema: column %d is %s%s%s, "
                     "expected %s (sim init makes a world of this reassert's schema)",
                     path, table, col, h ? "\"" : "", h ? hs : "missing", h ? "\"" : "",
                     w ? ws : "no column");
        break;
    }
out:
    sqlite3_finalize(want);
    sqlite3_finalize(have);
    return rc;
}

/* The first objects row of a wrong shape: its key (as text, cut) and the
 * field, in SQL so a large world is read once without parsing into trees. */
static const char shape_objects_sql[] =
    "SELECT substr(CAST(kind AS TEXT), 1, 80) || '/' || substr(CAST(ns AS TEXT), 1, 80) || '/' "
    "|| substr(CAST(name AS TEXT), 1, 120), bad FROM (SELECT kind, ns, name, CASE"
    " WHEN typeof(kind) <> 'text' THEN 'kind is not text'"
    " WHEN typeof(ns) <> 'text' THEN 'ns is not text'"
    " WHEN typeof(name) <> 'text' THEN 'name is not text'"
    " WHEN typeof(uid) <> 'text' THEN 'uid is not text'"
    " WHEN typeof(rv) <> 'integer' OR rv < 0 THEN 'rv is not a revision (an integer >= 0)'"
    " WHEN typeof(body) <> 'text' OR NOT json_valid(body) THEN 'body is not JSON'"
    " WHEN json_type(body) <> 'object' THEN 'body is not a JSON object'"
    " END AS bad FROM objects) WHERE bad IS NOT NULL LIMIT 1";

static rs_code shape_rows(sqlite3 *db, const char *path, rs_err *e)
{
    sqlite3_stmt *st = NULL;
    rs_code rc = RS_OK;
    int step = sqlite3_prepare_v2(db, shape_objects_sql, -1, &st, NULL);
    if (step == SQLITE_OK) step = sqlite3_step(st);
    if (step == SQLITE_ROW)
        rc = rs_fail(e, RS_DATAERR, "sim world %s: table objects, row %s: field %s", path,
                     (const char *)sqlite3_column_text(st, 0),
                     (const char *)sqlite3_column_text(st, 1));
    else if (step != SQLITE_DONE)
        rc = rs_fail(e, RS_DATAERR, "sim world %s: cannot read table objects: %s", path,
                     sqlite3_errmsg(db));
    sqlite3_finalize(st);
    if (rc != RS_OK) return rc;
    if (sqlite3_prepare_v2(db,
                           "SELECT typeof(value) = 'integer' AND value >= 0 FROM store_meta "
                           "WHERE key = 'revision'",
                           -1, &st, NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW || !sqlite3_column_int(st, 0))
        rc = rs_fail(e, RS_DATAERR,
                     "sim world %s: table store_meta, row revision: field value is missing or "
                     "not a revision (an integer >= 0)",
                     path);
    sqlite3_finalize(st);
    return rc;
}

rs_code simw_shape_check(const char *db_path, rs_err *e)
{
    sqlite3 *ref = NULL, *db = NULL;
    sqlite3_stmt *tables = NULL;
    rs_code rc = RS_OK;
    if (sqlite3_open_v2(":memory:", &ref, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, NULL) !=
            SQLITE_OK ||
        simw_schema_create(ref) != SQLITE_OK) {
        rc = rs_fail(e, RS_FAILED, "cannot make the sim world schema in memory: %s",
                     ref ? sqlite3_errmsg(ref) : "out of memory");
        goto out;
    }
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        rc = rs_fail(e, RS_DATAERR, "cannot open the sim world %s: %s", db_path,
                     db ? sqlite3_errmsg(db) : "out of memory");
        goto out;
    }
    sqlite3_busy_timeout(db, 5000);
    if (sqlite3_prepare_v2(ref, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
                           -1, &tables, NULL) != SQLITE_OK) {
        rc = rs_fail(e, RS_FAILED, "cannot list the sim world schema: %s", sqlite3_errmsg(ref));
        goto out;
    }
    while (rc == RS_OK && sqlite3_step(tables) == SQLITE_ROW)
        rc = shape_table(ref, db, db_path, (const char *)sqlite3_column_text(tables, 0), e);
    if (rc == RS_OK) rc = shape_rows(db, db_path, e);
out:
    sqlite3_finalize(tables);
    sqlite3_close(db);
    sqlite3_close(ref);
    return rc;
}
