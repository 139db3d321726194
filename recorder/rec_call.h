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

#endif
