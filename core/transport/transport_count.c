/*
 * transport_count.c — the counting shim (see the header for the one idea).
 *
 * Every counter is judged from the request and its answer alone, never from
 * the world: a restart is a 2xx patch of the controller whose pod-template
 * restartedAt differs from the last one an answer showed; a pause is a 2xx
 * answer showing `suspend: true` on a policy object last seen unsuspended; a
 * drain begins at the first eviction (201 or 429) of a pod a list showed on
 * that node; the full fence is both pauses followed by a restart whose
 * rollout an answer showed complete — a list of the controller's pods with
 * none left from before the restart, every one Ready and none terminating
 * (DESIGN §4: a fence whose restart never completed is partial).
 */
#include "core/transport/transport_count.h"

#include "core/rs.h"

#include <stdlib.h>
#include <string.h>

#define TPC_RESTARTED_AT "kubectl.kubernetes.io/restartedAt"
#define TPC_POD_MAX 4096 /* pods remembered from lists (a drain's worth, many times) */

static const char *const tpc_names[] = {
    "controller_restarts", "lease_writes", "writes",          "fence_acquisitions", "policy_pauses",
    "node_reboots",        "node_drains",  "talos_mutations", "api_calls",          "kube_calls",
    "openbao_calls",       "talos_calls",  "registry_calls",  "writes_unconfirmed",
};
enum {
    TPC_RESTARTS,
    TPC_LEASE_WRITES,
    TPC_WRITES,
    TPC_FENCES,
    TPC_PAUSES,
    TPC_REBOOTS,
    TPC_DRAINS,
    TPC_TALOS_MUT,
    TPC_API,
    TPC_KUBE,
    TPC_OPENBAO,
    TPC_TALOS,
    TPC_REGISTRY,
    TPC_UNCONFIRMED,
    TPC_N
};

typedef struct tpc_pod {
    char *ns, *name, *node;
} tpc_pod;

typedef struct tpc_ctx {
    rs_transport t;
    rs_transport *inner;
    const rs_config *cfg;
    int64_t n[TPC_N];
    cJSON *by_kind;
    int64_t start_ms, end_ms;
    bool stopped; /* end_ms is the run's last clock read */
    char *lease_rv_first, *lease_rv_last;
    char *restarted_at; /* last restartedAt an answer showed */
    bool suspended[2];  /* parent, child: as last shown */
    bool fence_held;
    bool fence_pending; /* both pauses and a restart; its rollout not yet shown */
    cJSON *ctl_pods;    /* UIDs of the controller's pods, last list */
    cJSON *ctl_old;     /* ... as they were when the restart was written */
    tpc_pod *pods;
    size_t n_pods;
    char **drained;
    size_t n_drained;
} tpc_ctx;

static tpc_ctx *tpc_of(rs_transport *t)
{
    return (tpc_ctx *)t->ctx;
}

static bool tpc_eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static bool tpc_is(const rs_req *req, const char *kind, const char *ns, const char *name)
{
    return tpc_eq(req->kind, kind) && tpc_eq(req->ns, ns) && tpc_eq(req->name, name);
}

static const char *tpc_str(const cJSON *obj, const char *const *path, size_t n)
{
    for (size_t i = 0; i < n && obj; i++)
        obj = cJSON_GetObjectItemCaseSensitive(obj, path[i]);
    return cJSON_GetStringValue(obj);
}

static void tpc_set(char **field, const char *value)
{
    free(*field);
    *field = value ? rs_xstrdup(value) : NULL;
}

static int tpc_service(rs_op op)
{
    const char *name = rs_op_name(op);
    if (strncmp(name, "kube.", 5) == 0) return TPC_KUBE;
    if (strncmp(name, "openbao.", 8) == 0) return TPC_OPENBAO;
    if (strncmp(name, "talos.", 6) == 0) return TPC_TALOS;
    if (strncmp(name, "registry.", 9) == 0) return TPC_REGISTRY;
    return -1; /* the run-liveness oracle is no service of the cluster */
}

static void tpc_kind_add(tpc_ctx *c, const rs_req *req)
{
    const char *op = rs_op_name(req->op);
    const char *kind = op;
    if (strncmp(op, "kube.", 5) == 0)
        kind = req->op == RS_OP_KUBE_EVICT ? "Pod" : (req->kind ? req->kind : "");
    else if (strncmp(op, "openbao.", 8) == 0)
        kind = "openbao";
    cJSON *it = cJSON_GetObjectItemCaseSensitive(c->by_kind, kind);
    if (it)
        cJSON_SetNumberValue(it, it->valuedouble + 1);
    else
        cJSON_AddNumberToObject(c->by_kind, kind, 1);
}

/* The Lease's resourceVersion as answers show it, first and last. */
static void tpc_see_lease(tpc_ctx *c, const rs_req *req, const rs_resp *resp)
{
    if (!tpc_is(req, "Lease", c->cfg->lease_ns, c->cfg->lease_name) || req->op == RS_OP_KUBE_LIST)
        return;
    const char *path[] = {"metadata", "resourceVersion"};
    const char *rv =
        resp->status >= 200 && resp->status < 300 ? tpc_str(resp->body, path, 2) : NULL;
    if (!rv) return;
    if (!c->lease_rv_first) tpc_set(&c->lease_rv_first, rv);
    tpc_set(&c->lease_rv_last, rv);
}

/* Pauses, restarts and the full fence, from what answers show. */
static void tpc_see_policy(tpc_ctx *c, const rs_req *req, const rs_resp *resp, bool applied)
{
    const rs_config *g = c->cfg;
    bool ok = resp->status >= 200 && resp->status < 300 && req->op != RS_OP_KUBE_LIST;
    int which = tpc_is(req, "Kustomization", g->parent_ns, g->parent_name) ? 0
                : tpc_is(req, "Kustomization", g->child_ns, g->child_name) ? 1
                                                                           : -1;
    if (ok && which >= 0) {
        bool now = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(resp->body, "spec"), "suspend"));
        if (applied && now && !c->suspended[which]) c->n[TPC_PAUSES]++;
        c->suspended[which] = now;
        if (!now) c->fence_held = c->fence_pending = false;
    }
    if (ok && tpc_is(req, "Deployment", g->controller_ns, g->controller_name)) {
        const char *path[] = {"spec", "template", "metadata", "annotations", TPC_RESTARTED_AT};
        const char *at = tpc_str(resp->body, path, RS_ARRAY_LEN(path));
        bool restarted =
            applied && req->op == RS_OP_KUBE_PATCH && at && !tpc_eq(at, c->restarted_at);
        if (at) tpc_set(&c->restarted_at, at);
        if (restarted) c->n[TPC_RESTARTS]++;
        if (restarted && c->suspended[0] && c->suspended[1] && !c->fence_held) {
            c->fence_pending = true;
            cJSON_Delete(c->ctl_old);
            c->ctl_old = c->ctl_pods ? cJSON_Duplicate(c->ctl_pods, 1) : cJSON_CreateArray();
        }
    }
}

static bool tpc_pod_ready(const cJSON *pod)
{
    const char *dt[] = {"metadata", "deletionTimestamp"};
    if (tpc_str(pod, dt, 2)) return false;
    const cJSON *cond;
    cJSON_ArrayForEach(cond, cJSON_GetObjectItemCaseSensitive(
                                 cJSON_GetObjectItemCaseSensitive(pod, "status"), "conditions"))
    {
        const char *type[] = {"type"}, *st[] = {"status"};
        if (tpc_eq(tpc_str(cond, type, 1), "Ready")) return tpc_eq(tpc_str(cond, st, 1), "True");
    }
    return false;
}

/* A list of the controller's pods: remembered, and while a restart is
 * pending, the moment it shows the rollout complete is the full fence. */
static void tpc_see_controller_pods(tpc_ctx *c, const rs_req *req, const rs_resp *resp)
{
    const rs_config *g = c->cfg;
    if (req->op != RS_OP_KUBE_LIST || resp->status != 200 || !tpc_eq(req->kind, "Pod") ||
        !tpc_eq(req->ns, g->controller_ns) || !tpc_eq(req->label_selector, g->controller_selector))
        return;
    cJSON *uids = cJSON_CreateArray();
    bool complete = true;
    const cJSON *pod;
    const char *up[] = {"metadata", "uid"};
    cJSON_ArrayForEach(pod, cJSON_GetObjectItemCaseSensitive(resp->body, "items"))
    {
        const char *uid = tpc_str(pod, up, 2);
        if (!uid || !tpc_pod_ready(pod)) complete = false;
        const cJSON *old;
        cJSON_ArrayForEach(old, c->ctl_old)
        {
            if (uid && tpc_eq(cJSON_GetStringValue(old), uid)) complete = false;
        }
        if (uid) cJSON_AddItemToArray(uids, cJSON_CreateString(uid));
    }
    if (cJSON_GetArraySize(uids) == 0) complete = false;
    cJSON_Delete(c->ctl_pods);
    c->ctl_pods = uids;
    if (c->fence_pending && complete) {
        c->fence_pending = false;
        c->fence_held = true;
        c->n[TPC_FENCES]++;
    }
}

/* Pods a list showed, by node: an eviction names only the pod. */
static void tpc_see_pods(tpc_ctx *c, const rs_req *req, const rs_resp *resp)
{
    if (req->op != RS_OP_KUBE_LIST || !tpc_eq(req->kind, "Pod") || resp->status != 200) return;
    const cJSON *pod;
    cJSON_ArrayForEach(pod, cJSON_GetObjectItemCaseSensitive(resp->body, "items"))
    {
        const char *np[] = {"metadata", "namespace"}, *nm[] = {"metadata", "name"},
                   *nn[] = {"spec", "nodeName"};
        const char *ns = tpc_str(pod, np, 2), *name = tpc_str(pod, nm, 2),
                   *node = tpc_str(pod, nn, 2);
        if (!ns || !name || !node || c->n_pods >= TPC_POD_MAX) continue;
        c->pods = rs_xrealloc(c->pods, (c->n_pods + 1) * sizeof *c->pods);
        c->pods[c->n_pods++] =
            (tpc_pod){.ns = rs_xstrdup(ns), .name = rs_xstrdup(name), .node = rs_xstrdup(node)};
    }
}

static void tpc_see_eviction(tpc_ctx *c, const rs_req *req, int status)
{
    if (req->op != RS_OP_KUBE_EVICT || (status != 201 && status != 429)) return;
    const char *node = NULL;
    for (size_t i = c->n_pods; i-- > 0 && !node;)
        if (tpc_eq(c->pods[i].ns, req->ns) && tpc_eq(c->pods[i].name, req->name))
            node = c->pods[i].node;
    if (!node) return;
    for (size_t i = 0; i < c->n_drained; i++)
        if (strcmp(c->drained[i], node) == 0) return;
    c->drained = rs_xrealloc(c->drained, (c->n_drained + 1) * sizeof *c->drained);
    c->drained[c->n_drained++] = rs_xstrdup(node);
    c->n[TPC_DRAINS]++;
}

/* One answered call, counted. */
static void tpc_count(tpc_ctx *c, const rs_req *req, const rs_resp *resp)
{
    const rs_config *g = c->cfg;
    c->n[TPC_API]++;
    int service = tpc_service(req->op);
    if (service >= 0) c->n[service]++;
    bool write = rs_op_is_write(req->op);
    bool applied = write && resp->status >= 200 && resp->status < 300;
    if (applied) {
        c->n[TPC_WRITES]++;
        tpc_kind_add(c, req);
        if (tpc_is(req, "Lease", g->lease_ns, g->lease_name) ||
            (req->op == RS_OP_KUBE_CREATE && tpc_eq(req->kind, "Lease") &&
             tpc_eq(req->ns, g->lease_ns)))
            c->n[TPC_LEASE_WRITES]++;
        if (strncmp(rs_op_name(req->op), "talos.", 6) == 0) c->n[TPC_TALOS_MUT]++;
        if (req->op == RS_OP_TALOS_REBOOT) c->n[TPC_REBOOTS]++;
    } else if (write && rs_resp_ambiguous(resp)) {
        c->n[TPC_UNCONFIRMED]++;
    }
    tpc_see_lease(c, req, resp);
    tpc_see_policy(c, req, resp, applied);
    tpc_see_pods(c, req, resp);
    tpc_see_controller_pods(c, req, resp);
    tpc_see_eviction(c, req, resp->status);
}

static int tpc_call(rs_transport *t, const rs_req *req, rs_resp *resp)
{
    tpc_ctx *c = tpc_of(t);
    int st = c->inner->call(c->inner, req, resp);
    tpc_count(c, req, resp);
    return st;
}

static void tpc_call_batch(rs_transport *t, const rs_req *reqs, rs_resp *resps, size_t n,
                           int parallelism)
{
    tpc_ctx *c = tpc_of(t);
    tp_batch_forward(c->inner, reqs, resps, n, parallelism);
    for (size_t i = 0; i < n; i++)
        tpc_count(c, &reqs[i], &resps[i]);
}

static int64_t tpc_now_ms(rs_transport *t)
{
    tpc_ctx *c = tpc_of(t);
    return c->inner->now_ms(c->inner);
}

static void tpc_sleep_ms(rs_transport *t, int64_t ms)
{
    tpc_ctx *c = tpc_of(t);
    c->inner->sleep_ms(c->inner, ms);
}

static uint64_t tpc_entropy(rs_transport *t)
{
    tpc_ctx *c = tpc_of(t);
    return c->inner->entropy(c->inner);
}

static int tpc_pid(rs_transport *t)
{
    tpc_ctx *c = tpc_of(t);
    return c->inner->pid ? c->inner->pid(c->inner) : 0;
}

static void tpc_close(rs_transport *t)
{
    if (!t) return;
    tpc_ctx *c = tpc_of(t);
    for (size_t i = 0; i < c->n_pods; i++) {
        free(c->pods[i].ns);
        free(c->pods[i].name);
        free(c->pods[i].node);
    }
    free(c->pods);
    for (size_t i = 0; i < c->n_drained; i++)
        free(c->drained[i]);
    free(c->drained);
    free(c->lease_rv_first);
    free(c->lease_rv_last);
    free(c->restarted_at);
    cJSON_Delete(c->ctl_pods);
    cJSON_Delete(c->ctl_old);
    cJSON_Delete(c->by_kind);
    free(c);
}

rs_transport *tp_count_open(rs_transport *inner, const rs_config *cfg)
{
    tpc_ctx *c = rs_xcalloc(1, sizeof *c);
    c->inner = inner;
    c->cfg = cfg;
    c->by_kind = cJSON_CreateObject();
    c->start_ms = inner->now_ms(inner);
    c->t = (rs_transport){.version = RS_TRANSPORT_VERSION,
                          .name = "count",
                          .ctx = c,
                          .call = tpc_call,
                          .call_batch = tpc_call_batch,
                          .now_ms = tpc_now_ms,
                          .sleep_ms = tpc_sleep_ms,
                          .entropy = tpc_entropy,
                          .pid = tpc_pid,
                          .close = tpc_close};
    return &c->t;
}

/* Kinds in name order, so two runs print the same bytes. */
static cJSON *tpc_kinds_sorted(const cJSON *by_kind)
{
    cJSON *out = cJSON_CreateObject();
    const cJSON *prev = NULL;
    for (int k = cJSON_GetArraySize(by_kind); k > 0; k--) {
        const cJSON *best = NULL, *it;
        cJSON_ArrayForEach(it, by_kind)
        {
            if (prev && strcmp(it->string, prev->string) <= 0) continue;
            if (!best || strcmp(it->string, best->string) < 0) best = it;
        }
        if (!best) break;
        cJSON_AddNumberToObject(out, best->string, best->valuedouble);
        prev = best;
    }
    return out;
}

cJSON *tp_count_counters(rs_transport *t)
{
    tpc_ctx *c = tpc_of(t);
    cJSON *doc = cJSON_CreateObject();
    for (int i = 0; i < TPC_N; i++)
        cJSON_AddNumberToObject(doc, tpc_names[i], (double)c->n[i]);
    bool moved = c->lease_rv_first && !tpc_eq(c->lease_rv_first, c->lease_rv_last);
    cJSON_AddBoolToObject(doc, "lease_rv_moved", moved);
    cJSON_AddItemToObject(doc, "writes_by_kind", tpc_kinds_sorted(c->by_kind));
    int64_t ms = (c->stopped ? c->end_ms : c->inner->now_ms(c->inner)) - c->start_ms;
    cJSON_AddNumberToObject(doc, "virtual_seconds", (double)ms / 1000.0);
    return doc;
}

int64_t tp_count_start_ms(rs_transport *t)
{
    return tpc_of(t)->start_ms;
}

int64_t tp_count_stop(rs_transport *t)
{
    tpc_ctx *c = tpc_of(t);
    if (!c->stopped) {
        c->end_ms = c->inner->now_ms(c->inner);
        c->stopped = true;
    }
    return c->end_ms;
}
