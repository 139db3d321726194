/*
 * scenario.h — scenario format v1 (DESIGN.md §5, a contract), loaded with
 * libfyaml into plain structs.
 *
 * The loader validates everything it can before any world exists: unknown
 * keys, wrong types, bad references, malformed durations and comparators,
 * unknown operations and events. Every error names file:line:column and the
 * field, and the load fails with RS_DATAERR (exit 65). After a successful load
 * nothing downstream needs to re-validate shapes.
 *
 * Free-form parts (event arguments, expectations, state checks) are kept as
 * cJSON converted from the YAML, with durations already turned into integer
 * milliseconds, so the runner and the world read one object model.
 */
#ifndef SIM_SCENARIO_H
#define SIM_SCENARIO_H

#include "core/rs.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sc_pos {
    int line; /* 1-based */
    int col;  /* 1-based */
} sc_pos;

/* A catalogue credential. The preset's entries (previous, current, revoked)
 * are always present; the file's `catalogue:` extends or overrides them. */
typedef struct sc_cred {
    char *name;
    char *username; /* set with password, or NULL when dockerconfigjson is given */
    char *password;
    char *dockerconfigjson; /* raw text when given as such, else NULL */
    char *ciphertext;       /* always set: the file's, or the deterministic default */
    bool revoked;
    char **pulls; /* targets this credential can pull; NULL = all required */
    size_t n_pulls;
    /* `manifest-denial: 401|403|404`: the token exchange grants every
     * package (as GHCR's does) and a manifest read of a package `pulls`
     * does not cover answers this status (H136); 0: the token exchange
     * refuses such a package. */
    int manifest_denial;
    sc_pos pos;
} sc_cred;

typedef struct sc_cluster {
    char *preset;             /* "prod" */
    int control_planes;       /* default 3 */
    int workers;              /* default 3 */
    char **fanout_namespaces; /* resolved list (N => the three defaults, tenant-4, ...) */
    size_t n_fanout;
    char *credential; /* catalogue name the whole cluster holds at start */
    /* `cluster: {cassette: FILE}` (DESIGN.md §8 r2): the path, resolved
     * against the scenario file's folder, and where the file names it; the
     * world is then seeded from the cassette's first observations. NULL for
     * a preset cluster. */
    char *cassette;
    sc_pos cassette_pos;
} sc_cluster;

/* A world event (§5): kind is the event name ("advance", "kube.patch",
 * "openbao.raft-restore", ...). args is the event's value as JSON, with
 * durations converted: advance => {"ms": N}; pdb.block's `for` => "for_ms". */
typedef struct sc_event {
    char *kind;
    cJSON *args;
    sc_pos pos;
    /* kind "check" (a `check:` in `before:` or a `during:` entry's `do:`,
     * not a world event): args is the list of state checks, in the forms of
     * `expect.state`, and lines the scenario line of each, in order. NULL
     * for every world event. */
    cJSON *lines;
} sc_event;

typedef enum sc_fault_effect {
    SC_FAULT_FAIL,          /* fail: <status> */
    SC_FAULT_TIMEOUT,       /* timeout: true */
    SC_FAULT_LOST_RESPONSE, /* lost-response: true */
    SC_FAULT_CRASH,         /* crash: true */
} sc_fault_effect;

typedef struct sc_fault {
    char *on; /* operation glob, normalised "<verb> <target>" (* globs; target default *) */
    int nth;  /* >= 1, default 1 */
    bool and_after;
    sc_fault_effect effect;
    int fail_status; /* for SC_FAULT_FAIL */
    sc_pos pos;
} sc_fault;

typedef struct sc_during {
    char *before_call; /* operation glob */
    int nth;
    bool and_after;
    sc_event action; /* the `do:` event */
    sc_pos pos;
} sc_during;

typedef struct sc_run {
    char *name;
    char **args; /* verbatim; "{tmp}" is substituted by the runner */
    size_t n_args;
    sc_event *before;
    size_t n_before;
    sc_fault *faults;
    size_t n_faults;
    sc_during *during;
    size_t n_during;
    /* The run's `expect` as JSON without `by-strategy`: keys "exit" (number),
     * "delta" (object: counter => number | ">=N" style string | bool for
     * lease_rv_moved; "writes_by_kind" => object of the same), "output-contains",
     * "output-not-contains" and "output-in-order" (arrays of strings), "state"
     * (array of check objects, §5 forms). NULL when the run has no expect. */
    cJSON *expect;
    cJSON *by_strategy; /* {"eager": {...}, "lazy": {...}} or NULL */
    /* The same two trees with every scalar replaced by its scenario line and
     * every map given an "@" key holding its own line: where a failed
     * expectation is annotated (DESIGN §7.1). */
    cJSON *expect_lines;
    cJSON *by_strategy_lines;
    int *invariants_off;
    size_t n_invariants_off;
    char *invariants_reason;
    /* `skew:` — what the core's clock reads minus the world's (the API
     * server's) wall clock, in ms; 0 when absent. */
    int64_t skew_ms;
    sc_pos pos;
    sc_pos expect_pos; /* the `expect:` key; {0,0} when the run has none */
} sc_run;

/* Where an object reference stands in the file, for the resolution a
 * built world allows (sim_world_resolve_refs): the order of a run's
 * timeline decides what may exist by then. */
typedef enum sc_ref_at {
    SC_REF_BEFORE, /* runs[run].before[item] (an event's ref, a check's ref) */
    SC_REF_DURING, /* runs[run].during[item].do */
    SC_REF_EXPECT, /* runs[run].expect.state (by-strategy included) */
    SC_REF_MENU,   /* perturb-menu[item].do: inserted anywhere by a sweep */
} sc_ref_at;

typedef struct sc_ref {
    char *ref;  /* "Kind/ns/name" or "Kind/name", shape already checked */
    char *path; /* the field, as load errors name it */
    sc_pos pos;
    sc_ref_at at;
    size_t run, item;
} sc_ref;

/* A `perturb-menu:` entry: one more event `reassert sweep --perturb` may
 * insert before a call (an entry named like a built-in one replaces it). */
typedef struct sc_perturb {
    char *name;
    sc_event ev;
} sc_perturb;

typedef struct sc_scenario {
    char *file;
    char *name;
    char *about;       /* may be NULL */
    uint64_t seed;     /* default 1 */
    char **strategies; /* default {"lazy", "eager"} */
    size_t n_strategies;
    sc_cluster cluster;
    char *desired; /* catalogue name */
    sc_cred *catalogue;
    size_t n_catalogue;
    sc_run *runs;
    size_t n_runs;
    sc_perturb *perturb_menu; /* `perturb-menu:`; NULL when absent */
    size_t n_perturb_menu;
    /* `clock: {start: RFC3339}` — the wall clock when the world is built,
     * ms since the Unix epoch. Unset: the preset's 2026-01-01T00:00:00Z,
     * or a cassette's recorded clock. */
    bool clock_start_set;
    int64_t clock_start_ms;
    /* Every object reference of the file (events' and state checks'), in
     * file order. */
    sc_ref *refs;
    size_t n_refs;
} sc_scenario;

/* Loads and validates path. On failure *out is NULL and e says
 * "<file>:<line>:<col>: <field>: <problem>" with code RS_DATAERR. */
rs_code sc_load(const char *path, sc_scenario **out, rs_err *e);
void sc_free(sc_scenario *sc);

/* The flag arg is (alone or as "--flag=value") when a scenario's args may
 * not give it — one the harness sets itself (the world, the desired
 * credential) or one only a live run acts on — else NULL. A live run's
 * cassette keeps its arguments without these (cli_run.c). */
const char *sc_arg_refused(const char *arg);

/* The run's expectations for a strategy: `by-strategy.<strategy>` merged
 * deeply over the rest (maps merge, scalars and lists replace). Caller frees.
 * Never NULL (an empty object when the run has no expect). */
cJSON *sc_expect_for(const sc_run *run, const char *strategy);
/* sc_expect_for's line mirror: the same merge over expect_lines. Caller
 * frees. */
cJSON *sc_expect_lines_for(const sc_run *run, const char *strategy);

const sc_cred *sc_catalogue_find(const sc_scenario *sc, const char *name);

/* Parses "<integer>(ms|s|m|h)". Returns false when malformed. */
bool sc_parse_duration_ms(const char *text, int64_t *ms);
/* Parses RFC 3339 ("2026-09-23T10:00:00Z"; a fraction, kept to the
 * millisecond, and a ±hh:mm offset allowed) into ms since the Unix epoch.
 * false when malformed or not a real date and time. */
bool sc_parse_rfc3339_ms(const char *text, int64_t *ms);

/* The counter names expectations may name in `delta` (DESIGN.md §4). */
bool sc_counter_known(const char *name);

#endif
