/*
 * cmd_run.c — `reassert [run] ...`: parse, refuse what is not built, run once.
 *
 * Usage errors go to stderr with exit 64 before anything is opened; the run
 * itself speaks through the output sink on stdout (cli_run.c).
 */
#include "cli/cli.h"

#include <string.h>

int cmd_run(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(cli_usage_run, stdout);
        return RS_OK;
    }
    rs_run_args args;
    rs_err e;
    rs_err_clear(&e);
    if (run_args_parse(argc, argv, &args, &e) != RS_OK) {
        fprintf(stderr, "reassert: %s\n", e.msg);
        return e.code;
    }
    if (args.strategy_name && !rs_strategy_find(args.strategy_name)) {
        fprintf(stderr, "reassert: --strategy %s is not available in this build\n",
                args.strategy_name);
        return RS_USAGE;
    }
    if (strncmp(args.transport, "sim:", 4) != 0) {
        fprintf(stderr,
                "reassert: the live transport is not built yet; use --transport sim:FILE.db\n");
        return RS_USAGE;
    }
    if (!args.desired_name) {
        fprintf(stderr, "reassert: --transport sim:FILE.db needs --desired NAME\n");
        return RS_USAGE;
    }
    return cli_run_once(&args, NULL, stdout);
}
