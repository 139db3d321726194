/*
 * fence_admin.c — `--fences` (a read-only report of every held fence) and
 * `--recover-fences` (DESIGN.md §3.4, revision 2).
 *
 * A leaked fence is released only when its holder is *provably* terminal: the
 * run reference inside the holder identity is asked of the run-liveness
 * oracle behind the transport, and "unknown" is never "dead". Every release is
 * CAS-guarded on the exact tuple the report read (UID, resourceVersion,
 * owner), so a recovery racing a new run cannot release the new run's fence.
 *
 * The report prints node and policy fences first and the Lease last (H31: the
 * Lease guards the others, so it is released last); a node at phase
 * `mutating`, without a phase, or with a recovery journal gets evidence but
 * no release command (H37); every printed command is quoted for POSIX sh, so
 * a cluster value holding quotes or `$` can neither break nor inject (H36).
 *
 * Recovery handles the state a crash leaves (r2): the Lease, both policy
 * fences and `claimed` node fences, all owned by one provably terminal run.
 * Structural refusals (mixed holders, a mutating node, a holder without a run
 * reference) are decided before any liveness query (H16).
 */
#include "core/kube/kube_pointer.h"
#include "core/node/node.h"
#include "core/txn_int.h"

#include <stdlib.h>
#include <string.h>

#define FA_MAX 1024

typedef enum fa_kind { FA_LEASE, FA_PARENT, FA_CHILD, FA_NODE } fa_kind;

/* What the liveness oracle said of a holder's run. */
typedef enum fa_live { FA_UNASKED, FA_UNKNOWN, FA_LIVE, FA_TERMINAL } fa_live;

typedef struct fa_fence {
    fa_kind kind;
    char ns[254], name[254];
    char object[600];
    char *holder; /* as the cluster has it, never cut (a cut could split a
                   * credential so redaction misses it); "" when none */
    char run_ref[TX_HOLDER_MAX];
    char uid[128], rv[TX_RV_MAX];
    char phase[64];      /* nodes: the phase annotation ("" when missing) */
    bool journal;        /* nodes: a recovery journal is present */
    bool suspended;      /* Kustomizations */
    bool reconcile_off;  /* the child's reconcile: disabled */
    bool unschedulable;  /* nodes */
    int64_t renew_ms;    /* Lease: renewTime (-1 unknown) */
    int64_t duration_ms; /* Lease: leaseDurationSeconds */
    fa_live terminal;
    char detail[200];
} fa_fence;

typedef struct fa_report {
    fa_fence f[FA_MAX];
    size_t n;
    bool read_failed;
} fa_report;

static void fa_free(fa_report *rep)
{
    for (size_t i = 0; i < rep->n; i++)
        free(rep->f[i].holder);
    free(rep);
}

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
    /* A fragment of a hostile holder is never echoed as if it named a run. */
    bool ok = txn_run_ref_valid(out);
    if (!ok) out[0] = '\0';
    return ok;
}

static fa_live fa_liveness(rs_txn *tx, const char *run_ref)
{
    rs_req req = {.op = RS_OP_RUN_LIVENESS, .target = run_ref};
    rs_resp r;
    int st = gate_read(tx->gate, &req, &r);
    const cJSON *t = r.body ? cJSON_GetObjectItemCaseSensitive(r.body, "terminal") : NULL;
    fa_live v = FA_UNKNOWN;
    if (st == 200 && cJSON_IsBool(t)) v = cJSON_IsTrue(t) ? FA_TERMINAL : FA_LIVE;
    rs_resp_free(&r);
    return v;
}

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* RFC 3339 "YYYY-MM-DDTHH:MM:SS[.ffffff]Z" => ms since the epoch; -1 if not.
 * A digit exactly where the shape has a 9: no sign or space (unlike %d). */
static int64_t fa_parse_time(const char *s)
{
    if (!s) return -1;
    int f[6] = {0}, k = 0;
    const char *p = s;
    for (const char *m = "9999-99-99T99:99:99"; *m; m++, p++) {
        if (*m == '9' ? *p < '0' || *p > '9' : *p != *m) return -1;
        if (*m == '9') f[k] = f[k] * 10 + (*p - '0');
        k += *m != '9';
    }
    int y = f[0], mo = f[1], d = f[2], h = f[3], mi = f[4], sec = f[5];
    int64_t ms = 0;
    if (*p == '.') {
        int digits = 0;
        for (p++; *p >= '0' && *p <= '9'; p++, digits++)
            if (digits < 3) ms = ms * 10 + (*p - '0');
        for (; digits < 3; digits++)
            ms *= 10;
    }
    if (strcmp(p, "Z") != 0 || mo < 1 || mo > 12 || d < 1 || d > 31) return -1;
    return ((days_from_civil(y, mo, d) * 86400) + h * 3600 + mi * 60 + sec) * 1000 + ms;
}

static fa_fence *fa_add(fa_report *rep, fa_kind kind, const char *ns, const char *name,
                        const cJSON *obj, const char *holder)
{
    if (rep->n >= FA_MAX) {
        rep->read_failed = true; /* never a silently shorter report */
        return NULL;
    }
    fa_fence *f = &rep->f[rep->n++];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    snprintf(f->ns, sizeof f->ns, "%s", ns ? ns : "");
    snprintf(f->name, sizeof f->name, "%s", name);
    static const char *const kinds[] = {"Lease", "Kustomization", "Kustomization", "Node"};
    if (ns)
        snprintf(f->object, sizeof f->object, "%s %s/%s", kinds[kind], ns, name);
    else
        snprintf(f->object, sizeof f->object, "%s %s", kinds[kind], name);
    f->holder = rs_xstrdup(holder ? holder : "");
    snprintf(f->uid, sizeof f->uid, "%s",
             kobj_str(obj, "metadata.uid") ? kobj_str(obj, "metadata.uid") : "");
    snprintf(f->rv, sizeof f->rv, "%s", kobj_rv(obj));
    f->terminal = FA_UNASKED;
    f->renew_ms = -1;
    if (holder && holder[0]) holder_run_ref(holder, f->run_ref, sizeof f->run_ref);
    return f;
}

static void fa_collect_policy(rs_txn *tx, fa_report *rep, fa_kind kind)
{
    const rs_config *c = tx->cfg;
    bool child = kind == FA_CHILD;
    const char *ns = child ? c->child_ns : c->parent_ns;
    const char *name = child ? c->child_name : c->parent_name;
    rs_resp r;
    int st = kobj_get(tx, "Kustomization", ns, name, &r);
    if (st != 200 || !r.body) {
        rep->read_failed = true;
        rs_resp_free(&r);
        return;
    }
    const char *owner = kobj_annotation(r.body, child ? c->ann.child_owner : c->ann.parent_owner);
    const char *rec = kobj_annotation(r.body, c->ann.reconcile);
    bool susp = kobj_bool(r.body, "spec", "suspend");
    bool recd = child && rec && strcmp(rec, "disabled") == 0;
    if (owner || susp || recd) {
        fa_fence *f = fa_add(rep, kind, ns, name, r.body, owner);
        if (f) {
            f->suspended = susp;
            f->reconcile_off = recd;
            snprintf(f->detail, sizeof f->detail, "suspend %s%s", susp ? "true" : "false",
                     recd ? ", reconcile disabled" : "");
        }
    }
    rs_resp_free(&r);
}

static void fa_collect_nodes(rs_txn *tx, fa_report *rep)
{
    rs_req req = {.op = RS_OP_KUBE_LIST, .kind = "Node"};
    rs_resp r;
    int st = gate_read(tx->gate, &req, &r);
    const cJSON *items = st == 200 ? cJSON_GetObjectItemCaseSensitive(r.body, "items") : NULL;
    if (st != 200 || !cJSON_IsArray(items)) rep->read_failed = true;
    const cJSON *it;
    cJSON_ArrayForEach(it, items)
    {
        const char *owner = kobj_annotation(it, tx->cfg->ann.drain_owner);
        const char *journal = kobj_annotation(it, tx->cfg->ann.drain_journal);
        const char *phase = kobj_annotation(it, tx->cfg->ann.drain_phase);
        const char *name = kobj_str(it, "metadata.name");
        if ((!owner && !journal && !phase) || !name) continue; /* H34: any of the three */
        fa_fence *f = fa_add(rep, FA_NODE, NULL, name, it, owner);
        if (!f) break;
        snprintf(f->phase, sizeof f->phase, "%s", phase ? phase : "");
        f->journal = journal != NULL;
        f->unschedulable = kobj_bool(it, "spec", "unschedulable");
        snprintf(f->detail, sizeof f->detail, "phase %s%s%s", phase ? phase : "missing",
                 journal ? ", recovery journal" : "", f->unschedulable ? ", cordoned" : "");
    }
    rs_resp_free(&r);
}

/* Node and policy fences first, the Lease last (H31). */
static void fa_collect(rs_txn *tx, fa_report *rep)
{
    const rs_config *c = tx->cfg;
    fa_collect_nodes(tx, rep);
    fa_collect_policy(tx, rep, FA_CHILD);
    fa_collect_policy(tx, rep, FA_PARENT);
    rs_resp r;
    int st = kobj_get(tx, "Lease", c->lease_ns, c->lease_name, &r);
    const char *h = st == 200 ? kobj_lease_holder(r.body, NULL) : NULL;
    if (st == 200 && !h) {
        /* A Lease whose holder cannot be read is not a free Lease (H1). */
        rep->read_failed = true;
    } else if (st == 200 && r.body) {
        if (h && h[0]) {
            fa_fence *f = fa_add(rep, FA_LEASE, c->lease_ns, c->lease_name, r.body, h);
            if (f) {
                f->renew_ms = fa_parse_time(kobj_str(r.body, "spec.renewTime"));
                if (f->renew_ms < 0)
                    f->renew_ms = fa_parse_time(kobj_str(r.body, "spec.acquireTime"));
                const cJSON *spec = cJSON_GetObjectItemCaseSensitive(r.body, "spec");
                const cJSON *d = cJSON_GetObjectItemCaseSensitive(spec, "leaseDurationSeconds");
                f->duration_ms = cJSON_IsNumber(d) ? (int64_t)d->valuedouble * 1000 : 0;
            }
        }
    } else if (st != 404) {
        rep->read_failed = true;
    }
    rs_resp_free(&r);
}

static const char *liveness_word(fa_live t)
{
    switch (t) {
    case FA_TERMINAL:
        return "terminal";
    case FA_LIVE:
        return "live";
    case FA_UNASKED:
        return "not asked";
    default:
        return "unknown";
    }
}

/* A node fence a recovery may clear: owner, phase exactly `claimed`, no journal. */
static bool fa_node_reclaimable(const fa_fence *f)
{
    return f->kind == FA_NODE && f->holder[0] && !f->journal && strcmp(f->phase, "claimed") == 0;
}

/* s quoted for POSIX sh: bare when every byte is one sh never interprets,
 * else '...' with each ' written as '\''. Caller frees. */
static char *sh_quote(const char *s)
{
    bool bare = s[0] != '\0';
    for (const char *p = s; *p && bare; p++)
        bare = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
               strchr("._-/:=@%+,", *p) != NULL;
    if (bare) return rs_xstrdup(s);
    size_t n = 2;
    for (const char *p = s; *p; p++)
        n += *p == '\'' ? 4 : 1;
    char *q = rs_xmalloc(n + 1), *o = q;
    *o++ = '\'';
    for (const char *p = s; *p; p++) {
        if (*p == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = *p;
        }
    }
    *o++ = '\'';
    *o = '\0';
    return q;
}

static void op_str(cJSON *patch, const char *op, const char *path, const char *value)
{
    kobj_patch_op(patch, op, path, value ? cJSON_CreateString(value) : NULL);
}

static void op_ann(cJSON *patch, const char *op, const char *key, const char *value)
{
    char *ptr = kube_pointer_annotation(key);
    op_str(patch, op, ptr, value);
    free(ptr);
}

/* The release patch of one fence: the exact ops of the matching release in
 * DESIGN §3.4 (H29), preceded by tests of UID, resourceVersion and owner
 * (H35). NULL when no release may be printed. */
static cJSON *fa_release_patch(const rs_config_ann *ann, const fa_fence *f)
{
    if (f->kind == FA_NODE && !fa_node_reclaimable(f)) return NULL;
    if (f->kind != FA_NODE && f->kind != FA_LEASE && !f->holder[0]) return NULL;
    cJSON *patch = cJSON_CreateArray();
    op_str(patch, "test", "/metadata/uid", f->uid);
    op_str(patch, "test", "/metadata/resourceVersion", f->rv);
    switch (f->kind) {
    case FA_LEASE:
        op_str(patch, "test", "/spec/holderIdentity", f->holder);
        op_str(patch, "replace", "/spec/holderIdentity", "");
        break;
    case FA_PARENT:
    case FA_CHILD: {
        bool child = f->kind == FA_CHILD;
        const char *owner = child ? ann->child_owner : ann->parent_owner;
        op_ann(patch, "test", owner, f->holder);
        if (child) op_ann(patch, "test", ann->reconcile, "disabled");
        kobj_patch_op(patch, "test", "/spec/suspend", cJSON_CreateTrue());
        kobj_patch_op(patch, "replace", "/spec/suspend", cJSON_CreateFalse());
        op_ann(patch, "remove", owner, NULL);
        if (child) op_ann(patch, "remove", ann->reconcile, NULL);
        break;
    }
    case FA_NODE:
        op_ann(patch, "test", ann->drain_owner, f->holder);
        op_ann(patch, "test", ann->drain_phase, "claimed");
        op_ann(patch, "remove", ann->drain_owner, NULL);
        op_ann(patch, "remove", ann->drain_phase, NULL);
        break;
    }
    return patch;
}

/* The printed command, every argument quoted for sh (H36). Caller frees. */
static char *fa_release_command(const rs_config_ann *ann, const fa_fence *f)
{
    cJSON *patch = fa_release_patch(ann, f);
    if (!patch) return NULL;
    char *json = cJSON_PrintUnformatted(patch);
    cJSON_Delete(patch);
    static const char *const res[] = {"lease", "kustomization", "kustomization", "node"};
    char *qname = sh_quote(f->name), *qjson = sh_quote(json);
    char *cmd;
    if (f->kind == FA_NODE) {
        cmd = rs_xasprintf("kubectl patch node %s --type=json -p %s", qname, qjson);
    } else {
        char *qns = sh_quote(f->ns);
        cmd = rs_xasprintf("kubectl -n %s patch %s %s --type=json -p %s", qns, res[f->kind], qname,
                           qjson);
        free(qns);
    }
    free(qname);
    free(qjson);
    free(json);
    return cmd;
}

static void fa_print(rs_txn *tx, const fa_report *rep)
{
    if (rep->n == 0) {
        out_info(tx->out, "no fences held");
        return;
    }
    for (size_t i = 0; i < rep->n; i++) {
        const fa_fence *f = &rep->f[i];
        out_warning(tx->out, "fence held: %s by %s%s%s (run %s: %s)", f->object,
                    f->holder[0] ? f->holder : "(no owner)", f->detail[0] ? "; " : "", f->detail,
                    f->run_ref[0] ? f->run_ref : "?", liveness_word(f->terminal));
        char *cmd = fa_release_command(&tx->cfg->ann, f);
        if (cmd) {
            out_info(tx->out, "  release (CAS-guarded; release in the order printed): %s", cmd);
            /* H30: nothing durable says the node was schedulable at claim
             * time, so the release removes the owner and phase only. */
            if (f->kind == FA_NODE)
                out_info(tx->out, "  %s",
                         f->unschedulable
                             ? "the cordon is left in place: no durable record says the node "
                               "was schedulable before the claim (uncordon it by hand once it "
                               "is known healthy)"
                             : "the node is not cordoned; the release does not change that");
        } else if (f->kind == FA_NODE) {
            out_info(tx->out,
                     "  no release printed: %s%s%s; a Talos write may be in flight "
                     "(inspect the node before touching its fence)",
                     f->journal      ? "a recovery journal is present"
                     : !f->holder[0] ? "it has no owner annotation"
                     : !f->phase[0]  ? "it has no phase"
                                     : "its phase is `",
                     !f->journal && f->holder[0] && f->phase[0] ? f->phase : "",
                     !f->journal && f->holder[0] && f->phase[0] ? "`, not `claimed`" : "");
        } else {
            out_info(tx->out, "  no release printed: it has no owner annotation, so it is not "
                              "a fence of this tool (inspect it by hand)");
        }
        free(cmd);
    }
}

void fences_report(rs_txn *tx, rs_result *res)
{
    fa_report *rep = rs_xcalloc(1, sizeof *rep);
    fa_collect(tx, rep);
    if (rep->read_failed) {
        /* H33: one clear error, no claim about state the report never read. */
        out_error(tx->out, "some fence objects could not be read; no report is printed");
        res->exit = RS_FAILED;
        res->outcome = "failed";
        fa_free(rep);
        return;
    }
    for (size_t i = 0; i < rep->n; i++)
        if (rep->f[i].run_ref[0]) rep->f[i].terminal = fa_liveness(tx, rep->f[i].run_ref);
    fa_print(tx, rep);
    res->outcome = "reported";
    fa_free(rep);
}

/* Why recovery must refuse, decided from the fences alone — before any
 * liveness query (H16). RS_FAILED with the reason in why when it must. */
static rs_code fa_recoverable_shape(const fa_report *rep, const char **holder, rs_err *why)
{
    *holder = NULL;
    if (rep->read_failed) {
        return rs_fail(why, RS_FAILED, "fence objects could not be read");
    }
    for (size_t i = 0; i < rep->n; i++) {
        const fa_fence *f = &rep->f[i];
        if (f->kind == FA_NODE && !fa_node_reclaimable(f)) {
            return rs_fail(why, RS_FAILED,
                           "%s is fenced at %s: a Talos write may be in flight; it needs a human",
                           f->object, f->detail);
        }
        if (!f->holder[0]) {
            return rs_fail(why, RS_FAILED,
                           "%s is fenced (%s) with no owner: not a fence a recovery may release",
                           f->object, f->detail);
        }
        if (!f->run_ref[0]) {
            return rs_fail(why, RS_FAILED,
                           "%s is held by %s, which names no run: its liveness cannot be judged",
                           f->object, f->holder);
        }
        if (*holder && strcmp(*holder, f->holder) != 0) {
            return rs_fail(why, RS_FAILED,
                           "fences are held by more than one run (%s and %s); release them by hand",
                           *holder, f->holder);
        }
        *holder = f->holder;
    }
    return RS_OK;
}

static rs_code fa_reclaim_node(rs_txn *tx, const fa_fence *f, rs_err *e)
{
    cJSON *patch = fa_release_patch(&tx->cfg->ann, f);
    kube_cas_result res;
    int ws = kube_cas_ok(kobj_patch_once(tx, KUBE_CAS_RELEASE, GATE_NEED_NONE, "Node", NULL,
                                         f->name, patch, NULL, NULL, &res))
                 ? 200
                 : res.status;
    if (ws != 200)
        return rs_fail(e, RS_FAILED, "reclaiming the fence on %s failed (%s); it is retained",
                       f->object, res.answer.text);
    if (f->unschedulable)
        out_warning(tx->out,
                    "%s: fence reclaimed; the node is left cordoned on purpose (its "
                    "pre-claim schedulability is unknown)",
                    f->object);
    return RS_OK;
}

static rs_code fa_release_all(rs_txn *tx, const fa_report *rep, const fa_fence *lease, rs_err *e)
{
    const char *holder = rep->f[0].holder;
    rs_code c = lease ? lease_take_over(tx, lease->holder, lease->rv, e) : lease_acquire(tx, e);
    for (int pass = 0; pass < 3 && c == RS_OK; pass++) {
        for (size_t i = 0; i < rep->n && c == RS_OK; i++) {
            const fa_fence *f = &rep->f[i];
            /* Child, then parent, then nodes. */
            if (pass == 0 && f->kind == FA_CHILD) c = fence_policy_recover(tx, true, holder, e);
            if (pass == 1 && f->kind == FA_PARENT) c = fence_policy_recover(tx, false, holder, e);
            if (pass == 2 && f->kind == FA_NODE) c = fa_reclaim_node(tx, f, e);
        }
    }
    if (c != RS_OK) return c; /* the Lease stays ours: cleanup releases it, or names it */
    return lease_release(tx, e);
}

void fences_recover(rs_txn *tx, rs_result *res)
{
    fa_report *rep = rs_xcalloc(1, sizeof *rep);
    fa_collect(tx, rep);
    rs_err why;
    rs_err_clear(&why);
    const char *holder = NULL;
    bool ok = fa_recoverable_shape(rep, &holder, &why) == RS_OK;
    const fa_fence *lease = NULL;
    for (size_t i = 0; i < rep->n; i++)
        if (rep->f[i].kind == FA_LEASE) lease = &rep->f[i];
    if (ok && rep->n > 0) {
        fa_live t = fa_liveness(tx, rep->f[0].run_ref);
        for (size_t i = 0; i < rep->n; i++)
            rep->f[i].terminal = t;
        if (t != FA_TERMINAL) {
            ok = false;
            rs_fail(&why, RS_FAILED, "%s is held by a %s run (%s)", rep->f[0].object,
                    liveness_word(t), holder);
        } else if (lease && lease->renew_ms > gate_now_ms(tx->gate)) {
            /* A renewal in our future: clock skew, or a writer we cannot
             * date. Its age is unknown, so it may still be live (H21). */
            ok = false;
            rs_fail(&why, RS_FAILED,
                    "%s was renewed at a time after this machine's clock (skew?), so its age "
                    "is unknown although run %s reads terminal",
                    lease->object, lease->run_ref);
        } else if (lease && lease->renew_ms >= 0 &&
                   gate_now_ms(tx->gate) - lease->renew_ms < lease->duration_ms) {
            /* H21: a stale terminal answer must not hide a live writer. */
            ok = false;
            rs_fail(&why, RS_FAILED,
                    "%s was renewed %lld s ago, within its %lld s duration, although run %s "
                    "reads terminal; wait for it to expire",
                    lease->object, (long long)((gate_now_ms(tx->gate) - lease->renew_ms) / 1000),
                    (long long)(lease->duration_ms / 1000), lease->run_ref);
        } else if (lease && lease->renew_ms < 0) {
            ok = false;
            rs_fail(&why, RS_FAILED, "%s carries no readable renewTime; its age is unknown",
                    lease->object);
        }
    }
    if (!ok || rep->n == 0) {
        fa_print(tx, rep);
        if (rep->n == 0 && !rep->read_failed) {
            res->outcome = "recovered"; /* H23: nothing held, nothing asked, nothing written */
        } else {
            out_error(tx->out, "refusing to recover fences: %s", why.msg);
            res->exit = RS_FAILED;
            res->outcome = "failed";
        }
        fa_free(rep);
        return;
    }
    rs_err e;
    rs_err_clear(&e);
    rs_code c;
    if (lease && rep->n == 1) {
        /* Only the Lease: one CAS release on the holder and resourceVersion
         * read when its liveness was judged (H17). */
        cJSON *patch = fa_release_patch(&tx->cfg->ann, lease);
        kube_cas_result res;
        int ws = kube_cas_ok(kobj_patch_once(tx, KUBE_CAS_RELEASE, GATE_NEED_NONE, "Lease",
                                             lease->ns, lease->name, patch, NULL, NULL, &res))
                     ? 200
                     : res.status;
        c = ws == 200 ? RS_OK
                      : rs_fail(&e, RS_FAILED,
                                "releasing %s held by %s failed (%s): it changed since it "
                                "was read; refusing",
                                lease->object, lease->holder, res.answer.text);
    } else {
        c = fa_release_all(tx, rep, lease, &e);
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
    fa_free(rep);
}
