/*
 * rec_call.c — a call as cassette text (see the header).
 *
 * Secrets are learnt from the marked values before anything is redacted,
 * so a value marked secret in this very call is already an atom when the
 * rest of the call (an error message quoting it, say) is redacted.
 */
#include "recorder/rec_call.h"

#include "core/cred/cred.h"
#include "core/rs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *rec_patch_name(rs_patch_type p)
{
    switch (p) {
    case RS_PATCH_JSON:
        return "json";
    case RS_PATCH_MERGE:
        return "merge";
    case RS_PATCH_STRATEGIC:
        return "strategic";
    default:
        return NULL;
    }
}

static void rec_add_str(cJSON *o, const char *k, const char *v)
{
    if (v) cJSON_AddStringToObject(o, k, v);
}

/* The marked values redacted: every string through the atoms, then any
 * marked value left as it was fingerprinted whole. */
static char *rec_doc_text(rec_redactor *r, cJSON *doc, const rs_secret_marks *marks)
{
    rec_redact_json(r, doc);
    rec_redact_marked(r, doc, marks);
    char *s = cJSON_PrintUnformatted(doc);
    cred_json_wipe_delete(doc);
    return s;
}

/* A JSON patch of a Secret is marked "/STAR/value" (every op's value). Only
 * the ops on /data and /stringData carry the secret; the others (the
 * resourceVersion a `test` op pins) are public, and fingerprinting them
 * would make a replayed request differ where the core sent the same thing. */
static bool rec_patch_op_secret(const cJSON *op)
{
    const char *path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(op, "path"));
    return !path || strncmp(path, "/data", 5) == 0 || strncmp(path, "/stringData", 11) == 0;
}

static bool rec_is_json_patch(const rs_req *req)
{
    return req->op == RS_OP_KUBE_PATCH && req->patch_type == RS_PATCH_JSON &&
           cJSON_IsArray(req->body);
}

static void rec_patch_marked(rec_redactor *r, cJSON *body, bool learn)
{
    static const rs_secret_marks value = {{"/value", NULL}};
    cJSON *op;
    cJSON_ArrayForEach(op, body)
    {
        if (!rec_patch_op_secret(op)) continue;
        if (learn)
            rec_redactor_learn_marked(r, op, &value);
        else
            rec_redact_marked(r, op, &value);
    }
}

void rec_call_learn(rec_redactor *r, const rs_req *req)
{
    if (rec_is_json_patch(req))
        rec_patch_marked(r, (cJSON *)req->body, true);
    else
        rec_redactor_learn_marked(r, (cJSON *)req->body, &req->secret);
}

char *rec_call_request(rec_redactor *r, const rs_req *req)
{
    rec_call_learn(r, req);
    cJSON *o = cJSON_CreateObject();
    rec_add_str(o, "kind", req->kind);
    rec_add_str(o, "ns", req->ns);
    rec_add_str(o, "name", req->name);
    rec_add_str(o, "label_selector", req->label_selector);
    rec_add_str(o, "field_selector", req->field_selector);
    rec_add_str(o, "patch_type", rec_patch_name(req->patch_type));
    rec_add_str(o, "target", req->target);
    rec_add_str(o, "mount", req->mount);
    rec_add_str(o, "host", req->host);
    if (req->body) cJSON_AddItemToObject(o, "body", cJSON_Duplicate(req->body, 1));
    rec_redact_json(r, o);
    cJSON *body = cJSON_GetObjectItemCaseSensitive(o, "body");
    if (rec_is_json_patch(req))
        rec_patch_marked(r, body, false);
    else
        rec_redact_marked(r, body, &req->secret);
    char *s = cJSON_PrintUnformatted(o);
    cred_json_wipe_delete(o);
    return s;
}

char *rec_call_target(rec_redactor *r, const rs_req *req)
{
    char *t = rs_req_target(req);
    char *red = rec_redact_string(r, t);
    free(t);
    return red;
}

char *rec_call_rewrite(rec_redactor *r, int column, const char *text)
{
    cJSON *doc = column == REC_COL_REQUEST || column == REC_COL_RESPONSE ? cJSON_Parse(text) : NULL;
    char *out;
    if (doc) {
        rec_redact_json(r, doc);
        out = cJSON_PrintUnformatted(doc);
        cred_json_wipe_delete(doc);
    } else {
        out = rec_redact_string(r, text);
    }
    if (out && strcmp(out, text) == 0) {
        free(out);
        return NULL;
    }
    return out;
}

char *rec_call_response(rec_redactor *r, const rs_resp *resp)
{
    if (!resp->body) return NULL;
    rec_redactor_learn_marked(r, resp->body, &resp->secret);
    return rec_doc_text(r, cJSON_Duplicate(resp->body, 1), &resp->secret);
}

/* ---- the shape of a recorded call ---- */

static const char *rec_type_name(const cJSON *v)
{
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsBool(v)) return "true or false";
    if (cJSON_IsNull(v)) return "null";
    if (cJSON_IsArray(v)) return "an array";
    return "an object";
}

/* The request fields rec_call_request writes (all strings but body). */
static const char *const rec_req_fields[] = {
    "kind",       "ns",     "name",  "label_selector", "field_selector",
    "patch_type", "target", "mount", "host",           "body"};

static bool rec_bad_field(char *why, size_t len, const char *col, const char *field,
                          const char *want, const cJSON *got)
{
    snprintf(why, len, "calls.%s field %s: expected %s, found %s", col, field, want,
             got ? rec_type_name(got) : "none");
    return false;
}

static bool rec_req_shape(rs_op op, const cJSON *req, char *why, size_t len)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, req)
    {
        bool known = false;
        for (size_t i = 0; i < RS_ARRAY_LEN(rec_req_fields) && !known; i++)
            known = strcmp(it->string, rec_req_fields[i]) == 0;
        if (!known) {
            snprintf(why, len, "calls.request field %.60s: not a field a recorded request has",
                     it->string);
            return false;
        }
        if (strcmp(it->string, "body") != 0 && !cJSON_IsString(it))
            return rec_bad_field(why, len, "request", it->string, "a string", it);
    }
    const char *pt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "patch_type"));
    const cJSON *body = cJSON_GetObjectItemCaseSensitive(req, "body");
    bool json_patch = pt && strcmp(pt, "json") == 0;
    if (pt && !json_patch && strcmp(pt, "merge") != 0 && strcmp(pt, "strategic") != 0)
        return rec_bad_field(why, len, "request", "patch_type", "json, merge or strategic", NULL);
    if (body && json_patch && !cJSON_IsArray(body))
        return rec_bad_field(why, len, "request", "body", "an array (a JSON patch)", body);
    if (body && !json_patch && !cJSON_IsObject(body))
        return rec_bad_field(why, len, "request", "body", "an object", body);
    bool kube = op <= RS_OP_KUBE_EVICT;
    const char *need[3] = {NULL, NULL, NULL};
    if (kube) need[0] = "kind";
    if (op == RS_OP_KUBE_GET || op == RS_OP_KUBE_PATCH || op == RS_OP_KUBE_DELETE ||
        op == RS_OP_KUBE_EVICT)
        need[1] = "name";
    if (op == RS_OP_KUBE_PATCH) need[2] = "patch_type";
    if (!kube) need[0] = "target";
    for (size_t i = 0; i < RS_ARRAY_LEN(need); i++)
        if (need[i] && !cJSON_GetObjectItemCaseSensitive(req, need[i]))
            return rec_bad_field(why, len, "request", need[i], "a string", NULL);
    return true;
}

/* The fields of an answer the core reads, and the type each has, by op
 * (RS_OP_COUNT: every kube.* op). */
static const struct {
    rs_op op;
    const char *field;
    int type; /* cJSON_String, cJSON_Object, cJSON_Array, cJSON_True (a bool) */
} rec_resp_fields[] = {
    {RS_OP_COUNT, "metadata", cJSON_Object},
    {RS_OP_COUNT, "items", cJSON_Array},
    {RS_OP_REGISTRY_TOKEN, "token", cJSON_String},
    {RS_OP_REGISTRY_MANIFEST, "digest", cJSON_String},
    {RS_OP_OPENBAO_READ, "data", cJSON_Object},
    {RS_OP_RUN_LIVENESS, "terminal", cJSON_True},
    {RS_OP_TALOS_READ_AUTH, "auth", cJSON_Object},
    {RS_OP_TALOS_READ_AUTH, "redacted", cJSON_True},
    {RS_OP_TALOS_ETCD_STATUS, "healthy", cJSON_True},
    {RS_OP_TALOS_ETCD_STATUS, "learner", cJSON_True},
    {RS_OP_TALOS_ETCD_STATUS, "output", cJSON_String},
    {RS_OP_TALOS_ETCD_ALARMS, "alarms", cJSON_Array},
};

static bool rec_type_is(const cJSON *v, int type)
{
    if (type == cJSON_True) return cJSON_IsBool(v);
    return (v->type & 0xFF) == type;
}

static bool rec_resp_shape(rs_op op, const cJSON *resp, char *why, size_t len)
{
    if (!cJSON_IsObject(resp)) {
        snprintf(why, len, "calls.response: expected an object (the answer of a %s), found %s",
                 rs_op_name(op), rec_type_name(resp));
        return false;
    }
    bool kube = op <= RS_OP_KUBE_EVICT;
    for (size_t i = 0; i < RS_ARRAY_LEN(rec_resp_fields); i++) {
        rs_op of = rec_resp_fields[i].op;
        if (of == RS_OP_COUNT ? !kube : of != op) continue;
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(resp, rec_resp_fields[i].field);
        /* An API server may encode an empty list's items as null. */
        if (!v || cJSON_IsNull(v) || rec_type_is(v, rec_resp_fields[i].type)) continue;
        const char *want = rec_resp_fields[i].type == cJSON_Object   ? "an object"
                           : rec_resp_fields[i].type == cJSON_Array  ? "an array"
                           : rec_resp_fields[i].type == cJSON_String ? "a string"
                                                                     : "true or false";
        return rec_bad_field(why, len, "response", rec_resp_fields[i].field, want, v);
    }
    return true;
}

bool rec_call_shape(rs_op op, const cJSON *req, const cJSON *resp, char *why, size_t len)
{
    if (req && !rec_req_shape(op, req, why, len)) return false;
    return !resp || rec_resp_shape(op, resp, why, len);
}
