/*
 * fanout.c — the fan-out step of the convergence loop (DESIGN.md §3.3 item 1):
 * variables-base -> PushSecret -> OpenBao -> ExternalSecret -> consumer Secret.
 *
 * Eager writes and force-syncs unconditionally, as production does today.
 * Lazy writes only on evidence judged within the current round (§3.5 item 2):
 * the one read that makes this safe is the OpenBao seed itself, because a
 * PushSecret's status never proves the remote value — after a raft restore it
 * still reads Ready while OpenBao serves the previous credential.
 */
#include "core/kube/kube_cas.h"
#include "core/txn_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void fanout_resps_free(rs_resp *resps, size_t n)
{
    for (size_t i = 0; i < n; i++)
        rs_resp_free(&resps[i]);
    free(resps);
}

/* Discovery (§3.2) as one batch of namespaced gets: the four chain objects
 * and each fan-out namespace's ExternalSecret by name (least privilege: no
 * list). Judged in that order, so the first missing object is named. */
tx_status fanout_discover(rs_txn *tx, fanout_discovery *d)
{
    memset(d, 0, sizeof *d);
    const rs_config *c = tx->cfg;
    struct {
        const char *kind, *ns, *name;
        bool *found;
    } probes[] = {
        {"Secret", c->variables_ns, c->variables_name, &d->variables_base},
        {"CustomResourceDefinition", NULL, "pushsecrets.external-secrets.io", &d->eso_crds},
        {"CustomResourceDefinition", NULL, "externalsecrets.external-secrets.io", &d->eso_crds},
        {"PushSecret", c->pushsecret_ns, c->pushsecret_name, &d->pushsecret},
    };
    size_t np = RS_ARRAY_LEN(probes), n = np + c->n_fanout;
    rs_req *reqs = rs_xcalloc(n, sizeof *reqs);
    rs_resp *resps = rs_xcalloc(n, sizeof *resps);
    for (size_t i = 0; i < np; i++)
        reqs[i] = (rs_req){.op = RS_OP_KUBE_GET,
                           .kind = probes[i].kind,
                           .ns = probes[i].ns,
                           .name = probes[i].name};
    for (size_t i = 0; i < c->n_fanout; i++)
        reqs[np + i] = (rs_req){.op = RS_OP_KUBE_GET,
                                .kind = "ExternalSecret",
                                .ns = c->fanout_namespaces[i],
                                .name = c->externalsecret_name};
    gate_read_batch(tx->gate, reqs, resps, n, c->transport_parallelism);
    bool crds_all = true;
    d->externalsecrets = true;
    tx_status s = TX_OK;
    for (size_t i = 0; i < n && s == TX_OK; i++) {
        int st = resps[i].status;
        const rs_req *q = &reqs[i];
        if (st != 200 && st != 404) {
            /* A failed lookup is not an absence: never bootstrap on a guess. */
            char why[256];
            kobj_describe(&resps[i], why, sizeof why);
            rs_fail(&tx->err, RS_FAILED, "discovery: reading %s %s%s%s failed: %s", q->kind,
                    q->ns ? q->ns : "", q->ns ? "/" : "", q->name, why);
            s = TX_FAIL;
            break;
        }
        bool found = st == 200;
        if (i >= np) {
            d->externalsecrets = d->externalsecrets && found;
        } else if (probes[i].found == &d->eso_crds) {
            crds_all = crds_all && found;
            d->eso_crds = crds_all;
        } else {
            *probes[i].found = found;
        }
        if (!found && !d->missing[0])
            snprintf(d->missing, sizeof d->missing, "%s %s%s%s", q->kind, q->ns ? q->ns : "",
                     q->ns ? "/" : "", q->name);
    }
    for (size_t i = 0; i < n; i++)
        rs_resp_free(&resps[i]);
    free(resps);
    free(reqs);
    return s;
}

/* Reads an ESO object; fills its refreshTime (may be empty) and readiness. */
static int eso_read(rs_txn *tx, const char *kind, const char *ns, const char *name, char *refresh,
                    size_t refresh_len, char rv[TX_RV_MAX], bool *ready, rs_answer *ans)
{
    rs_req req = {.op = RS_OP_KUBE_GET, .kind = kind, .ns = ns, .name = name};
    rs_resp r;
    int st = gate_read(tx->gate, &req, &r);
    if (ans) *ans = rs_answer_of(&r);
    refresh[0] = '\0';
    rv[0] = '\0';
    *ready = false;
    if (st == 200 && r.body) {
        const char *t = kobj_str(r.body, "status.refreshTime");
        snprintf(refresh, refresh_len, "%s", t ? t : "");
        snprintf(rv, TX_RV_MAX, "%s", kobj_rv(r.body));
        *ready = kobj_condition_true(r.body, "Ready");
    }
    rs_resp_free(&r);
    return st;
}

typedef struct force_sync {
    rs_txn *tx;
    const char *stamp;
    char *rv_out; /* TX_RV_MAX: the annotated (or adopted) resourceVersion */
} force_sync;

/* force-sync=<stamp> as a merge patch: no CAS, nothing to read first. */
static kube_cas_step force_sync_plan(void *ctx, const kube_cas_view *v, kube_cas_req *w, rs_err *e)
{
    (void)v;
    (void)e;
    force_sync *f = ctx;
    cJSON *patch = cJSON_CreateObject();
    cJSON *ann = cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch, "metadata"), "annotations");
    cJSON_AddStringToObject(ann, f->tx->cfg->ann.force_sync, f->stamp);
    w->patch_type = RS_PATCH_MERGE;
    w->body = patch;
    return KUBE_CAS_WRITE;
}

/* After a lost answer: our stamp => adopt; a failed re-read => fail closed;
 * otherwise annotate again. */
static kube_cas_seen force_sync_seen(void *ctx, int status, const cJSON *obj)
{
    force_sync *f = ctx;
    if (status != 200 || !obj) return KUBE_CAS_NOT_OURS;
    const char *a = kobj_annotation(obj, f->tx->cfg->ann.force_sync);
    if (!a || strcmp(a, f->stamp) != 0) return KUBE_CAS_RETRY;
    snprintf(f->rv_out, TX_RV_MAX, "%s", kobj_rv(obj));
    return KUBE_CAS_ADOPT;
}

static void force_sync_written(void *ctx, const rs_resp *answer)
{
    force_sync *f = ctx;
    snprintf(f->rv_out, TX_RV_MAX, "%s", kobj_rv(answer->body));
}

/* Annotates force-sync=<stamp>, resolving a lost response. Fills the
 * resourceVersion the annotate call returned (or the adopted re-read's). */
static tx_status force_sync_annotate(rs_txn *tx, const char *kind, const char *ns, const char *name,
                                     const char *stamp, char rv_out[TX_RV_MAX])
{
    force_sync f = {.tx = tx, .stamp = stamp, .rv_out = rv_out};
    kube_cas_ops ops = {.kind = kind,
                        .ns = ns,
                        .name = name,
                        .door = KUBE_CAS_GATED,
                        .need = GATE_NEED_FULL,
                        .read = KUBE_CAS_PLAN_BLIND,
                        .attempts_max = TX_CAS_ATTEMPTS_MAX,
                        .plan = force_sync_plan,
                        .seen = force_sync_seen,
                        .written = force_sync_written,
                        .ctx = &f};
    kube_cas_result res;
    switch (kube_cas_write(tx->gate, &ops, &res, &tx->err)) {
    case KUBE_CAS_ADOPTED:
        out_info(tx->out,
                 "%s %s/%s: force-sync response lost; our annotation is present, "
                 "adopted",
                 kind, ns, name);
        return TX_OK;
    case KUBE_CAS_WRITTEN:
    case KUBE_CAS_ALREADY:
        return TX_OK;
    case KUBE_CAS_RESTART:
        return TX_RESTART;
    case KUBE_CAS_REFUSED:
    case KUBE_CAS_GATE_FAILED:
        return TX_FAIL;
    case KUBE_CAS_FAILED:
        rs_fail(&tx->err, RS_FAILED, "force-sync of %s %s/%s: annotate failed: %s", kind, ns, name,
                res.why);
        return TX_FAIL;
    case KUBE_CAS_UNRESOLVED:
    case KUBE_CAS_CONTENDED:
        break;
    }
    rs_fail(&tx->err, RS_FAILED,
            "force-sync of %s %s/%s: annotation could not be confirmed; "
            "failing closed",
            kind, ns, name);
    return TX_FAIL;
}

tx_status fanout_force_sync(rs_txn *tx, const char *kind, const char *ns, const char *name)
{
    char before[64], rv[TX_RV_MAX];
    bool ready;
    rs_answer ans;
    int st = eso_read(tx, kind, ns, name, before, sizeof before, rv, &ready, &ans);
    if (st != 200) {
        rs_fail(&tx->err, RS_FAILED, "force-sync of %s %s/%s: reading it failed (%s)", kind, ns,
                name, ans.text);
        return TX_FAIL;
    }
    char stamp[96];
    snprintf(stamp, sizeof stamp, "%.12s-%" PRId64 "-%d", tx->revision, gate_now_ms(tx->gate),
             ++tx->force_sync_seq);
    char annotated_rv[TX_RV_MAX] = "";
    tx_status a = force_sync_annotate(tx, kind, ns, name, stamp, annotated_rv);
    if (a != TX_OK) return a;
    for (int attempt = 0; attempt < tx->cfg->sync_attempts; attempt++) {
        gate_sleep_ms(tx->gate, tx->cfg->sync_interval_ms);
        char refresh[64];
        st = eso_read(tx, kind, ns, name, refresh, sizeof refresh, rv, &ready, NULL);
        if (st == 200 && ready && (strcmp(refresh, before) != 0 || strcmp(rv, annotated_rv) != 0))
            return TX_OK;
    }
    rs_fail(&tx->err, RS_FAILED,
            "force-sync of %s %s/%s did not complete within %d attempts "
            "at %d ms",
            kind, ns, name, tx->cfg->sync_attempts, tx->cfg->sync_interval_ms);
    return TX_FAIL;
}

/* Does the OpenBao seed hold the desired credential? *status receives the
 * read's HTTP status (0: transport error). */
static rs_verdict seed_matches(rs_txn *tx, int *status)
{
    rs_resp r;
    int st = tp_openbao_read_gate(tx, &r);
    *status = st;
    rs_verdict verdict = RS_UNKNOWN;
    if (st == 200 && r.body) {
        const cJSON *data = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(r.body, "data"), "data");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(data, tx->cfg->openbao_property);
        verdict = cJSON_IsString(v) &&
                          cred_matches_text(&tx->cred, v->valuestring, strlen(v->valuestring))
                      ? RS_EQUAL
                      : RS_DIFFERS;
    }
    rs_resp_free(&r);
    return verdict;
}

static void drift(rs_txn *tx, const char *what, const char *object)
{
    txn_drift(tx, "%s (%s)", what, object);
}

/* Step 1: variables-base. Sets *wrote when it wrote. */
static tx_status fanout_variables(rs_txn *tx, bool lazy, bool *wrote)
{
    const rs_config *c = tx->cfg;
    *wrote = false;
    if (lazy) {
        char *text = NULL;
        size_t len = 0;
        rs_answer ans;
        int st = kobj_secret_read(tx, c->variables_ns, c->variables_name, c->variables_key, &text,
                                  &len, NULL, &ans);
        bool ok = st == 200 && text && cred_matches_text(&tx->cred, text, len);
        cred_bytes_wipe_free(text, len);
        if (st == 404) { /* H122: gone since discovery; never re-created here */
            rs_fail(&tx->err, RS_FAILED,
                    "fan-out not initialized (Secret %s/%s is absent); root auth unchanged",
                    c->variables_ns, c->variables_name);
            return TX_FAIL;
        }
        if (st != 200) {
            rs_fail(&tx->err, RS_FAILED, "reading Secret %s/%s failed (%s)", c->variables_ns,
                    c->variables_name, ans.text);
            return TX_FAIL;
        }
        if (ok) return TX_OK;
        char obj[300];
        snprintf(obj, sizeof obj, "Secret %s/%s", c->variables_ns, c->variables_name);
        drift(tx, "variables-base differs from the desired credential", obj);
    }
    tx_status s = kobj_secret_patch_desired(tx, GATE_NEED_FULL, c->variables_ns, c->variables_name,
                                            c->variables_key);
    if (s == TX_OK) *wrote = true;
    return s;
}

/* Step 2: the PushSecret and the OpenBao seed it writes. */
static tx_status fanout_seed(rs_txn *tx, bool lazy, bool wrote_variables, bool *pushed)
{
    const rs_config *c = tx->cfg;
    char obj[300];
    snprintf(obj, sizeof obj, "PushSecret %s/%s", c->pushsecret_ns, c->pushsecret_name);
    bool push = !lazy || wrote_variables;
    if (!push) {
        char refresh[64], rv[TX_RV_MAX];
        bool ready;
        rs_answer ans;
        int st = eso_read(tx, "PushSecret", c->pushsecret_ns, c->pushsecret_name, refresh,
                          sizeof refresh, rv, &ready, &ans);
        if (st != 200) {
            rs_fail(&tx->err, RS_FAILED, "reading %s failed (%s)", obj, ans.text);
            return TX_FAIL;
        }
        int seed_status = 0;
        rs_verdict seed = seed_matches(tx, &seed_status);
        char seed_obj[300];
        snprintf(seed_obj, sizeof seed_obj, "openbao %s", c->openbao_path);
        if (!ready) drift(tx, "PushSecret is not Ready", obj);
        if (seed == RS_DIFFERS) drift(tx, "OpenBao seed differs", seed_obj);
        if (seed == RS_UNKNOWN) {
            /* Name the status: a 403 from a mis-scoped token must be obvious. */
            char why[160];
            if (seed_status == 0)
                snprintf(why, sizeof why, "OpenBao seed cannot be read (no answer)");
            else
                snprintf(why, sizeof why, "OpenBao seed cannot be read (HTTP %d%s)", seed_status,
                         seed_status == 403   ? ": permission denied; check the read-only token's "
                                                "policy for this path"
                         : seed_status == 404 ? ": no secret at this path"
                                              : "");
            drift(tx, why, seed_obj);
        }
        push = !ready || seed != RS_EQUAL;
    }
    *pushed = false;
    if (!push) return TX_OK;
    tx_status s = fanout_force_sync(tx, "PushSecret", c->pushsecret_ns, c->pushsecret_name);
    if (s == TX_OK) *pushed = true;
    return s;
}

/* Step 3: every fan-out namespace's ExternalSecret and consumer Secret. */
static tx_status fanout_consumers(rs_txn *tx, bool lazy, bool pushed)
{
    const rs_config *c = tx->cfg;
    /* Lazy: every consumer Secret and ExternalSecret by name, namespaced, in
     * one batch: least privilege, and the read cost grows with
     * ceil(namespaces / parallelism) round trips. */
    size_t n = c->n_fanout;
    rs_resp *reads = rs_xcalloc(2 * n + 1, sizeof *reads);
    if (lazy) {
        rs_req *reqs = rs_xcalloc(2 * n + 1, sizeof *reqs);
        for (size_t i = 0; i < n; i++) {
            reqs[i] = (rs_req){.op = RS_OP_KUBE_GET,
                               .kind = "Secret",
                               .ns = c->fanout_namespaces[i],
                               .name = c->consumer_name};
            reqs[n + i] = (rs_req){.op = RS_OP_KUBE_GET,
                                   .kind = "ExternalSecret",
                                   .ns = c->fanout_namespaces[i],
                                   .name = c->externalsecret_name};
        }
        gate_read_batch(tx->gate, reqs, reads, 2 * n, c->transport_parallelism);
        free(reqs);
        for (size_t i = 0; i < 2 * n; i++) {
            int st = reads[i].status;
            if (st == 200 || st == 404) continue;
            /* An answer that is not there is drift; one that did not come is
             * a failed read, never a verdict. */
            rs_fail(&tx->err, RS_FAILED, "reading %s %s/%s failed (%s)",
                    i < n ? "Secret" : "ExternalSecret", c->fanout_namespaces[i % n],
                    i < n ? c->consumer_name : c->externalsecret_name,
                    rs_answer_of(&reads[i]).text);
            fanout_resps_free(reads, 2 * n);
            return TX_FAIL;
        }
    }
    tx_status s = TX_OK;
    for (size_t i = 0; i < c->n_fanout && s == TX_OK; i++) {
        const char *ns = c->fanout_namespaces[i];
        bool sync = !lazy || pushed;
        if (!sync) {
            const cJSON *sec = reads[i].status == 200 ? reads[i].body : NULL;
            const cJSON *es = reads[n + i].status == 200 ? reads[n + i].body : NULL;
            char obj[300];
            if (!es || !kobj_condition_true(es, "Ready")) {
                snprintf(obj, sizeof obj, "ExternalSecret %s/%s", ns, c->externalsecret_name);
                drift(tx, "ExternalSecret is not Ready", obj);
                sync = true;
            }
            if (!sec || !kobj_secret_matches(tx, sec, c->consumer_key)) {
                snprintf(obj, sizeof obj, "Secret %s/%s", ns, c->consumer_name);
                drift(tx, "consumer Secret differs from the desired credential", obj);
                sync = true;
            }
        }
        if (!sync) continue;
        s = fanout_force_sync(tx, "ExternalSecret", ns, c->externalsecret_name);
        if (s != TX_OK) break;
        char *text = NULL;
        size_t len = 0;
        rs_answer ans;
        int st =
            kobj_secret_read(tx, ns, c->consumer_name, c->consumer_key, &text, &len, NULL, &ans);
        bool ok = st == 200 && text && cred_matches_text(&tx->cred, text, len);
        cred_bytes_wipe_free(text, len);
        if (!ok) {
            rs_fail(&tx->err, RS_FAILED,
                    "consumer Secret %s/%s does not hold the desired credential after force-sync "
                    "(%s); root auth unchanged",
                    ns, c->consumer_name, ans.text);
            s = TX_FAIL;
        }
    }
    fanout_resps_free(reads, 2 * n);
    return s;
}

tx_status fanout_converge(rs_txn *tx)
{
    bool lazy = tx->opt->strategy->writes_need_evidence;
    out_group_begin(tx->out, "Fan-out: variables-base -> OpenBao -> %zu namespaces",
                    tx->cfg->n_fanout);
    bool wrote = false, pushed = false;
    tx_status s = fanout_variables(tx, lazy, &wrote);
    if (s == TX_OK) s = fanout_seed(tx, lazy, wrote, &pushed);
    if (s == TX_OK) s = fanout_consumers(tx, lazy, pushed);
    if (s == TX_OK)
        out_info(tx->out, "fan-out verified: every consumer holds the desired credential");
    out_group_end(tx->out);
    return s;
}
