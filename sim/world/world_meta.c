/*
 * world_meta.c — the world's transactions and its world_meta rows (the
 * clock, the RNG, the run's bookkeeping).
 *
 * The one idea: a world file commits every call, so a process killed
 * between calls leaves a consistent file. A world in memory has one owner
 * and no file: its calls share one transaction, and the rows that move on
 * every call (meta rows, the §4 counters) are kept in its handle and
 * written when the world is copied or handed over (simw_flush) — a page
 * is journaled once, not once per call, and the clock is not read back
 * from SQL on every call.
 */
#include "sim/world/world_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void simw_begin(sim_world *w)
{
    if (w->txn_depth++ > 0 || w->txn_open) return;
    simw_step_done(w, simw_stmt(w, "BEGIN IMMEDIATE"));
    w->txn_open = w->mem;
}

void simw_commit(sim_world *w)
{
    if (w->txn_depth > 0 && --w->txn_depth == 0 && !w->txn_open)
        simw_step_done(w, simw_stmt(w, "COMMIT"));
}

/* Commits the shared transaction of a world in memory, between calls. */
static void simw_settle(sim_world *w)
{
    if (!w->txn_open || w->txn_depth > 0) return;
    simw_step_done(w, simw_stmt(w, "COMMIT"));
    w->txn_open = false;
}

/* The kept row of key (in memory only), or NULL when not kept. */
static struct simw_meta_kept *meta_kept(sim_world *w, const char *key)
{
    for (size_t i = 0; i < w->n_meta; i++)
        if (strcmp(w->meta[i].key, key) == 0) return &w->meta[i];
    return NULL;
}

/* Keeps key's value (in memory only); false when the table of kept rows is
 * full (the row is then read and written in SQL, as a file world's is). */
static bool meta_keep(sim_world *w, const char *key, const char *value, bool dirty)
{
    if (!w->mem) return false;
    struct simw_meta_kept *k = meta_kept(w, key);
    if (!k) {
        if (w->n_meta == SIMW_META_KEPT) return false;
        k = &w->meta[w->n_meta++];
        k->key = rs_xstrdup(key);
        k->value = NULL;
        k->dirty = false;
    }
    free(k->value);
    k->value = value ? rs_xstrdup(value) : NULL;
    k->dirty = k->dirty || dirty;
    return true;
}

void simw_meta_forget(sim_world *w)
{
    for (size_t i = 0; i < w->n_meta; i++) {
        free(w->meta[i].key);
        free(w->meta[i].value);
    }
    w->n_meta = 0;
    w->cnt_loaded = false;
    memset(w->cnt_dirty, 0, sizeof w->cnt_dirty);
}

static void meta_write(sim_world *w, const char *key, const char *value)
{
    sqlite3_stmt *st = simw_stmt(w, "INSERT INTO world_meta(key, value) VALUES(?1, ?2)"
                                    " ON CONFLICT(key) DO UPDATE SET value = excluded.value");
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
    simw_step_done(w, st);
}

void simw_flush(sim_world *w)
{
    bool any = false;
    for (size_t i = 0; i < w->n_meta && !any; i++)
        any = w->meta[i].dirty;
    for (size_t i = 0; i < SIMW_CNT_N && !any; i++)
        any = w->cnt_dirty[i];
    if (!any) {
        simw_settle(w);
        return;
    }
    simw_begin(w);
    for (size_t i = 0; i < w->n_meta; i++) {
        if (!w->meta[i].dirty) continue;
        /* A kept row is never removed: a dirty one has a value. */
        if (w->meta[i].value) meta_write(w, w->meta[i].key, w->meta[i].value);
        w->meta[i].dirty = false;
    }
    cnt_flush(w);
    simw_commit(w);
    simw_settle(w);
}

/* The row's value, borrowed until the next meta call, or NULL. */
static const char *meta_peek(sim_world *w, const char *key, char **owned)
{
    *owned = NULL;
    const struct simw_meta_kept *k = w->mem ? meta_kept(w, key) : NULL;
    if (k) return k->value;
    sqlite3_stmt *st = simw_stmt(w, "SELECT value FROM world_meta WHERE key = ?1");
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    *owned = simw_step_row(w, st) ? simw_col_text(st, 0) : NULL;
    sqlite3_reset(st);
    meta_keep(w, key, *owned, false);
    return *owned;
}

char *simw_meta_get(sim_world *w, const char *key)
{
    char *owned = NULL;
    const char *v = meta_peek(w, key, &owned);
    return owned ? owned : v ? rs_xstrdup(v) : NULL;
}

void simw_meta_set(sim_world *w, const char *key, const char *value)
{
    if (!meta_keep(w, key, value, true)) meta_write(w, key, value);
}

int64_t simw_meta_int(sim_world *w, const char *key, int64_t dflt)
{
    char *owned = NULL;
    const char *v = meta_peek(w, key, &owned);
    int64_t n = v ? strtoll(v, NULL, 10) : dflt;
    free(owned);
    return n;
}

void simw_meta_set_int(sim_world *w, const char *key, int64_t value)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)value);
    simw_meta_set(w, key, buf);
}

int64_t simw_now(sim_world *w)
{
    return simw_meta_int(w, "clock_ms", 0);
}

/* The store stamps creationTimestamp from its own clock: the world's wall
 * clock, kept in step wherever the clock or its offset moves. */
static void simw_store_clock(sim_world *w)
{
    store_set_now(w->db, simw_now(w) + simw_meta_int(w, "wall_offset_ms", SIMW_EPOCH_MS));
}

void simw_set_now(sim_world *w, int64_t ms)
{
    simw_meta_set_int(w, "clock_ms", ms);
    simw_store_clock(w);
}

/* One epoch (issue: a core clock from 1970 against world stamps of 2026
 * made every real renewTime "in the future"): the world's stamps and the
 * core's clock both read simw_wall. The offset is a row, like the clock, so
 * a forked run's clock step survives it. */
int64_t simw_wall(sim_world *w)
{
    return simw_now(w) + simw_meta_int(w, "wall_offset_ms", SIMW_EPOCH_MS);
}

int64_t simw_wall_start(sim_world *w)
{
    return simw_meta_int(w, "wall_start_ms", SIMW_EPOCH_MS);
}

bool simw_wall_step(sim_world *w, int64_t delta_ms)
{
    int64_t wall = simw_wall(w);
    if (delta_ms < -wall || delta_ms > SIMW_WALL_MAX_MS - wall) return false;
    simw_meta_set_int(w, "wall_offset_ms",
                      simw_meta_int(w, "wall_offset_ms", SIMW_EPOCH_MS) + delta_ms);
    simw_store_clock(w);
    return true;
}

void simw_clocks_set(sim_world *w, int64_t clock_ms, int64_t wall_start_ms)
{
    simw_set_now(w, clock_ms);
    simw_meta_set_int(w, "wall_offset_ms", wall_start_ms - clock_ms);
    simw_meta_set_int(w, "wall_start_ms", wall_start_ms);
    simw_store_clock(w);
}
