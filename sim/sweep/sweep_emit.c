/*
 * sweep_emit.c — `--emit-scenario FILE`: a failing plan as a scenario file
 * ready to commit (after a person writes the expectations the fixed core
 * must meet).
 *
 * The file is the source scenario's own text — its cluster, catalogue and
 * comments as the author wrote them, nothing re-encoded — with `name:`,
 * `strategies:` and `runs:` replaced: the runs before the faulted one as
 * written, the faulted run with the plan's faults and `during:` entries on
 * exact operation names, then (as the plan ran) `--recover-fences` and the
 * same run again. YAML is a superset of JSON, so the runs are written as
 * JSON flow mappings.
 */
#include "sim/sweep/sweep_int.h"

#include <stdlib.h>
#include <string.h>

static cJSON *event_json(const sc_event *ev)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *args = cJSON_Duplicate(ev->args, true);
    /* The loader turned durations into milliseconds; give them back. */
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(ev->args, "ms");
    if (strcmp(ev->kind, "advance") == 0 && cJSON_IsNumber(ms)) {
        char d[32];
        snprintf(d, sizeof d, "%.0fms", ms->valuedouble);
        cJSON_Delete(args);
        args = cJSON_CreateString(d);
    }
    const cJSON *fms = cJSON_GetObjectItemCaseSensitive(ev->args, "for_ms");
    if (cJSON_IsNumber(fms)) {
        char d[32];
        snprintf(d, sizeof d, "%.0fms", fms->valuedouble);
        cJSON_DeleteItemFromObjectCaseSensitive(args, "for_ms");
        cJSON_AddStringToObject(args, "for", d);
    }
    cJSON_AddItemToObject(o, ev->kind, args);
    return o;
}

static cJSON *run_json(const sc_run *r, bool keep_expect, int exit_code)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", r->name);
    if (r->skew_ms) {
        char d[32];
        snprintf(d, sizeof d, "%lldms", (long long)r->skew_ms);
        cJSON_AddStringToObject(o, "skew", d);
    }
    if (r->n_args)
        cJSON_AddItemToObject(
            o, "args", cJSON_CreateStringArray((const char *const *)r->args, (int)r->n_args));
    if (r->n_before) {
        cJSON *b = cJSON_AddArrayToObject(o, "before");
        for (size_t i = 0; i < r->n_before; i++)
            cJSON_AddItemToArray(b, event_json(&r->before[i]));
    }
    if (r->n_faults) {
        cJSON *fs = cJSON_AddArrayToObject(o, "faults");
        for (size_t i = 0; i < r->n_faults; i++) {
            const sc_fault *f = &r->faults[i];
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "on", f->on);
            cJSON_AddNumberToObject(j, "nth", f->nth);
            if (f->and_after) cJSON_AddBoolToObject(j, "and-after", true);
            if (f->effect == SC_FAULT_FAIL) cJSON_AddNumberToObject(j, "fail", f->fail_status);
            if (f->effect == SC_FAULT_TIMEOUT) cJSON_AddBoolToObject(j, "timeout", true);
            if (f->effect == SC_FAULT_LOST_RESPONSE)
                cJSON_AddBoolToObject(j, "lost-response", true);
            if (f->effect == SC_FAULT_CRASH) cJSON_AddBoolToObject(j, "crash", true);
            cJSON_AddItemToArray(fs, j);
        }
    }
    if (r->n_during) {
        cJSON *ds = cJSON_AddArrayToObject(o, "during");
        for (size_t i = 0; i < r->n_during; i++) {
            const sc_during *d = &r->during[i];
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "before-call", d->before_call);
            cJSON_AddNumberToObject(j, "nth", d->nth);
            if (d->and_after) cJSON_AddBoolToObject(j, "and-after", true);
            cJSON_AddItemToObject(j, "do", event_json(&d->action));
            cJSON_AddItemToArray(ds, j);
        }
    }
    if (keep_expect && (r->expect || r->by_strategy)) {
        cJSON *x = r->expect ? cJSON_Duplicate(r->expect, true) : cJSON_CreateObject();
        if (r->by_strategy)
            cJSON_AddItemToObject(x, "by-strategy", cJSON_Duplicate(r->by_strategy, true));
        cJSON_AddItemToObject(o, "expect", x);
    } else if (!keep_expect && exit_code != 0) {
        cJSON *x = cJSON_AddObjectToObject(o, "expect");
        cJSON_AddNumberToObject(x, "exit", exit_code);
    }
    if (keep_expect && r->n_invariants_off) {
        cJSON *inv = cJSON_AddObjectToObject(o, "invariants");
        cJSON_AddItemToObject(inv, "off",
                              cJSON_CreateIntArray(r->invariants_off, (int)r->n_invariants_off));
        cJSON_AddStringToObject(inv, "reason", r->invariants_reason ? r->invariants_reason : "");
    }
    return o;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 8192, n = 0, got;
    char *buf = rs_xmalloc(cap);
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0)
        if ((n += got) + 1 == cap) buf = rs_xrealloc(buf, cap *= 2);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* A top-level key line ("runs:", "name: x"): at column 0, not a comment or
 * a list item. */
static bool top_key(const char *line, const char *key)
{
    size_t n = strlen(key);
    return strncmp(line, key, n) == 0 && line[n] == ':';
}

static bool top_any(const char *line)
{
    return (line[0] >= 'a' && line[0] <= 'z') || (line[0] >= 'A' && line[0] <= 'Z');
}

rs_code sw_emit(const sw_ctx *c, size_t run, const sw_plan *p, const sw_base *b, bool follow_up,
                const char *path, rs_err *e)
{
    const sc_scenario *sc = c->sc;
    char *src = slurp(sc->file);
    if (!src) return rs_fail(e, RS_FAILED, "--emit-scenario: cannot read %s", sc->file);
    sw_outcome out;
    sw_exec(c, run, p, b, follow_up, false, &out);
    FILE *f = fopen(path, "w");
    if (!f) {
        free(src);
        sw_outcome_free(&out);
        return rs_fail(e, RS_FAILED, "--emit-scenario: cannot write %s", path);
    }
    char *spec = sw_plan_spec(p, c->menu);
    fprintf(f, "# Found by: reassert sweep %s --run %s --strategy %s --plan '%s'\n", sc->file,
            sc->runs[run].name, c->strategy->name, spec);
    fprintf(f, "# Failed with: %s\n# Edit the expectations into what the fixed core must do.\n",
            cJSON_GetArraySize(out.failures)
                ? cJSON_GetStringValue(cJSON_GetArrayItem(out.failures, 0))
                : out.verdict);
    bool skipping = false;
    for (char *line = src; line && *line;) {
        char *end = strchr(line, '\n');
        if (end) *end = '\0';
        if (top_any(line))
            skipping =
                top_key(line, "runs") || top_key(line, "strategies") || top_key(line, "name");
        if (!skipping) fprintf(f, "%s\n", line);
        line = end ? end + 1 : NULL;
    }
    fprintf(f, "name: %s-repro\nstrategies: [%s]\nruns:\n", sc->name, c->expect_as);
    cJSON *runs = cJSON_CreateArray();
    for (size_t r = 0; r < run; r++)
        cJSON_AddItemToArray(runs, run_json(&sc->runs[r], true, 0));
    sc_run *target = sw_run_with_plan(&sc->runs[run], p, b, c->menu);
    cJSON_AddItemToArray(runs, run_json(target, false, out.exit));
    sw_run_free(target);
    if (follow_up && out.recovered) {
        sc_run *rec = sw_run_follow(&sc->runs[run], "recover", sc->runs[run].name);
        cJSON_AddItemToArray(runs, run_json(rec, false, 0));
        sw_run_free(rec);
    }
    if (follow_up) {
        sc_run *again = sw_run_follow(&sc->runs[run], "again", NULL);
        cJSON_AddItemToArray(runs, run_json(again, false, 0));
        sw_run_free(again);
    }
    const cJSON *r;
    cJSON_ArrayForEach(r, runs)
    {
        char *txt = cJSON_PrintUnformatted(r);
        fprintf(f, "  - %s\n", txt);
        free(txt);
    }
    cJSON_Delete(runs);
    free(spec);
    free(src);
    sw_outcome_free(&out);
    if (fclose(f) != 0) return rs_fail(e, RS_FAILED, "--emit-scenario: writing %s failed", path);
    return RS_OK;
}
