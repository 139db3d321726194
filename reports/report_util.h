/*
 * report_util.h — what the report writers share (report_util.c): reading the
 * runner's result nodes, escaping for HTML and Markdown, and the eager-vs-lazy
 * pairs both the page and the step summary show.
 */
#ifndef REPORTS_REPORT_UTIL_H
#define REPORTS_REPORT_UTIL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

/* The string / number member key of node (NULL / 0 when absent). */
const char *rep_str(const cJSON *node, const char *key);
double rep_num(const cJSON *node, const char *key);
/* "PASS", "FAIL" or "SKIPPED" (every strategy skipped) for a scenario node. */
const char *rep_verdict(const cJSON *scenario);

/* Writes s (NULL: nothing) as HTML text: & < > " ' as entities, control
 * characters other than tab and newline as U+FFFD. */
void rep_html(FILE *f, const char *s);
/* A counter value: a number (3 decimals when fractional), a boolean, or an
 * object as "key: value, ..." (writes_by_kind), HTML-escaped. */
void rep_html_value(FILE *f, const cJSON *v);
/* Writes s as the text of a Markdown table cell: HTML-escaped, '|' and '`'
 * and line breaks neutralised, so a value cannot end the cell, open code or
 * add a row. */
void rep_md(FILE *f, const char *s);

/* The columns of the before/after table: a delta key and its heading. */
typedef struct rep_col {
    const char *key, *head;
    bool seconds;
} rep_col;
extern const rep_col rep_compare_cols[];
extern const size_t rep_compare_n;

/* The run of runs named name under strategy (NULL when it did not run). */
const cJSON *rep_run_of(const cJSON *scenario, const char *strategy, const char *name);
/* For a lazy run, the eager run of the same name in scenario (the other half
 * of a before/after row); NULL for any other run or when eager did not run. */
const cJSON *rep_eager_twin(const cJSON *scenario, const cJSON *run);

/* The eager-vs-lazy table of one scenario as HTML (nothing unless some run
 * ran under both). */
void html_compare(FILE *f, const cJSON *scenario);

/* mkdir -p; 0 or -1 with errno. */
int rep_mkdirs(const char *dir);

#endif
