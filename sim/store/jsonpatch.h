/*
 * jsonpatch.h — RFC 6902 JSON Patch and RFC 7386 JSON Merge Patch on cJSON.
 *
 * Hand-written because Debian's cJSON ships without cJSON_Utils. The store
 * applies patches exactly as the Kubernetes API server does: a failed `test`
 * is 422 Invalid, a malformed patch is 400/422, and a patch is atomic (on
 * any error the document is left unchanged).
 */
#ifndef SIM_JSONPATCH_H
#define SIM_JSONPATCH_H

#include <cjson/cJSON.h>
#include <stddef.h>

typedef enum jp_result {
    JP_OK = 0,
    JP_TEST_FAILED = 1, /* a `test` op did not match: the API server answers 422 */
    JP_INVALID = 2,     /* malformed patch, bad pointer, missing path: 422 (or 400) */
    JP_TOO_LARGE = 3,   /* more operations than the API server takes: 413 */
} jp_result;

/* The API server's bounds on one JSON Patch: at most JP_OPS_MAX operations
 * (413), at most JP_COPY_BYTES_MAX bytes copied by `copy` in total (its
 * JSONPatchMaxCopyBytes; 422). JP_DEPTH_MAX: no operation may put a value
 * deeper than this many nested containers (422), so a stored object can
 * always be parsed again (cJSON's own nesting limit is 1000). */
#define JP_OPS_MAX 10000
#define JP_COPY_BYTES_MAX (3L * 1024 * 1024)
#define JP_DEPTH_MAX 1000

/*
 * Applies an RFC 6902 patch (a JSON array of operations) to *doc. On success
 * *doc may be replaced (a patch at the root path ""); on any failure *doc is
 * unchanged and err (if non-NULL) holds a sentence naming the operation index
 * and path.
 */
jp_result jsonpatch_apply(cJSON **doc, const cJSON *patch, char *err, size_t errlen);

/* RFC 7386 merge patch: returns the new document (target is consumed). */
cJSON *mergepatch_apply(cJSON *target, const cJSON *patch);

/* Resolves an RFC 6901 pointer ("/spec/suspend", "~0", "~1" escapes).
 * Returns a borrowed node or NULL. "" is the whole document. */
cJSON *jsonpointer_get(const cJSON *doc, const char *pointer);

#endif
