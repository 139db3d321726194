/*
 * sweep_fences.c — what is still held after a plan, by anyone: the Lease's
 * holder, either policy fence's owner, every node owner. A run that failed
 * closed must name each of them in an error line, and say how to inspect
 * them (`reassert --fences`); a fence naming the crashed run sends the plan
 * through `--recover-fences` before the run is tried again.
 */
#include "sim/sweep/sweep_int.h"

#include "sim/check/check_invariants.h"
#include "sim/store/store.h"
#include "sim/world/world_internal.h"

#include <stdlib.h>
#include <string.h>

static void held_add(sw_held **v, size_t *n, const char *what, const char *ref, const char *holder)
{
    *v = rs_xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[*n] = (sw_held){rs_xstrdup(ref), rs_xstrdup(what), rs_xstrdup(holder)};
    (*n)++;
}

static void held_policy(sim_world *w, const char *ns, const char *name, const char *owner_key,
                        sw_held **v, size_t *n)
{
    cJSON *ks = simw_get(w, "Kustomization", ns, name);
    const char *owner = simw_annotation(ks, owner_key);
    if (owner && *owner) {
        char *ref = rs_xasprintf("%s/%s", ns, name);
        held_add(v, n, "Kustomization", ref, owner);
        free(ref);
    }
    cJSON_Delete(ks);
}

size_t sw_fences_held(sim_world *w, sw_held **out)
{
    const rs_config *c = &w->cfg;
    sw_held *v = NULL;
    size_t n = 0;
    held_policy(w, c->parent_ns, c->parent_name, c->ann.parent_owner, &v, &n);
    held_policy(w, c->child_ns, c->child_name, c->ann.child_owner, &v, &n);
    cJSON *list = NULL;
    if (store_list(w->st, "Node", NULL, NULL, NULL, &list) == 200) {
        const cJSON *node;
        cJSON_ArrayForEach(node, cJSON_GetObjectItemCaseSensitive(list, "items"))
        {
            const char *path[] = {"metadata", "name"};
            const char *name = simw_json_str(node, path, 2);
            const char *owner = simw_annotation(node, c->ann.drain_owner);
            if (name && owner && *owner) held_add(&v, &n, "Node", name, owner);
        }
    }
    cJSON_Delete(list);
    cJSON *lease = simw_get(w, "Lease", c->lease_ns, c->lease_name);
    const char *path[] = {"spec", "holderIdentity"};
    const char *holder = simw_json_str(lease, path, 2);
    if (holder && *holder) {
        char *ref = rs_xasprintf("%s/%s", c->lease_ns, c->lease_name);
        held_add(&v, &n, "Lease", ref, holder);
        free(ref);
    }
    cJSON_Delete(lease);
    *out = v;
    return n;
}

void sw_held_free(sw_held *h, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(h[i].ref);
        free(h[i].what);
        free(h[i].holder);
    }
    free(h);
}

bool sw_held_by_run(const sw_held *h, size_t n, const char *run_name)
{
    for (size_t i = 0; i < n; i++)
        if (inv_holder_of_run(h[i].holder, run_name)) return true;
    return false;
}
