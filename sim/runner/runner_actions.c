/*
 * runner_actions.c — the text report's GitHub Actions lines (DESIGN.md §7.1).
 *
 * The one idea: workflow commands come from the sim itself and nothing else.
 * A failure becomes an `::error file=...,line=...::` annotation on the
 * scenario line that made the promise (the failing key itself — `exit:`, a
 * delta counter, one `output-contains` entry, one `state` check — else the
 * run's `expect:`); the output of a failed run is dumped
 * in its own group with commands stopped, because that output is the core's
 * (its own `::error::` lines, cluster text such as a Lease holder) and must
 * neither close the group nor annotate anything. Runs that passed are not
 * dumped: a green run's log is noise that hides the red one. Outside a
 * GitHub Actions step (sim_opts.actions false) the same report is plain
 * text: "FILE:LINE: error: ..." and the output between two rules, its
 * workflow commands rewritten (out_plain_line), none left to stop.
 */
#include "sim/runner/runner_int.h"

#include "core/cred/cred.h"
#include "core/out.h"

#include <stdlib.h>
#include <string.h>

void runner_actions_escape(FILE *out, const char *s, bool property)
{
    for (; s && *s; s++) {
        if (*s == '%')
            fputs("%25", out);
        else if (*s == '\r')
            fputs("%0D", out);
        else if (*s == '\n')
            fputs("%0A", out);
        else if (property && *s == ':')
            fputs("%3A", out);
        else if (property && *s == ',')
            fputs("%2C", out);
        else
            fputc(*s, out);
    }
}

static const char *str_of(const cJSON *o, const char *key)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
    return s ? s : "?";
}

static bool run_failed(const cJSON *r)
{
    return !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "passed"));
}

/* The failing expectation for a terminal, as a compiler says it (editors
 * jump to it): "FILE:LINE: error: ...". A path that begins with "::" has its
 * first ':' written "%3A", so this line cannot start a workflow command. */
static void plain_error_head(FILE *out, const char *file, const cJSON *at)
{
    if (file[0] == ':' && file[1] == ':') {
        fputs("%3A", out);
        file++;
    }
    runner_actions_escape(out, file, false);
    if (cJSON_IsNumber(at) && at->valueint > 0) fprintf(out, ":%d", at->valueint);
    fputs(": error: ", out);
}

void runner_actions_annotate(FILE *out, const cJSON *s, bool actions)
{
    const cJSON *r, *f;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(s, "runs"))
    {
        if (!run_failed(r)) continue;
        const cJSON *line = cJSON_GetObjectItemCaseSensitive(r, "line");
        const cJSON *lines = cJSON_GetObjectItemCaseSensitive(r, "failure_lines");
        int i = 0;
        cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(r, "failures"))
        {
            /* The failing expectation's own line, else the run's `expect:`. */
            const cJSON *at = cJSON_GetArrayItem(lines, i++);
            if (!cJSON_IsNumber(at) || at->valueint <= 0) at = line;
            if (actions) {
                fputs("::error file=", out);
                runner_actions_escape(out, str_of(s, "file"), true);
                if (cJSON_IsNumber(at) && at->valueint > 0) fprintf(out, ",line=%d", at->valueint);
                fputs("::", out);
            } else {
                plain_error_head(out, str_of(s, "file"), at);
            }
            runner_actions_escape(out, str_of(s, "name"), false);
            fputs(" [", out);
            runner_actions_escape(out, str_of(r, "strategy"), false);
            fputs("] ", out);
            runner_actions_escape(out, str_of(r, "name"), false);
            fputs(": ", out);
            runner_actions_escape(out, cJSON_GetStringValue(f), false);
            fputc('\n', out);
        }
    }
}

/* The run's output for a terminal: each line as out_plain_line writes it
 * (the child wrote workflow commands; none survives), between two rules. */
static void dump_plain(FILE *out, const cJSON *r, const char *text)
{
    for (int end = 0; end < 2; end++) {
        fputs(end ? "--- end of the output of " : "--- output of ", out);
        runner_actions_escape(out, str_of(r, "name"), false);
        fputs(" [", out);
        runner_actions_escape(out, str_of(r, "strategy"), false);
        fputs("] ---\n", out);
        for (const char *p = text; !end && *p;) {
            size_t len = strcspn(p, "\n");
            char *line = out_plain_line(p, len);
            if (line) fputs(line, out);
            free(line);
            p += len + (p[len] == '\n');
        }
    }
}

void runner_actions_dump(FILE *out, const cJSON *s, bool actions)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(s, "runs"))
    {
        const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "output"));
        if (!run_failed(r) || !text || !text[0]) continue;
        if (!actions) {
            dump_plain(out, r, text);
            continue;
        }
        /* The resume token is the output's own hash: deterministic (same
         * scenario, same bytes out) and impossible for the output to contain. */
        char hex[65];
        sha256_hex(text, strlen(text), hex);
        fputs("::group::output of ", out);
        runner_actions_escape(out, str_of(r, "name"), false);
        fputs(" [", out);
        runner_actions_escape(out, str_of(r, "strategy"), false);
        fprintf(out, "]\n::stop-commands::reassert-%.32s\n", hex);
        fputs(text, out);
        if (text[strlen(text) - 1] != '\n') fputc('\n', out);
        fprintf(out, "::reassert-%.32s::\n::endgroup::\n", hex);
    }
}
