/*
 * cred_redact.h — the one redaction filter every byte the harness emits
 * passes through (DESIGN.md §5.1): failure messages, the text report, JSON,
 * JUnit, dumped child output.
 *
 * A set is keyed on credentials by name. Adding a secret adds every form in
 * which a report could carry it: the raw bytes, JSON-escaped (as cJSON and as
 * Go's encoding/json write it, once and twice), and base64 — standard and
 * URL-safe — at each of the three byte alignments, so the secret is found
 * inside the base64 of a larger text (a Secret's .dockerconfigjson) too.
 * Adding a docker config adds its password, "user:password", the base64
 * `auth`, the canonical form and the text itself, each in all those forms.
 *
 * Redaction replaces every stretch of text covered by any of those forms by
 * `<redacted:NAME>`. Where a value must be identified without being shown
 * (a failing state check on Secret data), print cred_redact_fingerprint.
 */
#ifndef RS_CRED_REDACT_H
#define RS_CRED_REDACT_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* "sha256:" + 12 lowercase hex digits + NUL. */
#define CRED_FINGERPRINT_LEN 20

typedef struct cred_redact cred_redact;

cred_redact *cred_redact_new(void);
/* Wipes every stored form before freeing. NULL is fine. */
void cred_redact_free(cred_redact *r);

/* Adds secret (len bytes) under name (the catalogue name; characters
 * outside [A-Za-z0-9._-] are shown as '_'). An empty secret adds nothing. */
void cred_redact_add(cred_redact *r, const char *name, const void *secret, size_t len);
/* Adds a docker config: the text itself and, when it parses as a
 * credential, its password, "user:password", base64("user:password") and
 * canonical form. A text that does not parse is still added whole. */
void cred_redact_add_dockerconfig(cred_redact *r, const char *name, const char *json, size_t len);
/* How many needles (forms) the set holds — for tests. */
size_t cred_redact_count(const cred_redact *r);

/* text (len bytes) with every covered stretch replaced by <redacted:NAME>.
 * Caller frees; always NUL-terminated (*out_len, may be NULL, receives the
 * length). r may be NULL: a plain copy. */
char *cred_redact_text(const cred_redact *r, const char *text, size_t len, size_t *out_len);
/* Redacts every string value and key in v, recursively, in place. */
void cred_redact_json(const cred_redact *r, cJSON *v);

/* Why a secret cannot be redacted without mangling the output, or NULL
 * when it can. Redaction replaces every occurrence of a secret's text, so
 * a secret that is short (under CRED_SECRET_MIN bytes), a common word or
 * well-known default ("root", "password", "changeme"), or text found inside
 * a name the run prints (names: NULL-terminated, e.g. the configuration's
 * namespaces and object names) would cut ordinary words out of every line:
 * `flu<redacted:secret>-system`. The sentence never quotes the secret. */
#define CRED_SECRET_MIN 8
const char *cred_secret_unsafe(const char *secret, size_t len, const char *const *names);

/* "sha256:<first 12 hex digits>" of data: identifies a value, and says
 * whether two values differ, without printing it. */
void cred_redact_fingerprint(const void *data, size_t len, char out[CRED_FINGERPRINT_LEN]);

#endif
