/*
 * serve_kube_table.c — the Table a client asks for with `Accept:
 * application/json;as=Table;g=meta.k8s.io;v=v1` (kubectl's default `get`
 * output): per kind, the columns the API server's printers give — `get
 * nodes` shows NAME STATUS ROLES AGE VERSION as on a cluster — and for the
 * custom kinds the columns their CRDs declare.
 *
 * The one idea: cells are computed here, from the object alone, as the
 * API server's printers compute them (k8s.io/kubernetes/pkg/printers/
 * internalversion); AGE is measured on the world's clock (the store's, the
 * one creationTimestamp was stamped from), so it reads as a cluster's
 * would however fast the world's virtual time runs. A row carries the
 * object's metadata only (includeObject=Metadata, the default) or the
 * whole object (includeObject=Object), never a Secret's data otherwise.
 */
#define _GNU_SOURCE /* timegm (the creationTimestamp as seconds) */
#include "sim/serve/serve_int.h"

#include "sim/store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct table_col {
    const char *name, *type, *format;
    int priority; /* 1: -o wide only */
} table_col;

#define COLS_MAX 10
typedef struct table_kind {
    const char *kind;
    table_col cols[COLS_MAX];
} table_kind;

/* Column lists as `kubectl get` shows them on a v1.32 cluster (the name
 * column's format "name"; priority 1 for -o wide). */
static const table_kind table_kinds[] = {
    {"Node",
     {{"Name", "string", "name", 0},
      {"Status", "string", "", 0},
      {"Roles", "string", "", 0},
      {"Age", "string", "", 0},
      {"Version", "string", "", 0},
      {"Internal-IP", "string", "", 1},
      {"OS-Image", "string", "", 1},
      {"Kernel-Version", "string", "", 1},
      {"Container-Runtime", "string", "", 1}}},
    {"Pod",
     {{"Name", "string", "name", 0},
      {"Ready", "string", "", 0},
      {"Status", "string", "", 0},
      {"Restarts", "string", "", 0},
      {"Age", "string", "", 0},
      {"IP", "string", "", 1},
      {"Node", "string", "", 1}}},
    {"Secret",
     {{"Name", "string", "name", 0},
      {"Type", "string", "", 0},
      {"Data", "string", "", 0},
      {"Age", "string", "", 0}}},
    {"ConfigMap",
     {{"Name", "string", "name", 0}, {"Data", "string", "", 0}, {"Age", "string", "", 0}}},
    {"Namespace",
     {{"Name", "string", "name", 0}, {"Status", "string", "", 0}, {"Age", "string", "", 0}}},
    {"Event",
     {{"Last Seen", "string", "", 0},
      {"Type", "string", "", 0},
      {"Reason", "string", "", 0},
      {"Object", "string", "", 0},
      {"Message", "string", "", 0}}},
    {"Deployment",
     {{"Name", "string", "name", 0},
      {"Ready", "string", "", 0},
      {"Up-to-date", "string", "", 0},
      {"Available", "string", "", 0},
      {"Age", "string", "", 0}}},
    {"ReplicaSet",
     {{"Name", "string", "name", 0},
      {"Desired", "string", "", 0},
      {"Current", "string", "", 0},
      {"Ready", "string", "", 0},
      {"Age", "string", "", 0}}},
    {"DaemonSet",
     {{"Name", "string", "name", 0},
      {"Desired", "string", "", 0},
      {"Current", "string", "", 0},
      {"Ready", "string", "", 0},
      {"Up-to-date", "string", "", 0},
      {"Available", "string", "", 0},
      {"Age", "string", "", 0}}},
    {"Lease",
     {{"Name", "string", "name", 0}, {"Holder", "string", "", 0}, {"Age", "string", "", 0}}},
    {"PodDisruptionBudget",
     {{"Name", "string", "name", 0},
      {"Min Available", "string", "", 0},
      {"Max Unavailable", "string", "", 0},
      {"Allowed Disruptions", "string", "", 0},
      {"Age", "string", "", 0}}},
    /* The CRDs' additionalPrinterColumns (external-secrets, Flux). */
    {"ExternalSecret",
     {{"Name", "string", "name", 0},
      {"Store", "string", "", 0},
      {"Refresh Interval", "string", "", 0},
      {"Status", "string", "", 0},
      {"Ready", "string", "", 0}}},
    {"PushSecret",
     {{"Name", "string", "name", 0}, {"Age", "date", "", 0}, {"Status", "string", "", 0}}},
    {"Kustomization",
     {{"Name", "string", "name", 0},
      {"Age", "date", "", 0},
      {"Ready", "string", "", 0},
      {"Status", "string", "", 0}}},
    {"CustomResourceDefinition", {{"Name", "string", "name", 0}, {"Created At", "date", "", 0}}},
};

static const table_kind *table_kind_of(const char *kind)
{
    for (size_t i = 0; i < sizeof table_kinds / sizeof *table_kinds; i++)
        if (strcmp(table_kinds[i].kind, kind) == 0) return &table_kinds[i];
    return NULL;
}

bool serve_table_wanted(const serve_http *h)
{
    const char *accept = serve_header(h, "Accept");
    return accept && strstr(accept, "as=Table") && strstr(accept, "g=meta.k8s.io");
}

/* ---- cells ---------------------------------------------------------------- */

static const cJSON *at(const cJSON *j, const char *path)
{
    char key[128];
    while (j && *path) {
        size_t n = strcspn(path, ".");
        snprintf(key, sizeof key, "%.*s", (int)n, path);
        j = cJSON_GetObjectItemCaseSensitive(j, key);
        path += n + (path[n] == '.');
    }
    return j;
}

static const char *str_at(const cJSON *j, const char *path, const char *dflt)
{
    const cJSON *v = at(j, path);
    return cJSON_IsString(v) ? v->valuestring : dflt;
}

static long num_at(const cJSON *j, const char *path)
{
    const cJSON *v = at(j, path);
    return cJSON_IsNumber(v) ? (long)v->valuedouble : 0;
}

/* "2026-01-01T00:00:05Z" -> seconds since the epoch; -1 when not one. */
static long long rfc3339_s(const char *t)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    if (!t || sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                     &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (long long)timegm(&tm);
}

/* k8s.io/apimachinery/pkg/util/duration.HumanDuration. */
static void human_duration(long long secs, char *out, size_t len)
{
    if (secs < -1) {
        snprintf(out, len, "<invalid>");
        return;
    }
    if (secs < 0) secs = 0;
    long long m = secs / 60, h = secs / 3600, d = h / 24, y = d / 365;
    if (secs < 120)
        snprintf(out, len, "%llds", secs);
    else if (m < 10)
        secs % 60 ? snprintf(out, len, "%lldm%llds", m, secs % 60) : snprintf(out, len, "%lldm", m);
    else if (m < 180)
        snprintf(out, len, "%lldm", m);
    else if (h < 8)
        m % 60 ? snprintf(out, len, "%lldh%lldm", h, m % 60) : snprintf(out, len, "%lldh", h);
    else if (h < 48)
        snprintf(out, len, "%lldh", h);
    else if (h < 24 * 8)
        h % 24 ? snprintf(out, len, "%lldd%lldh", d, h % 24) : snprintf(out, len, "%lldd", d);
    else if (h < 24 * 365 * 2)
        snprintf(out, len, "%lldd", d);
    else if (h < 24 * 365 * 8)
        d % 365 ? snprintf(out, len, "%lldy%lldd", y, d % 365) : snprintf(out, len, "%lldy", y);
    else
        snprintf(out, len, "%lldy", y);
}

static cJSON *age_cell(const cJSON *obj, long long now_s)
{
    char buf[32];
    long long t = rfc3339_s(str_at(obj, "metadata.creationTimestamp", NULL));
    if (t < 0) return cJSON_CreateString("<unknown>");
    human_duration(now_s - t, buf, sizeof buf);
    return cJSON_CreateString(buf);
}

/* The status of condition `type`, or NULL. */
static const char *condition(const cJSON *obj, const char *type, const char *field)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, at(obj, "status.conditions"))
    {
        if (strcmp(str_at(c, "type", ""), type) == 0) return str_at(c, field, NULL);
    }
    return NULL;
}

static cJSON *node_status(const cJSON *obj)
{
    const char *ready = condition(obj, "Ready", "status");
    char buf[64];
    const char *state = !ready ? "Unknown" : strcmp(ready, "True") == 0 ? "Ready" : "NotReady";
    snprintf(buf, sizeof buf, "%s%s", state,
             cJSON_IsTrue(at(obj, "spec.unschedulable")) ? ",SchedulingDisabled" : "");
    return cJSON_CreateString(buf);
}

static cJSON *node_roles(const cJSON *obj)
{
    char buf[256] = "";
    const cJSON *l;
    static const char prefix[] = "node-role.kubernetes.io/";
    cJSON_ArrayForEach(l, at(obj, "metadata.labels"))
    {
        if (strncmp(l->string, prefix, sizeof prefix - 1) != 0 || !l->string[sizeof prefix - 1])
            continue;
        size_t n = strlen(buf);
        snprintf(buf + n, sizeof buf - n, "%s%s", n ? "," : "", l->string + sizeof prefix - 1);
    }
    return cJSON_CreateString(buf[0] ? buf : "<none>");
}

static cJSON *node_address(const cJSON *obj, const char *type)
{
    const cJSON *a;
    cJSON_ArrayForEach(a, at(obj, "status.addresses"))
    {
        if (strcmp(str_at(a, "type", ""), type) == 0)
            return cJSON_CreateString(str_at(a, "address", "<none>"));
    }
    return cJSON_CreateString("<none>");
}

static cJSON *count_cell(long n)
{
    return cJSON_CreateNumber((double)n);
}

static cJSON *pod_ready(const cJSON *obj)
{
    int total = cJSON_GetArraySize(at(obj, "spec.containers")), ready = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, at(obj, "status.containerStatuses"))
    {
        ready += cJSON_IsTrue(at(c, "ready"));
    }
    /* The sim's pods carry the Ready condition, not per-container states:
     * a Ready pod has every container ready. */
    const char *cond = condition(obj, "Ready", "status");
    if (!at(obj, "status.containerStatuses") && cond && strcmp(cond, "True") == 0) ready = total;
    char buf[32];
    snprintf(buf, sizeof buf, "%d/%d", ready, total);
    return cJSON_CreateString(buf);
}

static cJSON *pod_restarts(const cJSON *obj)
{
    long n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, at(obj, "status.containerStatuses"))
    {
        n += num_at(c, "restartCount");
    }
    return count_cell(n);
}

static cJSON *pod_status(const cJSON *obj)
{
    if (at(obj, "metadata.deletionTimestamp")) return cJSON_CreateString("Terminating");
    return cJSON_CreateString(str_at(obj, "status.reason", str_at(obj, "status.phase", "Unknown")));
}

static cJSON *ratio(long a, long b)
{
    char buf[48];
    snprintf(buf, sizeof buf, "%ld/%ld", a, b);
    return cJSON_CreateString(buf);
}

static cJSON *event_object(const cJSON *obj)
{
    char buf[320];
    snprintf(buf, sizeof buf, "%s/%s", str_at(obj, "involvedObject.kind", ""),
             str_at(obj, "involvedObject.name", ""));
    for (char *p = buf; *p && *p != '/'; p++)
        if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
    return cJSON_CreateString(buf);
}

static cJSON *int_or_string(const cJSON *v)
{
    if (cJSON_IsNumber(v)) return count_cell((long)v->valuedouble);
    return cJSON_CreateString(cJSON_IsString(v) ? v->valuestring : "N/A");
}

/* The cells of one row, in table_kinds' column order. */
static cJSON *row_cells(const char *kind, const cJSON *o, long long now_s)
{
    cJSON *c = cJSON_CreateArray();
#define CELL(x) cJSON_AddItemToArray(c, (x))
#define STR(x) cJSON_CreateString(x)
    CELL(STR(str_at(o, "metadata.name", "")));
    if (strcmp(kind, "Node") == 0) {
        CELL(node_status(o));
        CELL(node_roles(o));
        CELL(age_cell(o, now_s));
        CELL(STR(str_at(o, "status.nodeInfo.kubeletVersion", "")));
        CELL(node_address(o, "InternalIP"));
        CELL(STR(str_at(o, "status.nodeInfo.osImage", "<unknown>")));
        CELL(STR(str_at(o, "status.nodeInfo.kernelVersion", "<unknown>")));
        CELL(STR(str_at(o, "status.nodeInfo.containerRuntimeVersion", "<unknown>")));
    } else if (strcmp(kind, "Pod") == 0) {
        CELL(pod_ready(o));
        CELL(pod_status(o));
        CELL(pod_restarts(o));
        CELL(age_cell(o, now_s));
        CELL(STR(str_at(o, "status.podIP", "<none>")));
        CELL(STR(str_at(o, "spec.nodeName", "<none>")));
    } else if (strcmp(kind, "Secret") == 0) {
        CELL(STR(str_at(o, "type", "Opaque")));
        CELL(count_cell(cJSON_GetArraySize(at(o, "data"))));
        CELL(age_cell(o, now_s));
    } else if (strcmp(kind, "ConfigMap") == 0) {
        CELL(count_cell(cJSON_GetArraySize(at(o, "data")) +
                        cJSON_GetArraySize(at(o, "binaryData"))));
        CELL(age_cell(o, now_s));
    } else if (strcmp(kind, "Namespace") == 0) {
        CELL(STR(str_at(o, "status.phase", "Active")));
        CELL(age_cell(o, now_s));
    } else if (strcmp(kind, "Event") == 0) {
        cJSON_DeleteItemFromArray(c, 0); /* no name column */
        char seen[32];
        long long t = rfc3339_s(str_at(o, "lastTimestamp", str_at(o, "eventTime", NULL)));
        human_duration(t < 0 ? -2 : now_s - t, seen, sizeof seen);
        CELL(STR(t < 0 ? "<unknown>" : seen));
        CELL(STR(str_at(o, "type", "")));
        CELL(STR(str_at(o, "reason", "")));
        CELL(event_object(o));
        CELL(STR(str_at(o, "message", "")));
    } else if (strcmp(kind, "Deployment") == 0) {
        CELL(ratio(num_at(o, "status.readyReplicas"), num_at(o, "spec.replicas")));
        CELL(count_cell(num_at(o, "status.updatedReplicas")));
        CELL(count_cell(num_at(o, "status.availableReplicas")));
        CELL(age_cell(o, now_s));
    } else if (strcmp(kind, "ReplicaSet") == 0) {
        CELL(count_cell(num_at(o, "spec.replicas")));
        CELL(count_cell(num_at(o, "status.replicas")));
        CELL(count_cell(num_at(o, "status.readyReplicas")));
        CELL(age_cell(o, now_s));
    } else if (strcmp(kind, "DaemonSet") == 0) {
        CELL(count_cell(num_at(o, "status.desiredNumberScheduled")));
        CELL(count_cell(num_at(o, "status.currentNumberScheduled")));
        CELL(count_cell(num_at(o, "status.numberReady")));
        CELL(count_cell(num_at(o, "status.updatedNumberScheduled")));
        CELL(count_cell(num_at(o, "status.numberAvailable")));
        CELL(age_cell(o, now_s));
    } else if (strcmp(kind, "Lease") == 0) {
        const char *holder = str_at(o, "spec.holderIdentity", "");
        CELL(STR(holder[0] ? holder : "<none>"));
        CELL(age_cell(o, now_s));
    } else if (strcmp(kind, "PodDisruptionBudget") == 0) {
        CELL(int_or_string(at(o, "spec.minAvailable")));
        CELL(int_or_string(at(o, "spec.maxUnavailable")));
        CELL(count_cell(num_at(o, "status.disruptionsAllowed")));
        CELL(age_cell(o, now_s));
    } else if (strcmp(kind, "ExternalSecret") == 0) {
        CELL(STR(str_at(o, "spec.secretStoreRef.name", "")));
        CELL(STR(str_at(o, "spec.refreshInterval", "")));
        const char *reason = condition(o, "Ready", "reason");
        const char *ready = condition(o, "Ready", "status");
        CELL(STR(reason ? reason : ""));
        CELL(STR(ready ? ready : ""));
    } else if (strcmp(kind, "PushSecret") == 0 || strcmp(kind, "Kustomization") == 0) {
        CELL(age_cell(o, now_s));
        const char *ready = condition(o, "Ready", "status");
        if (strcmp(kind, "Kustomization") == 0) CELL(STR(ready ? ready : "Unknown"));
        const char *msg =
            condition(o, "Ready", strcmp(kind, "Kustomization") == 0 ? "message" : "reason");
        CELL(STR(msg ? msg : ""));
    } else if (strcmp(kind, "CustomResourceDefinition") == 0) {
        CELL(STR(str_at(o, "metadata.creationTimestamp", "")));
    }
#undef CELL
#undef STR
    return c;
}

/* What a row carries as its object: the metadata alone, as a
 * PartialObjectMetadata (the default), or the whole object. */
static cJSON *row_object(const cJSON *obj, bool whole)
{
    if (whole) return cJSON_Duplicate(obj, true);
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "kind", "PartialObjectMetadata");
    cJSON_AddStringToObject(p, "apiVersion", "meta.k8s.io/v1");
    cJSON_AddItemToObject(p, "metadata",
                          cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), true));
    return p;
}

cJSON *serve_table(serve_server *s, const serve_http *h, const char *kind, const cJSON *items,
                   const char *rv)
{
    return serve_table_items(s, kind, items, rv, serve_arg(h, "includeObject"));
}

cJSON *serve_table_items(serve_server *s, const char *kind, const cJSON *items, const char *rv,
                         const char *inc)
{
    const table_kind *tk = table_kind_of(kind);
    bool whole = inc && strcmp(inc, "Object") == 0, none = inc && strcmp(inc, "None") == 0;
    long long now_s = store_now(sim_world_db(s->w)) / 1000;
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "kind", "Table");
    cJSON_AddStringToObject(t, "apiVersion", "meta.k8s.io/v1");
    cJSON *md = cJSON_AddObjectToObject(t, "metadata");
    if (rv) cJSON_AddStringToObject(md, "resourceVersion", rv);
    cJSON *cols = cJSON_AddArrayToObject(t, "columnDefinitions");
    for (size_t i = 0; tk && i < COLS_MAX && tk->cols[i].name; i++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "name", tk->cols[i].name);
        cJSON_AddStringToObject(c, "type", tk->cols[i].type);
        cJSON_AddStringToObject(c, "format", tk->cols[i].format);
        cJSON_AddStringToObject(c, "description", "");
        cJSON_AddNumberToObject(c, "priority", tk->cols[i].priority);
        cJSON_AddItemToArray(cols, c);
    }
    cJSON *rows = cJSON_AddArrayToObject(t, "rows");
    const cJSON *o;
    cJSON_ArrayForEach(o, items)
    {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddItemToObject(r, "cells", row_cells(kind, o, now_s));
        if (!none) cJSON_AddItemToObject(r, "object", row_object(o, whole));
        cJSON_AddItemToArray(rows, r);
    }
    return t;
}
