/*
 * world_cassette.c — a world from a cassette (DESIGN.md §8: `replay
 * --reseed`, and a scenario's `cluster: {cassette: FILE}`).
 *
 * The world starts as the prod preset sized and credentialed as the
 * scenario loader read the cassette (sim/scenario/scenario_cassette.c); then
 * the FIRST observation of every object replaces the preset's: Kubernetes
 * objects from get and list answers (an answer 404 removes it), the Nodes
 * of the first unselected Node list (nodes the preset has and the cluster
 * did not are removed, others are added with Talos machines), OpenBao
 * values, each node's Talos registry auth, each run's liveness (the
 * oracle --fences and --recover-fences decide on). All before the controllers'
 * bookkeeping starts, so they take the observed objects as their start.
 *
 * The one idea: never a silent guess. What the cassette cannot show — an
 * object written before it was ever read, a cluster without a recorded
 * Node list, pods (the sim runs its own), a configuration the sim's
 * controllers do not follow — is one warning sentence each, which `replay
 * --reseed` prints and `--to-scenario` writes into the scenario's header.
 */
#include "sim/world/world_internal.h"

#include "core/cred/cred.h"
#include "recorder/rec_config.h"
#include "sim/scenario/scenario_cassette.h"
#include "sim/store/store.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WC_WARN_MAX 64 /* a cassette may show many gaps; the first 64 say enough */

typedef struct wc_ctx {
    sc_cassette c;
    const sc_scenario *sc;
    cJSON *seen;     /* "Kind/ns/name", "openbao:<path>", "talos:<node>" -> true */
    cJSON *liveness; /* run reference -> its first answer ("live", "terminal", "silent") */
    char **warn;
    size_t n_warn;
    size_t pods; /* pods the recording read (not reseeded) */
} wc_ctx;

static void wc_warn(wc_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void wc_warn(wc_ctx *x, const char *fmt, ...)
{
    if (x->n_warn >= WC_WARN_MAX) return;
    char buf[RS_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (!x->warn) x->warn = rs_xcalloc(WC_WARN_MAX, sizeof *x->warn);
    x->warn[x->n_warn++] = rs_xstrdup(buf);
}

/* Whether key was seen before; marks it seen. */
static bool wc_seen(wc_ctx *x, const char *key)
{
    if (cJSON_GetObjectItemCaseSensitive(x->seen, key)) return true;
    cJSON_AddTrueToObject(x->seen, key);
    return false;
}

/* ---- Kubernetes objects ---- */

/* obj (consumed) becomes the stored object kind/ns/name: replacing the
 * preset's at its current resourceVersion, or created. */
static void wc_put(sim_world *w, const char *kind, cJSON *obj)
{
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "namespace"));
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "name"));
    if (!name) {
        cJSON_Delete(obj);
        return;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "uid");
    cJSON *cur = simw_get(w, kind, ns, name);
    cJSON *out = NULL;
    if (cur) {
        const char *path[] = {"metadata", "resourceVersion"};
        const char *rv = simw_json_str(cur, path, 2);
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
        cJSON_AddStringToObject(meta, "resourceVersion", rv ? rv : "");
        store_replace(w->st, kind, ns, name, obj, &out);
    } else {
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
        store_create(w->st, kind, ns, obj, &out);
    }
    cJSON_Delete(out);
    cJSON_Delete(cur);
    cJSON_Delete(obj);
}

static void wc_drop(sim_world *w, const char *kind, const char *ns, const char *name)
{
    cJSON *out = NULL;
    store_delete(w->st, kind, ns, name, &out);
    cJSON_Delete(out);
}

/* The first observation of ref: the object (consumed; NULL for a 404). */
static void wc_observe(wc_ctx *x, sim_world *w, const char *ref, cJSON *obj)
{
    char kind[SIMW_NAME_MAX], ns[SIMW_NAME_MAX], name[SIMW_NAME_MAX];
    if (wc_seen(x, ref) || !simw_ref_parse(ref, kind, ns, name)) {
        cJSON_Delete(obj);
        return;
    }
    if (strcmp(kind, "Pod") == 0) { /* the sim's own pods stand in for them */
        x->pods++;
        cJSON_Delete(obj);
        return;
    }
    if (obj)
        wc_put(w, kind, obj);
    else
        wc_drop(w, kind, ns, name);
}

static char *wc_ref_of(const char *kind, const cJSON *obj)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "namespace"));
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(meta, "name"));
    if (!name) return NULL;
    return ns && ns[0] ? rs_xasprintf("%s/%s/%s", kind, ns, name)
                       : rs_xasprintf("%s/%s", kind, name);
}

static void wc_list(wc_ctx *x, sim_world *w, const rec_row *r)
{
    cJSON *req = sc_cassette_request(&x->c, r);
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "kind"));
    cJSON *list = kind ? sc_cassette_response(&x->c, r) : NULL;
    cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
    while (kind && cJSON_GetArraySize(items) > 0) {
        cJSON *item = cJSON_DetachItemFromArray(items, 0);
        char *ref = wc_ref_of(kind, item);
        if (ref)
            wc_observe(x, w, ref, item);
        else
            cJSON_Delete(item);
        free(ref);
    }
    cJSON_Delete(list);
    cred_json_wipe_delete(req);
}

/* ---- Nodes and their Talos machines ---- */

static void wc_node_remove(sim_world *w, const char *node)
{
    wc_drop(w, "Node", NULL, node);
    cJSON *pods = NULL;
    char *sel = rs_xasprintf("spec.nodeName=%s", node);
    store_list(w->st, "Pod", NULL, NULL, sel, &pods);
    free(sel);
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(pods, "items"))
    {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(it, "metadata");
        wc_drop(w, "Pod", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "namespace")),
                cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "name")));
    }
    cJSON_Delete(pods);
    sqlite3_stmt *st = simw_stmt(w, "DELETE FROM talos WHERE node = ?1");
    sqlite3_bind_text(st, 1, node, -1, SQLITE_STATIC);
    simw_step_done(w, st);
}

/* The Node's verified-revision annotations, which Talos holds too. */
static cJSON *wc_node_marks(sim_world *w, const cJSON *node)
{
    cJSON *ann = cJSON_CreateObject();
    const char *keys[] = {w->cfg.ann.revision, w->cfg.ann.image};
    for (size_t i = 0; i < RS_ARRAY_LEN(keys); i++) {
        const char *v = simw_annotation(node, keys[i]);
        if (v) cJSON_AddStringToObject(ann, keys[i], v);
    }
    return ann;
}

static void wc_nodes(wc_ctx *x, sim_world *w)
{
    const rec_row *r = sc_cassette_node_list(&x->c);
    if (!r) {
        wc_warn(x,
                "no Node list was recorded: the world has the preset's %d control planes and "
                "%d workers",
                x->sc->cluster.control_planes, x->sc->cluster.workers);
        return;
    }
    cJSON *list = sc_cassette_response(&x->c, r);
    cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
    cJSON *auth = simw_cred_auth(w, x->sc->cluster.credential);
    const cJSON *it;
    cJSON_ArrayForEach(it, items)
    {
        const char *path[] = {"metadata", "name"};
        const char *name = simw_json_str(it, path, 2);
        char *ref = name ? rs_xasprintf("Node/%s", name) : NULL;
        if (!ref || wc_seen(x, ref)) {
            free(ref);
            continue;
        }
        free(ref);
        cJSON *marks = wc_node_marks(w, it);
        if (!simw_talos_exists(w, name)) {
            bool cp =
                cJSON_HasObjectItem(cJSON_GetObjectItemCaseSensitive(
                                        cJSON_GetObjectItemCaseSensitive(it, "metadata"), "labels"),
                                    "node-role.kubernetes.io/control-plane");
            simw_talos_insert(w, name, cp ? "control-plane" : "worker", auth, marks, 1);
        } else {
            simw_talos_set_json(w, name, "node_annotations", marks);
        }
        cJSON_Delete(marks);
        wc_put(w, "Node", cJSON_Duplicate(it, 1));
        simw_node_pods_ensure(w, name);
    }
    cJSON_Delete(auth);
    /* The preset's nodes the cluster did not have. */
    sqlite3_stmt *st = simw_stmt(w, "SELECT node FROM talos ORDER BY node");
    cJSON *gone = cJSON_CreateArray();
    while (simw_step_row(w, st)) {
        const char *node = (const char *)sqlite3_column_text(st, 0);
        char *ref = rs_xasprintf("Node/%s", node ? node : "");
        if (node && !cJSON_GetObjectItemCaseSensitive(x->seen, ref))
            cJSON_AddItemToArray(gone, cJSON_CreateString(node));
        free(ref);
    }
    sqlite3_reset(st);
    cJSON_ArrayForEach(it, gone)
    {
        wc_node_remove(w, it->valuestring);
    }
    cJSON_Delete(gone);
    cJSON_Delete(list);
}

static void wc_talos_auth(wc_ctx *x, sim_world *w, const rec_row *r)
{
    char *key = rs_xasprintf("talos:%s", r->target ? r->target : "");
    bool seen = wc_seen(x, key);
    free(key);
    if (seen || r->status != 200 || !r->target) return;
    if (!simw_talos_exists(w, r->target)) {
        wc_warn(x, "seq %lld: Talos auth of node %s was read, but the node is in no Node list",
                (long long)r->seq, r->target);
        return;
    }
    cJSON *body = sc_cassette_response(&x->c, r);
    const cJSON *auth = cJSON_GetObjectItemCaseSensitive(body, "auth");
    if (auth) simw_talos_set_json(w, r->target, "registry_auth", auth);
    cred_json_wipe_delete(body);
}

/* ---- OpenBao ---- */

static void wc_openbao(wc_ctx *x, sim_world *w, const rec_row *r)
{
    if (r->target && (r->status == 401 || r->status == 403)) {
        /* A token's policy, not a value: the world has no refusal to hold,
         * and the lazy core's verdict on the seed hangs on it. */
        char *key = rs_xasprintf("openbao-refused:%s", r->target);
        if (!wc_seen(x, key))
            wc_warn(x,
                    "seq %lld: OpenBao answered %d to the read of %s: the reseeded world cannot "
                    "refuse it, it answers with the value it holds",
                    (long long)r->seq, r->status, r->target);
        free(key);
        return;
    }
    char *key = rs_xasprintf("openbao:%s", r->target ? r->target : "");
    bool seen = wc_seen(x, key);
    free(key);
    if (seen || !r->target || (r->status != 200 && r->status != 404)) return;
    sqlite3_stmt *st = simw_stmt(w, "DELETE FROM openbao WHERE path = ?1");
    sqlite3_bind_text(st, 1, r->target, -1, SQLITE_STATIC);
    simw_step_done(w, st);
    if (r->status != 200) return;
    cJSON *body = sc_cassette_response(&x->c, r);
    const cJSON *data =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(body, "data"), "data");
    if (cJSON_IsObject(data)) simw_bao_write(w, r->target, data);
    cred_json_wipe_delete(body);
}

/* ---- run liveness ---- */

/* The oracle's answer as the world keeps it (sim_transport_ops.c answers
 * from meta terminal.<ref> and silent.<ref>). */
static const char *wc_liveness_of(const cJSON *body)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(body, "terminal");
    if (!t) return "silent";
    return cJSON_IsTrue(t) ? "terminal" : "live";
}

/* The first liveness answer for each run is the world's: --fences and
 * --recover-fences decide on it (release only a provably terminal
 * holder), so a reseed without it turns a recovery into a refusal. */
static void wc_liveness(wc_ctx *x, sim_world *w, const rec_row *r)
{
    if (!r->target || !r->target[0]) return;
    const char *run = r->target;
    const char *first = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(x->liveness, run));
    if (r->status != 200) {
        if (!first)
            wc_warn(x,
                    "seq %lld: the liveness of run %s could not be read (status %d): the "
                    "reseeded world answers that it is live",
                    (long long)r->seq, run, r->status);
        return;
    }
    cJSON *body = sc_cassette_response(&x->c, r);
    const char *now = wc_liveness_of(body);
    cJSON_Delete(body);
    if (first) {
        if (strcmp(first, now) != 0)
            wc_warn(x,
                    "seq %lld: run %s answered %s where it first answered %s: the reseeded world "
                    "keeps the first answer",
                    (long long)r->seq, run, now, first);
        return;
    }
    cJSON_AddStringToObject(x->liveness, run, now);
    if (strcmp(now, "live") == 0) return;
    char *key = rs_xasprintf("%s.%s", now, run);
    simw_meta_set(w, key, "1");
    free(key);
}

/* ---- the walk ---- */

static bool wc_is(const rec_row *r, const char *op)
{
    return strcmp(r->op, op) == 0;
}

/* A write to something never read before: the world holds the preset's
 * version of it, which the recording cannot confirm. */
static void wc_write(wc_ctx *x, const rec_row *r, const char *prefix)
{
    char *key = rs_xasprintf("%s%s", prefix, r->target ? r->target : "");
    if (!wc_seen(x, key))
        wc_warn(x,
                "seq %lld: %s %s was written before it was ever read: the world holds the sim's "
                "own version",
                (long long)r->seq, r->op, r->target ? r->target : "");
    free(key);
}

/* An answer a fault or another actor may have caused: no answer at all, a
 * server error, a refusal, a conflict or a throttle. The registry's
 * refusals are kept (the grants of scenario_cassette.c), OpenBao's are
 * named one by one (wc_openbao); the liveness oracle's errors too. */
static bool wc_is_fault(const rec_row *r)
{
    if (rec_op_is_clock(r->op) || strcmp(r->op, "run.liveness") == 0) return false;
    bool refusal = (r->status == 401 || r->status == 403) && strncmp(r->op, "registry.", 9) != 0 &&
                   strncmp(r->op, "openbao.", 8) != 0;
    return r->status == 0 || r->status >= 500 || r->status == 409 || r->status == 429 || refusal;
}

static void wc_walk(wc_ctx *x, sim_world *w)
{
    bool registry = false;
    size_t faults = 0;
    long long first_fault = 0;
    for (size_t i = 0; i < x->c.tape->n_rows; i++) {
        const rec_row *r = &x->c.tape->rows[i];
        if (wc_is_fault(r) && faults++ == 0) first_fault = (long long)r->seq;
        if (wc_is(r, "kube.get") && r->target && (r->status == 200 || r->status == 404))
            wc_observe(x, w, r->target, r->status == 200 ? sc_cassette_response(&x->c, r) : NULL);
        else if (wc_is(r, "kube.list") && r->status == 200)
            wc_list(x, w, r);
        else if (wc_is(r, "kube.create") || wc_is(r, "kube.patch") || wc_is(r, "kube.delete"))
            wc_write(x, r, "");
        else if (wc_is(r, "openbao.read"))
            wc_openbao(x, w, r);
        else if (wc_is(r, "openbao.write"))
            wc_write(x, r, "openbao:");
        else if (wc_is(r, "talos.read-auth"))
            wc_talos_auth(x, w, r);
        else if (wc_is(r, "talos.patch"))
            wc_write(x, r, "talos:");
        else if (wc_is(r, "run.liveness"))
            wc_liveness(x, w, r);
        registry = registry || wc_is(r, "registry.token");
    }
    if (x->pods)
        wc_warn(x,
                "%zu pods the recording read are not reseeded: every node runs the sim's own "
                "pods (workloads, static pods, the controller's rollout)",
                x->pods);
    if (faults)
        wc_warn(x,
                "%zu answers in the recording (the first at seq %lld) were transport errors, "
                "server errors, refusals, conflicts or throttles: the reseeded world injects no "
                "faults and runs no other actor, so they need not recur",
                faults, first_fault);
    if (!registry)
        wc_warn(x, "no registry answer was recorded: the registry grants every credential every "
                   "required target");
}

/* Appends name to a bounded list of names for one warning sentence. */
static void wc_name_add(char *buf, size_t cap, size_t *shown, const char *name)
{
    if (*shown >= 8) return;
    size_t len = strlen(buf);
    snprintf(buf + len, cap - len, "%s%s", *shown ? ", " : "", name);
    (*shown)++;
}

static void wc_names_warn(wc_ctx *x, size_t n, size_t shown, const char *names, const char *what)
{
    if (!n) return;
    wc_warn(x,
            "%zu %s the recording never observed stand as the sim's preset has them (on the "
            "scenario's credential), a guess the cassette cannot confirm: %s%s",
            n, what, names, n > shown ? ", ..." : "");
}

/* What the recording never read is not silently taken as it was:
 * every object, OpenBao value and node's Talos auth the world holds
 * without an observation is named. Pods, Nodes (wc_nodes says what it
 * could not see), Namespaces and CRDs are the sim's scaffolding. */
/* One warning for the rows of sql (one text column) whose key — prefix and
 * the column — the walk never marked seen. */
static void wc_unobserved_of(wc_ctx *x, sim_world *w, const char *sql, const char *prefix,
                             const char *what)
{
    char names[768] = "";
    size_t n = 0, shown = 0;
    sqlite3_stmt *st = simw_stmt(w, sql);
    while (simw_step_row(w, st)) {
        char *name = simw_col_text(st, 0);
        char *key = rs_xasprintf("%s%s", prefix, name ? name : "");
        if (!cJSON_GetObjectItemCaseSensitive(x->seen, key)) {
            n++;
            wc_name_add(names, sizeof names, &shown, name ? name : "");
        }
        free(key);
        free(name);
    }
    sqlite3_reset(st);
    wc_names_warn(x, n, shown, names, what);
}

static void wc_unobserved(wc_ctx *x, sim_world *w)
{
    wc_unobserved_of(x, w,
                     "SELECT CASE WHEN ns = '' THEN kind || '/' || name "
                     "ELSE kind || '/' || ns || '/' || name END FROM objects WHERE kind NOT IN "
                     "('Pod', 'Node', 'Namespace', 'CustomResourceDefinition') "
                     "ORDER BY kind, ns, name",
                     "", "objects");
    wc_unobserved_of(x, w, "SELECT DISTINCT path FROM openbao ORDER BY path",
                     "openbao:", "OpenBao values");
    wc_unobserved_of(x, w, "SELECT node FROM talos ORDER BY node",
                     "talos:", "nodes' Talos registry auth");
}

/* Names and settings the recording's core was configured with that the
 * sim's controllers do not follow (they use the production defaults). */
static void wc_config(wc_ctx *x, sim_world *w)
{
    cJSON *rec = rec_config_json(&x->c.cfg);
    cJSON *own = rec_config_json(&w->cfg);
    const cJSON *it;
    cJSON_ArrayForEach(it, rec)
    {
        if (strcmp(it->string, "fanout_namespaces") == 0) continue;
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(own, it->string);
        if (!o || !cJSON_Compare(it, o, true))
            wc_warn(x,
                    "configuration %s differs from the sim's default: the core runs with the "
                    "recorded one, the world's controllers with the default",
                    it->string);
    }
    cJSON_Delete(rec);
    cJSON_Delete(own);
}

static rs_code wc_overlay(sim_world *w, void *ctx, rs_err *e)
{
    (void)e;
    wc_ctx *x = ctx;
    wc_config(x, w);
    wc_nodes(x, w);
    wc_walk(x, w);
    wc_unobserved(x, w);
    return RS_OK;
}

rs_code simw_reseed(const char *db_path, const sc_scenario *sc, const sim_world_desc *d,
                    char ***warnings, size_t *n_warnings, sim_world **keep, rs_err *e)
{
    wc_ctx x = {.sc = sc};
    if (sc_cassette_open(sc->cluster.cassette, &x.c, e) != RS_OK) {
        sc_cassette_close(&x.c);
        return e->code;
    }
    x.seen = cJSON_CreateObject();
    x.liveness = cJSON_CreateObject();
    /* One epoch: the world starts at the recording's first clock read, so
     * a Lease's renewTime is judged against the clock it was written by
     * (the scenario's clock.start wins when given). rec_meta_check bounds
     * vt_start; the virtual clock keeps it too when it fits, so periodic
     * timers keep the recording's phase. */
    const char *vt = rec_tape_meta(x.c.tape, "vt_start");
    long long ms = vt ? strtoll(vt, NULL, 10) : 0;
    sim_world_desc dd = *d;
    dd.clock_ms = ms > 0 && ms <= SIMW_CLOCK_MAX_MS ? ms : 0;
    if (!dd.wall_start_set && ms >= 0 && ms <= SIMW_WALL_MAX_MS) {
        dd.wall_start_set = true;
        dd.wall_start_ms = ms;
    }
    rs_code rc = simw_create(db_path, &dd, wc_overlay, &x, keep, e);
    cJSON_Delete(x.seen);
    cJSON_Delete(x.liveness);
    sc_cassette_close(&x.c);
    if (warnings && rc == RS_OK) {
        *warnings = x.warn;
        *n_warnings = x.n_warn;
    } else {
        sim_strings_free(x.warn, x.n_warn);
    }
    return rc;
}
