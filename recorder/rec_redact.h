/*
 * rec_redact.h — what a cassette holds instead of a secret (DESIGN.md §8).
 *
 * A redactor knows the run's secret *atoms* (passwords, tokens, any value a
 * request or answer marks secret) and turns every string that carries one
 * into a redacted string of the same shape:
 *
 *   an atom                      -> fp:<64 hex>   HMAC-SHA-256 under a random
 *                                                 per-cassette key, never stored
 *   an atom inside a text        -> the text with fp:<hex> where the atom was
 *   a JSON text carrying an atom -> the JSON with its strings redacted
 *   base64 of such a text        -> "b64:" + the redacted decoded text
 *   anything else still carrying an atom in some encoding (base64 at an odd
 *   alignment, say)              -> fp:<hex> of the whole string
 *
 * Equal values get equal fingerprints within a cassette. The shape is kept
 * so replay can hand the core synthetic values that relate to one another
 * as the real ones did (a docker config's password, its `auth`, the base64
 * of the config in a Secret): rec_unredact_string puts, for every
 * fingerprint, the synthetic atom "rs-synth-<hex>" back in the same place,
 * and a replay redactor maps those synthetic atoms back to the recorded
 * fingerprints (rec_redactor_map), so a replayed request redacts to the
 * recorded text exactly when the core sent the same thing.
 */
#ifndef REC_REDACT_H
#define REC_REDACT_H

#include "core/transport/transport.h"

#include <cjson/cJSON.h>
#include <stdbool.h>

/* "fp:" + 64 hex digits + NUL. */
#define REC_FP_LEN 68
/* Atoms shorter than this are replaced only where a whole value equals them
 * (a shorter needle would match ordinary text). */
#define REC_ATOM_MIN 6

typedef struct rec_redactor rec_redactor;

/* A redactor with a fresh random key. NULL never: aborts when the system
 * has no randomness (a cassette must never be keyed predictably). */
rec_redactor *rec_redactor_new(void);
/* Wipes the key and every atom. NULL is fine. */
void rec_redactor_free(rec_redactor *r);

/* Learns the atoms inside a secret-bearing value: a docker config's
 * password and auth, the decoded text of base64, every string of a JSON
 * text, or the value itself. */
void rec_redactor_learn(rec_redactor *r, const char *value);
/* Learns every value doc's marks name (a key "username" is not secret). */
void rec_redactor_learn_marked(rec_redactor *r, cJSON *doc, const rs_secret_marks *marks);
/* How many atoms r knows: it grows when a call teaches a new secret. */
size_t rec_redactor_size(const rec_redactor *r);
/* Replay: the synthetic atom `synthetic` stands for fingerprint fp. */
void rec_redactor_map(rec_redactor *r, const char *synthetic, const char *fp);

/* s redacted (see above). Caller frees. */
char *rec_redact_string(rec_redactor *r, const char *s);
/* Every string value and key of v redacted, in place. */
void rec_redact_json(rec_redactor *r, cJSON *v);
/* The marked values of doc that still equal what they were (too short to be
 * an atom, say) become fp:<hex> of themselves: a marked value never reaches a
 * cassette as it was. */
void rec_redact_marked(rec_redactor *r, cJSON *doc, const rs_secret_marks *marks);

/* The inverse for replay: every fp:<hex> becomes its synthetic atom
 * (registered with r through rec_redactor_map), "b64:" text is encoded back.
 * Caller frees. */
char *rec_unredact_string(rec_redactor *r, const char *s);
void rec_unredact_json(rec_redactor *r, cJSON *v);

#endif
