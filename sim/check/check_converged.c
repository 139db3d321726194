/*
 * check_converged.c — invariant 2 (DESIGN.md §6): a run that exits 0 on the
 * normal path leaves everything converged and every fence released.
 *
 * The one idea: "converged" is read from the world, object by object, never
 * taken from the run's output: every consumer Secret, variables-base, the
 * OpenBao seed and the root hold the desired credential (compared with the
 * core's own canonical comparison, never printed), every node carries the
 * verified revision and image and Talos holds the desired auth (but for a
 * node the run reported it decided on annotations alone), and neither
 * the Lease nor a policy fence nor a drain claim of this run is left behind.
 */
#include "sim/check/check_int.h"

#include "core/cred/cred.h"
#include "sim/store/store.h"

#include <stdlib.h>
#include <string.h>

/* Whether another actor's `during:` event changed ref (or, ref "openbao",
 * the OpenBao KV) after this run's last call on it — a read of the object
 * itself or a list of its kind. A run cannot see a change made after its
 * last look, so invariant 2 does not hold it to one. */
static bool foreign_after_last_look(sim_world *w, const char *run, const char *ref)
{
    const char *sql = "SELECT 1 FROM foreign_writes WHERE run = ?1 AND ref = ?2 AND after_call >="
                      " (SELECT coalesce(max(seq), 0) FROM call_log WHERE run = ?1 AND (target = ?2"
                      "  OR target = ?3 OR (?2 = 'openbao' AND op LIKE 'openbao.%')))";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(w->db, sql, -1, &st, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return false; /* no event ever fired in this world */
    }
    const char *slash = strrchr(ref, '/');
    char *list = rs_xstrdup(ref);
    if (slash) list[slash - ref] = '\0';
    sqlite3_bind_text(st, 1, run, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, ref, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, list, -1, SQLITE_STATIC);
    bool hit = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    free(list);
    return hit;
}

typedef struct inv_want {
    rs_cred cred;
    char revision[65];
} inv_want;

static char *secret_key_text(sim_world *w, const char *ns, const char *name, const char *key)
{
    cJSON *obj = simw_get(w, "Secret", ns, name);
    const cJSON *v =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "data"), key);
    char *text = NULL;
    if (cJSON_IsString(v)) {
        size_t len = 0;
        unsigned char *raw = base64_decode(v->valuestring, &len);
        if (raw) {
            text = rs_xmalloc(len + 1);
            memcpy(text, raw, len);
            text[len] = '\0';
            free(raw);
        }
    }
    cJSON_Delete(obj);
    return text;
}

static bool text_is_desired(const inv_want *want, const char *text)
{
    return text && cred_matches_text(&want->cred, text, strlen(text));
}

static void check_secret(sim_world *w, const inv_want *want, const char *ns, const char *name,
                         const char *key, inv_report *rep)
{
    char *text = secret_key_text(w, ns, name, key);
    char *ref = rs_xasprintf("Secret/%s/%s", ns, name);
    bool excused = foreign_after_last_look(w, rep->run->name, ref);
    free(ref);
    if (!excused && !text_is_desired(want, text))
        inv_report_add(rep, 2, "exit 0 but Secret %s/%s key %s %s", ns, name, key,
                       text ? "does not hold the desired credential" : "is missing");
    free(text);
}

/* Whether the run reported name in annotation_only_nodes. */
static bool annotation_only(const inv_report *rep, const char *name)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, rep->run->annotation_only)
    {
        if (cJSON_IsString(it) && strcmp(it->valuestring, name) == 0) return true;
    }
    return false;
}

static void check_node(sim_world *w, const inv_want *want, const cJSON *node, const char *run_name,
                       inv_report *rep)
{
    const char *path[] = {"metadata", "name"};
    const char *name = simw_json_str(node, path, 2);
    if (!name) return;
    char *ref = rs_xasprintf("Node/%s", name);
    bool excused = foreign_after_last_look(w, run_name, ref);
    free(ref);
    if (excused) return;
    if (!inv_str_eq(simw_annotation(node, w->cfg.ann.revision), want->revision))
        inv_report_add(rep, 2, "exit 0 but Node/%s does not carry the desired verified revision",
                       name);
    if (!inv_str_eq(simw_annotation(node, w->cfg.ann.image), w->cfg.operator_image))
        inv_report_add(rep, 2, "exit 0 but Node/%s does not carry the verified image %s", name,
                       w->cfg.operator_image);
    /* A node the run could not read the auth of, decided on its annotations
     * and said so, is held to its annotations (DESIGN §6 r2). */
    bool listed = annotation_only(rep, name);
    char *auth = listed ? NULL : sim_world_talos_auth(w, name);
    if (!listed && (!auth || !cred_ghcr_matches_text(&want->cred, auth, strlen(auth))))
        inv_report_add(
            rep, 2, "exit 0 but the Talos registry auth of %s is not the desired credential", name);
    free(auth);
    if (inv_holder_of_run(simw_annotation(node, w->cfg.ann.drain_owner), run_name))
        inv_report_add(rep, 2, "exit 0 but Node/%s still carries this run's drain owner", name);
    else if (inv_node_unschedulable(node) && inv_cordon_is_ours(w, run_name, name))
        inv_report_add(rep, 2, "exit 0 but Node/%s is still cordoned by this run", name);
}

static void check_nodes(sim_world *w, const inv_want *want, const char *run_name, inv_report *rep)
{
    cJSON *list = NULL;
    if (store_list(w->st, "Node", NULL, NULL, NULL, &list) != 200) {
        inv_report_add(rep, 2, "exit 0 but the nodes could not be listed");
        cJSON_Delete(list);
        return;
    }
    const cJSON *node;
    cJSON_ArrayForEach(node, cJSON_GetObjectItemCaseSensitive(list, "items"))
        check_node(w, want, node, run_name, rep);
    cJSON_Delete(list);
}

static void check_policy_released(sim_world *w, const char *ns, const char *name,
                                  const char *owner_key, bool child, inv_report *rep)
{
    char *ref = rs_xasprintf("Kustomization/%s/%s", ns, name);
    bool excused = foreign_after_last_look(w, rep->run->name, ref);
    free(ref);
    if (excused) return;
    cJSON *ks = simw_get(w, "Kustomization", ns, name);
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(ks, "spec");
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "suspend")))
        inv_report_add(rep, 2, "exit 0 but Kustomization %s/%s is still suspended", ns, name);
    if (simw_annotation(ks, owner_key))
        inv_report_add(rep, 2, "exit 0 but Kustomization %s/%s still carries %s", ns, name,
                       owner_key);
    if (child && inv_str_eq(simw_annotation(ks, w->cfg.ann.reconcile), "disabled"))
        inv_report_add(rep, 2, "exit 0 but Kustomization %s/%s still has reconcile disabled", ns,
                       name);
    cJSON_Delete(ks);
}

static void check_fences_released(sim_world *w, const char *run, inv_report *rep)
{
    const rs_config *c = &w->cfg;
    check_policy_released(w, c->parent_ns, c->parent_name, w->cfg.ann.parent_owner, false, rep);
    check_policy_released(w, c->child_ns, c->child_name, w->cfg.ann.child_owner, true, rep);
    cJSON *lease = simw_get(w, "Lease", c->lease_ns, c->lease_name);
    const char *path[] = {"spec", "holderIdentity"};
    const char *holder = simw_json_str(lease, path, 2);
    char *ref = rs_xasprintf("Lease/%s/%s", c->lease_ns, c->lease_name);
    bool excused = foreign_after_last_look(w, run, ref);
    free(ref);
    if (holder && holder[0] && !excused)
        inv_report_add(rep, 2, "exit 0 but Lease %s/%s is still held", c->lease_ns, c->lease_name);
    cJSON_Delete(lease);
}

static bool want_load(sim_world *w, const char *desired, inv_want *want, inv_report *rep)
{
    char *text = NULL, *cipher = NULL;
    rs_err e;
    rs_err_clear(&e);
    bool ok = sim_world_credential(w, desired, &text, &cipher, &e) == RS_OK &&
              cred_parse(text, strlen(text), "desired credential", &want->cred, &e) == RS_OK;
    if (ok && revision_of_ciphertext(cipher, want->revision, &e) != RS_OK) {
        cred_free(&want->cred);
        ok = false;
    }
    if (!ok) inv_report_add(rep, 2, "cannot judge convergence: %s", e.msg);
    cred_text_wipe_free(text);
    free(cipher);
    return ok;
}

void inv_check_converged(sim_world *w, inv_report *rep)
{
    const rs_config *c = &w->cfg;
    inv_want want;
    if (!want_load(w, rep->run->desired, &want, rep)) return;
    for (size_t i = 0; i < c->n_fanout; i++)
        check_secret(w, &want, c->fanout_namespaces[i], c->consumer_name, c->consumer_key, rep);
    check_secret(w, &want, c->variables_ns, c->variables_name, c->variables_key, rep);
    char *seed = sim_world_openbao_value(w, c->openbao_path);
    if (!foreign_after_last_look(w, rep->run->name, "openbao") && !text_is_desired(&want, seed))
        inv_report_add(rep, 2, "exit 0 but the OpenBao seed %s %s", c->openbao_path,
                       seed ? "does not hold the desired credential" : "is missing");
    free(seed);
    check_secret(w, &want, c->root_ns, c->root_name, c->root_key, rep);
    check_nodes(w, &want, rep->run->name, rep);
    check_fences_released(w, rep->run->name, rep);
    cred_free(&want.cred);
}

/* Invariant 2 on every other exit (DESIGN §6: "no node cordoned by this
 * run"): a node this run cordoned is uncordoned, or named in one of its
 * error lines as held. Invariant 7 follows the drain owner; a run that
 * hands back its claim on an error path but not the cordon leaves no owner
 * to follow, and the node would stay out of service unnamed. */
void inv_check_cordons(sim_world *w, inv_report *rep)
{
    char **nodes = NULL;
    size_t n = 0, cap = 0;
    sqlite3_stmt *st = simw_stmt(w, "SELECT node FROM cordons WHERE run = ?1 ORDER BY node");
    sqlite3_bind_text(st, 1, rep->run->name, -1, SQLITE_STATIC);
    while (simw_step_row(w, st)) {
        if (n == cap) nodes = rs_xrealloc(nodes, (cap = cap ? cap * 2 : 4) * sizeof *nodes);
        nodes[n++] = simw_col_text(st, 0);
    }
    sqlite3_reset(st);
    /* Judged after the scan: simw_get reuses statements. */
    for (size_t i = 0; i < n; i++) {
        cJSON *node = simw_get(w, "Node", NULL, nodes[i]);
        if (node && inv_node_unschedulable(node) &&
            !inv_named_in_errors(rep->run->output, nodes[i]))
            inv_report_add(rep, 2,
                           "exit %d but Node/%s is still cordoned by this run and no error "
                           "names it",
                           rep->run->exit_code, nodes[i]);
        cJSON_Delete(node);
        free(nodes[i]);
    }
    free(nodes);
}
