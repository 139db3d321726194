/*
 * kube_pointer.c — RFC 6901 reference-token escaping (see kube_pointer.h).
 */
#include "core/kube/kube_pointer.h"

#include "core/rs.h"

#include <string.h>

char *kube_pointer_join(const char *prefix, const char *key)
{
    size_t np = strlen(prefix), nk = strlen(key);
    char *p = rs_xmalloc(np + 2 * nk + 1);
    memcpy(p, prefix, np);
    char *o = p + np;
    for (size_t i = 0; i < nk; i++) {
        if (key[i] == '~' || key[i] == '/') {
            *o++ = '~';
            *o++ = key[i] == '~' ? '0' : '1';
        } else {
            *o++ = key[i];
        }
    }
    *o = '\0';
    return p;
}

char *kube_pointer_annotation(const char *key)
{
    return kube_pointer_join("/metadata/annotations/", key);
}

bool kube_pointer_token_decode(const char *token, size_t len, char *buf, size_t buflen)
{
    if (buflen == 0) return false;
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (o + 1 >= buflen) return false;
        if (token[i] != '~') {
            buf[o++] = token[i];
            continue;
        }
        if (i + 1 >= len || (token[i + 1] != '0' && token[i + 1] != '1')) return false;
        buf[o++] = token[i + 1] == '0' ? '~' : '/';
        i++;
    }
    buf[o] = '\0';
    return true;
}
