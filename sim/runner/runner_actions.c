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
 * dumped: a green run's log is noise that hides the red one.
 */
#include "sim/runner/runner_int.h"

#include "core/cred/cred.h"

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

void runner_actions_annotate(FILE *out, const cJSON *s)
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
            fputs("::error file=", out);
            runner_actions_escape(out, str_of(s, "file"), true);
            if (cJSON_IsNumber(at) && at->valueint > 0) fprintf(out, ",line=%d", at->valueint);
            fputs("::", out);
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

void runner_actions_dump(FILE *out, const cJSON *s)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(s, "runs"))
    {
        const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "output"));
        if (!run_failed(r) || !text || !text[0]) continue;
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
