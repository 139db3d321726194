/*
 * jsonpointer.c — RFC 6901 pointers over cJSON documents.
 */
#include "sim/store/jsonpatch.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Decodes one reference token ("~1" => "/", "~0" => "~") into buf. Returns
 * false on a malformed escape. */
static bool token_decode(const char *start, size_t len, char *buf, size_t buflen)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (o + 1 >= buflen) return false;
        if (start[i] == '~') {
            if (i + 1 >= len) return false;
            if (start[i + 1] == '0')
                buf[o++] = '~';
            else if (start[i + 1] == '1')
                buf[o++] = '/';
            else
                return false;
            i++;
        } else {
            buf[o++] = start[i];
        }
    }
    buf[o] = '\0';
    return true;
}

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
        if (!token_decode(p, len, tok, sizeof tok)) return NULL;
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
