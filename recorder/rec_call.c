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
