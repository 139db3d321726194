/*
 * cmd_replay.c — `reassert replay`: not built yet. It refuses with exit 64 rather
 * than pretend, and --help says so.
 */
#include "cli/cli.h"

int cmd_replay(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(cli_usage_replay, stdout);
        return RS_OK;
    }
    fprintf(stderr, "reassert: `replay` is not built yet\n");
    return RS_USAGE;
}
