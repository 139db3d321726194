/*
 * transport.c — naming of operations (the §5 names faults, `during:` entries
 * and cassettes match on), small request builders, the sent/ambiguous
 * distinction and the secret marks every request and answer declares.
 */
#include "core/transport/transport.h"

#include "core/cred/cred.h"

#include "core/rs.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[RS_OP_COUNT] = {
    [RS_OP_KUBE_GET] = "kube.get",
    [RS_OP_KUBE_LIST] = "kube.list",
    [RS_OP_KUBE_CREATE] = "kube.create",
    [RS_OP_KUBE_PATCH] = "kube.patch",
    [RS_OP_KUBE_DELETE] = "kube.delete",
    [RS_OP_KUBE_EVICT] = "kube.evict",
    [RS_OP_OPENBAO_READ] = "openbao.read",
    [RS_OP_OPENBAO_WRITE] = "openbao.write",
    [RS_OP_TALOS_PATCH] = "talos.patch",
    [RS_OP_TALOS_REBOOT] = "talos.reboot",
    [RS_OP_TALOS_IMAGE_REMOVE] = "talos.image-remove",
    [RS_OP_TALOS_IMAGE_PULL] = "talos.image-pull",
    [RS_OP_TALOS_ETCD_STATUS] = "talos.etcd-status",
    [RS_OP_TALOS_ETCD_ALARMS] = "talos.etcd-alarms",
    [RS_OP_TALOS_READ_AUTH] = "talos.read-auth",
    [RS_OP_REGISTRY_TOKEN] = "registry.token",
    [RS_OP_REGISTRY_MANIFEST] = "registry.manifest",
    [RS_OP_RUN_LIVENESS] = "run.liveness",
};

const char *rs_op_name(rs_op op)
{
    return (op >= 0 && op < RS_OP_COUNT) ? op_names[op] : "unknown";
}

rs_op rs_op_parse(const char *name)
{
    for (int i = 0; i < RS_OP_COUNT; i++)
        if (strcmp(op_names[i], name) == 0) return (rs_op)i;
    return RS_OP_COUNT;
}

bool rs_op_is_write(rs_op op)
{
    switch (op) {
    case RS_OP_KUBE_CREATE:
    case RS_OP_KUBE_PATCH:
    case RS_OP_KUBE_DELETE:
    case RS_OP_KUBE_EVICT:
    case RS_OP_OPENBAO_WRITE:
    case RS_OP_TALOS_PATCH:
    case RS_OP_TALOS_REBOOT:
    case RS_OP_TALOS_IMAGE_REMOVE:
    case RS_OP_TALOS_IMAGE_PULL:
        return true;
    default:
        return false;
    }
}

static bool is_kube(rs_op op)
{
    return op >= RS_OP_KUBE_GET && op <= RS_OP_KUBE_EVICT;
}

char *rs_req_target(const rs_req *req)
{
    if (!is_kube(req->op)) return rs_xstrdup(req->target ? req->target : "");
    const char *kind = req->op == RS_OP_KUBE_EVICT ? "Pod" : (req->kind ? req->kind : "");
    const char *name = req->name;
    if (req->op == RS_OP_KUBE_CREATE && !(name && name[0])) {
        /* A create names its object in the body: the operation is named for
         * the object it makes (`kube.create Lease/flux-system/...`). */
        const cJSON *md = cJSON_GetObjectItemCaseSensitive(req->body, "metadata");
        name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "name"));
    }
    bool has_ns = req->ns && req->ns[0];
    bool has_name = name && name[0];
    if (has_ns && has_name) return rs_xasprintf("%s/%s/%s", kind, req->ns, name);
    if (has_ns) return rs_xasprintf("%s/%s", kind, req->ns);
    if (has_name) return rs_xasprintf("%s/%s", kind, name);
    return rs_xstrdup(kind);
}

char *rs_req_opname(const rs_req *req)
{
    char *target = rs_req_target(req);
    char *s = rs_xasprintf("%s %s", rs_op_name(req->op), target);
    free(target);
    return s;
}

void rs_resp_init(rs_resp *resp)
{
    memset(resp, 0, sizeof *resp);
}

void rs_resp_free(rs_resp *resp)
{
    if (!resp) return;
    /* Any answer may carry a credential (a Secret, the OpenBao seed, a Talos
     * auth read): wiped, never left in freed memory. */
    cred_json_wipe_delete(resp->body);
    resp->body = NULL;
}

bool rs_resp_ambiguous(const rs_resp *resp)
{
    return resp->status == 0 && resp->sent != RS_SENT_NO;
}

bool rs_resp_not_sent(const rs_resp *resp)
{
    return resp->status == 0 && resp->sent == RS_SENT_NO;
}

rs_answer rs_answer_from(int status, rs_sent sent, const char *error)
{
    rs_answer a;
    if (status != 0) {
        snprintf(a.text, sizeof a.text, "HTTP %d", status);
        return a;
    }
    const char *what = sent == RS_SENT_NO        ? "not sent"
                       : sent == RS_SENT_UNKNOWN ? "timed out, no answer"
                                                 : "connection lost after sending, no answer";
    bool detail = error && error[0];
    snprintf(a.text, sizeof a.text, "%s%s%.*s%s", what, detail ? " (" : "", RS_RESP_ERROR_MAX,
             detail ? error : "", detail ? ")" : "");
    return a;
}

rs_answer rs_answer_of(const rs_resp *resp)
{
    return rs_answer_from(resp->status, resp->sent, resp->error);
}

/* ---- secret marks ---- */

bool rs_secret_mark(rs_secret_marks *marks, const char *pointer)
{
    size_t i = 0;
    for (; i < RS_SECRET_MARKS_MAX && marks->paths[i]; i++)
        if (strcmp(marks->paths[i], pointer) == 0) return true;
    if (i == RS_SECRET_MARKS_MAX) return false;
    marks->paths[i] = pointer;
    marks->paths[i + 1] = NULL;
    return true;
}

#define TP_VISIT_MAX 4096 /* nodes one mark may fan out to ("/items/ * /data") */

typedef struct tp_visit {
    cJSON *node;
    const char *rest; /* the pointer still to follow: "" or "/seg..." */
} tp_visit;

/* One segment of rest into seg (no RFC 6901 escapes: marks are ours and
 * name plain keys); returns what follows it. */
static const char *tp_segment(const char *rest, char *seg, size_t len)
{
    const char *s = rest + 1, *end = strchr(s, '/');
    size_t n = end ? (size_t)(end - s) : strlen(s);
    if (n >= len) n = len - 1;
    memcpy(seg, s, n);
    seg[n] = '\0';
    return s + (end ? (size_t)(end - s) : strlen(s));
}

static size_t tp_visit_one(cJSON *doc, const char *mark, void (*fn)(cJSON *, void *), void *arg)
{
    tp_visit *work = rs_xmalloc(TP_VISIT_MAX * sizeof *work);
    size_t n = 0, hits = 0;
    work[n++] = (tp_visit){doc, mark};
    while (n > 0) {
        tp_visit v = work[--n];
        if (!v.node) continue;
        if (v.rest[0] == '\0') {
            fn(v.node, arg);
            hits++;
            continue;
        }
        char seg[256];
        const char *next = tp_segment(v.rest, seg, sizeof seg);
        if (strcmp(seg, "*") == 0) {
            cJSON *child;
            cJSON_ArrayForEach(child, v.node) if (n < TP_VISIT_MAX) work[n++] =
                (tp_visit){child, next};
        } else if (cJSON_IsArray(v.node)) {
            char *endp = NULL;
            long idx = strtol(seg, &endp, 10);
            if (seg[0] && *endp == '\0' && idx >= 0)
                work[n++] = (tp_visit){cJSON_GetArrayItem(v.node, (int)idx), next};
        } else if (cJSON_IsObject(v.node)) {
            work[n++] = (tp_visit){cJSON_GetObjectItemCaseSensitive(v.node, seg), next};
        }
    }
    free(work);
    return hits;
}

size_t rs_secret_visit(cJSON *doc, const rs_secret_marks *marks,
                       void (*fn)(cJSON *value, void *arg), void *arg)
{
    size_t hits = 0;
    for (size_t i = 0; doc && i < RS_SECRET_MARKS_MAX && marks->paths[i]; i++)
        hits += tp_visit_one(doc, marks->paths[i], fn, arg);
    return hits;
}

static bool tp_is_secret(const rs_req *req)
{
    return req->kind && strcmp(req->kind, "Secret") == 0;
}

void rs_req_mark_secrets(rs_req *req)
{
    rs_secret_marks *m = &req->secret;
    switch (req->op) {
    case RS_OP_KUBE_CREATE:
    case RS_OP_KUBE_PATCH:
        if (!tp_is_secret(req)) break;
        if (req->op == RS_OP_KUBE_PATCH && req->patch_type == RS_PATCH_JSON) {
            rs_secret_mark(m, "/*/value");
        } else {
            rs_secret_mark(m, "/data");
            rs_secret_mark(m, "/stringData");
        }
        break;
    case RS_OP_OPENBAO_WRITE:
        rs_secret_mark(m, "");
        break;
    case RS_OP_TALOS_PATCH:
        rs_secret_mark(m, "/registry-auth/auth");
        break;
    case RS_OP_REGISTRY_TOKEN:
        rs_secret_mark(m, "/password");
        break;
    case RS_OP_REGISTRY_MANIFEST:
        rs_secret_mark(m, "/token");
        break;
    default:
        break;
    }
}

void rs_resp_mark_secrets(const rs_req *req, rs_resp *resp)
{
    rs_secret_marks *m = &resp->secret;
    switch (req->op) {
    case RS_OP_KUBE_GET:
    case RS_OP_KUBE_CREATE:
    case RS_OP_KUBE_PATCH:
    case RS_OP_KUBE_DELETE:
        if (!tp_is_secret(req)) break;
        rs_secret_mark(m, "/data");
        rs_secret_mark(m, "/stringData");
        break;
    case RS_OP_KUBE_LIST:
        if (!tp_is_secret(req)) break;
        rs_secret_mark(m, "/items/*/data");
        rs_secret_mark(m, "/items/*/stringData");
        break;
    case RS_OP_OPENBAO_READ:
        rs_secret_mark(m, "/data/data");
        break;
    case RS_OP_TALOS_READ_AUTH:
        rs_secret_mark(m, "/auth");
        break;
    case RS_OP_REGISTRY_TOKEN:
        rs_secret_mark(m, "/token");
        break;
    default:
        break;
    }
}

int tp_call(rs_transport *t, const rs_req *req, rs_resp *resp)
{
    rs_req marked = *req;
    rs_req_mark_secrets(&marked);
    return t->call(t, &marked, resp);
}

void tp_batch_forward(rs_transport *inner, const rs_req *reqs, rs_resp *resps, size_t n,
                      int parallelism)
{
    if (parallelism < 1) parallelism = 1;
    if (inner->call_batch) {
        inner->call_batch(inner, reqs, resps, n, parallelism);
        return;
    }
    for (size_t i = 0; i < n; i++)
        inner->call(inner, &reqs[i], &resps[i]);
}

void tp_call_batch(rs_transport *t, const rs_req *reqs, rs_resp *resps, size_t n, int parallelism)
{
    if (n == 0) return;
    rs_req *marked = rs_xmalloc(n * sizeof *marked);
    for (size_t i = 0; i < n; i++) {
        assert(!rs_op_is_write(reqs[i].op));
        marked[i] = reqs[i];
        rs_req_mark_secrets(&marked[i]);
    }
    tp_batch_forward(t, marked, resps, n, parallelism);
    free(marked);
}

int tp_kube_get(rs_transport *t, const char *kind, const char *ns, const char *name, rs_resp *r)
{
    rs_req req = {.op = RS_OP_KUBE_GET, .kind = kind, .ns = ns, .name = name};
    return tp_call(t, &req, r);
}

int tp_kube_list(rs_transport *t, const char *kind, const char *ns, const char *label_selector,
                 const char *field_selector, rs_resp *r)
{
    rs_req req = {.op = RS_OP_KUBE_LIST,
                  .kind = kind,
                  .ns = ns,
                  .label_selector = label_selector,
                  .field_selector = field_selector};
    return tp_call(t, &req, r);
}

int tp_openbao_read(rs_transport *t, const char *mount, const char *path, rs_resp *r)
{
    rs_req req = {.op = RS_OP_OPENBAO_READ, .mount = mount, .target = path};
    return tp_call(t, &req, r);
}
