/*
 * world.c — the world file's lifecycle (build, open, close), its SQL plumbing
 * and meta rows, and the uncounted reads state checks use.
 *
 * The one idea: the world is the SQLite file. Every public entry point runs
 * in one transaction and commits before returning, so a run forked off and
 * killed between calls leaves a consistent world behind.
 */
#include "sim/world/world_internal.h"

#include "sim/store/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const simw_schema =
    "CREATE TABLE world_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE catalogue(name TEXT PRIMARY KEY, dockerconfigjson TEXT NOT NULL,"
    " ciphertext TEXT NOT NULL, username TEXT, password TEXT,"
    " revoked INTEGER NOT NULL DEFAULT 0, pulls TEXT);"
    "CREATE TABLE openbao(path TEXT NOT NULL, version INTEGER NOT NULL, data TEXT NOT NULL,"
    " created_ms INTEGER NOT NULL, PRIMARY KEY(path, version));"
    "CREATE TABLE talos(node TEXT PRIMARY KEY, role TEXT NOT NULL, registry_auth TEXT,"
    " loaded_auth TEXT, node_annotations TEXT NOT NULL DEFAULT '{}',"
    " images TEXT NOT NULL DEFAULT '[]', etcd_healthy INTEGER NOT NULL DEFAULT 1,"
    " rebooting INTEGER NOT NULL DEFAULT 0, reboot_seq INTEGER NOT NULL DEFAULT 0,"
    " pdb_block_until INTEGER NOT NULL DEFAULT 0, reboot_mode INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE timers(id INTEGER PRIMARY KEY, due_ms INTEGER NOT NULL, kind TEXT NOT NULL,"
    " payload TEXT NOT NULL);"
    "CREATE INDEX timers_due ON timers(due_ms, id);"
    "CREATE TABLE counters(name TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    "CREATE TABLE writes_by_kind(kind TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    "CREATE TABLE call_log(seq INTEGER PRIMARY KEY, run TEXT NOT NULL, op TEXT NOT NULL,"
    " target TEXT NOT NULL, status INTEGER NOT NULL, applied INTEGER NOT NULL,"
    " vt_ms INTEGER NOT NULL, lease_held INTEGER NOT NULL DEFAULT 0,"
    " fences_held INTEGER NOT NULL DEFAULT 0, held_mask INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX call_log_run ON call_log(run, seq);"
    /* Violations the transport sees at call time (invariant 4): only then is
     * the world's state before the call still observable. */
    "CREATE TABLE violations(seq INTEGER PRIMARY KEY, run TEXT NOT NULL,"
    " invariant INTEGER NOT NULL, message TEXT NOT NULL);"
    "CREATE INDEX violations_run ON violations(run, seq);"

    "CREATE TABLE cordons(run TEXT NOT NULL, node TEXT NOT NULL, PRIMARY KEY(run, node));"
    /* Calls that released one of the calling run's own fences (invariant 1
     * tells that cleanup from a fenced write). */
    "CREATE TABLE releases(run TEXT NOT NULL, call_seq INTEGER NOT NULL,"
    " PRIMARY KEY(run, call_seq));"
    /* Objects another actor's `during:` event changed, and after which call
     * of the run (invariant 2 does not blame a run for a change it could
     * not have seen). */
    "CREATE TABLE foreign_writes(seq INTEGER PRIMARY KEY, run TEXT NOT NULL,"
    " ref TEXT NOT NULL, after_call INTEGER NOT NULL);"
    "CREATE TABLE eso_state(ref TEXT PRIMARY KEY, force_sync TEXT NOT NULL);"
    "CREATE TABLE flux_state(ref TEXT PRIMARY KEY, suspended INTEGER NOT NULL,"
    " requested_at TEXT NOT NULL, reconciling INTEGER NOT NULL);"
    "CREATE TABLE drains(run TEXT NOT NULL, node TEXT NOT NULL, PRIMARY KEY(run, node));";

/* Failed `check:` actions of `during:` entries, at their scenario line
 * (sim/check/check_expect.c): a crashed run keeps them. Made on open too,
 * so a world file built before checks existed takes them. */
static const char *const simw_schema_checks =
    "CREATE TABLE IF NOT EXISTS check_failures(seq INTEGER PRIMARY KEY, run TEXT NOT NULL,"
    " line INTEGER NOT NULL, message TEXT NOT NULL);";

int simw_schema_create(sqlite3 *db)
{
    int rc = sqlite3_exec(db, simw_schema, NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, simw_schema_checks, NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = store_init(db);
    return rc;
}

_Noreturn void simw_die(sim_world *w, const char *what)
{
    fprintf(stderr, "sim world: %s failed: %s\n", what, w && w->db ? sqlite3_errmsg(w->db) : "");
    abort();
}

sqlite3_stmt *simw_stmt(sim_world *w, const char *sql)
{
    for (size_t i = 0; i < w->n_stmt; i++) {
        if (w->stmt_sql[i] == sql || strcmp(w->stmt_sql[i], sql) == 0) {
            sqlite3_reset(w->stmt[i]);
            sqlite3_clear_bindings(w->stmt[i]);
            return w->stmt[i];
        }
    }
    if (w->n_stmt == SIMW_STMT_MAX) simw_die(w, "statement cache (too many distinct statements)");
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v3(w->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK)
        simw_die(w, sql);
    w->stmt_sql[w->n_stmt] = sql;
    w->stmt[w->n_stmt++] = st;
    return st;
}

void simw_step_done(sim_world *w, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) simw_die(w, sqlite3_sql(st));
    sqlite3_reset(st);
}

bool simw_step_row(sim_world *w, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) simw_die(w, sqlite3_sql(st));
    return false;
}

void simw_exec(sim_world *w, const char *sql)
{
    if (sqlite3_exec(w->db, sql, NULL, NULL, NULL) != SQLITE_OK) simw_die(w, sql);
}

char *simw_col_text(sqlite3_stmt *st, int col)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    return t ? rs_xstrdup((const char *)t) : NULL;
}

int simw_merge(sim_world *w, const char *kind, const char *ns, const char *name, cJSON *patch)
{
    cJSON *out = NULL;
    int status = store_patch(w->st, kind, ns, name, RS_PATCH_MERGE, patch, &out);
    cJSON_Delete(out);
    cJSON_Delete(patch);
    return status;
}

const cJSON *simw_peek(sim_world *w, const char *kind, const char *ns, const char *name,
                       cJSON **hold)
{
    return store_lookup(w->st, kind, ns, name, hold);
}

cJSON *simw_get(sim_world *w, const char *kind, const char *ns, const char *name)
{
    cJSON *out = NULL;
    int status = store_get(w->st, kind, ns, name, &out);
    if (status == 200) return out;
    cJSON_Delete(out);
    return NULL;
}

/* ---- lifecycle ---- */

void simw_free(sim_world *w)
{
    if (!w) return;
    for (size_t i = 0; i < w->n_stmt; i++)
        sqlite3_finalize(w->stmt[i]);
    store_close(w->st);
    if (w->db) sqlite3_close(w->db);
    rs_config_free(&w->cfg);
    simw_meta_forget(w);
    free(w->handoff_path);
    free(w);
}

/* The core's view of this cluster: production names plus the fan-out
 * namespaces the world was built with. */
void simw_load_config(sim_world *w)
{
    rs_config_free(&w->cfg); /* a world just built holds its preset's */
    rs_config_defaults(&w->cfg);
    char *text = simw_meta_get(w, "cluster");
    cJSON *cluster = text ? cJSON_Parse(text) : NULL;
    free(text);
    const cJSON *fan = cJSON_GetObjectItemCaseSensitive(cluster, "fanout");
    size_t n = 0;
    const char *names[RS_CONFIG_LIST_MAX];
    const cJSON *it;
    cJSON_ArrayForEach(it, fan)
    {
        if (cJSON_IsString(it) && n < RS_CONFIG_LIST_MAX) names[n++] = it->valuestring;
    }
    if (fan) rs_config_set_list(w->cfg.fanout_namespaces, &w->cfg.n_fanout, names, n);
    cJSON_Delete(cluster);
}

/* db_path NULL: a world in memory (one process owns it for its life; no
 * file, no locks, no journal on disk). */
static rs_code world_connect(const char *db_path, int flags, sim_world **out, rs_err *e)
{
    sim_world *w = rs_xcalloc(1, sizeof *w);
    const char *name = db_path ? db_path : ":memory:";
    if (sqlite3_open_v2(name, &w->db, flags, NULL) != SQLITE_OK) {
        rs_fail(e, RS_FAILED, "cannot open the sim world %s: %s", name,
                w->db ? sqlite3_errmsg(w->db) : "out of memory");
        simw_free(w);
        return RS_FAILED;
    }
    sqlite3_busy_timeout(w->db, 5000);
    w->st = store_open(w->db);
    w->mem = !db_path;
    if (w->mem) store_cache_on(w->st);
    /* A file: WAL survives a child that _exit()s between calls; durability
     * against power loss is irrelevant for a simulation, so no fsync (set
     * first: the switch to WAL would otherwise sync a rollback journal four
     * times). In memory, the journal is in memory too. */
    if (db_path && sqlite3_exec(w->db, "PRAGMA synchronous=OFF; PRAGMA journal_mode=WAL;", NULL,
                                NULL, NULL) != SQLITE_OK) {
        rs_fail(e, RS_FAILED, "cannot configure the sim world %s: %s", name, sqlite3_errmsg(w->db));
        simw_free(w);
        return RS_FAILED;
    }
    *out = w;
    return RS_OK;
}

static void world_unlink(const char *db_path)
{
    const char *suffixes[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < RS_ARRAY_LEN(suffixes); i++) {
        char *p = rs_xasprintf("%s%s", db_path, suffixes[i]);
        unlink(p);
        free(p);
    }
}

rs_code simw_create(const char *db_path, const sim_world_desc *d, simw_overlay_fn overlay,
                    void *ctx, sim_world **keep, rs_err *e)
{
    if (keep) *keep = NULL;
    if (db_path) world_unlink(db_path);
    const char *name = db_path ? db_path : "(in memory)";
    sim_world *w = NULL;
    rs_code rc = world_connect(db_path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &w, e);
    if (rc != RS_OK) return rc;
    if (simw_schema_create(w->db) != SQLITE_OK) {
        rc = rs_fail(e, RS_FAILED, "cannot create the sim world schema in %s: %s", name,
                     sqlite3_errmsg(w->db));
        simw_free(w);
        return rc;
    }
    simw_begin(w);
    rc = simw_preset_build(w, d, e);
    if (rc == RS_OK && overlay) rc = overlay(w, ctx, e);
    if (rc != RS_OK) {
        simw_exec(w, "ROLLBACK");
        w->txn_open = false;
        simw_free(w);
        return rc;
    }
    /* The controllers' bookkeeping starts from the objects as they are now
     * (an overlay's observed Kustomizations, say). */
    ctl_init(w);
    simw_commit(w);
    if (keep) {
        simw_load_config(w);
        *keep = w;
    } else {
        simw_free(w);
    }
    return RS_OK;
}

rs_code sim_world_create(const char *db_path, const sim_world_desc *d, rs_err *e)
{
    return simw_create(db_path, d, NULL, NULL, NULL, e);
}

/* db_path NULL: in memory, kept open in *keep. */
static rs_code world_build(const char *db_path, const sc_scenario *sc, char ***warnings,
                           size_t *n_warnings, sim_world **keep, rs_err *e)
{
    if (warnings) {
        *warnings = NULL;
        *n_warnings = 0;
    }
    sim_world_cred *creds = rs_xcalloc(sc->n_catalogue, sizeof *creds);
    for (size_t i = 0; i < sc->n_catalogue; i++) {
        const sc_cred *c = &sc->catalogue[i];
        creds[i] = (sim_world_cred){.name = c->name,
                                    .username = c->username,
                                    .password = c->password,
                                    .dockerconfigjson = c->dockerconfigjson,
                                    .ciphertext = c->ciphertext,
                                    .revoked = c->revoked,
                                    .pulls = (const char *const *)c->pulls,
                                    .n_pulls = c->n_pulls,
                                    .manifest_denial = c->manifest_denial};
    }
    sim_world_desc d = {.preset = sc->cluster.preset,
                        .control_planes = sc->cluster.control_planes,
                        .workers = sc->cluster.workers,
                        .fanout_namespaces = (const char *const *)sc->cluster.fanout_namespaces,
                        .n_fanout = sc->cluster.n_fanout,
                        .credential = sc->cluster.credential,
                        .catalogue = creds,
                        .n_catalogue = sc->n_catalogue,
                        .seed = sc->seed,
                        .wall_start_set = sc->clock_start_set,
                        .wall_start_ms = sc->clock_start_ms};
    rs_code rc = sc->cluster.cassette ? simw_reseed(db_path, sc, &d, warnings, n_warnings, keep, e)
                                      : simw_create(db_path, &d, NULL, NULL, keep, e);
    free(creds);
    return rc;
}

rs_code sim_world_build_warn(const char *db_path, const sc_scenario *sc, char ***warnings,
                             size_t *n_warnings, rs_err *e)
{
    return world_build(db_path, sc, warnings, n_warnings, NULL, e);
}

rs_code sim_world_build_mem(const sc_scenario *sc, sim_world **out, char ***warnings,
                            size_t *n_warnings, rs_err *e)
{
    return world_build(NULL, sc, warnings, n_warnings, out, e);
}

rs_code sim_world_build(const char *db_path, const sc_scenario *sc, rs_err *e)
{
    return sim_world_build_warn(db_path, sc, NULL, NULL, e);
}

rs_code sim_world_probe(const char *db_path, rs_err *e)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    /* Read-only and without the WAL pragma: looking must not turn a stranger's
     * file into a database. */
    bool world = sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
                 sqlite3_prepare_v2(db, "SELECT value FROM world_meta WHERE key = 'clock_ms'", -1,
                                    &st, NULL) == SQLITE_OK &&
                 sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    sqlite3_close(db);
    return world ? RS_OK : rs_fail(e, RS_DATAERR, "%s is not a sim world", db_path);
}

rs_code sim_world_open(const char *db_path, sim_world **out, rs_err *e)
{
    *out = NULL;
    /* Bad input, not a failed run (65): a path that is not a regular file,
     * or a file that is not a world. Looked at read-only first, so a
     * stranger's file is never turned into a WAL database or given
     * -wal/-shm/-journal files beside it. */
    struct stat st;
    if (stat(db_path, &st) != 0)
        return rs_fail(e, RS_DATAERR, "cannot open the sim world %s: %s", db_path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return rs_fail(e, RS_DATAERR, "cannot open the sim world %s: not a regular file", db_path);
    rs_code rc = sim_world_probe(db_path, e);
    /* Its tables and objects of the shape simw_create makes, looked at
     * read-only too: a refused file is never written to. */
    if (rc == RS_OK) rc = simw_shape_check(db_path, e);
    if (rc != RS_OK) return rc;
    sim_world *w = NULL;
    rc = world_connect(db_path, SQLITE_OPEN_READWRITE, &w, e);
    if (rc != RS_OK) {
        e->code = RS_DATAERR;
        return RS_DATAERR;
    }
    /* Every built world has a clock row; anything else is not a world file. */
    char *clock = simw_meta_get(w, "clock_ms");
    if (!clock) {
        rc = rs_fail(e, RS_DATAERR, "%s is not a sim world (no clock)", db_path);
        simw_free(w);
        return rc;
    }
    /* A clock no run could have reached (every run is bounded, and durations
     * are at most 366 days): a hostile or corrupt world, refused before any
     * timer arithmetic could overflow or spin. */
    char *endp = NULL;
    errno = 0;
    long long ms = strtoll(clock, &endp, 10);
    bool sane = errno == 0 && endp && *endp == '\0' && ms >= 0 && ms <= SIMW_CLOCK_MAX_MS;
    free(clock);
    /* The wall clock too: every timestamp keeps a four-digit year. */
    if (sane) {
        char *off = simw_meta_get(w, "wall_offset_ms");
        errno = 0;
        long long o = off ? strtoll(off, &endp, 10) : SIMW_EPOCH_MS;
        sane = (!off || (errno == 0 && endp && *endp == '\0')) && o >= -ms &&
               o <= SIMW_WALL_MAX_MS - ms;
        free(off);
    }
    if (!sane) {
        rc = rs_fail(e, RS_DATAERR, "%s is not a usable sim world: its clock is out of range",
                     db_path);
        simw_free(w);
        return rc;
    }
    if (sqlite3_exec(w->db, simw_schema_checks, NULL, NULL, NULL) != SQLITE_OK) {
        rc = rs_fail(e, RS_FAILED, "cannot open the sim world %s: %s", db_path,
                     sqlite3_errmsg(w->db));
        simw_free(w);
        return rc;
    }
    simw_load_config(w);
    *out = w;
    return RS_OK;
}

void sim_world_close(sim_world *w)
{
    simw_free(w);
}

struct store *sim_world_store(sim_world *w)
{
    return w->st;
}

sqlite3 *sim_world_db(sim_world *w)
{
    simw_flush(w); /* whoever reads the rows sees every kept value */
    return w->db;
}

rs_code sim_world_apply_event(sim_world *w, const sc_event *ev, rs_err *e)
{
    simw_begin(w);
    rs_code rc = simw_apply_event(w, ev, e);
    simw_commit(w);
    return rc;
}

/* ---- uncounted reads for state checks ---- */

rs_code sim_world_credential(sim_world *w, const char *name, char **dockerconfigjson,
                             char **ciphertext, rs_err *e)
{
    *dockerconfigjson = *ciphertext = NULL;
    sqlite3_stmt *st =
        simw_stmt(w, "SELECT dockerconfigjson, ciphertext FROM catalogue WHERE name = ?1");
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    if (simw_step_row(w, st)) {
        *dockerconfigjson = simw_col_text(st, 0);
        *ciphertext = simw_col_text(st, 1);
    }
    sqlite3_reset(st);
    if (*dockerconfigjson) return RS_OK;
    /* The name is never echoed: `--desired` is where a password pasted by
     * mistake lands. The catalogue's own names are safe to list. */
    char names[512] = "";
    size_t used = 0;
    st = simw_stmt(w, "SELECT name FROM catalogue ORDER BY name");
    while (simw_step_row(w, st) && used + 2 < sizeof names) {
        const char *n = (const char *)sqlite3_column_text(st, 0);
        int k = snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", n ? n : "");
        if (k < 0 || (size_t)k >= sizeof names - used) break; /* cut: the list is a hint */
        used += (size_t)k;
    }
    sqlite3_reset(st);
    return rs_fail(e, RS_DATAERR, "the credential name given is not in the catalogue (it has: %s)",
                   names);
}

rs_code sim_world_secrets(sim_world *w, char ***secrets, size_t *n, rs_err *e)
{
    (void)e;
    size_t cap = 8, count = 0;
    char **v = rs_xmalloc(cap * sizeof *v);
    sqlite3_stmt *st =
        simw_stmt(w, "SELECT password, dockerconfigjson FROM catalogue ORDER BY name");
    while (simw_step_row(w, st)) {
        for (int col = 0; col < 2; col++) {
            char *s = simw_col_text(st, col);
            if (!s || !s[0]) {
                free(s);
                continue;
            }
            if (count == cap) v = rs_xrealloc(v, (cap *= 2) * sizeof *v);
            v[count++] = s;
        }
    }
    sqlite3_reset(st);
    *secrets = v;
    *n = count;
    return RS_OK;
}

rs_code sim_world_config(sim_world *w, rs_config *cfg, rs_err *e)
{
    (void)e;
    rs_config_defaults(cfg);
    rs_config_set_list(cfg->fanout_namespaces, &cfg->n_fanout,
                       (const char *const *)w->cfg.fanout_namespaces, w->cfg.n_fanout);
    return RS_OK;
}

int sim_world_get(sim_world *w, const char *ref, cJSON **out)
{
    char kind[SIMW_NAME_MAX], ns[SIMW_NAME_MAX], name[SIMW_NAME_MAX];
    *out = NULL;
    if (!simw_ref_parse(ref, kind, ns, name)) {
        *out = store_status(400, "BadRequest", "malformed object reference");
        return 400;
    }
    return store_get(w->st, kind, ns, name, out);
}

char *sim_world_openbao_value(sim_world *w, const char *path)
{
    cJSON *data = simw_bao_current(w, path, NULL);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(data, w->cfg.openbao_property);
    char *text = cJSON_IsString(v) ? rs_xstrdup(v->valuestring) : NULL;
    cJSON_Delete(data);
    return text;
}

char *sim_world_talos_auth(sim_world *w, const char *node)
{
    cJSON *auth = simw_talos_json(w, node, "registry_auth");
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(auth, "username");
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(auth, "password");
    char *text = NULL;
    if (cJSON_IsString(u) && cJSON_IsString(p))
        text = simw_dockerconfig(u->valuestring, p->valuestring);
    cJSON_Delete(auth);
    return text;
}

int64_t sim_world_now_ms(sim_world *w)
{
    return simw_now(w);
}

void sim_strings_free(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}
