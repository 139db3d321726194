/*
 * world_events.c — the DESIGN.md §5 world events: what other actors (people,
 * restores, hardware, other pipelines) do to the world around a run.
 *
 * The one idea: events are not the core's calls. They are never counted, but
 * they go through the same store and wake the same controllers, so the world
 * the core sees after an event is one a real cluster could be in.
 */
#include "sim/world/world_internal.h"

#include "sim/store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef rs_code (*ev_fn)(sim_world *w, const sc_event *ev, rs_err *e);

static rs_code ev_fail(const sc_event *ev, rs_err *e, const char *fmt, const char *detail)
{
    char what[RS_ERR_MSG_MAX];
    snprintf(what, sizeof what, fmt, detail ? detail : "");
    if (ev->pos.line > 0)
        return rs_fail(e, RS_DATAERR, "event %s (line %d): %s", ev->kind, ev->pos.line, what);
    return rs_fail(e, RS_DATAERR, "event %s: %s", ev->kind, what);
}

static const char *arg_str(const sc_event *ev, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(ev->args, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static rs_code store_answer(const sc_event *ev, rs_err *e, const char *ref, int status,
                            const cJSON *out)
{
    if (status >= 200 && status < 300) return RS_OK;
    const cJSON *reason = cJSON_GetObjectItemCaseSensitive(out, "reason");
    char detail[512];
    snprintf(detail, sizeof detail, "%s: the API server answered %d (%s)", ref, status,
             cJSON_IsString(reason) ? reason->valuestring : "error");
    return ev_fail(ev, e, "%s", detail);
}

/* ---- Kubernetes ---- */

static rs_code ev_kube_patch(sim_world *w, const sc_event *ev, rs_err *e)
{
    const char *ref = arg_str(ev, "ref");
    char kind[SIMW_NAME_MAX], ns[SIMW_NAME_MAX], name[SIMW_NAME_MAX];
    if (!simw_ref_parse(ref, kind, ns, name)) return ev_fail(ev, e, "bad ref %s", ref ? ref : "");
    const cJSON *jp = cJSON_GetObjectItemCaseSensitive(ev->args, "json-patch");
    const cJSON *mp = cJSON_GetObjectItemCaseSensitive(ev->args, "merge-patch");
    if (!jp == !mp)
        return ev_fail(ev, e, "needs exactly one of json-patch and merge-patch%s", NULL);
    cJSON *out = NULL;
    int status =
        store_patch(w->st, kind, ns, name, jp ? RS_PATCH_JSON : RS_PATCH_MERGE, jp ? jp : mp, &out);
    rs_code rc = store_answer(ev, e, ref, status, out);
    cJSON_Delete(out);
    if (rc == RS_OK) ctl_after_write(w, kind, ns, name);
    return rc;
}

static rs_code ev_kube_delete(sim_world *w, const sc_event *ev, rs_err *e)
{
    const char *ref = arg_str(ev, "ref");
    char kind[SIMW_NAME_MAX], ns[SIMW_NAME_MAX], name[SIMW_NAME_MAX];
    if (!simw_ref_parse(ref, kind, ns, name)) return ev_fail(ev, e, "bad ref %s", ref ? ref : "");
    cJSON *out = NULL;
    int status = store_delete(w->st, kind, ns, name, &out);
    rs_code rc = store_answer(ev, e, ref, status, out);
    cJSON_Delete(out);
    return rc;
}

/* eso.same-second-refresh {ref}: from now on ESO refreshes that object
 * within the same second as its last refresh, so status.refreshTime does not
 * change (H66); only the resourceVersion and Ready say a sync happened. */
static rs_code ev_same_second(sim_world *w, const sc_event *ev, rs_err *e)
{
    const char *ref = arg_str(ev, "ref");
    char kind[SIMW_NAME_MAX], ns[SIMW_NAME_MAX], name[SIMW_NAME_MAX];
    if (!simw_ref_parse(ref, kind, ns, name)) return ev_fail(ev, e, "bad ref %s", ref ? ref : "");
    char *key = rs_xasprintf("eso.same_second.%s/%s/%s", kind, ns, name);
    simw_meta_set(w, key, "1");
    free(key);
    return RS_OK;
}

/* Create, or replace whatever is there (a stale resourceVersion in the
 * applied object is dropped: apply means "make it so"). */
static rs_code ev_kube_apply(sim_world *w, const sc_event *ev, rs_err *e)
{
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(ev->args, "object");
    if (!cJSON_IsObject(obj)) obj = ev->args;
    const char *kpath[] = {"kind"};
    const char *npath[] = {"metadata", "name"};
    const char *nspath[] = {"metadata", "namespace"};
    const char *kind = simw_json_str(obj, kpath, 1);
    const char *name = simw_json_str(obj, npath, 2);
    const char *ns = simw_json_str(obj, nspath, 2);
    if (!kind || !name) return ev_fail(ev, e, "the object needs kind and metadata.name%s", NULL);
    cJSON *copy = cJSON_Duplicate(obj, 1);
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(copy, "metadata"),
                                            "resourceVersion");
    if (!cJSON_GetObjectItemCaseSensitive(copy, "apiVersion") && store_api_version(kind))
        cJSON_AddStringToObject(copy, "apiVersion", store_api_version(kind));
    cJSON *existing = simw_get(w, kind, ns, name);
    cJSON *out = NULL;
    int status = existing ? store_replace(w->st, kind, ns, name, copy, &out)
                          : store_create(w->st, kind, ns, copy, &out);
    char *ref = ns ? rs_xasprintf("%s/%s/%s", kind, ns, name) : rs_xasprintf("%s/%s", kind, name);
    rs_code rc = store_answer(ev, e, ref, status, out);
    free(ref);
    cJSON_Delete(out);
    cJSON_Delete(existing);
    cJSON_Delete(copy);
    if (rc == RS_OK) ctl_after_write(w, kind, ns, name);
    return rc;
}

/* ---- OpenBao and the registry ---- */

static char *ev_credential_text(sim_world *w, const sc_event *ev, const char *key, rs_err *e)
{
    const char *cred = arg_str(ev, key);
    char *text = NULL, *cipher = NULL;
    if (!cred || sim_world_credential(w, cred, &text, &cipher, NULL) != RS_OK) {
        ev_fail(ev, e, "unknown credential %s", cred ? cred : "(none)");
        return NULL;
    }
    free(cipher);
    return text;
}

static rs_code ev_bao_put(sim_world *w, const sc_event *ev, const char *path, rs_err *e)
{
    char *text = ev_credential_text(w, ev, "credential", e);
    if (!text) return RS_DATAERR;
    cJSON *data = cJSON_CreateObject();
    cJSON_AddStringToObject(data, w->cfg.openbao_property, text);
    simw_bao_write(w, path, data);
    cJSON_Delete(data);
    free(text);
    return RS_OK;
}

/* A restored snapshot: the seed silently holds an old credential while the
 * PushSecret's status still reads Ready — the hazard status can't show. */
static rs_code ev_raft_restore(sim_world *w, const sc_event *ev, rs_err *e)
{
    return ev_bao_put(w, ev, w->cfg.openbao_path, e);
}

static rs_code ev_bao_write(sim_world *w, const sc_event *ev, rs_err *e)
{
    const char *path = arg_str(ev, "path");
    if (!path) return ev_fail(ev, e, "needs a path%s", NULL);
    return ev_bao_put(w, ev, path, e);
}

static rs_code ev_registry_revoke(sim_world *w, const sc_event *ev, rs_err *e)
{
    const char *cred = arg_str(ev, "credential");
    sqlite3_stmt *st = simw_stmt(w, "UPDATE catalogue SET revoked = 1 WHERE name = ?1");
    sqlite3_bind_text(st, 1, cred ? cred : "", -1, SQLITE_STATIC);
    simw_step_done(w, st);
    if (sqlite3_changes(w->db) == 0) return ev_fail(ev, e, "unknown credential %s", cred);
    return RS_OK;
}

/* runs.terminal: the liveness oracle answers "terminal" for these runs;
 * runs.silent: it answers, but with no status at all (H20). */
static rs_code ev_runs_terminal(sim_world *w, const sc_event *ev, rs_err *e)
{
    const cJSON *names =
        cJSON_IsArray(ev->args) ? ev->args : cJSON_GetObjectItemCaseSensitive(ev->args, "runs");
    if (!cJSON_IsArray(names)) return ev_fail(ev, e, "needs a list of run names%s", NULL);
    const cJSON *it;
    cJSON_ArrayForEach(it, names)
    {
        if (!cJSON_IsString(it)) return ev_fail(ev, e, "run names must be strings%s", NULL);
        /* A scenario run is "sim.<name>"; a CI run reference (gh<id>.<attempt>)
         * is taken as it is. */
        bool ci = strncmp(it->valuestring, "gh", 2) == 0 && strchr(it->valuestring, '.');
        char *key =
            rs_xasprintf("%s.%s%s", strcmp(ev->kind, "runs.silent") == 0 ? "silent" : "terminal",
                         ci ? "" : "sim.", it->valuestring);
        simw_meta_set(w, key, "1");
        free(key);
    }
    return RS_OK;
}

/* ---- nodes ---- */

static const char *ev_node(sim_world *w, const sc_event *ev, const char *node, rs_err *e)
{
    if (!node || !simw_talos_exists(w, node)) {
        ev_fail(ev, e, "unknown node %s", node ? node : "(none)");
        return NULL;
    }
    return node;
}

static rs_code ev_etcd(sim_world *w, const sc_event *ev, rs_err *e)
{
    const char *node = ev_node(w, ev, arg_str(ev, "node"), e);
    if (!node) return RS_DATAERR;
    simw_talos_set_int(w, node, "etcd_healthy", strcmp(ev->kind, "etcd.healthy") == 0);
    return RS_OK;
}

/* etcd.garbled {node}: the node's etcd status answers with output that
 * parses as no status (H118). etcd.learner {node}: the node's etcd member
 * is a learner (healthy, but not a voter: H85). Either stays for the rest
 * of the scenario, under the world meta key "<event>.<node>". */
static rs_code ev_etcd_mark(sim_world *w, const sc_event *ev, rs_err *e)
{
    const char *node = ev_node(w, ev, arg_str(ev, "node"), e);
    if (!node) return RS_DATAERR;
    char *key = rs_xasprintf("%s.%s", ev->kind, node);
    simw_meta_set(w, key, "1");
    free(key);
    return RS_OK;
}

static rs_code ev_pdb_block(sim_world *w, const sc_event *ev, rs_err *e)
{
    const char *node = ev_node(w, ev, arg_str(ev, "node"), e);
    if (!node) return RS_DATAERR;
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(ev->args, "for_ms");
    if (!cJSON_IsNumber(ms)) return ev_fail(ev, e, "needs a duration (for)%s", NULL);
    simw_talos_set_int(w, node, "pdb_block_until", simw_now(w) + (int64_t)ms->valuedouble);
    return RS_OK;
}

/* How the node's next reboot goes (DESIGN §3.3 r2: a reboot is proven by a
 * new boot ID): fast (done before anyone sees NotReady), stuck (NotReady for
 * good) or ignored (accepted, never happens). One-shot. */
static rs_code ev_next_reboot(sim_world *w, const sc_event *ev, rs_err *e)
{
    const char *node = ev_node(w, ev, arg_str(ev, "node"), e);
    if (!node) return RS_DATAERR;
    const char *mode = arg_str(ev, "mode");
    int m = !mode                          ? -1
            : strcmp(mode, "fast") == 0    ? SIMW_REBOOT_FAST
            : strcmp(mode, "stuck") == 0   ? SIMW_REBOOT_STUCK
            : strcmp(mode, "ignored") == 0 ? SIMW_REBOOT_IGNORED
                                           : -1;
    if (m < 0) return ev_fail(ev, e, "needs mode fast, stuck or ignored%s", NULL);
    simw_talos_set_int(w, node, "reboot_mode", m);
    return RS_OK;
}

static cJSON *verified_annotations_removal(const sim_world *w)
{
    cJSON *ann = cJSON_CreateObject();
    cJSON_AddNullToObject(ann, w->cfg.ann.revision);
    cJSON_AddNullToObject(ann, w->cfg.ann.image);
    return ann;
}

/* A machine-config apply that reached only some nodes (no reboot). */
static rs_code ev_partial_apply(sim_world *w, const sc_event *ev, rs_err *e)
{
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(ev->args, "nodes");
    const char *cred = arg_str(ev, "registry-auth");
    bool drop = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ev->args, "drop-node-annotations"));
    if (!cJSON_IsArray(nodes)) return ev_fail(ev, e, "needs a list of nodes%s", NULL);
    cJSON *auth = cred ? simw_cred_auth(w, cred) : NULL;
    if (cred && !auth) return ev_fail(ev, e, "unknown credential %s", cred);
    const cJSON *it;
    cJSON_ArrayForEach(it, nodes)
    {
        const char *node = ev_node(w, ev, cJSON_IsString(it) ? it->valuestring : NULL, e);
        if (!node) {
            cJSON_Delete(auth);
            return RS_DATAERR;
        }
        if (auth) simw_talos_set_json(w, node, "registry_auth", auth);
        if (drop) {
            cJSON *removal = verified_annotations_removal(w);
            simw_node_annotations_apply(w, node, removal);
            cJSON_Delete(removal);
        }
    }
    cJSON_Delete(auth);
    return RS_OK;
}

/* Same name, new UID: a reinstalled machine with a fresh boot and no proof. */
static rs_code ev_node_replace(sim_world *w, const sc_event *ev, rs_err *e)
{
    const char *node = ev_node(w, ev, arg_str(ev, "node"), e);
    if (!node) return RS_DATAERR;
    cJSON *old = simw_get(w, "Node", NULL, node);
    cJSON *addrs = old ? cJSON_DetachItemFromObjectCaseSensitive(
                             cJSON_GetObjectItemCaseSensitive(old, "status"), "addresses")
                       : NULL;
    bool cp = simw_label(old, "node-role.kubernetes.io/control-plane") != NULL;
    cJSON *out = NULL;
    if (old) store_delete(w->st, "Node", NULL, node, &out);
    cJSON_Delete(out);
    out = NULL;
    cJSON *fresh = simw_node_object(w, node, cp, 0, NULL);
    if (addrs)
        cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(fresh, "status"),
                                               "addresses", addrs);
    int status = store_create(w->st, "Node", NULL, fresh, &out);
    rs_code rc = store_answer(ev, e, node, status, out);
    cJSON_Delete(out);
    cJSON_Delete(fresh);
    cJSON_Delete(old);
    cJSON *empty = cJSON_CreateObject();
    simw_talos_set_json(w, node, "node_annotations", empty);
    cJSON_Delete(empty);
    cJSON *auth = simw_talos_json(w, node, "registry_auth");
    simw_talos_set_json(w, node, "loaded_auth", auth);
    cJSON_Delete(auth);
    simw_talos_set_int(w, node, "rebooting", 0);
    return rc;
}

static char *ev_cluster_credential(sim_world *w)
{
    char *text = simw_meta_get(w, "cluster");
    cJSON *cluster = text ? cJSON_Parse(text) : NULL;
    free(text);
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(cluster, "credential");
    char *name = cJSON_IsString(c) ? rs_xstrdup(c->valuestring) : NULL;
    cJSON_Delete(cluster);
    return name;
}

/* A new machine joins with the cluster's original machine config and no
 * verified annotations; its InternalIP follows the preset's numbering. */
static rs_code ev_node_add(sim_world *w, const sc_event *ev, rs_err *e)
{
    const char *role = arg_str(ev, "role");
    const char *name = arg_str(ev, "name");
    bool cp = role && strcmp(role, "control-plane") == 0;
    if (!name || !role || (!cp && strcmp(role, "worker") != 0))
        return ev_fail(ev, e, "needs a name and role worker or control-plane%s", NULL);
    if (simw_talos_exists(w, name)) return ev_fail(ev, e, "node %s already exists", name);
    char *key = rs_xasprintf("next_%s", role);
    int64_t index = simw_meta_int(w, key, 1);
    simw_meta_set_int(w, key, index + 1);
    free(key);
    cJSON *node = simw_node_object(w, name, cp, (int)index, NULL);
    cJSON *out = NULL;
    int status = store_create(w->st, "Node", NULL, node, &out);
    rs_code rc = store_answer(ev, e, name, status, out);
    cJSON_Delete(out);
    cJSON_Delete(node);
    if (rc != RS_OK) return rc;
    char *cred = ev_cluster_credential(w);
    cJSON *auth = cred ? simw_cred_auth(w, cred) : NULL;
    free(cred);
    cJSON *ann = cJSON_CreateObject();
    simw_talos_insert(w, name, role, auth, ann, 1);
    cJSON_Delete(ann);
    cJSON_Delete(auth);
    simw_node_pods_ensure(w, name);
    return RS_OK;
}

/* ---- time ---- */

/* Forward: time passes (timers fire, the wall clock moves with it).
 * Backward: a clock step (an NTP correction, a VM restored): every clock
 * that reads the wall time — the API server's stamps, the core's clock —
 * jumps back, while no time passes, so timers, costs and virtual_seconds
 * do not move. */
static rs_code ev_advance(sim_world *w, const sc_event *ev, rs_err *e)
{
    const cJSON *ms =
        cJSON_IsNumber(ev->args) ? ev->args : cJSON_GetObjectItemCaseSensitive(ev->args, "ms");
    if (!cJSON_IsNumber(ms)) return ev_fail(ev, e, "needs a duration%s", NULL);
    int64_t step = (int64_t)ms->valuedouble;
    if (step >= 0) {
        ctl_advance_to(w, simw_now(w) + step);
        return RS_OK;
    }
    if (!simw_wall_step(w, step))
        return ev_fail(ev, e, "would step the wall clock before 1970-01-01T00:00:00Z%s", NULL);
    return RS_OK;
}

static const struct {
    const char *kind;
    ev_fn fn;
} ev_table[] = {
    {"advance", ev_advance},
    {"kube.patch", ev_kube_patch},
    {"kube.delete", ev_kube_delete},
    {"kube.apply", ev_kube_apply},
    {"openbao.raft-restore", ev_raft_restore},
    {"openbao.write", ev_bao_write},
    {"talos.partial-apply", ev_partial_apply},
    {"node.replace", ev_node_replace},
    {"node.add", ev_node_add},
    {"etcd.unhealthy", ev_etcd},
    {"etcd.healthy", ev_etcd},
    {"etcd.garbled", ev_etcd_mark},
    {"etcd.learner", ev_etcd_mark},
    {"pdb.block", ev_pdb_block},
    {"talos.next-reboot", ev_next_reboot},
    {"registry.revoke", ev_registry_revoke},
    {"runs.terminal", ev_runs_terminal},
    {"runs.silent", ev_runs_terminal},
    {"eso.same-second-refresh", ev_same_second},
};

rs_code simw_apply_event(sim_world *w, const sc_event *ev, rs_err *e)
{
    for (size_t i = 0; i < RS_ARRAY_LEN(ev_table); i++)
        if (strcmp(ev_table[i].kind, ev->kind) == 0) return ev_table[i].fn(w, ev, e);
    return ev_fail(ev, e, "this world does not know the event%s", NULL);
}
