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
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const rs_strategy rs_strategy_eager = {
    .name = "eager", .fence_first = true, .writes_need_evidence = false, .run = NULL};

const rs_strategy rs_strategy_lazy = {
    .name = "lazy", .fence_first = false, .writes_need_evidence = true, .run = NULL};

const rs_strategy *rs_strategy_default(void)
{
    return &rs_strategy_lazy;
}

const rs_strategy *rs_strategy_find(const char *name)
{
    if (strcmp(name, rs_strategy_lazy.name) == 0) return &rs_strategy_lazy;
    if (strcmp(name, rs_strategy_eager.name) == 0) return &rs_strategy_eager;
    return NULL;
}

/* The gate's callback: take whatever is missing to reach `need`. */
static rs_code txn_fence_take(void *owner, gate_need need, rs_err *e)
{
    rs_txn *tx = owner;
    if (!tx->lease_held && !tx->opt->strategy->fence_first) {
        if (node_fences_preflight(tx) != TX_OK) {
            if (e != &tx->err) *e = tx->err;
            return e->code == RS_OK ? RS_FAILED : e->code;
        }
    }
    bool policy = need >= GATE_NEED_FULL && !tx->fence_taken;
    /* The fence has its own log group (DESIGN §7.1 r2), even when lazy takes
     * it in the middle of another phase. */
    if (policy)
        out_group_begin(tx->out, "Fence: %spausing Flux (%s/%s, %s/%s) and restarting %s",
                        tx->lease_held ? "" : "taking the Lease, ", tx->cfg->parent_ns,
                        tx->cfg->parent_name, tx->cfg->child_ns, tx->cfg->child_name,
                        tx->cfg->controller_name);
    else
        out_group_begin(tx->out, "Fence: taking the Lease");
    rs_code c = RS_OK;
    if (!tx->lease_held) {
        out_info(tx->out, "taking Lease %s/%s as %s", tx->cfg->lease_ns, tx->cfg->lease_name,
                 tx->holder);
        c = lease_acquire(tx, e);
    }
    if (c == RS_OK && policy) {
        if (fence_policy_take(tx) != TX_OK) {
            if (e != &tx->err) *e = tx->err;
            c = e->code == RS_OK ? RS_FAILED : e->code;
        } else {
            tx->fence_taken = true;
        }
    }
    out_group_end(tx->out);
    return c;
}

static rs_code txn_fence_check(void *owner, rs_err *e)
{
    rs_txn *tx = owner;
    return fence_assert_held(tx, e);
}

static void txn_fence_heartbeat(void *owner)
{
    lease_heartbeat((rs_txn *)owner);
}

bool txn_run_ref_valid(const char *ref)
{
    /* Only the shapes this tool writes (DESIGN §3.4): "sim.<run>",
     * "gh<run id>.<attempt>" or "local". Anything else names no run. */
    if (strcmp(ref, "local") == 0) return true;
    if (strncmp(ref, "sim.", 4) == 0) {
        bool ok = ref[4] != '\0';
        for (const char *p = ref + 4; *p && ok; p++)
            ok = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-';
        return ok;
    }
    if (strncmp(ref, "gh", 2) != 0) return false;
    size_t id = strspn(ref + 2, "0123456789");
    if (id == 0 || ref[2 + id] != '.') return false;
    size_t at = strspn(ref + 2 + id + 1, "0123456789");
    return at > 0 && ref[2 + id + 1 + at] == '\0';
}

static void txn_holder(rs_txn *tx)
{
    uint64_t rnd = gate_entropy(tx->gate);
    snprintf(tx->holder, sizeof tx->holder, "%.16s-%s-%d-%08" PRIx64, tx->revision,
             tx->opt->run_ref ? tx->opt->run_ref : "local", gate_pid(tx->gate), rnd & 0xffffffffu);
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

static tx_status txn_put_if_drifted(rs_txn *tx, gate_need need, const char *ns, const char *name,
                                    const char *key, const char *what);

/* §3.2: a partially initialised fan-out. Returns TX_OK with *done set when the
 * run ends here. */
static tx_status txn_bootstrap(rs_txn *tx, const fanout_discovery *d, bool *done)
{
    const rs_config *c = tx->cfg;
    *done = false;
    if (d->variables_base && d->eso_crds && d->pushsecret && d->externalsecrets) return TX_OK;
    *done = true;
    if (!tx->opt->allow_incomplete_fanout) {
        rs_fail(&tx->err, RS_FAILED,
                "fan-out not initialized (%s is absent); root auth "
                "unchanged (pass --allow-incomplete-fanout to write the root secret only)",
                d->missing);
        return TX_FAIL;
    }
    out_warning(tx->out,
                "fan-out incomplete (%s is absent); --allow-incomplete-fanout: "
                "bootstrapping the root secret",
                d->missing);
    tx_status s = txn_put_if_drifted(tx, GATE_NEED_LEASE, c->root_ns, c->root_name, c->root_key,
                                     "root secret");
    if (s == TX_OK && d->variables_base) {
        /* ESO is missing but variables-base exists: root, variables-base,
         * root — so whichever half ESO later reads, it reads the new value. */
        s = txn_put_if_drifted(tx, GATE_NEED_LEASE, c->variables_ns, c->variables_name,
                               c->variables_key, "variables-base");
        if (s == TX_OK)
            s = txn_put_if_drifted(tx, GATE_NEED_LEASE, c->root_ns, c->root_name, c->root_key,
                                   "root secret");
    }
    return s;
}

/* Writes a Secret key unless lazy finds it already desired. */
static tx_status txn_put_if_drifted(rs_txn *tx, gate_need need, const char *ns, const char *name,
                                    const char *key, const char *what)
{
    if (tx->opt->strategy->writes_need_evidence) {
        char *text = NULL;
        size_t len = 0;
        rs_answer ans;
        int st = kobj_secret_read(tx, ns, name, key, &text, &len, NULL, &ans);
        bool ok = st == 200 && text && cred_matches_text(&tx->cred, text, len);
        cred_bytes_wipe_free(text, len);
        if (ok) return TX_OK;
        if (st != 200 && st != 404) {
            rs_fail(&tx->err, RS_FAILED, "reading Secret %s/%s failed (%s)", ns, name, ans.text);
            return TX_FAIL;
        }
        txn_drift(tx, "%s differs from the desired credential (Secret %s/%s)", what, ns, name);
    }
    return kobj_secret_put_desired(tx, need, ns, name, key);
}

void txn_drift(rs_txn *tx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = rs_xvasprintf(fmt, ap);
    va_end(ap);
    for (size_t i = 0; i < tx->drift_n; i++) {
        if (strcmp(tx->drift_seen[i], msg) == 0) {
            free(msg);
            return;
        }
    }
    out_notice(tx->out, "drift: %s", msg);
    tx->drift_seen = rs_xrealloc(tx->drift_seen, (tx->drift_n + 1) * sizeof *tx->drift_seen);
    tx->drift_seen[tx->drift_n++] = msg;
}

/* Cutover: the root secret, always written last. */
static tx_status txn_cutover(rs_txn *tx)
{
    const rs_config *c = tx->cfg;
    tx_status s = txn_put_if_drifted(tx, GATE_NEED_FULL, c->root_ns, c->root_name, c->root_key,
                                     "root secret");
    if (s == TX_OK && gate_held(tx->gate) == GATE_NEED_FULL)
        out_info(tx->out, "cutover: root secret %s/%s holds the desired credential", c->root_ns,
                 c->root_name);
    return s;
}

/* The convergence loop (§3.3). */
static tx_status txn_converge(rs_txn *tx)
{
    int rounds = rs_config_talos_attempts(tx->cfg); /* validated >= 3, never clamped */
    if (rounds < TX_ROUNDS_MIN) {
        rs_fail(&tx->err, RS_DATAERR,
                "Talos convergence attempts is %d; at least %d are needed (a target pass and "
                "two clean inventories)",
                rounds, TX_ROUNDS_MIN);
        return TX_FAIL;
    }
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
static void txn_lease_release(rs_txn *tx, rs_result *res)
{
    rs_err e;
    rs_err_clear(&e);
    if (tx->lease_held && lease_release(tx, &e) != RS_OK) {
        out_error(tx->out, "%s", e.msg);
        res->exit = rs_code_worst(res->exit, RS_FAILED);
        res->outcome = "failed";
    }
}

static void txn_cleanup(rs_txn *tx, rs_result *res)
{
    /* TEST-ONLY defect (rs_broken): on a failing exit, the Lease first and
     * the fences unguarded. */
    bool lease_first = tx->opt->strategy->broken == RS_BROKEN_LEASE_FIRST && res->exit != RS_OK;
    if (lease_first) txn_lease_release(tx, res);
    fence_policy_release(tx, res);
    node_cleanup(tx, res);
    if (!lease_first) txn_lease_release(tx, res);
}

/* Discovery, bootstrap paths and the convergence loop. */
static tx_status txn_attempt(rs_txn *tx, bool *bootstrapped)
{
    *bootstrapped = false;
    for (int attempt = 0; attempt < TX_CAS_ATTEMPTS_MAX; attempt++) {
        fanout_discovery d;
        tx_status s = fanout_discover(tx, &d);
        if (s == TX_OK) s = txn_bootstrap(tx, &d, bootstrapped);
        if (s == TX_RESTART) continue; /* lazy took the Lease: re-read discovery under it */
        if (s != TX_OK || *bootstrapped) return s;
        if (tx->opt->strategy->fence_first &&
            gate_take(tx->gate, GATE_NEED_FULL, &tx->err) != RS_OK)
            return TX_FAIL;
        return txn_converge(tx);
    }
    rs_fail(&tx->err, RS_FAILED, "discovery kept changing under the fence");
    return TX_FAIL;
}

/* Lazy, before anything else: the Lease must be free (its resourceVersion is
 * remembered for the quiet proof), and no policy fence may be left over — a
 * retained fence means an earlier run failed to resume Flux, which is never
 * "converged". */
static tx_status lazy_start(rs_txn *tx, char rv[TX_RV_MAX])
{
    rs_resp r;
    int st = kobj_get(tx, "Lease", tx->cfg->lease_ns, tx->cfg->lease_name, &r);
    const char *holder = st == 200 ? kobj_lease_holder(r.body, NULL) : NULL;
    snprintf(rv, TX_RV_MAX, "%s", st == 200 ? kobj_rv(r.body) : "");
    if (st == 200 && !holder) holder = KOBJ_LEASE_MALFORMED; /* unreadable, never free (H1) */
    bool held = holder && holder[0];
    if (held)
        rs_fail(&tx->err, RS_FAILED,
                "Lease %s/%s is held by %s; a concurrent transaction is "
                "running or leaked (see `reassert --fences`)",
                tx->cfg->lease_ns, tx->cfg->lease_name, holder);
    rs_answer ans = rs_answer_of(&r);
    rs_resp_free(&r);
    if (held) return TX_FAIL;
    if (st != 200 && st != 404) {
        rs_fail(&tx->err, RS_FAILED, "reading Lease %s/%s failed (%s)", tx->cfg->lease_ns,
                tx->cfg->lease_name, ans.text);
        return TX_FAIL;
    }
    char what[400];
    if (fence_policy_residual(tx, what, sizeof what, &tx->err) != RS_OK) return TX_FAIL;
    if (what[0]) {
        rs_fail(&tx->err, RS_FAILED,
                "residual policy fence: %s; refusing to report converged "
                "(see `reassert --fences`, then `reassert --recover-fences`)",
                what);
        return TX_FAIL;
    }
    return TX_OK;
}

/* Lazy, at a fence-free end: did anyone take the Lease meanwhile? */
static tx_status lazy_lease_unmoved(rs_txn *tx, const char *rv_start, bool *moved)
{
    rs_resp r;
    int st = kobj_get(tx, "Lease", tx->cfg->lease_ns, tx->cfg->lease_name, &r);
    *moved = strcmp(st == 200 ? kobj_rv(r.body) : "", rv_start) != 0;
    rs_answer ans = rs_answer_of(&r);
    rs_resp_free(&r);
    if (st != 200 && st != 404) {
        rs_fail(&tx->err, RS_FAILED, "re-reading Lease %s/%s failed (%s)", tx->cfg->lease_ns,
                tx->cfg->lease_name, ans.text);
        return TX_FAIL;
    }
    return TX_OK;
}

/* DESIGN.md §3.5 item 4: "redo the read-only pass, at most 3 times". */
#define TX_QUIET_REDOS_MAX 3

void txn_repair(rs_txn *tx, rs_result *res)
{
    bool lazy = !tx->opt->strategy->fence_first;
    char rv_start[TX_RV_MAX] = "";
    tx_status s = TX_OK;
    bool bootstrapped = false;
    if (!lazy && gate_take(tx->gate, GATE_NEED_LEASE, &tx->err) != RS_OK) s = TX_FAIL;
    for (int redos = 0; s == TX_OK; redos++) {
        if (lazy) s = lazy_start(tx, rv_start);
        if (s == TX_OK) s = txn_attempt(tx, &bootstrapped);
        if (s != TX_OK || bootstrapped || !lazy || gate_held(tx->gate) != GATE_NEED_NONE) break;
        /* A fence-free exit must prove quiet (DESIGN.md §3.5 item 4). */
        bool moved = false;
        s = lazy_lease_unmoved(tx, rv_start, &moved);
        if (s != TX_OK || !moved) break;
        if (redos >= TX_QUIET_REDOS_MAX) {
            rs_fail(&tx->err, RS_FAILED,
                    "concurrent transaction: Lease %s/%s moved during %d "
                    "read-only passes (the first and %d redos)",
                    tx->cfg->lease_ns, tx->cfg->lease_name, redos + 1, redos);
            s = TX_FAIL;
            break;
        }
        out_info(tx->out, "Lease moved during the read-only pass; verifying again");
    }
    if (s != TX_OK) {
        res->exit = tx->err.code == RS_OK ? RS_FAILED : tx->err.code;
        res->outcome = "failed";
        out_error(tx->out, "%s", tx->err.msg);
        return;
    }
    if (bootstrapped)
        res->outcome = "bootstrapped";
    else
        /* "repaired" only when a write changed the world: a fence taken
         * for drift that was gone by the time the round re-read it is not a
         * repair. */
        res->outcome = gate_changes(tx->gate) > 0 ? "repaired" : "converged";
    if (!bootstrapped && gate_writes(tx->gate) == 0)
        out_info(tx->out, "converged: nothing drifted; no fence taken, nothing written");
}

void rs_result_free(rs_result *res)
{
    free(res->proof_recorded);
    res->proof_recorded = NULL;
    for (size_t i = 0; i < res->n_annotation_only; i++)
        free(res->annotation_only_nodes[i]);
    free(res->annotation_only_nodes);
    res->annotation_only_nodes = NULL;
    res->n_annotation_only = 0;
}

void txn_run(rs_transport *t, const rs_config *cfg, const rs_options *opt,
             const rs_desired *desired, rs_out *out, rs_result *res)
{
    rs_txn *tx = rs_xcalloc(1, sizeof *tx);
    tx->cfg = cfg;
    tx->opt = opt;
    tx->out = out;
    rs_gate_ops ops = {
        .take = txn_fence_take, .check = txn_fence_check, .heartbeat = txn_fence_heartbeat};
    tx->gate = gate_new(t, ops, tx, !opt->strategy->fence_first);
    res->exit = RS_OK;
    res->outcome = "failed";
    res->fence_taken = false;
    res->wrote = false;
    res->proof_recorded = NULL;
    res->annotation_only_nodes = NULL;
    res->n_annotation_only = 0;

    if (!txn_mode_needs_credential(opt->mode)) {
        /* No credential needed: the revision comes from the ciphertext alone. */
        if (!desired || !desired->ciphertext ||
            revision_of_ciphertext(desired->ciphertext, tx->revision, NULL) != RS_OK)
            snprintf(tx->revision, sizeof tx->revision, "%s", "recovery00000000");
        txn_holder(tx);
        if (opt->mode == RS_MODE_FENCES)
            fences_report(tx, res);
        else
            fences_recover(tx, res);
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
    res->wrote = gate_writes(tx->gate) > 0;
    proof_hand_over(tx, res);
    res->annotation_only_nodes = tx->annotation_only;
    res->n_annotation_only = tx->n_annotation_only;
    tx->annotation_only = NULL;
    tx->n_annotation_only = 0;
    if (res->n_annotation_only > 0) {
        /* One line a reader of the log can act on (DESIGN §3.3 r2). */
        size_t len = 1;
        for (size_t i = 0; i < res->n_annotation_only; i++)
            len += strlen(res->annotation_only_nodes[i]) + 2;
        char *list = rs_xcalloc(1, len);
        for (size_t i = 0; i < res->n_annotation_only; i++) {
            if (i) strcat(list, ", ");
            strcat(list, res->annotation_only_nodes[i]);
        }
        out_warning(out,
                    "annotation-only nodes (Talos auth unreadable, decided on their annotations "
                    "alone; --require-auth-proof refuses this): %s",
                    list);
        free(list);
    }
    cred_free(&tx->cred);
    cJSON_Delete(tx->proof);
    cJSON_Delete(tx->proof_nodes);
    free(tx->claimed_taints);
    for (size_t i = 0; i < tx->n_annotation_only; i++)
        free(tx->annotation_only[i]);
    free(tx->annotation_only);
    for (size_t i = 0; i < tx->drift_n; i++)
        free(tx->drift_seen[i]);
    free(tx->drift_seen);
    gate_free(tx->gate);
    free(tx);
}

bool txn_mode_needs_credential(rs_mode mode)
{
    return mode != RS_MODE_FENCES && mode != RS_MODE_RECOVER_FENCES;
}
