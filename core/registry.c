/*
 * registry.c — the registry proof (DESIGN.md §3.1): before any cluster
 * access, the desired credential must be able to pull every required target
 * (token exchange, then the manifest read; HTTP 200 both). A credential the
 * registry refuses must never reach the cluster: it would break every pull.
 * The targets are independent reads, so they go as batches (transport v2):
 * the proof costs three round trips, not two per target.
 */
#include "core/txn_int.h"

#include <stdlib.h>
#include <string.h>

/* What each target's calls answered. */
typedef struct reg_target {
    const char *target; /* "repo:ref" on the registry host */
    char repo[512];
    rs_resp tr, mr;
    cJSON *creds, *mbody;
    bool asked_token, asked_manifest;
} reg_target;

static const char *reg_token(const reg_target *t)
{
    const cJSON *tok = t->tr.body ? cJSON_GetObjectItemCaseSensitive(t->tr.body, "token") : NULL;
    return t->tr.status == 200 && tok && cJSON_IsString(tok) ? tok->valuestring : NULL;
}

/* Token requests for targets [from, to) as one batch. */
static void reg_tokens(rs_txn *tx, reg_target *ts, size_t from, size_t to)
{
    rs_req *reqs = rs_xcalloc(to - from + 1, sizeof *reqs);
    rs_resp *resps = rs_xcalloc(to - from + 1, sizeof *resps);
    for (size_t i = from; i < to; i++) {
        reg_target *t = &ts[i];
        t->creds = cJSON_CreateObject();
        cJSON_AddStringToObject(t->creds, "username", tx->cred.username);
        cJSON_AddStringToObject(t->creds, "password", tx->cred.password);
        reqs[i - from] = (rs_req){.op = RS_OP_REGISTRY_TOKEN,
                                  .host = tx->cfg->registry_host,
                                  .target = t->repo,
                                  .body = t->creds};
    }
    gate_read_batch(tx->gate, reqs, resps, to - from, tx->cfg->transport_parallelism);
    for (size_t i = from; i < to; i++) {
        ts[i].tr = resps[i - from];
        ts[i].asked_token = true;
        cJSON_Delete(ts[i].creds); /* the password leaves memory with the request */
        ts[i].creds = NULL;
    }
    free(reqs);
    free(resps);
}

/* Manifest reads for every target that got a token, as one batch. */
static void reg_manifests(rs_txn *tx, reg_target *ts, size_t n)
{
    rs_req *reqs = rs_xcalloc(n + 1, sizeof *reqs);
    rs_resp *resps = rs_xcalloc(n + 1, sizeof *resps);
    size_t *idx = rs_xcalloc(n + 1, sizeof *idx);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *tok = reg_token(&ts[i]);
        if (!tok) continue;
        ts[i].mbody = cJSON_CreateObject();
        cJSON_AddStringToObject(ts[i].mbody, "token", tok);
        idx[k] = i;
        reqs[k++] = (rs_req){.op = RS_OP_REGISTRY_MANIFEST,
                             .host = tx->cfg->registry_host,
                             .target = ts[i].target,
                             .body = ts[i].mbody};
    }
    gate_read_batch(tx->gate, reqs, resps, k, tx->cfg->transport_parallelism);
    for (size_t j = 0; j < k; j++) {
        ts[idx[j]].mr = resps[j];
        ts[idx[j]].asked_manifest = true;
    }
    free(reqs);
    free(resps);
    free(idx);
}

/* The first failing target in target order, named as the sequential proof
 * named it. */
static tx_status reg_verdict(rs_txn *tx, reg_target *ts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        reg_target *t = &ts[i];
        if (!t->asked_token) break;
        char why[RS_ANSWER_MAX];
        if (!reg_token(t)) {
            kobj_describe(&t->tr, why, sizeof why);
            /* Only a 401 or 403 is a refusal of the credential; a registry
             * that could not be reached or trusted, or answered otherwise,
             * is said as what it was. */
            int st = t->tr.status;
            if (st == 401 || st == 403)
                rs_fail(&tx->err, RS_FAILED,
                        "registry proof: %s refused a pull token for %s: %s; nothing in the "
                        "cluster was changed",
                        tx->cfg->registry_host, t->repo, why);
            else if (st == 0)
                rs_fail(&tx->err, RS_FAILED,
                        "registry proof: no pull token for %s from %s: %s; nothing in the "
                        "cluster was changed",
                        t->repo, tx->cfg->registry_host, why);
            else
                rs_fail(&tx->err, RS_FAILED,
                        "registry proof: %s answered the pull token request for %s with %s; "
                        "nothing in the cluster was changed",
                        tx->cfg->registry_host, t->repo, why);
            return TX_FAIL;
        }
        if (t->mr.status != 200) {
            kobj_describe(&t->mr, why, sizeof why); /* the answer, or why there was none */
            rs_fail(&tx->err, RS_FAILED,
                    "registry proof: reading the manifest of %s/%s failed: %s; nothing in the "
                    "cluster was changed",
                    tx->cfg->registry_host, t->target, why);
            return TX_FAIL;
        }
    }
    return TX_OK;
}

/* The operator image (what every node pulls) as a target on the registry
 * host: "ghcr.io/devantler-tech/ksail:v1" -> "devantler-tech/ksail:v1". NULL
 * when it names another registry, which this credential cannot prove. */
static const char *reg_operator_target(const rs_config *cfg)
{
    size_t hl = strlen(cfg->registry_host);
    const char *img = cfg->operator_image;
    if (strncmp(img, cfg->registry_host, hl) != 0 || img[hl] != '/') return NULL;
    return img + hl + 1;
}

/* The targets to prove: the required pull targets, then the operator image
 * when the list does not already name it (H138: the image the nodes pull is
 * proved, not assumed). Returns the count, or 0 with tx->err set. */
static size_t reg_targets(rs_txn *tx, reg_target *ts)
{
    const rs_config *cfg = tx->cfg;
    size_t n = 0;
    for (size_t i = 0; i < cfg->n_pull_targets; i++)
        ts[n++].target = cfg->pull_targets[i];
    const char *op = reg_operator_target(cfg);
    if (!op) {
        rs_fail(&tx->err, RS_DATAERR,
                "operator-image %s is not on the registry %s the credential is proved "
                "against; nothing in the cluster was changed",
                cfg->operator_image, cfg->registry_host);
        return 0;
    }
    bool listed = false;
    for (size_t i = 0; i < n; i++)
        if (strcmp(ts[i].target, op) == 0) listed = true;
    if (!listed) ts[n++].target = op;
    for (size_t i = 0; i < n; i++) {
        if (!rs_config_target_split(ts[i].target, ts[i].repo, sizeof ts[i].repo)) {
            rs_fail(&tx->err, RS_DATAERR, "%s %s is not repo:ref",
                    i < cfg->n_pull_targets ? "required pull target" : "operator-image",
                    ts[i].target);
            return 0;
        }
    }
    return n;
}

/* Three round trips whatever the number of targets (up to the transport's
 * parallelism): the first token alone, so a refused credential costs one
 * call; the other tokens together; then every manifest together. */
static tx_status registry_prove_all(rs_txn *tx, size_t *proved)
{
    reg_target *ts = rs_xcalloc(tx->cfg->n_pull_targets + 2, sizeof *ts);
    size_t n = reg_targets(tx, ts);
    tx_status st = n > 0 ? TX_OK : TX_FAIL;
    if (st == TX_OK) {
        reg_tokens(tx, ts, 0, 1);
        if (reg_token(&ts[0])) reg_tokens(tx, ts, 1, n);
        reg_manifests(tx, ts, n);
        st = reg_verdict(tx, ts, n);
    }
    for (size_t i = 0; i < n; i++) {
        rs_resp_free(&ts[i].tr);
        rs_resp_free(&ts[i].mr);
        cJSON_Delete(ts[i].mbody);
    }
    free(ts);
    *proved = n;
    return st;
}

tx_status registry_prove(rs_txn *tx)
{
    out_group_begin(tx->out, "Registry proof: %zu required pull targets and the operator image",
                    tx->cfg->n_pull_targets);
    size_t proved = 0;
    tx_status st = registry_prove_all(tx, &proved);
    if (st == TX_OK)
        out_info(tx->out, "registry proof: the desired credential pulls all %zu targets", proved);
    out_group_end(tx->out);
    return st;
}
