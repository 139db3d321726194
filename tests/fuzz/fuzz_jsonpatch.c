/*
 * fuzz_jsonpatch.c — RFC 6902 JSON Patch and RFC 7386 merge patch
 * (sim/store/jsonpatch.c, jsonpointer.c) on arbitrary input.
 *
 * fuzz-seeds: none
 *
 * The input is one JSON text, an array [document, patch]; anything else is
 * uninteresting and ignored. Properties beyond "no crash, leak, sanitizer
 * report or hang":
 * - a JSON Patch that fails leaves the document exactly as it was (atomic);
 * - a failure comes with an error sentence;
 * - a merge patch is idempotent: applying it twice gives what applying it
 *   once gave (checked when the text has no duplicate keys, which the
 *   store's objects never have);
 * - every `path`/`from` of the patch resolves without harm (RFC 6901).
 */
#include "core/cred/cred.h"
#include "sim/store/jsonpatch.h"
#include "tests/fuzz/fuzz_support.h"

static bool fz_same(const cJSON *a, const cJSON *b)
{
    char *x = cJSON_PrintUnformatted(a), *y = cJSON_PrintUnformatted(b);
    bool same = x && y && strcmp(x, y) == 0;
    cJSON_free(x);
    cJSON_free(y);
    return same;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *in = cJSON_ParseWithLength((const char *)data, size);
    if (!cJSON_IsArray(in) || cJSON_GetArraySize(in) != 2) {
        cJSON_Delete(in);
        return 0;
    }
    const cJSON *doc0 = cJSON_GetArrayItem(in, 0), *patch = cJSON_GetArrayItem(in, 1);

    /* JSON Patch. */
    cJSON *doc = cJSON_Duplicate(doc0, true);
    char err[512] = "";
    jp_result r = jsonpatch_apply(&doc, patch, err, sizeof err);
    FUZZ_CHECK(r == JP_OK || r == JP_TEST_FAILED || r == JP_INVALID, "result %d", (int)r);
    if (r != JP_OK) {
        FUZZ_CHECK(fz_same(doc, doc0), "a failed patch changed the document (%s)", err);
        FUZZ_CHECK(err[0] != '\0', "a failed patch without an error sentence");
    }
    const cJSON *op = NULL;
    const cJSON *ops = cJSON_IsArray(patch) ? patch : NULL;
    cJSON_ArrayForEach(op, ops)
    {
        const char *keys[] = {"path", "from"};
        for (size_t k = 0; k < 2; k++) {
            const cJSON *p = cJSON_GetObjectItemCaseSensitive(op, keys[k]);
            if (cJSON_IsString(p)) (void)jsonpointer_get(doc, p->valuestring);
        }
    }
    cJSON_Delete(doc);

    /* Merge patch. */
    rs_err e = {0};
    bool unique_keys = json_strict_check((const char *)data, size, &e);
    cJSON *once = mergepatch_apply(cJSON_Duplicate(doc0, true), patch);
    if (unique_keys) {
        cJSON *twice = mergepatch_apply(cJSON_Duplicate(once, true), patch);
        FUZZ_CHECK(fz_same(once, twice), "merge patch is not idempotent");
        cJSON_Delete(twice);
    }
    cJSON_Delete(once);
    cJSON_Delete(in);
    return 0;
}
