/*
 * live_backends.h — the two other services a live run talks to over HTTP:
 * OpenBao (KV v2, reads only) and the image registry (the token exchange
 * and the manifest read of the registry proof).
 *
 * OpenBao: GET <addr>/v1/<mount>/data/<path> with X-Vault-Token (and
 * X-Vault-Namespace when BAO_NAMESPACE is set); the answer is KV v2's
 * {"data": {"data": {...}, "metadata": {...}}} as it comes. The core never
 * writes OpenBao: an openbao.write is refused here without a call.
 *
 * Registry: the first request to a host reads its challenge (GET /v2/ ->
 * 401 WWW-Authenticate: Bearer realm=..., service=...); a registry.token
 * is GET <realm>?service=<service>&scope=repository:<repo>:pull with the
 * credential as basic auth (libcurl options, from memory only), answered
 * {"token": ...}; a registry.manifest is GET /v2/<repo>/manifests/<ref>
 * with the bearer and all four manifest media types in Accept (OCI index
 * and manifest, Docker manifest list and v2 manifest), answered
 * {"digest": Docker-Content-Digest}. A batch runs concurrently (curl multi).
 */
#ifndef CORE_LIVE_BACKENDS_H
#define CORE_LIVE_BACKENDS_H

#include "core/live/live_http.h"
#include "core/rs.h"
#include "core/transport/transport.h"

typedef struct live_bao_opts {
    const char *addr;       /* BAO_ADDR / VAULT_ADDR */
    const char *token;      /* the token's text (a secret; copied) */
    const char *token_src;  /* where it came from, for errors ("BAO_TOKEN", a file) */
    const char *ca_file;    /* BAO_CACERT */
    const char *ca_path;    /* BAO_CAPATH */
    const char *name_space; /* BAO_NAMESPACE */
} live_bao_opts;

typedef struct live_bao live_bao;
rs_code live_bao_open(const live_bao_opts *o, live_bao **out, rs_err *e);
void live_bao_close(live_bao *b);
int live_bao_call(live_bao *b, const rs_req *req, rs_resp *resp);
/* GET /v1/auth/token/lookup-self: reachable, trusted, and the token
 * accepted (a 403 is one clear error naming the address and the token's
 * source). */
rs_code live_bao_probe(live_bao *b, rs_err *e);
const char *live_bao_token(const live_bao *b);

typedef struct live_registry_opts {
    const char *url;     /* the registry's base URL; NULL: https://<host> */
    const char *ca_file; /* a CA bundle for it; NULL: the system's */
} live_registry_opts;

typedef struct live_registry live_registry;
rs_code live_registry_open(const live_registry_opts *o, live_registry **out, rs_err *e);
void live_registry_close(live_registry *r);
void live_registry_call_batch(live_registry *r, const rs_req *reqs, rs_resp *resps, size_t n,
                              int parallelism);

/* Parses `Bearer realm="...",service="..."` (exposed for tests); false when
 * the header is not a bearer challenge with a realm. Caller frees both. */
bool live_registry_challenge(const char *header, char **realm, char **service);

#endif
