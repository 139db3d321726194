/*
 * cmd_run.c — `reassert [run] ...`: parse, refuse what cannot run, run once.
 *
 * Usage errors exit 64 before anything is opened: in text mode one sentence
 * on stderr, with `--output json` also the one result document on stdout
 * (DESIGN.md §7.1: every outcome, usage errors included, is one document).
 * The run itself speaks through the output sink on stdout (cli_run.c).
 */
#include "cli/cli.h"
#include "cli/cli_live.h"

#include <stdlib.h>
#include <string.h>

/* e->code, after saying why: stderr always, the JSON document when asked. */
static int run_usage_fail(bool json, const char *strategy_name, const rs_err *e)
{
    char *msg = out_escape(e->msg, false); /* it may quote argv (DESIGN.md §7.1) */
    fprintf(stderr, "reassert: %s\n", msg);
    free(msg);
    if (json) cli_run_fail(stdout, true, strategy_name, e);
    cli_run_step_outputs_failed(strategy_name, e);
    return e->code;
}

int cmd_run(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(cli_usage_run, stdout);
        return RS_OK;
    }
    rs_run_args args;
    rs_err e;
    rs_err_clear(&e);
    if (run_args_parse(argc, argv, &args, &e) != RS_OK)
        return run_usage_fail(run_args_want_json(argc, argv), NULL, &e);
    if (args.strategy_name && !rs_strategy_find(args.strategy_name)) {
        rs_fail(&e, RS_USAGE, "--strategy %s is not available in this build", args.strategy_name);
        return run_usage_fail(args.json_output, NULL, &e);
    }
    bool sim = strncmp(args.transport, "sim:", 4) == 0;
    if (!sim && args.desired_name) {
        rs_fail(&e, RS_USAGE,
                "--desired names a sim catalogue credential; a live run reads "
                "--secret-file");
        return run_usage_fail(args.json_output, args.strategy_name, &e);
    }
    if (sim && args.test_facade_clock) {
        rs_fail(&e, RS_USAGE, "--test-facade-clock is for --transport live against sim serve");
        return run_usage_fail(args.json_output, args.strategy_name, &e);
    }
    if (!sim && cli_live_refuse_skip_verify(&e) != RS_OK)
        return run_usage_fail(args.json_output, args.strategy_name, &e);
    /* --fences and --recover-fences need no credential (H27). */
    bool inspects = args.opt.mode == RS_MODE_FENCES || args.opt.mode == RS_MODE_RECOVER_FENCES;
    if (sim && !args.desired_name && !inspects) {
        rs_fail(&e, RS_USAGE, "--transport sim:FILE.db needs --desired NAME");
        return run_usage_fail(args.json_output, args.strategy_name, &e);
    }
    return cli_run_once(&args, NULL, stdout);
}
