/*
 * main.c — entry point: dispatches to run, sim, sweep and replay
 * (DESIGN.md §7). Usage errors exit 64 with the usage text.
 */
#include "core/options.h"
#include "core/rs.h"
#include "reports/compare.h"
#include "sim/runner/runner.h"

#include <stdio.h>
#include <string.h>

static int cmd_run(int argc, char **argv)
{
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
    if (strncmp(args.transport, "sim:", 4) == 0) {
        if (!args.desired_name) {
            fprintf(stderr, "reassert: --transport sim:FILE.db needs --desired NAME\n");
            return RS_USAGE;
        }
        return sim_run_core(args.transport + 4, "cli", NULL, &args, NULL, args.desired_name, stdout,
                            NULL);
    }
    fprintf(stderr, "reassert: the live transport is not built yet; use --transport sim:FILE.db\n");
    return RS_USAGE;
}

int main(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--version") == 0)) {
        printf("reassert %s\n", REASSERT_VERSION);
        return 0;
    }
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(rs_usage_text, stdout);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "sim") == 0) {
        if (argc > 2 && strcmp(argv[2], "serve") == 0) {
            fprintf(stderr, "reassert: `sim serve` is not built yet\n");
            return RS_USAGE;
        }
        for (int i = 2; i < argc; i++)
            if (strcmp(argv[i], "--compare") == 0) return reports_compare_main(argc - 2, argv + 2);
        return sim_main(argc - 2, argv + 2);
    }
    if (argc > 1 && (strcmp(argv[1], "sweep") == 0 || strcmp(argv[1], "replay") == 0)) {
        fprintf(stderr, "reassert: `%s` is not built yet\n", argv[1]);
        return RS_USAGE;
    }
    if (argc > 1 && strcmp(argv[1], "run") == 0) return cmd_run(argc - 2, argv + 2);
    return cmd_run(argc - 1, argv + 1);
}
