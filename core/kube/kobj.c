/*
 * kobj.c — reading and CAS-writing Kubernetes objects through the gate.
 *
 * Every Secret write is a JSON Patch whose first operation tests the
 * resourceVersion that was read, so a concurrent writer makes it fail (422)
 * instead of being silently overwritten. A write whose response is lost is
 * resolved by re-reading (DESIGN.md §3.3 "Ambiguous writes"): our value =>
 * adopt; the old value => retry under CAS; anything else => fail closed.
 */
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
    return cJSON_IsString(cur) ? cur->valuestring : NULL;
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
        snprintf(buf, len, "transport error (%s)", r->error[0] ? r->error : "no response");
        return;
    }
    const char *reason = r->body ? kobj_str(r->body, "reason") : NULL;
    const char *msg = r->body ? kobj_str(r->body, "message") : NULL;
    snprintf(buf, len, "HTTP %d%s%s%s%s%s", r->status, reason || msg ? " (" : "",
             reason ? reason : "", reason && msg ? ": " : "", msg ? msg : "",
             reason || msg ? ")" : "");
}

int kobj_secret_read(rs_txn *tx, const char *ns, const char *name, const char *key, char **text,
                     size_t *len, char rv[TX_RV_MAX])
{
    *text = NULL;
    *len = 0;
    if (rv) rv[0] = '\0';
    rs_req req = {.op = RS_OP_KUBE_GET, .kind = "Secret", .ns = ns, .name = name};
    rs_resp r;
    int status = gate_read(&tx->gate, &req, &r);
    if (status == 200 && r.body) {
        if (rv) snprintf(rv, TX_RV_MAX, "%s", kobj_rv(r.body));
        const cJSON *data = cJSON_GetObjectItemCaseSensitive(r.body, "data");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(data, key);
        if (cJSON_IsString(v)) *text = (char *)base64_decode(v->valuestring, len);
    }
    rs_resp_free(&r);
    return status;
}

/* "/data/<key>" with RFC 6901 escapes. */
static char *data_pointer(const char *key)
{
    size_t n = strlen(key);
    char *p = rs_xmalloc(6 + 2 * n + 1);
    strcpy(p, "/data/");
    char *o = p + 6;
    for (size_t i = 0; i < n; i++) {
        if (key[i] == '~') {
            *o++ = '~';
            *o++ = '0';
        } else if (key[i] == '/') {
            *o++ = '~';
            *o++ = '1';
        } else {
            *o++ = key[i];
        }
    }
    *o = '\0';
    return p;
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
        char *ptr = data_pointer(key);
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

/* Reads the Secret and classifies its key against the desired credential. */
static int secret_classify(rs_txn *tx, const char *ns, const char *name, const char *key,
                           char rv[TX_RV_MAX], bool *has_data, secret_state *state)
{
    rs_req req = {.op = RS_OP_KUBE_GET, .kind = "Secret", .ns = ns, .name = name};
    rs_resp r;
    int status = gate_read(&tx->gate, &req, &r);
    *has_data = false;
    *state = SECRET_ABSENT_KEY;
    if (status == 200 && r.body) {
        snprintf(rv, TX_RV_MAX, "%s", kobj_rv(r.body));
        const cJSON *data = cJSON_GetObjectItemCaseSensitive(r.body, "data");
        *has_data = cJSON_IsObject(data);
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(data, key);
        if (cJSON_IsString(v)) {
            size_t len = 0;
            char *text = (char *)base64_decode(v->valuestring, &len);
            *state =
                text && cred_matches_text(&tx->cred, text, len) ? SECRET_DESIRED : SECRET_OTHER;
            cred_bytes_wipe_free(text, len);
        }
    }
    rs_resp_free(&r);
    return status;
}

/* Creates a missing Secret holding the credential (bootstrap of a fresh
 * cluster's root secret). A lost response is adopted only if the re-read
 * shows our value. */
static tx_status secret_create_desired(rs_txn *tx, gate_need need, const char *ns, const char *name,
                                       const char *key, const char *b64)
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
    rs_req req = {.op = RS_OP_KUBE_CREATE, .kind = "Secret", .ns = ns, .body = obj};
    rs_resp r;
    gate_result g = gate_write(&tx->gate, need, &req, &r, &tx->err);
    cJSON_Delete(obj);
    if (g != GATE_WRITTEN) {
        rs_resp_free(&r);
        return g == GATE_FENCE_TAKEN ? TX_RESTART : TX_FAIL;
    }
    int st = r.status;
    char why[256];
    kobj_describe(&r, why, sizeof why);
    rs_resp_free(&r);
    if (st == 201 || st == 200) return TX_OK;
    if (st == 0) {
        char rv[TX_RV_MAX];
        bool has_data;
        secret_state now;
        if (secret_classify(tx, ns, name, key, rv, &has_data, &now) == 200 && now == SECRET_DESIRED)
            return TX_OK;
    }
    rs_fail(&tx->err, RS_FAILED, "creating Secret %s/%s: %s", ns, name, why);
    return TX_FAIL;
}

tx_status kobj_secret_put_desired(rs_txn *tx, gate_need need, const char *ns, const char *name,
                                  const char *key)
{
    char *b64 = base64_encode(tx->desired_text, tx->desired_len);
    tx_status result = TX_FAIL;
    secret_state before = SECRET_ABSENT_KEY;
    for (int attempt = 0; attempt < TX_CAS_ATTEMPTS_MAX; attempt++) {
        char rv[TX_RV_MAX] = "";
        bool has_data = false;
        secret_state state;
        int st = secret_classify(tx, ns, name, key, rv, &has_data, &state);
        if (st == 404) {
            result = secret_create_desired(tx, need, ns, name, key, b64);
            break;
        }
        if (st != 200) {
            rs_fail(&tx->err, RS_FAILED, "reading Secret %s/%s before writing it: HTTP %d", ns,
                    name, st);
            break;
        }
        if (attempt == 0) before = state;
        cJSON *patch = secret_patch(rv, key, b64, has_data);
        int ws = 0;
        char why[256];
        gate_result g = kobj_gated_patch(tx, need, "Secret", ns, name, patch, &ws, why, sizeof why);
        if (g != GATE_WRITTEN) {
            result = g == GATE_FENCE_TAKEN ? TX_RESTART : TX_FAIL;
            break;
        }
        if (ws == 200) {
            result = TX_OK;
            break;
        }
        if (ws == 409 || ws == 422) continue; /* someone else wrote: re-read, retry */
        if (ws != 0) {
            rs_fail(&tx->err, RS_FAILED, "writing Secret %s/%s: %s", ns, name, why);
            break;
        }
        /* Lost response: the write may or may not have been applied. */
        char rv2[TX_RV_MAX] = "";
        secret_state now;
        if (secret_classify(tx, ns, name, key, rv2, &has_data, &now) != 200) {
            rs_fail(&tx->err, RS_FAILED,
                    "Secret %s/%s: write response lost and the re-read failed; failing closed", ns,
                    name);
            break;
        }
        if (now == SECRET_DESIRED) {
            out_info(tx->out, "Secret %s/%s: write response lost; re-read shows our value, adopted",
                     ns, name);
            result = TX_OK;
            break;
        }
        if (now != before || strcmp(rv2, rv) != 0) {
            rs_fail(&tx->err, RS_FAILED,
                    "Secret %s/%s: write response lost and the object now holds neither our value "
                    "nor the one we replaced; failing closed",
                    ns, name);
            break;
        }
    }
    if (result == TX_FAIL && tx->err.msg[0] == '\0')
        rs_fail(&tx->err, RS_FAILED, "writing Secret %s/%s: still conflicting after %d attempts",
                ns, name, TX_CAS_ATTEMPTS_MAX);
    free(b64);
    return result;
}

int kobj_list(rs_txn *tx, const char *kind, const char *ns, const char *label_selector,
              const char *field_selector, rs_resp *r)
{
    rs_req req = {.op = RS_OP_KUBE_LIST,
                  .kind = kind,
                  .ns = ns,
                  .label_selector = label_selector,
                  .field_selector = field_selector};
    return gate_read(&tx->gate, &req, r);
}

const cJSON *kobj_list_find_ns(const cJSON *list, const char *ns)
{
    const cJSON *items = list ? cJSON_GetObjectItemCaseSensitive(list, "items") : NULL;
    const cJSON *it;
    cJSON_ArrayForEach(it, items)
    {
        const char *n = kobj_str(it, "metadata.namespace");
        if (n && strcmp(n, ns) == 0) return it;
    }
    return NULL;
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
    return gate_read(&tx->gate, &req, r);
}

void kobj_patch_op(cJSON *patch, const char *op, const char *path, cJSON *value)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "op", op);
    cJSON_AddStringToObject(o, "path", path);
    if (value) cJSON_AddItemToObject(o, "value", value);
    cJSON_AddItemToArray(patch, o);
}

char *kobj_annotation_pointer(const char *key)
{
    size_t n = strlen(key);
    char *p = rs_xmalloc(strlen("/metadata/annotations/") + 2 * n + 1);
    char *o = p + sprintf(p, "/metadata/annotations/");
    for (size_t i = 0; i < n; i++) {
        if (key[i] == '~') {
            *o++ = '~';
            *o++ = '0';
        } else if (key[i] == '/') {
            *o++ = '~';
            *o++ = '1';
        } else {
            *o++ = key[i];
        }
    }
    *o = '\0';
    return p;
}

int kobj_get(rs_txn *tx, const char *kind, const char *ns, const char *name, rs_resp *r)
{
    rs_req req = {.op = RS_OP_KUBE_GET, .kind = kind, .ns = ns, .name = name};
    return gate_read(&tx->gate, &req, r);
}

bool kobj_bool(const cJSON *obj, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, a), b);
    return cJSON_IsTrue(x);
}

int kobj_fence_patch(rs_txn *tx, const char *kind, const char *ns, const char *name, cJSON *patch)
{
    rs_req req = {.op = RS_OP_KUBE_PATCH,
                  .kind = kind,
                  .ns = ns,
                  .name = name,
                  .patch_type = RS_PATCH_JSON,
                  .body = patch};
    rs_resp w;
    int st = gate_fence_write(&tx->gate, &req, &w);
    cJSON_Delete(patch);
    rs_resp_free(&w);
    return st;
}

gate_result kobj_gated_patch(rs_txn *tx, gate_need need, const char *kind, const char *ns,
                             const char *name, cJSON *patch, int *status, char *why, size_t whylen)
{
    rs_req req = {.op = RS_OP_KUBE_PATCH,
                  .kind = kind,
                  .ns = ns,
                  .name = name,
                  .patch_type = RS_PATCH_JSON,
                  .body = patch};
    rs_resp w;
    gate_result g = gate_write(&tx->gate, need, &req, &w, &tx->err);
    cJSON_Delete(patch);
    *status = w.status;
    if (why) kobj_describe(&w, why, whylen);
    rs_resp_free(&w);
    return g;
}
