/*
 * json_canonical.c — compact JSON writing: the canonical form of a document
 * and the docker config JSON we write.
 *
 * The one idea: credentials are compared as canonical text (keys sorted
 * bytewise, no whitespace, strings and numbers spelled as cJSON prints them),
 * so key order and formatting never count as drift. The writer escapes
 * strings itself, byte for byte as cJSON's print_string_ptr does, so the
 * secret text only ever lives in buffers we own and wipe when they grow or
 * are discarded. The walk uses an explicit stack: no recursion, whatever the
 * depth of the tree.
 */
#include "core/cred/cred.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct jc_buf {
    char *p;
    size_t len, cap;
} jc_buf;

/* Grows by copy-then-wipe instead of realloc: realloc may move the bytes
 * and leave the old copy of a password in freed memory. */
static void jc_reserve(jc_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *p = rs_xmalloc(cap);
    if (b->p) {
        memcpy(p, b->p, b->len);
        OPENSSL_cleanse(b->p, b->cap);
        free(b->p);
    }
    b->p = p;
    b->cap = cap;
}

static void jc_put(jc_buf *b, const char *s, size_t n)
{
    jc_reserve(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void jc_puts(jc_buf *b, const char *s)
{
    jc_put(b, s, strlen(s));
}

static void jc_discard(jc_buf *b)
{
    if (b->p) OPENSSL_cleanse(b->p, b->cap);
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* The escaping of cJSON 1.7's print_string_ptr: '"' '\\' and the C0 controls
 * are escaped (short forms where JSON has them, else \u00xx lowercase);
 * every other byte, '/' and UTF-8 included, is copied as is. */
static void jc_string(jc_buf *b, const char *s)
{
    jc_put(b, "\"", 1);
    size_t n = s ? strlen(s) : 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        const char *rep = NULL;
        switch (c) {
        case '"':
            rep = "\\\"";
            break;
        case '\\':
            rep = "\\\\";
            break;
        case '\b':
            rep = "\\b";
            break;
        case '\f':
            rep = "\\f";
            break;
        case '\n':
            rep = "\\n";
            break;
        case '\r':
            rep = "\\r";
            break;
        case '\t':
            rep = "\\t";
            break;
        default:
            if (c < 32) {
                snprintf(esc, sizeof esc, "\\u%04x", c);
                rep = esc;
            }
        }
        if (rep)
            jc_puts(b, rep);
        else
            jc_put(b, (const char *)&s[i], 1);
    }
    jc_put(b, "\"", 1);
}

/* Numbers and literals are not secret: let cJSON spell them, so the
 * canonical form matches cJSON's printer exactly. */
static bool jc_scalar(jc_buf *b, const cJSON *v)
{
    if (cJSON_IsString(v)) {
        jc_string(b, v->valuestring);
        return true;
    }
    if (cJSON_IsRaw(v)) {
        if (!v->valuestring) return false;
        jc_puts(b, v->valuestring);
        return true;
    }
    char *text = cJSON_PrintUnformatted(v);
    if (!text) return false;
    jc_puts(b, text);
    cJSON_free(text);
    return true;
}

typedef struct jc_member {
    const cJSON *item;
    size_t index; /* original position: a stable tie-break for duplicate keys */
} jc_member;

typedef struct jc_frame {
    jc_member *kids;
    size_t n, next;
    bool object;
} jc_frame;

static int jc_member_cmp(const void *a, const void *b)
{
    const jc_member *x = a, *y = b;
    const char *kx = x->item->string ? x->item->string : "";
    const char *ky = y->item->string ? y->item->string : "";
    int c = strcmp(kx, ky);
    if (c != 0) return c;
    return x->index < y->index ? -1 : (x->index > y->index);
}

static jc_frame jc_frame_open(const cJSON *v)
{
    jc_frame f = {.object = cJSON_IsObject(v)};
    size_t n = 0;
    for (const cJSON *c = v->child; c; c = c->next)
        n++;
    f.kids = rs_xcalloc(n, sizeof *f.kids);
    for (const cJSON *c = v->child; c; c = c->next, f.n++)
        f.kids[f.n] = (jc_member){.item = c, .index = f.n};
    if (f.object) qsort(f.kids, f.n, sizeof *f.kids, jc_member_cmp);
    return f;
}

typedef struct jc_walk {
    jc_buf out;
    jc_frame *stack;
    size_t depth, cap;
} jc_walk;

/* Writes a scalar, or opens a container and pushes its frame. */
static bool jc_enter(jc_walk *w, const cJSON *v)
{
    if (!cJSON_IsObject(v) && !cJSON_IsArray(v)) return jc_scalar(&w->out, v);
    if (w->depth == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 16;
        w->stack = rs_xrealloc(w->stack, w->cap * sizeof *w->stack);
    }
    w->stack[w->depth++] = jc_frame_open(v);
    jc_put(&w->out, cJSON_IsObject(v) ? "{" : "[", 1);
    return true;
}

/* Advances the innermost container by one member, or closes it. */
static bool jc_advance(jc_walk *w)
{
    jc_frame *f = &w->stack[w->depth - 1];
    if (f->next == f->n) {
        jc_put(&w->out, f->object ? "}" : "]", 1);
        free(f->kids);
        w->depth--;
        return true;
    }
    const cJSON *item = f->kids[f->next].item;
    if (f->next++ > 0) jc_put(&w->out, ",", 1);
    if (f->object) {
        jc_string(&w->out, item->string);
        jc_put(&w->out, ":", 1);
    }
    return jc_enter(w, item);
}

char *json_canonical(const cJSON *v)
{
    if (!v) return NULL;
    jc_walk w = {0};
    bool ok = jc_enter(&w, v);
    /* Each step writes one member or closes one container, so the walk ends
     * after at most twice the number of nodes in the (finite, acyclic) tree. */
    while (ok && w.depth > 0)
        ok = jc_advance(&w);
    for (size_t d = 0; d < w.depth; d++)
        free(w.stack[d].kids);
    free(w.stack);
    if (!ok) {
        jc_discard(&w.out);
        return NULL;
    }
    if (!w.out.p) jc_put(&w.out, "", 0);
    return w.out.p;
}

char *cred_dockerconfig_build(const char *host, const char *username, const char *password)
{
    if (!host || !username || !password) return NULL;
    jc_buf pair = {0};
    jc_puts(&pair, username);
    jc_put(&pair, ":", 1);
    jc_puts(&pair, password);
    char *auth = base64_encode(pair.p, pair.len);
    jc_discard(&pair);

    jc_buf b = {0};
    jc_puts(&b, "{\"auths\":{");
    jc_string(&b, host);
    jc_puts(&b, ":{\"username\":");
    jc_string(&b, username);
    jc_puts(&b, ",\"password\":");
    jc_string(&b, password);
    jc_puts(&b, ",\"auth\":");
    jc_string(&b, auth);
    jc_puts(&b, "}}}");
    OPENSSL_cleanse(auth, strlen(auth));
    free(auth);
    return b.p;
}
