/*
 * cred.c — the desired credential: validation, parsing, canonical comparison
 * and the revision (DESIGN.md §3.1).
 *
 * The one idea: accept a Docker config only when every reader that will ever
 * see it (cJSON here, Go's encoding/json in kubelet and containerd) must
 * extract the same ghcr.io username and password. So the text first passes
 * json_strict_check (no duplicate keys, no NUL, no invalid UTF-8); then we
 * refuse keys that Go would match case-insensitively to a field we read
 * ("Password" next to "password"); then both spellings of the secret
 * (username/password and auth) must agree if both are present. Every refusal
 * is a sentence naming the field, never its value.
 */
#include "core/cred/cred.h"

#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

#define CRED_HOST "ghcr.io"
#define CRED_ENTRY "auths[\"" CRED_HOST "\"]"

static void cred_cleanse_str(char *s)
{
    if (s) OPENSSL_cleanse(s, strlen(s));
}

/* Wipes every string in a parsed document before freeing it: the tree holds
 * the password, and cJSON_Delete alone would leave it in freed memory. The
 * walk goes down via child and across via next, climbing back with an
 * explicit stack, so depth costs heap, not C stack. */
void cred_bytes_wipe_free(void *p, size_t len)
{
    if (p) OPENSSL_cleanse(p, len);
    free(p);
}

void cred_text_wipe_free(char *text)
{
    cred_cleanse_str(text);
    free(text);
}

void cred_json_wipe_delete(cJSON *root)
{
    size_t cap = 16, depth = 0;
    cJSON **stack = rs_xmalloc(cap * sizeof *stack);
    for (cJSON *n = root; n;) {
        cred_cleanse_str(n->string);
        if (cJSON_IsString(n) || cJSON_IsRaw(n)) cred_cleanse_str(n->valuestring);
        if (n->child) {
            if (depth == cap) stack = rs_xrealloc(stack, (cap *= 2) * sizeof *stack);
            stack[depth++] = n;
            n = n->child;
            continue;
        }
        /* Climb until a node has a next sibling (the root's siblings are not
         * ours to walk). */
        while (n && n != root && !n->next)
            n = depth ? stack[--depth] : NULL;
        n = (n && n != root) ? n->next : NULL;
    }
    free(stack);
    cJSON_Delete(root);
}

/* Go's encoding/json matches object keys to struct fields case-insensitively
 * (with 'ſ' folding to 's' and the Kelvin sign to 'k'), so "Password" would
 * set the password Go sees while cJSON reads "password". Folds one key into
 * lower-case ASCII; returns false when it cannot equal any ASCII name. */
static bool cred_fold(const char *key, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; key[i]; i++) {
        unsigned char c = (unsigned char)key[i];
        if (o + 1 >= cap) return false;
        if (c == 0xC5 && (unsigned char)key[i + 1] == 0xBF) {
            out[o++] = 's';
            i += 1;
        } else if (c == 0xE2 && (unsigned char)key[i + 1] == 0x84 &&
                   (unsigned char)key[i + 2] == 0xAA) {
            out[o++] = 'k';
            i += 2;
        } else if (c < 0x80) {
            out[o++] = (char)((c >= 'A' && c <= 'Z') ? c + 32 : c);
        } else {
            return false;
        }
    }
    out[o] = '\0';
    return true;
}

/* Refuses any key of obj that is not exactly one of `fields` but folds to
 * one of them. `where` names obj in the error. */
static rs_code cred_refuse_case_variants(const cJSON *obj, const char *const *fields,
                                         size_t nfields, const char *what, const char *where,
                                         rs_err *e)
{
    for (const cJSON *c = obj->child; c; c = c->next) {
        char folded[32];
        if (!c->string || !cred_fold(c->string, folded, sizeof folded)) continue;
        for (size_t i = 0; i < nfields; i++) {
            if (strcmp(folded, fields[i]) != 0 || strcmp(c->string, fields[i]) == 0) continue;
            return rs_fail(e, RS_DATAERR,
                           "%s: %s has a key that differs from \"%s\" only in case; other "
                           "decoders would read it as %s",
                           what, where, fields[i], fields[i]);
        }
    }
    return RS_OK;
}

/* Reads an optional non-empty string field of the entry. *out stays NULL when
 * absent. */
static rs_code cred_string_field(const cJSON *entry, const char *field, const char *what,
                                 const char **out, rs_err *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(entry, field);
    *out = NULL;
    if (!v) return RS_OK;
    if (!cJSON_IsString(v) || !v->valuestring)
        return rs_fail(e, RS_DATAERR, "%s: %s.%s is not a string", what, CRED_ENTRY, field);
    if (v->valuestring[0] == '\0')
        return rs_fail(e, RS_DATAERR, "%s: %s.%s is empty", what, CRED_ENTRY, field);
    *out = v->valuestring;
    return RS_OK;
}

/* The decoded auth field, split at the first ':' as kubelet does. */
typedef struct cred_auth {
    unsigned char *raw; /* decoded bytes, NUL-terminated; user and pass point in */
    size_t raw_len;
    const char *user, *pass;
} cred_auth;

static void cred_auth_free(cred_auth *a)
{
    if (a->raw) OPENSSL_cleanse(a->raw, a->raw_len + 1);
    free(a->raw);
    memset(a, 0, sizeof *a);
}

static rs_code cred_auth_decode(const char *auth, const char *what, cred_auth *a, rs_err *e)
{
    memset(a, 0, sizeof *a);
    a->raw = base64_decode(auth, &a->raw_len);
    if (!a->raw)
        return rs_fail(e, RS_DATAERR, "%s: %s.auth is not base64 of user:pass", what, CRED_ENTRY);
    if (memchr(a->raw, '\0', a->raw_len))
        return rs_fail(e, RS_DATAERR, "%s: %s.auth decodes to text containing a NUL character",
                       what, CRED_ENTRY);
    char *colon = memchr(a->raw, ':', a->raw_len);
    if (!colon)
        return rs_fail(e, RS_DATAERR, "%s: %s.auth is not base64 of user:pass (no ':')", what,
                       CRED_ENTRY);
    *colon = '\0';
    a->user = (const char *)a->raw;
    a->pass = colon + 1;
    if (a->user[0] == '\0' || a->pass[0] == '\0')
        return rs_fail(e, RS_DATAERR, "%s: %s.auth has an empty username or password", what,
                       CRED_ENTRY);
    return RS_OK;
}

static bool cred_str_ct_equal(const char *a, const char *b)
{
    return ct_equal(a, strlen(a), b, strlen(b));
}

/* Decides the effective username/password of the ghcr.io entry. */
static rs_code cred_entry_read(const cJSON *entry, const char *what, rs_cred *out, rs_err *e)
{
    const char *user, *pass, *auth;
    rs_code rc = cred_string_field(entry, "username", what, &user, e);
    if (rc == RS_OK) rc = cred_string_field(entry, "password", what, &pass, e);
    if (rc == RS_OK) rc = cred_string_field(entry, "auth", what, &auth, e);
    if (rc != RS_OK) return rc;
    if (!user && !pass && !auth)
        return rs_fail(e, RS_DATAERR, "%s: %s has no username/password or auth", what, CRED_ENTRY);
    if (!user != !pass)
        return rs_fail(e, RS_DATAERR, "%s: %s has %s without %s", what, CRED_ENTRY,
                       user ? "username" : "password", user ? "password" : "username");
    /* A ':' in the username cannot survive the auth form (split at the first
     * ':'), so the config we write back would name a different user. */
    if (user && strchr(user, ':'))
        return rs_fail(e, RS_DATAERR, "%s: %s.username contains ':'", what, CRED_ENTRY);
    cred_auth a = {0};
    if (auth && (rc = cred_auth_decode(auth, what, &a, e)) != RS_OK) {
        cred_auth_free(&a);
        return rc;
    }
    if (auth && user) {
        bool same = cred_str_ct_equal(user, a.user) & cred_str_ct_equal(pass, a.pass);
        if (!same) {
            cred_auth_free(&a);
            return rs_fail(e, RS_DATAERR, "%s: %s.auth and username/password disagree", what,
                           CRED_ENTRY);
        }
    }
    out->username = rs_xstrdup(user ? user : a.user);
    out->password = rs_xstrdup(pass ? pass : a.pass);
    cred_auth_free(&a);
    return RS_OK;
}

/* Checks the document's shape and finds the ghcr.io entry. */
static rs_code cred_doc_entry(const cJSON *root, const char *what, const cJSON **entry, rs_err *e)
{
    /* Only the fields we read matter: a case variant of one of them is a
     * second value for it in Go's eyes. */
    static const char *const top_fields[] = {"auths"};
    static const char *const entry_fields[] = {"username", "password", "auth"};
    if (!cJSON_IsObject(root)) return rs_fail(e, RS_DATAERR, "%s: is not a JSON object", what);
    rs_code rc = cred_refuse_case_variants(root, top_fields, RS_ARRAY_LEN(top_fields), what,
                                           "the top-level object", e);
    if (rc != RS_OK) return rc;
    const cJSON *auths = cJSON_GetObjectItemCaseSensitive(root, "auths");
    if (!auths) return rs_fail(e, RS_DATAERR, "%s: missing auths", what);
    if (!cJSON_IsObject(auths)) return rs_fail(e, RS_DATAERR, "%s: auths is not an object", what);
    *entry = cJSON_GetObjectItemCaseSensitive(auths, CRED_HOST);
    if (!*entry) return rs_fail(e, RS_DATAERR, "%s: auths has no \"%s\" entry", what, CRED_HOST);
    if (!cJSON_IsObject(*entry))
        return rs_fail(e, RS_DATAERR, "%s: %s is not an object", what, CRED_ENTRY);
    return cred_refuse_case_variants(*entry, entry_fields, RS_ARRAY_LEN(entry_fields), what,
                                     CRED_ENTRY, e);
}

rs_code cred_parse(const char *text, size_t len, const char *what, rs_cred *out, rs_err *e)
{
    if (!what) what = "credential";
    memset(out, 0, sizeof *out);
    if (!json_strict_check(text, len, e)) {
        if (e) e->code = RS_DATAERR;
        return rs_wrap(e, "%s", what), RS_DATAERR;
    }
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!root) return rs_fail(e, RS_DATAERR, "%s: not valid JSON", what);
    const cJSON *entry = NULL;
    rs_code rc = cred_doc_entry(root, what, &entry, e);
    if (rc == RS_OK) rc = cred_entry_read(entry, what, out, e);
    if (rc == RS_OK) {
        out->canonical = json_canonical(root);
        if (!out->canonical) rc = rs_fail(e, RS_DATAERR, "%s: cannot be written canonically", what);
    }
    cred_json_wipe_delete(root);
    if (rc != RS_OK) cred_free(out);
    return rc;
}

void cred_free(rs_cred *c)
{
    if (!c) return;
    cred_cleanse_str(c->username);
    cred_cleanse_str(c->password);
    cred_cleanse_str(c->canonical);
    free(c->username);
    free(c->password);
    free(c->canonical);
    c->username = c->password = c->canonical = NULL;
}

bool cred_matches_text(const rs_cred *cred, const char *text, size_t len)
{
    if (!cred || !cred->canonical || !text) return false;
    rs_cred other;
    if (cred_parse(text, len, "credential", &other, NULL) != RS_OK) return false;
    bool same = other.canonical && ct_equal(cred->canonical, strlen(cred->canonical),
                                            other.canonical, strlen(other.canonical));
    cred_free(&other);
    return same;
}

bool cred_ghcr_matches_text(const rs_cred *cred, const char *text, size_t len)
{
    if (!cred || !cred->username || !cred->password || !text) return false;
    rs_cred other;
    if (cred_parse(text, len, "credential", &other, NULL) != RS_OK) return false;
    /* cred_parse's contract: RS_OK means both fields were read (or decoded
     * from auth) and copied; every failure path returns a failure code. */
    RS_ASSERT(other.username && other.password);
    bool same = cred_str_ct_equal(cred->username, other.username) &
                cred_str_ct_equal(cred->password, other.password);
    cred_free(&other);
    return same;
}

rs_code revision_of_ciphertext(const char *ciphertext, char hex_out[65], rs_err *e)
{
    hex_out[0] = '\0';
    if (!ciphertext || strncmp(ciphertext, "ENC[", 4) != 0)
        return rs_fail(e, RS_DATAERR,
                       "revision: plaintext SOPS source refused: the credential scalar does "
                       "not start with \"ENC[\"; encrypt it with sops first");
    sha256_hex(ciphertext, strlen(ciphertext), hex_out);
    return RS_OK;
}
