/*
 * rec_call.h — one transport call as cassette text: the request (its
 * fields and body), the target and the answer, each redacted. The recorder
 * writes these; strict replay builds the same text from the replayed
 * request and compares, so both sides share this one definition.
 */
#ifndef REC_CALL_H
#define REC_CALL_H

#include "core/transport/transport.h"
#include "recorder/rec_cassette.h"
#include "recorder/rec_redact.h"

#include <stdbool.h>
#include <stddef.h>

/* Learns the secrets req marks (a JSON patch: the values of its ops on
 * /data and /stringData only). */
void rec_call_learn(rec_redactor *r, const rs_req *req);
/* The request as a JSON object text (kind, ns, name, selectors, patch
 * type, mount, host, body), the secrets it marks learnt first. Caller frees. */
char *rec_call_request(rec_redactor *r, const rs_req *req);
/* The §5 target, redacted. Caller frees. */
char *rec_call_target(rec_redactor *r, const rs_req *req);
/* The answer's body as JSON text, or NULL when it has none; the secrets it
 * marks learnt first. Caller frees. */
char *rec_call_response(rec_redactor *r, const rs_resp *resp);
/* A row's column text (REC_COL_*) redacted with every atom r knows now (a
 * request or response as the JSON document it is), or NULL when nothing in
 * it changes. Caller frees. */
char *rec_call_rewrite(rec_redactor *r, int column, const char *text);
/* Whether a transport call's recorded request and answer (parsed; NULL
 * for none) have the shape rec_call_request and the transports give them:
 * the request's fields strings, its body an object (an array for a JSON
 * patch), no field the recorder never writes, those the op needs present;
 * the answer an object whose known fields have their type. false: why
 * says which column and field ("calls.request field target: ..."). */
bool rec_call_shape(rs_op op, const cJSON *req, const cJSON *resp, char *why, size_t len);

#endif
