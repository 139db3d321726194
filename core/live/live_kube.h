/*
 * live_kube.h — the Kubernetes client of a live run: every kube.* request
 * of the transport (get, namespaced get, list with label and field
 * selectors, create, JSON Patch, merge and strategic-merge patch, delete,
 * the policy/v1 eviction) as one HTTP call to the API server the
 * kubeconfig names, over one reused connection.
 *
 * Answers: the HTTP status and its JSON body as they come (a Status object
 * for 404/409/422/429, which the core reads); a body that is not JSON is
 * wrapped in a Status naming the status code. No answer: status 0 with
 * sent NO (the request never left: retry is safe) or sent YES/UNKNOWN (it
 * may have been applied), and an error naming the context, server and
 * kubeconfig file.
 *
 * Identity, per the kubeconfig: a client certificate (file or data), a
 * bearer token (tokenFile wins over token), or an exec plugin run as
 * client.authentication.k8s.io/v1 (or v1beta1) describes: the plugin's
 * ExecCredential is cached until its expirationTimestamp and asked again
 * after, or after a 401 (as client-go does: the refused request is not
 * replayed, the next one carries the new credential; the probe asks once
 * more and probes again); a credential that is already expired when it
 * arrives is an error. A tokenFile is read again, as client-go's cached
 * file token source reads it, once its token is
 * LIVE_KUBE_TOKEN_FILE_REFRESH_MS old and after a 401 answered it (the
 * refused request is not replayed; the probe reads again and probes once
 * more), so a rotated projected service-account token is picked up.
 */
#ifndef CORE_LIVE_KUBE_H
#define CORE_LIVE_KUBE_H

#include "core/live/live_http.h"
#include "core/live/live_kubeconfig.h"
#include "core/rs.h"
#include "core/transport/transport.h"

#define LIVE_KUBE_EXEC_TIMEOUT_MS 60000
#define LIVE_KUBE_EXEC_OUTPUT_MAX (1024u * 1024u)
/* client-go caches a tokenFile's token for a minute, refreshed 10 s early. */
#define LIVE_KUBE_TOKEN_FILE_REFRESH_MS 50000

typedef struct live_kube live_kube;

/* kc must outlive the client. Runs the exec plugin (if any) and reads the
 * token file now, so a broken identity fails before any call: RS_DATAERR
 * for an unreadable token file or a malformed ExecCredential, RS_FAILED for
 * a plugin that fails or a credential already expired. */
rs_code live_kube_open(const live_kubeconfig *kc, int64_t connect_ms, int64_t total_ms,
                       live_kube **out, rs_err *e);
void live_kube_close(live_kube *k);
/* The monotonic clock (milliseconds) the tokenFile's cache is timed by;
 * NULL: the machine's CLOCK_MONOTONIC (the default). Tests inject theirs. */
void live_kube_set_clock(live_kube *k, int64_t (*now_ms)(void *ctx), void *ctx);

int live_kube_call(live_kube *k, const rs_req *req, rs_resp *resp);
void live_kube_call_batch(live_kube *k, const rs_req *reqs, rs_resp *resps, size_t n,
                          int parallelism);

/* GET /version: proves the server is reachable, its certificate is the one
 * the kubeconfig trusts, and the identity is accepted. RS_FAILED with one
 * sentence naming context, server and file otherwise. */
rs_code live_kube_probe(live_kube *k, rs_err *e);

/* A façade call (test-only clock): method on server+path with the same TLS
 * and identity; the answer's JSON body (caller frees) or NULL with e set. */
cJSON *live_kube_facade(live_kube *k, const char *method, const char *path, const char *body,
                        rs_err *e);

/* The bearer token in use (NULL when none) — for the recorder's list of
 * known secrets. */
const char *live_kube_bearer(const live_kube *k);

/* The kube path of a request ("/api/v1/namespaces/ns/secrets/name"), or
 * NULL for a kind this client does not know. Caller frees. */
char *live_kube_path(const rs_req *req);

#endif
