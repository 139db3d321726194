/*
 * cred_redact.c — the redaction filter (see cred_redact.h).
 *
 * The one idea: a report must be safe to paste into a public CI log even
 * when the check that failed was about the credential itself. So the filter
 * does not try to recognise "secret-looking" text; it knows every secret of
 * the run and every encoding a report path can put it in, and covers each
 * occurrence, overlapping ones included (a mask, not a left-to-right
 * replace, so a shorter form cannot leave the tail of a longer one behind).
 *
 * Needles are kept sorted by first byte, so each text position is compared
 * only with the needles that can start there.
 */
#include "core/cred/cred_redact.h"

#include "core/cred/cred.h"

#include <openssl/crypto.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Base64 fragments shorter than this are noise (they occur in any text). */
#define REDACT_B64_MIN 4
#define REDACT_NAME_MAX 64

typedef struct redact_needle {
    unsigned char *bytes;
    size_t len;
    char name[REDACT_NAME_MAX];
} redact_needle;

struct cred_redact {
    redact_needle *v;
    size_t n, cap;
    size_t first[257]; /* v[first[b] .. first[b+1]) start with byte b */
};

cred_redact *cred_redact_new(void)
{
    return rs_xcalloc(1, sizeof(cred_redact));
}

void cred_redact_free(cred_redact *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->n; i++) {
        cred_bytes_wipe_free(r->v[i].bytes, r->v[i].len);
    }
    free(r->v);
    free(r);
}

size_t cred_redact_count(const cred_redact *r)
{
    return r ? r->n : 0;
}

static int needle_cmp(const void *a, const void *b)
{
    const redact_needle *x = a, *y = b;
    if (x->bytes[0] != y->bytes[0]) return x->bytes[0] < y->bytes[0] ? -1 : 1;
    /* Longer first: the name of a stretch is the longest form starting it. */
    return x->len == y->len ? 0 : (x->len > y->len ? -1 : 1);
}

static void reindex(cred_redact *r)
{
    qsort(r->v, r->n, sizeof *r->v, needle_cmp);
    size_t i = 0;
    for (int b = 0; b < 256; b++) {
        r->first[b] = i;
        while (i < r->n && r->v[i].bytes[0] == b)
            i++;
    }
    r->first[256] = r->n;
}

static void add_needle(cred_redact *r, const char *name, const void *bytes, size_t len)
{
    if (len == 0) return;
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].len == len && memcmp(r->v[i].bytes, bytes, len) == 0) return;
    if (r->n == r->cap)
        r->v = rs_xrealloc(r->v, (r->cap = r->cap ? r->cap * 2 : 32) * sizeof *r->v);
    redact_needle *nd = &r->v[r->n++];
    nd->bytes = rs_xmalloc(len);
    memcpy(nd->bytes, bytes, len);
    nd->len = len;
    size_t k = 0;
    for (const char *p = name ? name : "secret"; *p && k + 1 < sizeof nd->name; p++, k++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        nd->name[k] = ok ? c : '_';
    }
    nd->name[k] = '\0';
}

/* The base64 characters that depend only on s when s starts at byte offset
 * `align` (mod 3) of the encoded stream: neither the bytes before it nor the
 * ones after it change them. */
static void add_b64_fragments(cred_redact *r, const char *name, const unsigned char *s, size_t len)
{
    for (size_t align = 0; align < 3; align++) {
        unsigned char *buf = rs_xcalloc(len + align, 1);
        memcpy(buf + align, s, len);
        char *enc = base64_encode(buf, len + align);
        size_t skip = (8 * align + 5) / 6;
        size_t end = 8 * (len + align) / 6;
        if (end > skip && end - skip >= REDACT_B64_MIN) {
            add_needle(r, name, enc + skip, end - skip);
            for (size_t i = skip; i < end; i++) /* the URL-safe alphabet */
                enc[i] = enc[i] == '+' ? '-' : enc[i] == '/' ? '_' : enc[i];
            add_needle(r, name, enc + skip, end - skip);
        }
        cred_text_wipe_free(enc);
        cred_bytes_wipe_free(buf, len + align);
    }
}

/* The escaping dialects a JSON writer on a report path may use. */
typedef enum redact_dialect {
    REDACT_CJSON, /* cJSON: \" \\ \b \f \n \r \t, other controls \u00xx */
    REDACT_GO,    /* Go encoding/json: also <, >, &, U+2028/9 as \u; \b \f as \u */
    REDACT_ASCII, /* ensure_ascii writers (Python, jq -a): every non-ASCII as \u */
    REDACT_DIALECTS
} redact_dialect;

/* The code point of the valid UTF-8 sequence at s (n bytes left), or -1. */
static long utf8_at(const unsigned char *s, size_t n, size_t *used)
{
    size_t k = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC0 ? 2 : 0;
    if (k == 0 || k > n || s[0] > 0xF4) return -1;
    long cp = s[0] & (0x3F >> (k - 1));
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80) return -1;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    static const long min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[k] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
    *used = k;
    return cp;
}

/* JSON string escaping without the quotes, in one dialect. */
static unsigned char *json_escape(const unsigned char *s, size_t len, redact_dialect d,
                                  size_t *out_len)
{
    bool go = d == REDACT_GO;
    unsigned char *o = rs_xmalloc(len * 12 + 1);
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = s[i];
        const char *short_esc = NULL;
        switch (c) {
        case '"':
            short_esc = "\\\"";
            break;
        case '\\':
            short_esc = "\\\\";
            break;
        case '\n':
            short_esc = "\\n";
            break;
        case '\r':
            short_esc = "\\r";
            break;
        case '\t':
            short_esc = "\\t";
            break;
        case '\b':
            short_esc = go ? NULL : "\\b";
            break;
        case '\f':
            short_esc = go ? NULL : "\\f";
            break;
        default:
            break;
        }
        if (short_esc) {
            memcpy(o + n, short_esc, 2);
            n += 2;
        } else if (c < 0x20 || (go && (c == '<' || c == '>' || c == '&'))) {
            n += (size_t)snprintf((char *)o + n, 7, "\\u%04x", c);
        } else if (d == REDACT_ASCII && c >= 0x80) {
            size_t used = 0;
            long cp = utf8_at(s + i, len - i, &used);
            if (cp < 0) {
                o[n++] = c; /* not UTF-8: a writer passes it or refuses it */
            } else if (cp > 0xFFFF) {
                cp -= 0x10000;
                n += (size_t)snprintf((char *)o + n, 13, "\\u%04lx\\u%04lx", 0xD800 + (cp >> 10),
                                      0xDC00 + (cp & 0x3FF));
                i += used - 1;
            } else {
                n += (size_t)snprintf((char *)o + n, 7, "\\u%04lx", cp);
                i += used - 1;
            }
        } else if (go && c == 0xE2 && i + 2 < len && s[i + 1] == 0x80 &&
                   (s[i + 2] == 0xA8 || s[i + 2] == 0xA9)) {
            n += (size_t)snprintf((char *)o + n, 7, "\\u%04x", s[i + 2] == 0xA8 ? 0x2028 : 0x2029);
            i += 2;
        } else {
            o[n++] = c;
        }
    }
    o[n] = '\0';
    *out_len = n;
    return o;
}

static void add_form(cred_redact *r, const char *name, const unsigned char *s, size_t len)
{
    add_needle(r, name, s, len);
    add_b64_fragments(r, name, s, len);
}

/* The URL and hex forms (a URL's userinfo holds a password so): percent-encoded as a URL encoder
 * writes it — every byte outside the unreserved set (encodeURIComponent),
 * or, in userinfo, only the bytes outside unreserved + sub-delims — with
 * upper- and lower-case hex digits; and the plain hex of the bytes. A form
 * equal to the raw bytes (a token of letters and digits) adds nothing new. */
static void add_url_and_hex_forms(cred_redact *r, const char *name, const unsigned char *s,
                                  size_t len)
{
    static const char *const digits[2] = {"0123456789ABCDEF", "0123456789abcdef"};
    char *o = rs_xmalloc(len * 3 + 1);
    for (int lower = 0; lower < 2; lower++) {
        const char *hx = digits[lower];
        for (int userinfo = 0; userinfo < 2; userinfo++) {
            size_t n = 0;
            for (size_t i = 0; i < len; i++) {
                unsigned char c = s[i];
                bool keep = (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z') ||
                            strchr("-._~", c) || (userinfo && strchr("!$&'()*+,;=", c));
                if (keep && c) {
                    o[n++] = (char)c;
                } else {
                    o[n++] = '%';
                    o[n++] = hx[c >> 4];
                    o[n++] = hx[c & 15];
                }
            }
            if (n != len) add_needle(r, name, o, n);
        }
        for (size_t i = 0; i < len; i++) {
            o[2 * i] = hx[s[i] >> 4];
            o[2 * i + 1] = hx[s[i] & 15];
        }
        add_needle(r, name, o, 2 * len);
    }
    cred_bytes_wipe_free((unsigned char *)o, len * 3 + 1);
}

void cred_redact_add(cred_redact *r, const char *name, const void *secret, size_t len)
{
    if (!r || !secret || len == 0) return;
    add_form(r, name, secret, len);
    add_url_and_hex_forms(r, name, secret, len);
    for (int d = 0; d < REDACT_DIALECTS; d++) {
        size_t n1, n2;
        unsigned char *once = json_escape(secret, len, (redact_dialect)d, &n1);
        unsigned char *twice = json_escape(once, n1, (redact_dialect)d, &n2);
        if (n1 != len || memcmp(once, secret, len) != 0) add_form(r, name, once, n1);
        if (n2 != n1 || memcmp(twice, once, n1) != 0) add_form(r, name, twice, n2);
        cred_bytes_wipe_free(once, n1);
        cred_bytes_wipe_free(twice, n2);
    }
    reindex(r);
}

void cred_redact_add_dockerconfig(cred_redact *r, const char *name, const char *json, size_t len)
{
    if (!r || !json) return;
    cred_redact_add(r, name, json, len);
    rs_cred c;
    rs_err e;
    if (cred_parse(json, len, "catalogue credential", &c, &e) != RS_OK) return;
    cred_redact_add(r, name, c.password, strlen(c.password));
    cred_redact_add(r, name, c.canonical, strlen(c.canonical));
    size_t ul = strlen(c.username), pl = strlen(c.password);
    char *userpass = rs_xmalloc(ul + pl + 2);
    memcpy(userpass, c.username, ul);
    userpass[ul] = ':';
    memcpy(userpass + ul + 1, c.password, pl + 1);
    cred_redact_add(r, name, userpass, ul + 1 + pl);
    char *auth = base64_encode(userpass, ul + 1 + pl);
    cred_redact_add(r, name, auth, strlen(auth));
    cred_text_wipe_free(auth);
    cred_bytes_wipe_free(userpass, ul + 1 + pl);
    cred_free(&c);
}

char *cred_redact_text(const cred_redact *r, const char *text, size_t len, size_t *out_len)
{
    const unsigned char *t = (const unsigned char *)text;
    /* Most text holds no needle: one pass finds that without the cover
     * array, and the text is copied as it is. */
    bool any = false;
    for (size_t i = 0; r && r->n && !any && i < len; i++)
        for (size_t k = r->first[t[i]]; !any && k < r->first[t[i] + 1]; k++)
            any = r->v[k].len <= len - i && memcmp(t + i, r->v[k].bytes, r->v[k].len) == 0;
    if (!any) {
        char *copy = rs_xmalloc(len + 1);
        memcpy(copy, text, len);
        copy[len] = '\0';
        if (out_len) *out_len = len;
        return copy;
    }
    /* cover[i]: 1 + the needle that covers byte i first; 0: shown. */
    size_t *cover = rs_xcalloc(len ? len : 1, sizeof *cover);
    size_t n_redactions = 0;
    for (size_t i = 0; cover && i < len; i++) {
        for (size_t k = r->first[t[i]]; k < r->first[t[i] + 1]; k++) {
            const redact_needle *nd = &r->v[k];
            if (nd->len > len - i || memcmp(t + i, nd->bytes, nd->len) != 0) continue;
            for (size_t j = i; j < i + nd->len; j++)
                if (!cover[j]) cover[j] = k + 1;
            n_redactions++;
        }
    }
    size_t cap = len + 1 + n_redactions * (REDACT_NAME_MAX + 16);
    char *out = rs_xmalloc(cap);
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        if (!cover || !cover[i]) {
            out[o++] = text[i++];
            continue;
        }
        o += (size_t)snprintf(out + o, cap - o, "<redacted:%s>", r->v[cover[i] - 1].name);
        while (i < len && cover[i])
            i++;
    }
    out[o] = '\0';
    free(cover);
    if (out_len) *out_len = o;
    return out;
}

static char *redact_cjson_string(const cred_redact *r, char *s)
{
    size_t len = strlen(s), n;
    char *red = cred_redact_text(r, s, len, &n);
    if (n == len && memcmp(red, s, len) == 0) {
        free(red);
        return NULL;
    }
    char *copy = cJSON_malloc(n + 1);
    if (copy) memcpy(copy, red, n + 1);
    free(red);
    return copy;
}

void cred_redact_json(const cred_redact *r, cJSON *v)
{
    if (!r || !v || r->n == 0) return;
    /* Depth-first without recursion: walk child/next links with an explicit
     * path back through the parent chain we keep on a small stack. */
    size_t cap = 16, depth = 0;
    cJSON **stack = rs_xmalloc(cap * sizeof *stack);
    stack[depth++] = v;
    while (depth) {
        cJSON *it = stack[--depth];
        for (; it; it = it == v ? NULL : it->next) {
            if (it->string && !(it->type & cJSON_StringIsConst)) {
                char *k = redact_cjson_string(r, it->string);
                if (k) {
                    OPENSSL_cleanse(it->string, strlen(it->string));
                    cJSON_free(it->string);
                    it->string = k;
                }
            }
            if (cJSON_IsString(it) && it->valuestring) {
                char *s = redact_cjson_string(r, it->valuestring);
                if (s) {
                    OPENSSL_cleanse(it->valuestring, strlen(it->valuestring));
                    cJSON_free(it->valuestring);
                    it->valuestring = s;
                }
            }
            if (it->child) {
                if (depth == cap) stack = rs_xrealloc(stack, (cap *= 2) * sizeof *stack);
                stack[depth++] = it->child;
            }
        }
    }
    free(stack);
}

void cred_redact_fingerprint(const void *data, size_t len, char out[CRED_FINGERPRINT_LEN])
{
    char hex[65];
    sha256_hex(data, len, hex);
    snprintf(out, CRED_FINGERPRINT_LEN, "sha256:%.12s", hex);
}

/* Common words and default secrets: a secret equal to one of these (any
 * case) is one an attacker tries first and one that turns up in ordinary
 * text. Kept short and literal on purpose: the length floor and the run's
 * own names catch the rest. */
static const char *const redact_common_words[] = {
    "password",      "passw0rd",     "password1", "changeme",      "changeit",   "letmein1",
    "welcome1",      "iloveyou",     "qwertyui",  "12345678",      "123456789",  "1234567890",
    "00000000",      "11111111",     "abcdefgh",  "administrator", "kubernetes", "openbao-token",
    "vault-token",   "bearer-token", "registry",  "dockerhub",     "container",  "localhost",
    "default-token", "secret-token", "superuser", "superadmin",    "rootroot",   "adminadmin",
    "username",      "anonymous",    "undefined", "nullnull",      NULL};

const char *cred_secret_unsafe(const char *secret, size_t len, const char *const *names)
{
    if (len < CRED_SECRET_MIN) return "is shorter than 8 bytes";
    for (size_t i = 0; redact_common_words[i]; i++)
        if (strlen(redact_common_words[i]) == len &&
            strncasecmp(redact_common_words[i], secret, len) == 0)
            return "is a common word or a well-known default secret";
    for (size_t i = 0; names && names[i]; i++) {
        size_t n = strlen(names[i]);
        for (size_t at = 0; n >= len && at <= n - len; at++)
            if (memcmp(names[i] + at, secret, len) == 0)
                return "occurs inside a name this run prints (a namespace, object, annotation "
                       "or image of its configuration)";
    }
    return NULL;
}
