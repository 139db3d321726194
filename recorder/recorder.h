/*
 * recorder.h — the recording shim and cassettes (DESIGN.md §8).
 *
 * A recorder is a transport shim: it wraps any transport, forwards every call
 * and records op, target, request, status, response, error and times — and
 * the clock, sleep, entropy and pid calls — into an SQLite cassette
 * (rec_cassette.h) with secret values replaced by HMAC fingerprints
 * (rec_redact.h). It sits directly under the core (core -> recorder ->
 * counting -> faults -> root), so it records exactly what the core saw.
 * Strict replay (rec_replay.h) reads the same cassette.
 */
#ifndef RECORDER_H
#define RECORDER_H

#include "core/config.h"
#include "core/rs.h"
#include "core/transport/transport.h"
#include "core/txn.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

/* What a replay needs to run the core as the recorded run ran it. */
typedef struct rec_run_info {
    const char *transport; /* "sim", "live" */
    const rs_config *cfg;
    const rs_options *opt; /* strategy, mode, run_ref, proof paths */
    const rs_desired *desired;
    const char *scenario, *run; /* the sim scenario and run; NULL live */
    int argc;                   /* the run's arguments */
    char **argv;
    /* The clock read the run's counters start from (the counting shim's,
     * tp_count_start_ms): meta vt_start, where a strict replay starts its
     * clock, so virtual_seconds comes out of recorded reads only. */
    int64_t vt_start_ms;
    /* Why the run was refused before its first call (its inputs: a missing
     * program, a secret too weak to redact), one sentence per line; NULL
     * for a run that ran. Written as meta `refused`: such a cassette has no
     * call, and replay says why instead of replaying nothing. */
    const char *refused;
} rec_run_info;

/* Wraps inner (not owned: closing the shim leaves inner open); the returned
 * transport records into cassette_path, which must not exist (nothing is
 * ever replaced: rec_cassette_create). known: the
 * secrets the caller holds (catalogue passwords and docker configs, tokens),
 * NULL-terminated; the desired credential is learnt from info. */
rs_transport *rec_shim_open(rs_transport *inner, const char *cassette_path,
                            const rec_run_info *info, const char *const *known, rs_err *e);
/* Secrets that can change mid-run — a kubeconfig tokenFile read again
 * after a rotation, an exec plugin's next credential: the shim asks fn
 * after every call and batch, before the row is redacted, and learns what
 * it answers (up to max, NULL-terminated or counted), so a rotated token is
 * never written in plaintext. fn NULL: none. */
typedef size_t (*rec_secret_source)(void *ctx, const char **out, size_t max);
void rec_shim_secret_source(rs_transport *t, rec_secret_source fn, void *ctx);

/* The end record, written when the run ends: its counters (the counting
 * shim's, once stopped), its exit code (meta `exit`) and the clock read its
 * counters end at (meta `vt_end`: tp_count_stop's), in one transaction; a
 * run killed before has none of them, and replay says so. */
rs_code rec_shim_finish(rs_transport *t, const cJSON *counters, int exit_code, int64_t vt_end_ms,
                        rs_err *e);

#endif
