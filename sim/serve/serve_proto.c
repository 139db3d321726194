/*
 * serve_proto.c — the Kubernetes protobuf a client sends for built-in
 * kinds (`Content-Type: application/vnd.kubernetes.protobuf`: kubectl's
 * typed clients — `create secret generic`, `create configmap`, `create
 * namespace`, `auth can-i`, `auth whoami`), decoded to the JSON the rest
 * of the façade speaks. Answers are JSON: the client asked for
 * `application/vnd.kubernetes.protobuf,application/json` and decodes by
 * the answer's Content-Type, as it does from an API server serving a kind
 * without protobuf.
 *
 * The wire format: "k8s\0", then a runtime.Unknown {typeMeta = 1
 * {apiVersion = 1, kind = 2}, raw = 2 (the object's own message),
 * contentEncoding = 3, contentType = 4}. Each kind's message is walked
 * against a table of its fields (generated.proto of k8s.io/api); a field
 * the table does not name is skipped, as protobuf readers skip unknown
 * fields; a malformed message (a length past its end, a varint over ten
 * bytes, a wire type the table does not expect) is refused.
 *
 * The one idea: a decoded object is exactly the JSON a client would have
 * sent for it, so the store's admission (names, data, stringData holding
 * U+0000 carried as the store's bytes object) applies unchanged.
 */
#include "sim/serve/serve_int.h"

#include "core/cred/cred.h"
#include "sim/store/store.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef enum pf_type {
    PF_STRING,
    PF_BYTES,   /* base64 in JSON */
    PF_INT,     /* varint */
    PF_BOOL,    /* varint */
    PF_MSG,     /* embedded message */
    PF_MAP_SS,  /* map<string, string> */
    PF_MAP_SB,  /* map<string, bytes> */
    PF_MAP_SSN, /* map<string, string>, a value holding U+0000 carried whole */
    PF_STRINGS, /* repeated string */
    PF_MSGS,    /* repeated message */
    PF_TIME,    /* metav1.Time {seconds = 1, nanos = 2} */
} pf_type;

typedef struct pmsg pmsg;
typedef struct pfield {
    int num;
    const char *json;
    pf_type type;
    const pmsg *msg;
} pfield;
struct pmsg {
    const pfield *f;
    size_t n;
};
#define PMSG(a)                                                                                    \
    {                                                                                              \
        a, sizeof a / sizeof *a                                                                    \
    }

static const pfield owner_ref_f[] = {
    {1, "kind", PF_STRING, NULL},     {3, "name", PF_STRING, NULL},
    {4, "uid", PF_STRING, NULL},      {5, "apiVersion", PF_STRING, NULL},
    {6, "controller", PF_BOOL, NULL}, {7, "blockOwnerDeletion", PF_BOOL, NULL}};
static const pmsg owner_ref = PMSG(owner_ref_f);
static const pfield meta_f[] = {{1, "name", PF_STRING, NULL},
                                {2, "generateName", PF_STRING, NULL},
                                {3, "namespace", PF_STRING, NULL},
                                {5, "uid", PF_STRING, NULL},
                                {6, "resourceVersion", PF_STRING, NULL},
                                {7, "generation", PF_INT, NULL},
                                {8, "creationTimestamp", PF_TIME, NULL},
                                {9, "deletionTimestamp", PF_TIME, NULL},
                                {11, "labels", PF_MAP_SS, NULL},
                                {12, "annotations", PF_MAP_SS, NULL},
                                {13, "ownerReferences", PF_MSGS, &owner_ref},
                                {14, "finalizers", PF_STRINGS, NULL}};
static const pmsg meta = PMSG(meta_f);
static const pfield secret_f[] = {{1, "metadata", PF_MSG, &meta},
                                  {2, "data", PF_MAP_SB, NULL},
                                  {3, "type", PF_STRING, NULL},
                                  {4, "stringData", PF_MAP_SSN, NULL},
                                  {5, "immutable", PF_BOOL, NULL}};
static const pfield configmap_f[] = {{1, "metadata", PF_MSG, &meta},
                                     {2, "data", PF_MAP_SS, NULL},
                                     {3, "binaryData", PF_MAP_SB, NULL},
                                     {4, "immutable", PF_BOOL, NULL}};
static const pfield ns_spec_f[] = {{1, "finalizers", PF_STRINGS, NULL}};
static const pmsg ns_spec = PMSG(ns_spec_f);
static const pfield ns_status_f[] = {{1, "phase", PF_STRING, NULL}};
static const pmsg ns_status = PMSG(ns_status_f);
static const pfield namespace_f[] = {{1, "metadata", PF_MSG, &meta},
                                     {2, "spec", PF_MSG, &ns_spec},
                                     {3, "status", PF_MSG, &ns_status}};
static const pfield res_attr_f[] = {
    {1, "namespace", PF_STRING, NULL}, {2, "verb", PF_STRING, NULL},
    {3, "group", PF_STRING, NULL},     {4, "version", PF_STRING, NULL},
    {5, "resource", PF_STRING, NULL},  {6, "subresource", PF_STRING, NULL},
    {7, "name", PF_STRING, NULL}};
static const pmsg res_attr = PMSG(res_attr_f);
static const pfield nonres_attr_f[] = {{1, "path", PF_STRING, NULL}, {2, "verb", PF_STRING, NULL}};
static const pmsg nonres_attr = PMSG(nonres_attr_f);
static const pfield ssar_spec_f[] = {{1, "resourceAttributes", PF_MSG, &res_attr},
                                     {2, "nonResourceAttributes", PF_MSG, &nonres_attr}};
static const pmsg ssar_spec = PMSG(ssar_spec_f);
static const pfield ssar_f[] = {{1, "metadata", PF_MSG, &meta}, {2, "spec", PF_MSG, &ssar_spec}};
static const pfield ssr_f[] = {{1, "metadata", PF_MSG, &meta}};

static const struct {
    const char *kind;
    pmsg msg;
} proto_kinds[] = {
    {"Secret", PMSG(secret_f)},         {"ConfigMap", PMSG(configmap_f)},
    {"Namespace", PMSG(namespace_f)},   {"SelfSubjectAccessReview", PMSG(ssar_f)},
    {"SelfSubjectReview", PMSG(ssr_f)},
};

bool serve_proto_is(const serve_http *h)
{
    const char *ct = serve_header(h, "Content-Type");
    static const char want[] = "application/vnd.kubernetes.protobuf";
    return ct && strncmp(ct, want, sizeof want - 1) == 0 &&
           (ct[sizeof want - 1] == '\0' || ct[sizeof want - 1] == ';');
}

bool serve_proto_kind(const char *kind)
{
    for (size_t i = 0; i < sizeof proto_kinds / sizeof *proto_kinds; i++)
        if (strcmp(proto_kinds[i].kind, kind) == 0) return true;
    return false;
}

/* ---- the wire ------------------------------------------------------------ */

typedef struct pbuf {
    const unsigned char *p, *end;
} pbuf;

static bool varint(pbuf *b, unsigned long long *v)
{
    *v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (b->p >= b->end) return false;
        unsigned char c = *b->p++;
        *v |= (unsigned long long)(c & 0x7f) << shift;
        if (!(c & 0x80)) return true;
    }
    return false;
}

/* One field's key and, for length-delimited ones, its bytes. */
typedef struct pfield_in {
    int num, wire;
    unsigned long long v;
    pbuf bytes;
} pfield_in;

static bool next_field(pbuf *b, pfield_in *f)
{
    unsigned long long key = 0;
    if (!varint(b, &key) || key >> 3 == 0 || key >> 3 > 536870911ULL) return false;
    f->num = (int)(key >> 3);
    f->wire = (int)(key & 7);
    switch (f->wire) {
    case 0:
        return varint(b, &f->v);
    case 1:
    case 5: {
        size_t n = f->wire == 1 ? 8 : 4;
        if ((size_t)(b->end - b->p) < n) return false;
        b->p += n;
        return true;
    }
    case 2: {
        unsigned long long n = 0;
        if (!varint(b, &n) || n > (unsigned long long)(b->end - b->p)) return false;
        f->bytes = (pbuf){b->p, b->p + n};
        b->p += n;
        return true;
    }
    default:
        return false;
    }
}

/* A protobuf string as JSON text: bytes that are not UTF-8 become U+FFFD
 * as Go's encoding/json would write them; *nul when it holds U+0000. */
static cJSON *pstring(pbuf s, bool *nul)
{
    size_t n = (size_t)(s.end - s.p), fixed_len = n;
    if (memchr(s.p, '\0', n)) *nul = true;
    char *text = rs_xmalloc(n + 1);
    memcpy(text, s.p, n);
    text[n] = '\0';
    char *fixed = serve_body_utf8(text, n, &fixed_len);
    cJSON *j = cJSON_CreateString(fixed ? fixed : text);
    if (fixed) cred_bytes_wipe_free(fixed, fixed_len + 1);
    cred_bytes_wipe_free(text, n + 1);
    return j;
}

static cJSON *pbytes(pbuf s)
{
    size_t n = (size_t)(s.end - s.p);
    char *b64 = rs_xmalloc(4 * ((n + 2) / 3) + 1);
    EVP_EncodeBlock((unsigned char *)b64, s.p, (int)n);
    cJSON *j = cJSON_CreateString(b64);
    cred_text_wipe_free(b64);
    return j;
}

/* The store's carrier of a string holding U+0000 (store.h). */
static cJSON *pcarrier(pbuf s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, STORE_BYTES_KEY, pbytes(s));
    return o;
}

static void set_item(cJSON *obj, const char *key, cJSON *v)
{
    if (cJSON_GetObjectItemCaseSensitive(obj, key))
        cJSON_ReplaceItemInObjectCaseSensitive(obj, key, v);
    else
        cJSON_AddItemToObject(obj, key, v);
}

static cJSON *pmessage(pbuf b, const pmsg *m, int depth, const char **why);

static bool pmap_entry(cJSON *map, pbuf e, pf_type type, const char **why)
{
    pbuf key = {0}, val = {(const unsigned char *)"", (const unsigned char *)""};
    bool has_key = false;
    pfield_in f;
    while (e.p < e.end) {
        if (!next_field(&e, &f) || (f.num <= 2 && f.wire != 2)) {
            *why = "a map entry is malformed";
            return false;
        }
        if (f.num == 1) key = f.bytes, has_key = true;
        if (f.num == 2) val = f.bytes;
    }
    bool nul = false;
    cJSON *k = has_key ? pstring(key, &nul) : cJSON_CreateString("");
    if (nul) {
        cJSON_Delete(k);
        *why = "a map key holds U+0000";
        return false;
    }
    cJSON *v;
    if (type == PF_MAP_SB) {
        v = pbytes(val);
    } else {
        bool vnul = false;
        v = pstring(val, &vnul);
        if (vnul && type == PF_MAP_SSN) {
            cred_json_wipe_delete(v);
            v = pcarrier(val);
        } else if (vnul) {
            cred_json_wipe_delete(v);
            cJSON_Delete(k);
            *why = "a value holds U+0000";
            return false;
        }
    }
    set_item(map, k->valuestring, v);
    cJSON_Delete(k);
    return true;
}

static cJSON *ptime(pbuf b)
{
    long long secs = 0;
    pfield_in f;
    while (b.p < b.end && next_field(&b, &f))
        if (f.num == 1 && f.wire == 0) secs = (long long)f.v;
    time_t t = (time_t)secs;
    struct tm tm;
    char out[32];
    if (!gmtime_r(&t, &tm)) return cJSON_CreateNull();
    strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return cJSON_CreateString(out);
}

static cJSON *pmessage(pbuf b, const pmsg *m, int depth, const char **why)
{
    if (depth > 16) {
        *why = "the message nests too deep";
        return NULL;
    }
    cJSON *obj = cJSON_CreateObject();
    pfield_in f;
    while (b.p < b.end) {
        if (!next_field(&b, &f)) {
            *why = "the protobuf message is malformed";
            goto bad;
        }
        const pfield *d = NULL;
        for (size_t i = 0; i < m->n && !d; i++)
            if (m->f[i].num == f.num) d = &m->f[i];
        if (!d) continue; /* unknown: skipped */
        bool varint_type = d->type == PF_INT || d->type == PF_BOOL;
        if (varint_type != (f.wire == 0) || (!varint_type && f.wire != 2)) {
            *why = "a field has the wrong wire type";
            goto bad;
        }
        bool nul = false;
        cJSON *v = NULL;
        /* Go writes every plain field, empty or not; its JSON omits the
         * empty ones (omitempty), and so does this decoding. */
        if ((d->type == PF_STRING && f.bytes.p == f.bytes.end) || (d->type == PF_INT && f.v == 0))
            continue;
        switch (d->type) {
        case PF_STRING:
            v = pstring(f.bytes, &nul);
            if (nul) {
                cJSON_Delete(v);
                *why = "a string holds U+0000";
                goto bad;
            }
            set_item(obj, d->json, v);
            break;
        case PF_BYTES:
            set_item(obj, d->json, pbytes(f.bytes));
            break;
        case PF_INT:
            set_item(obj, d->json, cJSON_CreateNumber((double)(long long)f.v));
            break;
        case PF_BOOL:
            set_item(obj, d->json, cJSON_CreateBool(f.v != 0));
            break;
        case PF_TIME:
            set_item(obj, d->json, ptime(f.bytes));
            break;
        case PF_MSG:
            if (!(v = pmessage(f.bytes, d->msg, depth + 1, why))) goto bad;
            set_item(obj, d->json, v);
            break;
        case PF_MSGS:
        case PF_STRINGS: {
            cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, d->json);
            if (!arr) arr = cJSON_AddArrayToObject(obj, d->json);
            if (d->type == PF_MSGS) {
                if (!(v = pmessage(f.bytes, d->msg, depth + 1, why))) goto bad;
            } else {
                v = pstring(f.bytes, &nul);
                if (nul) {
                    cJSON_Delete(v);
                    *why = "a string holds U+0000";
                    goto bad;
                }
            }
            cJSON_AddItemToArray(arr, v);
            break;
        }
        case PF_MAP_SS:
        case PF_MAP_SB:
        case PF_MAP_SSN: {
            cJSON *map = cJSON_GetObjectItemCaseSensitive(obj, d->json);
            if (!map) map = cJSON_AddObjectToObject(obj, d->json);
            if (!pmap_entry(map, f.bytes, d->type, why)) goto bad;
            break;
        }
        }
    }
    return obj;
bad:
    cred_json_wipe_delete(obj);
    return NULL;
}

cJSON *serve_proto_decode(const serve_http *h, const char *expect_kind, const char **why)
{
    *why = "the body is not a Kubernetes protobuf object";
    if (!h->body || h->body_len < 4 || memcmp(h->body, "k8s\0", 4) != 0) return NULL;
    pbuf b = {(const unsigned char *)h->body + 4, (const unsigned char *)h->body + h->body_len};
    pbuf raw = {0}, type = {0};
    bool has_raw = false;
    pfield_in f;
    while (b.p < b.end) {
        if (!next_field(&b, &f)) return NULL;
        if (f.num == 1 && f.wire == 2) type = f.bytes;
        if (f.num == 2 && f.wire == 2) raw = f.bytes, has_raw = true;
        if (f.num == 3 && f.wire == 2 && f.bytes.end > f.bytes.p) {
            *why = "a content encoding is not supported";
            return NULL;
        }
    }
    char api_version[128] = "", kind[128] = "";
    while (type.p && type.p < type.end) {
        if (!next_field(&type, &f)) return NULL;
        char *dst = f.num == 1 ? api_version : f.num == 2 ? kind : NULL;
        size_t n = (size_t)(f.bytes.end - f.bytes.p);
        if (dst && f.wire == 2 && n < 128)
            snprintf(dst, 128, "%.*s", (int)n, (const char *)f.bytes.p);
    }
    if (!has_raw) return NULL;
    if (kind[0] && strcmp(kind, expect_kind) != 0) {
        *why = "the object's kind does not match the resource";
        return NULL;
    }
    for (size_t i = 0; i < sizeof proto_kinds / sizeof *proto_kinds; i++) {
        if (strcmp(proto_kinds[i].kind, expect_kind) != 0) continue;
        cJSON *obj = pmessage(raw, &proto_kinds[i].msg, 0, why);
        if (!obj) return NULL;
        cJSON *out = cJSON_CreateObject();
        if (api_version[0]) cJSON_AddStringToObject(out, "apiVersion", api_version);
        cJSON_AddStringToObject(out, "kind", expect_kind);
        for (cJSON *c = obj->child; c;) {
            cJSON *next = c->next;
            cJSON_AddItemToObject(out, c->string, cJSON_DetachItemViaPointer(obj, c));
            c = next;
        }
        cJSON_Delete(obj);
        return out;
    }
    *why = "this kind is not served as protobuf";
    return NULL;
}
