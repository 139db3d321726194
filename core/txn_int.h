/*
 * txn_int.h — the transaction's private state, shared by the modules that
 * implement its steps (lease_, kobj_, fanout_, registry_, txn_).
 *
 * Step functions return tx_status: TX_OK, TX_RESTART (the gate just took the
 * fence: restart the round from its beginning) or TX_FAIL (txn->err says why;
 * fail closed).
 */
#ifndef RS_TXN_INT_H
#define RS_TXN_INT_H

#include "core/cred/cred.h"
#include "core/gate.h"
#include "core/kube/kube_cas.h"
#include "core/txn.h"

#define TX_CAS_ATTEMPTS_MAX 3 /* re-read + retry after a 409/422 or a lost old-value write */
#define TX_ROUNDS_MIN 3
#define TX_HOLDER_MAX 160
#define TX_RV_MAX 32

typedef enum tx_status { TX_OK = 0, TX_RESTART = 1, TX_FAIL = 2 } tx_status;

struct rs_txn {
    rs_gate *gate;
    const rs_config *cfg;
    const rs_options *opt;
    rs_out *out;
    rs_err err;

    rs_cred cred;
    char revision[65];
    const char *desired_text; /* the docker config as given (secret) */
    size_t desired_len;

    char holder[TX_HOLDER_MAX];
    bool lease_held;
    char lease_rv[TX_RV_MAX];
    int64_t lease_renewed_ms;
    bool fence_taken; /* the full fence was taken at least once */
    bool parent_held, child_held;
    /* A pause was sent and its answer lost, never confirmed: the fence may be
     * ours, so cleanup releases it by exact-tuple CAS or names it. */
    bool parent_unconfirmed, child_unconfirmed;

    /* Talos pass state: the current inventory's auth verdicts by UID. */
    struct {
        char uid[128];
        rs_verdict verdict;
    } auth_cache[1024];
    size_t auth_cache_n;
    bool reclaim_done;      /* orphaned node fences were reclaimed under the Lease */
    char claimed_node[254]; /* the node this run currently holds a cordon claim on */
    char claimed_uid[128];
    bool claimed_mutating;
    const char *claimed_keep; /* non-NULL: a failure now keeps the node fence, for this reason */
    bool claimed_was_cordoned;
    char *claimed_taints;
    cJSON *proof;       /* a reusable runtime proof, or NULL */
    cJSON *proof_nodes; /* names+UIDs of the last target-free inventory */
    char *proof_text;   /* the proof recorded before the last cutover attempt */
    int force_sync_seq;
    char **drift_seen;      /* drift notices already printed (each prints once) */
    char **annotation_only; /* nodes decided on annotations alone (auth unreadable) */
    size_t n_annotation_only;
    size_t drift_n;
};

/* txn.c — the standard procedure after preflight (discovery, bootstrap,
 * convergence), as the strategy in tx->opt directs. Test-only strategies
 * escalate to it. */
void txn_repair(rs_txn *tx, rs_result *res);
/* Prints `::notice::drift: <message>` the first time this message is seen in
 * the run (DESIGN §7.1 r2: each drift notice prints once, even when lazy
 * restarts a round under the fence and finds the same drift again). */
void txn_drift(rs_txn *tx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* kobj.c — Kubernetes object helpers over the gate. */
const char *kobj_rv(const cJSON *obj);
const char *kobj_annotation(const cJSON *obj, const char *key);
/* A Lease's holder: "" when free (no holder, or an empty one); NULL when the
 * object cannot be read as a Lease (not an object, or a holderIdentity that
 * is not a string) — never "free" (H1: an unreadable holder may be a live
 * writer). *present (may be NULL): holderIdentity is there as a string. */
const char *kobj_lease_holder(const cJSON *lease, bool *present);
#define KOBJ_LEASE_MALFORMED "(a holderIdentity that is not a string)"
bool kobj_condition_true(const cJSON *obj, const char *type);
const char *kobj_str(const cJSON *obj, const char *path); /* "status.refreshTime" */
/* Reads a Secret key as text. Returns the HTTP status; on 200 *text is the
 * decoded value (NULL when the key is absent or not base64), caller frees.
 * ans (may be NULL) receives what the answer was, for a message. */
int kobj_secret_read(rs_txn *tx, const char *ns, const char *name, const char *key, char **text,
                     size_t *len, char rv[TX_RV_MAX], rs_answer *ans);
/* CAS-writes the desired credential into a Secret key (JSON Patch `test` on
 * resourceVersion), resolving lost responses by re-reading; an absent Secret
 * is created (the root secret's bootstrap). */
tx_status kobj_secret_put_desired(rs_txn *tx, gate_need need, const char *ns, const char *name,
                                  const char *key);
/* The same, for a Secret that must already exist (variables-base after
 * discovery): absent, it fails closed as H122 asks instead of creating it. */
tx_status kobj_secret_patch_desired(rs_txn *tx, gate_need need, const char *ns, const char *name,
                                    const char *key);
int kobj_list(rs_txn *tx, const char *kind, const char *ns, const char *label_selector,
              const char *field_selector, rs_resp *r);
/* True when the Secret's key holds the desired credential (canonical compare). */
bool kobj_secret_matches(rs_txn *tx, const cJSON *secret, const char *key);
/* Reads the OpenBao seed (KV v2, the configured path). */
int tp_openbao_read_gate(rs_txn *tx, rs_resp *r);
/* Appends {op, path, value} to a JSON Patch array (value consumed; may be NULL). */
void kobj_patch_op(cJSON *patch, const char *op, const char *path, cJSON *value);
int kobj_get(rs_txn *tx, const char *kind, const char *ns, const char *name, rs_resp *r);
/* obj.a.b is JSON true. */
bool kobj_bool(const cJSON *obj, const char *a, const char *b);
/* One JSON Patch whose conflict is final (its tests are the whole CAS),
 * through kube_cas_write and the given door (need: for KUBE_CAS_GATED). patch
 * is consumed. A lost answer is re-read and adopted when seen says so; with
 * seen NULL it fails closed. */
kube_cas_end kobj_patch_once(rs_txn *tx, kube_cas_door door, gate_need need, const char *kind,
                             const char *ns, const char *name, cJSON *patch,
                             kube_cas_seen (*seen)(void *ctx, int status, const cJSON *obj),
                             void *seen_ctx, kube_cas_result *res);
/* A sentence for a failed call: "HTTP 409 (Conflict: ...)" or the transport error. */
void kobj_describe(const rs_resp *r, char *buf, size_t len);

/* lease.c */
rs_code lease_acquire(rs_txn *tx, rs_err *e);
rs_code lease_assert_held(rs_txn *tx, rs_err *e);
/* lease_assert_held on a read of the Lease already made (the batch of
 * fence_assert_held). A read that shows nothing sets *unreadable and judges
 * nothing: the caller re-proves with lease_assert_held (its retries). */
rs_code lease_assert_read(rs_txn *tx, int status, const cJSON *body, bool *unreadable, rs_err *e);
rs_code lease_release(rs_txn *tx, rs_err *e);
/* Recovery: takes the Lease over from a provably terminal holder by CAS on
 * that holder and the resourceVersion read when its liveness was judged. */
rs_code lease_take_over(rs_txn *tx, const char *holder, const char *rv, rs_err *e);
/* Renews the Lease if held and its heartbeat is due (before waits). */
void lease_heartbeat(rs_txn *tx);

/* fence.c */
tx_status fence_policy_take(rs_txn *tx);
void fence_policy_release(rs_txn *tx, rs_result *res);
/* Restarts kustomize-controller and proves every pre-restart pod was
 * replaced by a Ready pod (fence_restart.c). */
tx_status fence_restart_controller(rs_txn *tx);
/* Before every write through the gate: the Lease and, once taken, both
 * policy fences (still carrying this run's tuple) — read in one batch, one
 * round trip (fence_held.c). */
rs_code fence_assert_held(rs_txn *tx, rs_err *e);
/* Resumes the child (or parent) fenced by `who` — a provably terminal run. */
rs_code fence_policy_recover(rs_txn *tx, bool child, const char *who, rs_err *e);
/* Reads both Kustomizations: RS_OK with `what` empty (free) or naming the
 * first residual fence; a failed read is an error, never a residual fence. */
rs_code fence_policy_residual(rs_txn *tx, char *what, size_t len, rs_err *e);
/* fence_busy.c: why Kustomization `ks` (in namespace ns) is still busy — its
 * Reconciling reason and message, and each dependency that is not Ready
 * (read here; an unreadable one is warned about) — into buf ("" if nothing). */
void fence_busy_why(rs_txn *tx, const cJSON *ks, const char *ns, char *buf, size_t len);

/* node_pass.c, node_process.c, proof.c (node_info is in core/node.h) */
struct node_info;
tx_status node_pass(rs_txn *tx, bool *processed);
/* Lazy, before its first fence: one Node list; fails naming every node fence
 * no reclaim can clear (DESIGN §3.5 item 4 r2), so nothing is taken or
 * reclaimed on the way to a certain failure. */
tx_status node_fences_preflight(rs_txn *tx);
tx_status node_process(rs_txn *tx, const struct node_info *n, int mode);
/* Releases a claim left by a failed node procedure (cleanup path). */
void node_cleanup(rs_txn *tx, rs_result *res);
bool proof_excuses(rs_txn *tx, const struct node_info *n);
struct node_inventory;
/* Remembers a target-free inventory for the runtime proof. */
void proof_remember(rs_txn *tx, const struct node_inventory *inv);
/* Lists Nodes (optionally by label), validates and orders them. */
tx_status node_inventory_read(rs_txn *tx, const char *label_selector, struct node_inventory *inv);
void proof_load(rs_txn *tx);
tx_status proof_record(rs_txn *tx);
/* Moves the recorded proof into res when the run succeeded; frees it otherwise. */
void proof_hand_over(rs_txn *tx, rs_result *res);

/* fences_admin.c */
void fences_report(rs_txn *tx, rs_result *res);
void fences_recover(rs_txn *tx, rs_result *res);

/* registry.c */
tx_status registry_prove(rs_txn *tx);

/* fanout.c */
typedef struct fanout_discovery {
    bool variables_base;
    bool eso_crds;
    bool pushsecret;
    bool externalsecrets; /* one in every fan-out namespace */
    char missing[256];    /* the first missing piece, for the message */
} fanout_discovery;
tx_status fanout_discover(rs_txn *tx, fanout_discovery *d);
tx_status fanout_converge(rs_txn *tx);
tx_status fanout_force_sync(rs_txn *tx, const char *kind, const char *ns, const char *name);

#endif
