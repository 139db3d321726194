/*
 * check_report.c — how the invariant checker words a broken promise: one
 * sentence "invariant N: ..." per violation, appended to the run's failures.
 *
 * The one idea: a core that writes everything unfenced must still yield a
 * readable report, so beyond INV_REPORT_MAX sentences per invariant the rest
 * are folded into one count; and an invariant a scenario switched off (with a
 * reason) says nothing at all.
 */
#include "sim/check/check_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Per invariant, sentences beyond this many are folded into one count. */
#define INV_REPORT_MAX 8

bool inv_is_off(const inv_run *r, int invariant)
{
    for (size_t i = 0; i < r->n_off; i++)
        if (r->off[i] == invariant) return true;
    return false;
}

void inv_report_add(inv_report *rep, int invariant, const char *fmt, ...)
{
    if (inv_is_off(rep->run, invariant)) return;
    if (++rep->counts[invariant] > INV_REPORT_MAX) return;
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char *line = rs_xasprintf("invariant %d: %s", invariant, msg);
    cJSON_AddItemToArray(rep->failures, cJSON_CreateString(line));
    free(line);
}

void inv_report_fold(inv_report *rep)
{
    for (int i = 1; i <= INV_COUNT; i++) {
        if (rep->counts[i] <= INV_REPORT_MAX) continue;
        char *line = rs_xasprintf("invariant %d: %d more violations like the above", i,
                                  rep->counts[i] - INV_REPORT_MAX);
        cJSON_AddItemToArray(rep->failures, cJSON_CreateString(line));
        free(line);
    }
}
