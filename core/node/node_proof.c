/*
 * proof.c — the runtime proof (--record-runtime-proof / --reuse-runtime-proof).
 *
 * Stage records which nodes (name + UID) were proven to pull with this
 * revision and operator image. A later Reassert may reuse it to excuse a node
 * whose annotations were erased by a cluster update (mode proof-only: no
 * reboot, no image pull, just the marker again) — but only when name, UID,
 * revision and image all match and the node's Talos auth equals desired. A
 * replacement node has a new UID and is never excused. The proof holds no
 * credential. A stale, malformed or mismatched proof is ignored with a
 * warning: it can only ever make the run do less, never skip verification.
 */
#include "core/node/node.h"
#include "core/txn_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROOF_MAX_BYTES (1 << 20)
#define PROOF_VERSION 1

static char *proof_read_file(const char *path, rs_txn *tx)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW);
    if (fd < 0) {
        out_warning(tx->out, "runtime proof %s cannot be read (%s); verifying fully", path,
                    strerror(errno));
        return NULL;
    }
    char *buf = rs_xmalloc(PROOF_MAX_BYTES + 1);
    size_t n = 0;
    ssize_t got;
    while (n < PROOF_MAX_BYTES && (got = read(fd, buf + n, PROOF_MAX_BYTES - n)) > 0)
        n += (size_t)got;
    close(fd);
    buf[n] = '\0';
    return buf;
}

void proof_load(rs_txn *tx)
{
    const char *path = tx->opt->reuse_proof_path;
    if (!path) return;
    char *text = proof_read_file(path, tx);
    if (!text) return;
    cJSON *doc = cJSON_Parse(text);
    free(text);
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
 * says exactly which machines were proven. Written only after convergence; refuses to overwrite or
 * follow a symlink. */
tx_status proof_record(rs_txn *tx)
{
    const char *path = tx->opt->record_proof_path;
    if (!path) return TX_OK;
    if (!tx->proof_nodes) {
        rs_fail(&tx->err, RS_FAILED, "recording the runtime proof: no clean inventory to bind");
        return TX_FAIL;
    }
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "version", PROOF_VERSION);
    cJSON_AddStringToObject(doc, "revision", tx->revision);
    cJSON_AddStringToObject(doc, "image", tx->cfg->operator_image);
    cJSON_AddItemToObject(doc, "nodes", cJSON_Duplicate(tx->proof_nodes, 1));
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
    tx_status s = TX_OK;
    if (fd < 0) {
        rs_fail(&tx->err, RS_FAILED,
                "recording the runtime proof: cannot create %s (%s; an "
                "existing file is never overwritten)",
                path, strerror(errno));
        s = TX_FAIL;
    } else {
        size_t len = strlen(text);
        bool ok = write(fd, text, len) == (ssize_t)len && write(fd, "\n", 1) == 1;
        ok = close(fd) == 0 && ok;
        if (!ok) {
            rs_fail(&tx->err, RS_FAILED, "recording the runtime proof: writing %s failed", path);
            s = TX_FAIL;
        } else {
            out_info(tx->out, "runtime proof recorded at %s", path);
        }
    }
    free(text);
    return s;
}
