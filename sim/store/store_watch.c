/*
 * store_watch.c — the watch log: every change of an object since a
 * connection enabled it, with the revision it took, so `sim serve` answers
 * a watch from any resourceVersion it still holds, as the API server's
 * watch cache does (and 410 Gone for one it no longer holds).
 *
 * The log is TEMP: a table and triggers of this connection only, never in
 * the world file, rolled back with the write that made it (a failed write,
 * a dry run's savepoint). The triggers see every write whoever makes it —
 * a client's call, a controller, a world event — because every write of an
 * object is a row of `objects`:
 *   - an insert (create, or a replace of the row) is ADDED or MODIFIED, with
 *     the row's new rv and the body before (`prev`, for selectors: an
 *     object that leaves a watch's selection is DELETED for that watch);
 *   - a delete is DELETED, and takes the revision of the bump that follows
 *     it in the same transaction (store_delete erases, then bumps).
 */
#include "sim/store/store_int.h"

#include "core/cred/cred.h"

#include <stdio.h>
#include <stdlib.h>

static const char watch_sql[] =
    "CREATE TEMP TABLE IF NOT EXISTS watch_log(id INTEGER PRIMARY KEY, rev INTEGER,"
    " type TEXT NOT NULL, kind TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL,"
    " body TEXT NOT NULL, prev TEXT);"
    "CREATE INDEX IF NOT EXISTS temp.watch_log_kind ON watch_log(kind, rev);"
    "CREATE TEMP TABLE IF NOT EXISTS watch_meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    "INSERT OR IGNORE INTO watch_meta(key, value)"
    " SELECT 'horizon', value FROM main.store_meta WHERE key = 'revision';"
    "CREATE TEMP TRIGGER IF NOT EXISTS watch_put BEFORE INSERT ON main.objects BEGIN"
    " INSERT INTO watch_log(rev, type, kind, ns, name, body, prev)"
    " SELECT NEW.rv, CASE WHEN o.body IS NULL THEN 'ADDED' ELSE 'MODIFIED' END,"
    "  NEW.kind, NEW.ns, NEW.name, NEW.body, o.body"
    " FROM (SELECT (SELECT body FROM main.objects WHERE kind = NEW.kind AND ns = NEW.ns"
    "  AND name = NEW.name) AS body) o;"
    " END;"
    "CREATE TEMP TRIGGER IF NOT EXISTS watch_upd AFTER UPDATE ON main.objects BEGIN"
    " INSERT INTO watch_log(rev, type, kind, ns, name, body, prev)"
    " VALUES(NEW.rv, 'MODIFIED', NEW.kind, NEW.ns, NEW.name, NEW.body, OLD.body);"
    " END;"
    "CREATE TEMP TRIGGER IF NOT EXISTS watch_del AFTER DELETE ON main.objects BEGIN"
    " INSERT INTO watch_log(rev, type, kind, ns, name, body, prev)"
    " VALUES(NULL, 'DELETED', OLD.kind, OLD.ns, OLD.name, OLD.body, OLD.body);"
    " END;"
    "CREATE TEMP TRIGGER IF NOT EXISTS watch_rev AFTER UPDATE ON main.store_meta"
    " WHEN NEW.key = 'revision' BEGIN"
    " UPDATE watch_log SET rev = NEW.value WHERE rev IS NULL;"
    " END;";

int store_watch_enable(sqlite3 *db)
{
    return sqlite3_exec(db, watch_sql, NULL, NULL, NULL);
}

long long store_watch_horizon(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    long long h = -1;
    if (sqlite3_prepare_v2(db, "SELECT value FROM temp.watch_meta WHERE key = 'horizon'", -1, &st,
                           NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        h = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return h;
}

int store_watch_events(sqlite3 *db, const char *kind, long long after, size_t max,
                       store_watch_fn fn, void *arg)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db,
                                "SELECT rev, type, ns, name, body, prev FROM temp.watch_log"
                                " WHERE kind = ?1 AND rev > ?2 ORDER BY rev, id LIMIT ?3",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 2, after);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 3, (sqlite3_int64)max);
    int n = 0;
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        store_event ev = {.rev = sqlite3_column_int64(st, 0),
                          .type = (const char *)sqlite3_column_text(st, 1),
                          .ns = (const char *)sqlite3_column_text(st, 2),
                          .name = (const char *)sqlite3_column_text(st, 3)};
        cJSON *obj = cJSON_Parse((const char *)sqlite3_column_text(st, 4));
        const char *prev_text = (const char *)sqlite3_column_text(st, 5);
        cJSON *prev = prev_text ? cJSON_Parse(prev_text) : NULL;
        ev.obj = obj;
        ev.prev = prev;
        rc = obj ? SQLITE_OK : SQLITE_CORRUPT;
        if (obj) fn(&ev, arg);
        cred_json_wipe_delete(obj); /* Secrets */
        cred_json_wipe_delete(prev);
        n++;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? n : -1;
}

void store_watch_compact(sqlite3 *db, long long keep)
{
    sqlite3_stmt *st = NULL;
    long long cut = -1;
    /* The revision below which events are dropped: the keep-th newest. */
    if (sqlite3_prepare_v2(db,
                           "SELECT rev FROM temp.watch_log WHERE rev IS NOT NULL"
                           " ORDER BY id DESC LIMIT 1 OFFSET ?1",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_bind_int64(st, 1, keep) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        cut = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (cut < 0) return;
    char sql[192];
    snprintf(sql, sizeof sql,
             "DELETE FROM temp.watch_log WHERE rev <= %lld;"
             "UPDATE temp.watch_meta SET value = max(value, %lld) WHERE key = 'horizon';",
             cut, cut);
    sqlite3_exec(db, sql, NULL, NULL, NULL);
}
