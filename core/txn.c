/*
 * txn.c — the fenced transaction, read side by side with DESIGN.md §3:
 *
 *   preflight (credential, revision, registry proof; --check-only stops)
 *   -> [eager: Lease] -> discovery -> bootstrap paths (§3.2)
 *   -> [eager: policy fences + controller restart]
 *   -> convergence loop (§3.3): fan-out, Talos pass, cutover (root last)
 *   -> cleanup on every exit path (§3.4)
 *
 * The strategy decides only *when* the fence is taken and *whether* fan-out
 * writes need evidence (§3.5); the procedure is the same for both, so lazy is
 * exactly as strong as eager by construction.
 */
#include "core/txn_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

const rs_strategy rs_strategy_eager = {
    .name = "eager", .fence_first = true, .writes_need_evidence = false, .run = NULL};

const rs_strategy *rs_strategy_default(void)
{
    return &rs_strategy_eager;
}

const rs_strategy *rs_strategy_find(const char *name)
{
    if (strcmp(name, rs_strategy_eager.name) == 0) return &rs_strategy_eager;
    return NULL;
}

/* The gate's callback: take whatever is missing to reach `need`. */
static rs_code txn_fence_take(void *owner, gate_need need, rs_err *e)
{
    rs_txn *tx = owner;
    if (!tx->lease_held) {
        out_info(tx->out, "taking Lease %s/%s as %s", tx->cfg->lease_ns, tx->cfg->lease_name,
                 tx->holder);
        rs_code c = lease_acquire(tx, e);
        if (c != RS_OK) return c;
    }
    if (need >= GATE_NEED_FULL && !tx->fence_taken) {
        if (fence_policy_take(tx) != TX_OK) {
            if (e != &tx->err) *e = tx->err;
            return e->code == RS_OK ? RS_FAILED : e->code;
        }
        tx->fence_taken = true;
    }
    return RS_OK;
}

static rs_code txn_fence_check(void *owner, rs_err *e)
{
    return lease_assert_held((rs_txn *)owner, e);
}

static void txn_holder(rs_txn *tx)
{
    uint64_t rnd = gate_entropy(&tx->gate);
    snprintf(tx->holder, sizeof tx->holder, "%.16s-%s-%d-%08" PRIx64, tx->revision,
             tx->opt->run_ref ? tx->opt->run_ref : "local", gate_pid(&tx->gate),
             rnd & 0xffffffffu);
}

static tx_status txn_preflight(rs_txn *tx, const rs_desired *d)
{
    rs_code c = cred_parse(d->dockerconfigjson, d->len, "desired credential", &tx->cred, &tx->err);
    if (c != RS_OK) return TX_FAIL;
    c = revision_of_ciphertext(d->ciphertext ? d->ciphertext : "", tx->revision, &tx->err);
    if (c != RS_OK) return TX_FAIL;
    tx->desired_text = d->dockerconfigjson;
    tx->desired_len = d->len;
    out_info(tx->out, "desired credential valid; revision %.16s", tx->revision);
    return registry_prove(tx);
}

/* §3.2: a partially initialised fan-out. Returns TX_OK with *done set when the
 * run ends here. */
static tx_status txn_bootstrap(rs_txn *tx, const fanout_discovery *d, bool *done, bool *wrote)
{
    const rs_config *c = tx->cfg;
    *done = false;
    if (d->variables_base && d->eso_crds && d->pushsecret && d->externalsecrets) return TX_OK;
    *done = true;
    if (!tx->opt->allow_incomplete_fanout) {
        rs_fail(&tx->err, RS_FAILED, "fan-out not initialized (%s is absent); root auth "
                "unchanged (pass --allow-incomplete-fanout to write the root secret only)",
                d->missing);
        return TX_FAIL;
    }
    out_warning(tx->out, "fan-out incomplete (%s is absent); --allow-incomplete-fanout: "
                "bootstrapping the root secret", d->missing);
    tx_status s = kobj_secret_put_desired(tx, GATE_NEED_LEASE, c->root_ns, c->root_name,
                                          c->root_key);
    if (s == TX_OK && d->variables_base) {
        /* ESO is missing but variables-base exists: root, variables-base,
         * root — so whichever half ESO later reads, it reads the new value. */
        s = kobj_secret_put_desired(tx, GATE_NEED_LEASE, c->variables_ns, c->variables_name,
                                    c->variables_key);
        if (s == TX_OK)
            s = kobj_secret_put_desired(tx, GATE_NEED_LEASE, c->root_ns, c->root_name,
                                        c->root_key);
    }
    if (s == TX_OK) *wrote = true;
    return s;
}

/* Cutover: the root secret, always written last. */
static tx_status txn_cutover(rs_txn *tx)
{
    const rs_config *c = tx->cfg;
    out_info(tx->out, "cutover: writing root secret %s/%s", c->root_ns, c->root_name);
    return kobj_secret_put_desired(tx, GATE_NEED_FULL, c->root_ns, c->root_name, c->root_key);
}

/* The convergence loop (§3.3). */
static tx_status txn_converge(rs_txn *tx)
{
    int rounds = tx->cfg->sync_attempts > TX_ROUNDS_MIN ? tx->cfg->sync_attempts : TX_ROUNDS_MIN;
    for (int round = 1; round <= rounds; round++) {
        tx_status s = fanout_converge(tx);
        if (s == TX_RESTART) continue;
        if (s != TX_OK) return s;
        bool processed = false;
        s = node_pass(tx, &processed);
        if (s == TX_RESTART) continue;
        if (s != TX_OK) return s;
        if (processed) continue; /* re-prove the fan-out, then a full node pass */
        s = proof_record(tx);
        if (s != TX_OK) return s;
        s = txn_cutover(tx);
        if (s == TX_RESTART) continue;
        return s;
    }
    rs_fail(&tx->err, RS_FAILED, "no convergence after %d rounds; root auth unchanged", rounds);
    return TX_FAIL;
}

/* Cleanup on every exit path: only what this run acquired. */
static void txn_cleanup(rs_txn *tx, rs_result *res)
{
    fence_policy_release(tx, res);
    node_cleanup(tx, res);
    rs_err e;
    rs_err_clear(&e);
    if (tx->lease_held && lease_release(tx, &e) != RS_OK) {
        out_error(tx->out, "%s", e.msg);
        res->exit = rs_code_worst(res->exit, RS_FAILED);
        res->outcome = "failed";
    }
}

static void txn_repair(rs_txn *tx, rs_result *res)
{
    tx_status s = TX_OK;
    bool wrote = false;
    if (tx->opt->strategy->fence_first && gate_take(&tx->gate, GATE_NEED_LEASE, &tx->err) != RS_OK)
        s = TX_FAIL;
    for (int attempt = 0; s == TX_OK && attempt < TX_CAS_ATTEMPTS_MAX; attempt++) {
        fanout_discovery d;
        s = fanout_discover(tx, &d);
        bool done = false;
        if (s == TX_OK) s = txn_bootstrap(tx, &d, &done, &wrote);
        if (s == TX_RESTART) { /* lazy took the Lease: re-read discovery under it */
            s = TX_OK;
            continue;
        }
        if (s != TX_OK) break;
        if (done) {
            res->outcome = "bootstrapped";
            return;
        }
        if (tx->opt->strategy->fence_first &&
            gate_take(&tx->gate, GATE_NEED_FULL, &tx->err) != RS_OK) {
            s = TX_FAIL;
            break;
        }
        s = txn_converge(tx);
        break;
    }
    if (s != TX_OK) {
        res->exit = tx->err.code == RS_OK ? RS_FAILED : tx->err.code;
        res->outcome = "failed";
        out_error(tx->out, "%s", tx->err.msg);
        return;
    }
    (void)wrote;
    res->outcome = tx->gate.writes > 0 ? "repaired" : "converged";
}

void txn_run(rs_transport *t, const rs_config *cfg, const rs_options *opt,
             const rs_desired *desired, rs_out *out, rs_result *res)
{
    rs_txn *tx = rs_xcalloc(1, sizeof *tx);
    tx->cfg = cfg;
    tx->opt = opt;
    tx->out = out;
    rs_gate_ops ops = {.take = txn_fence_take, .check = txn_fence_check};
    gate_init(&tx->gate, t, ops, tx, !opt->strategy->fence_first);
    res->exit = RS_OK;
    res->outcome = "failed";
    res->fence_taken = false;
    res->wrote = false;

    if (opt->mode == RS_MODE_FENCES || opt->mode == RS_MODE_RECOVER_FENCES) {
        /* No credential needed: the revision comes from the ciphertext alone. */
        if (!desired || !desired->ciphertext ||
            revision_of_ciphertext(desired->ciphertext, tx->revision, NULL) != RS_OK)
            snprintf(tx->revision, sizeof tx->revision, "%s", "recovery00000000");
        txn_holder(tx);
        if (opt->mode == RS_MODE_FENCES) fences_report(tx, res);
        else fences_recover(tx, res);
    } else if (txn_preflight(tx, desired) != TX_OK) {
        res->exit = tx->err.code == RS_OK ? RS_FAILED : tx->err.code;
        out_error(out, "%s", tx->err.msg);
    } else if (opt->mode == RS_MODE_CHECK_ONLY) {
        res->outcome = "checked";
    } else if (opt->strategy->run) {
        txn_holder(tx);
        opt->strategy->run(tx, res);
    } else {
        txn_holder(tx);
        proof_load(tx);
        txn_repair(tx, res);
    }
    txn_cleanup(tx, res);
    res->fence_taken = tx->fence_taken;
    res->wrote = tx->gate.writes > 0;
    cred_free(&tx->cred);
    cJSON_Delete(tx->proof);
    free(tx->claimed_taints);
    free(tx);
}
