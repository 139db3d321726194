/*
 * live_talos.h — the Talos side of a live run: the official `talosctl`
 * driven as a child process, one invocation per talos.* operation.
 *
 * The core speaks intents (transport v2: "set the registry auth for host H
 * to credential C"); which machine-config shape carries them is a fact of
 * the Talos version, so it is decided here, once. Talos v1.12+ (production
 * runs v1.13) reads registry auth from a separate `RegistryAuthConfig`
 * document; older nodes read `machine.registries.config.<host>.auth`, kept
 * behind `talos.auth-shape: legacy` (DESIGN §3.3 r2; H106).
 *
 * The credential never reaches talosctl's argv or environment: a patch is
 * written to a file (mode 0600) in a private directory (mode 0700), passed
 * as `--patch @FILE`, and both are removed after the invocation, whatever
 * its outcome. The child's environment is a short allow-list of the
 * parent's (PATH, HOME, locale, TMPDIR, TALOSCONFIG, proxies, CA bundle
 * locations), so a token the operator exported for another tool never
 * reaches it. Every invocation is bounded in time and in captured output.
 *
 * Answers are parsed strictly (live_talos_text.h): an output this driver
 * does not recognise is a failure (HTTP-like 502), never a pass (H118).
 *
 * Operation -> invocation (global flags first: [--talosconfig FILE]
 * --nodes NODE; NODE is the request's target, the Kubernetes node name):
 *   talos.patch        patch machineconfig --mode no-reboot --patch @FILE
 *   talos.read-auth    get machineconfig -o jsonpath={.spec}
 *   talos.reboot       reboot --wait=false   (the core proves the reboot by
 *                      a new boot ID in the Node status, DESIGN §3.3 r2)
 *   talos.image-remove image remove --namespace cri IMAGE
 *   talos.image-pull   image pull --namespace cri IMAGE
 *   talos.etcd-status  etcd status
 *   talos.etcd-alarms  etcd alarm list
 * Outcome -> status: exit 0 and a recognised answer: 200 (with the body the
 * core reads: {"healthy","learner"}, {"alarms": [...]}, {"auth": {...}} or
 * {"redacted": true}); a gRPC code on stderr: NotFound 404,
 * PermissionDenied 403, Unauthenticated 401, InvalidArgument 400,
 * FailedPrecondition 409, Unimplemented 501, Unknown/Internal 500;
 * Unavailable, DeadlineExceeded, a timeout, a signal or anything else: 0
 * (a write may have been applied: sent UNKNOWN; the core re-reads or fails
 * closed); a program that could not be started: 0 with sent NO.
 */
#ifndef CORE_LIVE_TALOS_H
#define CORE_LIVE_TALOS_H

#include "core/config.h"
#include "core/rs.h"
#include "core/transport/transport.h"

#include <cjson/cJSON.h>
#include <stdint.h>

/* The machine-config patch for a `talos.patch` intent body
 * {"registry-auth":{"host":H,"auth":{"username":U,"password":P}}}, in the
 * configured shape, as YAML text (JSON-quoted scalars). NULL with e set when
 * the intent is malformed. The text holds the password: the caller wipes it
 * (cred_text_wipe_free). */
char *live_talos_auth_patch(const cJSON *intent, rs_talos_auth_shape shape, rs_err *e);

/* The machine-config patch for a {"node-annotations": {key: value}} intent
 * (machine.nodeAnnotations, as JSON text, valid YAML). NULL with e set when
 * the intent is malformed or a value is not a string (Talos cannot delete an
 * annotation through a merge patch; the core never asks it to). */
char *live_talos_annotations_patch(const cJSON *intent, rs_err *e);

#define LIVE_TALOS_TIMEOUT_MS_DEFAULT 300000  /* one talosctl invocation (a pull can be slow) */
#define LIVE_TALOS_OUTPUT_MAX (1024u * 1024u) /* bytes captured per stream */

typedef struct live_talos_opts {
    const char *talosctl;      /* a path, or a name looked up on PATH; NULL: "talosctl" */
    const char *talosconfig;   /* --talosconfig FILE; NULL: talosctl reads TALOSCONFIG itself */
    rs_talos_auth_shape shape; /* which patch shape carries the registry auth */
    int64_t timeout_ms;        /* per invocation; 0: LIVE_TALOS_TIMEOUT_MS_DEFAULT */
    const char *tmp_parent;    /* where private patch directories are made; NULL: $TMPDIR or /tmp */
} live_talos_opts;

typedef struct live_talos live_talos;

/* Takes copies of the options; checks nothing on the network. RS_USAGE when
 * an option is malformed (an empty path, a negative timeout). */
rs_code live_talos_open(const live_talos_opts *o, live_talos **out, rs_err *e);
/* Performs one talos.* request (req->op one of RS_OP_TALOS_*), filling resp
 * as a transport root does (status, body, sent, error; rs_resp_init first).
 * Returns resp->status. Any other op answers 400. */
int live_talos_call(live_talos *lt, const rs_req *req, rs_resp *resp);
/* n independent requests (the per-node auth reads of a batch), at most
 * parallelism talosctl invocations at once; resps[i] answers reqs[i] exactly
 * as live_talos_call would. Not for writes (a batch has no order). */
void live_talos_call_batch(live_talos *lt, const rs_req *reqs, rs_resp *resps, size_t n,
                           int parallelism);
void live_talos_close(live_talos *lt);

#endif
