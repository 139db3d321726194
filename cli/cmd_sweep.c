/*
 * cmd_sweep.c — `reassert sweep`: not built yet. It refuses with exit 64 rather
 * than pretend, and --help says so.
 */
#include "cli/cli.h"

int cmd_sweep(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(cli_usage_sweep, stdout);
        return RS_OK;
    }
    fprintf(stderr, "reassert: `sweep` is not built yet\n");
    return RS_USAGE;
}
