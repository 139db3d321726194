/*
 * step_outputs.c — GitHub Actions step outputs (see step_outputs.h).
 *
 * The one idea: an output is the program's own name and a value in the
 * multiline form, fenced by a delimiter derived from the value itself, so
 * no value (a strategy name, a node list) can close its entry and forge
 * another output a later step would trust.
 */
#include "reports/step_outputs.h"

#include "core/cred/cred.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool output_name_ok(const char *name)
{
    if (!name || !name[0]) return false;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '-'))
            return false;
    return true;
}

/* One entry; false when the value cannot be fenced (never: the value would
 * have to hold its own SHA-256). */
static bool output_write(FILE *f, const char *name, const char *value)
{
    char hex[65];
    sha256_hex(value, strlen(value), hex);
    char delim[48];
    snprintf(delim, sizeof delim, "reassert_%.32s", hex);
    if (strstr(value, delim)) return false;
    fprintf(f, "%s<<%s\n%s\n%s\n", name, delim, value, delim);
    return true;
}

rs_code reports_step_outputs_append(const char *path, const cJSON *outputs, rs_err *e)
{
    const cJSON *o;
    cJSON_ArrayForEach(o, outputs)
    {
        if (!output_name_ok(o->string))
            return rs_fail(e, RS_FAILED, "GITHUB_OUTPUT: '%s' is not an output name",
                           o->string ? o->string : "");
    }
    FILE *f = fopen(path, "a");
    if (!f) return rs_fail(e, RS_FAILED, "cannot append to GITHUB_OUTPUT %s", path);
    bool ok = true;
    cJSON_ArrayForEach(o, outputs)
    {
        char *json = cJSON_IsString(o) ? NULL : cJSON_PrintUnformatted(o);
        ok = output_write(f, o->string, json ? json : o->valuestring) && ok;
        free(json);
    }
    ok = fflush(f) == 0 && !ferror(f) && ok;
    ok = fclose(f) == 0 && ok;
    return ok ? RS_OK : rs_fail(e, RS_FAILED, "cannot append to GITHUB_OUTPUT %s", path);
}

cJSON *reports_step_outputs_run(const cJSON *doc)
{
    cJSON *out = cJSON_CreateObject();
    static const char *const copied[] = {"exit", "outcome", "strategy", "fence_taken"};
    for (size_t i = 0; i < RS_ARRAY_LEN(copied); i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, copied[i]);
        if (v) cJSON_AddItemToObject(out, copied[i], cJSON_Duplicate(v, true));
    }
    cJSON_AddNumberToObject(out, "errors",
                            cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "errors")));
    cJSON_AddNumberToObject(out, "warnings",
                            cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "warnings")));
    /* Node names, comma-separated: what a shell step splits most easily. */
    size_t cap = 1, used = 0;
    const cJSON *n;
    cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(doc, "annotation_only_nodes")) cap +=
        strlen(cJSON_GetStringValue(n) ? n->valuestring : "") + 1;
    char *nodes = rs_xcalloc(1, cap);
    cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(doc, "annotation_only_nodes"))
    {
        const char *name = cJSON_GetStringValue(n) ? n->valuestring : "";
        used += (size_t)snprintf(nodes + used, cap - used, "%s%s", used ? "," : "", name);
    }
    cJSON_AddStringToObject(out, "annotation_only_nodes", nodes);
    free(nodes);
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(doc, "counters"))
    {
        /* Counter names are the program's own (DESIGN.md §4), never data. */
        if (!cJSON_GetObjectItemCaseSensitive(out, c->string))
            cJSON_AddItemToObject(out, c->string, cJSON_Duplicate(c, true));
    }
    return out;
}

cJSON *reports_step_outputs_sim(const cJSON *scenarios)
{
    double n = 0, passed = 0, failed = 0, skipped = 0, unloadable = 0, runs = 0, runs_failed = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, scenarios)
    {
        n++;
        const cJSON *r;
        cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(s, "runs"))
        {
            runs++;
            runs_failed += !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "passed"));
        }
        if (cJSON_GetObjectItemCaseSensitive(s, "load_error"))
            unloadable++;
        else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "all_skipped")))
            skipped++;
        else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "passed")))
            passed++;
        else
            failed++;
    }
    cJSON *out = cJSON_CreateObject();
    cJSON_AddNumberToObject(out, "scenarios", n);
    cJSON_AddNumberToObject(out, "passed", passed);
    cJSON_AddNumberToObject(out, "failed", failed);
    cJSON_AddNumberToObject(out, "skipped", skipped);
    cJSON_AddNumberToObject(out, "unloadable", unloadable);
    cJSON_AddNumberToObject(out, "runs", runs);
    cJSON_AddNumberToObject(out, "runs_failed", runs_failed);
    return out;
}
