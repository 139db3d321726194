/*
 * world_util.c — small pure helpers the world's files share: RFC 3339 of virtual time, docker
 * config text, object references, JSON lookups, Kubernetes conditions and the seeded PRNG.
 *
 * Nothing here touches the database or the clock; every function is a pure
 * function of its arguments, which is what keeps the world deterministic.
 */
#include "sim/world/world_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void simw_rfc3339(int64_t wall_ms, char out[32])
{
    time_t t = (time_t)(wall_ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

char *simw_dockerconfig(const char *username, const char *password)
{
    char *pair = rs_xasprintf("%s:%s", username, password);
    char *auth = base64_encode(pair, strlen(pair));
    free(pair);
    cJSON *root = cJSON_CreateObject();
    cJSON *entry = cJSON_AddObjectToObject(cJSON_AddObjectToObject(root, "auths"), "ghcr.io");
    cJSON_AddStringToObject(entry, "username", username);
    cJSON_AddStringToObject(entry, "password", password);
    cJSON_AddStringToObject(entry, "auth", auth);
    free(auth);
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return text;
}

/* username/password fields win; else the base64 "user:pass" auth field. */
bool simw_dockerconfig_auth(const char *text, char **username, char **password)
{
    *username = *password = NULL;
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    cJSON *auths = cJSON_GetObjectItemCaseSensitive(root, "auths");
    cJSON *entry = cJSON_GetObjectItemCaseSensitive(auths, "ghcr.io");
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(entry, "username");
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(entry, "password");
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(entry, "auth");
    if (cJSON_IsString(u) && cJSON_IsString(p) && u->valuestring[0] && p->valuestring[0]) {
        *username = rs_xstrdup(u->valuestring);
        *password = rs_xstrdup(p->valuestring);
    } else if (cJSON_IsString(a)) {
        size_t n = 0;
        unsigned char *raw = base64_decode(a->valuestring, &n);
        char *colon = raw ? memchr(raw, ':', n) : NULL;
        if (colon && colon != (char *)raw && colon[1]) {
            *colon = '\0';
            *username = rs_xstrdup((char *)raw);
            *password = rs_xstrdup(colon + 1);
        }
        free(raw);
    }
    cJSON_Delete(root);
    return *username != NULL;
}

static bool ref_part(const char *start, size_t len, char out[SIMW_NAME_MAX])
{
    if (len == 0 || len >= SIMW_NAME_MAX) return false;
    memcpy(out, start, len);
    out[len] = '\0';
    return true;
}

bool simw_ref_parse(const char *ref, char kind[SIMW_NAME_MAX], char ns[SIMW_NAME_MAX],
                    char name[SIMW_NAME_MAX])
{
    if (!ref) return false;
    const char *s1 = strchr(ref, '/');
    if (!s1) return false;
    const char *s2 = strchr(s1 + 1, '/');
    if (!ref_part(ref, (size_t)(s1 - ref), kind)) return false;
    if (!s2) {
        ns[0] = '\0';
        return ref_part(s1 + 1, strlen(s1 + 1), name);
    }
    if (strchr(s2 + 1, '/')) return false;
    return ref_part(s1 + 1, (size_t)(s2 - s1 - 1), ns) && ref_part(s2 + 1, strlen(s2 + 1), name);
}

const char *simw_json_str(const cJSON *obj, const char *const *path, size_t depth)
{
    const cJSON *cur = obj;
    for (size_t i = 0; i < depth && cur; i++)
        cur = cJSON_GetObjectItemCaseSensitive(cur, path[i]);
    return cJSON_IsString(cur) ? cur->valuestring : NULL;
}

const char *simw_annotation(const cJSON *obj, const char *key)
{
    const char *path[] = {"metadata", "annotations", key};
    return simw_json_str(obj, path, 3);
}

const char *simw_label(const cJSON *obj, const char *key)
{
    const char *path[] = {"metadata", "labels", key};
    return simw_json_str(obj, path, 3);
}

cJSON *simw_condition(const char *type, const char *status, const char *reason, const char *message,
                      int64_t wall_ms)
{
    char ts[32];
    simw_rfc3339(wall_ms, ts);
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "type", type);
    cJSON_AddStringToObject(c, "status", status);
    cJSON_AddStringToObject(c, "reason", reason);
    cJSON_AddStringToObject(c, "message", message);
    cJSON_AddStringToObject(c, "lastTransitionTime", ts);
    return c;
}

const char *simw_condition_status(const cJSON *obj, const char *type)
{
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(obj, "status");
    const cJSON *conds = cJSON_GetObjectItemCaseSensitive(status, "conditions");
    const cJSON *c;
    cJSON_ArrayForEach(c, conds)
    {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "type");
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(c, "status");
        if (cJSON_IsString(t) && strcmp(t->valuestring, type) == 0 && cJSON_IsString(s))
            return s->valuestring;
    }
    return NULL;
}

/* splitmix64 (Steele, Lea, Flood 2014): tiny state that fits one meta row. */
uint64_t simw_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
