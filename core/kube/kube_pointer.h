/*
 * kube_pointer.h — the one RFC 6901 JSON-pointer escaper and decoder.
 *
 * Annotation keys carry '/' ("kubectl.kubernetes.io/restartedAt"), so a JSON
 * Patch path built from one must escape it ("~1"), and '~' first ("~0"), or
 * the patch addresses a different (nested, absent) member and fails — or, in
 * a `test` op, silently tests the wrong thing. Every path built from a key,
 * in core/ and in the sim's patch engine, goes through these functions.
 */
#ifndef RS_KUBE_POINTER_H
#define RS_KUBE_POINTER_H

#include <stdbool.h>
#include <stddef.h>

/* prefix followed by one escaped reference token for key ("~" => "~0",
 * "/" => "~1"), e.g. kube_pointer_join("/metadata/annotations/", "a/b") =>
 * "/metadata/annotations/a~1b". Caller frees. */
char *kube_pointer_join(const char *prefix, const char *key);

/* "/metadata/annotations/<escaped key>". Caller frees. */
char *kube_pointer_annotation(const char *key);

/* Decodes one reference token of len bytes ("~1" => "/", "~0" => "~") into
 * buf (NUL-terminated). False on a malformed escape ("~" not followed by 0 or
 * 1) or when the decoded token does not fit in buflen. */
bool kube_pointer_token_decode(const char *token, size_t len, char *buf, size_t buflen);

#endif
