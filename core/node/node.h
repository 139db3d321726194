/*
 * node.h — the Talos pass's view of a node (internal to core/).
 */
#ifndef RS_NODE_H
#define RS_NODE_H

#include "core/config.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#define NODE_NAME_MAX 254
#define NODE_UID_MAX 128

typedef enum node_mode { NODE_OK = 0, NODE_PROOF_ONLY, NODE_IMAGE_ONLY, NODE_REBOOT } node_mode;

typedef struct node_info {
    char name[NODE_NAME_MAX];
    char uid[NODE_UID_MAX];
    char ip[64];
    bool control_plane;
    bool unschedulable;
    bool ready;
    const char *revision; /* borrowed from the inventory's JSON */
    const char *image;
    const char *owner;
    const char *phase;
    bool journal;
    char rv[32];
    char *taints; /* canonical JSON of the non-lifecycle taints (owned) */
} node_info;

typedef struct node_inventory {
    cJSON *list; /* owns the strings node_info borrows */
    node_info *nodes;
    size_t n;
} node_inventory;

void node_inventory_free(node_inventory *inv);
/* Parses a NodeList; validates unique non-empty UIDs and exactly one unique
 * InternalIP per node; reads the claim and marker annotations named
 * by ann. RS_FAILED with a sentence in e. */
rs_code node_inventory_parse(cJSON *list, const rs_config_ann *ann, node_inventory *inv, rs_err *e);
/* The canonical JSON of a Node's taints other than lifecycle ones
 * (node.kubernetes.io/...). Caller frees. */
char *node_taints_signature(const cJSON *node);
/* Workers first, then control planes, each in bytewise name order. */
void node_inventory_sort(node_inventory *inv);

#endif
