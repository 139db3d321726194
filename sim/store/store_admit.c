/*
 * store_admit.c — what the API server does to an object before it stores it,
 * for the kinds whose rules a real cluster would hold the core to (DESIGN
 * §3.3 r2, "Kubernetes facts"):
 *
 *   - Secret: `stringData` is merged into `data` (base64-encoded, winning
 *     over a `data` key of the same name) and dropped; a Secret whose data
 *     totals more than 1 MiB is rejected (422), as etcd's limit makes it.
 *   - Lease: `acquireTime` and `renewTime` are MicroTime: RFC 3339 with
 *     exactly six fractional digits and `Z` (H4); anything else is a 400.
 *
 * The one idea: the sim refuses what a cluster refuses, so a core that
 * would break on a real API server breaks in a scenario first.
 */
#include "sim/store/store_int.h"

#include "core/cred/cred.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STORE_SECRET_MAX (1024 * 1024) /* bytes of decoded data */

static int admit_secret(const store_kind_info *ki, const char *name, cJSON *obj, cJSON **out)
{
    cJSON *sd = cJSON_DetachItemFromObjectCaseSensitive(obj, "stringData");
    if (sd && !cJSON_IsNull(sd)) {
        if (!cJSON_IsObject(sd)) {
            cJSON_Delete(sd);
            return store_bad_request(out, "stringData: expected an object of strings");
        }
        cJSON *data = cJSON_GetObjectItemCaseSensitive(obj, "data");
        if (!cJSON_IsObject(data)) {
            cJSON_DeleteItemFromObjectCaseSensitive(obj, "data");
            data = cJSON_AddObjectToObject(obj, "data");
        }
        const cJSON *kv;
        cJSON_ArrayForEach(kv, sd)
        {
            if (!cJSON_IsString(kv)) {
                cJSON_Delete(sd);
                return store_bad_request(out, "stringData: expected an object of strings");
            }
            char *b64 = base64_encode(kv->valuestring, strlen(kv->valuestring));
            cJSON_DeleteItemFromObjectCaseSensitive(data, kv->string);
            cJSON_AddStringToObject(data, kv->string, b64);
            free(b64);
        }
    }
    cJSON_Delete(sd);
    size_t total = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(obj, "data"))
    {
        if (!cJSON_IsString(v)) continue;
        size_t len = 0;
        unsigned char *raw = base64_decode(v->valuestring, &len);
        free(raw);
        total += raw ? len : strlen(v->valuestring);
    }
    if (total > STORE_SECRET_MAX) {
        char why[128];
        snprintf(why, sizeof why, "data: Too long: must have at most %d bytes", STORE_SECRET_MAX);
        return store_invalid(out, ki, name, why);
    }
    return 0;
}

/* RFC 3339 with exactly six fractional digits and Z: 2026-01-02T03:04:05.123456Z. */
static bool micro_time(const char *s)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:dd.ddddddZ";
    if (strlen(s) != sizeof shape - 1) return false;
    for (size_t i = 0; shape[i]; i++) {
        bool digit = s[i] >= '0' && s[i] <= '9';
        if (shape[i] == 'd' ? !digit : s[i] != shape[i]) return false;
    }
    return true;
}

static int admit_lease(const cJSON *obj, cJSON **out)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
    static const char *const fields[] = {"acquireTime", "renewTime"};
    for (size_t i = 0; i < 2; i++) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(spec, fields[i]);
        if (!t || cJSON_IsNull(t)) continue;
        if (!cJSON_IsString(t) || !micro_time(t->valuestring)) {
            char why[200];
            snprintf(why, sizeof why,
                     "Lease in version \"v1\" cannot be handled as a Lease: spec.%s: parsing "
                     "time as RFC3339Micro (six fractional digits, Z) failed",
                     fields[i]);
            return store_bad_request(out, why);
        }
    }
    return 0;
}

int store_admit(const store_kind_info *ki, const char *name, cJSON *obj, cJSON **out)
{
    if (strcmp(ki->kind, "Secret") == 0) return admit_secret(ki, name, obj, out);
    if (strcmp(ki->kind, "Lease") == 0) return admit_lease(obj, out);
    return 0;
}
