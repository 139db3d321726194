/*
 * html.c — `reassert sim --report DIR`: one self-contained page,
 * DIR/index.html, for a person to read after a CI run: per scenario and run
 * the verdict with the failing expectations, the counters, a timeline on
 * the run's virtual-time axis (inline SVG) and the eager-vs-lazy table.
 *
 * The one idea: the page is a pure function of the runner's result document
 * (already redacted), so it is the same bytes on every execution and can
 * show nothing the JSON report could not; every string in it is HTML-escaped
 * because scenario and cluster text is data, never markup. It fetches
 * nothing: CSS and SVG are inline, there is no script and no URL.
 */
#include "reports/html.h"

#include "reports/report_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The SVG's geometry, in pixels. */
#define TL_LABEL_W 150
#define TL_PLOT_W 780
#define TL_LANE_H 20
#define TL_TOP 8
#define TL_AXIS_H 30
#define TL_TICKS_WANTED 8

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
    "pre{background:#f6f8fa;padding:8px;overflow:auto;max-height:400px}"
    "svg.timeline{display:block;margin:4px 0}";

/* Lanes of the timeline, top to bottom: what a span or mark's "lane" names,
 * its row label and its colour. */
static const struct {
    const char *lane, *label, *color;
    bool fence; /* an empty fence lane says "not taken" */
} lanes[] = {
    {"lease", "Lease held", "#0969da", true},
    {"parent", "parent fence", "#8250df", true},
    {"child", "child fence", "#bf3989", true},
    {"restart", "controller restart", "#cf222e", false},
    {"claim", "node claims", "#9a6700", false},
    {"drain", "drains", "#bc4c00", false},
    {"reboot", "reboots", "#1a7f37", false},
    {"write", "writes", "#57606a", false},
    {"cutover", "root cutover", "#0550ae", false},
};
#define N_LANES (sizeof lanes / sizeof lanes[0])

static int lane_index(const char *lane)
{
    for (size_t i = 0; lane && i < N_LANES; i++)
        if (strcmp(lanes[i].lane, lane) == 0) return (int)i;
    return -1;
}

static double x_of(double ms, double from, double range)
{
    return TL_LABEL_W + (ms - from) / range * TL_PLOT_W;
}

/* A tick step of 1, 2 or 5 times a power of ten giving about
 * TL_TICKS_WANTED ticks over range_s seconds. */
static double tick_step(double range_s)
{
    double step = 0.001;
    for (int i = 0; i < 40 && range_s / step > TL_TICKS_WANTED; i++) {
        double m = step;
        step = m * 2;
        if (range_s / step <= TL_TICKS_WANTED) break;
        step = m * 5;
        if (range_s / step <= TL_TICKS_WANTED) break;
        step = m * 10;
    }
    return step;
}

static void svg_axis(FILE *f, double range_ms, int y)
{
    double range_s = range_ms / 1000.0, step = tick_step(range_s);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#57606a\"/>\n", TL_LABEL_W,
            y, TL_LABEL_W + TL_PLOT_W, y);
    for (int i = 0; i <= 100 && i * step <= range_s + 1e-9; i++) {
        double x = TL_LABEL_W + i * step / range_s * TL_PLOT_W;
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#57606a\"/>"
                "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%g s</text>\n",
                x, y, x, y + 4, x, y + 16, i * step);
    }
    fprintf(f, "<text x=\"4\" y=\"%d\" font-size=\"11\">virtual time</text>\n", y + 16);
}

static void svg_title(FILE *f, const char *label, double from_s, double to_s, bool open)
{
    fputs("<title>", f);
    if (label && label[0]) {
        rep_html(f, label);
        fputs(": ", f);
    }
    if (to_s > from_s || open)
        fprintf(f, "%.3f s to %.3f s%s", from_s, to_s, open ? " (still held at the end)" : "");
    else
        fprintf(f, "at %.3f s", from_s);
    fputs("</title>", f);
}

static void svg_spans(FILE *f, const cJSON *tl, double from, double range, bool *used)
{
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(tl, "spans"))
    {
        int li = lane_index(rep_str(s, "lane"));
        if (li < 0) continue;
        used[li] = true;
        double a = rep_num(s, "from"), b = rep_num(s, "to");
        bool open = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "open"));
        double x = x_of(a, from, range), w = (b - a) / range * TL_PLOT_W;
        fprintf(f,
                "<rect class=\"span %s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\""
                " fill=\"%s\"%s>",
                lanes[li].lane, x, TL_TOP + li * TL_LANE_H + 3, w < 2 ? 2 : w, TL_LANE_H - 6,
                lanes[li].color, open ? " fill-opacity=\"0.5\"" : "");
        svg_title(f, rep_str(s, "label"), (a - from) / 1000.0, (b - from) / 1000.0, open);
        fputs("</rect>\n", f);
    }
}

static void svg_marks(FILE *f, const cJSON *tl, double from, double range, bool *used)
{
    const cJSON *m;
    cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(tl, "marks"))
    {
        int li = lane_index(rep_str(m, "lane"));
        if (li < 0) continue;
        used[li] = true;
        double at = rep_num(m, "at"), x = x_of(at, from, range);
        int y = TL_TOP + li * TL_LANE_H;
        fprintf(f,
                "<line class=\"mark %s\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\""
                " stroke=\"%s\" stroke-width=\"%s\">",
                lanes[li].lane, x, y + 2, x, y + TL_LANE_H - 2, lanes[li].color,
                li == lane_index("write") ? "1" : "3");
        svg_title(f, rep_str(m, "label"), (at - from) / 1000.0, (at - from) / 1000.0, false);
        fputs("</line>\n", f);
    }
}

static void html_timeline(FILE *f, const cJSON *tl)
{
    if (!cJSON_IsObject(tl)) return;
    double from = rep_num(tl, "from_ms"), to = rep_num(tl, "to_ms");
    double range = to > from ? to - from : 1;
    int h = TL_TOP + (int)N_LANES * TL_LANE_H + TL_AXIS_H;
    fprintf(f,
            "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n",
            TL_LABEL_W + TL_PLOT_W + 20, h, TL_LABEL_W + TL_PLOT_W + 20, h);
    for (size_t i = 0; i < N_LANES; i++) {
        int y = TL_TOP + (int)i * TL_LANE_H;
        fprintf(f,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>"
                "<text x=\"4\" y=\"%d\" font-size=\"12\">%s</text>\n",
                TL_LABEL_W, y, TL_PLOT_W, TL_LANE_H, i % 2 ? "#ffffff" : "#f6f8fa",
                y + TL_LANE_H - 6, lanes[i].label);
    }
    bool used[N_LANES] = {false};
    svg_spans(f, tl, from, range, used);
    svg_marks(f, tl, from, range, used);
    for (size_t i = 0; i < N_LANES; i++)
        if (lanes[i].fence && !used[i])
            fprintf(f,
                    "<text class=\"not-taken\" x=\"%d\" y=\"%d\" font-size=\"12\" "
                    "fill=\"#57606a\">not taken</text>\n",
                    TL_LABEL_W + 6, TL_TOP + (int)i * TL_LANE_H + TL_LANE_H - 6);
    svg_axis(f, range, TL_TOP + (int)N_LANES * TL_LANE_H + 2);
    fputs("</svg>\n", f);
    double dropped = rep_num(tl, "marks_dropped");
    if (dropped > 0) fprintf(f, "<p class=\"note\">%.0f more writes not drawn.</p>\n", dropped);
}

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

static void html_run(FILE *f, const cJSON *run, size_t si, size_t ri)
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
    html_timeline(f, cJSON_GetObjectItemCaseSensitive(run, "timeline"));
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
    size_t ri = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(s, "runs")) html_run(f, r, si, ri++);
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
            "<title>reassert sim report</title>\n<style>%s</style>\n</head>\n<body>\n"
            "<h1>reassert sim report</h1>\n",
            css);
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
