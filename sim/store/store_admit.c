/*
 * store_admit.c — what the API server does to an object before it stores it,
 * for the kinds whose rules a real cluster would hold the core to (DESIGN
 * §3.3 r2, "Kubernetes facts"):
 *
 *   - Secret: `stringData` is merged into `data` (base64-encoded, winning
 *     over a `data` key of the same name; a value sim serve carries as
 *     bytes because it holds U+0000 is encoded whole) and dropped; a Secret whose data
 *     totals more than 1 MiB is rejected (422), as etcd's limit makes it.
 *   - Lease: `acquireTime` and `renewTime` are MicroTime: RFC 3339 with
 *     exactly six fractional digits and `Z` (H4); anything else is a 400.
 *   - Secret `data` values are decoded as the API server's JSON decoder
 *     decodes []byte (Go's base64.StdEncoding: standard alphabet, padding
 *     required, CR and LF skipped anywhere, bits under the padding
 *     ignored; 400 otherwise) and stored as bytes, so they read back in the
 *     canonical spelling.
 *   - Every kind: annotations total at most 256 KiB (422); the stored
 *     object at most etcd's 1.5 MiB (413); a created name is a DNS-1123
 *     subdomain, or a label for a Namespace (422).
 *
 * The one idea: the sim refuses what a cluster refuses, so a core that
 * would break on a real API server breaks in a scenario first.
 */
#include "sim/store/store_int.h"

#include "core/cred/cred.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STORE_SECRET_MAX (1024 * 1024)     /* bytes of decoded data */
#define STORE_ANNOTATIONS_MAX (256 * 1024) /* keys + values, as the API server sums them */
#define STORE_OBJECT_MAX (1536 * 1024)     /* etcd's default --max-request-bytes */
#define STORE_NAME_MAX 253                 /* a DNS-1123 subdomain */
#define STORE_LABEL_MAX 63                 /* a DNS-1123 label */

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

static size_t b64_skip_newlines(const char *s, size_t i, size_t n)
{
    while (i < n && (s[i] == '\r' || s[i] == '\n'))
        i++;
    return i;
}

/* Go's base64.StdEncoding.Decode, as encoding/json applies it to a []byte
 * field: quanta of four, CR/LF ignored wherever they are, '=' only as the
 * last one or two of a quantum and nothing after it but CR/LF; the bits
 * under the padding are not checked (the encoding is not Strict). NULL when
 * Go would refuse the text. */
static unsigned char *b64_go_decode(const char *s, size_t *out_len)
{
    size_t n = strlen(s), si = 0, o = 0;
    unsigned char *out = rs_xmalloc(n / 4 * 3 + 4);
    for (;;) {
        int q[4] = {0, 0, 0, 0}, got = 0;
        bool end = false;
        while (got < 4) {
            if (si == n) {
                if (got == 0) goto done;
                goto bad; /* a quantum cut short: StdEncoding needs its padding */
            }
            char c = s[si++];
            int v = b64_value((unsigned char)c);
            if (v >= 0) {
                q[got++] = v;
            } else if (c == '\r' || c == '\n') {
                continue;
            } else if (c != '=' || got < 2) {
                goto bad;
            } else {
                if (got == 2) { /* "==" expected: the second may follow newlines */
                    si = b64_skip_newlines(s, si, n);
                    if (si == n || s[si] != '=') goto bad;
                    si++;
                }
                if (b64_skip_newlines(s, si, n) != n) goto bad; /* bytes after the padding */
                end = true;
                break;
            }
        }
        unsigned bits =
            (unsigned)q[0] << 18 | (unsigned)q[1] << 12 | (unsigned)q[2] << 6 | (unsigned)q[3];
        unsigned char three[3] = {(unsigned char)(bits >> 16), (unsigned char)(bits >> 8),
                                  (unsigned char)bits};
        memcpy(out + o, three, (size_t)got - 1);
        o += (size_t)got - 1;
        if (end) break;
    }
done:
    out[o] = '\0';
    *out_len = o;
    return out;
bad:
    cred_bytes_wipe_free(out, n / 4 * 3 + 4);
    return NULL;
}

/* Each data value decoded (Go's rules) and stored in its canonical text, as
 * the API server stores the bytes and encodes them again on every read. */
static int admit_secret_data(cJSON *data, size_t *total, cJSON **out)
{
    cJSON *v;
    cJSON_ArrayForEach(v, data)
    {
        size_t len = 0;
        unsigned char *raw = cJSON_IsString(v) ? b64_go_decode(v->valuestring, &len) : NULL;
        if (!raw) {
            char why[192];
            snprintf(why, sizeof why,
                     "Secret in version \"v1\" cannot be handled as a Secret: data[\"%.64s\"]: "
                     "%s",
                     v->string ? v->string : "",
                     cJSON_IsString(v) ? "illegal base64 data" : "expected a base64 string");
            return store_bad_request(out, why);
        }
        char *canon = base64_encode(raw, len);
        cred_bytes_wipe_free(raw, len + 1);
        if (strcmp(canon, v->valuestring) != 0) {
            cred_text_wipe_free(v->valuestring);
            v->valuestring = canon;
        } else {
            cred_text_wipe_free(canon);
        }
        *total += len;
    }
    return 0;
}

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
            size_t n = 0;
            unsigned char *bytes = store_bytes_of(kv, &n);
            if (!bytes && !cJSON_IsString(kv)) {
                cJSON_Delete(sd);
                return store_bad_request(out, "stringData: expected an object of strings");
            }
            char *b64 = bytes ? base64_encode(bytes, n)
                              : base64_encode(kv->valuestring, strlen(kv->valuestring));
            if (bytes) cred_bytes_wipe_free(bytes, n + 1);
            cJSON_DeleteItemFromObjectCaseSensitive(data, kv->string);
            cJSON_AddStringToObject(data, kv->string, b64);
            cred_text_wipe_free(b64);
        }
    }
    cJSON_Delete(sd);
    size_t total = 0;
    int rc = admit_secret_data(cJSON_GetObjectItemCaseSensitive(obj, "data"), &total, out);
    if (rc) return rc;
    if (total > STORE_SECRET_MAX) {
        char why[128];
        snprintf(why, sizeof why, "data: Too long: must have at most %d bytes", STORE_SECRET_MAX);
        return store_invalid(out, ki, name, why);
    }
    return 0;
}

unsigned char *store_bytes_of(const cJSON *v, size_t *len)
{
    *len = 0;
    const cJSON *c = cJSON_IsObject(v) ? v->child : NULL;
    if (!c || c->next || !c->string || strcmp(c->string, STORE_BYTES_KEY) != 0 ||
        !cJSON_IsString(c))
        return NULL;
    return base64_decode(c->valuestring, len);
}

size_t store_bytes_count(const cJSON *root)
{
    size_t count = 0, top = 0, cap = 64;
    const cJSON **stack = rs_xmalloc(cap * sizeof *stack);
    if (root) stack[top++] = root;
    while (top) {
        const cJSON *n = stack[--top];
        const cJSON *c = cJSON_IsObject(n) ? n->child : NULL;
        if (c && !c->next && c->string && strcmp(c->string, STORE_BYTES_KEY) == 0) {
            count++;
            continue;
        }
        for (c = n->child; c; c = c->next) {
            if (top == cap) {
                cap *= 2;
                stack = rs_xrealloc(stack, cap * sizeof *stack);
            }
            stack[top++] = c;
        }
    }
    free(stack);
    return count;
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

/* The API server sums every annotation's key and value. */
static int admit_annotations(const store_kind_info *ki, const char *name, const cJSON *obj,
                             cJSON **out)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    size_t total = 0;
    const cJSON *a;
    cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(meta, "annotations"))
    {
        total += a->string ? strlen(a->string) : 0;
        total += cJSON_IsString(a) ? strlen(a->valuestring) : 0;
    }
    if (total <= STORE_ANNOTATIONS_MAX) return 0;
    char why[96];
    snprintf(why, sizeof why, "metadata.annotations: Too long: must have at most %d bytes",
             STORE_ANNOTATIONS_MAX);
    return store_invalid(out, ki, name, why);
}

/* etcd refuses a value over its request limit; the API server answers 413.
 * Bounding every write here also bounds what a patch can grow an object to. */
static int admit_size(const cJSON *obj, cJSON **out)
{
    char *text = cJSON_PrintUnformatted(obj);
    size_t len = text ? strlen(text) : 0;
    cred_text_wipe_free(text); /* a Secret's text */
    if (len <= STORE_OBJECT_MAX) return 0;
    return store_too_large(out, "etcdserver: request is too large");
}

/* The API server's defaulting before it stores: a Secret without a type
 * is Opaque, a Namespace without a phase is Active. */
static void admit_defaults(const store_kind_info *ki, cJSON *obj)
{
    if (strcmp(ki->kind, "Secret") == 0 && !cJSON_GetObjectItemCaseSensitive(obj, "type"))
        cJSON_AddStringToObject(obj, "type", "Opaque");
    if (strcmp(ki->kind, "Namespace") == 0) {
        cJSON *status = cJSON_GetObjectItemCaseSensitive(obj, "status");
        if (!status) status = cJSON_AddObjectToObject(obj, "status");
        if (cJSON_IsObject(status) && !cJSON_GetObjectItemCaseSensitive(status, "phase"))
            cJSON_AddStringToObject(status, "phase", "Active");
    }
}

int store_admit(const store_kind_info *ki, const char *name, cJSON *obj, cJSON **out)
{
    int code = 0;
    admit_defaults(ki, obj);
    if (strcmp(ki->kind, "Secret") == 0) code = admit_secret(ki, name, obj, out);
    if (strcmp(ki->kind, "Lease") == 0) code = admit_lease(obj, out);
    if (!code && store_bytes_count(obj))
        code = store_bad_request(out, "a string holding U+0000 outside a Secret's stringData: "
                                      "the sim cannot store it exactly, so it refuses it");
    if (!code) code = admit_annotations(ki, name, obj, out);
    if (!code) code = admit_size(obj, out);
    return code;
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])? per label; dots between labels only when
 * dots are allowed (a subdomain). */
static bool dns1123(const char *s, bool dots)
{
    bool start = true; /* at the start of a label */
    char prev = 0;
    for (const char *p = s; *p; p++) {
        char c = *p;
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (c == '.' && dots) {
            if (start || prev == '-') return false;
            start = true;
        } else if (c == '-') {
            if (start) return false;
            start = false;
        } else if (alnum) {
            start = false;
        } else {
            return false;
        }
        prev = c;
    }
    return !start && prev != '-';
}

int store_admit_name(const store_kind_info *ki, const char *name, cJSON **out)
{
    bool label = strcmp(ki->kind, "Namespace") == 0;
    size_t max = label ? STORE_LABEL_MAX : STORE_NAME_MAX;
    char why[640];
    if (strlen(name) > max) {
        snprintf(why, sizeof why,
                 "metadata.name: Invalid value: \"%.64s...\": must be no more than %zu characters",
                 name, max);
        return store_invalid(out, ki, name, why);
    }
    if (dns1123(name, !label)) return 0;
    if (label)
        snprintf(why, sizeof why,
                 "metadata.name: Invalid value: \"%s\": a lowercase RFC 1123 label must consist "
                 "of lower case alphanumeric characters or '-', and must start and end with an "
                 "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
                 "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                 name);
    else
        snprintf(
            why, sizeof why,
            "metadata.name: Invalid value: \"%s\": a lowercase RFC 1123 subdomain must "
            "consist of lower case alphanumeric characters, '-' or '.', and must start and "
            "end with an alphanumeric character (e.g. 'example.com', regex used for "
            "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            name);
    return store_invalid(out, ki, name, why);
}
