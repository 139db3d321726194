/*
 * ctl_rollout.c — the kustomize-controller Deployment: a restart annotation
 * rolls its two pods, and its status is recomputed from the pods.
 *
 * The one idea: the Deployment's status is derived, never stored by hand —
 * every pod change (new pods, Ready, terminating, deleted) recomputes it, so
 * the core's "rollout complete" check reads what a real ReplicaSet would
 * report, including the window where old pods are still terminating. When
 * the new pods are Ready the old ones get SIGTERM, which cancels whatever
 * Kustomization reconcile they were running (a "flux.cancel" timer).
 */
#include "sim/controllers/ctl_int.h"

#include "sim/store/store.h"

#include <stdlib.h>
#include <string.h>

#define CTL_ROLLOUT_REPLICAS 2

static void rollout_hash(int64_t seq, char out[11])
{
    char *seed = rs_xasprintf("kustomize-controller-rollout-%lld", (long long)seq);
    char hex[65];
    sha256_hex(seed, strlen(seed), hex);
    free(seed);
    memcpy(out, hex, 10);
    out[10] = '\0';
}

static void rollout_pods_create(sim_world *w, const char *hash, bool ready)
{
    const rs_config *c = &w->cfg;
    int64_t wall = simw_wall(w);
    for (int i = 0; i < CTL_ROLLOUT_REPLICAS; i++) {
        char *seed = rs_xasprintf("%s-%d", hash, i);
        char hex[65];
        sha256_hex(seed, strlen(seed), hex);
        free(seed);
        char *name = rs_xasprintf("%s-%s-%.5s", c->controller_name, hash, hex);
        cJSON *pod = cJSON_CreateObject();
        cJSON_AddStringToObject(pod, "apiVersion", "v1");
        cJSON_AddStringToObject(pod, "kind", "Pod");
        cJSON *meta = cJSON_AddObjectToObject(pod, "metadata");
        cJSON_AddStringToObject(meta, "name", name);
        cJSON_AddStringToObject(meta, "namespace", c->controller_ns);
        cJSON *labels = cJSON_AddObjectToObject(meta, "labels");
        cJSON_AddStringToObject(labels, "app", "kustomize-controller");
        cJSON_AddStringToObject(labels, "pod-template-hash", hash);
        cJSON *owner = cJSON_CreateObject();
        char *rs_name = rs_xasprintf("%s-%s", c->controller_name, hash);
        cJSON_AddStringToObject(owner, "apiVersion", "apps/v1");
        cJSON_AddStringToObject(owner, "kind", "ReplicaSet");
        cJSON_AddStringToObject(owner, "name", rs_name);
        cJSON_AddBoolToObject(owner, "controller", true);
        cJSON_AddItemToArray(cJSON_AddArrayToObject(meta, "ownerReferences"), owner);
        free(rs_name);
        cJSON *cont = cJSON_CreateObject();
        cJSON_AddStringToObject(cont, "name", "manager");
        cJSON_AddStringToObject(cont, "image", "ghcr.io/fluxcd/kustomize-controller:v1.5.1");
        cJSON_AddItemToArray(
            cJSON_AddArrayToObject(cJSON_AddObjectToObject(pod, "spec"), "containers"), cont);
        cJSON *status = cJSON_AddObjectToObject(pod, "status");
        cJSON_AddStringToObject(status, "phase", ready ? "Running" : "Pending");
        cJSON_AddItemToObject(status, "conditions",
                              ctl_ready_conditions(ready ? "True" : "False",
                                                   ready ? "PodReady" : "ContainersNotReady",
                                                   ready ? "pod is ready" : "containers not ready",
                                                   wall));
        cJSON *out = NULL;
        store_create(w->st, "Pod", c->controller_ns, pod, &out);
        cJSON_Delete(out);
        cJSON_Delete(pod);
        free(name);
    }
}

static cJSON *rollout_pods(sim_world *w)
{
    cJSON *list = NULL;
    store_list(w->st, "Pod", w->cfg.controller_ns, w->cfg.controller_selector, NULL, &list);
    return list;
}

/* Deployment status from its pods: terminating pods no longer count. */
void ctl_rollout_status_refresh(sim_world *w)
{
    const rs_config *c = &w->cfg;
    cJSON *dep = simw_get(w, "Deployment", c->controller_ns, c->controller_name);
    if (!dep) return;
    char *hash = simw_meta_get(w, "rollout.hash");
    cJSON *list = rollout_pods(w);
    int replicas = 0, updated = 0, ready = 0;
    const cJSON *pod;
    cJSON_ArrayForEach(pod, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        if (ctl_pod_terminating(pod)) continue;
        replicas++;
        const char *h = simw_label(pod, "pod-template-hash");
        if (h && hash && strcmp(h, hash) == 0) updated++;
        const char *r = simw_condition_status(pod, "Ready");
        if (r && strcmp(r, "True") == 0) ready++;
    }
    bool complete = updated == CTL_ROLLOUT_REPLICAS && replicas == CTL_ROLLOUT_REPLICAS &&
                    ready == CTL_ROLLOUT_REPLICAS;
    int64_t wall = simw_wall(w);
    cJSON *status = cJSON_CreateObject();
    const cJSON *gen = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(dep, "metadata"), "generation");
    cJSON_AddNumberToObject(status, "observedGeneration",
                            cJSON_IsNumber(gen) ? gen->valuedouble : 1);
    cJSON_AddNumberToObject(status, "replicas", replicas);
    cJSON_AddNumberToObject(status, "updatedReplicas", updated);
    cJSON_AddNumberToObject(status, "readyReplicas", ready);
    cJSON_AddNumberToObject(status, "availableReplicas", ready);
    cJSON *conds = cJSON_AddArrayToObject(status, "conditions");
    cJSON_AddItemToArray(
        conds, simw_condition("Available", ready >= CTL_ROLLOUT_REPLICAS ? "True" : "False",
                              "MinimumReplicasAvailable", "Deployment has minimum availability.",
                              simw_wall_start(w)));
    cJSON_AddItemToArray(conds,
                         simw_condition("Progressing", "True",
                                        complete ? "NewReplicaSetAvailable" : "ReplicaSetUpdated",
                                        complete ? "ReplicaSet has successfully progressed."
                                                 : "ReplicaSet is progressing.",
                                        wall));
    ctl_patch_status(w, "Deployment", c->controller_ns, c->controller_name, status);
    cJSON_Delete(list);
    free(hash);
    cJSON_Delete(dep);
}

static const char *restarted_at(const sim_world *w, const cJSON *dep)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(dep, "spec");
    const cJSON *tmpl = cJSON_GetObjectItemCaseSensitive(spec, "template");
    const char *path[] = {"metadata", "annotations", w->cfg.ann.restarted_at};
    return simw_json_str(tmpl, path, 3);
}

/* A new restartedAt starts a rollout: new pods now, Ready after
 * SIM_ROLLOUT_READY_MS, then the old ones terminate. */
void ctl_rollout_notice(sim_world *w)
{
    const rs_config *c = &w->cfg;
    cJSON *dep = simw_get(w, "Deployment", c->controller_ns, c->controller_name);
    if (!dep) return;
    const char *ra = restarted_at(w, dep);
    ra = ra ? ra : "";
    char *last = simw_meta_get(w, "rollout.restarted_at");
    if (!last || strcmp(last, ra) != 0) {
        simw_meta_set(w, "rollout.restarted_at", ra);
        int64_t seq = simw_meta_int(w, "rollout.seq", 0) + 1;
        simw_meta_set_int(w, "rollout.seq", seq);
        char hash[11];
        rollout_hash(seq, hash);
        simw_meta_set(w, "rollout.hash", hash);
        rollout_pods_create(w, hash, false);
        ctl_schedule(w, simw_now(w) + SIM_ROLLOUT_READY_MS, "rollout.ready", hash);
    }
    free(last);
    cJSON_Delete(dep);
    ctl_rollout_status_refresh(w);
}

void ctl_rollout_ready(sim_world *w, const char *hash)
{
    char *current = simw_meta_get(w, "rollout.hash");
    bool superseded = !current || strcmp(current, hash) != 0;
    free(current);
    if (superseded) return;
    int64_t now = simw_now(w);
    int64_t wall = simw_wall(w);
    cJSON *list = rollout_pods(w);
    bool replaced = false;
    const cJSON *pod;
    cJSON_ArrayForEach(pod, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        const char *name = ctl_obj_str(pod, "metadata", "name", NULL);
        const char *h = simw_label(pod, "pod-template-hash");
        if (h && strcmp(h, hash) == 0) {
            cJSON *status = cJSON_CreateObject();
            cJSON_AddStringToObject(status, "phase", "Running");
            cJSON_AddItemToObject(status, "conditions",
                                  ctl_ready_conditions("True", "PodReady", "pod is ready", wall));
            ctl_patch_status(w, "Pod", w->cfg.controller_ns, name, status);
        } else if (!ctl_pod_terminating(pod)) {
            ctl_pod_terminate(w, w->cfg.controller_ns, name, SIM_POD_TERMINATE_MS);
            replaced = true;
        }
    }
    cJSON_Delete(list);
    /* The old pods got SIGTERM: the reconciles they were running are cancelled
     * with their context (the seed's 2026-09-23 HealthCheckFailed). */
    if (replaced) ctl_schedule(w, now, "flux.cancel", "");
    char *ra = simw_meta_get(w, "rollout.restarted_at");
    simw_meta_set(w, "rollout.ready_for", ra ? ra : "");
    free(ra);
    ctl_rollout_status_refresh(w);
}

/* The controller's first ReplicaSet, already Ready, in a fresh world. */
void ctl_rollout_init(sim_world *w)
{
    char hash[11];
    rollout_hash(0, hash);
    simw_meta_set(w, "rollout.hash", hash);
    simw_meta_set_int(w, "rollout.seq", 0);
    /* The restart the Deployment already carries is done (a world seeded
     * from a cassette starts with the recorded annotation): only a new one
     * rolls the pods. */
    const rs_config *c = &w->cfg;
    cJSON *dep = simw_get(w, "Deployment", c->controller_ns, c->controller_name);
    const char *ra = dep ? restarted_at(w, dep) : NULL;
    simw_meta_set(w, "rollout.restarted_at", ra ? ra : "");
    cJSON_Delete(dep);
    simw_meta_set(w, "rollout.ready_for", "");
    rollout_pods_create(w, hash, true);
    ctl_rollout_status_refresh(w);
}
