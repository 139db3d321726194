/*
 * transport.c — naming of operations (the §5 names faults, `during:` entries
 * and cassettes match on) and small request builders.
 */
#include "core/transport/transport.h"

#include "core/cred/cred.h"

#include "core/rs.h"

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
    bool has_ns = req->ns && req->ns[0];
    bool has_name = req->name && req->name[0];
    if (has_ns && has_name) return rs_xasprintf("%s/%s/%s", kind, req->ns, req->name);
    if (has_ns) return rs_xasprintf("%s/%s", kind, req->ns);
    if (has_name) return rs_xasprintf("%s/%s", kind, req->name);
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

int tp_kube_get(rs_transport *t, const char *kind, const char *ns, const char *name, rs_resp *r)
{
    rs_req req = {.op = RS_OP_KUBE_GET, .kind = kind, .ns = ns, .name = name};
    return t->call(t, &req, r);
}

int tp_kube_list(rs_transport *t, const char *kind, const char *ns, const char *label_selector,
                 const char *field_selector, rs_resp *r)
{
    rs_req req = {.op = RS_OP_KUBE_LIST,
                  .kind = kind,
                  .ns = ns,
                  .label_selector = label_selector,
                  .field_selector = field_selector};
    return t->call(t, &req, r);
}

int tp_openbao_read(rs_transport *t, const char *path, rs_resp *r)
{
    rs_req req = {.op = RS_OP_OPENBAO_READ, .target = path};
    return t->call(t, &req, r);
}
