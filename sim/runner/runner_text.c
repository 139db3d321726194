/*
 * runner_text.c — the text report of one scenario: a table of its runs
 * (strategy, exit, the headline counters, PASS or FAIL), each failure under
 * its run, the reasons a run's invariants were switched off, the strategies
 * skipped, then the GitHub Actions lines (runner_actions.c).
 *
 * Every string from the scenario or the cluster is escaped as a workflow
 * command message: no line of this report can start a command, in a
 * GitHub Actions step (actions) or as plain text.
 */
#include "sim/runner/runner_int.h"

#include "core/out.h"

#include <stdlib.h>

static void print_run_row(FILE *out, const cJSON *r)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(r, "delta");
#define DV(k) (cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d, k)))
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "name"));
    const char *strat = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "strategy"));
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(r, "exit");
    double vs = DV("virtual_seconds");
    char *run = out_escape(name ? name : "?", false); /* scenario text (DESIGN.md §7.1) */
    fprintf(out, "  %-6s %-16s %4d %8.0f %8.0f %7.0f %6.0f %6.0f %7.0f %9.0f %11.3f  %s\n",
            strat ? strat : "?", run, cJSON_IsNumber(ex) ? ex->valueint : -1,
            DV("controller_restarts"), DV("lease_writes"), DV("writes"), DV("fence_acquisitions"),
            DV("policy_pauses"), DV("node_reboots"), DV("api_calls"), vs != vs ? 0.0 : vs,
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "passed")) ? "PASS" : "FAIL");
    free(run);
#undef DV
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(r, "invariants_off");
    if (cJSON_GetArraySize(off) > 0) {
        fprintf(out, "      invariants off:");
        const cJSON *n;
        cJSON_ArrayForEach(n, off) fprintf(out, " %d", n->valueint);
        fprintf(out, " (reason: ");
        runner_actions_escape(
            stdout,
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "invariants_off_reason")),
            false);
        fprintf(out, ")\n");
    }
    /* Failures quote scenario and cluster text: escaped, so no line of them
     * can start a workflow command. */
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(r, "failures"))
    {
        fprintf(out, "      FAIL: ");
        runner_actions_escape(out, cJSON_GetStringValue(f), false);
        fprintf(out, "\n");
    }
}

void runner_text_scenario(FILE *out, const cJSON *s, bool actions)
{
    fprintf(out, "scenario ");
    runner_actions_escape(out, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "name")),
                          false);
    fprintf(out, " (");
    runner_actions_escape(out, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "file")),
                          false);
    fprintf(out, "): %s\n",
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "all_skipped")) ? "SKIPPED"
            : cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "passed"))    ? "PASS"
                                                                             : "FAIL");
    fprintf(out, "  %-6s %-16s %4s %8s %8s %7s %6s %6s %7s %9s %11s\n", "strat", "run", "exit",
            "restarts", "lease_w", "writes", "fences", "pauses", "reboots", "api_calls",
            "virtual_s");
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(s, "runs")) print_run_row(out, r);
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(s, "skipped"))
        fprintf(out, "  %-6s skipped: %s\n",
                cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "strategy")),
                cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "reason")));
    runner_actions_annotate(out, s, actions);
    runner_actions_dump(out, s, actions);
}
