/*
 * rec_replay.h — strict replay: the core runs against a cassette
 * (DESIGN.md §8).
 *
 * Two transports share one cursor over the recorded calls. The check shim
 * sits directly under the core, where the recorder sat: each call the core
 * makes (clock, sleep, entropy and pid included) must be the next recorded
 * one — same op, same target, same redacted request — or the replay has
 * diverged there. The root sits under the counting shim and answers with the
 * recorded status, body and error, fingerprints turned into synthetic
 * values of the same shape, so the counters are recomputed by the very shim
 * that counted the recorded run:
 *
 *     core -> check shim -> counting -> replay root
 *
 * After a divergence (or past the end of a recording whose run never
 * finished) every call is answered "not sent" and sleeps advance the clock,
 * so the core fails closed and stops without anything reaching a world.
 */
#ifndef REC_REPLAY_H
#define REC_REPLAY_H

#include "core/config.h"
#include "core/transport/transport.h"
#include "core/txn.h"
#include "recorder/rec_cassette.h"

#include <stdint.h>

typedef struct rec_replay rec_replay;

/* The replay of tape (borrowed: it must outlive the replay). */
rec_replay *rec_replay_new(const rec_tape *tape);
void rec_replay_free(rec_replay *rp);

/* The recorded run's inputs with synthetic values in place of
 * fingerprints: configuration, options (strategy, mode, run reference,
 * proof), the desired credential's text and ciphertext (owned by rp).
 * RS_DATAERR naming the cassette when meta lacks or garbles one. */
rs_code rec_replay_inputs(rec_replay *rp, rs_config *cfg, rs_options *opt, const char **desired,
                          const char **ciphertext, rs_err *e);

/* The answering root (owned by rp; its close does nothing). */
rs_transport *rec_replay_root(rec_replay *rp);
/* The check shim over below (the counting shim); owned by rp. */
rs_transport *rec_replay_check(rec_replay *rp, rs_transport *below);

/* After the run: a recording with calls left over diverges at the first;
 * one that the run followed to its end sets the root's clock to the
 * recorded end (meta vt_end), which the counting shim reads last. */
void rec_replay_finish(rec_replay *rp);
/* The seq the replay diverged at, or -1. */
int64_t rec_replay_diverged_at(const rec_replay *rp);
/* At a divergence: the recorded and the replayed call, redacted, one line
 * each ("op target request"); NULL otherwise. */
const char *rec_replay_recorded(const rec_replay *rp);
const char *rec_replay_replayed(const rec_replay *rp);
/* How many recorded calls the replay matched. */
size_t rec_replay_matched(const rec_replay *rp);
/* Whether the replay diverged because the replayed run ended with recorded
 * calls left over (its exit and first error then say why). */
bool rec_replay_run_ended(const rec_replay *rp);
/* The seq of the last recorded call the replay matched, 0 for none. */
int64_t rec_replay_last_matched_seq(const rec_replay *rp);

#endif
