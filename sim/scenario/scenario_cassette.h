/*
 * scenario_cassette.h — a cassette read as the world's inputs (DESIGN.md §8,
 * `--reseed` and `cluster: {cassette: FILE}`).
 *
 * A cassette holds fingerprints, not secrets. Reading it here turns every
 * fingerprint into the synthetic value strict replay uses for it
 * (rs-synth-<hex>, the same shape), so two objects that held the same
 * credential still do, and "equal to desired" or "stale" survive.
 *
 * The catalogue a cassette implies: `desired` (the recorded desired
 * credential and its ciphertext), `cluster` (what the first read of the
 * variables Secret held, when that differs), and `recorded-<n>` for every
 * other username/password pair the recording shows (registry token
 * requests, Talos registry auth). The registry grants each entry what the
 * recording shows it granted.
 */
#ifndef SIM_SCENARIO_CASSETTE_H
#define SIM_SCENARIO_CASSETTE_H

#include "core/config.h"
#include "recorder/rec_cassette.h"
#include "recorder/rec_redact.h"
#include "sim/scenario/scenario.h"

typedef struct sc_cassette {
    rec_tape *tape;
    rec_redactor *red; /* fingerprints -> synthetic values */
    rs_config cfg;     /* the recorded configuration */
    cJSON *config_doc; /* cfg's annotation names point into it */
} sc_cassette;

/* Reads path and its recorded configuration; RS_DATAERR naming the file
 * otherwise. */
rs_code sc_cassette_open(const char *path, sc_cassette *c, rs_err *e);
void sc_cassette_close(sc_cassette *c);
/* The row's response (request) body as JSON with synthetic values in place
 * of fingerprints; NULL when it has none. Caller frees. */
cJSON *sc_cassette_response(sc_cassette *c, const rec_row *r);
cJSON *sc_cassette_request(sc_cassette *c, const rec_row *r);
/* The first row of op whose target is target with status 200 or 404 (an
 * observation), or NULL. */
const rec_row *sc_cassette_first(const sc_cassette *c, const char *op, const char *target);
/* The first Node list without selectors that answered 200, or NULL. */
const rec_row *sc_cassette_node_list(const sc_cassette *c);
/* The text the first read of Secret ns/name held under data key (base64
 * decoded, synthetic values in place of fingerprints), or NULL: never
 * read, absent, not base64 or not a text. Caller frees (a secret: wipe). */
char *sc_cassette_secret_text(sc_cassette *c, const char *ns, const char *name, const char *key);

/* The catalogue entries the cassette implies (see above), appended to
 * creds (room for SC_CASSETTE_CREDS_MAX), and the name of the one the
 * cluster holds at start. */
#define SC_CASSETTE_CREDS_MAX 16
void sc_cassette_catalogue(sc_cassette *c, sc_cred *creds, size_t *n, const char **cluster_cred);

/* The scenario `replay --reseed` runs: its cluster the cassette, seed 1,
 * both strategies, desired `desired`, and one run without expectations —
 * the recorded run's name and arguments. */
rs_code sc_cassette_scenario(const char *path, sc_scenario **out, rs_err *e);

/* ---- what the recording never showed (scenario_readings.c) ---- */

/* A value a reseeded run may decide on that the recording never observed,
 * and the readings of it worth running: today the OpenBao seed, which an
 * eager run never reads (it force-syncs instead) and a lazy run decides on.
 * Each reading is one `before:` event of the run and the catalogue entry it
 * names. */
#define SC_READINGS_MAX 2
typedef struct sc_reading {
    char *name;  /* "seed=consumers", "seed-stale" */
    char *about; /* one sentence */
    sc_event ev; /* what puts the reading into the world before the run */
} sc_reading;
typedef struct sc_readings {
    char *unobserved; /* "openbao.read <path>": what the recording never read */
    sc_reading r[SC_READINGS_MAX];
    size_t n;
} sc_readings;
/* Fills out for sc (a sc_cassette_scenario), adding the credentials the
 * readings name to sc's catalogue; out->n is 0 when the recording observed
 * every such value (nothing to read otherwise). RS_DATAERR when the
 * cassette cannot be read again. */
rs_code sc_cassette_readings(sc_scenario *sc, sc_readings *out, rs_err *e);
void sc_readings_free(sc_readings *rd);
/* r's event becomes the last `before:` event of sc's run; pop removes it
 * again (after the run). */
void sc_reading_push(sc_scenario *sc, const sc_reading *r);
void sc_reading_pop(sc_scenario *sc);

#endif
