/*
 * fuzz_cred.c — the Docker-config credential parser (core/cred: strict JSON
 * scan, cred_parse, canonical form, strict base64) on arbitrary bytes.
 *
 * fuzz-seeds: none
 *
 * Properties beyond "no crash, leak, sanitizer report or hang":
 * - a parse either succeeds with a non-empty username and password or fails
 *   with RS_DATAERR and a sentence;
 * - a parsed credential matches its own text and its canonical form, and the
 *   canonical form parses to the same username and password;
 * - a refusal never quotes a password or auth value of the input (values of
 *   8 bytes or more that are not also a key of the input);
 * - strict base64: whatever decodes re-encodes to the very same text.
 */
#include "core/cred/cred.h"
#include "tests/fuzz/fuzz_support.h"

/* True when s occurs as an object key anywhere in v. */
static bool fz_is_key(const cJSON *v, const char *s)
{
    for (const cJSON *c = v ? v->child : NULL; c; c = c->next) {
        if (c->string && strcmp(c->string, s) == 0) return true;
        if (fz_is_key(c, s)) return true;
    }
    return false;
}

/* Aborts when the error quotes a secret-looking value of the input. */
static void fz_no_secret_in(const cJSON *root, const cJSON *v, const char *msg)
{
    for (const cJSON *c = v ? v->child : NULL; c; c = c->next) {
        if (c->string && cJSON_IsString(c) && c->valuestring &&
            (strcmp(c->string, "password") == 0 || strcmp(c->string, "auth") == 0) &&
            strlen(c->valuestring) >= 8 && !fz_is_key(root, c->valuestring))
            FUZZ_CHECK(strstr(msg, c->valuestring) == NULL, "the error quotes a %s value: %s",
                       c->string, msg);
        fz_no_secret_in(root, c, msg);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rs_cred cred = {0};
    rs_err e = {0};
    rs_code c = cred_parse((const char *)data, size, "desired credential", &cred, &e);
    if (c != RS_OK) {
        FUZZ_CHECK(c == RS_DATAERR, "code %d", (int)c);
        FUZZ_CHECK(e.msg[0] != '\0', "a refusal without a sentence");
        cJSON *j = cJSON_ParseWithLength((const char *)data, size);
        fz_no_secret_in(j, j, e.msg);
        cJSON_Delete(j);
    } else {
        FUZZ_CHECK(cred.username && cred.username[0] && cred.password && cred.password[0],
                   "parsed without a username or password");
        FUZZ_CHECK(cred_matches_text(&cred, (const char *)data, size),
                   "a credential does not match its own text");
        FUZZ_CHECK(cred_matches_text(&cred, cred.canonical, strlen(cred.canonical)),
                   "a credential does not match its canonical form");
        rs_cred again = {0};
        rs_err e2 = {0};
        FUZZ_CHECK(cred_parse(cred.canonical, strlen(cred.canonical), "canonical", &again, &e2) ==
                       RS_OK,
                   "the canonical form does not parse: %s", e2.msg);
        FUZZ_CHECK(strcmp(again.username, cred.username) == 0 &&
                       strcmp(again.password, cred.password) == 0,
                   "the canonical form parses to another credential");
        cred_free(&again);
        cred_free(&cred);
    }

    char *text = fuzz_cstr(data, size);
    size_t n = 0;
    unsigned char *raw = base64_decode(text, &n);
    if (raw) {
        char *back = base64_encode(raw, n);
        FUZZ_CHECK(back && strcmp(back, text) == 0, "base64 does not round-trip");
        free(back);
        free(raw);
    }
    free(text);
    return 0;
}
