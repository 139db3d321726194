/*
 * html_timeline.c — the report's timelines (see html_timeline.h).
 *
 * The one idea: runs of one scenario are compared by eye, so they share one
 * axis — the longest run's length — and a short run looks short. A rotation
 * takes half an hour of virtual time and a no-drift Reassert seconds, so on
 * a linear axis the Reassert would be a sliver: every timeline is drawn on
 * a logarithmic axis too, and a checkbox (CSS :checked, no script) shows
 * one or the other.
 */
#include "reports/html_timeline.h"

#include "reports/report_util.h"

#include <math.h>
#include <string.h>

/* The SVG's geometry, in pixels. */
#define TL_LABEL_W 150
#define TL_PLOT_W 780
#define TL_LANE_H 20
#define TL_ROW_H 18
#define TL_TOP 8
#define TL_AXIS_H 30
#define TL_TICKS_WANTED 8
/* The logarithmic axis is log(1 + t / knee): linear below 10 ms, so the
 * run's start (t = 0) has a place. */
#define TL_LOG_KNEE_MS 10.0
#define TL_LOG_TICKS_MAX 12
/* A scenario opens on the log axis when its longest run is this many times
 * its shortest. */
#define TL_LOG_FIRST_RATIO 10.0

const char *const tl_css =
    "svg.timeline,svg.overview{display:block;margin:4px 0}"
    "label.logscale{font-size:13px;color:#57606a}"
    "input.logscale:checked~svg.lin,input.logscale:checked~* svg.lin{display:none}"
    "input.logscale:not(:checked)~svg.log,input.logscale:not(:checked)~* svg.log"
    "{display:none}";

/* Lanes of a run's timeline, top to bottom: what a span or mark's "lane"
 * names, its row label and its colour. */
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

/* x of t_ms after the run's start. */
static double axis_x(const tl_axis *a, double t_ms)
{
    if (t_ms < 0) t_ms = 0;
    double f = a->log ? log10(1 + t_ms / TL_LOG_KNEE_MS) / log10(1 + a->range_ms / TL_LOG_KNEE_MS)
                      : t_ms / a->range_ms;
    return TL_LABEL_W + (f > 1 ? 1 : f) * TL_PLOT_W;
}

static double run_length_ms(const cJSON *tl)
{
    double d = rep_num(tl, "to_ms") - rep_num(tl, "from_ms");
    return d == d && d > 0 ? d : 0; /* NaN when absent */
}

double tl_scenario_range_ms(const cJSON *s)
{
    double range = 1;
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(s, "runs"))
    {
        double d = run_length_ms(cJSON_GetObjectItemCaseSensitive(r, "timeline"));
        if (d > range) range = d;
    }
    return range;
}

bool tl_scenario_log_first(const cJSON *s)
{
    double lo = -1, hi = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(s, "runs"))
    {
        const cJSON *tl = cJSON_GetObjectItemCaseSensitive(r, "timeline");
        if (!cJSON_IsObject(tl)) continue;
        double d = run_length_ms(tl) + 1; /* a run of 0 ms is still a run */
        if (lo < 0 || d < lo) lo = d;
        if (d > hi) hi = d;
    }
    return lo > 0 && hi / lo >= TL_LOG_FIRST_RATIO;
}

void tl_switch(FILE *f, size_t si, bool log_first)
{
    fprintf(f,
            "<input type=\"checkbox\" class=\"logscale\" id=\"log-s%zu\"%s>"
            "<label class=\"logscale\" for=\"log-s%zu\"> logarithmic time axis (every run of "
            "this scenario shares one axis: its longest run)</label>\n",
            si, log_first ? " checked" : "", si);
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

static void axis_tick(FILE *f, const tl_axis *a, int y, double t_s)
{
    double x = axis_x(a, t_s * 1000.0);
    fprintf(f,
            "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#57606a\"/>"
            "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%g s</text>\n",
            x, y, x, y + 4, x, y + 16, t_s);
}

static void svg_axis(FILE *f, const tl_axis *a, int y)
{
    double range_s = a->range_ms / 1000.0;
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#57606a\"/>\n", TL_LABEL_W,
            y, TL_LABEL_W + TL_PLOT_W, y);
    if (a->log) {
        /* 0, then each power of ten from 10 ms up to the range. */
        axis_tick(f, a, y, 0);
        double t = TL_LOG_KNEE_MS / 1000.0;
        for (int i = 0; i < TL_LOG_TICKS_MAX && t <= range_s * (1 + 1e-9); i++, t *= 10)
            axis_tick(f, a, y, t);
    } else {
        double step = tick_step(range_s);
        for (int i = 0; i <= 100 && i * step <= range_s + 1e-9; i++)
            axis_tick(f, a, y, i * step);
    }
    fprintf(f, "<text x=\"4\" y=\"%d\" font-size=\"11\">virtual time%s</text>\n", y + 16,
            a->log ? " (log)" : "");
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

static void svg_open(FILE *f, const char *cls, const tl_axis *a, int h)
{
    int w = TL_LABEL_W + TL_PLOT_W + 20;
    fprintf(f,
            "<svg class=\"%s %s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" data-axis-ms=\"%.3f\">\n",
            cls, a->log ? "log" : "lin", w, h, w, h, a->range_ms);
}

/* One span (a to b, ms after the run's start) in lane li, at row top y. */
static void span_rect(FILE *f, const tl_axis *a, int li, int y, int h, double s_ms, double e_ms,
                      const char *label, bool open)
{
    double x = axis_x(a, s_ms), w = axis_x(a, e_ms) - x;
    fprintf(f,
            "<rect class=\"span %s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\""
            " fill=\"%s\"%s>",
            lanes[li].lane, x, y, w < 2 ? 2 : w, h, lanes[li].color,
            open ? " fill-opacity=\"0.5\"" : "");
    svg_title(f, label, s_ms / 1000.0, e_ms / 1000.0, open);
    fputs("</rect>\n", f);
}

static void mark_line(FILE *f, const tl_axis *a, int li, int y, int h, double at_ms,
                      const char *label)
{
    double x = axis_x(a, at_ms);
    fprintf(f,
            "<line class=\"mark %s\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\""
            " stroke=\"%s\" stroke-width=\"%s\">",
            lanes[li].lane, x, y, x, y + h, lanes[li].color, li == lane_index("write") ? "1" : "3");
    svg_title(f, label, at_ms / 1000.0, at_ms / 1000.0, false);
    fputs("</line>\n", f);
}

/* The spans and marks of tl, each in its lane; for the overview only the
 * Lease's spans and the restarts, all in the one row at row_y. Returns the
 * lanes used (a bit each). */
static unsigned draw_events(FILE *f, const cJSON *tl, const tl_axis *a, int row_y, bool overview)
{
    const int lease = lane_index("lease"), restart = lane_index("restart");
    double from = rep_num(tl, "from_ms");
    unsigned used = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(tl, "spans"))
    {
        int li = lane_index(rep_str(s, "lane"));
        if (li < 0 || (overview && li != lease)) continue;
        used |= 1u << li;
        int y = overview ? row_y + 4 : TL_TOP + li * TL_LANE_H + 3;
        span_rect(f, a, li, y, overview ? TL_ROW_H - 8 : TL_LANE_H - 6, rep_num(s, "from") - from,
                  rep_num(s, "to") - from, rep_str(s, "label"),
                  cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "open")));
    }
    const cJSON *m;
    cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(tl, "marks"))
    {
        int li = lane_index(rep_str(m, "lane"));
        if (li < 0 || (overview && li != restart)) continue;
        used |= 1u << li;
        int y = overview ? row_y + 1 : TL_TOP + li * TL_LANE_H + 2;
        mark_line(f, a, li, y, overview ? TL_ROW_H - 2 : TL_LANE_H - 4, rep_num(m, "at") - from,
                  rep_str(m, "label"));
    }
    return used;
}

/* Where the run ended, across the plot (the reader's "how long"). */
static void run_end(FILE *f, const tl_axis *a, double len_ms, int y0, int y1)
{
    double x = axis_x(a, len_ms);
    fprintf(f,
            "<line class=\"run-end\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
            "stroke=\"#1d232a\" stroke-dasharray=\"3,2\"><title>the run ended at %.3f s</title>"
            "</line>\n",
            x, y0, x, y1, len_ms / 1000.0);
}

static void run_svg(FILE *f, const cJSON *tl, const tl_axis *a)
{
    int h = TL_TOP + (int)N_LANES * TL_LANE_H + TL_AXIS_H;
    svg_open(f, "timeline", a, h);
    for (size_t i = 0; i < N_LANES; i++) {
        int y = TL_TOP + (int)i * TL_LANE_H;
        fprintf(f,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>"
                "<text x=\"4\" y=\"%d\" font-size=\"12\">%s</text>\n",
                TL_LABEL_W, y, TL_PLOT_W, TL_LANE_H, i % 2 ? "#ffffff" : "#f6f8fa",
                y + TL_LANE_H - 6, lanes[i].label);
    }
    unsigned used = draw_events(f, tl, a, 0, false);
    for (size_t i = 0; i < N_LANES; i++)
        if (lanes[i].fence && !(used & (1u << i)))
            fprintf(f,
                    "<text class=\"not-taken\" x=\"%d\" y=\"%d\" font-size=\"12\" "
                    "fill=\"#57606a\">not taken</text>\n",
                    TL_LABEL_W + 6, TL_TOP + (int)i * TL_LANE_H + TL_LANE_H - 6);
    run_end(f, a, run_length_ms(tl), TL_TOP, TL_TOP + (int)N_LANES * TL_LANE_H);
    svg_axis(f, a, TL_TOP + (int)N_LANES * TL_LANE_H + 2);
    fputs("</svg>\n", f);
}

void tl_run(FILE *f, const cJSON *tl, double range_ms)
{
    if (!cJSON_IsObject(tl)) return;
    for (int log = 0; log < 2; log++) {
        tl_axis a = {.range_ms = range_ms, .log = log == 1};
        run_svg(f, tl, &a);
    }
    double dropped = rep_num(tl, "marks_dropped");
    if (dropped > 0) fprintf(f, "<p class=\"note\">%.0f more writes not drawn.</p>\n", dropped);
}

static void overview_svg(FILE *f, const cJSON *s, const tl_axis *a, int n_runs)
{
    /* A row per run: its length, its Lease and its restarts. */
    int h = TL_TOP + n_runs * TL_ROW_H + TL_AXIS_H;
    svg_open(f, "overview", a, h);
    int row = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(s, "runs"))
    {
        const cJSON *tl = cJSON_GetObjectItemCaseSensitive(r, "timeline");
        if (!cJSON_IsObject(tl)) continue;
        int y = TL_TOP + row++ * TL_ROW_H;
        double len = run_length_ms(tl);
        fputs("<g class=\"row\" data-run=\"", f);
        rep_html(f, rep_str(r, "strategy"));
        fputs(" ", f);
        rep_html(f, rep_str(r, "name"));
        fprintf(f, "\">\n<text x=\"4\" y=\"%d\" font-size=\"12\">", y + TL_ROW_H - 5);
        rep_html(f, rep_str(r, "strategy"));
        fputs(" · ", f);
        rep_html(f, rep_str(r, "name"));
        double x1 = axis_x(a, len);
        fprintf(f,
                "</text>\n<rect class=\"run-length\" x=\"%d\" y=\"%d\" width=\"%.1f\" "
                "height=\"%d\" fill=\"#d0d7de\"><title>the run: %.3f s</title></rect>\n",
                TL_LABEL_W, y + 2, x1 - TL_LABEL_W < 2 ? 2 : x1 - TL_LABEL_W, TL_ROW_H - 4,
                len / 1000.0);
        draw_events(f, tl, a, y, true);
        /* The length after the bar, or inside its end when no room is left
         * (outlined, so it reads on grey and on the Lease's blue). */
        bool inside = x1 + 70 > TL_LABEL_W + TL_PLOT_W;
        fprintf(f,
                "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" fill=\"#1d232a\" "
                "text-anchor=\"%s\" stroke=\"#ffffff\" stroke-width=\"3\" "
                "paint-order=\"stroke\">%.3f s</text>\n</g>\n",
                inside ? x1 - 4 : x1 + 4, y + TL_ROW_H - 5, inside ? "end" : "start", len / 1000.0);
    }
    svg_axis(f, a, TL_TOP + n_runs * TL_ROW_H + 2);
    fputs("</svg>\n", f);
}

void tl_overview(FILE *f, const cJSON *s, double range_ms)
{
    int n = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(s, "runs")) n +=
        cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(r, "timeline"));
    if (n == 0) return;
    fputs("<p class=\"note\">Every run on one axis: its length (grey), the Lease held (blue), "
          "controller restarts (red).</p>\n",
          f);
    for (int log = 0; log < 2; log++) {
        tl_axis a = {.range_ms = range_ms, .log = log == 1};
        overview_svg(f, s, &a, n);
    }
}
