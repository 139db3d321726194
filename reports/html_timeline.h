/*
 * html_timeline.h — the report's timelines (html_timeline.c): inline SVG of
 * a run's fences, node work and writes, on an axis every run of a scenario
 * shares, drawn twice (linear and logarithmic) for a CSS-only switch.
 */
#ifndef REPORTS_HTML_TIMELINE_H
#define REPORTS_HTML_TIMELINE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

/* One time axis for every run of a scenario: range_ms is the longest run
 * (virtual time from its start to its end), so a 60 s eager Reassert is
 * drawn 25 times as long as a 2.4 s lazy one. */
typedef struct tl_axis {
    double range_ms;
    bool log; /* logarithmic: rotations (minutes) beside seconds-long runs */
} tl_axis;

/* The axis of scenario s: its longest run's timeline ("from_ms" to
 * "to_ms"), at least 1 ms. */
double tl_scenario_range_ms(const cJSON *s);

/* Whether the scenario's page opens on the logarithmic axis: when its
 * longest run is at least ten times its shortest, a linear axis would draw
 * the short one as a sliver. */
bool tl_scenario_log_first(const cJSON *s);

/* The CSS the switch needs: a checkbox input.logscale before the timelines
 * shows svg.log and hides svg.lin when checked, and the reverse. */
extern const char *const tl_css;

/* The switch, at the head of scenario section si (a checkbox and its
 * label; checked when log_first). */
void tl_switch(FILE *f, size_t si, bool log_first);

/* The scenario's overview: one row per run (strategy and name), its length
 * and its Lease, policy fences and controller restarts, on the shared axis;
 * drawn on both axes. */
void tl_overview(FILE *f, const cJSON *s, double range_ms);

/* A run's detailed timeline on the shared axis, drawn on both axes. */
void tl_run(FILE *f, const cJSON *tl, double range_ms);

#endif
