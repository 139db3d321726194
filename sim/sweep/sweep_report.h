/*
 * sweep_report.h — the sweep's table (text, printed as plans finish) and its
 * --json document (printed at the end; no wall time in it, so the same
 * scenario and seed give the same bytes).
 */
#ifndef SIM_SWEEP_REPORT_H
#define SIM_SWEEP_REPORT_H

#include "sim/sweep/sweep_int.h"

typedef struct sw_report sw_report;

sw_report *sw_report_new(const sweep_opts *o, const sc_scenario *sc, const sw_menu *m);
/* A new strategy x run section, with its fault-free baseline. */
void sw_report_section(sw_report *r, const char *strategy, const char *run, const sw_base *b);
/* One plan's row (consumed): out and p (the shrunk plan when shrunk). */
void sw_report_plan(sw_report *r, cJSON *row, const sw_outcome *out, const sw_plan *p);
void sw_report_note(sw_report *r, const char *msg);
/* Prints the JSON document or the summary line (text: with the wall time
 * and plans per second); frees r. Returns whether every plan passed and the
 * report reached stdout. */
bool sw_report_finish(sw_report *r, double wall_s);

#endif
