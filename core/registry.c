/*
 * registry.c — the registry proof (DESIGN.md §3.1): before any cluster
 * access, the desired credential must be able to pull every required target
 * (token exchange, then the manifest read; HTTP 200 both). A credential the
 * registry refuses must never reach the cluster: it would break every pull.
 */
#include "core/txn_int.h"

#include <stdlib.h>
#include <string.h>

/* Splits "repo:ref" at the last ':' after the last '/'. */
static bool target_split(const char *target, char *repo, size_t repolen)
{
    const char *slash = strrchr(target, '/');
    const char *colon = strrchr(slash ? slash : target, ':');
    if (!colon || colon == target || colon[1] == '\0') return false;
    size_t n = (size_t)(colon - target);
    if (n >= repolen) return false;
    memcpy(repo, target, n);
    repo[n] = '\0';
    return true;
}

static tx_status registry_prove_one(rs_txn *tx, const char *target)
{
    char repo[512];
    if (!target_split(target, repo, sizeof repo)) {
        rs_fail(&tx->err, RS_DATAERR, "required pull target %s is not repo:ref", target);
        return TX_FAIL;
    }
    cJSON *creds = cJSON_CreateObject();
    cJSON_AddStringToObject(creds, "username", tx->cred.username);
    cJSON_AddStringToObject(creds, "password", tx->cred.password);
    rs_req treq = {
        .op = RS_OP_REGISTRY_TOKEN, .host = tx->cfg->registry_host, .target = repo, .body = creds};
    rs_resp tr;
    int ts = gate_read(&tx->gate, &treq, &tr);
    cJSON_Delete(creds);
    const cJSON *tok = tr.body ? cJSON_GetObjectItemCaseSensitive(tr.body, "token") : NULL;
    if (ts != 200 || !cJSON_IsString(tok)) {
        char why[256];
        kobj_describe(&tr, why, sizeof why);
        rs_resp_free(&tr);
        rs_fail(&tx->err, RS_FAILED,
                "registry proof: %s refused a pull token for %s: %s; nothing in the cluster was "
                "changed",
                tx->cfg->registry_host, repo, why);
        return TX_FAIL;
    }
    cJSON *mbody = cJSON_CreateObject();
    cJSON_AddStringToObject(mbody, "token", tok->valuestring);
    rs_resp_free(&tr);
    rs_req mreq = {.op = RS_OP_REGISTRY_MANIFEST,
                   .host = tx->cfg->registry_host,
                   .target = target,
                   .body = mbody};
    rs_resp mr;
    int ms = gate_read(&tx->gate, &mreq, &mr);
    cJSON_Delete(mbody);
    char why[256];
    kobj_describe(&mr, why, sizeof why);
    rs_resp_free(&mr);
    if (ms != 200) {
        rs_fail(&tx->err, RS_FAILED,
                "registry proof: reading the manifest of %s/%s failed: %s; nothing in the "
                "cluster was changed",
                tx->cfg->registry_host, target, why);
        return TX_FAIL;
    }
    return TX_OK;
}

tx_status registry_prove(rs_txn *tx)
{
    out_group_begin(tx->out, "Registry proof: %zu required pull targets", tx->cfg->n_pull_targets);
    tx_status st = TX_OK;
    for (size_t i = 0; i < tx->cfg->n_pull_targets && st == TX_OK; i++)
        st = registry_prove_one(tx, tx->cfg->pull_targets[i]);
    if (st == TX_OK)
        out_info(tx->out, "registry proof: the desired credential pulls all %zu targets",
                 tx->cfg->n_pull_targets);
    out_group_end(tx->out);
    return st;
}
