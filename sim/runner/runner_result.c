/*
 * runner_result.c — the report a scenario run writes for its checker
 * (sim_run_req.result_path): the nodes it decided on their annotations
 * alone, which invariant 2 holds to their annotations (DESIGN §6 r2).
 */
#include "sim/runner/runner_int.h"

#include <stdlib.h>

/* The whole file (small: node names), or NULL when there is none. */
static char *read_result(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0, got;
    char *buf = rs_xmalloc(cap);
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n - 1 == 0) buf = rs_xrealloc(buf, cap *= 2);
    }
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The nodes the run reported in annotation_only_nodes, from the file it
 * wrote (sim_run_req.result_path): [] when it wrote none (a run that ended
 * before its result, as a crash does), so invariant 2 checks every node's
 * Talos auth. A file not of that shape is a failure, never an empty list. */
cJSON *runner_annotation_only(const char *path, cJSON *failures)
{
    char *text = read_result(path);
    bool none = !text || !text[0];
    cJSON *doc = none ? NULL : cJSON_Parse(text);
    free(text);
    if (none) return cJSON_CreateArray();
    cJSON *list = cJSON_DetachItemFromObjectCaseSensitive(doc, "annotation_only_nodes");
    bool ok = cJSON_IsArray(list);
    for (const cJSON *it = ok ? list->child : NULL; it; it = it->next)
        ok = ok && cJSON_IsString(it);
    cJSON_Delete(doc);
    if (ok) return list;
    cJSON_Delete(list);
    cJSON_AddItemToArray(failures,
                         cJSON_CreateString("the run's result for the checker is unreadable"));
    return cJSON_CreateArray();
}
