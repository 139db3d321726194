/*
 * fence_busy.c — why a Kustomization never quiesced (DESIGN.md §3.4; H43,
 * H44, H45). "Still reconciling" alone sends an operator hunting: the error
 * names the Reconciling condition's reason and message and, for every
 * dependency the Kustomization waits on that is not Ready, that dependency
 * and its Ready message. A dependency that cannot be read is named in a
 * warning; the run's exit and cleanup do not depend on it.
 */
#include "core/txn_int.h"

#include <stdio.h>
#include <string.h>

/* The condition of `type` in obj's status, or NULL. */
static const cJSON *busy_condition(const cJSON *obj, const char *type)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(obj, "status");
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(st, "conditions"))
    {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "type");
        if (cJSON_IsString(t) && strcmp(t->valuestring, type) == 0) return c;
    }
    return NULL;
}

/* Appends " (reason: message)" of a condition, or nothing. */
static void busy_append_cond(char *buf, size_t len, const cJSON *cond)
{
    const char *reason = cond ? kobj_str(cond, "reason") : NULL;
    const char *msg = cond ? kobj_str(cond, "message") : NULL;
    if (!reason && !msg) return;
    size_t used = strlen(buf);
    if (used >= len) return;
    snprintf(buf + used, len - used, " (%s%s%s)", reason ? reason : "", reason && msg ? ": " : "",
             msg ? msg : "");
}

static void busy_append(char *buf, size_t len, const char *text)
{
    size_t used = strlen(buf);
    if (used < len) snprintf(buf + used, len - used, "%s", text);
}

/* One dependsOn entry: read it; name it when it is not Ready or unreadable. */
static void busy_dependency(rs_txn *tx, const char *ns, const char *name, char *buf, size_t len)
{
    rs_resp r;
    int st = kobj_get(tx, "Kustomization", ns, name, &r);
    char line[320];
    if (st != 200) {
        char why[256];
        kobj_describe(&r, why, sizeof why);
        out_warning(tx->out,
                    "reading dependency Kustomization %s/%s failed (%s); whether it is Ready is "
                    "unknown",
                    ns, name, why);
        snprintf(line, sizeof line, "; dependency Kustomization %s/%s could not be read (%s)", ns,
                 name, why);
        busy_append(buf, len, line);
    } else if (!kobj_condition_true(r.body, "Ready")) {
        snprintf(line, sizeof line, "; dependency Kustomization %s/%s is not Ready", ns, name);
        busy_append(buf, len, line);
        busy_append_cond(buf, len, busy_condition(r.body, "Ready"));
    }
    rs_resp_free(&r);
}

void fence_busy_why(rs_txn *tx, const cJSON *ks, const char *ns, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!ks) return;
    const cJSON *cond = busy_condition(ks, "Reconciling");
    if (cond) {
        busy_append(buf, len, ": Reconciling");
        busy_append_cond(buf, len, cond);
    }
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(ks, "spec");
    const cJSON *dep;
    cJSON_ArrayForEach(dep, cJSON_GetObjectItemCaseSensitive(spec, "dependsOn"))
    {
        const char *name = kobj_str(dep, "name");
        const char *dns = kobj_str(dep, "namespace");
        if (name && name[0]) busy_dependency(tx, dns && dns[0] ? dns : ns, name, buf, len);
    }
}
