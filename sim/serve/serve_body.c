/*
 * serve_body.c — a Kubernetes request body as JSON, with every string that
 * holds U+0000 kept whole.
 *
 * An API server decodes JSON into Go strings, which hold NUL like any other
 * byte: a Secret's stringData "a\u0000b" is stored as data base64("a\0b").
 * cJSON ends a string at its first NUL, so before parsing, each string
 * value holding the escape \u0000 is rewritten as the store's bytes carrier
 * {STORE_BYTES_KEY: "<base64 of the string's UTF-8 bytes>"} (sim/store/
 * store.h), decoded here as Go's encoding/json decodes it (a lone surrogate
 * becomes U+FFFD). The store stores a carrier as a Secret's stringData value
 * and refuses it anywhere else.
 *
 * Bytes that are not UTF-8 become U+FFFD first, one per byte, as Go's
 * encoding/json decodes a string (serve_body_utf8): the API server stores
 * the replacement character, never the raw byte.
 *
 * The one idea: the bytes the client sent are the bytes stored, or the write
 * is refused whole — never a value cut at the NUL. So a body whose carriers
 * are not exactly the ones written here (a client forging one) is refused,
 * and so is U+0000 in a key, which no carrier can stand for.
 */
#include "sim/serve/serve_int.h"

#include "core/cred/cred.h"
#include "sim/store/store.h"

#include <stdlib.h>
#include <string.h>

/* A growing byte buffer; wiped when it grows or is freed (bodies carry Secrets). */
typedef struct body_buf {
    char *p;
    size_t len, cap;
} body_buf;

static void buf_put(body_buf *b, const void *data, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *grown = rs_xmalloc(cap);
        if (b->p) memcpy(grown, b->p, b->len);
        if (b->p) cred_bytes_wipe_free(b->p, b->cap);
        b->p = grown;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void buf_free(body_buf *b)
{
    if (b->p) cred_bytes_wipe_free(b->p, b->cap);
    *b = (body_buf){0};
}

static int hex4(const char *p, const char *end)
{
    if (end - p < 4) return -1;
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0) return -1;
        v = v << 4 | d;
    }
    return v;
}

static void put_utf8(body_buf *b, unsigned cp)
{
    unsigned char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (unsigned char)cp, n = 1;
    } else if (cp < 0x800) {
        u[0] = (unsigned char)(0xC0 | cp >> 6), u[1] = (unsigned char)(0x80 | (cp & 0x3F)), n = 2;
    } else if (cp < 0x10000) {
        u[0] = (unsigned char)(0xE0 | cp >> 12), u[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        u[2] = (unsigned char)(0x80 | (cp & 0x3F)), n = 3;
    } else {
        u[0] = (unsigned char)(0xF0 | cp >> 18), u[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
        u[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F)), u[3] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    buf_put(b, u, n);
}

/* The bytes of the JSON string between p and end (the quotes excluded), as
 * Go's encoding/json unquotes it. false on a malformed escape. */
static bool unquote(const char *p, const char *end, body_buf *out)
{
    static const char esc_in[] = "\"\\/bfnrt", esc_out[] = "\"\\/\b\f\n\r\t";
    while (p < end) {
        if (*p != '\\') {
            buf_put(out, p++, 1);
            continue;
        }
        if (end - p < 2) return false;
        const char *e = strchr(esc_in, p[1]);
        if (p[1] != 'u') {
            if (!e || !*e) return false;
            buf_put(out, &esc_out[e - esc_in], 1);
            p += 2;
            continue;
        }
        int cp = hex4(p + 2, end);
        if (cp < 0) return false;
        p += 6;
        if (cp >= 0xD800 && cp < 0xDC00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
            int lo = hex4(p + 2, end);
            if (lo >= 0xDC00 && lo < 0xE000) { /* a valid pair: one rune */
                put_utf8(out,
                         0x10000u + (((unsigned)cp - 0xD800u) << 10 | ((unsigned)lo - 0xDC00u)));
                p += 6;
                continue;
            }
        }
        /* A lone surrogate is U+FFFD, as in Go (the next escape stays its own). */
        put_utf8(out, cp >= 0xD800 && cp < 0xE000 ? 0xFFFDu : (unsigned)cp);
    }
    return true;
}

/* The length of the well-formed UTF-8 sequence at p (1 to 4), or 0 when
 * none starts there: as Go's utf8.DecodeRune, which answers (RuneError, 1)
 * for an overlong form, a surrogate, a value past U+10FFFF, a stray
 * continuation byte or a sequence cut short. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned c = p[0], lo = 0x80, hi = 0xBF;
    size_t n;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c == 0xE0)
        n = 3, lo = 0xA0;
    else if (c == 0xED)
        n = 3, hi = 0x9F;
    else if (c >= 0xE1 && c <= 0xEF)
        n = 3;
    else if (c == 0xF0)
        n = 4, lo = 0x90;
    else if (c == 0xF4)
        n = 4, hi = 0x8F;
    else if (c >= 0xF1 && c <= 0xF3)
        n = 4;
    else
        return 0;
    if ((size_t)(end - p) < n || p[1] < lo || p[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF) return 0;
    return n;
}

char *serve_body_utf8(const char *body, size_t len, size_t *out_len)
{
    const unsigned char *p = (const unsigned char *)body, *end = p + len, *copied = p;
    body_buf out = {0};
    while (p < end) {
        size_t n = utf8_len(p, end);
        if (n) {
            p += n;
            continue;
        }
        buf_put(&out, copied, (size_t)(p - copied));
        buf_put(&out, "\xEF\xBF\xBD", 3); /* U+FFFD for this one byte */
        copied = ++p;
    }
    if (!out.p) return NULL;
    buf_put(&out, copied, (size_t)(end - copied));
    *out_len = out.len;
    return out.p;
}

/* The end of the string starting at the quote q (at its closing quote), or
 * NULL when unterminated; *nul is set when it holds the escape \u0000. */
static const char *string_end(const char *q, const char *end, bool *nul)
{
    *nul = false;
    for (const char *p = q + 1; p < end; p++) {
        if (*p == '"') return p;
        if (*p != '\\') continue;
        if (++p == end) return NULL;
        if (*p == 'u' && end - p > 4 && memcmp(p + 1, "0000", 4) == 0) *nul = true;
    }
    return NULL;
}

static bool is_key(const char *after, const char *end)
{
    while (after < end && strchr(" \t\r\n", *after))
        after++;
    return after < end && *after == ':';
}

/* body with each string value holding \u0000 replaced by a carrier; false
 * (why set) when that cannot be done exactly. */
static bool rewrite(const char *body, size_t len, body_buf *out, size_t *carriers, const char **why)
{
    const char *p = body, *end = body + len, *copied = body;
    *carriers = 0;
    while (p < end) {
        if (*p != '"') {
            p++;
            continue;
        }
        bool nul = false;
        const char *close = string_end(p, end, &nul);
        if (!close) return (*why = "the request body is not valid JSON"), false;
        if (nul) {
            if (is_key(close + 1, end))
                return (*why = "a key holding U+0000, which the sim cannot store exactly"), false;
            body_buf bytes = {0};
            bool ok = unquote(p + 1, close, &bytes);
            char *b64 = ok ? base64_encode(bytes.p ? bytes.p : "", bytes.len) : NULL;
            buf_free(&bytes);
            if (!ok) return (*why = "the request body is not valid JSON"), false;
            buf_put(out, copied, (size_t)(p - copied));
            buf_put(out, "{\"\\u0001bytes\":\"", 16);
            buf_put(out, b64, strlen(b64));
            buf_put(out, "\"}", 2);
            cred_text_wipe_free(b64);
            copied = close + 1;
            (*carriers)++;
        }
        p = close + 1;
    }
    buf_put(out, copied, (size_t)(end - copied));
    return true;
}

cJSON *serve_body_json_bytes(const serve_http *h, bool *malformed, const char **why)
{
    *malformed = false;
    *why = "the request body is not valid JSON";
    if (!h->body || h->body_len == 0) return NULL;
    size_t fixed_len = 0;
    char *fixed = serve_body_utf8(h->body, h->body_len, &fixed_len);
    body_buf text = {0};
    size_t carriers = 0;
    bool ok =
        rewrite(fixed ? fixed : h->body, fixed ? fixed_len : h->body_len, &text, &carriers, why);
    if (fixed) cred_bytes_wipe_free(fixed, fixed_len + 1);
    if (!ok) {
        buf_free(&text);
        *malformed = true;
        return NULL;
    }
    serve_http view = *h;
    view.body = text.p;
    view.body_len = text.len;
    cJSON *j = serve_body_json(&view, malformed);
    buf_free(&text);
    if (j && store_bytes_count(j) != carriers) {
        /* A carrier the client wrote itself: stringData values are strings. */
        *why = "the request body holds an object the sim reserves for strings with U+0000";
        cred_json_wipe_delete(j);
        *malformed = true;
        return NULL;
    }
    if (*malformed && serve_body_has_nul(h))
        *why = "the request body holds a raw control character in a string (not JSON)";
    return j;
}
