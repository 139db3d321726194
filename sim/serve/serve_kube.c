/*
 * serve_kube.c — the Kubernetes API subset: a path and verb become the
 * kube.* request the live transport would have been asked for (get, list
 * with label and field selectors, create, JSON/merge/strategic-merge patch,
 * delete, the policy/v1 eviction subresource), answered by the sim root;
 * a watch, a server-side apply and a PUT go to their own files.
 *
 * The one idea: the store already answers with the API server's semantics
 * and Status bodies (404 NotFound, 409 Conflict/AlreadyExists, 422 Invalid);
 * this file only translates, and answers itself what the API server
 * answers before any storage is touched — 401 without the bearer token, 404
 * for a path no resource lives at, 405, 415, 400 for a body that is not
 * JSON — always as a Status object, never a crash. A string holding U+0000
 * reaches the store whole (serve_body.c).
 */
#include "sim/serve/serve_int.h"

#include "core/cred/cred.h"
#include "sim/store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KUBE_SEGS_MAX 8
#define KUBE_PATH_MAX 2048

typedef struct kube_path {
    const serve_kind *k;
    const char *ns;   /* NULL: cluster-scoped, or every namespace (list) */
    const char *name; /* NULL: the collection */
    const char *sub;  /* NULL, or a subresource ("eviction") */
} kube_path;

/* Splits path at '/' into buf (empty segments dropped); false when there
 * are more than KUBE_SEGS_MAX or the path is too long. */
static bool kube_split(const char *path, char *buf, const char **seg, size_t *nseg)
{
    *nseg = 0;
    if (strlen(path) >= KUBE_PATH_MAX) return false;
    strcpy(buf, path);
    for (char *save = NULL, *t = strtok_r(buf, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
        if (*nseg == KUBE_SEGS_MAX) return false;
        seg[(*nseg)++] = t;
    }
    return true;
}

static bool kube_parse(const char *const *seg, size_t nseg, kube_path *p)
{
    memset(p, 0, sizeof *p);
    char gv[256];
    size_t i;
    if (nseg >= 2 && strcmp(seg[0], "api") == 0 && strcmp(seg[1], "v1") == 0) {
        snprintf(gv, sizeof gv, "v1");
        i = 2;
    } else if (nseg >= 3 && strcmp(seg[0], "apis") == 0) {
        snprintf(gv, sizeof gv, "%s/%s", seg[1], seg[2]);
        i = 3;
    } else {
        return false;
    }
    const char *const *r = seg + i;
    size_t n = nseg - i;
    const char *res;
    if (n >= 3 && strcmp(r[0], "namespaces") == 0) {
        if (n > 5) return false;
        p->ns = r[1];
        res = r[2];
        p->name = n > 3 ? r[3] : NULL;
        p->sub = n > 4 ? r[4] : NULL;
    } else {
        if (n < 1 || n > 3) return false;
        res = r[0];
        p->name = n > 1 ? r[1] : NULL;
        p->sub = n > 2 ? r[2] : NULL;
    }
    p->k = serve_kind_find(gv, res);
    if (!p->k) return false;
    bool cluster = store_kind_cluster_scoped(p->k->kind);
    if (cluster && p->ns) return false;              /* no namespace in a Node's URL */
    if (!cluster && !p->ns && p->name) return false; /* a Secret needs one */
    return true;
}

static bool media_is(const char *ct, size_t n, const char *want)
{
    return n == strlen(want) && strncmp(ct, want, n) == 0;
}

static rs_patch_type kube_patch_type(const serve_http *h)
{
    const char *ct = serve_header(h, "Content-Type");
    if (!ct) return RS_PATCH_NONE;
    size_t n = strcspn(ct, "; ");
    if (media_is(ct, n, "application/json-patch+json")) return RS_PATCH_JSON;
    if (media_is(ct, n, "application/merge-patch+json")) return RS_PATCH_MERGE;
    if (media_is(ct, n, "application/strategic-merge-patch+json")) return RS_PATCH_STRATEGIC;
    return RS_PATCH_NONE;
}

/* A create or eviction body: JSON (no Content-Type is taken as JSON), or
 * protobuf for the kinds serve_proto.c decodes. */
static bool kube_json_body(const serve_http *h, const kube_path *p)
{
    const char *ct = serve_header(h, "Content-Type");
    return !ct || media_is(ct, strcspn(ct, "; "), "application/json") ||
           (serve_proto_is(h) && serve_proto_kind(p->k->kind));
}

/* dryRun from the query (kubectl's patch, create) or the body's
 * DeleteOptions (delete, eviction). 1 dry, 0 not, -1 an unknown value. */
static int kube_dry_run(const serve_http *h, const cJSON *body)
{
    const char *q = serve_arg(h, "dryRun");
    if (q) return strcmp(q, "All") == 0 ? 1 : -1;
    const cJSON *opts = cJSON_GetObjectItemCaseSensitive(body, "deleteOptions");
    const cJSON *dry = cJSON_GetObjectItemCaseSensitive(opts ? opts : body, "dryRun");
    if (!dry) return 0;
    if (!cJSON_IsArray(dry)) return -1;
    int n = cJSON_GetArraySize(dry);
    if (n == 0) return 0;
    const cJSON *v = cJSON_GetArrayItem(dry, 0);
    return n == 1 && cJSON_IsString(v) && strcmp(v->valuestring, "All") == 0 ? 1 : -1;
}

/* A create's body must be the kind the URL names, in the URL's namespace. */
static bool kube_create_ok(const kube_path *p, const cJSON *obj, serve_answer *a)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(obj, "kind");
    if (kind && !(cJSON_IsString(kind) && strcmp(kind->valuestring, p->k->kind) == 0)) {
        serve_answer_status(a, 400, "BadRequest", "the object's kind does not match %s",
                            p->k->resource);
        return false;
    }
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(md, "namespace");
    if (ns && p->ns && !(cJSON_IsString(ns) && strcmp(ns->valuestring, p->ns) == 0)) {
        serve_answer_status(a, 400, "BadRequest",
                            "the namespace of the provided object does not match the namespace "
                            "sent on the request");
        return false;
    }
    return true;
}

static bool kube_malformed(const char *why, serve_answer *a)
{
    serve_answer_status(a, 400, "BadRequest", "%s", why);
    return false;
}

/* Builds the request for a verb on p; false (with *a set) when the verb or
 * body cannot be one. body stays owned by the caller. */
static bool kube_request(const serve_http *h, const kube_path *p, cJSON *body,
                         const char *malformed, rs_req *req, serve_answer *a)
{
    memset(req, 0, sizeof *req);
    req->kind = p->k->kind;
    req->ns = p->ns;
    req->name = p->name;
    bool get = serve_method_is(h, "GET") || serve_method_is(h, "HEAD");
    bool post = serve_method_is(h, "POST"), patch = serve_method_is(h, "PATCH");
    bool del = serve_method_is(h, "DELETE");
    bool eviction = p->sub && strcmp(p->sub, "eviction") == 0 && strcmp(p->k->kind, "Pod") == 0;
    if (p->sub && !(eviction && post)) {
        serve_answer_status(a, 404, "NotFound", "the server could not find the requested resource");
        return false;
    }
    if (get && p->name) {
        req->op = RS_OP_KUBE_GET;
    } else if (get) {
        req->op = RS_OP_KUBE_LIST;
        req->label_selector = serve_arg(h, "labelSelector");
        req->field_selector = serve_arg(h, "fieldSelector");
    } else if (post && eviction) {
        if (!kube_json_body(h, p)) {
            serve_answer_status(a, 415, "UnsupportedMediaType",
                                "the body of the request was in an unknown format - accepted "
                                "media types include: application/json");
            return false;
        }
        if (malformed) return kube_malformed(malformed, a);
        req->op = RS_OP_KUBE_EVICT;
        req->body = body;
    } else if (post && !p->name) {
        if (!kube_json_body(h, p)) {
            /* A kind served without protobuf, as the API server answers
             * protobuf for a custom resource. */
            serve_answer_status(a, 415, "UnsupportedMediaType",
                                "the body of the request was in an unknown format - accepted "
                                "media types include: application/json, application/yaml");
            return false;
        }
        if (malformed) return kube_malformed(malformed, a);
        if (!cJSON_IsObject(body)) {
            serve_answer_status(a, 400, "BadRequest", "the object to create must be a JSON object");
            return false;
        }
        if (!kube_create_ok(p, body, a)) return false;
        req->op = RS_OP_KUBE_CREATE;
        req->name = NULL; /* a create names its object in the body */
        req->body = body;
    } else if (patch && p->name) {
        req->patch_type = kube_patch_type(h);
        if (req->patch_type == RS_PATCH_NONE) {
            serve_answer_status(a, 415, "UnsupportedMediaType",
                                "the body of the request was in an unknown format - accepted "
                                "media types include: application/json-patch+json, "
                                "application/merge-patch+json, application/apply-patch+yaml, "
                                "application/strategic-merge-patch+json");
            return false;
        }
        if (malformed) return kube_malformed(malformed, a);
        if (!body) {
            serve_answer_status(a, 400, "BadRequest", "the patch is empty");
            return false;
        }
        req->op = RS_OP_KUBE_PATCH;
        req->body = body;
    } else if (del && p->name) {
        req->op = RS_OP_KUBE_DELETE;
    } else {
        serve_answer_status(a, 405, "MethodNotAllowed",
                            "the server does not allow this method on "
                            "the requested resource");
        return false;
    }
    return true;
}

/* A successful get or list as a Table, when the client asked for one. */
static void kube_as_table(serve_server *s, const serve_http *h, const rs_req *req, rs_resp *resp)
{
    if (resp->status != 200 || !resp->body || !serve_table_wanted(h)) return;
    bool list = req->op == RS_OP_KUBE_LIST;
    cJSON *items =
        list ? cJSON_DetachItemFromObjectCaseSensitive(resp->body, "items") : cJSON_CreateArray();
    if (!list) cJSON_AddItemToArray(items, cJSON_Duplicate(resp->body, true));
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(resp->body, "metadata");
    cJSON *t =
        serve_table(s, h, req->kind, items,
                    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "resourceVersion")));
    cred_json_wipe_delete(items);
    cred_json_wipe_delete(resp->body);
    resp->body = t;
}

static bool kube_watch_asked(const serve_http *h, const kube_path *p)
{
    return !p->name && !p->sub && (serve_method_is(h, "GET") || serve_method_is(h, "HEAD")) &&
           serve_arg_true(h, "watch");
}

static bool kube_apply_asked(const serve_http *h, const kube_path *p)
{
    const char *ct = serve_header(h, "Content-Type");
    return p->name && !p->sub && serve_method_is(h, "PATCH") && ct &&
           media_is(ct, strcspn(ct, "; "), "application/apply-patch+yaml");
}

void serve_kube_write(serve_server *s, const serve_http *h, rs_req *req, serve_answer *a)
{
    int dry = rs_op_is_write(req->op) ? kube_dry_run(h, req->body) : 0;
    if (dry < 0) {
        serve_answer_status(a, 400, "BadRequest", "the only dry run this server knows is All");
    } else if (dry) {
        cJSON *out = NULL;
        int status = serve_dry_run(s, req, &out);
        serve_answer_json(a, status, out ? out : cJSON_CreateObject());
    } else {
        rs_req_mark_secrets(req);
        rs_resp resp;
        s->door.call(&s->door, req, &resp);
        kube_as_table(s, h, req, &resp);
        serve_answer_resp(a, &resp);
    }
}

static void kube_resource(serve_server *s, const serve_http *h, const kube_path *p, serve_answer *a)
{
    if (kube_watch_asked(h, p)) { /* not a call of the world: none of the core's calls is one */
        serve_watch_open(s, h, p->k->kind, p->ns, a);
        return;
    }
    if (kube_apply_asked(h, p)) {
        kube_target t = {
            .kind = p->k->kind, .ns = p->ns, .name = p->name, .resource = p->k->resource};
        serve_kube_apply(s, h, &t, a);
        return;
    }
    bool put = serve_method_is(h, "PUT") && p->name && !p->sub;
    if (put && !kube_json_body(h, p)) {
        serve_answer_status(a, 415, "UnsupportedMediaType",
                            "the body of the request was in an unknown format - accepted "
                            "media types include: application/json, application/yaml");
        return;
    }
    bool malformed = false;
    const char *why = NULL;
    cJSON *body = NULL;
    if (serve_proto_is(h) && serve_proto_kind(p->k->kind) && (serve_method_is(h, "POST") || put))
        malformed = !(body = serve_proto_decode(h, p->k->kind, &why));
    else
        body = serve_body_json_bytes(h, &malformed, &why);
    if (put) {
        kube_target t = {
            .kind = p->k->kind, .ns = p->ns, .name = p->name, .resource = p->k->resource};
        if (malformed)
            serve_answer_status(a, 400, "BadRequest", "%s", why);
        else
            serve_kube_replace(s, h, &t, body, a);
        cred_json_wipe_delete(body);
        return;
    }
    rs_req req;
    if (!kube_request(h, p, body, malformed ? why : NULL, &req, a)) {
        cred_json_wipe_delete(body);
        return;
    }
    serve_kube_write(s, h, &req, a);
    cred_json_wipe_delete(body);
}

void serve_kube(serve_server *s, const serve_http *h, serve_answer *a)
{
    if (!serve_bearer_ok(s, h)) {
        serve_answer_status(a, 401, "Unauthorized", "Unauthorized");
        return;
    }
    if (h->path_nul) { /* a name or namespace holding U+0000: no object has it */
        serve_answer_status(a, 404, "NotFound", "the server could not find the requested resource");
        return;
    }
    char buf[KUBE_PATH_MAX];
    const char *seg[KUBE_SEGS_MAX];
    size_t nseg = 0;
    kube_path p;
    if (!kube_split(h->path, buf, seg, &nseg)) {
        serve_answer_status(a, 404, "NotFound", "the server could not find the requested resource");
    } else if (serve_openapi(s, h, a)) {
        /* answered */
    } else if (serve_kube_review(s, h, h->path, a)) {
        /* answered */
    } else if (serve_discovery(s, seg, nseg, a)) {
        if (!serve_method_is(h, "GET") && !serve_method_is(h, "HEAD"))
            serve_answer_status(a, 405, "MethodNotAllowed",
                                "the server does not allow this method on the requested resource");
    } else if (!kube_parse(seg, nseg, &p)) {
        serve_answer_status(a, 404, "NotFound", "the server could not find the requested resource");
    } else {
        kube_resource(s, h, &p, a);
    }
}
