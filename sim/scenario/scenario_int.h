/*
 * scenario_int.h — shared vocabulary of the scenario loader's files, grouped
 * by the file that defines them, top to bottom (scenario.c's header comment
 * draws the order; a file calls only what is declared below its own group).
 *
 * Every check takes the node, the dotted field path that names it in errors
 * ("runs[1].expect.delta.writes") and the loader context, and on failure
 * formats "<file>:<line>:<col>: <path>: <problem>" from the node's recorded
 * position. A check returns false after setting the error, so callers chain
 * them with && and stop at the first problem.
 */
#ifndef SIM_SCENARIO_INT_H
#define SIM_SCENARIO_INT_H

#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_yaml.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#define SC_PATH_MAX 256
#define SC_LIST_MAX 10000 /* longest list any scenario field may hold */

typedef struct sc_ld {
    const char *file;
    const sy_doc *doc;
    rs_err *e;
    sc_scenario *sc;   /* catalogue and run names are complete before runs are read */
    const cJSON *root; /* the whole file: node.add names anywhere resolve node references */
    /* Where the reader is, recorded with each object reference (sc_ref). */
    sc_ref_at at;
    size_t run, item;
} sc_ld;

/* ---- scenario_field.c: the leaf (calls only the YAML reader) ---- */

bool scl_fail(sc_ld *ld, sc_pos pos, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Fails at node's value position. */
bool scl_fail_at(sc_ld *ld, const cJSON *node, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

void scl_path_key(char out[SC_PATH_MAX], const char *path, const char *key);
void scl_path_idx(char out[SC_PATH_MAX], const char *path, size_t i);

/* "a mapping", "a list", "a string", "an integer", "a number", "a boolean", "null". */
const char *scl_type_name(const sc_ld *ld, const cJSON *n);

bool scl_want_map(sc_ld *ld, const cJSON *n, const char *path);
bool scl_want_list(sc_ld *ld, const cJSON *n, const char *path);
/* Every key of map must be in known (NULL-terminated); the error lists them. */
bool scl_keys(sc_ld *ld, const cJSON *map, const char *path, const char *const known[]);
/* The member key of map, or an error "<path>.<key>: required field missing"
 * at the map's position. */
bool scl_required(sc_ld *ld, const cJSON *map, const char *key, const char *path,
                  const cJSON **out);
/* A non-empty string. */
bool scl_str(sc_ld *ld, const cJSON *n, const char *path, const char **out);
/* A plain integer in [min, max], read from its exact source text. */
bool scl_int(sc_ld *ld, const cJSON *n, const char *path, long long min, long long max,
             long long *out);
bool scl_bool(sc_ld *ld, const cJSON *n, const char *path, bool *out);
/* A list of non-empty strings, copied (an empty list gives a non-NULL array). */
bool scl_str_list(sc_ld *ld, const cJSON *n, const char *path, char ***out, size_t *count);
/* A string naming a catalogue credential (ld->sc's catalogue). */
bool scl_cred_name(sc_ld *ld, const cJSON *n, const char *path, const char **out);
/* Frees a list from scl_str_list. */
void scl_str_list_free(char **list, size_t n);
/* "Kind/namespace/name" for a namespaced kind or "Kind/name" for a
 * cluster-scoped one; the kind must be one the sim's API server knows.
 * Recorded in ld->sc->refs at ld's position, for the world to resolve. */
bool scl_ref(sc_ld *ld, const cJSON *n, const char *path);
/* A string naming a node of the cluster: a preset node
 * (prod-control-plane-<i>, prod-worker-<i> within the cluster's sizes) or one
 * a node.add event anywhere in the file creates. */
bool scl_node(sc_ld *ld, const cJSON *n, const char *path);
/* A key of delta.writes_by_kind: a known kind, "openbao" or a Talos write. */
bool scl_write_kind_known(const char *kind);
/* A duration "<integer>(ms|s|m|h)" of at most 366 days, into *ms; with
 * negative_ok also "-<duration>" (and "+<duration>"), *ms then negative. */
bool scl_duration(sc_ld *ld, const cJSON *n, const char *path, bool negative_ok, int64_t *ms);

/* ---- scenario_free.c ---- */

/* Releases one catalogue entry (secrets wiped) and zeroes it. */
void scl_cred_free(sc_cred *c);

/* ---- section parsers: each calls only the groups above ---- */

/* The catalogue (preset entries, then the file's) and the cluster
 * (scenario_cluster.c). */
/* cluster: the file's `cluster:` (its `cassette:` form adds the cassette's
 * entries and fills the cluster here). */
bool scl_catalogue(sc_ld *ld, const cJSON *cat, const cJSON *cluster);
bool scl_cluster(sc_ld *ld, const cJSON *v);
/* A catalogue entry's ciphertext when the file gives none:
 * "ENC[AES256_GCM,...]" derived from the name. Caller frees. */
char *sc_default_ciphertext(const char *name);

/* Events, faults and `during:` entries (scenario_events.c). */
bool scl_event(sc_ld *ld, const cJSON *item, const char *path, sc_event *out);
bool scl_fault(sc_ld *ld, const cJSON *item, const char *path, sc_fault *out);
/* A `during:` entry's before-call, nth and and-after (its `do:` is read by
 * the caller: an event or a `check:`). */
bool scl_during(sc_ld *ld, const cJSON *item, const char *path, sc_during *out);

/* A run's `expect:` and `invariants:` (scenario_expect.c). */
bool scl_expect(sc_ld *ld, const cJSON *expect, const char *path, sc_run *run);
/* A `check:` action's value (a non-empty list of `expect.state` checks)
 * into out: kind "check", args the list, lines each check's line; the
 * caller sets out->pos. */
bool scl_check_action(sc_ld *ld, const cJSON *list, const char *path, sc_event *out);
bool scl_invariants(sc_ld *ld, const cJSON *inv, const char *path, sc_run *run);

/* A run's arguments as a scenario or a cassette gives them: no flag the
 * harness sets itself or that is live-only, {tmp} paths confined, and a
 * runtime-proof file only under {tmp}/. false: *at is the offending item and
 * why the sentence (scenario.c). */
bool sc_args_check(char *const *args, size_t n, size_t *at, char *why, size_t len);

#endif
