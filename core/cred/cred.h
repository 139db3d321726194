/*
 * cred.h — the desired credential: parsing, validation, canonical comparison,
 * and the revision (DESIGN.md §3.1).
 *
 * A Docker config JSON is valid only if auths["ghcr.io"] has non-empty
 * username+password, or auth = base64("user:pass") with both parts non-empty;
 * if both forms are present they must agree. Duplicate keys anywhere and NUL
 * characters (raw or \u0000) are rejected, because cJSON keeps the first
 * duplicate and truncates at NUL while containerd's decoder differs — two
 * parsers reading one credential differently is how a "verified" node ends up
 * pulling with something else.
 *
 * Error messages never contain the credential or any part of it.
 */
#ifndef RS_CRED_H
#define RS_CRED_H

#include "core/rs.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct rs_cred {
    char *username;  /* the effective ghcr.io username */
    char *password;  /* the effective ghcr.io password (secret) */
    char *canonical; /* canonical JSON of the whole docker config (secret) */
} rs_cred;

/* Validates and parses text (len bytes, may contain NULs — which are
 * rejected). `what` names the source in errors ("desired credential").
 * RS_DATAERR on any problem. */
rs_code cred_parse(const char *text, size_t len, const char *what, rs_cred *out, rs_err *e);
/* Zeroes the secret bytes before freeing. */
void cred_free(rs_cred *c);

/* True when text parses as a valid docker config whose canonical form equals
 * cred->canonical, compared in constant time. Invalid text is simply unequal. */
bool cred_matches_text(const rs_cred *cred, const char *text, size_t len);
/* True when text parses as a valid docker config whose effective ghcr.io
 * username and password are cred's (other registries in either are not
 * compared: a Talos node's registry auth holds ghcr.io's only). */
bool cred_ghcr_matches_text(const rs_cred *cred, const char *text, size_t len);

/* Canonical JSON: object keys sorted bytewise, no insignificant whitespace,
 * numbers and strings as cJSON prints them unformatted. Caller frees. */
char *json_canonical(const cJSON *v);

/* Strict JSON check used by cred_parse: rejects duplicate keys at any depth
 * and NUL characters (raw or escaped). Returns false with a reason (no
 * content quoted) in e. */
bool json_strict_check(const char *text, size_t len, rs_err *e);

/* Whether the len bytes at s are well-formed UTF-8 (RFC 3629, the check
 * json_strict_check makes of a string) with no NUL. */
bool json_utf8_valid(const char *s, size_t len);

/* The revision: lowercase hex SHA-256 of the SOPS ciphertext scalar, which
 * must start with "ENC[" (a plaintext source is refused: RS_DATAERR). */
rs_code revision_of_ciphertext(const char *ciphertext, char hex_out[65], rs_err *e);

void sha256_hex(const void *data, size_t len, char hex_out[65]);
/* Wipes every string of a JSON tree (OPENSSL_cleanse) and frees it: for any
 * document that may hold a credential (a Secret, an OpenBao answer, a Talos
 * auth read), so it is not left in freed memory. NULL is fine. */
void cred_json_wipe_delete(cJSON *root);
/* Wipes a NUL-terminated secret (OPENSSL_cleanse) and frees it. */
void cred_text_wipe_free(char *text);
/* Wipes len bytes of a decoded secret (which may hold NULs) and frees it. */
void cred_bytes_wipe_free(void *p, size_t len);

/* Standard base64 with padding. Caller frees. */
char *base64_encode(const void *data, size_t len);
/* Returns NULL on malformed input; *out_len receives the decoded length. */
unsigned char *base64_decode(const char *text, size_t *out_len);
/* Constant-time equality of two byte strings (length leaks, content does not). */
bool ct_equal(const void *a, size_t alen, const void *b, size_t blen);

/* Builds the docker config JSON text {"auths":{"<host>":{"username","password","auth"}}}.
 * Caller frees. */
char *cred_dockerconfig_build(const char *host, const char *username, const char *password);

#endif
