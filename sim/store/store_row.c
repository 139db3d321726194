/*
 * store_row.c — the store's rows in SQLite: one row per object, one global
 * revision counter, and the SAVEPOINT every write runs in.
 *
 * Schema (created by store_init):
 *   objects(kind, ns, name, uid, rv, body)  body = the object as JSON text;
 *                                           ns = "" for cluster-scoped kinds
 *   store_meta(key, value)                  key 'revision' = global revision
 *
 * The one idea: this file moves bytes and decides nothing; whether a write
 * changes an object, and so takes a revision, is store.c's call. Writes run
 * inside a SAVEPOINT, so they nest inside a caller's transaction and a
 * failure half way leaves nothing behind.
 */
#include "sim/store/store_int.h"

int store_init(sqlite3 *db)
{
    static const char sql[] =
        "CREATE TABLE IF NOT EXISTS objects("
        " kind TEXT NOT NULL, ns TEXT NOT NULL, name TEXT NOT NULL,"
        " uid TEXT NOT NULL, rv INTEGER NOT NULL, body TEXT NOT NULL,"
        " PRIMARY KEY(kind, ns, name)) WITHOUT ROWID;"
        "CREATE TABLE IF NOT EXISTS store_meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
        "INSERT OR IGNORE INTO store_meta(key, value) VALUES('revision', 0);";
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

long long store_revision(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    long long rev = -1;
    if (sqlite3_prepare_v2(db, "SELECT value FROM store_meta WHERE key = 'revision'", -1, &st,
                           NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        rev = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rev;
}

void store_set_now(sqlite3 *db, long long ms)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO store_meta(key, value) VALUES('now_ms', ?1)",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_bind_int64(st, 1, ms) == SQLITE_OK)
        sqlite3_step(st);
    sqlite3_finalize(st);
}

/* Takes the next global revision. */
int store_bump(sqlite3 *db, long long *rev)
{
    int rc = sqlite3_exec(db, "UPDATE store_meta SET value = value + 1 WHERE key = 'revision'",
                          NULL, NULL, NULL);
    if (rc != SQLITE_OK) return rc;
    *rev = store_revision(db);
    return *rev > 0 ? SQLITE_OK : SQLITE_ERROR;
}

static int store_bind3(sqlite3_stmt *st, const char *kind, const char *ns, const char *name)
{
    int rc = sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 2, ns, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
    return rc;
}

/* Reads one object: SQLITE_OK with *obj NULL when it does not exist. */
int store_load(sqlite3 *db, const char *kind, const char *ns, const char *name, cJSON **obj)
{
    *obj = NULL;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(
        db, "SELECT body FROM objects WHERE kind = ?1 AND ns = ?2 AND name = ?3", -1, &st, NULL);
    if (rc == SQLITE_OK) rc = store_bind3(st, kind, ns, name);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *obj = cJSON_Parse((const char *)sqlite3_column_text(st, 0));
            rc = *obj ? SQLITE_OK : SQLITE_CORRUPT;
        } else if (rc == SQLITE_DONE) {
            rc = SQLITE_OK;
        }
    }
    sqlite3_finalize(st);
    return rc;
}

const char *store_meta_str(const cJSON *obj, const char *key)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(meta, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int store_write(sqlite3 *db, const char *kind, const char *ns, const char *name, const cJSON *obj,
                long long rev)
{
    char *text = cJSON_PrintUnformatted(obj);
    const char *uid = store_meta_str(obj, "uid");
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db,
                                "INSERT OR REPLACE INTO objects(kind, ns, name, uid, rv, body) "
                                "VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) rc = store_bind3(st, kind, ns, name);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 4, uid ? uid : "", -1, SQLITE_STATIC);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 5, rev);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 6, text, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK) rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
    sqlite3_finalize(st);
    cJSON_free(text);
    return rc;
}

int store_erase(sqlite3 *db, const char *kind, const char *ns, const char *name)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "DELETE FROM objects WHERE kind = ?1 AND ns = ?2 AND name = ?3",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) rc = store_bind3(st, kind, ns, name);
    if (rc == SQLITE_OK) rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
    sqlite3_finalize(st);
    return rc;
}

/* A write either lands whole or not at all; a SAVEPOINT nests inside a
 * transaction the world may already hold. */
int store_tx_begin(sqlite3 *db)
{
    return sqlite3_exec(db, "SAVEPOINT store_write", NULL, NULL, NULL);
}

void store_tx_end(sqlite3 *db, bool commit)
{
    if (!commit) sqlite3_exec(db, "ROLLBACK TO store_write", NULL, NULL, NULL);
    sqlite3_exec(db, "RELEASE store_write", NULL, NULL, NULL);
}
