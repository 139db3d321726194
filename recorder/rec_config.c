/*
 * rec_config.c — the core's configuration as a cassette keeps it.
 *
 * A strict replay must hand the core exactly the configuration the recorded
 * run had (fan-out namespaces, the Lease's name, timeouts), whichever way it
 * came (a sim world, `--config`, the defaults), so the cassette stores the
 * resolved values rather than where they came from.
 */
#include "recorder/rec_config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define REC_F(name)                                                                                \
    {                                                                                              \
#name, offsetof(rs_config, name)                                                           \
    }
typedef struct rec_field {
    const char *name;
    size_t off;
} rec_field;

static const rec_field rec_strs[] = {REC_F(lease_ns),
                                     REC_F(lease_name),
                                     REC_F(parent_ns),
                                     REC_F(parent_name),
                                     REC_F(child_ns),
                                     REC_F(child_name),
                                     REC_F(controller_ns),
                                     REC_F(controller_name),
                                     REC_F(controller_selector),
                                     REC_F(operator_image),
                                     REC_F(registry_host),
                                     REC_F(openbao_mount),
                                     REC_F(openbao_path),
                                     REC_F(openbao_property),
                                     REC_F(variables_ns),
                                     REC_F(variables_name),
                                     REC_F(variables_key),
                                     REC_F(pushsecret_ns),
                                     REC_F(pushsecret_name),
                                     REC_F(externalsecret_name),
                                     REC_F(consumer_name),
                                     REC_F(consumer_key),
                                     REC_F(root_ns),
                                     REC_F(root_name),
                                     REC_F(root_key)};
static const rec_field rec_ints[] = {REC_F(lease_duration_s),     REC_F(lease_heartbeat_s),
                                     REC_F(rollout_timeout_s),    REC_F(sync_attempts),
                                     REC_F(talos_attempts),       REC_F(sync_interval_ms),
                                     REC_F(transport_parallelism)};
#define REC_A(name)                                                                                \
    {                                                                                              \
#name, offsetof(rs_config_ann, name)                                                       \
    }
static const rec_field rec_anns[] = {
    REC_A(revision),     REC_A(image),        REC_A(drain_owner),  REC_A(drain_journal),
    REC_A(drain_phase),  REC_A(parent_owner), REC_A(child_owner),  REC_A(reconcile),
    REC_A(restarted_at), REC_A(force_sync),   REC_A(requested_at), REC_A(config_mirror)};

typedef struct rec_list {
    const char *name;
    size_t off, n_off;
} rec_list;
static const rec_list rec_lists[] = {
    {"fanout_namespaces", offsetof(rs_config, fanout_namespaces), offsetof(rs_config, n_fanout)},
    {"lifecycle_taints", offsetof(rs_config, lifecycle_taints),
     offsetof(rs_config, n_lifecycle_taints)},
    {"pull_targets", offsetof(rs_config, pull_targets), offsetof(rs_config, n_pull_targets)}};

cJSON *rec_config_json(const rs_config *cfg)
{
    const char *base = (const char *)cfg;
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; i < RS_ARRAY_LEN(rec_strs); i++) {
        const char *v = *(char *const *)(base + rec_strs[i].off);
        if (v) cJSON_AddStringToObject(o, rec_strs[i].name, v);
    }
    for (size_t i = 0; i < RS_ARRAY_LEN(rec_ints); i++)
        cJSON_AddNumberToObject(o, rec_ints[i].name, *(const int *)(base + rec_ints[i].off));
    cJSON_AddNumberToObject(o, "drain_timeout_ms", (double)cfg->drain_timeout_ms);
    cJSON_AddStringToObject(o, "talos_auth_shape",
                            cfg->talos_auth_shape == RS_TALOS_AUTH_LEGACY ? "legacy" : "document");
    for (size_t i = 0; i < RS_ARRAY_LEN(rec_lists); i++) {
        char *const *list = (char *const *)(base + rec_lists[i].off);
        size_t n = *(const size_t *)(base + rec_lists[i].n_off);
        cJSON *a = cJSON_AddArrayToObject(o, rec_lists[i].name);
        for (size_t k = 0; k < n; k++)
            cJSON_AddItemToArray(a, cJSON_CreateString(list[k]));
    }
    cJSON *ann = cJSON_AddObjectToObject(o, "ann");
    const char *abase = (const char *)&cfg->ann;
    for (size_t i = 0; i < RS_ARRAY_LEN(rec_anns); i++) {
        const char *v = *(const char *const *)(abase + rec_anns[i].off);
        if (v) cJSON_AddStringToObject(ann, rec_anns[i].name, v);
    }
    return o;
}

rs_code rec_config_load(const cJSON *o, rs_config *cfg, const char *path, rs_err *e)
{
    rs_config_defaults(cfg);
    if (!cJSON_IsObject(o))
        return rs_fail(e, RS_DATAERR, "cassette %s: meta config is not a JSON object", path);
    char *base = (char *)cfg;
    for (size_t i = 0; i < RS_ARRAY_LEN(rec_strs); i++) {
        const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, rec_strs[i].name));
        if (v) rs_config_set_str((char **)(base + rec_strs[i].off), v);
    }
    for (size_t i = 0; i < RS_ARRAY_LEN(rec_ints); i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, rec_ints[i].name);
        if (cJSON_IsNumber(v)) *(int *)(base + rec_ints[i].off) = v->valueint;
    }
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(o, "drain_timeout_ms");
    if (cJSON_IsNumber(dt)) cfg->drain_timeout_ms = (int64_t)dt->valuedouble;
    const char *shape =
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "talos_auth_shape"));
    if (shape && strcmp(shape, "legacy") == 0) cfg->talos_auth_shape = RS_TALOS_AUTH_LEGACY;
    for (size_t i = 0; i < RS_ARRAY_LEN(rec_lists); i++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, rec_lists[i].name);
        if (!cJSON_IsArray(a)) continue;
        const char *vals[RS_CONFIG_LIST_MAX];
        size_t n = 0;
        const cJSON *it;
        cJSON_ArrayForEach(it, a) if (cJSON_IsString(it) && n < RS_CONFIG_LIST_MAX) vals[n++] =
            it->valuestring;
        rs_config_set_list((char **)(base + rec_lists[i].off),
                           (size_t *)(base + rec_lists[i].n_off), vals, n);
    }
    /* The annotation names point into o, which the caller keeps. */
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(o, "ann");
    char *abase = (char *)&cfg->ann;
    for (size_t i = 0; i < RS_ARRAY_LEN(rec_anns); i++) {
        const char *v =
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ann, rec_anns[i].name));
        if (v) *(const char **)(abase + rec_anns[i].off) = v;
    }
    return RS_OK;
}
