/*
 * serve_talos.c — `/talos/<verb>` of `reassert sim serve` (see the header).
 *
 * One request becomes one talos.* call on the served root, through the
 * core's own door (tp_call), so it is counted, faulted, recorded and
 * redacted exactly as the in-process sim would count, fault, record and
 * redact the live transport's call. The request and the answer can carry
 * the registry credential; both are wiped once the envelope is printed.
 */
#include "sim/serve/serve_talos.h"

#include "core/cred/cred.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct st_verb {
    const char *name;
    rs_op op;
    const char *field; /* the one key besides "node" ("intent", "host", "image"), or NULL */
} st_verb;

static const st_verb st_verbs[] = {
    {"patch", RS_OP_TALOS_PATCH, "intent"},
    {"read-auth", RS_OP_TALOS_READ_AUTH, "host"},
    {"reboot", RS_OP_TALOS_REBOOT, NULL},
    {"image-remove", RS_OP_TALOS_IMAGE_REMOVE, "image"},
    {"image-pull", RS_OP_TALOS_IMAGE_PULL, "image"},
    {"etcd-status", RS_OP_TALOS_ETCD_STATUS, NULL},
    {"etcd-alarms", RS_OP_TALOS_ETCD_ALARMS, NULL},
};

/* {"error": msg} with HTTP status http; -1 only when out of memory. */
static int st_refuse(int http, const char *msg, int *status, char **out)
{
    cJSON *b = cJSON_CreateObject();
    if (!b || !cJSON_AddStringToObject(b, "error", msg)) {
        cJSON_Delete(b);
        return -1;
    }
    *out = cJSON_PrintUnformatted(b);
    cJSON_Delete(b);
    *status = http;
    return *out ? 0 : -1;
}

static const st_verb *st_verb_of(const char *path)
{
    for (size_t i = 0; path && i < sizeof st_verbs / sizeof st_verbs[0]; i++)
        if (strcmp(path, st_verbs[i].name) == 0) return &st_verbs[i];
    return NULL;
}

/* NULL when the request body fits the verb: an object with a non-empty
 * string "node", the verb's one field of the right type, nothing else. */
static const char *st_check(const st_verb *v, const cJSON *req)
{
    if (!cJSON_IsObject(req)) return "the request body must be a JSON object";
    const char *node = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "node"));
    if (!node || !node[0]) return "the request needs \"node\": a node name";
    if (v->field) {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(req, v->field);
        bool ok = strcmp(v->field, "intent") == 0 ? cJSON_IsObject(f)
                                                  : cJSON_IsString(f) && f->valuestring[0];
        if (!ok) return "the request lacks the verb's field (intent: object; host, image: string)";
    }
    for (const cJSON *it = req->child; it; it = it->next)
        if (strcmp(it->string, "node") != 0 && (!v->field || strcmp(it->string, v->field) != 0))
            return "the request has a key this verb does not take";
    return NULL;
}

static const char *st_sent_name(rs_sent s)
{
    return s == RS_SENT_YES ? "yes" : s == RS_SENT_NO ? "no" : "unknown";
}

/* The envelope of one answered call; resp->body moves into it. */
static cJSON *st_envelope(rs_resp *resp)
{
    cJSON *env = cJSON_CreateObject();
    if (!env) return NULL;
    cJSON_AddNumberToObject(env, "status", resp->status);
    cJSON_AddStringToObject(env, "sent", st_sent_name(resp->status ? RS_SENT_YES : resp->sent));
    if (resp->status == 0) cJSON_AddStringToObject(env, "error", resp->error);
    cJSON_AddItemToObject(env, "body", resp->body ? resp->body : cJSON_CreateNull());
    resp->body = NULL;
    return env;
}

int serve_talos_handle(rs_transport *root, const char *method, const char *path, const char *body,
                       size_t body_len, int *status, char **out)
{
    *out = NULL;
    const st_verb *v = st_verb_of(path);
    if (!v) return st_refuse(404, "unknown Talos verb", status, out);
    if (!method || strcmp(method, "POST") != 0)
        return st_refuse(405, "the Talos endpoints take POST", status, out);
    cJSON *req_json = body ? cJSON_ParseWithLength(body, body_len) : NULL;
    const char *bad = req_json ? st_check(v, req_json) : "the request body is not JSON";
    if (bad) {
        cred_json_wipe_delete(req_json);
        return st_refuse(400, bad, status, out);
    }
    const cJSON *field = v->field ? cJSON_GetObjectItemCaseSensitive(req_json, v->field) : NULL;
    cJSON *op_body = NULL; /* read-auth and image ops: the body the sim root reads */
    rs_req req = {.op = v->op,
                  .target =
                      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req_json, "node"))};
    if (v->op == RS_OP_TALOS_PATCH) {
        req.body = field;
        const cJSON *ra = cJSON_GetObjectItemCaseSensitive(field, "registry-auth");
        req.host = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ra, "host"));
    } else if (field) {
        op_body = cJSON_CreateObject();
        if (!op_body || !cJSON_AddStringToObject(op_body, v->field, field->valuestring)) {
            cJSON_Delete(op_body);
            cred_json_wipe_delete(req_json);
            return -1;
        }
        req.body = op_body;
        if (v->op == RS_OP_TALOS_READ_AUTH) req.host = field->valuestring;
    }
    rs_resp resp;
    tp_call(root, &req, &resp);
    cJSON_Delete(op_body);
    cred_json_wipe_delete(req_json);
    cJSON *env = st_envelope(&resp);
    rs_resp_free(&resp);
    *out = env ? cJSON_PrintUnformatted(env) : NULL;
    cred_json_wipe_delete(env);
    *status = 200;
    return *out ? 0 : -1;
}
