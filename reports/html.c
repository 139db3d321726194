/*
 * html.c — `reassert sim --report DIR`: one self-contained page,
 * DIR/index.html, for a person to read after a CI run: per scenario and run
 * the verdict with the failing expectations, the counters, a timeline
 * (inline SVG, html_timeline.c) on an axis every run of the scenario shares
 * and the eager-vs-lazy table.
 *
 * The one idea: the page is a pure function of the runner's result document
 * (already redacted), so it is the same bytes on every execution and can
 * show nothing the JSON report could not; every string in it is HTML-escaped
 * because scenario and cluster text is data, never markup. It fetches
 * nothing: CSS and SVG are inline, there is no script and no URL.
 */
#include "reports/html.h"

#include "reports/html_timeline.h"
#include "reports/report_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const css =
    "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d232a;background:#fff}"
    "h1{font-size:22px}h2{font-size:18px;margin:0 0 4px}h3{font-size:15px;margin:12px 0 4px}"
    "table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #c9d1d9;"
    "padding:2px 8px;text-align:left}th{background:#f0f3f6}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}"
    ".badge{display:inline-block;padding:0 8px;border-radius:10px;color:#fff;font-size:12px}"
    ".badge.PASS{background:#1a7f37}.badge.FAIL{background:#cf222e}"
    ".badge.SKIPPED{background:#6e7781}table.counters{font-size:12px}"
    "section.scenario{border:1px solid #d0d7de;border-radius:6px;padding:12px;margin:16px 0}"
    "section.FAIL{border-color:#cf222e}article.run{margin:8px 0 16px}"
    "ul.failures{color:#a40e26}p.file,p.note{color:#57606a;margin:0}"
    "pre{background:#f6f8fa;padding:8px;overflow:auto;max-height:400px}";

/* The run's counter deltas, every key the runner reported, a few pairs to
 * a row. */
#define COUNTERS_PER_ROW 4
static void html_counters(FILE *f, const cJSON *run)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(run, "delta");
    if (!cJSON_IsObject(d)) return;
    fputs("<table class=\"counters\"><tr>", f);
    for (int i = 0; i < COUNTERS_PER_ROW; i++)
        fputs("<th>counter (this run)</th><th>value</th>", f);
    fputs("</tr>\n", f);
    const cJSON *c;
    int in_row = 0; /* cells in the open row; 0: no row open */
    cJSON_ArrayForEach(c, d)
    {
        /* writes_by_kind is long: a row of its own. */
        bool wide = cJSON_IsObject(c);
        if (in_row > 0 && (wide || in_row == COUNTERS_PER_ROW)) {
            fputs("</tr>\n", f);
            in_row = 0;
        }
        fputs(in_row == 0 ? "<tr><td>" : "<td>", f);
        rep_html(f, c->string);
        fprintf(f, "</td><td class=\"n\"%s>", wide ? " colspan=\"7\"" : "");
        rep_html_value(f, c);
        fputs("</td>", f);
        in_row = wide ? COUNTERS_PER_ROW : in_row + 1;
    }
    if (in_row > 0) fputs("</tr>\n", f);
    fputs("</table>\n", f);
}

static void html_run(FILE *f, const cJSON *run, size_t si, size_t ri, double range_ms)
{
    bool passed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(run, "passed"));
    const char *verdict = passed ? "PASS" : "FAIL";
    fprintf(f, "<article class=\"run %s\" id=\"s%zu-r%zu\">\n<h3>", verdict, si, ri);
    rep_html(f, rep_str(run, "strategy"));
    fputs(" · ", f);
    rep_html(f, rep_str(run, "name"));
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(run, "exit");
    fprintf(f, " <span class=\"badge %s\">%s</span>", verdict, verdict);
    if (cJSON_IsNumber(ex)) fprintf(f, " exit %d", ex->valueint);
    fputs("</h3>\n", f);
    const cJSON *fails = cJSON_GetObjectItemCaseSensitive(run, "failures");
    if (cJSON_GetArraySize(fails) > 0) {
        fputs("<ul class=\"failures\">\n", f);
        const cJSON *x;
        cJSON_ArrayForEach(x, fails)
        {
            fputs("<li>", f);
            rep_html(f, cJSON_GetStringValue(x));
            fputs("</li>\n", f);
        }
        fputs("</ul>\n", f);
    }
    tl_run(f, cJSON_GetObjectItemCaseSensitive(run, "timeline"), range_ms);
    html_counters(f, run);
    const char *out = rep_str(run, "output");
    if (!passed && out && out[0]) {
        fputs("<details><summary>the run's output</summary><pre>", f);
        rep_html(f, out);
        fputs("</pre></details>\n", f);
    }
    fputs("</article>\n", f);
}

static void html_scenario(FILE *f, const cJSON *s, size_t si)
{
    const char *verdict = rep_verdict(s);
    fprintf(f, "<section class=\"scenario %s\" id=\"s%zu\">\n<h2>", verdict, si);
    rep_html(f, rep_str(s, "name"));
    fprintf(f, " <span class=\"badge %s\">%s</span></h2>\n<p class=\"file\">", verdict, verdict);
    rep_html(f, rep_str(s, "file"));
    fputs("</p>\n", f);
    const char *load = rep_str(s, "load_error");
    if (load) {
        fputs("<ul class=\"failures\"><li>could not be loaded: ", f);
        rep_html(f, load);
        fputs("</li></ul>\n", f);
    }
    const cJSON *k;
    cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(s, "skipped"))
    {
        fputs("<p class=\"note\">", f);
        rep_html(f, rep_str(k, "strategy"));
        fputs(" skipped: ", f);
        rep_html(f, rep_str(k, "reason"));
        fputs("</p>\n", f);
    }
    html_compare(f, s);
    /* The switch comes before every timeline it shows or hides. */
    double range_ms = tl_scenario_range_ms(s);
    tl_switch(f, si, tl_scenario_log_first(s));
    tl_overview(f, s, range_ms);
    size_t ri = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(s, "runs"))
        html_run(f, r, si, ri++, range_ms);
    fputs("</section>\n", f);
}

static void html_index(FILE *f, const cJSON *scenarios)
{
    size_t n[3] = {0, 0, 0}; /* passed, failed, skipped */
    const cJSON *s;
    cJSON_ArrayForEach(s, scenarios)
    {
        const char *v = rep_verdict(s);
        n[strcmp(v, "PASS") == 0 ? 0 : strcmp(v, "FAIL") == 0 ? 1 : 2]++;
    }
    fprintf(f, "<p class=\"summary\">%zu passed, %zu failed, %zu skipped</p>\n", n[0], n[1], n[2]);
    fputs("<table class=\"index\"><tr><th>scenario</th><th>result</th><th>runs</th></tr>\n", f);
    /* Failures first: the reader came for them. */
    for (int pass = 0; pass < 2; pass++) {
        size_t si = 0;
        cJSON_ArrayForEach(s, scenarios)
        {
            bool failed = strcmp(rep_verdict(s), "FAIL") == 0;
            if (failed == (pass == 0)) {
                fprintf(f, "<tr><td><a href=\"#s%zu\">", si);
                rep_html(f, rep_str(s, "name"));
                fprintf(f,
                        "</a></td><td><span class=\"badge %s\">%s</span></td><td class=\"n\">%d"
                        "</td></tr>\n",
                        rep_verdict(s), rep_verdict(s),
                        cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(s, "runs")));
            }
            si++;
        }
    }
    fputs("</table>\n", f);
}

static bool html_page(FILE *f, const cJSON *scenarios)
{
    fprintf(f,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<title>reassert sim report</title>\n<style>%s%s</style>\n</head>\n<body>\n"
            "<h1>reassert sim report</h1>\n",
            css, tl_css);
    html_index(f, scenarios);
    size_t si = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, scenarios) html_scenario(f, s, si++);
    fputs("</body>\n</html>\n", f);
    return fflush(f) == 0 && !ferror(f);
}

rs_code reports_html_write(const char *dir, const cJSON *scenarios, rs_err *e)
{
    if (rep_mkdirs(dir) != 0)
        return rs_fail(e, RS_FAILED, "--report %s: cannot create the directory: %s", dir,
                       strerror(errno));
    char *tmp = rs_xasprintf("%s/.index.html.tmp", dir);
    char *path = rs_xasprintf("%s/index.html", dir);
    FILE *f = fopen(tmp, "w");
    rs_code c = RS_OK;
    if (!f) {
        c = rs_fail(e, RS_FAILED, "--report: cannot write %s: %s", tmp, strerror(errno));
    } else {
        bool ok = html_page(f, scenarios);
        ok = fclose(f) == 0 && ok;
        if (!ok || rename(tmp, path) != 0) {
            c = rs_fail(e, RS_FAILED, "--report: cannot write %s: %s", path, strerror(errno));
            unlink(tmp);
        }
    }
    free(tmp);
    free(path);
    return c;
}
