/*
 * cli_out.c — the one output sink over a stdio stream (see cli.h).
 *
 * core/out.c formats lines; this file decides they go to a FILE and are
 * flushed at once, so an Actions log shows progress during a long drain and
 * a run killed by a `crash` fault has already written every line it said,
 * and in which form: workflow commands (`::error::`, `::group::`) only in a
 * GitHub Actions step (GITHUB_ACTIONS=true), plain text elsewhere (issue
 * 30). A scenario run's child always writes the workflow-command form: its
 * output is data the harness reads (invariant 7 looks for its `::error`
 * lines, `output-contains` matches it), whatever terminal runs the sim.
 */
#include "cli/cli.h"

#include <stdlib.h>
#include <string.h>

static void cli_out_file_write(void *ctx, const char *line, size_t len)
{
    FILE *fp = ctx;
    fwrite(line, 1, len, fp);
    fflush(fp);
}

/* The same line for a terminal (out_plain_line): no workflow command. */
static void cli_out_plain_write(void *ctx, const char *line, size_t len)
{
    char *plain = out_plain_line(line, len);
    if (plain) cli_out_file_write(ctx, plain, strlen(plain));
    free(plain);
}

rs_out_sink cli_out_file(FILE *fp)
{
    return (rs_out_sink){.write = fp ? cli_out_file_write : NULL, .ctx = fp};
}

bool cli_actions(void)
{
    const char *v = getenv("GITHUB_ACTIONS");
    return v && strcmp(v, "true") == 0;
}

rs_out_sink cli_out_stream(FILE *fp)
{
    if (!fp) return cli_out_file(NULL);
    return cli_actions() ? cli_out_file(fp)
                         : (rs_out_sink){.write = cli_out_plain_write, .ctx = fp};
}

void cli_say(FILE *fp, const char *kind, const char *msg)
{
    rs_out o;
    out_init(&o, cli_out_stream(fp), false);
    if (strcmp(kind, "error") == 0)
        out_error(&o, "%s", msg);
    else
        out_warning(&o, "%s", msg);
    out_free(&o);
}
