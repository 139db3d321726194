/*
 * cli_options.h — `reassert run` option parsing and its exclusivity rules
 * (DESIGN.md §7, a contract), and every command's usage text. Usage errors
 * are RS_USAGE (exit 64).
 *
 * Here and in cli_live.c and cli_preflight.c (the live run's KUBECONFIG, HOME, PATH,
 * TALOSCONFIG, the BAO_ and VAULT_ variables, REASSERT_REGISTRY_*) reassert reads the
 * environment: the run reference
 * (GITHUB_RUN_ID/GITHUB_RUN_ATTEMPT in CI) is looked up here — never in
 * core/.
 */
#ifndef CLI_OPTIONS_H
#define CLI_OPTIONS_H

#include "core/txn.h"

typedef struct rs_run_args {
    rs_options opt;
    const char *strategy_name; /* NULL when not given */
    const char *config_path;
    bool json_output;
    const char *transport; /* "live" or "sim:FILE.db" */
    const char *desired_name;
    const char *kubeconfig, *context, *talosconfig;
    const char *secret_file, *decrypt_command, *openbao_token_file;
    const char *record;
    const char *talosctl, *liveness_command;
    bool test_facade_clock; /* TEST-ONLY: clock, sleep, entropy from sim serve */
    char run_ref[96];
    int argc; /* the arguments parsed (not owned) */
    char **argv;
} rs_run_args;

/* Parses argv[0..argc) (without the program name or the `run` word). */
rs_code run_args_parse(int argc, char **argv, rs_run_args *a, rs_err *e);

/* Whether flag takes a value (`--strategy lazy`), as run_args_parse reads it. */
bool run_arg_takes_value(const char *flag);

/* Whether argv asks for `--output json` (the last --output wins), read
 * without parsing the rest: a usage error must still answer in JSON. */
bool run_args_want_json(int argc, char **argv);

/* The text of `reassert --help`. */
extern const char *const rs_usage_text;
/* `reassert <command> --help`: what the command takes, and what of it is not
 * built yet. */
extern const char *const cli_usage_run;
extern const char *const cli_usage_sim;
extern const char *const cli_usage_sim_init;
extern const char *const cli_usage_serve;
extern const char *const cli_usage_sweep;
extern const char *const cli_usage_replay;

/* The one message every command's parser gives for an argument it does not
 * know: "unknown option '--x' (see reassert sim --help)" (or "unexpected
 * argument 'x' ..." for a word that is not an option) — one line, never the
 * whole usage, which would bury the line that says what was wrong. cmd is
 * the command as typed after "reassert" ("run", "sim serve"). Sets e (the
 * argument raw: whoever prints it escapes it) and returns RS_USAGE. */
rs_code cli_unknown_arg(const char *cmd, const char *arg, rs_err *e);
/* cli_unknown_arg's message on stderr as "reassert <cmd>: <message>",
 * escaped (argv is the user's text, DESIGN.md §7.1); the caller returns
 * RS_USAGE. */
void cli_unknown_arg_say(const char *cmd, const char *arg);

/* True when argv[0..argc) asks for help (--help or -h). */
bool cli_wants_help(int argc, char **argv);
/* True when the option at argv[i] has no value: it is the last word, or the
 * next word looks like an option ("--..."), which is refused rather than
 * taken as the value (`--record --check-only` must not record into a file
 * named --check-only and run a repair). Every
 * command's parser asks this before taking a value. */
bool cli_no_value(int argc, char **argv, int i);

#endif
