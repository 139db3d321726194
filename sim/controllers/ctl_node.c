/*
 * ctl_node.c — what happens to a node: Talos reboots (not Ready, then the
 * machine config's registry auth loaded at boot) and pod evictions under a
 * PodDisruptionBudget.
 *
 * The one idea: containerd reads the registry auth only at boot, so a Talos
 * patch changes nothing a pull uses until the reboot finishes; the reboot's
 * sequence number makes a stale "reboot done" timer (a node rebooted twice)
 * a no-op.
 */
#include "sim/controllers/ctl_int.h"

#include "sim/store/store.h"

#include <stdlib.h>
#include <string.h>

/* Adds (present) or removes one NoSchedule taint, other taints kept. */
static void node_taint(sim_world *w, const char *node, const char *key, bool present)
{
    cJSON *obj = simw_get(w, "Node", NULL, node);
    if (!obj) return;
    const cJSON *taints =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "spec"), "taints");
    cJSON *kept = cJSON_CreateArray();
    const cJSON *t;
    cJSON_ArrayForEach(t, taints)
    {
        const char *k = ctl_obj_str(t, "key", NULL, NULL);
        if (!k || strcmp(k, key) != 0) cJSON_AddItemToArray(kept, cJSON_Duplicate(t, 1));
    }
    if (present) {
        cJSON *taint = cJSON_CreateObject();
        cJSON_AddStringToObject(taint, "key", key);
        cJSON_AddStringToObject(taint, "effect", "NoSchedule");
        cJSON_AddItemToArray(kept, taint);
    }
    cJSON *patch = cJSON_CreateObject();
    cJSON *spec = cJSON_AddObjectToObject(patch, "spec");
    if (cJSON_GetArraySize(kept) > 0) {
        cJSON_AddItemToObject(spec, "taints", kept);
    } else {
        cJSON_Delete(kept);
        cJSON_AddNullToObject(spec, "taints");
    }
    simw_merge(w, "Node", NULL, node, patch);
    cJSON_Delete(obj);
}

/* The Node's Ready condition. Going down adds the not-ready taint at once;
 * coming back, the node lifecycle controller removes it a few seconds after
 * Ready (a separate write, so a reader can see Ready with the taint still
 * on: H95). */
static void node_set_ready(sim_world *w, const char *node, bool ready)
{
    if (!ready) node_taint(w, node, SIMW_TAINT_NOT_READY, true);
    cJSON *patch = cJSON_CreateObject();
    cJSON_AddItemToObject(cJSON_AddObjectToObject(patch, "status"), "conditions",
                          ctl_ready_conditions(ready ? "True" : "False",
                                               ready ? "KubeletReady" : "NodeStatusUnknown",
                                               ready ? "kubelet is posting ready status"
                                                     : "Kubelet stopped posting node status.",
                                               simw_wall(w)));
    simw_merge(w, "Node", NULL, node, patch);
}

/* Clears a startup taint later, unless the node rebooted again meanwhile. */
static void node_untaint_later(sim_world *w, const char *node, int64_t seq, const char *key,
                               int64_t after_ms)
{
    char *payload = rs_xasprintf("%lld:%s:%s", (long long)seq, key, node);
    ctl_schedule(w, simw_now(w) + after_ms, "node.untaint", payload);
    free(payload);
}

void ctl_node_untaint(sim_world *w, const char *payload)
{
    /* "<seq>:<key>:<node>" — a taint key has no ':' in it here; node names never do. */
    const char *a = strchr(payload, ':');
    const char *b = a ? strrchr(payload, ':') : NULL;
    if (!a || !b || b == a) return;
    long long seq = strtoll(payload, NULL, 10);
    char *key = rs_xasprintf("%.*s", (int)(b - a - 1), a + 1);
    const char *node = b + 1;
    if (simw_talos_int(w, node, "reboot_seq") == seq) node_taint(w, node, key, false);
    free(key);
}

/* A new kernel boot: status.nodeInfo.bootID changes. */
static void node_set_boot(sim_world *w, const char *node, int64_t seq)
{
    char *boot = simw_boot_id(node, seq);
    cJSON *patch = cJSON_CreateObject();
    cJSON_AddStringToObject(
        cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch, "status"), "nodeInfo"), "bootID",
        boot);
    simw_merge(w, "Node", NULL, node, patch); /* takes the patch */
    free(boot);
}

/* A reboot as the scenario ordered it for this node (one-shot): normal (not
 * Ready for SIM_REBOOT_MS, then a new boot), fast (a new boot within a few
 * seconds, never seen NotReady), stuck (NotReady for good) or ignored (the
 * request is accepted and nothing happens). */
void ctl_talos_reboot(sim_world *w, const char *node)
{
    int64_t mode = simw_talos_int(w, node, "reboot_mode");
    simw_talos_set_int(w, node, "reboot_mode", SIMW_REBOOT_NORMAL);
    if (mode == SIMW_REBOOT_IGNORED) return;
    int64_t seq = simw_talos_int(w, node, "reboot_seq") + 1;
    simw_talos_set_int(w, node, "reboot_seq", seq);
    simw_talos_set_int(w, node, "rebooting", 1);
    if (mode != SIMW_REBOOT_FAST) node_set_ready(w, node, false);
    if (mode == SIMW_REBOOT_STUCK) return;
    char *payload = rs_xasprintf("%lld:%s", (long long)seq, node);
    ctl_schedule(w, simw_now(w) + (mode == SIMW_REBOOT_FAST ? SIM_FAST_REBOOT_MS : SIM_REBOOT_MS),
                 "talos.reboot-done", payload);
    free(payload);
}

/* Boot: containerd loads the machine config's auth, Talos re-applies its
 * node annotations, the node turns Ready and evicted pods come back. */
void ctl_talos_reboot_done(sim_world *w, const char *payload)
{
    char *colon = strchr(payload, ':');
    if (!colon) return;
    const char *node = colon + 1;
    long long seq = strtoll(payload, NULL, 10);
    if (simw_talos_int(w, node, "reboot_seq") != seq) return;
    simw_talos_set_int(w, node, "rebooting", 0);
    cJSON *auth = simw_talos_json(w, node, "registry_auth");
    simw_talos_set_json(w, node, "loaded_auth", auth);
    cJSON_Delete(auth);
    node_set_boot(w, node, seq);
    /* Cilium's agent starts after the kubelet: its startup taint is on when
     * the node turns Ready and lingers (H96). */
    node_taint(w, node, SIMW_TAINT_CILIUM, true);
    node_set_ready(w, node, true);
    node_untaint_later(w, node, seq, SIMW_TAINT_NOT_READY, SIMW_UNTAINT_MS);
    node_untaint_later(w, node, seq, SIMW_TAINT_CILIUM, SIMW_CILIUM_STARTUP_MS);
    cJSON *ann = simw_talos_json(w, node, "node_annotations");
    if (cJSON_GetArraySize(ann) > 0) simw_node_annotations_apply(w, node, ann);
    cJSON_Delete(ann);
    simw_node_pods_ensure(w, node);
}

static cJSON *eviction_status(int code, const char *status, const char *reason, const char *msg)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "kind", "Status");
    cJSON_AddStringToObject(s, "apiVersion", "v1");
    cJSON_AddStringToObject(s, "status", status);
    if (reason) cJSON_AddStringToObject(s, "reason", reason);
    if (msg) cJSON_AddStringToObject(s, "message", msg);
    cJSON_AddNumberToObject(s, "code", code);
    return s;
}

/* The kubelet registers a deleted mirror pod again at once, under a new UID:
 * the preset's own come back through simw_node_pods_ensure, any other (a
 * scenario's `kube.apply`, e.g. one marked only by the mirror annotation, as
 * some kubelets publish them) from the object that was deleted. */
static void ctl_mirror_register_again(sim_world *w, const char *ns, const char *name,
                                      const cJSON *pod)
{
    cJSON *again = simw_get(w, "Pod", ns, name);
    if (!again) {
        cJSON *copy = cJSON_Duplicate(pod, 1);
        cJSON *meta = cJSON_GetObjectItemCaseSensitive(copy, "metadata");
        static const char *const drop[] = {"uid", "resourceVersion", "generation",
                                           "creationTimestamp", "deletionTimestamp"};
        for (size_t i = 0; i < RS_ARRAY_LEN(drop); i++)
            cJSON_DeleteItemFromObjectCaseSensitive(meta, drop[i]);
        cJSON *out = NULL;
        store_create(w->st, "Pod", ns, copy, &out);
        cJSON_Delete(out);
        cJSON_Delete(copy);
    }
    cJSON_Delete(again);
}

/* How long an evicted pod stays Terminating: SIM_EVICT_MS, or what the
 * sim-only annotation `sim.reassert/terminates-after: <duration>` gives it
 * (a process that ignores SIGTERM and is killed only when its grace period
 * ends), so a scenario can hold a pod Terminating across several drain
 * polls. */
#define CTL_POD_TERMINATES_ANN "sim.reassert/terminates-after"
#define CTL_POD_TERMINATES_MAX_MS (24LL * 3600 * 1000)

static int64_t ctl_pod_termination_ms(const cJSON *pod)
{
    const char *text = simw_annotation(pod, CTL_POD_TERMINATES_ANN);
    int64_t ms = 0;
    if (!text || !sc_parse_duration_ms(text, &ms) || ms < 0 || ms > CTL_POD_TERMINATES_MAX_MS)
        return SIM_EVICT_MS;
    return ms;
}

int ctl_evict(sim_world *w, const char *ns, const char *name, char **node_out, cJSON **body)
{
    *node_out = NULL;
    cJSON *pod = simw_get(w, "Pod", ns, name);
    if (!pod) {
        *body = store_status(404, "NotFound", "pods \"%s\" not found", name);
        return 404;
    }
    const char *node = ctl_obj_str(pod, "spec", "nodeName", NULL);
    *node_out = node ? rs_xstrdup(node) : NULL;
    const char *owner_kind =
        ctl_obj_str(ctl_first_item(pod, "metadata", "ownerReferences"), "kind", NULL, NULL);
    bool daemonset = owner_kind && strcmp(owner_kind, "DaemonSet") == 0;
    if (node && !daemonset && simw_talos_int(w, node, "pdb_block_until") > simw_now(w)) {
        cJSON_Delete(pod);
        *body =
            eviction_status(429, "Failure", "TooManyRequests",
                            "Cannot evict pod as it would violate the pod's disruption budget.");
        return 429;
    }
    bool mirror = simw_annotation(pod, w->cfg.ann.config_mirror) ||
                  (owner_kind && strcmp(owner_kind, "Node") == 0);
    if (mirror && node) {
        /* A mirror pod is the API's view of a static pod the kubelet runs:
         * evicting it deletes the object and the kubelet registers it again
         * at once (a new UID), while the static pod itself keeps running. A
         * drain that evicts it and waits for it to be gone never finishes. */
        ctl_pod_delete(w, ns, name);
        simw_node_pods_ensure(w, node);
        ctl_mirror_register_again(w, ns, name, pod);
    } else if (!ctl_pod_terminating(pod)) {
        ctl_pod_terminate(w, ns, name, ctl_pod_termination_ms(pod));
    }
    cJSON_Delete(pod);
    *body = eviction_status(201, "Success", NULL, NULL);
    return 201;
}
