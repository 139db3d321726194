/*
 * cli.h — the commands (one cmd_*.c file each) and the run path they share.
 *
 * cli/ is where reassert meets the outside: argv, the environment, files and
 * the terminal. core/ receives data and an output sink and returns data; the
 * scenario runner in sim/ is handed cli_sim_run so its forked child runs the
 * very run path `reassert run` runs. main.c only dispatches; everything else
 * here is the rs_cli library the tests link.
 */
#ifndef CLI_H
#define CLI_H

#include "cli/cli_options.h"
#include "core/out.h"
#include "core/rs.h"
#include "sim/runner/runner.h"

#include <stddef.h>
#include <stdio.h>

/* The commands: argv without the program name and the command word(s).
 * Each returns the process exit code. */
int cmd_run(int argc, char **argv);
int cmd_sim(int argc, char **argv);   /* sim, sim --compare, sim init */
int cmd_serve(int argc, char **argv); /* sim serve (not built yet) */
int cmd_sweep(int argc, char **argv);
int cmd_replay(int argc, char **argv);

/* cli_run.c — one run: the root named by args->transport (or, from the
 * scenario runner, sim's world and the run's faults), the desired
 * credential, `--config`, the runtime proof in, txn_run, the proof out, and
 * the text or JSON result on out. sim is NULL outside the scenario runner.
 * Returns the exit code. */
int cli_run_once(const rs_run_args *args, const sim_run_req *sim, FILE *out);
/* A run that ends before txn_run (usage, world, credential or config error):
 * text mode prints one ::error:: line on out; JSON mode (`--output json`)
 * prints the one result document, outcome "failed", exit e->code, the
 * message in "errors". Returns e->code. */
int cli_run_fail(FILE *out, bool json, const char *strategy_name, const rs_err *e);
/* In a GitHub Actions step (GITHUB_OUTPUT set): the step outputs of a run
 * that ended before it began (a usage error), outcome "failed", exit
 * e->code. */
void cli_run_step_outputs_failed(const char *strategy_name, const rs_err *e);
/* The scenario runner's sim_run_fn: parses the run's args, then
 * cli_run_once. */
int cli_sim_run(const sim_run_req *req, FILE *out);

/* cli_scenario_paths.c — sim's arguments with every folder replaced by the
 * scenario files under it (*.yaml at any depth, bytewise path order; no
 * pending/ folder, nothing hidden). An argument following one of value_opts
 * (NULL-terminated) is that option's value and stays as it is. Returns RS_OK
 * with a NULL-terminated copy in *out_argv (free with cli_sim_expand_free), or
 * RS_USAGE (a folder holding no scenario) / RS_DATAERR (one that cannot be
 * read) having said why on stderr. */
int cli_sim_expand(int argc, char **argv, const char *const *value_opts, int *out_argc,
                   char ***out_argv);
void cli_sim_expand_free(int argc, char **argv);

/* cli_out.c — the output sink over a stdio stream (flushed per line, so a
 * deploy log and a crashed child's output keep every line written).
 * cli_out_file writes the lines as core/out.c formats them (workflow
 * commands: a scenario run's child, whose output the harness reads);
 * cli_out_stream writes them so in a GitHub Actions step and as plain text
 * (out_plain_line) anywhere else. */
rs_out_sink cli_out_file(FILE *fp);
rs_out_sink cli_out_stream(FILE *fp);
/* Whether this is a GitHub Actions step: GITHUB_ACTIONS=true, as the
 * runner sets it. Only then does reassert write workflow commands. */
bool cli_actions(void);
/* One "error" or "warning" line of the program's own on fp, through
 * cli_out_stream (msg escaped: it may quote a path or cluster text). */
void cli_say(FILE *fp, const char *kind, const char *msg);

/* cli_proof.c — the runtime proof file. */
#define CLI_PROOF_MAX_BYTES (1 << 20)
/* The proof's text (caller frees), or NULL with why[] saying why not and
 * *irregular true when the path is there but is not a regular file (a FIFO,
 * a directory, a device: refused, never waited on). Never follows a
 * symlink. */
char *cli_proof_read(const char *path, bool *irregular, char *why, size_t whylen);
/* RS_FAILED when something (a file, a symlink, anything) is at path: a
 * proof never replaces one. */
rs_code cli_proof_check_absent(const char *path, rs_err *e);
/* Writes text at path once: a temp file in the same directory, fsync, then
 * a link that fails if anything appeared at path meanwhile; mode 0600; the
 * temp file never survives. */
rs_code cli_proof_write(const char *path, const char *text, rs_err *e);

#endif
