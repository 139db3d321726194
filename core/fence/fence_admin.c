/*
 * fences_admin.c — `--fences` (a read-only report of every held fence) and
 * `--recover-fences` (DESIGN.md §3.4).
 *
 * A leaked fence is released only when its holder is *provably* terminal: the
 * run reference inside the holder identity is asked of the run-liveness
 * oracle behind the transport, and "unknown" is never "dead". Every release is
 * CAS-guarded on the exact holder/owner tuple the report showed, so a
 * recovery racing a new run cannot release the new run's fence.
 */
#include "core/node/node.h"
#include "core/txn_int.h"

#include <stdlib.h>
#include <string.h>

#define FA_MAX 1024

typedef enum fa_kind { FA_LEASE, FA_PARENT, FA_CHILD, FA_NODE } fa_kind;

typedef struct fa_fence {
    fa_kind kind;
    char object[300];
    char holder[TX_HOLDER_MAX];
    char run_ref[TX_HOLDER_MAX];
    int terminal; /* 1 terminal, 0 live, -1 unknown */
    char detail[200];
} fa_fence;

typedef struct fa_report {
    fa_fence f[FA_MAX];
    size_t n;
    bool read_failed;
} fa_report;

/* "<rev16>-<run ref>-<pid>-<random>" => run ref (which may contain '-'). */
static bool holder_run_ref(const char *holder, char *out, size_t len)
{
    const char *first = strchr(holder, '-');
    const char *last = strrchr(holder, '-');
    if (!first || !last || last == first) return false;
    const char *pid = last - 1;
    while (pid > first && *pid != '-')
        pid--;
    if (pid <= first) return false;
    size_t n = (size_t)(pid - first - 1);
    if (n == 0 || n >= len) return false;
    memcpy(out, first + 1, n);
    out[n] = '\0';
    return true;
}

static int fa_liveness(rs_txn *tx, const char *run_ref)
{
    rs_req req = {.op = RS_OP_RUN_LIVENESS, .target = run_ref};
    rs_resp r;
    int st = gate_read(&tx->gate, &req, &r);
    const cJSON *t = r.body ? cJSON_GetObjectItemCaseSensitive(r.body, "terminal") : NULL;
    int verdict = st == 200 && cJSON_IsBool(t) ? (cJSON_IsTrue(t) ? 1 : 0) : -1;
    rs_resp_free(&r);
    return verdict;
}

static void fa_add(rs_txn *tx, fa_report *rep, fa_kind kind, const char *object, const char *holder,
                   const char *detail)
{
    if (rep->n >= FA_MAX) return;
    fa_fence *f = &rep->f[rep->n++];
    f->kind = kind;
    snprintf(f->object, sizeof f->object, "%s", object);
    snprintf(f->holder, sizeof f->holder, "%s", holder ? holder : "");
    snprintf(f->detail, sizeof f->detail, "%s", detail ? detail : "");
    f->terminal = -1;
    f->run_ref[0] = '\0';
    if (holder && holder_run_ref(holder, f->run_ref, sizeof f->run_ref))
        f->terminal = fa_liveness(tx, f->run_ref);
}

static void fa_collect(rs_txn *tx, fa_report *rep)
{
    const rs_config *c = tx->cfg;
    char obj[300];
    rs_resp r;
    int st = kobj_get(tx, "Lease", c->lease_ns, c->lease_name, &r);
    if (st == 200) {
        const char *h = kobj_str(r.body, "spec.holderIdentity");
        snprintf(obj, sizeof obj, "Lease %s/%s", c->lease_ns, c->lease_name);
        if (h && h[0]) fa_add(tx, rep, FA_LEASE, obj, h, NULL);
    } else if (st != 404) {
        rep->read_failed = true;
    }
    rs_resp_free(&r);
    struct {
        fa_kind kind;
        const char *ns, *name, *key;
    } ks[] = {{FA_PARENT, c->parent_ns, c->parent_name,
               "platform.devantler.tech/ghcr-policy-parent-owner"},
              {FA_CHILD, c->child_ns, c->child_name,
               "platform.devantler.tech/ghcr-policy-handoff-owner"}};
    for (size_t i = 0; i < 2; i++) {
        st = kobj_get(tx, "Kustomization", ks[i].ns, ks[i].name, &r);
        if (st == 200) {
            const char *owner = kobj_annotation(r.body, ks[i].key);
            const char *rec = kobj_annotation(r.body, "kustomize.toolkit.fluxcd.io/reconcile");
            bool susp = kobj_bool(r.body, "spec", "suspend");
            bool recd = ks[i].kind == FA_CHILD && rec && strcmp(rec, "disabled") == 0;
            if (owner || susp || recd) {
                char detail[200];
                snprintf(detail, sizeof detail, "suspend %s%s", susp ? "true" : "false",
                         recd ? ", reconcile disabled" : "");
                snprintf(obj, sizeof obj, "Kustomization %s/%s", ks[i].ns, ks[i].name);
                fa_add(tx, rep, ks[i].kind, obj, owner, detail);
            }
        } else {
            rep->read_failed = true;
        }
        rs_resp_free(&r);
    }
    rs_req req = {.op = RS_OP_KUBE_LIST, .kind = "Node"};
    st = gate_read(&tx->gate, &req, &r);
    const cJSON *it;
    const cJSON *items = st == 200 ? cJSON_GetObjectItemCaseSensitive(r.body, "items") : NULL;
    if (st != 200) rep->read_failed = true;
    cJSON_ArrayForEach(it, items)
    {
        const char *owner = kobj_annotation(it, NODE_ANN_OWNER);
        const char *journal = kobj_annotation(it, NODE_ANN_JOURNAL);
        if (!owner && !journal) continue;
        const char *phase = kobj_annotation(it, NODE_ANN_PHASE);
        char detail[200];
        snprintf(detail, sizeof detail, "phase %s%s", phase ? phase : "missing",
                 journal ? ", recovery journal" : "");
        snprintf(obj, sizeof obj, "Node %s", kobj_str(it, "metadata.name"));
        fa_add(tx, rep, FA_NODE, obj, owner, detail);
    }
    rs_resp_free(&r);
}

static const char *liveness_word(int t)
{
    return t == 1 ? "terminal" : t == 0 ? "live" : "unknown";
}

static void fa_release_command(rs_txn *tx, const fa_fence *f, char *buf, size_t len)
{
    const rs_config *c = tx->cfg;
    switch (f->kind) {
    case FA_LEASE:
        snprintf(buf, len,
                 "kubectl -n %s patch lease %s --type=json -p '[{\"op\":\"test\",\"path\":"
                 "\"/spec/holderIdentity\",\"value\":\"%s\"},{\"op\":\"replace\",\"path\":"
                 "\"/spec/holderIdentity\",\"value\":\"\"}]'",
                 c->lease_ns, c->lease_name, f->holder);
        break;
    case FA_PARENT:
    case FA_CHILD: {
        bool child = f->kind == FA_CHILD;
        snprintf(
            buf, len,
            "kubectl -n %s patch kustomization %s --type=json -p '[{\"op\":\"test\","
            "\"path\":\"/metadata/annotations/platform.devantler.tech~1ghcr-policy-%s-owner\","
            "\"value\":\"%s\"},{\"op\":\"replace\",\"path\":\"/spec/suspend\",\"value\":false},"
            "{\"op\":\"remove\",\"path\":\"/metadata/annotations/platform.devantler.tech~1ghcr-"
            "policy-%s-owner\"}%s]'",
            child ? c->child_ns : c->parent_ns, child ? c->child_name : c->parent_name,
            child ? "handoff" : "parent", f->holder, child ? "handoff" : "parent",
            child ? ",{\"op\":\"remove\",\"path\":\"/metadata/annotations/"
                    "kustomize.toolkit.fluxcd.io~1reconcile\"}"
                  : "");
        break;
    }
    case FA_NODE:
        snprintf(
            buf, len,
            "inspect the node first; then: kubectl patch node %s --type=json -p "
            "'[{\"op\":\"test\",\"path\":\"/metadata/annotations/platform.devantler.tech~1"
            "ghcr-auth-drain-owner\",\"value\":\"%s\"},{\"op\":\"remove\",\"path\":\"/metadata/"
            "annotations/platform.devantler.tech~1ghcr-auth-drain-owner\"},{\"op\":\"remove\","
            "\"path\":\"/metadata/annotations/platform.devantler.tech~1ghcr-auth-drain-phase\"}]'",
            f->object + 5, f->holder);
        break;
    }
}

static void fa_print(rs_txn *tx, const fa_report *rep)
{
    if (rep->n == 0) {
        out_info(tx->out, "no fences held");
        return;
    }
    for (size_t i = 0; i < rep->n; i++) {
        const fa_fence *f = &rep->f[i];
        char cmd[1400];
        fa_release_command(tx, f, cmd, sizeof cmd);
        out_warning(tx->out, "fence held: %s by %s%s%s (run %s: %s)", f->object,
                    f->holder[0] ? f->holder : "(no owner)", f->detail[0] ? "; " : "", f->detail,
                    f->run_ref[0] ? f->run_ref : "?", liveness_word(f->terminal));
        out_info(tx->out, "  release (CAS-guarded): %s", cmd);
    }
}

void fences_report(rs_txn *tx, rs_result *res)
{
    fa_report *rep = rs_xcalloc(1, sizeof *rep);
    fa_collect(tx, rep);
    fa_print(tx, rep);
    if (rep->read_failed) {
        out_error(tx->out, "some fence objects could not be read; the report is incomplete");
        res->exit = RS_FAILED;
        res->outcome = "failed";
    } else {
        res->outcome = "reported";
    }
    free(rep);
}

/* CAS release of a terminal holder's Lease. */
static rs_code fa_release_lease(rs_txn *tx, const char *holder, rs_err *e)
{
    rs_resp r;
    int st = kobj_get(tx, "Lease", tx->cfg->lease_ns, tx->cfg->lease_name, &r);
    char rv[TX_RV_MAX];
    snprintf(rv, sizeof rv, "%s", st == 200 ? kobj_rv(r.body) : "");
    rs_resp_free(&r);
    cJSON *patch = cJSON_CreateArray();
    kobj_patch_op(patch, "test", "/metadata/resourceVersion", cJSON_CreateString(rv));
    kobj_patch_op(patch, "test", "/spec/holderIdentity", cJSON_CreateString(holder));
    kobj_patch_op(patch, "replace", "/spec/holderIdentity", cJSON_CreateString(""));
    int ws = kobj_fence_patch(tx, "Lease", tx->cfg->lease_ns, tx->cfg->lease_name, patch);
    if (ws == 200) return RS_OK;
    return rs_fail(e, RS_FAILED, "releasing the Lease held by %s failed (HTTP %d)", holder, ws);
}

void fences_recover(rs_txn *tx, rs_result *res)
{
    fa_report *rep = rs_xcalloc(1, sizeof *rep);
    fa_collect(tx, rep);
    const fa_fence *lease = NULL, *parent = NULL, *child = NULL;
    bool refuse = rep->read_failed;
    char why[1024] = "";
    for (size_t i = 0; i < rep->n; i++) {
        const fa_fence *f = &rep->f[i];
        if (f->kind == FA_NODE) {
            refuse = true;
            snprintf(why, sizeof why, "node fence on %s needs a human", f->object);
        } else if (f->terminal != 1) {
            refuse = true;
            snprintf(why, sizeof why, "%s is held by a %s run (%s)", f->object,
                     liveness_word(f->terminal), f->holder[0] ? f->holder : "no owner");
        }
        if (f->kind == FA_LEASE) lease = f;
        if (f->kind == FA_PARENT) parent = f;
        if (f->kind == FA_CHILD) child = f;
    }
    if (lease && (parent || child)) {
        refuse = true;
        snprintf(why, sizeof why,
                 "the Lease and policy fences are both held; release them by hand");
    }
    rs_err e;
    rs_err_clear(&e);
    if (refuse || rep->n == 0) {
        fa_print(tx, rep);
        if (rep->n == 0 && !rep->read_failed) {
            res->outcome = "recovered";
        } else {
            out_error(tx->out, "refusing to recover fences: %s",
                      why[0] ? why : "fence objects could not be read");
            res->exit = RS_FAILED;
            res->outcome = "failed";
        }
        free(rep);
        return;
    }
    rs_code c = RS_OK;
    if (lease) {
        c = fa_release_lease(tx, lease->holder, &e);
    } else {
        c = lease_acquire(tx, &e);
        if (c == RS_OK && child) c = fence_policy_recover(tx, true, child->holder, &e);
        if (c == RS_OK && parent) c = fence_policy_recover(tx, false, parent->holder, &e);
    }
    if (c != RS_OK) {
        out_error(tx->out, "%s", e.msg);
        res->exit = RS_FAILED;
        res->outcome = "failed";
    } else {
        for (size_t i = 0; i < rep->n; i++)
            out_info(tx->out, "released %s (held by terminal run %s)", rep->f[i].object,
                     rep->f[i].run_ref);
        res->outcome = "recovered";
    }
    free(rep);
}
