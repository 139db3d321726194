/*
 * live_talos.c — Talos intents to machine-config patches (see the header).
 */
#include "core/live/live_talos.h"

#include "core/cred/cred.h"

#include <stdlib.h>
#include <string.h>

/* s as a YAML double-quoted scalar (JSON string syntax is valid YAML). */
static char *yaml_quoted(const char *s)
{
    cJSON *str = cJSON_CreateString(s);
    char *q = cJSON_PrintUnformatted(str);
    cJSON_Delete(str);
    return q;
}

char *live_talos_auth_patch(const cJSON *intent, rs_talos_auth_shape shape, rs_err *e)
{
    const cJSON *ra = cJSON_GetObjectItemCaseSensitive(intent, "registry-auth");
    const cJSON *auth = cJSON_GetObjectItemCaseSensitive(ra, "auth");
    const char *host = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ra, "host"));
    const char *user = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(auth, "username"));
    const char *pass = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(auth, "password"));
    if (!host || !host[0] || !user || !user[0] || !pass || !pass[0]) {
        rs_fail(e, RS_DATAERR,
                "Talos registry-auth intent needs host, auth.username and auth.password");
        return NULL;
    }
    if (shape == RS_TALOS_AUTH_LEGACY) {
        /* machine.registries.config.<host>.auth, as a strategic merge patch. */
        cJSON *p = cJSON_CreateObject();
        cJSON *h = cJSON_AddObjectToObject(
            cJSON_AddObjectToObject(
                cJSON_AddObjectToObject(cJSON_AddObjectToObject(p, "machine"), "registries"),
                "config"),
            host);
        cJSON *a = cJSON_AddObjectToObject(h, "auth");
        cJSON_AddStringToObject(a, "username", user);
        cJSON_AddStringToObject(a, "password", pass);
        char *text = cJSON_PrintUnformatted(p);
        cred_json_wipe_delete(p);
        return text;
    }
    char *qh = yaml_quoted(host), *qu = yaml_quoted(user), *qp = yaml_quoted(pass);
    char *text = rs_xasprintf("apiVersion: v1alpha1\n"
                              "kind: RegistryAuthConfig\n"
                              "name: %s\n"
                              "username: %s\n"
                              "password: %s\n",
                              qh, qu, qp);
    free(qh);
    free(qu);
    cred_text_wipe_free(qp);
    return text;
}

char *live_talos_annotations_patch(const cJSON *intent, rs_err *e)
{
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(intent, "node-annotations");
    if (!cJSON_IsObject(ann) || !ann->child) {
        rs_fail(e, RS_DATAERR, "Talos node-annotations intent needs at least one annotation");
        return NULL;
    }
    cJSON *p = cJSON_CreateObject();
    cJSON *out = cJSON_AddObjectToObject(cJSON_AddObjectToObject(p, "machine"), "nodeAnnotations");
    for (const cJSON *it = ann->child; it; it = it->next) {
        if (!it->string[0] || !cJSON_IsString(it)) {
            cJSON_Delete(p);
            rs_fail(e, RS_DATAERR,
                    "Talos node-annotations intent: every annotation needs a name and a string "
                    "value (a merge patch cannot remove one)");
            return NULL;
        }
        cJSON_AddStringToObject(out, it->string, it->valuestring);
    }
    char *text = cJSON_PrintUnformatted(p);
    cJSON_Delete(p);
    return text;
}
