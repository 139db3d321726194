/*
 * sweep_menu.c — the perturbation menu: what other actors really do to a
 * cluster while a deploy runs (an operator cordons a node, the autoscaler
 * replaces one, someone pokes the Lease, a backup restores OpenBao, Flux
 * reconciles on its own, a pod hangs in termination, the registry revokes a
 * token).
 *
 * The menu is data: each entry is a name and a §5 world event, written here
 * as the JSON the scenario loader would produce, with {worker}, {ns} and
 * {desired} filled in from the scenario's cluster. A scenario extends it
 * with `perturb-menu: [{name, do: <event>}]`; an entry named like a
 * built-in one replaces it.
 */
#include "sim/sweep/sweep_int.h"

#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name, *kind, *args;
} builtin[] = {
    {"cordon", "kube.patch",
     "{\"ref\":\"Node/{worker}\",\"merge-patch\":{\"spec\":{\"unschedulable\":true}}}"},
    {"uncordon", "kube.patch",
     "{\"ref\":\"Node/{worker}\",\"merge-patch\":{\"spec\":{\"unschedulable\":false}}}"},
    {"taint", "kube.patch",
     "{\"ref\":\"Node/{worker}\",\"merge-patch\":{\"spec\":{\"taints\":[{\"key\":"
     "\"example.com/maintenance\",\"effect\":\"NoSchedule\"}]}}}"},
    {"node-replace", "node.replace", "{\"node\":\"{worker}\"}"},
    {"node-add", "node.add", "{\"role\":\"worker\",\"name\":\"prod-worker-sweep\"}"},
    {"lease-touch", "kube.patch",
     "{\"ref\":\"Lease/flux-system/ghcr-auth-refresh\",\"merge-patch\":{\"metadata\":{\"labels\":"
     "{\"touched-by\":\"another-actor\"}}}}"},
    {"lease-take", "kube.patch",
     "{\"ref\":\"Lease/flux-system/ghcr-auth-refresh\",\"merge-patch\":{\"spec\":"
     "{\"holderIdentity\":\"another-actor-0001\"}}}"},
    /* A stale docker config (not a catalogue credential): the consumer
     * Secret reverted by hand or by a stale controller. */
    {"consumer-revert", "kube.patch",
     "{\"ref\":\"Secret/{ns}/ghcr-auth\",\"merge-patch\":{\"data\":{\".dockerconfigjson\":"
     "\"eyJhdXRocyI6eyJnaGNyLmlvIjp7InVzZXJuYW1lIjoiZGVwbG95LWJvdCIsInBhc3N3b3JkIjoidG9rLXN0YWxl"
     "LTAwMDAifX19\"}}}"},
    {"openbao-restore", "openbao.raft-restore", "{\"credential\":\"previous\"}"},
    {"flux-reconcile", "kube.patch",
     "{\"ref\":\"Kustomization/flux-system/flux-system\",\"merge-patch\":{\"metadata\":"
     "{\"annotations\":{\"reconcile.fluxcd.io/requestedAt\":\"sweep\"}}}}"},
    {"controller-pod-stall", "kube.apply",
     "{\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
     "\"kustomize-controller-stalled\",\"namespace\":\"flux-system\",\"labels\":{\"app\":"
     "\"kustomize-controller\"},\"deletionTimestamp\":\"1970-01-01T00:00:00Z\",\"finalizers\":"
     "[\"example.com/hang\"]},\"spec\":{\"nodeName\":\"prod-control-plane-1\"},\"status\":"
     "{\"phase\":\"Running\"}}}"},
    {"registry-revoke", "registry.revoke", "{\"credential\":\"{desired}\"}"},
};

/* text with every {key} replaced; caller frees. */
static char *fill(const char *text, const char *const kv[][2], size_t n)
{
    char *out = rs_xstrdup(text);
    for (size_t i = 0; i < n; i++) {
        char *at;
        while ((at = strstr(out, kv[i][0]))) {
            *at = '\0';
            char *next = rs_xasprintf("%s%s%s", out, kv[i][1], at + strlen(kv[i][0]));
            free(out);
            out = next;
        }
    }
    return out;
}

static void menu_put(sw_menu *m, const char *name, const char *kind, cJSON *args)
{
    long at = sw_menu_find(m, name);
    sw_menu_item *it;
    if (at >= 0) {
        it = &m->items[at];
        free(it->ev.kind);
        cJSON_Delete(it->ev.args);
    } else {
        m->items = rs_xrealloc(m->items, (m->n + 1) * sizeof *m->items);
        it = &m->items[m->n++];
        it->name = rs_xstrdup(name);
    }
    it->ev.kind = rs_xstrdup(kind);
    it->ev.args = args;
    it->ev.pos = (sc_pos){0, 0};
}

void sw_menu_build(const sc_scenario *sc, sw_menu *m)
{
    memset(m, 0, sizeof *m);
    char worker[64];
    if (sc->cluster.workers > 0)
        snprintf(worker, sizeof worker, "prod-worker-1");
    else
        snprintf(worker, sizeof worker, "prod-control-plane-1");
    const char *ns = sc->cluster.n_fanout ? sc->cluster.fanout_namespaces[0] : "kyverno";
    const char *const kv[][2] = {{"{worker}", worker}, {"{ns}", ns}, {"{desired}", sc->desired}};
    for (size_t i = 0; i < RS_ARRAY_LEN(builtin); i++) {
        char *text = fill(builtin[i].args, kv, RS_ARRAY_LEN(kv));
        cJSON *args = cJSON_Parse(text);
        free(text);
        menu_put(m, builtin[i].name, builtin[i].kind, args);
    }
    for (size_t i = 0; i < sc->n_perturb_menu; i++) {
        const sc_perturb *p = &sc->perturb_menu[i];
        menu_put(m, p->name, p->ev.kind, cJSON_Duplicate(p->ev.args, true));
        m->items[sw_menu_find(m, p->name)].ev.pos = p->ev.pos;
    }
}

void sw_menu_free(sw_menu *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->items[i].name);
        free(m->items[i].ev.kind);
        cJSON_Delete(m->items[i].ev.args);
    }
    free(m->items);
    memset(m, 0, sizeof *m);
}

long sw_menu_find(const sw_menu *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->items[i].name, name) == 0) return (long)i;
    return -1;
}
