/*
 * rec_redact.c — fingerprints in place of secrets (see rec_redact.h).
 *
 * The one idea: redaction knows the run's secrets, it does not guess at
 * "secret-looking" text — and it keeps each value's shape, so a replay can
 * rebuild values that agree with one another without knowing any of them.
 * The last line of defence is core/cred's filter (every encoding of every
 * atom, base64 at each alignment included): a string it still finds a
 * secret in is fingerprinted whole.
 *
 * Nested encodings (base64 of JSON holding base64 of "user:password") are
 * followed to REC_NEST_MAX levels; JSON trees are walked with an explicit
 * stack, never by recursion.
 */
#define _GNU_SOURCE /* memmem */
#include "recorder/rec_redact.h"

#include "core/cred/cred.h"
#include "core/cred/cred_redact.h"
#include "core/rs.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>

#define REC_KEY_LEN 32
#define REC_NEST_MAX 4 /* JSON in base64 in JSON in base64: deeper is opaque */
#define REC_SYNTH_PREFIX "rs-synth-"

typedef struct rec_atom {
    char *v;
    size_t len;
    char fp[REC_FP_LEN];
} rec_atom;

struct rec_redactor {
    unsigned char key[REC_KEY_LEN];
    rec_atom *a; /* longest first, so a longer atom wins where two overlap */
    size_t n, cap;
    cred_redact *net; /* every encoding of every atom of REC_ATOM_MIN or more */
};

rec_redactor *rec_redactor_new(void)
{
    rec_redactor *r = rs_xcalloc(1, sizeof *r);
    if (RAND_bytes(r->key, REC_KEY_LEN) != 1) abort();
    r->net = cred_redact_new();
    return r;
}

void rec_redactor_free(rec_redactor *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n; i++)
        cred_text_wipe_free(r->a[i].v);
    free(r->a);
    cred_redact_free(r->net);
    OPENSSL_cleanse(r->key, sizeof r->key);
    free(r);
}

size_t rec_redactor_size(const rec_redactor *r)
{
    return r->n;
}

static void rec_fp_of(const rec_redactor *r, const char *s, size_t len, char out[REC_FP_LEN])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int md_len = 0;
    if (!HMAC(EVP_sha256(), r->key, REC_KEY_LEN, (const unsigned char *)s, len, md, &md_len) ||
        md_len != 32)
        abort();
    static const char hex[] = "0123456789abcdef";
    memcpy(out, "fp:", 3);
    for (unsigned i = 0; i < 32; i++) {
        out[3 + 2 * i] = hex[md[i] >> 4];
        out[4 + 2 * i] = hex[md[i] & 15];
    }
    out[67] = '\0';
}

static const rec_atom *rec_find(const rec_redactor *r, const char *s)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->a[i].v, s) == 0) return &r->a[i];
    return NULL;
}

/* Adds s with fingerprint fp (NULL: computed); the first fingerprint of a
 * value stays its fingerprint. */
static void rec_add_fp(rec_redactor *r, const char *s, const char *fp)
{
    size_t len = strlen(s);
    if (len == 0 || rec_find(r, s)) return;
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->a = rs_xrealloc(r->a, r->cap * sizeof *r->a);
    }
    size_t at = 0;
    while (at < r->n && r->a[at].len >= len)
        at++;
    memmove(&r->a[at + 1], &r->a[at], (r->n - at) * sizeof *r->a);
    rec_atom *a = &r->a[at];
    a->v = rs_xstrdup(s);
    a->len = len;
    if (fp)
        snprintf(a->fp, sizeof a->fp, "%s", fp);
    else
        rec_fp_of(r, s, len, a->fp);
    r->n++;
    if (len >= REC_ATOM_MIN) cred_redact_add(r->net, "x", s, len);
}

void rec_redactor_map(rec_redactor *r, const char *synthetic, const char *fp)
{
    rec_add_fp(r, synthetic, fp);
}

/* ---- shapes ---- */

static bool rec_is_doc(const char *s)
{
    while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
        s++;
    return *s == '{' || *s == '[';
}

/* Standard base64 with padding, at least 8 characters: shorter strings are
 * words, not encodings. */
static bool rec_is_b64(const char *s, size_t len)
{
    if (len < 8 || len % 4 != 0) return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '+' || c == '/' || (c == '=' && i >= len - 2);
        if (!ok) return false;
    }
    return true;
}

/* The decoded text of s when s is base64 of printable text; NULL otherwise. */
static char *rec_b64_text(const char *s)
{
    size_t len = strlen(s), n = 0;
    if (!rec_is_b64(s, len)) return NULL;
    unsigned char *d = base64_decode(s, &n);
    if (!d) return NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = d[i];
        if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') {
            cred_bytes_wipe_free(d, n);
            return NULL;
        }
    }
    char *t = rs_xmalloc(n + 1);
    memcpy(t, d, n);
    t[n] = '\0';
    cred_bytes_wipe_free(d, n);
    return t;
}

static bool rec_key_is_public(const cJSON *node)
{
    return node->string &&
           (strcmp(node->string, "username") == 0 || strcmp(node->string, "user") == 0);
}

/* ---- the JSON walk (explicit stack) ---- */

typedef void (*rec_leaf_fn)(rec_redactor *r, cJSON *node, int depth, bool *changed);

static void rec_walk(rec_redactor *r, cJSON *root, int depth, rec_leaf_fn fn, bool *changed)
{
    size_t n = 0, cap = 64;
    cJSON **stack = rs_xmalloc(cap * sizeof *stack);
    stack[n++] = root;
    while (n > 0) {
        cJSON *node = stack[--n];
        fn(r, node, depth, changed);
        for (cJSON *c = node->child; c; c = c->next) {
            if (n == cap) stack = rs_xrealloc(stack, (cap *= 2) * sizeof *stack);
            stack[n++] = c;
        }
    }
    free(stack);
}

static void rec_set_key(cJSON *node, char *key)
{
    if (!(node->type & cJSON_StringIsConst)) cred_text_wipe_free(node->string);
    node->type &= ~cJSON_StringIsConst;
    node->string = key;
}

static void rec_set_string(cJSON *node, char *s)
{
    cred_text_wipe_free(node->valuestring);
    node->valuestring = s;
}

/* ---- learning ---- */

static void rec_learn_depth(rec_redactor *r, const char *value, int depth);

static void rec_learn_leaf(rec_redactor *r, cJSON *node, int depth, bool *changed)
{
    (void)changed;
    if (cJSON_IsString(node) && !rec_key_is_public(node))
        rec_learn_depth(r, node->valuestring, depth + 1);
}

static void rec_learn_depth(rec_redactor *r, const char *value, int depth)
{
    if (!value || !value[0]) return;
    if (depth < REC_NEST_MAX && rec_is_doc(value)) {
        cJSON *doc = cJSON_Parse(value);
        if (doc && (cJSON_IsObject(doc) || cJSON_IsArray(doc))) {
            rec_walk(r, doc, depth, rec_learn_leaf, NULL);
            cred_json_wipe_delete(doc);
            return;
        }
        cred_json_wipe_delete(doc);
    }
    char *text = depth < REC_NEST_MAX ? rec_b64_text(value) : NULL;
    if (text) {
        /* base64("user:password") is a docker config's `auth`: the user is
         * public, the password the atom (so the shape survives redaction). */
        const char *colon = strchr(text, ':');
        if (colon && !rec_is_doc(text))
            rec_add_fp(r, colon + 1, NULL);
        else
            rec_learn_depth(r, text, depth + 1);
        cred_text_wipe_free(text);
        return;
    }
    rec_add_fp(r, value, NULL);
}

void rec_redactor_learn(rec_redactor *r, const char *value)
{
    rec_learn_depth(r, value, 0);
}

static void rec_learn_visit(cJSON *value, void *arg)
{
    rec_redactor *r = arg;
    if (cJSON_IsString(value)) {
        if (!rec_key_is_public(value)) rec_learn_depth(r, value->valuestring, 0);
    } else if (cJSON_IsObject(value) || cJSON_IsArray(value)) {
        rec_walk(r, value, 0, rec_learn_leaf, NULL);
    }
}

void rec_redactor_learn_marked(rec_redactor *r, cJSON *doc, const rs_secret_marks *marks)
{
    if (doc && marks) rs_secret_visit(doc, marks, rec_learn_visit, r);
}

/* ---- redaction ---- */

static char *rec_redact_depth(rec_redactor *r, const char *s, int depth);

/* Every atom of REC_ATOM_MIN or more inside s replaced by its fingerprint,
 * in one left-to-right pass (a fingerprint is never searched again). */
static char *rec_replace_atoms(const rec_redactor *r, const char *s)
{
    size_t len = strlen(s), cap = len + 1, n = 0;
    /* Most strings hold no atom: found at once, copied as they are. */
    bool any = false;
    for (size_t k = 0; !any && k < r->n && r->a[k].len >= REC_ATOM_MIN; k++)
        any = memmem(s, len, r->a[k].v, r->a[k].len) != NULL;
    if (!any) return rs_xstrdup(s);
    char *out = rs_xmalloc(cap);
    for (size_t i = 0; i < len;) {
        const rec_atom *hit = NULL;
        for (size_t k = 0; k < r->n && r->a[k].len >= REC_ATOM_MIN; k++)
            if (r->a[k].len <= len - i && memcmp(s + i, r->a[k].v, r->a[k].len) == 0) {
                hit = &r->a[k];
                break;
            }
        const char *piece = hit ? hit->fp : s + i;
        size_t plen = hit ? REC_FP_LEN - 1 : 1;
        if (n + plen + 1 > cap) out = rs_xrealloc(out, cap = 2 * (n + plen + 1));
        memcpy(out + n, piece, plen);
        n += plen;
        i += hit ? hit->len : 1;
    }
    out[n] = '\0';
    return out;
}

static void rec_redact_leaf(rec_redactor *r, cJSON *node, int depth, bool *changed)
{
    if (node->string) {
        char *k = rec_replace_atoms(r, node->string);
        if (strcmp(k, node->string) != 0) {
            rec_set_key(node, k);
            *changed = true;
        } else {
            free(k);
        }
    }
    if (!cJSON_IsString(node) || !node->valuestring) return;
    char *v = rec_redact_depth(r, node->valuestring, depth + 1);
    if (strcmp(v, node->valuestring) != 0) {
        rec_set_string(node, v);
        *changed = true;
    } else {
        free(v);
    }
}

static char *rec_redact_depth(rec_redactor *r, const char *s, int depth)
{
    if (depth < REC_NEST_MAX && rec_is_doc(s)) {
        cJSON *doc = cJSON_Parse(s);
        bool changed = false;
        if (doc && (cJSON_IsObject(doc) || cJSON_IsArray(doc)))
            rec_walk(r, doc, depth, rec_redact_leaf, &changed);
        char *out = changed ? cJSON_PrintUnformatted(doc) : NULL;
        cred_json_wipe_delete(doc);
        if (out) return out;
    }
    char *text = depth < REC_NEST_MAX ? rec_b64_text(s) : NULL;
    if (text) {
        char *inner = rec_redact_depth(r, text, depth + 1);
        bool changed = strcmp(inner, text) != 0;
        cred_text_wipe_free(text);
        if (changed) {
            char *out = rs_xasprintf("b64:%s", inner);
            free(inner);
            return out;
        }
        free(inner);
    }
    const rec_atom *whole = rec_find(r, s);
    if (whole) return rs_xstrdup(whole->fp);
    char *out = rec_replace_atoms(r, s);
    size_t olen = strlen(out), nlen = 0;
    char *net = cred_redact_text(r->net, out, olen, &nlen);
    bool caught = nlen != olen || memcmp(net, out, olen) != 0;
    free(net);
    if (caught) {
        /* An atom in an encoding the shape rules do not follow: the whole
         * value goes (its shape is lost; its secret is not). */
        free(out);
        out = rs_xmalloc(REC_FP_LEN);
        rec_fp_of(r, s, strlen(s), out);
    }
    return out;
}

char *rec_redact_string(rec_redactor *r, const char *s)
{
    return rec_redact_depth(r, s ? s : "", 0);
}

void rec_redact_json(rec_redactor *r, cJSON *v)
{
    bool changed = false;
    if (v) rec_walk(r, v, 0, rec_redact_leaf, &changed);
}

static void rec_marked_leaf(rec_redactor *r, cJSON *node, int depth, bool *changed)
{
    (void)depth;
    (void)changed;
    if (!cJSON_IsString(node) || rec_key_is_public(node) || !node->valuestring[0]) return;
    if (strstr(node->valuestring, "fp:")) return; /* redacted already */
    char *fp = rs_xmalloc(REC_FP_LEN);
    rec_fp_of(r, node->valuestring, strlen(node->valuestring), fp);
    rec_set_string(node, fp);
}

static void rec_marked_visit(cJSON *value, void *arg)
{
    rec_walk(arg, value, 0, rec_marked_leaf, NULL);
}

void rec_redact_marked(rec_redactor *r, cJSON *doc, const rs_secret_marks *marks)
{
    if (doc && marks) rs_secret_visit(doc, marks, rec_marked_visit, r);
}

/* ---- the inverse (replay) ---- */

static bool rec_is_fp_at(const char *s)
{
    if (strncmp(s, "fp:", 3) != 0) return false;
    for (int i = 0; i < 64; i++)
        if (!((s[3 + i] >= '0' && s[3 + i] <= '9') || (s[3 + i] >= 'a' && s[3 + i] <= 'f')))
            return false;
    return true;
}

/* The synthetic atom of fp, registered so the replayed request redacts back. */
static const char *rec_synthetic(rec_redactor *r, const char *fp)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->a[i].fp, fp) == 0 && strncmp(r->a[i].v, REC_SYNTH_PREFIX, 9) == 0)
            return r->a[i].v;
    char synth[9 + 64 + 1];
    snprintf(synth, sizeof synth, "%s%.64s", REC_SYNTH_PREFIX, fp + 3);
    rec_add_fp(r, synth, fp);
    return rec_find(r, synth)->v;
}

static char *rec_unredact_depth(rec_redactor *r, const char *s, int depth);

static void rec_unredact_leaf(rec_redactor *r, cJSON *node, int depth, bool *changed)
{
    if (node->string && strstr(node->string, "fp:")) {
        char *k = rec_unredact_depth(r, node->string, REC_NEST_MAX);
        rec_set_key(node, k);
        *changed = true;
    }
    if (!cJSON_IsString(node) || !node->valuestring) return;
    char *v = rec_unredact_depth(r, node->valuestring, depth + 1);
    if (strcmp(v, node->valuestring) != 0) {
        rec_set_string(node, v);
        *changed = true;
    } else {
        free(v);
    }
}

static char *rec_unredact_depth(rec_redactor *r, const char *s, int depth)
{
    if (depth < REC_NEST_MAX && strncmp(s, "b64:", 4) == 0) {
        char *inner = rec_unredact_depth(r, s + 4, depth + 1);
        char *out = base64_encode(inner, strlen(inner));
        free(inner);
        return out;
    }
    if (depth < REC_NEST_MAX && rec_is_doc(s)) {
        cJSON *doc = cJSON_Parse(s);
        bool changed = false;
        if (doc && (cJSON_IsObject(doc) || cJSON_IsArray(doc)))
            rec_walk(r, doc, depth, rec_unredact_leaf, &changed);
        char *out = changed ? cJSON_PrintUnformatted(doc) : NULL;
        cJSON_Delete(doc);
        if (out) return out;
    }
    size_t len = strlen(s), cap = len + 1, n = 0;
    char *out = rs_xmalloc(cap);
    for (size_t i = 0; i < len;) {
        bool fp = len - i >= REC_FP_LEN - 1 && rec_is_fp_at(s + i);
        char fpbuf[REC_FP_LEN];
        const char *piece = s + i;
        size_t plen = 1;
        if (fp) {
            memcpy(fpbuf, s + i, REC_FP_LEN - 1);
            fpbuf[REC_FP_LEN - 1] = '\0';
            piece = rec_synthetic(r, fpbuf);
            plen = strlen(piece);
        }
        if (n + plen + 1 > cap) out = rs_xrealloc(out, cap = 2 * (n + plen + 1));
        memcpy(out + n, piece, plen);
        n += plen;
        i += fp ? REC_FP_LEN - 1 : 1;
    }
    out[n] = '\0';
    return out;
}

char *rec_unredact_string(rec_redactor *r, const char *s)
{
    return rec_unredact_depth(r, s ? s : "", 0);
}

void rec_unredact_json(rec_redactor *r, cJSON *v)
{
    bool changed = false;
    if (v) rec_walk(r, v, 0, rec_unredact_leaf, &changed);
}
