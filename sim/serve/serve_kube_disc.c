/*
 * serve_kube_disc.c — Kubernetes discovery: /version, /api, /apis, each
 * group, and the resource list of each group/version, so kubectl maps
 * `kubectl get lease` or `kubectl drain` onto the paths it then calls.
 *
 * The one idea: the store's kind table is the truth (its apiVersion and
 * scope per kind); this file only adds what discovery says on top of it —
 * the plural, singular and short names kubectl resolves, the verbs, the
 * category "all" (`kubectl get all`), and the pods/eviction subresource —
 * so discovery can never name a group/version the store would not answer
 * under.
 */
#include "sim/serve/serve_int.h"

#include "sim/store/store.h"

#include <stdio.h>
#include <string.h>

static const serve_kind serve_kinds[] = {
    {"Secret", "secrets", "secret", NULL},
    {"ConfigMap", "configmaps", "configmap", "cm"},
    {"Pod", "pods", "pod", "po"},
    {"Node", "nodes", "node", "no"},
    {"Namespace", "namespaces", "namespace", "ns"},
    {"Event", "events", "event", "ev"},
    {"Deployment", "deployments", "deployment", "deploy"},
    {"ReplicaSet", "replicasets", "replicaset", "rs"},
    {"DaemonSet", "daemonsets", "daemonset", "ds"},
    {"Lease", "leases", "lease", NULL},
    {"PushSecret", "pushsecrets", "pushsecret", NULL},
    {"ExternalSecret", "externalsecrets", "externalsecret", "es"},
    {"Kustomization", "kustomizations", "kustomization", "ks"},
    {"PodDisruptionBudget", "poddisruptionbudgets", "poddisruptionbudget", "pdb"},
    {"CustomResourceDefinition", "customresourcedefinitions", "customresourcedefinition", "crd"},
};
#define SERVE_NKINDS (sizeof serve_kinds / sizeof serve_kinds[0])

const serve_kind *serve_kind_at(size_t i)
{
    return i < SERVE_NKINDS ? &serve_kinds[i] : NULL;
}

const serve_kind *serve_kind_find(const char *group_version, const char *resource)
{
    for (size_t i = 0; i < SERVE_NKINDS; i++) {
        const char *gv = store_api_version(serve_kinds[i].kind);
        if (gv && strcmp(gv, group_version) == 0 && strcmp(serve_kinds[i].resource, resource) == 0)
            return &serve_kinds[i];
    }
    return NULL;
}

/* "apps/v1" -> group "apps"; "v1" -> "" (the core group). */
static void gv_group(const char *gv, char *group, size_t len)
{
    const char *slash = strchr(gv, '/');
    snprintf(group, len, "%.*s", slash ? (int)(slash - gv) : 0, gv);
}

static bool gv_known(const char *gv)
{
    for (size_t i = 0; i < SERVE_NKINDS; i++) {
        const char *k = store_api_version(serve_kinds[i].kind);
        if (k && strcmp(k, gv) == 0) return true;
    }
    return false;
}

/* The kinds `kubectl get all` shows, as the API server puts them in the
 * category "all" (workloads; no Secret, ConfigMap or custom kind). */
static bool in_all(const char *kind)
{
    static const char *const kinds[] = {"Pod", "Deployment", "ReplicaSet", "DaemonSet"};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        if (strcmp(kind, kinds[i]) == 0) return true;
    return false;
}

static cJSON *strings(const char *const *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
    return a;
}

static cJSON *resource_list(const char *gv)
{
    static const char *const verbs[] = {"create", "delete", "get",  "list",
                                        "patch",  "update", "watch"};
    static const char *const all[] = {"all"};
    static const char *const create[] = {"create"};
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "kind", "APIResourceList");
    cJSON_AddStringToObject(doc, "apiVersion", "v1");
    cJSON_AddStringToObject(doc, "groupVersion", gv);
    cJSON *res = cJSON_AddArrayToObject(doc, "resources");
    for (size_t i = 0; i < SERVE_NKINDS; i++) {
        const serve_kind *k = &serve_kinds[i];
        const char *kgv = store_api_version(k->kind);
        if (!kgv || strcmp(kgv, gv) != 0) continue;
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "name", k->resource);
        cJSON_AddStringToObject(r, "singularName", k->singular);
        cJSON_AddBoolToObject(r, "namespaced", !store_kind_cluster_scoped(k->kind));
        cJSON_AddStringToObject(r, "kind", k->kind);
        cJSON_AddItemToObject(r, "verbs", strings(verbs, sizeof verbs / sizeof *verbs));
        if (k->short_name) cJSON_AddItemToObject(r, "shortNames", strings(&k->short_name, 1));
        if (in_all(k->kind)) cJSON_AddItemToObject(r, "categories", strings(all, 1));
        cJSON_AddItemToArray(res, r);
        if (strcmp(k->kind, "Pod") == 0) {
            /* The eviction subresource, as the API server lists it. */
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "name", "pods/eviction");
            cJSON_AddStringToObject(e, "singularName", "");
            cJSON_AddBoolToObject(e, "namespaced", true);
            cJSON_AddStringToObject(e, "group", "policy");
            cJSON_AddStringToObject(e, "version", "v1");
            cJSON_AddStringToObject(e, "kind", "Eviction");
            cJSON_AddItemToObject(e, "verbs", strings(create, 1));
            cJSON_AddItemToArray(res, e);
        }
    }
    return doc;
}

static cJSON *group_doc(const char *group)
{
    cJSON *g = cJSON_CreateObject();
    cJSON_AddStringToObject(g, "name", group);
    cJSON *versions = cJSON_AddArrayToObject(g, "versions");
    cJSON *preferred = NULL;
    for (size_t i = 0; i < SERVE_NKINDS; i++) {
        const char *gv = store_api_version(serve_kinds[i].kind);
        char kg[128];
        gv_group(gv, kg, sizeof kg);
        if (strcmp(kg, group) != 0) continue;
        bool seen = false;
        const cJSON *v;
        cJSON_ArrayForEach(v, versions)
        {
            const cJSON *x = cJSON_GetObjectItemCaseSensitive(v, "groupVersion");
            seen = seen || strcmp(x->valuestring, gv) == 0;
        }
        if (seen) continue;
        cJSON *v2 = cJSON_CreateObject();
        cJSON_AddStringToObject(v2, "groupVersion", gv);
        cJSON_AddStringToObject(v2, "version", strchr(gv, '/') + 1);
        cJSON_AddItemToArray(versions, v2);
        /* ExternalSecret's v1beta1 over PushSecret's v1alpha1, as ESO prefers. */
        const cJSON *pv = cJSON_GetObjectItemCaseSensitive(preferred, "version");
        if (!preferred || strcmp(pv->valuestring, strchr(gv, '/') + 1) < 0) {
            cJSON_Delete(preferred);
            preferred = cJSON_Duplicate(v2, true);
        }
    }
    if (!preferred) {
        cJSON_Delete(g);
        return NULL;
    }
    cJSON_AddItemToObject(g, "preferredVersion", preferred);
    return g;
}

static cJSON *group_list(void)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "kind", "APIGroupList");
    cJSON_AddStringToObject(doc, "apiVersion", "v1");
    cJSON *groups = cJSON_AddArrayToObject(doc, "groups");
    for (size_t i = 0; i < SERVE_NKINDS; i++) {
        char group[128];
        gv_group(store_api_version(serve_kinds[i].kind), group, sizeof group);
        if (!group[0]) continue;
        bool seen = false;
        const cJSON *g;
        cJSON_ArrayForEach(g, groups)
        {
            const cJSON *name = cJSON_GetObjectItemCaseSensitive(g, "name");
            seen = seen || strcmp(name->valuestring, group) == 0;
        }
        if (!seen) cJSON_AddItemToArray(groups, group_doc(group));
    }
    return doc;
}

static cJSON *version_doc(void)
{
    cJSON *v = cJSON_CreateObject();
    cJSON_AddStringToObject(v, "major", "1");
    cJSON_AddStringToObject(v, "minor", "32");
    cJSON_AddStringToObject(v, "gitVersion", "v1.32.0+reassert-sim-" REASSERT_VERSION);
    cJSON_AddStringToObject(v, "gitCommit", "");
    cJSON_AddStringToObject(v, "gitTreeState", "clean");
    cJSON_AddStringToObject(v, "buildDate", "1970-01-01T00:00:00Z");
    cJSON_AddStringToObject(v, "goVersion", "");
    cJSON_AddStringToObject(v, "compiler", "reassert");
    cJSON_AddStringToObject(v, "platform", "linux/amd64");
    return v;
}

bool serve_discovery(serve_server *s, const char *const *seg, size_t nseg, serve_answer *a)
{
    (void)s;
    cJSON *doc = NULL;
    if (nseg == 1 && strcmp(seg[0], "version") == 0) {
        doc = version_doc();
    } else if (nseg == 1 && strcmp(seg[0], "api") == 0) {
        static const char *const v1[] = {"v1"};
        doc = cJSON_CreateObject();
        cJSON_AddStringToObject(doc, "kind", "APIVersions");
        cJSON_AddItemToObject(doc, "versions", strings(v1, 1));
    } else if (nseg == 2 && strcmp(seg[0], "api") == 0) {
        if (strcmp(seg[1], "v1") != 0) return false;
        doc = resource_list("v1");
    } else if (nseg == 1 && strcmp(seg[0], "apis") == 0) {
        doc = group_list();
    } else if (nseg == 2 && strcmp(seg[0], "apis") == 0) {
        doc = group_doc(seg[1]);
        if (!doc) return false;
        cJSON_AddStringToObject(doc, "kind", "APIGroup");
        cJSON_AddStringToObject(doc, "apiVersion", "v1");
    } else if (nseg == 3 && strcmp(seg[0], "apis") == 0) {
        char gv[256];
        snprintf(gv, sizeof gv, "%s/%s", seg[1], seg[2]);
        if (!gv_known(gv)) return false;
        doc = resource_list(gv);
    } else {
        return false;
    }
    serve_answer_json(a, 200, doc);
    return true;
}
