/*
 * cmd_serve.c — `reassert sim serve`: not built yet. It refuses with exit 64
 * rather than pretend, and --help says so.
 */
#include "cli/cli.h"

int cmd_serve(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(cli_usage_serve, stdout);
        return RS_OK;
    }
    fprintf(stderr, "reassert: `sim serve` is not built yet\n");
    return RS_USAGE;
}
