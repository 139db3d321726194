/*
 * serve_kube_auth.c — who a request is and what it may do, as a client
 * asks the API server: SelfSubjectAccessReview (`kubectl auth can-i`) and
 * SelfSubjectReview (`kubectl auth whoami`).
 *
 * The one idea: the façade models authentication (a bearer token of
 * --token-file, a client certificate --client-ca signs) but no RBAC: an
 * authenticated request may do anything a path serves. So a review of an
 * authenticated identity is always allowed, and says why in its reason;
 * a request that is not authenticated never reaches here (401).
 */
#include "sim/serve/serve_int.h"

#include "core/cred/cred.h"

#include <string.h>

static cJSON *review_body(const serve_http *h, const char *kind, const char **why)
{
    if (serve_proto_is(h)) return serve_proto_decode(h, kind, why);
    bool malformed = false;
    cJSON *b = serve_body_json(h, &malformed);
    *why = "the body must be a JSON object";
    if (!cJSON_IsObject(b)) {
        cJSON_Delete(b);
        return NULL;
    }
    return b;
}

bool serve_kube_review(serve_server *s, const serve_http *h, const char *path, serve_answer *a)
{
    bool access = strcmp(path, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews") == 0;
    bool whoami = strcmp(path, "/apis/authentication.k8s.io/v1/selfsubjectreviews") == 0;
    if (!access && !whoami) return false;
    if (!serve_method_is(h, "POST")) {
        serve_answer_status(a, 405, "MethodNotAllowed",
                            "the server does not allow this method on the requested resource");
        return true;
    }
    const char *kind = access ? "SelfSubjectAccessReview" : "SelfSubjectReview";
    const char *why = NULL;
    cJSON *body = review_body(h, kind, &why);
    if (!body) {
        serve_answer_status(a, 400, "BadRequest", "%s", why);
        return true;
    }
    cJSON *out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "kind", kind);
    cJSON_AddStringToObject(out, "apiVersion",
                            access ? "authorization.k8s.io/v1" : "authentication.k8s.io/v1");
    cJSON_AddItemToObject(out, "metadata", cJSON_CreateObject());
    cJSON *status = cJSON_CreateObject();
    if (access) {
        cJSON *spec = cJSON_DetachItemFromObjectCaseSensitive(body, "spec");
        cJSON_AddItemToObject(out, "spec", spec ? spec : cJSON_CreateObject());
        cJSON_AddBoolToObject(status, "allowed", true);
        cJSON_AddStringToObject(status, "reason",
                                "sim serve models no RBAC: an authenticated request may do "
                                "anything it serves");
    } else {
        cJSON *user = cJSON_AddObjectToObject(status, "userInfo");
        cJSON_AddStringToObject(user, "username", serve_user(s, h));
        cJSON *groups = cJSON_AddArrayToObject(user, "groups");
        cJSON_AddItemToArray(groups, cJSON_CreateString("system:authenticated"));
    }
    cJSON_AddItemToObject(out, "status", status);
    cJSON_Delete(body);
    serve_answer_json(a, 201, out);
    return true;
}
