/*
 * cli_replay.h — what the `reassert replay` files share (cmd_replay.c:
 * parsing, --list, --strict; cmd_replay_reseed.c: --reseed;
 * cmd_replay_scenario.c: --to-scenario).
 */
#ifndef CLI_REPLAY_H
#define CLI_REPLAY_H

#include "cli/cli.h"
#include "core/txn.h"
#include "recorder/rec_cassette.h"
#include "sim/scenario/scenario.h"

#include <stdbool.h>
#include <stdio.h>

/* prefix, then text escaped (cassette text came from a cluster: never a
 * workflow command, DESIGN.md §7.1), then a newline. */
void replay_say(FILE *fp, const char *prefix, const char *text);

/* --reseed: the side-by-side (or --json); 0 when the replayed run was made
 * and exited as the recorded run did, 1 when it exited otherwise (a
 * divergence) or could not be made, 65 when no world can be built from the
 * cassette. */
int replay_reseed(const rec_tape *t, const char *strategy_name, bool json);
/* The recorded exit a reseeded run is held to (meta exit), or NULL: none
 * recorded (the run never ended), or a crash fault's 137. */
const char *replay_recorded_exit(const rec_tape *t);
/* One run of sc (its first) under strategy, as `reassert sim --json`
 * reports it (exit, delta, failures). Caller frees. */
cJSON *replay_reseed_run(const sc_scenario *sc, const rs_strategy *strategy);

/* What the world builder could not take from sc's cassette, one sentence
 * each (an array; caller frees); NULL with *e set when no world can be
 * built. */
cJSON *replay_reseed_warnings(const sc_scenario *sc, rs_err *e);

/* The counters a reseed shows side by side and a written scenario pins,
 * in this order (DESIGN.md §4 names); NULL-terminated. */
extern const char *const replay_counter_rows[];

/* --to-scenario OUT.yaml. */
int replay_to_scenario(const rec_tape *t, const char *out_path);
/* RS_OK when nothing is at OUT, else RS_USAGE after one sentence naming it
 * (a file, a symlink — dangling too — anything: never replaced). */
int replay_to_scenario_free(const char *out_path);

#endif
