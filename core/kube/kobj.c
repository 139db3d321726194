/*
 * kobj.c — reading and CAS-writing Kubernetes objects through the gate.
 *
 * Every Secret write is a JSON Patch whose first operation tests the
 * resourceVersion that was read, so a concurrent writer makes it fail (422)
 * instead of being silently overwritten. A write whose response is lost is
 * resolved by re-reading (DESIGN.md §3.3 "Ambiguous writes"): our value =>
 * adopt; the old value => retry under CAS; anything else => fail closed.
 */
#include "core/kube/kube_cas.h"
#include "core/kube/kube_pointer.h"
#include "core/txn_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *kobj_str(const cJSON *obj, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    const cJSON *cur = obj;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ".", &save); tok && cur; tok = strtok_r(NULL, ".", &save))
        cur = cJSON_GetObjectItemCaseSensitive(cur, tok);
    return cur && cJSON_IsString(cur) ? cur->valuestring : NULL;
}

const char *kobj_rv(const cJSON *obj)
{
    const char *rv = kobj_str(obj, "metadata.resourceVersion");
    return rv ? rv : "";
}

const char *kobj_annotation(const cJSON *obj, const char *key)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *an = cJSON_GetObjectItemCaseSensitive(md, "annotations");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(an, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

bool kobj_condition_true(const cJSON *obj, const char *type)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(obj, "status");
    const cJSON *conds = cJSON_GetObjectItemCaseSensitive(st, "conditions");
    const cJSON *c;
    cJSON_ArrayForEach(c, conds)
    {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "type");
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(c, "status");
        if (cJSON_IsString(t) && strcmp(t->valuestring, type) == 0)
            return cJSON_IsString(s) && strcmp(s->valuestring, "True") == 0;
    }
    return false;
}

void kobj_describe(const rs_resp *r, char *buf, size_t len)
{
    if (r->status == 0) {
        snprintf(buf, len, "%s", rs_answer_of(r).text);
        return;
    }
    const char *reason = r->body ? kobj_str(r->body, "reason") : NULL;
    const char *msg = r->body ? kobj_str(r->body, "message") : NULL;
    snprintf(buf, len, "HTTP %d%s%s%s%s%s", r->status, reason || msg ? " (" : "",
             reason ? reason : "", reason && msg ? ": " : "", msg ? msg : "",
             reason || msg ? ")" : "");
}

int kobj_secret_read(rs_txn *tx, const char *ns, const char *name, const char *key, char **text,
                     size_t *len, char rv[TX_RV_MAX], rs_answer *ans)
{
    *text = NULL;
    *len = 0;
    if (rv) rv[0] = '\0';
    rs_req req = {.op = RS_OP_KUBE_GET, .kind = "Secret", .ns = ns, .name = name};
    rs_resp r;
    int status = gate_read(tx->gate, &req, &r);
    if (ans) *ans = rs_answer_of(&r);
    if (status == 200 && r.body) {
        if (rv) snprintf(rv, TX_RV_MAX, "%s", kobj_rv(r.body));
        const cJSON *data = cJSON_GetObjectItemCaseSensitive(r.body, "data");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(data, key);
        if (cJSON_IsString(v)) *text = (char *)base64_decode(v->valuestring, len);
    }
    rs_resp_free(&r);
    return status;
}

static cJSON *secret_patch(const char *rv, const char *key, const char *b64, bool has_data)
{
    cJSON *patch = cJSON_CreateArray();
    cJSON *test = cJSON_CreateObject();
    cJSON_AddStringToObject(test, "op", "test");
    cJSON_AddStringToObject(test, "path", "/metadata/resourceVersion");
    cJSON_AddStringToObject(test, "value", rv);
    cJSON_AddItemToArray(patch, test);
    cJSON *add = cJSON_CreateObject();
    cJSON_AddStringToObject(add, "op", "add");
    if (has_data) {
        char *ptr = kube_pointer_join("/data/", key);
        cJSON_AddStringToObject(add, "path", ptr);
        free(ptr);
        cJSON_AddStringToObject(add, "value", b64);
    } else {
        cJSON_AddStringToObject(add, "path", "/data");
        cJSON *data = cJSON_AddObjectToObject(add, "value");
        cJSON_AddStringToObject(data, key, b64);
    }
    cJSON_AddItemToArray(patch, add);
    return patch;
}

typedef enum secret_state { SECRET_DESIRED, SECRET_OTHER, SECRET_ABSENT_KEY } secret_state;

/* Classifies a read Secret's key against the desired credential. */
static secret_state secret_classify(rs_txn *tx, const cJSON *secret, const char *key)
{
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(secret, "data");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(data, key);
    if (!cJSON_IsString(v)) return SECRET_ABSENT_KEY;
    size_t len = 0;
    char *text = (char *)base64_decode(v->valuestring, &len);
    secret_state state =
        text && cred_matches_text(&tx->cred, text, len) ? SECRET_DESIRED : SECRET_OTHER;
    cred_bytes_wipe_free(text, len);
    return state;
}

/* A missing Secret holding the credential (bootstrap of a fresh cluster's
 * root secret). */
static cJSON *secret_object(const char *ns, const char *name, const char *key, const char *b64)
{
    cJSON *obj = cJSON_CreateObject();
    cJSON_AddStringToObject(obj, "apiVersion", "v1");
    cJSON_AddStringToObject(obj, "kind", "Secret");
    cJSON *md = cJSON_AddObjectToObject(obj, "metadata");
    cJSON_AddStringToObject(md, "name", name);
    cJSON_AddStringToObject(md, "namespace", ns);
    cJSON_AddStringToObject(obj, "type",
                            strcmp(key, ".dockerconfigjson") == 0 ? "kubernetes.io/dockerconfigjson"
                                                                  : "Opaque");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(obj, "data"), key, b64);
    return obj;
}

typedef struct secret_put {
    rs_txn *tx;
    const char *ns, *name, *key, *b64;
    bool may_create;      /* absent, it is created (bootstrap); else absence fails closed */
    bool creating;        /* the last write sent was the create */
    secret_state before;  /* the key's state at the first read */
    char rv[TX_RV_MAX];   /* the resourceVersion the last patch tested */
    secret_state planned; /* the key's state when the last patch was planned */
} secret_put;

static kube_cas_step secret_put_plan(void *ctx, const kube_cas_view *v, kube_cas_req *w, rs_err *e)
{
    secret_put *p = ctx;
    if (v->read_status == 404 && !p->may_create) {
        /* H122: the fan-out's Secret vanished after discovery (another
         * actor deleted it). Re-creating it would hide that; only the
         * bootstrap of §3.2 writes a Secret that is not there. */
        rs_fail(e, RS_FAILED,
                "fan-out not initialized (Secret %s/%s is absent); root auth unchanged", p->ns,
                p->name);
        return KUBE_CAS_REFUSE;
    }
    p->creating = v->read_status == 404;
    if (p->creating) {
        w->op = RS_OP_KUBE_CREATE;
        w->body = secret_object(p->ns, p->name, p->key, p->b64);
        return KUBE_CAS_WRITE;
    }
    if (v->read_status != 200 || !v->cur) {
        rs_fail(e, RS_FAILED, "reading Secret %s/%s before writing it: %s", p->ns, p->name,
                v->read_answer.text);
        return KUBE_CAS_REFUSE;
    }
    snprintf(p->rv, sizeof p->rv, "%s", kobj_rv(v->cur));
    p->planned = secret_classify(p->tx, v->cur, p->key);
    if (v->attempt == 0) p->before = p->planned;
    bool has_data = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(v->cur, "data"));
    w->body = secret_patch(p->rv, p->key, p->b64, has_data);
    w->cas = true;
    return KUBE_CAS_WRITE;
}

/* After a lost answer: our value => adopt; a lost create is adopted only
 * then; the value and resourceVersion we planned from => retry under CAS;
 * anything else => fail closed. */
static kube_cas_seen secret_put_seen(void *ctx, int status, const cJSON *obj)
{
    secret_put *p = ctx;
    if (status != 200 || !obj) return KUBE_CAS_NOT_OURS;
    secret_state now = secret_classify(p->tx, obj, p->key);
    if (now == SECRET_DESIRED) return KUBE_CAS_ADOPT;
    if (p->creating || now != p->before || strcmp(kobj_rv(obj), p->rv) != 0)
        return KUBE_CAS_NOT_OURS;
    return KUBE_CAS_RETRY;
}

static tx_status secret_put_desired(rs_txn *tx, gate_need need, const char *ns, const char *name,
                                    const char *key, bool may_create)
{
    char *b64 = base64_encode(tx->desired_text, tx->desired_len);
    secret_put p = {
        .tx = tx, .ns = ns, .name = name, .key = key, .b64 = b64, .may_create = may_create};
    kube_cas_ops ops = {.kind = "Secret",
                        .ns = ns,
                        .name = name,
                        .door = KUBE_CAS_GATED,
                        .need = need,
                        .read = KUBE_CAS_PLAN_FROM_READ,
                        .attempts_max = TX_CAS_ATTEMPTS_MAX,
                        .plan = secret_put_plan,
                        .seen = secret_put_seen,
                        .ctx = &p};
    kube_cas_result res;
    kube_cas_end end = kube_cas_write(tx->gate, &ops, &res, &tx->err);
    free(b64);
    const char *verb = p.creating ? "creating" : "writing";
    switch (end) {
    case KUBE_CAS_ADOPTED:
        if (!p.creating)
            out_info(tx->out, "Secret %s/%s: write response lost; re-read shows our value, adopted",
                     ns, name);
        return TX_OK;
    case KUBE_CAS_WRITTEN:
    case KUBE_CAS_ALREADY:
        return TX_OK;
    case KUBE_CAS_RESTART:
        return TX_RESTART;
    case KUBE_CAS_REFUSED:
    case KUBE_CAS_GATE_FAILED:
        return TX_FAIL;
    case KUBE_CAS_UNRESOLVED:
        if (p.creating)
            rs_fail(&tx->err, RS_FAILED, "creating Secret %s/%s: %s", ns, name, res.why);
        else if (res.read_status != 200)
            rs_fail(&tx->err, RS_FAILED,
                    "Secret %s/%s: write response lost and the re-read failed; failing closed", ns,
                    name);
        else
            rs_fail(&tx->err, RS_FAILED,
                    "Secret %s/%s: write response lost and the object now holds neither our "
                    "value nor the one we replaced; failing closed",
                    ns, name);
        return TX_FAIL;
    case KUBE_CAS_FAILED:
        rs_fail(&tx->err, RS_FAILED, "%s Secret %s/%s: %s", verb, ns, name, res.why);
        return TX_FAIL;
    case KUBE_CAS_CONTENDED:
        break;
    }
    rs_fail(&tx->err, RS_FAILED, "writing Secret %s/%s: still conflicting after %d attempts", ns,
            name, TX_CAS_ATTEMPTS_MAX);
    return TX_FAIL;
}

tx_status kobj_secret_put_desired(rs_txn *tx, gate_need need, const char *ns, const char *name,
                                  const char *key)
{
    return secret_put_desired(tx, need, ns, name, key, true);
}

tx_status kobj_secret_patch_desired(rs_txn *tx, gate_need need, const char *ns, const char *name,
                                    const char *key)
{
    return secret_put_desired(tx, need, ns, name, key, false);
}

int kobj_list(rs_txn *tx, const char *kind, const char *ns, const char *label_selector,
              const char *field_selector, rs_resp *r)
{
    rs_req req = {.op = RS_OP_KUBE_LIST,
                  .kind = kind,
                  .ns = ns,
                  .label_selector = label_selector,
                  .field_selector = field_selector};
    return gate_read(tx->gate, &req, r);
}

bool kobj_secret_matches(rs_txn *tx, const cJSON *secret, const char *key)
{
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(secret, "data");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(data, key);
    if (!cJSON_IsString(v)) return false;
    size_t len = 0;
    char *text = (char *)base64_decode(v->valuestring, &len);
    bool ok = text && cred_matches_text(&tx->cred, text, len);
    cred_bytes_wipe_free(text, len);
    return ok;
}

int tp_openbao_read_gate(rs_txn *tx, rs_resp *r)
{
    rs_req req = {.op = RS_OP_OPENBAO_READ,
                  .mount = tx->cfg->openbao_mount, /* transport v2: the mount travels */
                  .target = tx->cfg->openbao_path};
    return gate_read(tx->gate, &req, r);
}

void kobj_patch_op(cJSON *patch, const char *op, const char *path, cJSON *value)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "op", op);
    cJSON_AddStringToObject(o, "path", path);
    if (value) cJSON_AddItemToObject(o, "value", value);
    cJSON_AddItemToArray(patch, o);
}

int kobj_get(rs_txn *tx, const char *kind, const char *ns, const char *name, rs_resp *r)
{
    rs_req req = {.op = RS_OP_KUBE_GET, .kind = kind, .ns = ns, .name = name};
    return gate_read(tx->gate, &req, r);
}

const char *kobj_lease_holder(const cJSON *lease, bool *present)
{
    bool here = false;
    const char *h = NULL;
    if (cJSON_IsObject(lease)) {
        const cJSON *spec = cJSON_GetObjectItemCaseSensitive(lease, "spec");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, "holderIdentity");
        bool spec_ok = !spec || cJSON_IsObject(spec);
        if (spec_ok && (!v || cJSON_IsString(v) || cJSON_IsNull(v))) {
            here = v && cJSON_IsString(v);
            h = here ? v->valuestring : "";
        }
    }
    if (present) *present = here;
    return h;
}

bool kobj_bool(const cJSON *obj, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, a), b);
    return cJSON_IsTrue(x);
}

typedef struct kobj_once {
    cJSON *patch;
    kube_cas_seen (*seen)(void *ctx, int status, const cJSON *obj);
    void *ctx;
} kobj_once;

static kube_cas_step kobj_once_plan(void *ctx, const kube_cas_view *v, kube_cas_req *w, rs_err *e)
{
    (void)v;
    (void)e;
    kobj_once *o = ctx;
    w->body = o->patch;
    o->patch = NULL;
    return KUBE_CAS_WRITE;
}

static kube_cas_seen kobj_once_seen(void *ctx, int status, const cJSON *obj)
{
    kobj_once *o = ctx;
    return o->seen(o->ctx, status, obj);
}

kube_cas_end kobj_patch_once(rs_txn *tx, kube_cas_door door, gate_need need, const char *kind,
                             const char *ns, const char *name, cJSON *patch,
                             kube_cas_seen (*seen)(void *ctx, int status, const cJSON *obj),
                             void *seen_ctx, kube_cas_result *res)
{
    kobj_once o = {.patch = patch, .seen = seen, .ctx = seen_ctx};
    kube_cas_ops ops = {.kind = kind,
                        .ns = ns,
                        .name = name,
                        .door = door,
                        .need = need,
                        .read = KUBE_CAS_PLAN_BLIND,
                        .attempts_max = 1,
                        .plan = kobj_once_plan,
                        .seen = seen ? kobj_once_seen : NULL,
                        .ctx = &o};
    kube_cas_end end = kube_cas_write(tx->gate, &ops, res, &tx->err);
    cJSON_Delete(o.patch); /* NULL once the plan handed it over */
    return end;
}
