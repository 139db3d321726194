/*
 * txn.h — the fenced transaction of DESIGN.md §3: the public entry point.
 *
 * One call runs one mode (repair, --check-only, --fences, --recover-fences)
 * against one transport and reports an exit code and an outcome. Everything
 * the run says goes through rs_out; everything it touches goes through the
 * transport, wrapped in the write gate (core/gate.h).
 */
#ifndef RS_TXN_H
#define RS_TXN_H

#include "core/config.h"
#include "core/out.h"
#include "core/rs.h"
#include "core/transport/transport.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum rs_mode {
    RS_MODE_REPAIR = 0,
    RS_MODE_CHECK_ONLY,
    RS_MODE_FENCES,
    RS_MODE_RECOVER_FENCES,
} rs_mode;

typedef struct rs_txn rs_txn;
typedef struct rs_result rs_result;

/*
 * A strategy decides *when the fence is taken* and *whether fan-out writes
 * need evidence* (DESIGN.md §3.5). `run`, when set, replaces the standard
 * procedure entirely: only test-only strategies (the rejected designs kept in
 * tests/) use it, to prove the scenarios catch them.
 */
/*
 * TEST-ONLY: a deliberate defect in the standard procedure, so the sweeps can
 * be shown to catch it (tests/check_sweep_broken.sh). Each is subtle: the
 * fault-free run is correct, and only a fault or another actor's event
 * (which only the sweeps inject) reaches the defect. Every shipped strategy
 * has RS_BROKEN_NONE; only `reassert sweep --test-only-broken` (a sim-only
 * command) and test binaries build a strategy with another value.
 */
typedef enum rs_broken {
    RS_BROKEN_NONE = 0,
    /* on an error path, a claimed node is released still cordoned */
    RS_BROKEN_SKIP_CORDON_RESTORE,
    /* a failing run's cleanup releases the Lease before the policy fences */
    RS_BROKEN_LEASE_FIRST,
    /* cutover after one clean inventory, not two, when the inventory shows
     * a node someone else cordoned ("out of service: not waited for") */
    RS_BROKEN_ROOT_EARLY,
} rs_broken;

typedef struct rs_strategy {
    const char *name;
    bool fence_first;          /* eager: Lease first, policy fences before the loop */
    bool writes_need_evidence; /* lazy: write only on drift judged in the round */
    void (*run)(rs_txn *txn, rs_result *res);
    rs_broken broken; /* TEST-ONLY (above); RS_BROKEN_NONE in production */
} rs_strategy;

extern const rs_strategy rs_strategy_eager;
/* The strategy used when none is named (DESIGN.md §3.5: lazy once it exists). */
const rs_strategy *rs_strategy_default(void);
/* NULL when the name is not a shipped strategy. */
const rs_strategy *rs_strategy_find(const char *name);

typedef struct rs_options {
    rs_mode mode;
    bool allow_incomplete_fanout;
    /* A node whose Talos auth cannot be read (an error, or redacted for a
     * reader-role talosconfig) fails the run before any Talos write, instead
     * of being decided on its annotations alone (DESIGN §3.3 r2). */
    bool require_auth_proof;
    /* The runtime proof is data (core/node/node_proof.c): the paths only name
     * it in messages; cli/ reads the reused proof into reuse_proof_text
     * (NULL when unreadable, reuse_proof_error saying why) and writes the
     * recorded one from rs_result. */
    const char *record_proof_path;
    const char *reuse_proof_path;
    const char *reuse_proof_text;
    const char *reuse_proof_error;
    const rs_strategy *strategy;
    const char *run_ref; /* "gh<run id>.<attempt>", "sim.<run name>", "local" */
} rs_options;

typedef struct rs_desired {
    const char *dockerconfigjson; /* the decrypted docker config (secret) */
    size_t len;
    const char *ciphertext; /* the SOPS ciphertext scalar */
} rs_desired;

struct rs_result {
    rs_code exit;
    const char *outcome; /* converged|repaired|bootstrapped|checked|reported|recovered|failed */
    bool fence_taken;
    bool wrote;
    /* With --record-runtime-proof and exit 0: the proof's JSON text for the
     * caller to write (the caller frees it); NULL otherwise. */
    char *proof_recorded;
    /* Nodes decided on their annotations alone because their Talos auth could
     * not be read (DESIGN §3.3 r2), in the order met; owned by the result
     * (rs_result_free). */
    char **annotation_only_nodes;
    size_t n_annotation_only;
};

/* Frees what txn_run left in res (the recorded proof, the node list). */
void rs_result_free(rs_result *res);

void txn_run(rs_transport *t, const rs_config *cfg, const rs_options *opt,
             const rs_desired *desired, rs_out *out, rs_result *res);

/* Whether ref has a shape opt->run_ref takes ("sim.<run name>",
 * "gh<run id>.<attempt>", "local"): what a holder names and --fences asks
 * the liveness of (DESIGN §3.4). */
bool txn_run_ref_valid(const char *ref);

/* Whether mode checks the desired credential (cred_parse, then the
 * ciphertext's revision) before its first call: repair and --check-only
 * do; --fences and --recover-fences need none. */
bool txn_mode_needs_credential(rs_mode mode);

#endif
