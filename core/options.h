/*
 * options.h — `reassert run` option parsing and its exclusivity rules
 * (DESIGN.md §7, a contract). Usage errors are RS_USAGE (exit 64).
 *
 * This is the only place the core reads the environment: the run reference
 * (GITHUB_RUN_ID/GITHUB_RUN_ATTEMPT in CI) and the OpenBao address/token
 * variables are looked up here and nowhere else.
 */
#ifndef RS_OPTIONS_H
#define RS_OPTIONS_H

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
    char run_ref[96];
} rs_run_args;

/* Parses argv[0..argc) (without the program name or the `run` word). */
rs_code run_args_parse(int argc, char **argv, rs_run_args *a, rs_err *e);

/* The text of `reassert --help`. */
extern const char *const rs_usage_text;

#endif
