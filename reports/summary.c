/*
 * summary.c — the GitHub Actions job summary (the file GITHUB_STEP_SUMMARY
 * names): `reassert sim` appends a table of scenarios, failures first, with
 * the failing expectations and the before/after table; `reassert run`
 * appends its outcome and counters.
 *
 * The one idea: the summary is Markdown a person reads on the run's page,
 * built from the same redacted result documents as every other report, and
 * every string from a scenario or the cluster goes through rep_md, so no
 * value can end a table cell, add a row, or turn into markup or a link.
 * Nothing here writes to standard output: a summary line can never become a
 * workflow command.
 */
#include "reports/summary.h"

#include "reports/report_util.h"

#include <stdlib.h>
#include <string.h>

/* A summary is capped per step by GitHub (1 MiB); a red suite must still
 * fit, so each failing run lists at most this many failures. */
#define SUMMARY_FAILURES_PER_RUN 5

static const char *md_verdict(const char *v)
{
    return strcmp(v, "PASS") == 0 ? "✅ PASS" : strcmp(v, "FAIL") == 0 ? "❌ FAIL" : "⏭ SKIPPED";
}

/* The failures of scenario s, as one cell: "strategy run: failure" items
 * separated by <br>. */
static void md_failures(FILE *f, const cJSON *s)
{
    bool first = true;
    const char *load = rep_str(s, "load_error");
    if (load) {
        fputs("could not be loaded: ", f);
        rep_md(f, load);
        first = false;
    }
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(s, "runs"))
    {
        int n = 0;
        const cJSON *x;
        const cJSON *fails = cJSON_GetObjectItemCaseSensitive(r, "failures");
        cJSON_ArrayForEach(x, fails)
        {
            if (n++ == SUMMARY_FAILURES_PER_RUN) {
                fprintf(f, "<br>… %d more", cJSON_GetArraySize(fails) - SUMMARY_FAILURES_PER_RUN);
                break;
            }
            fputs(first ? "" : "<br>", f);
            first = false;
            rep_md(f, rep_str(r, "strategy"));
            fputc(' ', f);
            rep_md(f, rep_str(r, "name"));
            fputs(": ", f);
            rep_md(f, cJSON_GetStringValue(x));
        }
    }
}

static void md_scenarios(FILE *f, const cJSON *scenarios)
{
    fputs("| scenario | result | runs | failing expectations |\n|---|---|---|---|\n", f);
    for (int pass = 0; pass < 2; pass++) {
        const cJSON *s;
        cJSON_ArrayForEach(s, scenarios)
        {
            bool failed = strcmp(rep_verdict(s), "FAIL") == 0;
            if (failed != (pass == 0)) continue;
            fputs("| ", f);
            rep_md(f, rep_str(s, "name"));
            fprintf(f, " | %s | %d | ", md_verdict(rep_verdict(s)),
                    cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(s, "runs")));
            md_failures(f, s);
            fputs(" |\n", f);
        }
    }
}

static void md_cell(FILE *f, const cJSON *de, const cJSON *dl, const rep_col *c)
{
    const char *fmt = c->seconds ? " %.3f → %.3f |" : " %.0f → %.0f |";
    fprintf(f, fmt, rep_num(de, c->key), rep_num(dl, c->key));
}

/* Every run that ran under both strategies, eager (production today) then
 * lazy; nothing when none did. */
static void md_before_after(FILE *f, const cJSON *scenarios)
{
    bool any = false;
    const cJSON *s, *l;
    cJSON_ArrayForEach(s, scenarios)
    {
        cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(s, "runs"))
        {
            const cJSON *eg = rep_eager_twin(s, l);
            if (!eg) continue;
            if (!any) {
                fputs("\n#### Before / after (eager → lazy)\n\n| scenario | run |", f);
                for (size_t c = 0; c < rep_compare_n; c++)
                    fprintf(f, " %s |", rep_compare_cols[c].head);
                fputs("\n|---|---|", f);
                for (size_t c = 0; c < rep_compare_n; c++)
                    fputs("---|", f);
                fputc('\n', f);
                any = true;
            }
            fputs("| ", f);
            rep_md(f, rep_str(s, "name"));
            fputs(" | ", f);
            rep_md(f, rep_str(l, "name"));
            fputs(" |", f);
            for (size_t c = 0; c < rep_compare_n; c++)
                md_cell(f, cJSON_GetObjectItemCaseSensitive(eg, "delta"),
                        cJSON_GetObjectItemCaseSensitive(l, "delta"), &rep_compare_cols[c]);
            fputc('\n', f);
        }
    }
}

void reports_summary_sim(FILE *f, const cJSON *scenarios)
{
    size_t n[3] = {0, 0, 0};
    const cJSON *s;
    cJSON_ArrayForEach(s, scenarios)
    {
        const char *v = rep_verdict(s);
        n[strcmp(v, "PASS") == 0 ? 0 : strcmp(v, "FAIL") == 0 ? 1 : 2]++;
    }
    fprintf(f, "### reassert sim: %zu passed, %zu failed, %zu skipped\n\n", n[0], n[1], n[2]);
    md_scenarios(f, scenarios);
    md_before_after(f, scenarios);
    fputc('\n', f);
}

static void md_list(FILE *f, const char *title, const cJSON *items)
{
    if (cJSON_GetArraySize(items) == 0) return;
    fprintf(f, "\n%s:\n\n", title);
    const cJSON *x;
    cJSON_ArrayForEach(x, items)
    {
        fputs("- ", f);
        rep_md(f, cJSON_GetStringValue(x));
        fputc('\n', f);
    }
}

void reports_summary_run(FILE *f, const cJSON *doc, bool wall_clock)
{
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(doc, "exit");
    int code = cJSON_IsNumber(ex) ? ex->valueint : -1;
    fprintf(f, "### reassert run: %s ", code == 0 ? "✅" : "❌");
    rep_md(f, rep_str(doc, "outcome"));
    fprintf(f, " (exit %d)\n\nstrategy ", code);
    rep_md(f, rep_str(doc, "strategy"));
    fprintf(f, ", fence %s\n\n| counter | value |\n|---|---|\n",
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "fence_taken")) ? "taken"
                                                                               : "not taken");
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(doc, "counters"))
    {
        /* Counter names are the program's own (DESIGN.md §4), never data.
         * A live run's clock is the wall clock: its time is not virtual. */
        bool wall_time = wall_clock && strcmp(c->string, "virtual_seconds") == 0;
        fprintf(f, "| %s | ", wall_time ? "wall_seconds" : c->string);
        if (cJSON_IsObject(c)) {
            const cJSON *k;
            bool first = true;
            cJSON_ArrayForEach(k, c)
            {
                fputs(first ? "" : ", ", f);
                first = false;
                rep_md(f, k->string);
                fprintf(f, ": %.0f", cJSON_GetNumberValue(k));
            }
        } else if (cJSON_IsBool(c)) {
            fputs(cJSON_IsTrue(c) ? "true" : "false", f);
        } else if (cJSON_IsNumber(c)) {
            double v = c->valuedouble;
            fprintf(f, v == (double)(long long)v ? "%.0f" : "%.3f", v);
        } else {
            rep_md(f, cJSON_GetStringValue(c));
        }
        fputs(" |\n", f);
    }
    md_list(f, "Errors", cJSON_GetObjectItemCaseSensitive(doc, "errors"));
    md_list(f, "Warnings", cJSON_GetObjectItemCaseSensitive(doc, "warnings"));
    md_list(f, "Nodes decided on their annotations alone",
            cJSON_GetObjectItemCaseSensitive(doc, "annotation_only_nodes"));
    fputc('\n', f);
}

rs_code reports_summary_append(const char *path, const cJSON *doc, reports_summary_of of, rs_err *e)
{
    FILE *f = fopen(path, "a");
    if (!f) return rs_fail(e, RS_FAILED, "cannot append to GITHUB_STEP_SUMMARY %s", path);
    if (of == SUMMARY_SIM)
        reports_summary_sim(f, doc);
    else
        reports_summary_run(f, doc, of == SUMMARY_RUN_WALL_CLOCK);
    bool ok = fflush(f) == 0 && !ferror(f);
    ok = fclose(f) == 0 && ok;
    return ok ? RS_OK : rs_fail(e, RS_FAILED, "cannot append to GITHUB_STEP_SUMMARY %s", path);
}
