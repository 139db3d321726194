/*
 * recorder.h — the recording shim and cassettes (DESIGN.md §8).
 *
 * A recorder is a transport shim: it wraps any transport, forwards every call
 * and records op, target, request, status, response, error and times into an
 * SQLite cassette with secret values replaced by HMAC fingerprints. Strict
 * replay and reseed read the same cassette. Not built yet: this header fixes
 * the seam the CLI's --record flags will use.
 */
#ifndef RECORDER_H
#define RECORDER_H

#include "core/rs.h"
#include "core/transport/transport.h"

/* Wraps inner; the returned transport records into cassette_path. */
rs_transport *rec_shim_open(rs_transport *inner, const char *cassette_path, rs_err *e);

#endif
