/*
 * jsonpointer.c — RFC 6901 pointers over cJSON documents.
 */
#include "core/kube/kube_pointer.h"
#include "sim/store/jsonpatch.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

cJSON *jsonpointer_get(const cJSON *doc, const char *pointer)
{
    if (!doc || !pointer) return NULL;
    if (pointer[0] == '\0') return (cJSON *)doc;
    if (pointer[0] != '/') return NULL;
    const cJSON *cur = doc;
    const char *p = pointer + 1;
    char tok[1024];
    for (;;) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (!kube_pointer_token_decode(p, len, tok, sizeof tok)) return NULL;
        if (cJSON_IsObject(cur)) {
            cur = cJSON_GetObjectItemCaseSensitive(cur, tok);
        } else if (cJSON_IsArray(cur)) {
            char *end = NULL;
            if (tok[0] == '\0' || (tok[0] == '0' && tok[1] != '\0')) return NULL;
            long idx = strtol(tok, &end, 10);
            if (*end != '\0' || idx < 0) return NULL;
            cur = cJSON_GetArrayItem(cur, (int)idx);
        } else {
            return NULL;
        }
        if (!cur) return NULL;
        if (!slash) return (cJSON *)cur;
        p = slash + 1;
    }
}
