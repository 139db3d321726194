/*
 * node_inventory.c — parsing and validating a Node inventory.
 *
 * A node with an empty or duplicate UID, or without exactly one unique
 * InternalIP, makes the whole inventory invalid: identity revalidation before
 * every Talos mutation depends on (name, UID, InternalIP) meaning one machine.
 */
#include "core/node/node.h"
#include "core/txn_int.h"

#include "core/cred/cred.h"
#include "core/rs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void node_inventory_free(node_inventory *inv)
{
    for (size_t i = 0; i < inv->n; i++)
        free(inv->nodes[i].taints);
    free(inv->nodes);
    cJSON_Delete(inv->list);
    memset(inv, 0, sizeof *inv);
}

char *node_taints_signature(const cJSON *node)
{
    const cJSON *taints =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "spec"), "taints");
    cJSON *keep = cJSON_CreateArray();
    const cJSON *t;
    cJSON_ArrayForEach(t, taints)
    {
        const cJSON *key = cJSON_GetObjectItemCaseSensitive(t, "key");
        /* Lifecycle taints come and go with readiness; the autoscaler's
         * advisory DeletionCandidateOfClusterAutoscaler (PreferNoSchedule)
         * churns every few seconds and changes no scheduling safety (H93,
         * decided in DESIGN r2 §3.3). ToBeDeletedByClusterAutoscaler does. */
        if (cJSON_IsString(key) &&
            (strncmp(key->valuestring, "node.kubernetes.io/", 19) == 0 ||
             strcmp(key->valuestring, "DeletionCandidateOfClusterAutoscaler") == 0))
            continue;
        cJSON_AddItemToArray(keep, cJSON_Duplicate(t, 1));
    }
    char *sig = json_canonical(keep);
    cJSON_Delete(keep);
    return sig;
}

/* Exactly one unique InternalIP. */
static bool node_internal_ip(const cJSON *node, char *ip, size_t len)
{
    const cJSON *addrs = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(node, "status"), "addresses");
    const cJSON *a;
    int count = 0;
    cJSON_ArrayForEach(a, addrs)
    {
        const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "type"));
        const char *addr = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "address"));
        if (!type || strcmp(type, "InternalIP") != 0 || !addr || !addr[0]) continue;
        if (count == 0 || strcmp(ip, addr) != 0) count++;
        snprintf(ip, len, "%s", addr);
    }
    return count == 1;
}

static rs_code node_fill(const cJSON *item, const rs_config_ann *ann, node_info *n, rs_err *e)
{
    const char *name = kobj_str(item, "metadata.name");
    const char *uid = kobj_str(item, "metadata.uid");
    if (!name || !name[0]) {
        return rs_fail(e, RS_FAILED, "a Node without a name");
    }
    snprintf(n->name, sizeof n->name, "%s", name);
    if (!uid || !uid[0]) {
        return rs_fail(e, RS_FAILED, "Node %s has no UID", name);
    }
    snprintf(n->uid, sizeof n->uid, "%s", uid);
    if (!node_internal_ip(item, n->ip, sizeof n->ip)) {
        return rs_fail(e, RS_FAILED, "Node %s does not have exactly one unique InternalIP", name);
    }
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(item, "metadata"), "labels");
    n->control_plane = cJSON_HasObjectItem(labels, "node-role.kubernetes.io/control-plane");
    n->unschedulable = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(item, "spec"), "unschedulable"));
    n->ready = kobj_condition_true(item, "Ready");
    n->revision = kobj_annotation(item, ann->revision);
    n->image = kobj_annotation(item, ann->image);
    n->owner = kobj_annotation(item, ann->drain_owner);
    n->phase = kobj_annotation(item, ann->drain_phase);
    n->journal = kobj_annotation(item, ann->drain_journal) != NULL;
    const char *rv = kobj_str(item, "metadata.resourceVersion");
    snprintf(n->rv, sizeof n->rv, "%s", rv ? rv : "");
    n->taints = node_taints_signature(item);
    return RS_OK;
}

rs_code node_inventory_parse(cJSON *list, const rs_config_ann *ann, node_inventory *inv, rs_err *e)
{
    memset(inv, 0, sizeof *inv);
    inv->list = list;
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
    int count = cJSON_GetArraySize(items);
    inv->nodes = rs_xcalloc((size_t)count, sizeof *inv->nodes);
    const cJSON *item;
    cJSON_ArrayForEach(item, items)
    {
        node_info *n = &inv->nodes[inv->n];
        if (node_fill(item, ann, n, e) != RS_OK) {
            free(n->taints);
            return RS_FAILED;
        }
        inv->n++;
        for (size_t j = 0; j + 1 < inv->n; j++) {
            if (strcmp(inv->nodes[j].uid, n->uid) == 0) {
                return rs_fail(e, RS_FAILED, "Nodes %s and %s share UID %s", inv->nodes[j].name,
                               n->name, n->uid);
            }
            if (strcmp(inv->nodes[j].ip, n->ip) == 0) {
                return rs_fail(e, RS_FAILED, "Nodes %s and %s share InternalIP %s",
                               inv->nodes[j].name, n->name, n->ip);
            }
        }
    }
    return RS_OK;
}

static int node_order(const void *a, const void *b)
{
    const node_info *x = a, *y = b;
    if (x->control_plane != y->control_plane) return x->control_plane ? 1 : -1;
    return strcmp(x->name, y->name);
}

void node_inventory_sort(node_inventory *inv)
{
    qsort(inv->nodes, inv->n, sizeof *inv->nodes, node_order);
}
