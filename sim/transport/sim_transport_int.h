/*
 * sim_transport_int.h — what the sim root's files share: the per-run
 * context, the effect of one performed call, and each concern's entry.
 *
 *   sim_transport.c        the root: one call is one world transaction
 *   sim_transport_ops.c    kube, OpenBao, registry and run-liveness answers
 *   sim_transport_talos.c  the Talos intents
 *   sim_transport_faults.c faults matched on §5 names, and unfired entries
 *   sim_transport_during.c `during:` events fired before a matching call
 *   sim_transport_count.c  the world-side §4 counters and the call log
 */
#ifndef SIM_TRANSPORT_INT_H
#define SIM_TRANSPORT_INT_H

#include "sim/world/world_internal.h"

#define SIMT_CRASH_EXIT SIM_CRASH_EXIT
#define SIMT_PID_MIN 1000
#define SIMT_PID_MAX 32768

typedef struct simt_ctx {
    rs_transport t;
    sim_world *w;
    char *run_name;
    const sc_run *run;
    int *fault_seen;
    bool *fault_fired;
    int *during_seen;
    bool *during_fired;
    char **during_error;
    bool *check_failed;  /* a `check:` entry that failed once is not checked again */
    long long fence_rev; /* store revision at the last fence evaluation */
    int pid;             /* this run's simulated process id */
    long long held_rev;  /* store revision lease_held/fences_held were read at */
    bool lease_held;     /* this run holds the Lease (invariant 1) */
    bool fences_held;    /* this run holds both policy fences (invariants 1, 3) */
    int held_mask;       /* INV_HELD_* bits: each fence on its own (the report's timeline) */
    long logged;         /* calls logged since the call log was last trimmed */
} simt_ctx;

/* What a performed call did to the world, for counting. */
typedef struct simt_effect {
    bool applied;
    char *drain_node; /* eviction reached the world for this node */
} simt_effect;

bool simt_str_eq(const char *a, const char *b);
bool simt_is_object(const rs_req *req, const char *kind, const char *ns, const char *name);
bool simt_is_policy_object(sim_world *w, const rs_req *req);
bool simt_is_controller(sim_world *w, const rs_req *req);

/* sim_transport_ops.c: performs a non-Talos call against the world. */
int simt_kube(sim_world *w, const char *run_name, const rs_req *req, rs_resp *resp,
              simt_effect *fx);
int simt_evict(sim_world *w, const rs_req *req, rs_resp *resp, simt_effect *fx);
int simt_openbao(sim_world *w, const rs_req *req, rs_resp *resp, simt_effect *fx);
int simt_registry(sim_world *w, const rs_req *req, rs_resp *resp);
int simt_liveness(sim_world *w, const rs_req *req, rs_resp *resp);

/* sim_transport_talos.c */
int simt_talos(sim_world *w, const char *run_name, const rs_req *req, rs_resp *resp,
               simt_effect *fx);

/* sim_transport_faults.c: the first fault matching opname (NULL: none);
 * every matching entry counts the call and is marked fired. */
const sc_fault *simt_fault(simt_ctx *c, const char *opname);
bool simt_hit(const char *glob, const char *opname, int *seen, int nth, bool and_after);
const char *simt_status_reason(int code);

/* sim_transport_during.c: applies every `during:` event due before opname. */
void simt_during(simt_ctx *c, const char *opname);

/* sim_transport_count.c */
void simt_count_kube(sim_world *w, const rs_req *req, const cJSON *before, const cJSON *after);
void simt_log(simt_ctx *c, const rs_req *req, int status, bool applied);
void simt_count_write(simt_ctx *c, const rs_req *req);
void simt_count_drain(simt_ctx *c, const char *node);
void simt_see_rollout(simt_ctx *c, const rs_req *req, const rs_resp *resp);
void simt_fence_check(simt_ctx *c);
void simt_held_refresh(simt_ctx *c);

#endif
