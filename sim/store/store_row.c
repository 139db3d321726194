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

#include <stdlib.h>

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

/* Every statement the store runs, prepared once per connection. */
enum {
    STORE_SQL_REVISION,
    STORE_SQL_BUMP,
    STORE_SQL_LOAD,
    STORE_SQL_LIST,
    STORE_SQL_WRITE,
    STORE_SQL_ERASE,
    STORE_SQL_SAVEPOINT,
    STORE_SQL_ROLLBACK,
    STORE_SQL_RELEASE,
    STORE_SQL_N
};

static const char *const store_sql[STORE_SQL_N] = {
    [STORE_SQL_REVISION] = "SELECT value FROM store_meta WHERE key = 'revision'",
    [STORE_SQL_BUMP] = "UPDATE store_meta SET value = value + 1 WHERE key = 'revision'",
    [STORE_SQL_LOAD] = "SELECT body FROM objects WHERE kind = ?1 AND ns = ?2 AND name = ?3",
    /* The primary key (kind, ns, name) orders rows bytewise (BINARY collation). */
    [STORE_SQL_LIST] =
        "SELECT ns, name, body FROM objects WHERE kind = ?1 AND (?2 = '' OR ns = ?2) "
        "ORDER BY ns, name",
    [STORE_SQL_WRITE] = "INSERT OR REPLACE INTO objects(kind, ns, name, uid, rv, body) "
                        "VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
    [STORE_SQL_ERASE] = "DELETE FROM objects WHERE kind = ?1 AND ns = ?2 AND name = ?3",
    [STORE_SQL_SAVEPOINT] = "SAVEPOINT store_write",
    [STORE_SQL_ROLLBACK] = "ROLLBACK TO store_write",
    [STORE_SQL_RELEASE] = "RELEASE store_write",
};

struct store {
    sqlite3 *db;
    sqlite3_stmt *stmt[STORE_SQL_N];
    store_cache *cache; /* NULL unless store_cache_on */
    long long rev;      /* the revision, when rev_known (with the cache only) */
    bool rev_known;
    bool wrote; /* the open SAVEPOINT changed a row */
};

store *store_open(sqlite3 *db)
{
    store *s = rs_xcalloc(1, sizeof *s);
    s->db = db;
    return s;
}

void store_close(store *s)
{
    if (!s) return;
    for (size_t i = 0; i < STORE_SQL_N; i++)
        sqlite3_finalize(s->stmt[i]);
    store_cache_free(s->cache);
    free(s);
}

void store_cache_on(store *s)
{
    if (!s->cache) s->cache = store_cache_new();
}

void store_forget(store *s)
{
    store_cache_clear(s->cache);
    s->rev_known = false;
}

sqlite3 *store_db(store *s)
{
    return s->db;
}

/* The statement, reset and unbound, prepared on first use; NULL (the
 * connection's error set) when it cannot be. */
static sqlite3_stmt *store_stmt(store *s, int which)
{
    sqlite3_stmt *st = s->stmt[which];
    if (st) {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        return st;
    }
    if (sqlite3_prepare_v3(s->db, store_sql[which], -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) !=
        SQLITE_OK)
        return NULL;
    s->stmt[which] = st;
    return st;
}

/* One statement run to its end, left reset: SQLITE_OK or the error. */
static int store_run(store *s, int which)
{
    sqlite3_stmt *st = store_stmt(s, which);
    if (!st) return sqlite3_errcode(s->db);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

long long store_revision(store *db)
{
    if (db->rev_known) return db->rev;
    sqlite3_stmt *st = store_stmt(db, STORE_SQL_REVISION);
    long long rev = -1;
    if (st && sqlite3_step(st) == SQLITE_ROW) rev = sqlite3_column_int64(st, 0);
    if (st) sqlite3_reset(st);
    db->rev = rev;
    db->rev_known = db->cache && rev >= 0;
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
int store_bump(store *db, long long *rev)
{
    db->rev_known = false;
    db->wrote = true;
    int rc = store_run(db, STORE_SQL_BUMP);
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
int store_load(store *db, const char *kind, const char *ns, const char *name, cJSON **obj)
{
    *obj = NULL;
    const cJSON *kept = store_cache_get(db->cache, kind, ns, name);
    if (kept) {
        *obj = cJSON_Duplicate(kept, true);
        return *obj ? SQLITE_OK : SQLITE_NOMEM;
    }
    sqlite3_stmt *st = store_stmt(db, STORE_SQL_LOAD);
    int rc = st ? store_bind3(st, kind, ns, name) : sqlite3_errcode(db->db);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *obj = cJSON_Parse((const char *)sqlite3_column_text(st, 0));
            rc = *obj ? SQLITE_OK : SQLITE_CORRUPT;
            if (*obj && db->cache)
                store_cache_put(db->cache, kind, ns, name, cJSON_Duplicate(*obj, true));
        } else if (rc == SQLITE_DONE) {
            rc = SQLITE_OK;
        }
    }
    if (st) sqlite3_reset(st);
    return rc;
}

int store_peek(store *db, const char *kind, const char *ns, const char *name, const cJSON **obj,
               cJSON **hold)
{
    *hold = NULL;
    *obj = store_cache_get(db->cache, kind, ns, name);
    if (*obj) return SQLITE_OK;
    int rc = store_load(db, kind, ns, name, hold);
    *obj = *hold;
    return rc;
}

int store_scan(store *db, const char *kind, const char *ns, store_scan_fn fn, void *arg)
{
    sqlite3_stmt *st = store_stmt(db, STORE_SQL_LIST);
    int rc = st ? sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC) : sqlite3_errcode(db->db);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 2, ns, -1, SQLITE_STATIC);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *row_ns = (const char *)sqlite3_column_text(st, 0);
        const char *row_name = (const char *)sqlite3_column_text(st, 1);
        const cJSON *kept =
            store_cache_get(db->cache, kind, row_ns ? row_ns : "", row_name ? row_name : "");
        if (kept) {
            fn(kept, arg);
            rc = SQLITE_OK;
            continue;
        }
        cJSON *obj = cJSON_Parse((const char *)sqlite3_column_text(st, 2));
        rc = obj ? SQLITE_OK : SQLITE_CORRUPT;
        if (obj) fn(obj, arg);
        if (obj && db->cache)
            store_cache_put(db->cache, kind, row_ns ? row_ns : "", row_name ? row_name : "", obj);
        else
            cJSON_Delete(obj);
    }
    if (st) sqlite3_reset(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

const char *store_meta_str(const cJSON *obj, const char *key)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(meta, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int store_write(store *db, const char *kind, const char *ns, const char *name, const cJSON *obj,
                long long rev)
{
    db->wrote = true;
    char *text = cJSON_PrintUnformatted(obj);
    const char *uid = store_meta_str(obj, "uid");
    sqlite3_stmt *st = store_stmt(db, STORE_SQL_WRITE);
    int rc = st ? store_bind3(st, kind, ns, name) : sqlite3_errcode(db->db);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 4, uid ? uid : "", -1, SQLITE_STATIC);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 5, rev);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 6, text, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK) rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db->db);
    if (st) {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st); /* text is freed next */
    }
    cJSON_free(text);
    if (db->cache) {
        if (rc == SQLITE_OK)
            store_cache_put(db->cache, kind, ns, name, cJSON_Duplicate(obj, true));
        else
            store_cache_drop(db->cache, kind, ns, name);
    }
    return rc;
}

int store_erase(store *db, const char *kind, const char *ns, const char *name)
{
    db->wrote = true;
    sqlite3_stmt *st = store_stmt(db, STORE_SQL_ERASE);
    int rc = st ? store_bind3(st, kind, ns, name) : sqlite3_errcode(db->db);
    if (rc == SQLITE_OK) rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db->db);
    if (st) sqlite3_reset(st);
    store_cache_drop(db->cache, kind, ns, name);
    return rc;
}

/* A write either lands whole or not at all; a SAVEPOINT nests inside a
 * transaction the world may already hold. */
int store_tx_begin(store *db)
{
    db->wrote = false;
    return store_run(db, STORE_SQL_SAVEPOINT);
}

void store_tx_end(store *db, bool commit)
{
    if (!commit) {
        (void)store_run(db, STORE_SQL_ROLLBACK);
        /* What the savepoint wrote is gone from the rows (a refusal that
         * wrote nothing, a 409 say, leaves the kept copies true). */
        if (db->wrote) store_forget(db);
    }
    (void)store_run(db, STORE_SQL_RELEASE);
}
