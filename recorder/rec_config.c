/*
 * rec_config.c — the core's configuration as a cassette keeps it.
 *
 * A strict replay must hand the core exactly the configuration the recorded
 * run had (fan-out namespaces, the Lease's name, timeouts), whichever way it
 * came (a sim world, `--config`, the defaults), so the cassette stores the
 * resolved values rather than where they came from.
 */
#include "recorder/rec_config.h"

#include "core/live/live_config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RC_STR_(x) #x
#define RC_STR(x) RC_STR_(x)
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

static rs_code rc_bad(rs_err *e, const char *path, const char *field, const char *why)
{
    return rs_fail(e, RS_DATAERR, "cassette %s: meta config field %s: %s", path, field, why);
}

/* The cassette's name of the field at offset off of rs_config. */
static const char *rc_field_name(size_t off)
{
    for (size_t i = 0; i < RS_ARRAY_LEN(rec_strs); i++)
        if (rec_strs[i].off == off) return rec_strs[i].name;
    for (size_t i = 0; i < RS_ARRAY_LEN(rec_ints); i++)
        if (rec_ints[i].off == off) return rec_ints[i].name;
    for (size_t i = 0; i < RS_ARRAY_LEN(rec_lists); i++)
        if (rec_lists[i].off == off) return rec_lists[i].name;
    return off == offsetof(rs_config, drain_timeout_ms) ? "drain_timeout_ms" : "talos_auth_shape";
}

static bool rc_known(const char *name)
{
    static const char *const others[] = {"drain_timeout_ms", "talos_auth_shape", "ann"};
    for (size_t i = 0; i < RS_ARRAY_LEN(rec_strs); i++)
        if (strcmp(rec_strs[i].name, name) == 0) return true;
    for (size_t i = 0; i < RS_ARRAY_LEN(rec_ints); i++)
        if (strcmp(rec_ints[i].name, name) == 0) return true;
    for (size_t i = 0; i < RS_ARRAY_LEN(rec_lists); i++)
        if (strcmp(rec_lists[i].name, name) == 0) return true;
    for (size_t i = 0; i < RS_ARRAY_LEN(others); i++)
        if (strcmp(others[i], name) == 0) return true;
    return false;
}

/* An integer the JSON holds exactly, else -1 (which every integer rule of
 * live_config_check refuses). */
static int rc_int(const cJSON *v)
{
    if (!cJSON_IsNumber(v) || v->valuedouble != (double)(int64_t)v->valuedouble ||
        v->valuedouble < -1 || v->valuedouble > 2147483647.0)
        return -1;
    return (int)v->valuedouble;
}

static rs_code rc_lists(const cJSON *o, rs_config *cfg, const char *path, rs_err *e)
{
    char *base = (char *)cfg;
    for (size_t i = 0; i < RS_ARRAY_LEN(rec_lists); i++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, rec_lists[i].name);
        if (!a) continue;
        if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) > RS_CONFIG_LIST_MAX)
            return rc_bad(e, path, rec_lists[i].name,
                          "expected a list of at most " RC_STR(RS_CONFIG_LIST_MAX) " strings");
        const char *vals[RS_CONFIG_LIST_MAX];
        size_t n = 0;
        const cJSON *it;
        cJSON_ArrayForEach(it, a)
        {
            if (!cJSON_IsString(it))
                return rc_bad(e, path, rec_lists[i].name, "expected a non-empty string");
            vals[n++] = it->valuestring;
        }
        rs_config_set_list((char **)(base + rec_lists[i].off),
                           (size_t *)(base + rec_lists[i].n_off), vals, n);
    }
    return RS_OK;
}

rs_code rec_config_load(const cJSON *o, rs_config *cfg, const char *path, rs_err *e)
{
    rs_config_defaults(cfg);
    if (!cJSON_IsObject(o))
        return rs_fail(e, RS_DATAERR, "cassette %s: meta config is not a JSON object", path);
    const cJSON *it;
    cJSON_ArrayForEach(it, o)
    {
        if (!rc_known(it->string)) return rc_bad(e, path, it->string, "no such field");
    }
    char *base = (char *)cfg;
    for (size_t i = 0; i < RS_ARRAY_LEN(rec_strs); i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, rec_strs[i].name);
        if (v && !cJSON_IsString(v)) return rc_bad(e, path, rec_strs[i].name, "expected a string");
        if (v) rs_config_set_str((char **)(base + rec_strs[i].off), v->valuestring);
    }
    for (size_t i = 0; i < RS_ARRAY_LEN(rec_ints); i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, rec_ints[i].name);
        if (v) *(int *)(base + rec_ints[i].off) = rc_int(v);
    }
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(o, "drain_timeout_ms");
    if (dt)
        cfg->drain_timeout_ms = cJSON_IsNumber(dt) &&
                                        dt->valuedouble == (double)(int64_t)dt->valuedouble &&
                                        dt->valuedouble > 0 && dt->valuedouble < 9.2e18
                                    ? (int64_t)dt->valuedouble
                                    : 0;
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(o, "talos_auth_shape");
    if (shape) {
        const char *t = cJSON_GetStringValue(shape);
        /* Stored as int: an unknown shape is -1, never an out-of-range enum. */
        *(int *)&cfg->talos_auth_shape = !t                           ? -1
                                         : strcmp(t, "legacy") == 0   ? (int)RS_TALOS_AUTH_LEGACY
                                         : strcmp(t, "document") == 0 ? (int)RS_TALOS_AUTH_DOCUMENT
                                                                      : -1;
    }
    if (rc_lists(o, cfg, path, e) != RS_OK) return e->code;
    /* Exactly the rules a --config file obeys (never a second copy). */
    size_t off = 0;
    const char *key = NULL;
    char why[240];
    if (!live_config_check(cfg, &off, &key, why, sizeof why)) {
        char field[160];
        snprintf(field, sizeof field, "%s (--config %s)", rc_field_name(off), key);
        return rc_bad(e, path, field, why);
    }
    /* The annotation names point into o, which the caller keeps. */
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(o, "ann");
    if (ann && !cJSON_IsObject(ann)) return rc_bad(e, path, "ann", "expected an object");
    char *abase = (char *)&cfg->ann;
    for (size_t i = 0; i < RS_ARRAY_LEN(rec_anns); i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(ann, rec_anns[i].name);
        if (v && (!cJSON_IsString(v) || !v->valuestring[0]))
            return rc_bad(e, path, "ann", "expected non-empty annotation names");
        if (v) *(const char **)(abase + rec_anns[i].off) = v->valuestring;
    }
    return RS_OK;
}
