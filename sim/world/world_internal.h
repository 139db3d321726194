/*
 * world_internal.h — what the world's own files share with the sim folders
 * that act on the world from inside (sim/controllers, sim/transport, the
 * call-time half of sim/check) and nobody else sees. It also declares the
 * hooks the world's write path calls back into (ctl_*, inv_at_*): their
 * implementations live in those folders, their contract lives here, so the
 * include graph stays one way (those folders include sim/world, never the
 * reverse).
 *
 * The one idea: the sim_world handle holds only a database connection, a
 * cache of prepared statements and the configuration derived once at open;
 * every piece of state (clock, RNG, timers, controller bookkeeping, counters)
 * is a row in the world file, so a forked run that dies mid-way leaves a
 * world the parent can read.
 */
#ifndef SIM_WORLD_INTERNAL_H
#define SIM_WORLD_INTERNAL_H

#include "core/config.h"
#include "core/cred/cred.h"
#include "sim/store/store.h"
#include "sim/world/world.h"

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define SIMW_STMT_MAX 128
#define SIMW_META_KEPT 64
#define SIMW_CNT_N 13 /* world_counters.c's cnt_names */
#define SIMW_NAME_MAX 256
/* The wall clock a preset world starts at unless the scenario's `clock:
 * {start}` says otherwise: 2026-01-01T00:00:00Z, in ms since the Unix epoch
 * (also the wall clock of a world file written before the wall offset was
 * stored, so such a file reads as it always did). */
#define SIMW_EPOCH_MS 1767225600000LL

/* talos.reboot_mode: how the node's next reboot goes (one-shot). */
#define SIMW_REBOOT_NORMAL 0
#define SIMW_REBOOT_FAST 1    /* new boot ID before anyone sees NotReady */
#define SIMW_REBOOT_STUCK 2   /* NotReady for good */
#define SIMW_REBOOT_IGNORED 3 /* accepted, never happens */
#define SIMW_TAINT_NOT_READY "node.kubernetes.io/not-ready"
#define SIMW_TAINT_CILIUM "node.cilium.io/agent-not-ready"
#define SIMW_UNTAINT_MS 5000         /* not-ready taint cleared after Ready */
#define SIMW_CILIUM_STARTUP_MS 20000 /* Cilium's startup taint lingers after Ready */

/* The taints this world puts on a node that is not ready for work yet: the
 * node lifecycle taints and Cilium's startup taint (DESIGN §3.3 r2). */
static inline bool simw_taint_is_lifecycle(const char *key)
{
    return strcmp(key, SIMW_TAINT_NOT_READY) == 0 ||
           strcmp(key, "node.kubernetes.io/unreachable") == 0 ||
           strcmp(key, SIMW_TAINT_CILIUM) == 0;
}

struct sim_world {
    sqlite3 *db;
    store *st; /* the object store over db */
    const char *stmt_sql[SIMW_STMT_MAX];
    sqlite3_stmt *stmt[SIMW_STMT_MAX];
    size_t n_stmt;
    int txn_depth;      /* nested simw_begin calls; only the outermost commits */
    bool txn_open;      /* in memory: the calls' shared transaction is open */
    rs_config cfg;      /* production defaults + this cluster's fan-out namespaces */
    char *handoff_path; /* a forked run's: where its world's image goes at its end */
    bool mem;           /* in memory: this process is its only owner */
    /* In memory only: world_meta rows as read or written (value NULL: no
     * row) and the §4 counters, kept here and written to their rows only
     * when the world is copied or handed over (simw_flush): one process
     * owns the world, and the clock and the counts move on every call. */
    struct simw_meta_kept {
        char *key, *value;
        bool dirty; /* written here, not yet to its row */
    } meta[SIMW_META_KEPT];
    size_t n_meta;
    int64_t cnt[SIMW_CNT_N];
    bool cnt_dirty[SIMW_CNT_N];
    bool cnt_loaded;
};

/* ---- the world file's shape (world.c, world_shape.c) ---- */
/* Creates every table a world has (the world's and the store's) in db. */
int simw_schema_create(sqlite3 *db);
/* RS_OK when db_path's tables have the columns simw_schema_create makes
 * and every stored object is a JSON object under text keys and an integer
 * revision; RS_DATAERR naming the table, row and field otherwise. Read-only:
 * a file it refuses is never written to. */
rs_code simw_shape_check(const char *db_path, rs_err *e);

/* ---- SQL plumbing (world.c). A failing statement aborts: the world file is
 * the simulation's only state, and a half-applied call would make every later
 * answer a lie (same reasoning as rs_xmalloc). ---- */
sqlite3_stmt *simw_stmt(sim_world *w, const char *sql);
void simw_step_done(sim_world *w, sqlite3_stmt *st);
bool simw_step_row(sim_world *w, sqlite3_stmt *st);
void simw_exec(sim_world *w, const char *sql);
_Noreturn void simw_die(sim_world *w, const char *what);
void simw_begin(sim_world *w);
void simw_commit(sim_world *w);
char *simw_col_text(sqlite3_stmt *st, int col); /* strdup or NULL */

char *simw_meta_get(sim_world *w, const char *key); /* caller frees; NULL if absent */
void simw_meta_set(sim_world *w, const char *key, const char *value);
int64_t simw_meta_int(sim_world *w, const char *key, int64_t dflt);
void simw_meta_set_int(sim_world *w, const char *key, int64_t value);

/* ---- small helpers (world_util.c) ---- */
/* RFC 3339 (whole seconds, Z) of a wall-clock time in ms (simw_wall). */
void simw_rfc3339(int64_t wall_ms, char out[32]);
/* {"auths":{"ghcr.io":{"username","password","auth"}}} compact. */
char *simw_dockerconfig(const char *username, const char *password);
/* Extracts ghcr.io username/password from docker config text; false if none. */
bool simw_dockerconfig_auth(const char *text, char **username, char **password);
/* "Kind/ns/name" or "Kind/name" into the three buffers (ns "" when absent). */
bool simw_ref_parse(const char *ref, char kind[SIMW_NAME_MAX], char ns[SIMW_NAME_MAX],
                    char name[SIMW_NAME_MAX]);
const char *simw_json_str(const cJSON *obj, const char *const *path, size_t depth);
const char *simw_annotation(const cJSON *obj, const char *key);
const char *simw_label(const cJSON *obj, const char *key);
/* A condition object {type,status,reason,message,lastTransitionTime};
 * wall_ms is a wall-clock time (simw_wall). */
cJSON *simw_condition(const char *type, const char *status, const char *reason, const char *message,
                      int64_t wall_ms);
/* The status of the condition `type` in status.conditions, or NULL. */
const char *simw_condition_status(const cJSON *obj, const char *type);
uint64_t simw_splitmix64(uint64_t *state);

/* ---- store conveniences (world.c) ---- */
/* store_patch with a merge patch; frees patch; returns the status. */
int simw_merge(sim_world *w, const char *kind, const char *ns, const char *name, cJSON *patch);
cJSON *simw_get(sim_world *w, const char *kind, const char *ns, const char *name);
/* The object without a copy: borrowed, valid until the next store write;
 * NULL when absent. *hold receives what the caller frees (NULL when the
 * store lent its own parsed copy). For readers that only look. */
const cJSON *simw_peek(sim_world *w, const char *kind, const char *ns, const char *name,
                       cJSON **hold);
/* The virtual clock (ms): what timers, costs and `virtual_seconds` run on.
 * It only moves forward. */
int64_t simw_now(sim_world *w);
void simw_set_now(sim_world *w, int64_t ms);
/* The wall clock (ms since the Unix epoch): what every timestamp the world
 * writes says and what the core reads (before its run's skew). It is the
 * virtual clock plus an offset fixed when the world is built and moved
 * only by a clock step (a negative `advance`). */
int64_t simw_wall(sim_world *w);
/* The wall clock when the world was built (a condition true "since the
 * start" is stamped with it). */
int64_t simw_wall_start(sim_world *w);
/* Steps the wall clock by delta_ms (negative: backwards) without moving the
 * virtual clock; false, and nothing changed, when the wall clock would
 * leave [0, SIMW_WALL_MAX_MS]. */
bool simw_wall_step(sim_world *w, int64_t delta_ms);
/* The clocks of a world being built: the virtual clock at clock_ms, the
 * wall clock at wall_start_ms. */
void simw_clocks_set(sim_world *w, int64_t clock_ms, int64_t wall_start_ms);

/* ---- catalogue, OpenBao, Talos (world_backends.c) ---- */
/* The current KV v2 data map of path (caller frees) and its version; NULL/0 when absent. */
cJSON *simw_bao_current(sim_world *w, const char *path, int *version);
int simw_bao_write(sim_world *w, const char *path, const cJSON *data);
/* Name of the non-revoked catalogue entry with these credentials that can pull
 * `target` ("repo:ref", or a bare "repo" meaning any ref of it); caller frees;
 * NULL when none. */
char *simw_registry_grant(sim_world *w, const char *username, const char *password,
                          const char *target);
/* The status (401, 403 or 404) a manifest read answers a token of catalogue
 * entry `name` for a package its `pulls` do not cover, when that entry's
 * token exchange grants every package as GHCR's does (catalogue
 * `manifest-denial`); 0 when the token exchange itself refuses such a
 * package (the default). */
int simw_registry_manifest_denial(sim_world *w, const char *name);
void simw_registry_manifest_denial_set(sim_world *w, const char *name, int status);
/* Name of the non-revoked catalogue entry with these credentials whose token
 * exchange grants every package (a manifest denial is set); caller frees;
 * NULL when none. */
char *simw_registry_any_package(sim_world *w, const char *username, const char *password);
/* The deterministic opaque token a credential gets for a repository. */
void simw_registry_token(const char *cred_name, const char *repo, char out[72]);
/* The catalogue entry whose token for repo is `token`; caller frees, NULL if none. */
char *simw_registry_token_owner(sim_world *w, const char *token, const char *repo);
bool simw_cred_userpass(sim_world *w, const char *name, char **username, char **password);
/* {"username","password"} from two owned strings (both consumed). */
cJSON *simw_auth_take(char *user, char *pass);
/* A catalogue credential as Talos machine-config auth, or NULL if unknown. */
cJSON *simw_cred_auth(sim_world *w, const char *cred);
bool simw_talos_exists(sim_world *w, const char *node);
/* JSON column of a talos row ("registry_auth", "loaded_auth", "node_annotations",
 * "images"), parsed; caller frees; NULL when SQL NULL or unknown node. */
cJSON *simw_talos_json(sim_world *w, const char *node, const char *column);
void simw_talos_set_json(sim_world *w, const char *node, const char *column, const cJSON *v);
int64_t simw_talos_int(sim_world *w, const char *node, const char *column);
void simw_talos_set_int(sim_world *w, const char *node, const char *column, int64_t v);
void simw_talos_insert(sim_world *w, const char *node, const char *role, const cJSON *auth,
                       const cJSON *annotations, int etcd_healthy);
/* Applies {k: v|null} to Talos nodeAnnotations and to the Node object. */
void simw_node_annotations_apply(sim_world *w, const char *node, const cJSON *annotations);

/* ---- preset (world_preset.c) ---- */
/* The preset's objects, catalogue and machines; the caller starts the
 * controllers (ctl_init) once the world is complete. */
rs_code simw_preset_build(sim_world *w, const sim_world_desc *d, rs_err *e);
/* What a world is built with after the preset and before the controllers
 * start (world.c). */
typedef rs_code (*simw_overlay_fn)(sim_world *w, void *ctx, rs_err *e);
/* db_path NULL builds the world in memory; keep (may be NULL) receives it
 * open, else it is closed. */
rs_code simw_create(const char *db_path, const sim_world_desc *d, simw_overlay_fn overlay,
                    void *ctx, sim_world **keep, rs_err *e);
/* A world from sc's cassette (world_cassette.c): d built from sc; warnings
 * as sim_world_build_warn says; db_path and keep as simw_create's. */
rs_code simw_reseed(const char *db_path, const sc_scenario *sc, const sim_world_desc *d,
                    char ***warnings, size_t *n_warnings, sim_world **keep, rs_err *e);
/* world.c: closes the connection and frees the handle; the configuration
 * derived from the world's meta rows (after a build, or after its content
 * was replaced). */
void simw_free(sim_world *w);
/* Forgets the kept world_meta rows and counters (world.c), after the
 * world's content was replaced. */
void simw_meta_forget(sim_world *w);
/* Writes the kept rows that changed (world.c): before the world is
 * serialized or its connection handed out. */
void simw_flush(sim_world *w);
/* world_counters.c: the kept counters' rows. */
void cnt_flush(sim_world *w);
/* world_image.c: ends the process as kill -9 would end a run (no cleanup,
 * stdio not flushed), the world handed back first when this process is a
 * forked run (sim_world_handoff_set). */
_Noreturn void simw_exit(sim_world *w, int code);
void simw_load_config(sim_world *w);
cJSON *simw_node_object(sim_world *w, const char *name, bool control_plane, int index,
                        const char *revision);
void simw_node_pods_ensure(sim_world *w, const char *node);
/* status.nodeInfo.bootID for the node's boot number n. Caller frees. */
char *simw_boot_id(const char *node, int64_t n);

/* ---- controllers (sim/controllers/ctl_*.c) ---- */
void ctl_schedule(sim_world *w, int64_t due_ms, const char *kind, const char *payload);
/* Moves the clock to target_ms, running every timer due on the way in
 * (due_ms, id) order. */
void ctl_advance_to(sim_world *w, int64_t target_ms);
/* Looks at an object that was just written (by the core or an event) for the
 * triggers the simulated controllers react to. */
void ctl_after_write(sim_world *w, const char *kind, const char *ns, const char *name);
/* Initial controller bookkeeping and the periodic timers of a fresh world. */
void ctl_init(sim_world *w);
void ctl_talos_reboot(sim_world *w, const char *node);
/* Eviction: 201 and the pod terminates after SIM_EVICT_MS; 429 while a PDB
 * blocks the pod's node; 404 when absent. *node_out receives the pod's node. */
int ctl_evict(sim_world *w, const char *ns, const char *name, char **node_out, cJSON **body);
void ctl_rollout_status_refresh(sim_world *w);

/* ---- counters (world_counters.c) ---- */
void cnt_add(sim_world *w, const char *name, int64_t delta);
void cnt_kind_add(sim_world *w, const char *kind, int64_t delta);
int64_t cnt_get(sim_world *w, const char *name);
/* "kube_calls", "openbao_calls", "talos_calls", "registry_calls", or NULL. */
const char *cnt_service_of(rs_op op);
/* Whether the run holding identity run_ref holds the full fence right now. */
bool cnt_fence_held(sim_world *w, const char *restarted_at_by_run);

/* ---- invariants observed at call time (sim/check/check_stamp.c) ---- */
/* Forgets the cordons a previous run of the same name made. */
void inv_run_begin(sim_world *w, const char *run_name);
/* Whether run_name holds the Lease, and both policy fences (owner
 * annotations naming one of its holders, spec.suspend true), right now.
 * Returns the same as bits (INV_HELD_*), each policy fence on its own: the
 * call log keeps them for the report's timeline. */
#define INV_HELD_LEASE 1
#define INV_HELD_PARENT 2
#define INV_HELD_CHILD 4
int inv_fence_flags(sim_world *w, const char *run_name, bool *lease_held, bool *fences_held);
/* Every applied kube write of a run: when it removed this run's own owner
 * (a policy fence's or a node claim's) while another holder has the Lease,
 * it is cleanup racing a theft, recorded so invariant 1 can tell it from a
 * fenced write. */
void inv_at_kube_write(sim_world *w, const char *run_name, const char *kind, const cJSON *before,
                       const cJSON *after);
/* After an applied Node patch (before/after the write): remembers a cordon
 * this run made; records a violation for an uncordon it had no right to. */
void inv_at_node_patch(sim_world *w, const char *run_name, const char *node, const cJSON *before,
                       const cJSON *after);
/* Before a talos.reboot is applied: records a violation when another node is
 * still rebooting, or when node is a control plane and a peer is unhealthy. */
void inv_at_reboot(sim_world *w, const char *run_name, const char *node);
/* Image work (remove, pull) on a node that is not Ready or still carries a
 * taint of the world's lifecycle list (H95, H96). */
void inv_at_image_work(sim_world *w, const char *run_name, const char *node);

/* ---- events (world_events.c) ---- */
rs_code simw_apply_event(sim_world *w, const sc_event *ev, rs_err *e);

#endif
