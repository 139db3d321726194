/*
 * codec.c — SHA-256 hex, strict base64, and constant-time comparison.
 *
 * The one idea: these are the byte-level primitives the credential code
 * builds on, and each is strict where leniency would let two readers of one
 * credential disagree. base64 is our own small codec rather than
 * EVP_DecodeBlock, which neither strips padding from the length it reports
 * nor rejects non-canonical trailing bits; here padding is required, only the
 * standard alphabet is accepted, and the decoded length is exact.
 */
#include "core/cred/cred.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

static const char codec_b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void sha256_hex(const void *data, size_t len, char hex_out[65])
{
    static const char digits[] = "0123456789abcdef";
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int md_len = 0;
    /* EVP_Digest fails only on allocation failure inside OpenSSL; a revision
     * computed from garbage would roll nodes, so abort like rs_xmalloc. */
    if (!EVP_Digest(data, len, md, &md_len, EVP_sha256(), NULL) || md_len != 32) abort();
    for (size_t i = 0; i < 32; i++) {
        hex_out[2 * i] = digits[md[i] >> 4];
        hex_out[2 * i + 1] = digits[md[i] & 0xF];
    }
    hex_out[64] = '\0';
    OPENSSL_cleanse(md, sizeof md);
}

char *base64_encode(const void *data, size_t len)
{
    const unsigned char *in = data;
    size_t out_len = (len + 2) / 3 * 4;
    char *out = rs_xmalloc(out_len + 1);
    size_t o = 0;
    for (size_t i = 0; i < len; i += 3) {
        size_t rest = len - i;
        unsigned v = (unsigned)in[i] << 16;
        if (rest > 1) v |= (unsigned)in[i + 1] << 8;
        if (rest > 2) v |= in[i + 2];
        out[o++] = codec_b64_alphabet[(v >> 18) & 0x3F];
        out[o++] = codec_b64_alphabet[(v >> 12) & 0x3F];
        out[o++] = rest > 1 ? codec_b64_alphabet[(v >> 6) & 0x3F] : '=';
        out[o++] = rest > 2 ? codec_b64_alphabet[v & 0x3F] : '=';
    }
    out[o] = '\0';
    return out;
}

/* Value of one alphabet character, or -1. Ranges rather than a 256-entry
 * table, so no memory access is indexed by a secret byte (cache timing). */
static int codec_b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* Decodes one 4-character quantum; `last` allows '=' padding. Returns the
 * number of bytes produced (1..3) or 0 when malformed. */
static size_t codec_b64_quantum(const char *q, bool last, unsigned char *out)
{
    int v[4];
    size_t pad = 0;
    if (last && q[3] == '=') pad = q[2] == '=' ? 2 : 1;
    for (size_t i = 0; i < 4 - pad; i++) {
        v[i] = codec_b64_value((unsigned char)q[i]);
        if (v[i] < 0) return 0;
    }
    for (size_t i = 4 - pad; i < 4; i++)
        v[i] = 0;
    unsigned bits =
        (unsigned)v[0] << 18 | (unsigned)v[1] << 12 | (unsigned)v[2] << 6 | (unsigned)v[3];
    /* Non-zero bits under the padding mean a second spelling of the same
     * bytes; refuse it so one credential has one text. */
    if ((pad == 1 && (bits & 0xFF)) || (pad == 2 && (bits & 0xFFFF))) return 0;
    out[0] = (unsigned char)(bits >> 16);
    out[1] = (unsigned char)(bits >> 8);
    out[2] = (unsigned char)bits;
    return 3 - pad;
}

unsigned char *base64_decode(const char *text, size_t *out_len)
{
    if (out_len) *out_len = 0;
    if (!text) return NULL;
    size_t len = strlen(text);
    if (len % 4 != 0) return NULL;
    unsigned char *out = rs_xmalloc(len / 4 * 3 + 1);
    size_t o = 0;
    for (size_t i = 0; i < len; i += 4) {
        size_t n = codec_b64_quantum(text + i, i + 4 == len, out + o);
        if (n == 0) {
            OPENSSL_cleanse(out, len / 4 * 3 + 1);
            free(out);
            return NULL;
        }
        o += n;
    }
    out[o] = '\0';
    if (out_len) *out_len = o;
    return out;
}

bool ct_equal(const void *a, size_t alen, const void *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int diff = n ? CRYPTO_memcmp(a, b, n) : 0;
    return (diff == 0) & (alen == blen);
}
