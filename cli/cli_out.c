/*
 * cli_out.c — the one output sink over a stdio stream (see cli.h).
 *
 * core/out.c formats lines; this file decides they go to a FILE and are
 * flushed at once, so an Actions log shows progress during a long drain and
 * a run killed by a `crash` fault has already written every line it said.
 */
#include "cli/cli.h"

static void cli_out_file_write(void *ctx, const char *line, size_t len)
{
    FILE *fp = ctx;
    fwrite(line, 1, len, fp);
    fflush(fp);
}

rs_out_sink cli_out_file(FILE *fp)
{
    return (rs_out_sink){.write = fp ? cli_out_file_write : NULL, .ctx = fp};
}
