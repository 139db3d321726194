/*
 * json_strict.c — a one-pass strict JSON scanner that runs before cJSON.
 *
 * The one idea: a credential must mean the same thing to every parser that
 * will ever read it. cJSON keeps the first of two duplicate keys and stops a
 * string at NUL; Go's encoding/json (kubelet, containerd) keeps the last and
 * replaces invalid UTF-8 with U+FFFD. So before cJSON sees the text we refuse
 * everything on which they could differ: duplicate keys at any depth (compared
 * after decoding escapes, so "a" and "\u0061" collide), NUL raw or escaped,
 * raw control characters, invalid UTF-8, lone surrogates, trailing garbage.
 *
 * The scanner is a state machine over an explicit stack of at most
 * JSON_STRICT_DEPTH_MAX containers; it never recurses, and every step consumes
 * at least one byte, so the main loop is bounded by the input length. Errors
 * name the byte offset and the key path (auths.ghcr.io.username), never a
 * value.
 */
#include "core/cred/cred.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_STRICT_DEPTH_MAX 64
/* Longest path component kept for error text; keys are names, but a
 * pathological key should not flood the message. */
#define JS_NAME_MAX 64

typedef struct js_key {
    char *bytes; /* decoded key, NUL-free (\u0000 is refused before this) */
    size_t len;
    size_t offset; /* byte offset of the key's opening quote */
} js_key;

typedef struct js_frame {
    char kind;                  /* '{' or '[' */
    size_t count;               /* members or elements seen so far */
    js_key *keys;               /* decoded keys of an object */
    size_t keys_cap;            /* allocated slots in keys */
    char name[JS_NAME_MAX + 8]; /* path component naming this container */
} js_frame;

typedef enum js_state {
    JS_VALUE,       /* a value must follow */
    JS_VALUE_FIRST, /* just after '[': a value or ']' */
    JS_KEY_FIRST,   /* just after '{': a key or '}' */
    JS_AFTER        /* a value ended: ',' or a close, or end of text */
} js_state;

typedef struct js_scan {
    const char *s;
    size_t len;
    size_t pos;
    js_frame stack[JSON_STRICT_DEPTH_MAX];
    size_t depth;
    char key_name[JS_NAME_MAX + 8]; /* sanitized name of the member being parsed */
    rs_err *e;
} js_scan;

/* Growable byte buffer for one decoded key. */
typedef struct js_buf {
    char *p;
    size_t len, cap;
} js_buf;

static void js_buf_push(js_buf *b, const char *bytes, size_t n)
{
    if (!b) return;
    if (!b->p || b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 16;
        while (cap < b->len + n + 1)
            cap *= 2;
        b->p = rs_xrealloc(b->p, cap);
        b->cap = cap;
    }
    memcpy(b->p + b->len, bytes, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static bool js_fail(js_scan *sc, size_t at, const char *what)
{
    rs_fail(sc->e, RS_DATAERR, "%s at byte %zu", what, at);
    return false;
}

static void js_skip_ws(js_scan *sc)
{
    while (sc->pos < sc->len) {
        char c = sc->s[sc->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
        sc->pos++;
    }
}

/* Copies a key into a path component: printable ASCII kept, anything else
 * shown as '?', truncated with "..." — readable, bounded, never ambiguous
 * enough to matter for locating the problem. */
static void js_name_from_key(char *dst, const char *key, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < len && o < JS_NAME_MAX; i++) {
        unsigned char c = (unsigned char)key[i];
        dst[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (len > JS_NAME_MAX) {
        memcpy(dst + o, "...", 3);
        o += 3;
    }
    dst[o] = '\0';
}

/* The key path of the innermost container, e.g. "auths.ghcr.io" or "a[2].b". */
static void js_path(const js_scan *sc, char *out, size_t cap)
{
    size_t o = 0;
    out[0] = '\0';
    for (size_t d = 1; d < sc->depth && o + 1 < cap; d++) {
        const char *name = sc->stack[d].name;
        bool index = name[0] == '[';
        int n = snprintf(out + o, cap - o, "%s%s", (o == 0 || index) ? "" : ".", name);
        if (n < 0) return;
        o += (size_t)n < cap - o ? (size_t)n : cap - o - 1;
    }
}

/* Decodes 4 hex digits at sc->pos. */
static bool js_hex4(js_scan *sc, unsigned *out)
{
    if (sc->len - sc->pos < 4) return js_fail(sc, sc->pos, "not valid JSON (short \\u escape)");
    unsigned v = 0;
    for (size_t i = 0; i < 4; i++) {
        char c = sc->s[sc->pos + i];
        unsigned d;
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = (unsigned)(c - 'A' + 10);
        else
            return js_fail(sc, sc->pos + i, "not valid JSON (bad hex digit in \\u escape)");
        v = v * 16 + d;
    }
    sc->pos += 4;
    *out = v;
    return true;
}

static size_t js_utf8_put(unsigned cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* A \u escape (sc->pos just past the 'u'), including a surrogate pair. Lone
 * surrogates are refused: cJSON rejects them, Go turns them into U+FFFD. */
static bool js_unicode_escape(js_scan *sc, js_buf *out)
{
    size_t at = sc->pos - 2;
    unsigned cp;
    if (!js_hex4(sc, &cp)) return false;
    if (cp == 0) return js_fail(sc, at, "contains a NUL character (\\u0000)");
    if (cp >= 0xDC00 && cp <= 0xDFFF) return js_fail(sc, at, "not valid JSON (lone surrogate)");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (sc->len - sc->pos < 2 || sc->s[sc->pos] != '\\' || sc->s[sc->pos + 1] != 'u')
            return js_fail(sc, at, "not valid JSON (lone surrogate)");
        sc->pos += 2;
        unsigned lo;
        if (!js_hex4(sc, &lo)) return false;
        if (lo < 0xDC00 || lo > 0xDFFF) return js_fail(sc, at, "not valid JSON (lone surrogate)");
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    char u[4];
    js_buf_push(out, u, js_utf8_put(cp, u));
    return true;
}

static bool js_escape(js_scan *sc, js_buf *out)
{
    if (sc->pos + 1 >= sc->len) return js_fail(sc, sc->pos, "not valid JSON (unterminated string)");
    char c = sc->s[sc->pos + 1];
    sc->pos += 2;
    const char *simple = NULL;
    switch (c) {
    case '"':
        simple = "\"";
        break;
    case '\\':
        simple = "\\";
        break;
    case '/':
        simple = "/";
        break;
    case 'b':
        simple = "\b";
        break;
    case 'f':
        simple = "\f";
        break;
    case 'n':
        simple = "\n";
        break;
    case 'r':
        simple = "\r";
        break;
    case 't':
        simple = "\t";
        break;
    case 'u':
        return js_unicode_escape(sc, out);
    default:
        return js_fail(sc, sc->pos - 2, "not valid JSON (bad escape)");
    }
    js_buf_push(out, simple, 1);
    return true;
}

/* Length of a well-formed UTF-8 sequence starting at p (RFC 3629: no
 * overlongs, no surrogates, nothing above U+10FFFF), or 0. */
static size_t js_utf8_len(const unsigned char *p, size_t avail)
{
    unsigned char c = p[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4;
    else
        return 0;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
    if (avail < n) return 0;
    if (p[1] < lo || p[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF) return 0;
    return n;
}

/* A string at sc->pos (which holds '"'); decoded into out when out != NULL. */
static bool js_string(js_scan *sc, js_buf *out)
{
    size_t start = sc->pos++;
    while (sc->pos < sc->len) {
        unsigned char c = (unsigned char)sc->s[sc->pos];
        if (c == '"') {
            sc->pos++;
            return true;
        }
        if (c == '\\') {
            if (!js_escape(sc, out)) return false;
        } else if (c < 0x20) {
            return js_fail(sc, sc->pos, "not valid JSON (raw control character in a string)");
        } else if (c < 0x80) {
            js_buf_push(out, (const char *)&sc->s[sc->pos], 1);
            sc->pos++;
        } else {
            size_t n = js_utf8_len((const unsigned char *)sc->s + sc->pos, sc->len - sc->pos);
            if (n == 0) return js_fail(sc, sc->pos, "not valid UTF-8");
            js_buf_push(out, sc->s + sc->pos, n);
            sc->pos += n;
        }
    }
    return js_fail(sc, start, "not valid JSON (unterminated string)");
}

static size_t js_digits(js_scan *sc)
{
    size_t n = 0;
    while (sc->pos < sc->len && sc->s[sc->pos] >= '0' && sc->s[sc->pos] <= '9') {
        sc->pos++;
        n++;
    }
    return n;
}

/* RFC 8259 number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool js_number(js_scan *sc)
{
    size_t start = sc->pos;
    if (sc->s[sc->pos] == '-') sc->pos++;
    if (sc->pos < sc->len && sc->s[sc->pos] == '0')
        sc->pos++;
    else if (js_digits(sc) == 0)
        return js_fail(sc, start, "not valid JSON");
    if (sc->pos < sc->len && sc->s[sc->pos] == '.') {
        sc->pos++;
        if (js_digits(sc) == 0) return js_fail(sc, start, "not valid JSON");
    }
    if (sc->pos < sc->len && (sc->s[sc->pos] == 'e' || sc->s[sc->pos] == 'E')) {
        sc->pos++;
        if (sc->pos < sc->len && (sc->s[sc->pos] == '+' || sc->s[sc->pos] == '-')) sc->pos++;
        if (js_digits(sc) == 0) return js_fail(sc, start, "not valid JSON");
    }
    return true;
}

static bool js_literal(js_scan *sc, const char *word)
{
    size_t n = strlen(word);
    if (sc->len - sc->pos < n || memcmp(sc->s + sc->pos, word, n) != 0)
        return js_fail(sc, sc->pos, "not valid JSON");
    sc->pos += n;
    return true;
}

static bool js_push(js_scan *sc, char kind)
{
    if (sc->depth >= JSON_STRICT_DEPTH_MAX)
        return js_fail(sc, sc->pos, "nested deeper than 64 levels");
    js_frame *f = &sc->stack[sc->depth++];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    memcpy(f->name, sc->key_name, sizeof f->name);
    sc->pos++;
    return true;
}

static void js_frame_release(js_frame *f)
{
    for (size_t i = 0; i < f->count && f->keys; i++)
        free(f->keys[i].bytes);
    free(f->keys);
    f->keys = NULL;
}

static int js_key_cmp(const void *a, const void *b)
{
    const js_key *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->bytes, y->bytes, n);
    if (c != 0) return c;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return x->offset < y->offset ? -1 : (x->offset > y->offset);
}

/* Sorting at close keeps duplicate detection O(n log n) per object. */
static bool js_object_check_dups(js_scan *sc, js_frame *f)
{
    if (f->count < 2) return true;
    qsort(f->keys, f->count, sizeof *f->keys, js_key_cmp);
    for (size_t i = 1; i < f->count; i++) {
        const js_key *a = &f->keys[i - 1], *b = &f->keys[i];
        if (a->len != b->len || memcmp(a->bytes, b->bytes, a->len) != 0) continue;
        char path[512], name[JS_NAME_MAX + 8];
        js_path(sc, path, sizeof path);
        js_name_from_key(name, b->bytes, b->len);
        rs_fail(sc->e, RS_DATAERR, "duplicate key %s%s%s at byte %zu", path, path[0] ? "." : "",
                name, b->offset);
        return false;
    }
    return true;
}

static bool js_pop(js_scan *sc)
{
    js_frame *f = &sc->stack[sc->depth - 1];
    bool ok = f->kind != '{' || js_object_check_dups(sc, f);
    js_frame_release(f);
    sc->depth--;
    sc->pos++;
    return ok;
}

/* Parses `"key" :` inside the innermost object and records the key. */
static bool js_member_key(js_scan *sc)
{
    js_frame *f = &sc->stack[sc->depth - 1];
    size_t at = sc->pos;
    if (at >= sc->len || sc->s[at] != '"')
        return js_fail(sc, at, "not valid JSON (expected a key)");
    js_buf key = {0};
    if (!js_string(sc, &key)) {
        free(key.p);
        return false;
    }
    if (!key.p) js_buf_push(&key, "", 0);
    if (f->count == f->keys_cap) {
        f->keys_cap = f->keys_cap ? f->keys_cap * 2 : 8;
        f->keys = rs_xrealloc(f->keys, f->keys_cap * sizeof *f->keys);
    }
    f->keys[f->count++] = (js_key){.bytes = key.p, .len = key.len, .offset = at};
    js_name_from_key(sc->key_name, key.p, key.len);
    js_skip_ws(sc);
    if (sc->pos >= sc->len || sc->s[sc->pos] != ':')
        return js_fail(sc, sc->pos, "not valid JSON (expected ':')");
    sc->pos++;
    return true;
}

/* One value at sc->pos: a scalar is consumed whole, a container is opened. */
static bool js_value(js_scan *sc, js_state *next)
{
    js_skip_ws(sc);
    if (sc->pos >= sc->len) return js_fail(sc, sc->pos, "not valid JSON (unexpected end)");
    char c = sc->s[sc->pos];
    *next = JS_AFTER;
    switch (c) {
    case '{':
        *next = JS_KEY_FIRST;
        return js_push(sc, '{');
    case '[':
        *next = JS_VALUE_FIRST;
        return js_push(sc, '[');
    case '"':
        return js_string(sc, NULL);
    case 't':
        return js_literal(sc, "true");
    case 'f':
        return js_literal(sc, "false");
    case 'n':
        return js_literal(sc, "null");
    default:
        if (c == '-' || (c >= '0' && c <= '9')) return js_number(sc);
        return js_fail(sc, sc->pos, "not valid JSON");
    }
}

/* Names the next element of an array for error paths ("[3]"). */
static void js_name_next_element(js_scan *sc)
{
    js_frame *f = &sc->stack[sc->depth - 1];
    snprintf(sc->key_name, sizeof sc->key_name, "[%zu]", f->count);
    f->count++;
}

/* After a value: ',' continues the container, a matching close ends it. */
static bool js_after(js_scan *sc, js_state *next)
{
    js_skip_ws(sc);
    js_frame *f = &sc->stack[sc->depth - 1];
    char close = f->kind == '{' ? '}' : ']';
    if (sc->pos >= sc->len) return js_fail(sc, sc->pos, "not valid JSON (unexpected end)");
    char c = sc->s[sc->pos];
    if (c == close) {
        *next = JS_AFTER;
        return js_pop(sc);
    }
    if (c != ',') return js_fail(sc, sc->pos, "not valid JSON (expected ',' or a close)");
    sc->pos++;
    js_skip_ws(sc);
    *next = JS_VALUE;
    if (f->kind == '{') return js_member_key(sc);
    js_name_next_element(sc);
    return true;
}

/* One step of the machine; returns false on error, sets *done at the end. */
static bool js_step(js_scan *sc, js_state *st, bool *done)
{
    switch (*st) {
    case JS_VALUE:
        return js_value(sc, st);
    case JS_KEY_FIRST:
        js_skip_ws(sc);
        if (sc->pos < sc->len && sc->s[sc->pos] == '}') {
            *st = JS_AFTER;
            return js_pop(sc);
        }
        *st = JS_VALUE;
        return js_member_key(sc);
    case JS_VALUE_FIRST:
        js_skip_ws(sc);
        if (sc->pos < sc->len && sc->s[sc->pos] == ']') {
            *st = JS_AFTER;
            return js_pop(sc);
        }
        js_name_next_element(sc);
        return js_value(sc, st);
    case JS_AFTER:
        if (sc->depth > 0) return js_after(sc, st);
        js_skip_ws(sc);
        if (sc->pos != sc->len)
            return js_fail(sc, sc->pos, "trailing garbage after the JSON value");
        *done = true;
        return true;
    }
    return js_fail(sc, sc->pos, "internal scanner state");
}

bool json_utf8_valid(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        if (p[i] == 0) return false;
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        size_t n = js_utf8_len(p + i, len - i);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

bool json_strict_check(const char *text, size_t len, rs_err *e)
{
    if (!text) return rs_fail(e, RS_DATAERR, "no JSON text"), false;
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        rs_fail(e, RS_DATAERR, "contains a NUL character at byte %zu", (size_t)(nul - text));
        return false;
    }
    js_scan *sc = rs_xcalloc(1, sizeof *sc);
    sc->s = text;
    sc->len = len;
    sc->e = e;
    js_state st = JS_VALUE;
    bool done = false, ok = true;
    /* Every step consumes at least one byte or finishes, so len + 2 steps
     * bound the walk. */
    for (size_t steps = 0; ok && !done && steps <= len + 2; steps++)
        ok = js_step(sc, &st, &done);
    if (ok && !done) ok = js_fail(sc, sc->pos, "not valid JSON (scanner did not finish)");
    for (size_t d = 0; d < sc->depth; d++)
        js_frame_release(&sc->stack[d]);
    free(sc);
    return ok;
}
