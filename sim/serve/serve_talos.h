/*
 * serve_talos.h — the test-only Talos endpoints of `reassert sim serve`
 * (`/talos/<verb>`), which the stub `talosctl` (tests/talosctl) calls.
 *
 * Real Talos nodes are not HTTP servers, so these endpoints are not a
 * protocol the live transport speaks: they exist so that a test can put the
 * stub talosctl on PATH, let the live transport drive it exactly as it
 * drives the official binary, and have every Talos operation land in the
 * served world as the same talos.* call the in-process sim root would see.
 *
 * Verbs (path = everything after "/talos/"), all POST with a JSON object:
 *   patch         {"node": N, "intent": {"registry-auth": {...}} | {"node-annotations": {...}}}
 *   read-auth     {"node": N, "host": H}
 *   reboot        {"node": N}
 *   image-remove  {"node": N, "image": I}
 *   image-pull    {"node": N, "image": I}
 *   etcd-status   {"node": N}
 *   etcd-alarms   {"node": N}
 * An unknown key is refused (400), so a stub that drifts from this contract
 * fails loudly. The answer to a well-formed request is HTTP 200 with the
 * envelope {"status": S, "sent": "yes"|"no"|"unknown", "body": B|null
 * [, "error": "..."]}: S is the talos.* call's status (0 = transport error,
 * e.g. a scenario's timeout or lost-response fault), B its answer body.
 * HTTP 400/404/405 are about the endpoint itself (bad JSON, unknown verb,
 * not POST), never about the operation.
 */
#ifndef SIM_SERVE_TALOS_H
#define SIM_SERVE_TALOS_H

#include "core/transport/transport.h"

#include <stddef.h>

/* Answers one test-only Talos request. path = everything after "/talos/" (the op's verb part, e.g.
 * "patch", "reboot", "read-auth", "image-pull", "image-remove", "etcd-status", "etcd-alarms");
 * body = request JSON (at least {"node": NAME}). Builds the talos.* rs_req, calls root->call, fills
 * *status (HTTP) and *out (malloc'd JSON text; caller frees). Returns 0, or -1 when out of memory.
 */
int serve_talos_handle(rs_transport *root, const char *method, const char *path, const char *body,
                       size_t body_len, int *status, char **out);

#endif
