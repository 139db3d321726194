/*
 * check_named.c — invariant 7 (DESIGN.md §6 r2): nothing held and unnamed.
 *
 * The one idea: after any run that could still speak (every exit but a
 * crash), each fence whose holder names this run — the Lease, either policy
 * fence, a node owner — was either released or is named in one of the run's
 * error lines, so no operator ever has to discover a fence by accident. The
 * world is read, never the run's word; "named" means an `::error::` line (or
 * an "error" field of JSON output) that carries the object's reference.
 */
#include "sim/check/check_int.h"

#include "sim/store/store.h"

#include <stdlib.h>
#include <string.h>

/* Whether some error line of output carries ref (e.g. "flux-system/flux-system"). */
bool inv_named_in_errors(const char *output, const char *ref)
{
    if (!output) return false;
    const char *line = output;
    while (*line) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char *one = rs_xmalloc(len + 1);
        memcpy(one, line, len);
        one[len] = '\0';
        bool is_error = strstr(one, "::error") != NULL || strstr(one, "\"error") != NULL;
        bool hit = is_error && strstr(one, ref) != NULL;
        free(one);
        if (hit) return true;
        if (!end) break;
        line = end + 1;
    }
    return false;
}

static void check_policy(sim_world *w, const char *ns, const char *name, const char *owner_key,
                         inv_report *rep)
{
    cJSON *ks = simw_get(w, "Kustomization", ns, name);
    const char *owner = simw_annotation(ks, owner_key);
    if (inv_holder_of_run(owner, rep->run->name)) {
        char *ref = rs_xasprintf("%s/%s", ns, name);
        if (!inv_named_in_errors(rep->run->output, ref))
            inv_report_add(
                rep, 7, "Kustomization %s is still fenced by this run and no error names it", ref);
        free(ref);
    }
    cJSON_Delete(ks);
}

static void check_lease(sim_world *w, inv_report *rep)
{
    const rs_config *c = &w->cfg;
    cJSON *lease = simw_get(w, "Lease", c->lease_ns, c->lease_name);
    const char *path[] = {"spec", "holderIdentity"};
    const char *holder = simw_json_str(lease, path, 2);
    if (inv_holder_of_run(holder, rep->run->name)) {
        char *ref = rs_xasprintf("%s/%s", c->lease_ns, c->lease_name);
        if (!inv_named_in_errors(rep->run->output, ref))
            inv_report_add(rep, 7, "Lease %s is still held by this run and no error names it", ref);
        free(ref);
    }
    cJSON_Delete(lease);
}

static void check_nodes(sim_world *w, inv_report *rep)
{
    cJSON *list = NULL;
    if (store_list(w->st, "Node", NULL, NULL, NULL, &list) != 200) {
        inv_report_add(rep, 7, "cannot judge node fences: the nodes could not be listed");
        cJSON_Delete(list);
        return;
    }
    const cJSON *node;
    cJSON_ArrayForEach(node, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        const char *path[] = {"metadata", "name"};
        const char *name = simw_json_str(node, path, 2);
        if (!name ||
            !inv_holder_of_run(simw_annotation(node, w->cfg.ann.drain_owner), rep->run->name))
            continue;
        if (!inv_named_in_errors(rep->run->output, name))
            inv_report_add(rep, 7, "Node %s still carries this run's fence and no error names it",
                           name);
    }
    cJSON_Delete(list);
}

void inv_check_named(sim_world *w, inv_report *rep)
{
    const rs_config *c = &w->cfg;
    check_policy(w, c->parent_ns, c->parent_name, w->cfg.ann.parent_owner, rep);
    check_policy(w, c->child_ns, c->child_name, w->cfg.ann.child_owner, rep);
    check_nodes(w, rep);
    check_lease(w, rep);
}
