/*
 * serve_kube_dry.c — `dryRun=All` writes (kubectl's `--dry-run=server`):
 * answered as the write would be, and nothing of it kept.
 *
 * The one idea: a dry run is not a call the world should see — no counter
 * moves, no controller reacts, no fault or `during:` entry fires, the clock
 * does not advance — yet its answer must be the store's own (the same
 * admission, 404, 409 and 422 Status bodies). So the store performs it
 * inside a savepoint that is rolled back at once. A dry-run eviction checks
 * only that the pod exists (no disruption budget is consulted).
 */
#include "sim/serve/serve_int.h"

#include "core/cred/cred.h"
#include "sim/store/store.h"

#include <sqlite3.h>

int serve_dry_run(serve_server *s, const rs_req *req, cJSON **out)
{
    *out = NULL;
    sqlite3 *db = sim_world_db(s->w);
    store *st = sim_world_store(s->w);
    if (sqlite3_exec(db, "SAVEPOINT serve_dry", NULL, NULL, NULL) != SQLITE_OK) {
        *out = store_status(500, "InternalError", "the world refused a savepoint: %s",
                            sqlite3_errmsg(db));
        return 500;
    }
    int status = 500;
    switch (req->op) {
    case RS_OP_KUBE_CREATE:
        status = store_create(st, req->kind, req->ns, req->body, out);
        break;
    case RS_OP_KUBE_PATCH:
        status = store_patch(st, req->kind, req->ns, req->name, req->patch_type, req->body, out);
        break;
    case RS_OP_KUBE_DELETE:
        status = store_delete(st, req->kind, req->ns, req->name, out);
        break;
    case RS_OP_KUBE_EVICT:
        status = store_get(st, "Pod", req->ns, req->name, out);
        if (status == 200) {
            cred_json_wipe_delete(*out);
            *out = store_status(201, "", "%s", "");
            status = 201;
        }
        break;
    default:
        *out = store_status(400, "BadRequest", "only writes take a dry run");
        status = 400;
        break;
    }
    sqlite3_exec(db, "ROLLBACK TO serve_dry", NULL, NULL, NULL);
    sqlite3_exec(db, "RELEASE serve_dry", NULL, NULL, NULL);
    store_forget(st); /* what the dry run wrote is gone from the rows */
    return status;
}
