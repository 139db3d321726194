/*
 * serve_kube_openapi.c — /openapi/v3 (its root, and one document per
 * group/version the sim serves), so `kubectl apply` (client-side and
 * --server-side) and `kubectl create/replace -f` find what they look for.
 *
 * What kubectl reads of them, and so what they hold: for each resource, a
 * PATCH, PUT and POST operation tagged x-kubernetes-group-version-kind whose
 * parameters include `fieldValidation`, `fieldManager`, `dryRun` and
 * `force` — kubectl then validates on the server (fieldValidation) instead
 * of downloading /openapi/v2 to validate on the client. The documents are
 * minimal but valid OpenAPI 3.0: paths, operations, parameters; no
 * component schemas. Without a schema kubectl computes an apply's patch
 * from its built-in types (a strategic merge patch) or, for a custom kind,
 * as a JSON merge patch — what it does against a cluster whose CRDs carry
 * no schema. /openapi/v2 is 404, as on a server that disabled it.
 */
#include "sim/serve/serve_int.h"

#include "sim/store/store.h"

#include <stdio.h>
#include <string.h>

static cJSON *param(const char *name, const char *type)
{
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "name", name);
    cJSON_AddStringToObject(p, "in", "query");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(p, "schema"), "type", type);
    return p;
}

static cJSON *operation(const char *gv, const char *kind, const char *action, bool write)
{
    cJSON *op = cJSON_CreateObject();
    char id[160];
    snprintf(id, sizeof id, "%s%s", action, kind);
    cJSON_AddStringToObject(op, "operationId", id);
    cJSON *params = cJSON_AddArrayToObject(op, "parameters");
    if (write) {
        cJSON_AddItemToArray(params, param("dryRun", "string"));
        cJSON_AddItemToArray(params, param("fieldManager", "string"));
        cJSON_AddItemToArray(params, param("fieldValidation", "string"));
        if (strcmp(action, "patch") == 0) cJSON_AddItemToArray(params, param("force", "boolean"));
    } else {
        cJSON_AddItemToArray(params, param("resourceVersion", "string"));
    }
    cJSON *ok = cJSON_AddObjectToObject(cJSON_AddObjectToObject(op, "responses"), "200");
    cJSON_AddStringToObject(ok, "description", "OK");
    cJSON_AddStringToObject(op, "x-kubernetes-action", action);
    cJSON *gvk = cJSON_AddObjectToObject(op, "x-kubernetes-group-version-kind");
    const char *slash = strchr(gv, '/');
    char group[128];
    snprintf(group, sizeof group, "%.*s", slash ? (int)(slash - gv) : 0, gv);
    cJSON_AddStringToObject(gvk, "group", group);
    cJSON_AddStringToObject(gvk, "version", slash ? slash + 1 : gv);
    cJSON_AddStringToObject(gvk, "kind", kind);
    return op;
}

static cJSON *path_param(const char *name)
{
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "name", name);
    cJSON_AddStringToObject(p, "in", "path");
    cJSON_AddBoolToObject(p, "required", true);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(p, "schema"), "type", "string");
    return p;
}

/* The document of one group/version: its resources' collection and item
 * paths. NULL when the sim serves nothing under gv. */
static cJSON *gv_doc(const char *gv)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "openapi", "3.0.0");
    cJSON *info = cJSON_AddObjectToObject(doc, "info");
    cJSON_AddStringToObject(info, "title", "Kubernetes");
    cJSON_AddStringToObject(info, "version", "v1.32.0");
    cJSON *paths = cJSON_AddObjectToObject(doc, "paths");
    cJSON_AddObjectToObject(cJSON_AddObjectToObject(doc, "components"), "schemas");
    bool any = false;
    for (size_t i = 0;; i++) {
        const serve_kind *k = serve_kind_at(i);
        if (!k) break;
        const char *kgv = store_api_version(k->kind);
        if (!kgv || strcmp(kgv, gv) != 0) continue;
        any = true;
        bool cluster = store_kind_cluster_scoped(k->kind);
        char base[256], coll[320], item[384];
        snprintf(base, sizeof base, "%s%s", strchr(gv, '/') ? "/apis/" : "/api/", gv);
        snprintf(coll, sizeof coll, "%s%s/%s", base, cluster ? "" : "/namespaces/{namespace}",
                 k->resource);
        snprintf(item, sizeof item, "%s/{name}", coll);
        cJSON *c = cJSON_AddObjectToObject(paths, coll);
        cJSON_AddItemToObject(c, "get", operation(gv, k->kind, "list", false));
        cJSON_AddItemToObject(c, "post", operation(gv, k->kind, "post", true));
        if (!cluster)
            cJSON_AddItemToArray(cJSON_AddArrayToObject(c, "parameters"), path_param("namespace"));
        cJSON *it = cJSON_AddObjectToObject(paths, item);
        cJSON_AddItemToObject(it, "get", operation(gv, k->kind, "get", false));
        cJSON_AddItemToObject(it, "put", operation(gv, k->kind, "put", true));
        cJSON_AddItemToObject(it, "patch", operation(gv, k->kind, "patch", true));
        cJSON_AddItemToObject(it, "delete", operation(gv, k->kind, "delete", true));
        cJSON *ps = cJSON_AddArrayToObject(it, "parameters");
        cJSON_AddItemToArray(ps, path_param("name"));
        if (!cluster) cJSON_AddItemToArray(ps, path_param("namespace"));
    }
    if (!any) {
        cJSON_Delete(doc);
        return NULL;
    }
    return doc;
}

static cJSON *root_doc(void)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON *paths = cJSON_AddObjectToObject(doc, "paths");
    for (size_t i = 0;; i++) {
        const serve_kind *k = serve_kind_at(i);
        if (!k) break;
        const char *gv = store_api_version(k->kind);
        char key[160], url[256];
        snprintf(key, sizeof key, "%s%s", strchr(gv, '/') ? "apis/" : "api/", gv);
        if (cJSON_GetObjectItemCaseSensitive(paths, key)) continue;
        /* The hash names this build's documents: they change only with it. */
        snprintf(url, sizeof url, "/openapi/v3/%s?hash=%s", key, "reassert-" REASSERT_VERSION);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(paths, key), "serverRelativeURL", url);
    }
    return doc;
}

bool serve_openapi(serve_server *s, const serve_http *h, serve_answer *a)
{
    (void)s;
    const char *p = h->path;
    if (strcmp(p, "/openapi/v2") == 0) {
        serve_answer_status(a, 404, "NotFound", "the server could not find the requested resource");
        return true;
    }
    if (strncmp(p, "/openapi/v3", 11) != 0 || (p[11] && p[11] != '/')) return false;
    cJSON *doc = NULL;
    if (!p[11] || !p[12]) {
        doc = root_doc();
    } else {
        const char *key = p + 12; /* "api/v1" or "apis/<group>/<version>" */
        if (strncmp(key, "api/", 4) == 0)
            doc = gv_doc(key + 4);
        else if (strncmp(key, "apis/", 5) == 0)
            doc = gv_doc(key + 5);
    }
    if (!doc) {
        serve_answer_status(a, 404, "NotFound", "the server could not find the requested resource");
        return true;
    }
    serve_answer_json(a, 200, doc);
    return true;
}
