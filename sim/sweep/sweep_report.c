/*
 * sweep_report.c — the sweep's table and --json (see sweep_report.h).
 *
 * Every string that came from a scenario or the cluster (operation names,
 * failures, outputs quoted in them) is escaped before it reaches a text
 * line, so none of it can form a GitHub Actions workflow command (DESIGN.md
 * §7.1); the JSON carries the raw (already redacted) strings.
 */
#include "sim/sweep/sweep_report.h"

#include "core/out.h"

#include <stdlib.h>
#include <string.h>

struct sw_report {
    const sweep_opts *o;
    const sc_scenario *sc;
    const sw_menu *menu;
    cJSON *doc, *sections, *cur, *notes;
    const char *strategy, *run;
    size_t plans, failed;
};

static const char *mode_name(sweep_mode m)
{
    return m == SWEEP_CRASH     ? "crash"
           : m == SWEEP_PERTURB ? "perturb"
           : m == SWEEP_SWARM   ? "swarm"
                                : "plan";
}

static void put(FILE *f, const char *s)
{
    char *e = out_escape(s ? s : "", false);
    fputs(e, f);
    free(e);
}

sw_report *sw_report_new(const sweep_opts *o, const sc_scenario *sc, const sw_menu *m)
{
    sw_report *r = rs_xcalloc(1, sizeof *r);
    r->o = o;
    r->sc = sc;
    r->menu = m;
    r->doc = cJSON_CreateObject();
    cJSON_AddStringToObject(r->doc, "scenario", sc->name);
    cJSON_AddStringToObject(r->doc, "file", sc->file);
    cJSON_AddStringToObject(r->doc, "mode", mode_name(o->mode));
    if (o->mode == SWEEP_SWARM) {
        char seed[32];
        snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
        cJSON_AddStringToObject(r->doc, "seed", seed);
        cJSON_AddNumberToObject(r->doc, "swarm", o->swarm_n);
    }
    if (o->strategy && o->strategy->broken)
        cJSON_AddStringToObject(r->doc, "test_only_broken", sweep_broken_name(o->strategy->broken));
    char shard[32];
    snprintf(shard, sizeof shard, "%u/%u", o->shard_i, o->shard_n);
    cJSON_AddStringToObject(r->doc, "shard", shard);
    if (o->mode == SWEEP_PERTURB) {
        cJSON *names = cJSON_AddArrayToObject(r->doc, "menu");
        for (size_t i = 0; i < m->n; i++)
            cJSON_AddItemToArray(names, cJSON_CreateString(m->items[i].name));
    }
    r->sections = cJSON_AddArrayToObject(r->doc, "sections");
    r->notes = cJSON_CreateArray();
    return r;
}

void sw_report_section(sw_report *r, const char *strategy, const char *run, const sw_base *b)
{
    size_t writes = 0;
    for (size_t i = 0; i < b->n; i++)
        writes += b->writes[i];
    r->strategy = strategy;
    r->run = run;
    r->cur = cJSON_CreateObject();
    cJSON_AddStringToObject(r->cur, "strategy", strategy);
    cJSON_AddStringToObject(r->cur, "run", run);
    cJSON_AddNumberToObject(r->cur, "calls", (double)b->n);
    cJSON_AddNumberToObject(r->cur, "writes", (double)writes);
    cJSON_AddNumberToObject(r->cur, "baseline_exit", b->exit);
    cJSON_AddItemToObject(r->cur, "baseline_failures", cJSON_Duplicate(b->failures, true));
    cJSON_AddArrayToObject(r->cur, "plans");
    cJSON_AddItemToArray(r->sections, r->cur);
    if (cJSON_GetArraySize(b->failures) > 0) r->failed++;
    if (r->o->json) return;
    FILE *f = r->o->out;
    fprintf(f, "sweep %s: scenario ", mode_name(r->o->mode));
    put(f, r->sc->name);
    fprintf(f, ", strategy %s", strategy);
    if (r->o->strategy && r->o->strategy->broken)
        fprintf(f, " (TEST-ONLY defect %s)", sweep_broken_name(r->o->strategy->broken));
    fputs(", run ", f);
    put(f, run);
    fprintf(f, ": %zu calls, %zu writes, fault-free exit %d (shard %u/%u)\n", b->n, writes, b->exit,
            r->o->shard_i, r->o->shard_n);
    const cJSON *x;
    cJSON_ArrayForEach(x, b->failures)
    {
        fputs("      FAIL (fault-free run): ", f);
        put(f, cJSON_GetStringValue(x));
        fputc('\n', f);
    }
    if (r->o->mode == SWEEP_CRASH)
        fprintf(f, "  %5s  %-58s %5s %6s  %s\n", "write", "call crashed at", "exit", "again",
                "verdict");
    else if (r->o->mode == SWEEP_PERTURB)
        fprintf(f, "  %5s  %-58s %-20s %5s  %s\n", "call", "before call", "event", "exit",
                "verdict");
    else
        fprintf(f, "  %5s  %-58s %5s %6s  %s\n", "plan", "faults (call:effect)", "exit", "again",
                "verdict");
    fflush(f);
}

/* The one command that replays the plan exactly. */
static char *reproduce(const sw_report *r, const char *spec)
{
    rs_broken b = r->o->strategy ? r->o->strategy->broken : RS_BROKEN_NONE;
    /* A perturbation plan is judged without a follow-up run: its replay
     * must be too, or it is not the same verdict. */
    bool perturb = r->o->mode == SWEEP_PERTURB || (r->o->mode == SWEEP_PLAN && r->o->plan_perturb);
    return rs_xasprintf("reassert sweep '%s' --run %s --strategy %s%s --plan '%s'%s%s", r->sc->file,
                        r->run, r->strategy, perturb ? " --perturb" : "", spec,
                        b ? " --test-only-broken " : "", sweep_broken_name(b));
}

static void print_row(sw_report *r, const cJSON *row, const sw_outcome *out, size_t index)
{
    FILE *f = r->o->out;
    const char *call = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(row, "call"));
    const char *plan = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(row, "plan"));
    char id[32], cell[64];
    if (r->o->mode == SWEEP_CRASH)
        snprintf(id, sizeof id, "%d", cJSON_GetObjectItemCaseSensitive(row, "write")->valueint);
    else if (r->o->mode == SWEEP_SWARM)
        snprintf(id, sizeof id, "%d",
                 cJSON_GetObjectItemCaseSensitive(row, "swarm_plan")->valueint);
    else
        snprintf(id, sizeof id, "%zu", index);
    snprintf(cell, sizeof cell, "%.58s", call ? call : plan ? plan : "");
    fprintf(f, "  %5s  ", id);
    put(f, cell);
    fprintf(f, "%*s", (int)(cell[0] ? 59 - strlen(cell) : 59), "");
    if (r->o->mode == SWEEP_PERTURB) {
        char ev[32];
        snprintf(ev, sizeof ev, "%.20s",
                 cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(row, "event")));
        put(f, ev);
        fprintf(f, "%*s %5d  ", (int)(21 - strlen(ev)), "", out->exit);
    } else {
        fprintf(f, "%5d %6d  ", out->exit, out->final_exit);
    }
    fprintf(f, "%s\n", out->passed ? out->verdict : "FAIL");
    if (out->passed) return;
    const cJSON *x;
    cJSON_ArrayForEach(x, out->failures)
    {
        fputs("      FAIL: ", f);
        put(f, cJSON_GetStringValue(x));
        fputc('\n', f);
    }
    const cJSON *shrunk = cJSON_GetObjectItemCaseSensitive(row, "shrunk");
    if (shrunk) {
        fprintf(f, "      shrunk from %s to %d fault(s): ", plan,
                cJSON_GetObjectItemCaseSensitive(row, "shrunk_faults")->valueint);
        put(f, shrunk->valuestring);
        fputc('\n', f);
        cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(row, "shrunk_failures"))
        {
            fputs("      FAIL (shrunk plan): ", f);
            put(f, cJSON_GetStringValue(x));
            fputc('\n', f);
        }
    }
    fputs("      reproduce: ", f);
    put(f, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(row, "reproduce")));
    fputc('\n', f);
}

void sw_report_plan(sw_report *r, cJSON *row, const sw_outcome *out, const sw_plan *p)
{
    (void)p;
    size_t index = (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r->cur, "plans"));
    cJSON_AddNumberToObject(row, "exit", out->exit);
    cJSON_AddNumberToObject(row, "final_exit", out->final_exit);
    cJSON_AddStringToObject(row, "verdict", out->passed ? out->verdict : "FAIL");
    cJSON_AddBoolToObject(row, "passed", out->passed);
    cJSON_AddItemToObject(row, "failures", cJSON_Duplicate(out->failures, true));
    if (!out->passed) {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(row, "shrunk");
        char *cmd =
            reproduce(r, s ? s->valuestring
                           : cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(row, "plan")));
        cJSON_AddStringToObject(row, "reproduce", cmd);
        free(cmd);
        r->failed++;
    }
    r->plans++;
    if (!r->o->json) {
        print_row(r, row, out, index);
        fflush(r->o->out);
    }
    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(r->cur, "plans"), row);
}

void sw_report_note(sw_report *r, const char *msg)
{
    cJSON_AddItemToArray(r->notes, cJSON_CreateString(msg));
    char *m = out_escape(msg, false);
    fprintf(stderr, "reassert sweep: %s\n", m);
    free(m);
}

bool sw_report_finish(sw_report *r, double wall_s)
{
    FILE *f = r->o->out;
    cJSON_AddNumberToObject(r->doc, "plans", (double)r->plans);
    cJSON_AddNumberToObject(r->doc, "failed", (double)r->failed);
    cJSON_AddBoolToObject(r->doc, "passed", r->failed == 0);
    cJSON_AddItemToObject(r->doc, "notes", r->notes);
    if (r->o->json) {
        char *txt = cJSON_Print(r->doc);
        fprintf(f, "%s\n", txt);
        free(txt);
    } else {
        fprintf(f, "sweep: %zu plans, %zu failed (shard %u/%u); wall %.3f s, %.2f plans/s\n",
                r->plans, r->failed, r->o->shard_i, r->o->shard_n, wall_s,
                wall_s > 0 ? (double)r->plans / wall_s : 0.0);
    }
    bool ok = r->failed == 0;
    bool out_ok = fflush(f) == 0 && !ferror(f);
    if (!out_ok) fputs("reassert sweep: writing the report failed\n", stderr);
    cJSON_Delete(r->doc);
    free(r);
    return ok && out_ok;
}
