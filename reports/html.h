/*
 * html.h — `reassert sim --report DIR`: the scenario report as one
 * self-contained HTML page, DIR/index.html (html.c).
 */
#ifndef REPORTS_HTML_H
#define REPORTS_HTML_H

#include "core/rs.h"

#include <cjson/cJSON.h>

/* Writes DIR/index.html (DIR created as needed, the page replaced
 * atomically) from the runner's scenario nodes (sim_report_fn's argument:
 * redacted, with each run's output and timeline). RS_FAILED naming the path
 * when it cannot be written. */
rs_code reports_html_write(const char *dir, const cJSON *scenarios, rs_err *e);

#endif
