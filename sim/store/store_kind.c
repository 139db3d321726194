/*
 * store_kind.c — what the sim's API server knows about a kind (group/version,
 * resource name, scope) and the Status bodies it answers failures with.
 *
 * The one idea: the core reads reasons, codes and details out of these
 * bodies exactly as it would from a real API server (a 409's "Conflict", a
 * 404's details.kind), so their wording and shape are copied from the API
 * server, in one table and one set of constructors, never improvised at a
 * call site.
 */
#include "sim/store/store_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const store_kind_info store_kinds[] = {
    {"Secret", "v1", "secrets", false},
    {"ConfigMap", "v1", "configmaps", false},
    {"Pod", "v1", "pods", false},
    {"Node", "v1", "nodes", true},
    {"Namespace", "v1", "namespaces", true},
    {"Event", "v1", "events", false},
    {"Deployment", "apps/v1", "deployments.apps", false},
    {"ReplicaSet", "apps/v1", "replicasets.apps", false},
    {"DaemonSet", "apps/v1", "daemonsets.apps", false},
    {"Lease", "coordination.k8s.io/v1", "leases.coordination.k8s.io", false},
    {"PushSecret", "external-secrets.io/v1alpha1", "pushsecrets.external-secrets.io", false},
    {"ExternalSecret", "external-secrets.io/v1beta1", "externalsecrets.external-secrets.io", false},
    {"Kustomization", "kustomize.toolkit.fluxcd.io/v1",
     "kustomizations.kustomize.toolkit.fluxcd.io", false},
    {"PodDisruptionBudget", "policy/v1", "poddisruptionbudgets.policy", false},
    {"CustomResourceDefinition", "apiextensions.k8s.io/v1",
     "customresourcedefinitions.apiextensions.k8s.io", true},
};

const store_kind_info *store_kind_find(const char *kind)
{
    if (!kind) return NULL;
    for (size_t i = 0; i < RS_ARRAY_LEN(store_kinds); i++)
        if (strcmp(store_kinds[i].kind, kind) == 0) return &store_kinds[i];
    return NULL;
}

const char *store_api_version(const char *kind)
{
    const store_kind_info *ki = store_kind_find(kind);
    return ki ? ki->api_version : NULL;
}

int store_kind_cluster_scoped(const char *kind)
{
    const store_kind_info *ki = store_kind_find(kind);
    return ki && ki->cluster_scoped;
}

/* Cluster-scoped objects live under ns "" whatever the caller passed: the
 * API server has no namespace in their URL. */
const char *store_ns(const store_kind_info *ki, const char *ns)
{
    return (ki->cluster_scoped || !ns) ? "" : ns;
}

/* ---- Status bodies ------------------------------------------------------ */

cJSON *store_status(int code, const char *reason, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cJSON *st = cJSON_CreateObject();
    cJSON_AddStringToObject(st, "kind", "Status");
    cJSON_AddStringToObject(st, "apiVersion", "v1");
    cJSON_AddItemToObject(st, "metadata", cJSON_CreateObject());
    cJSON_AddStringToObject(st, "status", code >= 200 && code < 300 ? "Success" : "Failure");
    cJSON_AddStringToObject(st, "message", msg);
    cJSON_AddStringToObject(st, "reason", reason);
    cJSON_AddNumberToObject(st, "code", code);
    return st;
}

/* Sets *out to a Status with the API server's "details" (name, resource
 * kind) and returns code. */
int store_fail_obj(cJSON **out, int code, const char *reason, const store_kind_info *ki,
                   const char *name, const char *msg)
{
    cJSON *st = store_status(code, reason, "%s", msg);
    cJSON *details = cJSON_AddObjectToObject(st, "details");
    if (name) cJSON_AddStringToObject(details, "name", name);
    const char *dot = strchr(ki->resource, '.');
    if (dot) cJSON_AddStringToObject(details, "group", dot + 1);
    size_t plural_len = dot ? (size_t)(dot - ki->resource) : strlen(ki->resource);
    char plural[64];
    snprintf(plural, sizeof plural, "%.*s", (int)plural_len, ki->resource);
    cJSON_AddStringToObject(details, "kind", plural);
    *out = st;
    return code;
}

int store_not_found(cJSON **out, const store_kind_info *ki, const char *name)
{
    char msg[384];
    snprintf(msg, sizeof msg, "%s \"%s\" not found", ki->resource, name ? name : "");
    return store_fail_obj(out, 404, "NotFound", ki, name, msg);
}

int store_unknown_kind(cJSON **out, const char *kind)
{
    *out = store_status(404, "NotFound",
                        "the server could not find the requested resource (the resource type "
                        "of kind \"%s\" is unknown to the sim)",
                        kind ? kind : "");
    return 404;
}

int store_conflict(cJSON **out, const store_kind_info *ki, const char *name)
{
    char msg[512];
    snprintf(msg, sizeof msg,
             "Operation cannot be fulfilled on %s \"%s\": the object has been modified; please "
             "apply your changes to the latest version and try again",
             ki->resource, name);
    return store_fail_obj(out, 409, "Conflict", ki, name, msg);
}

int store_invalid(cJSON **out, const store_kind_info *ki, const char *name, const char *why)
{
    char msg[768];
    snprintf(msg, sizeof msg, "%s \"%s\" is invalid: %s", ki->resource, name ? name : "", why);
    return store_fail_obj(out, 422, "Invalid", ki, name, msg);
}

int store_too_large(cJSON **out, const char *why)
{
    *out = store_status(413, "RequestEntityTooLarge", "Request entity too large: %s", why);
    return 413;
}

int store_bad_request(cJSON **out, const char *why)
{
    *out = store_status(400, "BadRequest", "%s", why);
    return 400;
}

int store_internal(cJSON **out, store *db)
{
    *out = store_status(500, "InternalError", "the sim's object store failed in SQLite: %s",
                        sqlite3_errmsg(store_db(db)));
    return 500;
}
