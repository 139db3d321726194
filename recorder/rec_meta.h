/*
 * rec_meta.h — a cassette's meta checked whole when it is read:
 * rec_tape_load calls it, so every reader (`replay --list`, `--strict`,
 * `--reseed`, `--to-scenario`, a scenario's `cluster: {cassette:}`) refuses
 * the same files, before any replay.
 */
#ifndef REC_META_H
#define REC_META_H

#include "recorder/rec_cassette.h"

/* RS_DATAERR with one sentence naming the cassette and the meta key when a
 * key the recorder writes holds what it could not have written: strategy,
 * config and options (rec_replay_inputs, --config's rules), exit,
 * vt_start, vt_end, transport, started, run_ref, and a desired credential or ciphertext the core
 * refuses in a recording that shows no refusal. meta args are checked by their readers
 * (`reassert run`'s parser; a scenario's rules). */
rs_code rec_meta_check(const rec_tape *t, rs_err *e);

#endif
