/*
 * node_proof.c — the runtime proof (--record-runtime-proof / --reuse-runtime-proof).
 *
 * Stage records which nodes (name + UID) were proven to pull with this
 * revision and operator image. A later Reassert may reuse it to excuse a node
 * whose annotations were erased by a cluster update (mode proof-only: no
 * reboot, no image pull, just the marker again) — but only when name, UID,
 * revision and image all match and the node's Talos auth equals desired. A
 * replacement node has a new UID and is never excused. The proof holds no
 * credential. A stale, malformed or mismatched proof is ignored with a
 * warning: it can only ever make the run do less, never skip verification.
 *
 * The proof is data here: cli/ reads the file before the run and hands its
 * text in rs_options; the recorded proof leaves in rs_result and cli/ writes
 * it (atomically, never through a symlink). The core opens no file.
 */
#include "core/node/node.h"
#include "core/txn_int.h"

#include <stdlib.h>
#include <string.h>

#define PROOF_VERSION 1

void proof_load(rs_txn *tx)
{
    const char *path = tx->opt->reuse_proof_path;
    if (!path) return;
    const char *text = tx->opt->reuse_proof_text;
    if (!text) {
        out_warning(tx->out, "runtime proof %s cannot be read (%s); verifying fully", path,
                    tx->opt->reuse_proof_error ? tx->opt->reuse_proof_error : "no text given");
        return;
    }
    cJSON *doc = cJSON_Parse(text);
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(doc, "version");
    const char *rev = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(doc, "revision"));
    const char *img = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(doc, "image"));
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(doc, "nodes");
    if (!doc || !cJSON_IsNumber(ver) || ver->valueint != PROOF_VERSION || !rev || !img ||
        !cJSON_IsArray(nodes)) {
        out_warning(tx->out, "runtime proof %s is malformed; verifying fully", path);
        cJSON_Delete(doc);
        return;
    }
    if (strcmp(rev, tx->revision) != 0 || strcmp(img, tx->cfg->operator_image) != 0) {
        out_warning(tx->out, "runtime proof %s is for another revision or image; verifying fully",
                    path);
        cJSON_Delete(doc);
        return;
    }
    tx->proof = doc;
}

bool proof_excuses(rs_txn *tx, const node_info *n)
{
    const cJSON *nodes = tx->proof ? cJSON_GetObjectItemCaseSensitive(tx->proof, "nodes") : NULL;
    const cJSON *e;
    cJSON_ArrayForEach(e, nodes)
    {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "name"));
        const char *uid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "uid"));
        if (name && uid && strcmp(name, n->name) == 0) {
            if (strcmp(uid, n->uid) == 0) return true;
            out_warning(tx->out,
                        "runtime proof names Node %s with another UID (replaced?); "
                        "not excused",
                        n->name);
            return false;
        }
    }
    return false;
}

void proof_remember(rs_txn *tx, const node_inventory *inv)
{
    cJSON *nodes = cJSON_CreateArray();
    for (size_t i = 0; i < inv->n; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", inv->nodes[i].name);
        cJSON_AddStringToObject(e, "uid", inv->nodes[i].uid);
        cJSON_AddItemToArray(nodes, e);
    }
    cJSON_Delete(tx->proof_nodes);
    tx->proof_nodes = nodes;
}

/* Binds the last clean inventory (names and UIDs in pass order), so the proof
 * says exactly which machines were proven. Called before every cutover
 * attempt: a restarted round replaces the text, and the caller writes it once,
 * after the run succeeded — a proof must never outlive a failed cutover. */
tx_status proof_record(rs_txn *tx)
{
    if (!tx->opt->record_proof_path) return TX_OK;
    if (!tx->proof_nodes) {
        rs_fail(&tx->err, RS_FAILED, "recording the runtime proof: no clean inventory to bind");
        return TX_FAIL;
    }
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "version", PROOF_VERSION);
    cJSON_AddStringToObject(doc, "revision", tx->revision);
    cJSON_AddStringToObject(doc, "image", tx->cfg->operator_image);
    cJSON_AddItemToObject(doc, "nodes", cJSON_Duplicate(tx->proof_nodes, 1));
    free(tx->proof_text);
    tx->proof_text = cJSON_Print(doc);
    cJSON_Delete(doc);
    return TX_OK;
}

void proof_hand_over(rs_txn *tx, rs_result *res)
{
    if (res->exit == RS_OK && tx->proof_text) {
        res->proof_recorded = tx->proof_text;
        tx->proof_text = NULL;
    }
    free(tx->proof_text);
    tx->proof_text = NULL;
}
