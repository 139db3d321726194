/*
 * store_select.c — label and field selectors, parsed the way the API server
 * parses them.
 *
 * The one idea: a selector the API server would reject must be rejected here
 * too (400 BadRequest), or the core could ship a list call that only ever
 * worked in the sim. Requirements are slices into a private copy of the
 * selector text; nothing is allocated per requirement.
 */
#include "sim/store/store_select.h"

#include "core/rs.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* kubectl never sends more than a few requirements; the bounds keep a
 * hostile selector from costing more than a fixed amount. */
#define SEL_REQS_MAX 32
#define SEL_VALUES_MAX 32
#define SEL_LABEL_NAME_MAX 63
#define SEL_LABEL_PREFIX_MAX 253
#define SEL_KEY_BUF 320

typedef struct sel_str {
    const char *s;
    size_t len;
} sel_str;

typedef enum sel_op { SEL_EXISTS, SEL_NOT_EXISTS, SEL_EQ, SEL_NE, SEL_IN, SEL_NOTIN } sel_op;

typedef struct sel_req {
    sel_str key; /* label key, or dotted field path */
    sel_op op;
    size_t nvalues;
    sel_str values[SEL_VALUES_MAX];
} sel_req;

struct store_selector {
    bool fields;
    char *text;
    size_t n;
    sel_req reqs[SEL_REQS_MAX];
};

static bool sel_fail(char *why, size_t whylen, const char *msg, const char *text)
{
    if (why && whylen) snprintf(why, whylen, "unable to parse selector \"%.128s\": %s", text, msg);
    return false;
}

static bool sel_eq(sel_str a, const char *b)
{
    return b && strlen(b) == a.len && memcmp(a.s, b, a.len) == 0;
}

static const char *sel_skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

static bool sel_key_char(char c)
{
    return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-' || c == '/';
}

static bool sel_value_char(char c)
{
    return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-';
}

static sel_str sel_scan(const char **pp, bool (*ok)(char))
{
    const char *p = *pp;
    while (*p && ok(*p))
        p++;
    sel_str s = {*pp, (size_t)(p - *pp)};
    *pp = p;
    return s;
}

/* A label name or value segment must begin and end alphanumeric. */
static bool sel_alnum_ends(sel_str s)
{
    return s.len == 0 || (isalnum((unsigned char)s.s[0]) && isalnum((unsigned char)s.s[s.len - 1]));
}

/* Label keys are [prefix/]name: prefix a DNS subdomain, name <= 63. */
static bool sel_key_valid(sel_str k)
{
    const char *slash = memchr(k.s, '/', k.len);
    sel_str name = k;
    if (slash) {
        size_t plen = (size_t)(slash - k.s);
        if (plen == 0 || plen > SEL_LABEL_PREFIX_MAX || memchr(slash + 1, '/', k.len - plen - 1))
            return false;
        name = (sel_str){slash + 1, k.len - plen - 1};
    }
    return name.len > 0 && name.len <= SEL_LABEL_NAME_MAX && sel_alnum_ends(name);
}

static bool sel_value_valid(sel_str v)
{
    return v.len <= SEL_LABEL_NAME_MAX && sel_alnum_ends(v);
}

/* Parses "(a, b, c)" after in/notin. */
static bool sel_parse_set(const char **pp, sel_req *r, char *why, size_t whylen, const char *text)
{
    const char *p = sel_skip_ws(*pp);
    if (*p != '(') return sel_fail(why, whylen, "a set operator must be followed by '('", text);
    p++;
    for (;;) {
        p = sel_skip_ws(p);
        sel_str v = sel_scan(&p, sel_value_char);
        if (!sel_value_valid(v)) return sel_fail(why, whylen, "a set value is invalid", text);
        if (r->nvalues == SEL_VALUES_MAX)
            return sel_fail(why, whylen, "a set has too many values", text);
        r->values[r->nvalues++] = v;
        p = sel_skip_ws(p);
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == ')') break;
        return sel_fail(why, whylen, "a set must be closed with ')'", text);
    }
    if (r->nvalues == 1 && r->values[0].len == 0)
        return sel_fail(why, whylen, "a set of in or notin may not be empty", text);
    *pp = p + 1;
    return true;
}

/* Parses the operator and values after a label key. */
static bool sel_parse_label_op(const char **pp, sel_req *r, char *why, size_t whylen,
                               const char *text)
{
    const char *p = *pp;
    if (*p == '\0' || *p == ',') {
        r->op = SEL_EXISTS;
        return true;
    }
    size_t oplen = 0;
    if (p[0] == '=' && p[1] == '=')
        r->op = SEL_EQ, oplen = 2;
    else if (p[0] == '=')
        r->op = SEL_EQ, oplen = 1;
    else if (p[0] == '!' && p[1] == '=')
        r->op = SEL_NE, oplen = 2;
    if (oplen) {
        p = sel_skip_ws(p + oplen);
        sel_str v = sel_scan(&p, sel_value_char);
        if (!sel_value_valid(v)) return sel_fail(why, whylen, "a label value is invalid", text);
        r->values[r->nvalues++] = v;
        *pp = p;
        return true;
    }
    if (strncmp(p, "notin", 5) == 0 && (p[5] == '(' || p[5] == ' ' || p[5] == '\t'))
        r->op = SEL_NOTIN, p += 5;
    else if (strncmp(p, "in", 2) == 0 && (p[2] == '(' || p[2] == ' ' || p[2] == '\t'))
        r->op = SEL_IN, p += 2;
    else
        return sel_fail(why, whylen, "expected one of =, ==, !=, in, notin after a key", text);
    *pp = p;
    return sel_parse_set(pp, r, why, whylen, text);
}

static bool sel_parse_label_req(const char **pp, sel_req *r, char *why, size_t whylen,
                                const char *text)
{
    const char *p = sel_skip_ws(*pp);
    bool neg = false;
    if (*p == '!') {
        neg = true;
        p = sel_skip_ws(p + 1);
    }
    r->key = sel_scan(&p, sel_key_char);
    if (!sel_key_valid(r->key)) return sel_fail(why, whylen, "a label key is invalid", text);
    p = sel_skip_ws(p);
    if (neg)
        r->op = SEL_NOT_EXISTS;
    else if (!sel_parse_label_op(&p, r, why, whylen, text))
        return false;
    p = sel_skip_ws(p);
    if (*p != '\0' && *p != ',')
        return sel_fail(why, whylen, "unexpected text after a requirement", text);
    *pp = p;
    return true;
}

static bool sel_blank(const char *text)
{
    return !text || *sel_skip_ws(text) == '\0';
}

static bool sel_field_path_char(char c)
{
    return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-';
}

/* One "path op value" term of a field selector, up to the next ','. */
static bool sel_parse_field_req(const char **pp, sel_req *r, char *why, size_t whylen,
                                const char *text)
{
    const char *p = *pp;
    r->key = sel_scan(&p, sel_field_path_char);
    if (r->key.len == 0 || r->key.s[0] == '.' || r->key.s[r->key.len - 1] == '.')
        return sel_fail(why, whylen, "a field path is missing or invalid", text);
    if (p[0] == '=' && p[1] == '=')
        r->op = SEL_EQ, p += 2;
    else if (p[0] == '=')
        r->op = SEL_EQ, p += 1;
    else if (p[0] == '!' && p[1] == '=')
        r->op = SEL_NE, p += 2;
    else
        return sel_fail(why, whylen, "expected =, == or != after a field path", text);
    /* The value, unescaped in place as the API server's UnescapeValue does:
     * `\\`, `\,` and `\=` stand for themselves; any other escape, a
     * trailing `\`, or an unescaped `=` is 400 (so `spec.nodeName===x` is
     * refused, never read as the value "=x"); an unescaped `,` ends it.
     * p points into sel_parse's own copy of the text, so writing is safe. */
    char *w = (char *)p;
    const char *start = p;
    while (*p && *p != ',') {
        if (*p == '=')
            return sel_fail(why, whylen,
                            "invalid field selector: unescaped character in value: =", text);
        if (*p == '\\') {
            if (p[1] != '\\' && p[1] != ',' && p[1] != '=')
                return sel_fail(why, whylen, "invalid field selector: invalid escape sequence",
                                text);
            p++;
        }
        *w++ = *p++;
    }
    r->values[0] = (sel_str){start, (size_t)(w - start)};
    r->nvalues = 1;
    *pp = p;
    return true;
}

typedef bool (*sel_req_parser)(const char **pp, sel_req *r, char *why, size_t whylen,
                               const char *text);

/* Comma-separated requirements, each parsed by `parse`; bounded by SEL_REQS_MAX. */
static store_selector *sel_parse(const char *text, bool fields, sel_req_parser parse, char *why,
                                 size_t whylen)
{
    store_selector *s = rs_xcalloc(1, sizeof *s);
    s->fields = fields;
    if (sel_blank(text)) return s;
    s->text = rs_xstrdup(text);
    const char *p = s->text;
    for (;;) {
        if (s->n == SEL_REQS_MAX) {
            sel_fail(why, whylen, "it has too many requirements", text);
            break;
        }
        if (!parse(&p, &s->reqs[s->n], why, whylen, text)) break;
        s->n++;
        if (*p == '\0') return s;
        p++; /* the ',' between requirements */
    }
    store_selector_free(s);
    return NULL;
}

store_selector *store_selector_parse_labels(const char *text, char *why, size_t whylen)
{
    return sel_parse(text, false, sel_parse_label_req, why, whylen);
}

store_selector *store_selector_parse_fields(const char *text, char *why, size_t whylen)
{
    return sel_parse(text, true, sel_parse_field_req, why, whylen);
}

/* The fields the API server indexes per kind (its field label conversion
 * functions); every kind also takes metadata.name and metadata.namespace.
 * Any other field is refused, as a cluster refuses it, so a list the core
 * ships cannot work only in the sim. */
static const struct sel_kind_fields {
    const char *kind;
    const char *fields[10];
} sel_kind_fields[] = {
    {"Pod",
     {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
      "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs",
      "status.nominatedNodeName", NULL}},
    {"Node", {"spec.unschedulable", NULL}},
    {"Secret", {"type", NULL}},
    {"Namespace", {"status.phase", NULL}},
    {"ReplicaSet", {"status.replicas", NULL}},
    {"Event",
     {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
      "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
      "involvedObject.fieldPath", "reason", "source", "type"}},
};

static bool sel_field_supported(const char *kind, sel_str key)
{
    if (sel_eq(key, "metadata.name") || sel_eq(key, "metadata.namespace")) return true;
    for (size_t i = 0; i < RS_ARRAY_LEN(sel_kind_fields); i++) {
        if (strcmp(sel_kind_fields[i].kind, kind) != 0) continue;
        for (size_t j = 0; j < RS_ARRAY_LEN(sel_kind_fields[i].fields); j++)
            if (sel_eq(key, sel_kind_fields[i].fields[j])) return true;
    }
    return false;
}

bool store_selector_fields_supported(const store_selector *s, const char *kind, char *why,
                                     size_t whylen)
{
    for (size_t i = 0; s && s->fields && i < s->n; i++) {
        if (sel_field_supported(kind, s->reqs[i].key)) continue;
        if (why && whylen)
            snprintf(why, whylen, "field label not supported: %.*s",
                     (int)(s->reqs[i].key.len > 128 ? 128 : s->reqs[i].key.len), s->reqs[i].key.s);
        return false;
    }
    return true;
}

void store_selector_free(store_selector *s)
{
    if (!s) return;
    free(s->text);
    free(s);
}

/* ---- Matching ----------------------------------------------------------- */

static bool sel_in(const sel_req *r, const char *v)
{
    for (size_t i = 0; i < r->nvalues; i++)
        if (sel_eq(r->values[i], v)) return true;
    return false;
}

/* Applies an operator to a value that may be absent (NULL). */
static bool sel_apply(const sel_req *r, const char *v)
{
    switch (r->op) {
    case SEL_EXISTS:
        return v != NULL;
    case SEL_NOT_EXISTS:
        return v == NULL;
    case SEL_EQ:
    case SEL_IN:
        return v && sel_in(r, v);
    case SEL_NE:
    case SEL_NOTIN:
        return !v || !sel_in(r, v);
    }
    return false;
}

static const char *sel_label(const cJSON *obj, sel_str key)
{
    char buf[SEL_KEY_BUF];
    if (key.len >= sizeof buf) return NULL;
    memcpy(buf, key.s, key.len);
    buf[key.len] = '\0';
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(meta, "labels");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(labels, buf);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The field at a dotted path as the string the API server compares: ""
 * when absent or null, NULL when it is an object or array (never equal). */
static const char *sel_field(const cJSON *obj, sel_str path, char *buf, size_t buflen)
{
    const cJSON *cur = obj;
    const char *p = path.s, *end = path.s + path.len;
    while (cur && p < end) {
        const char *dot = memchr(p, '.', (size_t)(end - p));
        size_t len = dot ? (size_t)(dot - p) : (size_t)(end - p);
        if (len >= buflen) return NULL;
        memcpy(buf, p, len);
        buf[len] = '\0';
        cur = cJSON_IsObject(cur) ? cJSON_GetObjectItemCaseSensitive(cur, buf) : NULL;
        p += len + 1;
    }
    if (!cur || cJSON_IsNull(cur)) return "";
    if (cJSON_IsString(cur)) return cur->valuestring;
    if (cJSON_IsBool(cur)) return cJSON_IsTrue(cur) ? "true" : "false";
    if (!cJSON_IsNumber(cur)) return NULL;
    double d = cur->valuedouble;
    if (d > -1e15 && d < 1e15 && d == (double)(long long)d)
        snprintf(buf, buflen, "%lld", (long long)d);
    else
        snprintf(buf, buflen, "%.17g", d);
    return buf;
}

bool store_selector_match(const store_selector *s, const cJSON *obj)
{
    for (size_t i = 0; i < s->n; i++) {
        const sel_req *r = &s->reqs[i];
        char buf[SEL_KEY_BUF];
        const char *v = NULL;
        if (!s->fields) {
            v = sel_label(obj, r->key);
        } else {
            v = sel_field(obj, r->key, buf, sizeof buf);
            /* An object or array never equals a string, so only != holds. */
            if (!v) {
                if (r->op != SEL_NE) return false;
                continue;
            }
        }
        if (!sel_apply(r, v)) return false;
    }
    return true;
}
