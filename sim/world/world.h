/*
 * world.h — the SQLite-backed fake cluster: object store, OpenBao KV v2,
 * registry, Talos nodes, simulated controllers on a virtual clock, counters,
 * and the transport the core runs against.
 *
 * The whole world lives in one SQLite file — objects, clock, pending
 * controller timers, RNG state, counters, call log — so a scenario run can be
 * executed in a forked child (a `crash` fault ends it as kill -9 would) and
 * the parent reads the surviving world afterwards. Nothing about the world is
 * kept only in memory between calls.
 *
 * Determinism: given the scenario and its seed, every answer, uid, timestamp
 * and random number is the same on every execution.
 */
#ifndef SIM_WORLD_H
#define SIM_WORLD_H

#include "core/config.h"
#include "core/cred/cred_redact.h"
#include "core/rs.h"
#include "core/transport/transport.h"
#include "sim/scenario/scenario.h"

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stdbool.h>

typedef struct sim_world sim_world;

/* Latency model in virtual milliseconds (DESIGN.md §4 starting calibration). */
#define SIM_CALL_MS 25
#define SIM_ESO_REACT_MS 2500
#define SIM_FLUX_RECONCILE_MS 10000
#define SIM_ROLLOUT_READY_MS 30000
#define SIM_POD_TERMINATE_MS 8000
#define SIM_EVICT_MS 3000
#define SIM_REBOOT_MS 240000
/* A world clock beyond this (100 years of virtual time) is refused on open. */
#define SIMW_CLOCK_MAX_MS (100LL * 366 * 24 * 3600 * 1000)
/* The wall clock stays within [1970-01-01T00:00:00Z, 9999-12-31T23:59:59.999Z]:
 * every timestamp keeps RFC 3339's four-digit year. */
#define SIMW_WALL_MAX_MS 253402300799999LL
#define SIM_FAST_REBOOT_MS 4000 /* a fast reboot: done between two Ready polls */
#define SIM_IMAGE_PULL_MS 5000
#define SIM_TIMEOUT_MS 30000
#define SIM_ESO_REFRESH_MS (3600LL * 1000)

/* A catalogue credential as the world stores it. */
typedef struct sim_world_cred {
    const char *name;
    const char *username, *password; /* or dockerconfigjson */
    const char *dockerconfigjson;    /* raw text; NULL: built from username/password */
    const char *ciphertext;          /* NULL: a deterministic default from the name */
    bool revoked;
    const char *const *pulls; /* targets it can pull; NULL = every required one */
    size_t n_pulls;
    int manifest_denial; /* 401|403|404: tokens for any package, this answer
                          * to a manifest outside pulls; 0: no token for it */
} sim_world_cred;

/* Everything a world is built from — no scenario needed, so `sim init`,
 * `sim serve` and a recorder's reseed build worlds the same way. */
typedef struct sim_world_desc {
    const char *preset; /* "prod" (the only one) */
    int control_planes;
    int workers;
    const char *const *fanout_namespaces; /* NULL: the preset's three */
    size_t n_fanout;
    const char *credential; /* the catalogue entry the whole cluster holds at start */
    const sim_world_cred *catalogue;
    size_t n_catalogue;
    uint64_t seed;
    /* The wall clock at start, ms since the Unix epoch (the scenario's
     * `clock: {start}`); unset: SIMW_EPOCH_MS, 2026-01-01T00:00:00Z. */
    bool wall_start_set;
    int64_t wall_start_ms;
    /* The virtual clock at start: 0, or a cassette's recorded clock (its
     * periodic timers then keep the recording's phase). */
    int64_t clock_ms;
} sim_world_desc;

/* Creates a fresh world file at db_path (replacing any) from d: the
 * preset's objects converged on d->credential, the catalogue, the
 * registry's pull grants, Talos node state, the seed, the virtual clock at
 * 0 and the wall clock at d's start.
 * RS_DATAERR for an unknown preset or a credential not in the catalogue. */
rs_code sim_world_create(const char *db_path, const sim_world_desc *d, rs_err *e);

/* sim_world_create from a scenario's `cluster:`, `catalogue:` and `seed:`.
 * A `cluster: {cassette: FILE}` seeds the world from the cassette's first
 * observations (DESIGN.md §8 r2; world_cassette.c). */
rs_code sim_world_build(const char *db_path, const sc_scenario *sc, rs_err *e);
/* The same world in memory, open in *out (close it with sim_world_close):
 * `reassert sim` and `reassert sweep` keep a scenario's world there for one
 * execution. warnings as sim_world_build_warn's (may be NULL). */
rs_code sim_world_build_mem(const sc_scenario *sc, sim_world **out, char ***warnings,
                            size_t *n_warnings, rs_err *e);
/* A copy of w in memory (world_image.c). */
rs_code sim_world_clone(sim_world *w, sim_world **out, rs_err *e);
/* A run that a `crash` fault may end runs in a forked child, whose world is
 * its own copy: the child names the file its world's image goes to
 * (handoff_set) and writes it when its run returns (handoff_write; a crash
 * writes it too, just before the process ends); the owner then replaces
 * its world by that image (handoff_take; RS_FAILED when the child left
 * none, as a child killed by a signal does). */
void sim_world_handoff_set(sim_world *w, const char *path);
void sim_world_handoff_write(sim_world *w);
rs_code sim_world_handoff_take(sim_world *w, const char *path, rs_err *e);
/* The same, and for a cassette's cluster what the cassette could not show,
 * one sentence each (never a silent guess); caller frees them with
 * sim_strings_free. NULL/0 for a preset cluster. */
rs_code sim_world_build_warn(const char *db_path, const sc_scenario *sc, char ***warnings,
                             size_t *n_warnings, rs_err *e);

/* Resolves every object reference of sc (sc->refs) against w, the world
 * sc builds, before any run (world_refs.c says when a reference resolves).
 * RS_DATAERR naming the file, line, column and field of the first that
 * names no object. */
rs_code sim_world_resolve_refs(sim_world *w, const sc_scenario *sc, rs_err *e);

/* RS_OK when db_path is a world file (read-only look; nothing is changed),
 * RS_DATAERR naming why not otherwise. */
rs_code sim_world_probe(const char *db_path, rs_err *e);

rs_code sim_world_open(const char *db_path, sim_world **out, rs_err *e);
void sim_world_close(sim_world *w);
sqlite3 *sim_world_db(sim_world *w);
/* The world's object store (sim/store/store.h), owned by the world. */
struct store *sim_world_store(sim_world *w);

/* Applies a world event (a `before:` entry or a `during:` action). World
 * events are not counted (DESIGN.md §4) but move resourceVersions and may
 * trigger controllers. RS_DATAERR for an event this world cannot apply
 * (unknown node, unknown credential), naming the event. */
rs_code sim_world_apply_event(sim_world *w, const sc_event *ev, rs_err *e);

/* Opens a transport over the world for one run. Every call costs
 * SIM_CALL_MS of virtual time, runs the controllers due by then, and is
 * counted per DESIGN.md §4. run_name makes the run reference "sim.<run_name>".
 * The run's faults and during entries (may be NULL) are matched against each
 * call's §5 operation name. */
rs_transport *sim_transport_open(sim_world *w, const char *run_name, const sc_run *run);
/* The exit of a run a `crash` fault ended: its process _exits with it
 * before the call is applied, as kill -9 would end it (DESIGN.md §5). */
#define SIM_CRASH_EXIT 137
/* One call of a transport sim_transport_open made, performed as a later
 * member of a batch's group: exactly what call_batch does for every call
 * but the first of each `parallelism` (no round trip of its own). `sim
 * serve` uses it to cost a batch the live root announces as the in-process
 * root costs call_batch. */
int sim_transport_call_riding(rs_transport *t, const rs_req *req, rs_resp *resp);

/* A long-running transport (`sim serve`) keeps its run's call log within
 * keep rows: every few hundred calls, the rows past the newest keep are
 * deleted and counted in world_meta `call_log.dropped`. Returns the rows
 * this call dropped (0 most calls). The invariants read a run's calls
 * since its start, so an in-process run never trims. */
long long sim_transport_log_trim(rs_transport *t, long keep);
/* world_meta `call_log.dropped`: the rows trimmed so far, every run. */
long long sim_transport_log_dropped(rs_transport *t);

/* After a run: the faults / during entries that never fired, as one sentence
 * each ("fault kube.patch Secret/x nth 1 never fired"); caller frees the array
 * with sim_strings_free. */
char **sim_transport_unfired(rs_transport *t, size_t *n);
void sim_strings_free(char **v, size_t n);

/* The §4 counters' current (cumulative) values:
 * {"controller_restarts": N, "lease_rv": "<rv>", "lease_writes": N, "writes": N,
 *  "writes_by_kind": {...}, "fence_acquisitions": N, "policy_pauses": N,
 *  "node_reboots": N, "node_drains": N, "talos_mutations": N, "api_calls": N,
 *  "kube_calls": N, "openbao_calls": N, "talos_calls": N, "registry_calls": N,
 *  "virtual_seconds": <ms/1000 as a number>}. The four per-service call counts
 *  extend §4 (same rules as api_calls). Caller frees. */
cJSON *sim_counters_snapshot(sim_world *w);
/* delta = after - before per counter; writes_by_kind as an object of deltas;
 * lease_rv replaced by "lease_rv_moved": bool. Caller frees. */
cJSON *sim_counters_delta(const cJSON *before, const cJSON *after);

/* The catalogue credential's docker config JSON text and ciphertext. Caller
 * frees both. RS_DATAERR when the name is unknown. */
rs_code sim_world_credential(sim_world *w, const char *name, char **dockerconfigjson,
                             char **ciphertext, rs_err *e);
/* Every catalogue credential's password and docker config text. */
rs_code sim_world_secrets(sim_world *w, char ***secrets, size_t *n, rs_err *e);

/* Which values of one catalogue credential the harness's one redaction
 * filter (core/cred/cred_redact.h, which owns the encodings) is keyed on:
 * the docker config text, the password, and the docker config built from
 * user and password (so "user:password" and its base64 `auth`). The
 * runner's report filter and invariant 6 both key on exactly this. Any
 * argument but set and name may be NULL. */
void sim_redact_add_cred(cred_redact *set, const char *name, const char *dockerconfigjson,
                         const char *username, const char *password);
/* Every registry bearer token the sim hands out starts with this: a token
 * in any output is found by its prefix, in every encoding the filter knows
 * (invariant 6; tokens are not stored, see world_backends.c). */
#define SIM_REGISTRY_TOKEN_PREFIX "simtok-"

/* A redaction set keyed (as above) on the world's catalogue credential
 * `name`, or on every one when name is NULL. Caller frees. */
cred_redact *sim_world_redact_set(sim_world *w, const char *name);

/* The core's configuration as derived from this world's cluster (fan-out
 * namespaces; everything else the production defaults). */
rs_code sim_world_config(sim_world *w, rs_config *cfg, rs_err *e);

/* Reads for state checks (uncounted). ref is "Kind/ns/name" or "Kind/name".
 * Returns an HTTP status; *out owned by the caller. */
int sim_world_get(sim_world *w, const char *ref, cJSON **out);
/* The OpenBao seed's current dockerconfigjson text (caller frees) or NULL. */
char *sim_world_openbao_value(sim_world *w, const char *path);
/* The Talos machine-config registry auth of a node as docker config text
 * (caller frees) or NULL. */
char *sim_world_talos_auth(sim_world *w, const char *node);

/* The virtual clock, in ms. */
int64_t sim_world_now_ms(sim_world *w);

#endif
