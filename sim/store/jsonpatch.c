/*
 * jsonpatch.c — RFC 6902 JSON Patch and RFC 7386 JSON Merge Patch on cJSON.
 *
 * The one idea: a JSON Patch is applied to a private copy of the document and
 * the copy replaces *doc only when every operation succeeded, so a patch that
 * fails half way (a `test` guarding a compare-and-swap, a bad path) can never
 * leave the fake cluster holding a half-applied object — the API server is
 * atomic per request and the core's fences rely on that.
 *
 * Equality for `test` is cJSON_Compare, which looks object members up by name
 * (order-insensitive) and compares numbers by value, as RFC 6902 §4.6 asks.
 * Both algorithms are iterative: nesting depth comes from untrusted patches.
 */
#include "sim/store/jsonpatch.h"

#include "core/kube/kube_pointer.h"
#include "core/rs.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A decoded reference token longer than this cannot name a Kubernetes field. */
#define JP_TOKEN_MAX 1024

/* One operation being applied: what an error sentence needs to name. */
typedef struct jp_op {
    int index;
    const char *op;
    const char *path;
    char *err;
    size_t errlen;
    long copied; /* bytes copied by `copy` so far in this patch */
} jp_op;

static jp_result jp_fail(const jp_op *o, jp_result r, const char *what)
{
    if (o->err && o->errlen) /* The path is the client's and may be long: the reason must fit. */
        snprintf(o->err, o->errlen, "JSON patch operation %d (%.16s) at path \"%.128s\": %s.",
                 o->index, o->op ? o->op : "?", o->path ? o->path : "", what);
    return r;
}

/* Parses an array index token: digits without a leading zero, within int. */
static bool jp_index_parse(const char *tok, int *out)
{
    size_t len = strlen(tok);
    if (len == 0 || len > 9 || (tok[0] == '0' && len > 1)) return false;
    int v = 0;
    for (size_t i = 0; i < len; i++) {
        if (tok[i] < '0' || tok[i] > '9') return false;
        v = v * 10 + (tok[i] - '0');
    }
    *out = v;
    return true;
}

/* Splits a non-root pointer into its parent container (in doc) and its
 * decoded last token. Fails on a malformed pointer or a missing parent. */
static bool jp_locate(cJSON *doc, const char *path, cJSON **parent, char *tok, const char **why)
{
    if (path[0] != '/') {
        *why = "the path is not a JSON pointer (it must be empty or start with '/')";
        return false;
    }
    const char *slash = strrchr(path, '/');
    if (!kube_pointer_token_decode(slash + 1, strlen(slash + 1), tok, JP_TOKEN_MAX)) {
        *why = "the path has a malformed '~' escape or an over-long token";
        return false;
    }
    size_t plen = (size_t)(slash - path);
    char *ppath = rs_xmalloc(plen + 1);
    memcpy(ppath, path, plen);
    ppath[plen] = '\0';
    *parent = jsonpointer_get(doc, ppath);
    free(ppath);
    if (!*parent || !(cJSON_IsObject(*parent) || cJSON_IsArray(*parent))) {
        *why = "the parent of the path does not exist or is not a container";
        return false;
    }
    return true;
}

/* Debian's cJSON 1.7.15 (+deb12u4 security backports) refuses
 * cJSON_InsertItemInArray for every index but 0 (and leaks the item), so
 * insert by moving the tail aside and appending it back. */
static void jp_array_insert(cJSON *arr, int idx, int size, cJSON *value)
{
    cJSON *tail = cJSON_CreateArray();
    for (int i = idx; i < size; i++)
        cJSON_AddItemToArray(tail, cJSON_DetachItemFromArray(arr, idx));
    cJSON_AddItemToArray(arr, value);
    for (int i = idx; i < size; i++)
        cJSON_AddItemToArray(arr, cJSON_DetachItemFromArray(tail, 0));
    cJSON_Delete(tail);
}

/* A value's nesting (containers on its deepest branch: a scalar is 0, {} is
 * 1) and its size in bytes as compact JSON, roughly (every node counts at
 * least 2, so walking a value costs no more than its size). Iterative: the
 * value may come from an untrusted patch. */
static void jp_measure(const cJSON *v, int *depth, long *bytes)
{
    typedef struct frame {
        const cJSON *node;
        int level; /* containers from v down to node, node included */
    } frame;
    size_t cap = 64, n = 0;
    frame *stack = rs_xmalloc(cap * sizeof *stack);
    *depth = 0;
    *bytes = 0;
    stack[n++] = (frame){v, 1};
    while (n > 0) {
        frame f = stack[--n];
        const cJSON *x = f.node;
        long b = 2;
        if (x->string) b += (long)strlen(x->string) + 3;
        if (cJSON_IsString(x) && x->valuestring) b += (long)strlen(x->valuestring);
        if (cJSON_IsNumber(x)) b += 24;
        *bytes += b;
        if (!(cJSON_IsObject(x) || cJSON_IsArray(x))) continue;
        if (f.level > *depth) *depth = f.level;
        for (const cJSON *c = x->child; c; c = c->next) {
            if (n == cap) stack = rs_xrealloc(stack, (cap *= 2) * sizeof *stack);
            stack[n++] = (frame){c, f.level + 1};
        }
    }
    free(stack);
}

/* Tokens of a pointer: the nesting level its value lands on, under the root. */
static int jp_path_depth(const char *path)
{
    int d = 0;
    for (const char *p = path; *p; p++)
        d += *p == '/';
    return d;
}

/* Refuses a value that would sit deeper than JP_DEPTH_MAX at path. */
static jp_result jp_depth_check(const jp_op *o, const char *path, const cJSON *value)
{
    int depth = 0;
    long bytes = 0;
    jp_measure(value, &depth, &bytes);
    if (jp_path_depth(path) + depth > JP_DEPTH_MAX) {
        char why[96];
        snprintf(why, sizeof why, "the result would nest deeper than %d levels", JP_DEPTH_MAX);
        return jp_fail(o, JP_INVALID, why);
    }
    return JP_OK;
}

/* Adds value (consumed) at path; path "" replaces the whole document. */
static jp_result jp_add(const jp_op *o, cJSON **doc, const char *path, cJSON *value)
{
    if (jp_depth_check(o, path, value) != JP_OK) {
        cJSON_Delete(value);
        return JP_INVALID;
    }
    if (path[0] == '\0') {
        cJSON_Delete(*doc);
        *doc = value;
        return JP_OK;
    }
    cJSON *parent = NULL;
    char tok[JP_TOKEN_MAX];
    const char *why = NULL;
    if (!jp_locate(*doc, path, &parent, tok, &why)) {
        cJSON_Delete(value);
        return jp_fail(o, JP_INVALID, why);
    }
    if (cJSON_IsObject(parent)) {
        if (cJSON_GetObjectItemCaseSensitive(parent, tok))
            cJSON_ReplaceItemInObjectCaseSensitive(parent, tok, value);
        else
            cJSON_AddItemToObject(parent, tok, value);
        return JP_OK;
    }
    int size = cJSON_GetArraySize(parent);
    int idx = 0;
    if (strcmp(tok, "-") == 0)
        idx = size;
    else if (!jp_index_parse(tok, &idx) || idx > size) {
        cJSON_Delete(value);
        return jp_fail(o, JP_INVALID, "the array index is malformed or out of bounds");
    }
    jp_array_insert(parent, idx, size, value);
    return JP_OK;
}

/* Detaches the node at an existing non-root path; NULL when absent. */
static cJSON *jp_detach(const jp_op *o, cJSON *doc, const char *path, jp_result *r)
{
    cJSON *parent = NULL;
    char tok[JP_TOKEN_MAX];
    const char *why = NULL;
    if (!jp_locate(doc, path, &parent, tok, &why)) {
        *r = jp_fail(o, JP_INVALID, why);
        return NULL;
    }
    cJSON *got = NULL;
    if (cJSON_IsObject(parent)) {
        got = cJSON_DetachItemFromObjectCaseSensitive(parent, tok);
    } else {
        int idx = 0;
        if (jp_index_parse(tok, &idx) && idx < cJSON_GetArraySize(parent))
            got = cJSON_DetachItemFromArray(parent, idx);
    }
    if (!got) *r = jp_fail(o, JP_INVALID, "the path does not exist");
    return got;
}

static jp_result jp_remove(const jp_op *o, cJSON **doc, const char *path)
{
    if (path[0] == '\0') return jp_fail(o, JP_INVALID, "the whole document cannot be removed");
    jp_result r = JP_OK;
    cJSON *gone = jp_detach(o, *doc, path, &r);
    cJSON_Delete(gone);
    return r;
}

/* Replaces in place, so an object keeps its member order. */
static jp_result jp_replace(const jp_op *o, cJSON **doc, const char *path, const cJSON *value)
{
    if (path[0] == '\0') return jp_add(o, doc, path, cJSON_Duplicate(value, true));
    cJSON *parent = NULL;
    char tok[JP_TOKEN_MAX];
    const char *why = NULL;
    if (!jp_locate(*doc, path, &parent, tok, &why)) return jp_fail(o, JP_INVALID, why);
    if (jp_depth_check(o, path, value) != JP_OK) return JP_INVALID;
    if (cJSON_IsObject(parent)) {
        if (!cJSON_GetObjectItemCaseSensitive(parent, tok))
            return jp_fail(o, JP_INVALID, "the path does not exist");
        cJSON_ReplaceItemInObjectCaseSensitive(parent, tok, cJSON_Duplicate(value, true));
        return JP_OK;
    }
    int idx = 0;
    if (!jp_index_parse(tok, &idx) || idx >= cJSON_GetArraySize(parent))
        return jp_fail(o, JP_INVALID, "the path does not exist");
    cJSON_ReplaceItemInArray(parent, idx, cJSON_Duplicate(value, true));
    return JP_OK;
}

/* move: the source may not be a proper prefix of the target (RFC 6902 §4.4). */
static jp_result jp_move(const jp_op *o, cJSON **doc, const char *from, const char *path)
{
    size_t flen = strlen(from);
    if (strcmp(from, path) == 0) {
        if (jsonpointer_get(*doc, from)) return JP_OK;
        return jp_fail(o, JP_INVALID, "the \"from\" location does not exist");
    }
    if (strncmp(from, path, flen) == 0 && path[flen] == '/')
        return jp_fail(o, JP_INVALID, "a value cannot be moved into one of its children");
    if (from[0] == '\0') return jp_fail(o, JP_INVALID, "the whole document cannot be moved");
    jp_result r = JP_OK;
    cJSON *v = jp_detach(o, *doc, from, &r);
    if (!v) return jp_fail(o, JP_INVALID, "the \"from\" location does not exist");
    return jp_add(o, doc, path, v);
}

/* A copy is the one operation whose cost is not in the request: repeated,
 * it doubles the object each time. Its bytes are counted against the API
 * server's JSONPatchMaxCopyBytes before anything is duplicated. */
static jp_result jp_copy(jp_op *o, cJSON **doc, const char *from, const char *path)
{
    const cJSON *src = jsonpointer_get(*doc, from);
    if (!src) return jp_fail(o, JP_INVALID, "the \"from\" location does not exist");
    int depth = 0;
    long bytes = 0;
    jp_measure(src, &depth, &bytes);
    if (bytes > JP_COPY_BYTES_MAX - o->copied) {
        char why[160];
        snprintf(why, sizeof why,
                 "Unable to copy, the accumulated size increase of copy is %ld, exceeding the "
                 "limit %ld",
                 o->copied + bytes, JP_COPY_BYTES_MAX);
        return jp_fail(o, JP_INVALID, why);
    }
    o->copied += bytes;
    return jp_add(o, doc, path, cJSON_Duplicate(src, true));
}

static jp_result jp_test(const jp_op *o, const cJSON *doc, const char *path, const cJSON *value)
{
    const cJSON *cur = jsonpointer_get(doc, path);
    if (!cur) return jp_fail(o, JP_TEST_FAILED, "test failed: the path does not exist");
    if (!cJSON_Compare(cur, value, true))
        return jp_fail(o, JP_TEST_FAILED, "test failed: the value differs");
    return JP_OK;
}

/* RFC 6902 §4 says an operation object with a repeated member is an error
 * (Appendix A.13); cJSON keeps duplicates, so look for them. */
static bool jp_has_duplicate_member(const cJSON *op)
{
    for (const cJSON *a = op->child; a; a = a->next)
        for (const cJSON *b = a->next; b; b = b->next)
            if (a->string && b->string && strcmp(a->string, b->string) == 0) return true;
    return false;
}

static const char *jp_member_str(const cJSON *op, const char *name)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(op, name);
    return cJSON_IsString(m) ? m->valuestring : NULL;
}

/* Applies one operation object to *doc (the private copy). */
static jp_result jp_apply_one(jp_op *o, cJSON **doc, const cJSON *op)
{
    if (!cJSON_IsObject(op)) return jp_fail(o, JP_INVALID, "the operation is not a JSON object");
    o->op = jp_member_str(op, "op");
    o->path = jp_member_str(op, "path");
    if (jp_has_duplicate_member(op))
        return jp_fail(o, JP_INVALID, "the operation repeats a member name");
    if (!o->op) return jp_fail(o, JP_INVALID, "the operation has no string \"op\" member");
    if (!o->path) return jp_fail(o, JP_INVALID, "the operation has no string \"path\" member");
    const cJSON *value = cJSON_GetObjectItemCaseSensitive(op, "value");
    const char *from = jp_member_str(op, "from");
    bool needs_value = !strcmp(o->op, "add") || !strcmp(o->op, "replace") || !strcmp(o->op, "test");
    bool needs_from = !strcmp(o->op, "move") || !strcmp(o->op, "copy");
    if (needs_value && !value) return jp_fail(o, JP_INVALID, "the operation has no \"value\"");
    if (needs_from && !from) return jp_fail(o, JP_INVALID, "the operation has no string \"from\"");
    if (!strcmp(o->op, "add")) return jp_add(o, doc, o->path, cJSON_Duplicate(value, true));
    if (!strcmp(o->op, "remove")) return jp_remove(o, doc, o->path);
    if (!strcmp(o->op, "replace")) return jp_replace(o, doc, o->path, value);
    if (!strcmp(o->op, "move")) return jp_move(o, doc, from, o->path);
    if (!strcmp(o->op, "copy")) return jp_copy(o, doc, from, o->path);
    if (!strcmp(o->op, "test")) return jp_test(o, *doc, o->path, value);
    return jp_fail(o, JP_INVALID,
                   "the operation name is not one of add, remove, replace, "
                   "move, copy, test");
}

jp_result jsonpatch_apply(cJSON **doc, const cJSON *patch, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    jp_op o = {.index = 0, .op = NULL, .path = NULL, .err = err, .errlen = errlen, .copied = 0};
    if (!doc || !*doc || !cJSON_IsArray(patch)) {
        if (err && errlen) snprintf(err, errlen, "A JSON patch must be an array of operations.");
        return JP_INVALID;
    }
    int nops = cJSON_GetArraySize(patch);
    if (nops > JP_OPS_MAX) {
        if (err && errlen)
            snprintf(err, errlen, "The allowed maximum operations in a JSON patch is %d, got %d",
                     JP_OPS_MAX, nops);
        return JP_TOO_LARGE;
    }
    cJSON *work = cJSON_Duplicate(*doc, true);
    for (const cJSON *op = patch->child; op; op = op->next) {
        o.op = NULL;
        o.path = NULL;
        jp_result r = jp_apply_one(&o, &work, op);
        if (r != JP_OK) {
            cJSON_Delete(work);
            return r;
        }
        o.index++;
    }
    cJSON_Delete(*doc);
    *doc = work;
    return JP_OK;
}

/* ---- RFC 7386 merge patch ---------------------------------------------- */

/* One pending merge of a patch object into the member `name` of container
 * (the root document when container is NULL). The member is looked up when
 * the frame is popped, not when it is pushed: a patch with a repeated key may
 * replace that member in between, and a stale pointer would be freed memory. */
typedef struct mp_frame {
    cJSON *container;
    const char *name;
    const cJSON *patch;
} mp_frame;

/* The object stored at container[name], created (or replacing a non-object)
 * when absent: RFC 7386 merges an object patch into {} in that case. */
static cJSON *mp_object_member(cJSON *container, const char *name)
{
    cJSON *cur = cJSON_GetObjectItemCaseSensitive(container, name);
    if (cJSON_IsObject(cur)) return cur;
    cJSON *fresh = cJSON_CreateObject();
    if (cur)
        cJSON_ReplaceItemInObjectCaseSensitive(container, name, fresh);
    else
        cJSON_AddItemToObject(container, name, fresh);
    return fresh;
}

static void mp_set_member(cJSON *target, const char *name, const cJSON *value)
{
    cJSON *dup = cJSON_Duplicate(value, true);
    if (cJSON_GetObjectItemCaseSensitive(target, name))
        cJSON_ReplaceItemInObjectCaseSensitive(target, name, dup);
    else
        cJSON_AddItemToObject(target, name, dup);
}

cJSON *mergepatch_apply(cJSON *target, const cJSON *patch)
{
    if (!cJSON_IsObject(patch)) {
        cJSON_Delete(target);
        return patch ? cJSON_Duplicate(patch, true) : cJSON_CreateNull();
    }
    if (!cJSON_IsObject(target)) {
        cJSON_Delete(target);
        target = cJSON_CreateObject();
    }
    /* Each frame is one object node of the patch, pushed once: the loop is
     * bounded by the patch's size. */
    size_t cap = 16, n = 0;
    mp_frame *stack = rs_xmalloc(cap * sizeof *stack);
    stack[n++] = (mp_frame){.container = NULL, .name = NULL, .patch = patch};
    while (n > 0) {
        mp_frame f = stack[--n];
        cJSON *t = f.container ? mp_object_member(f.container, f.name) : target;
        for (const cJSON *m = f.patch->child; m; m = m->next) {
            if (!m->string) continue;
            if (cJSON_IsNull(m)) {
                cJSON_DeleteItemFromObjectCaseSensitive(t, m->string);
            } else if (cJSON_IsObject(m)) {
                if (n == cap) stack = rs_xrealloc(stack, (cap *= 2) * sizeof *stack);
                stack[n++] = (mp_frame){.container = t, .name = m->string, .patch = m};
            } else {
                mp_set_member(t, m->string, m);
            }
        }
    }
    free(stack);
    return target;
}
