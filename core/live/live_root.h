/*
 * live_root.h — the live root of the transport (DESIGN §2): the struct
 * rs_transport a `reassert run --transport live` stacks its shims on.
 *
 * Every op goes to the client that owns it: kube.* to the Kubernetes client
 * (live_kube.h), openbao.read to OpenBao, registry.* to the registry
 * (live_backends.h), talos.* to talosctl (live_talos.h), run.liveness to the
 * configured oracle (live_oracle.h). A batch (transport v2) runs each
 * service's share concurrently: the registry proof's calls and kube reads
 * over curl multi, the per-node Talos reads as parallel talosctl children,
 * each at most `parallelism` at once.
 *
 * Clock, sleep, entropy and pid are the machine's (CLOCK_REALTIME, a real
 * sleep, getrandom, getpid) — or, with the TEST-ONLY façade clock, those of
 * `reassert sim serve` behind the kubeconfig's server (/reassert/v1/clock,
 * sleep, entropy, pid, and batch costing), so a live run against the façade
 * waits no wall time and costs what the in-process sim run costs, call for
 * call. Never point the façade clock at a real cluster: it has no such
 * endpoints and the run fails at its first clock read.
 */
#ifndef CORE_LIVE_ROOT_H
#define CORE_LIVE_ROOT_H

#include "core/live/live_backends.h"
#include "core/live/live_kubeconfig.h"
#include "core/live/live_oracle.h"
#include "core/live/live_talos.h"
#include "core/rs.h"
#include "core/transport/transport.h"

typedef struct live_root_opts {
    const live_kubeconfig *kc; /* must outlive the root; NULL: no Kubernetes (--check-only) */
    bool bao_set;              /* BAO_ADDR/VAULT_ADDR given */
    live_bao_opts bao;
    live_registry_opts registry;
    live_talos_opts talos;
    live_oracle_opts oracle;
    bool facade_clock; /* TEST-ONLY: clock, sleep, entropy, pid from sim serve */
    int64_t connect_ms, total_ms;
} live_root_opts;

/* Opens every client (runs the exec plugin, reads the token file); checks
 * nothing on the network yet. */
rs_code live_root_open(const live_root_opts *o, rs_transport **out, rs_err *e);

/* Before the run's first call: the API server reachable, trusted and
 * accepting the identity (need_kube), and OpenBao accepting the token
 * (need_bao). One clear error (RS_FAILED) naming context/server/file or the
 * OpenBao address otherwise. */
rs_code live_root_preflight(rs_transport *t, bool need_kube, bool need_bao, rs_err *e);

/* The Kubernetes bearer token the root will send (a kubeconfig token or
 * tokenFile, an exec plugin's, the service account's), or NULL. */
const char *live_root_kube_bearer(rs_transport *t);

/* The tokens this root holds (kube bearer, OpenBao), NULL-terminated, for
 * the recorder's known secrets; valid until close. */
size_t live_root_secrets(rs_transport *t, const char **out, size_t max);

#endif
