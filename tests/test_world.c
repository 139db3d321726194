/*
 * test_world.c — the SQLite fake cluster: the prod preset, the simulated
 * controllers on the virtual clock, the §4 counters, faults, `during:` events
 * and determinism.
 *
 * Every test builds its own world from a hand-made scenario in a private
 * directory and drives it through the sim transport, as the core would.
 *
 * Over 600 lines: one test per world model (store, controllers, Talos,
 * OpenBao, registry, events, counters) over one shared world fixture.
 */
#include "sim/store/jsonpatch.h"
#include "sim/store/store.h"
#include "sim/world/world.h"
#include "sim/world/world_internal.h"

#include <check.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CURRENT_USER "deploy-bot"
#define CURRENT_PASS "tok-current-7f3a"
#define PREVIOUS_PASS "tok-previous-11aa"

/* ---- fixtures ---- */

static sc_cred t_creds[3];
static sc_scenario t_sc;
static char t_dir[64];
static char t_path[128];

static void t_scenario(const char *credential, int control_planes, int workers, uint64_t seed)
{
    memset(t_creds, 0, sizeof t_creds);
    t_creds[0] = (sc_cred){.name = "previous",
                           .username = CURRENT_USER,
                           .password = PREVIOUS_PASS,
                           .ciphertext = "ENC[AES256_GCM,data:previous,type:str]"};
    t_creds[1] = (sc_cred){.name = "current",
                           .username = CURRENT_USER,
                           .password = CURRENT_PASS,
                           .ciphertext = "ENC[AES256_GCM,data:current,type:str]"};
    t_creds[2] = (sc_cred){.name = "revoked",
                           .username = "old-bot",
                           .password = "tok-revoked-0000",
                           .ciphertext = "ENC[AES256_GCM,data:revoked,type:str]",
                           .revoked = true};
    memset(&t_sc, 0, sizeof t_sc);
    t_sc.name = "test";
    t_sc.seed = seed;
    t_sc.cluster = (sc_cluster){.preset = "prod",
                                .control_planes = control_planes,
                                .workers = workers,
                                .credential = (char *)credential};
    t_sc.desired = "current";
    t_sc.catalogue = t_creds;
    t_sc.n_catalogue = 3;
}

static void setup(void)
{
    snprintf(t_dir, sizeof t_dir, "/tmp/test_world.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(t_dir));
    snprintf(t_path, sizeof t_path, "%s/world.db", t_dir);
    t_scenario("previous", 3, 3, 7);
}

static void teardown(void)
{
    const char *suffixes[] = {"", "-wal", "-shm", "2", "2-wal", "2-shm"};
    for (size_t i = 0; i < RS_ARRAY_LEN(suffixes); i++) {
        char p[160];
        snprintf(p, sizeof p, "%s%s", t_path, suffixes[i]);
        unlink(p);
    }
    rmdir(t_dir);
}

static sim_world *t_build_open(const char *path)
{
    rs_err e = {0};
    ck_assert_msg(sim_world_build(path, &t_sc, &e) == RS_OK, "%s", e.msg);
    sim_world *w = NULL;
    ck_assert_msg(sim_world_open(path, &w, &e) == RS_OK, "%s", e.msg);
    return w;
}

static char *t_cred_text(sim_world *w, const char *name)
{
    char *text = NULL, *cipher = NULL;
    ck_assert_int_eq(sim_world_credential(w, name, &text, &cipher, NULL), RS_OK);
    free(cipher);
    return text;
}

/* The decoded data[key] of a Secret (caller frees) or NULL. */
static char *t_secret_value(sim_world *w, const char *ref, const char *key)
{
    cJSON *obj = NULL;
    char *text = NULL;
    if (sim_world_get(w, ref, &obj) == 200) {
        const cJSON *v =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "data"), key);
        size_t n = 0;
        if (cJSON_IsString(v)) text = (char *)base64_decode(v->valuestring, &n);
    }
    cJSON_Delete(obj);
    return text;
}

static const char *t_str(const cJSON *obj, const char *pointer)
{
    const cJSON *v = jsonpointer_get(obj, pointer);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static cJSON *t_get(sim_world *w, const char *ref)
{
    cJSON *obj = NULL;
    ck_assert_int_eq(sim_world_get(w, ref, &obj), 200);
    return obj;
}

static int t_patch(rs_transport *t, const char *kind, const char *ns, const char *name,
                   rs_patch_type type, const char *json, rs_resp *r)
{
    cJSON *body = cJSON_Parse(json);
    ck_assert_ptr_nonnull(body);
    rs_req req = {.op = RS_OP_KUBE_PATCH,
                  .kind = kind,
                  .ns = ns,
                  .name = name,
                  .patch_type = type,
                  .body = body};
    int status = t->call(t, &req, r);
    cJSON_Delete(body);
    return status;
}

static int t_merge(rs_transport *t, const char *kind, const char *ns, const char *name,
                   const char *json)
{
    rs_resp r;
    int status = t_patch(t, kind, ns, name, RS_PATCH_MERGE, json, &r);
    rs_resp_free(&r);
    return status;
}

static int t_call(rs_transport *t, rs_op op, const char *target, const char *body_json, rs_resp *r)
{
    cJSON *body = body_json ? cJSON_Parse(body_json) : NULL;
    /* Transport v2: the OpenBao mount and registry host travel, as the core sends them. */
    rs_req req = {.op = op, .target = target, .body = body, .mount = "secret", .host = "ghcr.io"};
    int status = t->call(t, &req, r);
    cJSON_Delete(body);
    return status;
}

static int64_t t_counter(sim_world *w, const char *name)
{
    cJSON *snap = sim_counters_snapshot(w);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(snap, name);
    int64_t n = cJSON_IsNumber(v) ? (int64_t)v->valuedouble : -1;
    cJSON_Delete(snap);
    return n;
}

static int64_t t_kind_writes(sim_world *w, const char *kind)
{
    cJSON *snap = sim_counters_snapshot(w);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(snap, "writes_by_kind"), kind);
    int64_t n = cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
    cJSON_Delete(snap);
    return n;
}

static rs_code t_event(sim_world *w, const char *kind, const char *args_json, rs_err *e)
{
    sc_event ev = {.kind = (char *)kind, .args = cJSON_Parse(args_json)};
    rs_code rc = sim_world_apply_event(w, &ev, e);
    cJSON_Delete(ev.args);
    return rc;
}

static char *t_force_sync_patch(const char *stamp)
{
    return rs_xasprintf("{\"metadata\":{\"annotations\":{\"force-sync\":\"%s\"}}}", stamp);
}

/* ---- preset ---- */

START_TEST(test_prod_preset_is_converged_on_the_cluster_credential)
{
    sim_world *w = t_build_open(t_path);
    char *prev = t_cred_text(w, "previous");
    char *v = t_secret_value(w, "Secret/flux-system/variables-base", "ghcr_dockerconfigjson");
    ck_assert_str_eq(v, prev);
    free(v);
    const char *fanout[] = {"wedding-app", "ascoachingogvaner", "kyverno"};
    for (size_t i = 0; i < 3; i++) {
        char ref[128];
        snprintf(ref, sizeof ref, "Secret/%s/ghcr-auth", fanout[i]);
        v = t_secret_value(w, ref, ".dockerconfigjson");
        ck_assert_str_eq(v, prev);
        free(v);
        snprintf(ref, sizeof ref, "ExternalSecret/%s/ghcr-auth", fanout[i]);
        cJSON *es = t_get(w, ref);
        ck_assert_str_eq(simw_condition_status(es, "Ready"), "True");
        ck_assert_ptr_nonnull(t_str(es, "/status/refreshTime"));
        cJSON_Delete(es);
    }
    v = t_secret_value(w, "Secret/flux-system/ksail-registry-credentials", ".dockerconfigjson");
    ck_assert_str_eq(v, prev);
    free(v);
    v = sim_world_openbao_value(w, "infrastructure/ghcr/auth");
    ck_assert_str_eq(v, prev);
    free(v);
    cJSON *ps = t_get(w, "PushSecret/flux-system/seed-ghcr");
    ck_assert_str_eq(simw_condition_status(ps, "Ready"), "True");
    ck_assert_str_eq(t_str(ps, "/status/refreshTime"), "2026-01-01T00:00:00Z");
    ck_assert_str_eq(t_str(ps, "/spec/data/0/match/remoteRef/remoteKey"),
                     "infrastructure/ghcr/auth");
    cJSON_Delete(ps);
    cJSON *lease = t_get(w, "Lease/flux-system/ghcr-auth-refresh");
    ck_assert_str_eq(t_str(lease, "/spec/holderIdentity"), "");
    cJSON_Delete(lease);
    cJSON *ks = t_get(w, "Kustomization/flux-system/infrastructure");
    ck_assert(cJSON_IsFalse(jsonpointer_get(ks, "/spec/suspend")));
    ck_assert_str_eq(simw_condition_status(ks, "Ready"), "True");
    cJSON_Delete(ks);
    cJSON *dep = t_get(w, "Deployment/flux-system/kustomize-controller");
    ck_assert_int_eq(jsonpointer_get(dep, "/status/readyReplicas")->valueint, 2);
    cJSON_Delete(dep);
    cJSON *crd = t_get(w, "CustomResourceDefinition/pushsecrets.external-secrets.io");
    cJSON_Delete(crd);
    char revision[65];
    sha256_hex(t_creds[0].ciphertext, strlen(t_creds[0].ciphertext), revision);
    cJSON *node = t_get(w, "Node/prod-worker-2");
    ck_assert_str_eq(
        t_str(node,
              "/metadata/annotations/platform.devantler.tech~1ghcr-pull-verified-revision-v2"),
        revision);
    ck_assert_str_eq(t_str(node, "/status/addresses/0/address"), "10.1.0.2");
    cJSON_Delete(node);
    node = t_get(w, "Node/prod-control-plane-3");
    ck_assert_str_eq(t_str(node, "/status/addresses/0/address"), "10.0.0.3");
    ck_assert_ptr_nonnull(t_str(node, "/metadata/labels/node-role.kubernetes.io~1control-plane"));
    cJSON_Delete(node);
    v = sim_world_talos_auth(w, "prod-control-plane-1");
    ck_assert_str_eq(v, prev);
    free(v);
    ck_assert_ptr_null(sim_world_talos_auth(w, "prod-worker-9"));
    rs_config cfg;
    ck_assert_int_eq(sim_world_config(w, &cfg, NULL), RS_OK);
    ck_assert_uint_eq(cfg.n_fanout, 3);
    ck_assert_str_eq(cfg.fanout_namespaces[2], "kyverno");
    rs_config_free(&cfg);
    free(prev);
    sim_world_close(w);
}
END_TEST

START_TEST(test_prod_preset_pods_per_node)
{
    sim_world *w = t_build_open(t_path);
    cJSON *list = NULL;
    ck_assert_int_eq(
        store_list(sim_world_store(w), "Pod", NULL, NULL, "spec.nodeName=prod-worker-1", &list),
        200);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(list, "items")), 3);
    cJSON_Delete(list);
    ck_assert_int_eq(store_list(sim_world_store(w), "Pod", NULL, NULL,
                                "spec.nodeName=prod-control-plane-1", &list),
                     200);
    /* The DaemonSet pod and the three static pods of a Talos control plane
     * (DESIGN §3.3 r2), seen through the API as mirror pods. */
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(list, "items")), 4);
    cJSON_Delete(list);
    cJSON *mirror = NULL;
    ck_assert_int_eq(store_get(sim_world_store(w), "Pod", "kube-system",
                               "kube-apiserver-prod-control-plane-1", &mirror),
                     200);
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(mirror, "metadata"), "annotations");
    ck_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(ann, "kubernetes.io/config.mirror")));
    cJSON_Delete(mirror);
    ck_assert_int_eq(store_list(sim_world_store(w), "Pod", "flux-system",
                                "app=kustomize-controller", NULL, &list),
                     200);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(list, "items")), 2);
    cJSON_Delete(list);
    sim_world_close(w);
}
END_TEST

START_TEST(test_unknown_cluster_credential_is_a_data_error)
{
    t_sc.cluster.credential = "nope";
    rs_err e = {0};
    ck_assert_int_eq(sim_world_build(t_path, &t_sc, &e), RS_DATAERR);
    ck_assert_ptr_nonnull(strstr(e.msg, "nope"));
}
END_TEST

/* ---- controllers ---- */

START_TEST(test_pushsecret_force_sync_reaches_openbao_after_the_eso_delay)
{
    sim_world *w = t_build_open(t_path);
    rs_transport *t = sim_transport_open(w, "stage", NULL);
    char *cur = t_cred_text(w, "current");
    char *prev = t_cred_text(w, "previous");
    char *b64 = base64_encode(cur, strlen(cur));
    char *patch = rs_xasprintf("{\"data\":{\"ghcr_dockerconfigjson\":\"%s\"}}", b64);
    ck_assert_int_eq(t_merge(t, "Secret", "flux-system", "variables-base", patch), 200);
    char *fs = t_force_sync_patch("1");
    ck_assert_int_eq(t_merge(t, "PushSecret", "flux-system", "seed-ghcr", fs), 200);
    t->sleep_ms(t, SIM_ESO_REACT_MS - 100);
    char *v = sim_world_openbao_value(w, "infrastructure/ghcr/auth");
    ck_assert_str_eq(v, prev);
    free(v);
    t->sleep_ms(t, 100);
    v = sim_world_openbao_value(w, "infrastructure/ghcr/auth");
    ck_assert_str_eq(v, cur);
    free(v);
    cJSON *ps = t_get(w, "PushSecret/flux-system/seed-ghcr");
    ck_assert_str_eq(simw_condition_status(ps, "Ready"), "True");
    ck_assert_str_ne(t_str(ps, "/status/refreshTime"), "2026-01-01T00:00:00Z");
    cJSON_Delete(ps);
    /* The same stamp again is not a new force-sync. */
    ck_assert_int_eq(t_merge(t, "PushSecret", "flux-system", "seed-ghcr", fs), 200);
    /* The ExternalSecret copies the new seed into its consumer. */
    ck_assert_int_eq(t_merge(t, "ExternalSecret", "kyverno", "ghcr-auth", fs), 200);
    t->sleep_ms(t, SIM_ESO_REACT_MS - 100);
    v = t_secret_value(w, "Secret/kyverno/ghcr-auth", ".dockerconfigjson");
    ck_assert_str_eq(v, prev);
    free(v);
    t->sleep_ms(t, 100);
    v = t_secret_value(w, "Secret/kyverno/ghcr-auth", ".dockerconfigjson");
    ck_assert_str_eq(v, cur);
    free(v);
    v = t_secret_value(w, "Secret/wedding-app/ghcr-auth", ".dockerconfigjson");
    ck_assert_str_eq(v, prev);
    free(v);
    free(fs);
    free(patch);
    free(b64);
    free(cur);
    free(prev);
    t->close(t);
    sim_world_close(w);
}
END_TEST

START_TEST(test_pushsecret_without_source_is_not_ready)
{
    sim_world *w = t_build_open(t_path);
    ck_assert_int_eq(
        t_event(w, "kube.delete", "{\"ref\":\"Secret/flux-system/variables-base\"}", NULL), RS_OK);
    rs_transport *t = sim_transport_open(w, "stage", NULL);
    char *fs = t_force_sync_patch("a");
    ck_assert_int_eq(t_merge(t, "PushSecret", "flux-system", "seed-ghcr", fs), 200);
    t->sleep_ms(t, SIM_ESO_REACT_MS);
    cJSON *ps = t_get(w, "PushSecret/flux-system/seed-ghcr");
    ck_assert_str_eq(simw_condition_status(ps, "Ready"), "False");
    cJSON_Delete(ps);
    free(fs);
    t->close(t);
    sim_world_close(w);
}
END_TEST

START_TEST(test_raft_restore_reverts_the_seed_but_pushsecret_stays_ready)
{
    t_scenario("current", 3, 3, 3);
    sim_world *w = t_build_open(t_path);
    cJSON *before = t_get(w, "PushSecret/flux-system/seed-ghcr");
    rs_err e = {0};
    ck_assert_int_eq(t_event(w, "openbao.raft-restore", "{\"credential\":\"previous\"}", &e),
                     RS_OK);
    char *prev = t_cred_text(w, "previous");
    char *v = sim_world_openbao_value(w, "infrastructure/ghcr/auth");
    ck_assert_str_eq(v, prev);
    free(v);
    cJSON *after = t_get(w, "PushSecret/flux-system/seed-ghcr");
    ck_assert_str_eq(simw_condition_status(after, "Ready"), "True");
    ck_assert_str_eq(t_str(after, "/metadata/resourceVersion"),
                     t_str(before, "/metadata/resourceVersion"));
    /* KV v2: a read answers the newest version. */
    rs_transport *t = sim_transport_open(w, "reassert", NULL);
    rs_resp r;
    ck_assert_int_eq(tp_openbao_read(t, "secret", "infrastructure/ghcr/auth", &r), 200);
    ck_assert_int_eq(jsonpointer_get(r.body, "/data/metadata/version")->valueint, 2);
    ck_assert_str_eq(t_str(r.body, "/data/data/dockerconfigjson"), prev);
    rs_resp_free(&r);
    ck_assert_int_eq(tp_openbao_read(t, "secret", "infrastructure/other", &r), 404);
    rs_resp_free(&r);
    ck_assert_int_eq(t_event(w, "openbao.raft-restore", "{\"credential\":\"ghost\"}", &e),
                     RS_DATAERR);
    ck_assert_ptr_nonnull(strstr(e.msg, "ghost"));
    t->close(t);
    free(prev);
    cJSON_Delete(before);
    cJSON_Delete(after);
    sim_world_close(w);
}
END_TEST

static cJSON *t_controller_pods(sim_world *w)
{
    cJSON *list = NULL;
    store_list(sim_world_store(w), "Pod", "flux-system", "app=kustomize-controller", NULL, &list);
    return list;
}

static bool t_pods_have_uid(const cJSON *list, const char *uid)
{
    const cJSON *pod;
    cJSON_ArrayForEach(pod, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        if (strcmp(t_str(pod, "/metadata/uid"), uid) == 0) return true;
    }
    return false;
}

START_TEST(test_restart_rolls_the_controller_pods)
{
    sim_world *w = t_build_open(t_path);
    cJSON *old = t_controller_pods(w);
    char *old_uid = rs_xstrdup(t_str(old, "/items/0/metadata/uid"));
    cJSON_Delete(old);
    rs_transport *t = sim_transport_open(w, "stage", NULL);
    ck_assert_int_eq(t_merge(t, "Deployment", "flux-system", "kustomize-controller",
                             "{\"spec\":{\"template\":{\"metadata\":{\"annotations\":"
                             "{\"kubectl.kubernetes.io/restartedAt\":\"r1\"}}}}}"),
                     200);
    ck_assert_int_eq(t_counter(w, "controller_restarts"), 1);
    cJSON *pods = t_controller_pods(w);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(pods, "items")), 4);
    cJSON_Delete(pods);
    cJSON *dep = t_get(w, "Deployment/flux-system/kustomize-controller");
    ck_assert_int_eq(jsonpointer_get(dep, "/status/observedGeneration")->valueint,
                     jsonpointer_get(dep, "/metadata/generation")->valueint);
    ck_assert_str_eq(t_str(dep, "/status/conditions/1/reason"), "ReplicaSetUpdated");
    cJSON_Delete(dep);
    t->sleep_ms(t, SIM_ROLLOUT_READY_MS);
    pods = t_controller_pods(w);
    int ready_new = 0, terminating = 0;
    const cJSON *pod;
    cJSON_ArrayForEach(pod, cJSON_GetObjectItemCaseSensitive(pods, "items"))
    {
        if (jsonpointer_get(pod, "/metadata/deletionTimestamp"))
            terminating++;
        else if (strcmp(simw_condition_status(pod, "Ready"), "True") == 0)
            ready_new++;
    }
    ck_assert_int_eq(ready_new, 2);
    ck_assert_int_eq(terminating, 2);
    ck_assert(t_pods_have_uid(pods, old_uid));
    cJSON_Delete(pods);
    t->sleep_ms(t, SIM_POD_TERMINATE_MS);
    pods = t_controller_pods(w);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(pods, "items")), 2);
    ck_assert(!t_pods_have_uid(pods, old_uid));
    cJSON_Delete(pods);
    dep = t_get(w, "Deployment/flux-system/kustomize-controller");
    ck_assert_int_eq(jsonpointer_get(dep, "/status/updatedReplicas")->valueint, 2);
    ck_assert_int_eq(jsonpointer_get(dep, "/status/readyReplicas")->valueint, 2);
    ck_assert_int_eq(jsonpointer_get(dep, "/status/replicas")->valueint, 2);
    ck_assert_str_eq(t_str(dep, "/status/conditions/1/reason"), "NewReplicaSetAvailable");
    cJSON_Delete(dep);
    free(old_uid);
    t->close(t);
    sim_world_close(w);
}
END_TEST

START_TEST(test_flux_reconcile_honours_suspend)
{
    sim_world *w = t_build_open(t_path);
    rs_transport *t = sim_transport_open(w, "stage", NULL);
    ck_assert_int_eq(
        t_merge(t, "Kustomization", "flux-system", "flux-system", "{\"spec\":{\"suspend\":true}}"),
        200);
    t->sleep_ms(t, 10LL * 60 * 1000);
    cJSON *ks = t_get(w, "Kustomization/flux-system/flux-system");
    ck_assert_ptr_null(simw_condition_status(ks, "Reconciling"));
    cJSON_Delete(ks);
    ks = t_get(w, "Kustomization/flux-system/infrastructure");
    ck_assert_str_eq(simw_condition_status(ks, "Reconciling"), "True");
    cJSON_Delete(ks);
    ck_assert_int_eq(
        t_merge(t, "Kustomization", "flux-system", "flux-system", "{\"spec\":{\"suspend\":false}}"),
        200);
    t->sleep_ms(t, 2000);
    ks = t_get(w, "Kustomization/flux-system/flux-system");
    ck_assert_str_eq(simw_condition_status(ks, "Reconciling"), "True");
    cJSON_Delete(ks);
    t->sleep_ms(t, SIM_FLUX_RECONCILE_MS);
    ks = t_get(w, "Kustomization/flux-system/flux-system");
    ck_assert_str_eq(simw_condition_status(ks, "Reconciling"), "False");
    ck_assert_str_eq(simw_condition_status(ks, "Ready"), "True");
    ck_assert_ptr_nonnull(t_str(ks, "/status/lastHandledReconcileAt"));
    cJSON_Delete(ks);
    ck_assert_int_eq(t_counter(w, "policy_pauses"), 1);
    t->close(t);
    sim_world_close(w);
}
END_TEST

/* ---- counters ---- */

START_TEST(test_read_counts_an_api_call_only)
{
    sim_world *w = t_build_open(t_path);
    cJSON *before = sim_counters_snapshot(w);
    rs_transport *t = sim_transport_open(w, "stage", NULL);
    rs_resp r;
    ck_assert_int_eq(tp_kube_get(t, "Secret", "flux-system", "variables-base", &r), 200);
    rs_resp_free(&r);
    ck_assert_int_eq(tp_kube_list(t, "Node", NULL, NULL, NULL, &r), 200);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.body, "items")), 6);
    rs_resp_free(&r);
    cJSON *after = sim_counters_snapshot(w);
    cJSON *d = sim_counters_delta(before, after);
    ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(d, "api_calls")->valueint, 2);
    ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(d, "writes")->valueint, 0);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(d, "lease_rv_moved")));
    ck_assert_double_eq_tol(cJSON_GetObjectItemCaseSensitive(d, "virtual_seconds")->valuedouble,
                            0.05, 1e-9);
    ck_assert_int_eq(sim_world_now_ms(w), 2 * SIM_CALL_MS);
    t->close(t);
    cJSON_Delete(before);
    cJSON_Delete(after);
    cJSON_Delete(d);
    sim_world_close(w);
}
END_TEST

START_TEST(test_write_counting_follows_the_api_server)
{
    sim_world *w = t_build_open(t_path);
    rs_transport *t = sim_transport_open(w, "stage", NULL);
    rs_resp r;
    ck_assert_int_eq(t_patch(t, "Secret", "flux-system", "variables-base", RS_PATCH_MERGE,
                             "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}", &r),
                     200);
    char *rv = rs_xstrdup(t_str(r.body, "/metadata/resourceVersion"));
    rs_resp_free(&r);
    ck_assert_int_eq(t_counter(w, "writes"), 1);
    ck_assert_int_eq(t_kind_writes(w, "Secret"), 1);
    /* A no-op patch is a write but keeps resourceVersion. */
    ck_assert_int_eq(t_patch(t, "Secret", "flux-system", "variables-base", RS_PATCH_MERGE,
                             "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}", &r),
                     200);
    ck_assert_str_eq(t_str(r.body, "/metadata/resourceVersion"), rv);
    rs_resp_free(&r);
    ck_assert_int_eq(t_counter(w, "writes"), 2);
    /* A failed JSON Patch test is 422 and a stale resourceVersion is 409: no write. */
    ck_assert_int_eq(
        t_patch(t, "Secret", "flux-system", "variables-base", RS_PATCH_JSON,
                "[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\"1\"}]", &r),
        422);
    rs_resp_free(&r);
    ck_assert_int_eq(t_patch(t, "Secret", "flux-system", "variables-base", RS_PATCH_MERGE,
                             "{\"metadata\":{\"resourceVersion\":\"1\",\"labels\":{\"c\":\"d\"}}}",
                             &r),
                     409);
    rs_resp_free(&r);
    ck_assert_int_eq(t_counter(w, "writes"), 2);
    ck_assert_int_eq(t_counter(w, "api_calls"), 4);
    /* OpenBao and Talos writes are keyed by service. */
    ck_assert_int_eq(t_call(t, RS_OP_OPENBAO_WRITE, "infrastructure/x", "{\"k\":\"v\"}", &r), 200);
    rs_resp_free(&r);
    ck_assert_int_eq(
        t_call(t, RS_OP_TALOS_PATCH, "prod-worker-1", "{\"node-annotations\":{\"x\":\"1\"}}", &r),
        200);
    rs_resp_free(&r);
    ck_assert_int_eq(t_kind_writes(w, "openbao"), 1);
    ck_assert_int_eq(t_kind_writes(w, "talos.patch"), 1);
    ck_assert_int_eq(t_counter(w, "talos_mutations"), 1);
    ck_assert_int_eq(t_counter(w, "writes"), 4);
    free(rv);
    t->close(t);
    sim_world_close(w);
}
END_TEST

START_TEST(test_lease_and_policy_counters)
{
    sim_world *w = t_build_open(t_path);
    cJSON *before = sim_counters_snapshot(w);
    rs_transport *t = sim_transport_open(w, "stage", NULL);
    ck_assert_int_eq(t_merge(t, "Lease", "flux-system", "ghcr-auth-refresh",
                             "{\"spec\":{\"holderIdentity\":\"h1\"}}"),
                     200);
    ck_assert_int_eq(t_merge(t, "Kustomization", "flux-system", "infrastructure",
                             "{\"spec\":{\"suspend\":true}}"),
                     200);
    ck_assert_int_eq(t_merge(t, "Kustomization", "flux-system", "infrastructure",
                             "{\"spec\":{\"suspend\":true}}"),
                     200);
    ck_assert_int_eq(t_merge(t, "Kustomization", "flux-system", "infrastructure",
                             "{\"spec\":{\"suspend\":false}}"),
                     200);
    ck_assert_int_eq(
        t_merge(t, "Secret", "flux-system", "variables-base", "{\"spec\":{\"suspend\":true}}"),
        200);
    cJSON *after = sim_counters_snapshot(w);
    cJSON *d = sim_counters_delta(before, after);
    ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(d, "lease_writes")->valueint, 1);
    ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(d, "policy_pauses")->valueint, 1);
    ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(d, "writes")->valueint, 5);
    ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(d, "controller_restarts")->valueint, 0);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "lease_rv_moved")));
    const cJSON *kinds = cJSON_GetObjectItemCaseSensitive(d, "writes_by_kind");
    ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(kinds, "Kustomization")->valueint, 3);
    ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(kinds, "Lease")->valueint, 1);
    t->close(t);
    cJSON_Delete(before);
    cJSON_Delete(after);
    cJSON_Delete(d);
    sim_world_close(w);
}
END_TEST

#define T_HOLDER "abcd-sim.stage-1-2"

static void t_take_full_fence(rs_transport *t)
{
    ck_assert_int_eq(t_merge(t, "Lease", "flux-system", "ghcr-auth-refresh",
                             "{\"spec\":{\"holderIdentity\":\"" T_HOLDER "\"}}"),
                     200);
    ck_assert_int_eq(t_merge(t, "Kustomization", "flux-system", "flux-system",
                             "{\"metadata\":{\"annotations\":{\"platform.devantler.tech/"
                             "ghcr-policy-parent-owner\":\"" T_HOLDER "\"}},"
                             "\"spec\":{\"suspend\":true}}"),
                     200);
    ck_assert_int_eq(t_merge(t, "Kustomization", "flux-system", "infrastructure",
                             "{\"metadata\":{\"annotations\":{\"platform.devantler.tech/"
                             "ghcr-policy-handoff-owner\":\"" T_HOLDER "\","
                             "\"kustomize.toolkit.fluxcd.io/reconcile\":\"disabled\"}},"
                             "\"spec\":{\"suspend\":true}}"),
                     200);
    ck_assert_int_eq(
        t_merge(t, "Deployment", "flux-system", "kustomize-controller",
                "{\"spec\":{\"template\":{\"metadata\":{\"annotations\":"
                "{\"kubectl.kubernetes.io/restartedAt\":\"2026-01-01T00:00:01Z\"}}}}}"),
        200);
}

/* A list of the controller's pods, as the core proves a rollout with. */
static void t_list_controller_pods(rs_transport *t)
{
    rs_resp r;
    ck_assert_int_eq(tp_kube_list(t, "Pod", "flux-system", "app=kustomize-controller", NULL, &r),
                     200);
    rs_resp_free(&r);
}

/* DESIGN §4: the full fence counts only once the run was shown
 * its restart complete — the rollout done in the world is not enough. */
START_TEST(test_fence_acquisition_counts_once_the_rollout_completes)
{
    sim_world *w = t_build_open(t_path);
    rs_transport *t = sim_transport_open(w, "stage", NULL);
    t_take_full_fence(t);
    ck_assert_int_eq(t_counter(w, "fence_acquisitions"), 0);
    t->sleep_ms(t, SIM_ROLLOUT_READY_MS - 200);
    t_list_controller_pods(t);
    ck_assert_int_eq(t_counter(w, "fence_acquisitions"), 0);
    t->sleep_ms(t, 200);
    /* Rolled out, old pods still terminating: not yet proven. */
    t_list_controller_pods(t);
    ck_assert_int_eq(t_counter(w, "fence_acquisitions"), 0);
    t->sleep_ms(t, SIM_POD_TERMINATE_MS);
    ck_assert_int_eq(t_counter(w, "fence_acquisitions"), 0);
    t_list_controller_pods(t);
    ck_assert_int_eq(t_counter(w, "fence_acquisitions"), 1);
    rs_resp r;
    ck_assert_int_eq(tp_kube_get(t, "Lease", "flux-system", "ghcr-auth-refresh", &r), 200);
    rs_resp_free(&r);
    ck_assert_int_eq(t_counter(w, "fence_acquisitions"), 1);
    ck_assert_int_eq(t_counter(w, "policy_pauses"), 2);
    ck_assert_int_eq(t_counter(w, "lease_writes"), 1);
    /* Releasing and re-taking the Lease while this run's restart stands is a
     * second acquisition. */
    ck_assert_int_eq(t_merge(t, "Lease", "flux-system", "ghcr-auth-refresh",
                             "{\"spec\":{\"holderIdentity\":\"\"}}"),
                     200);
    t_take_full_fence(t);
    ck_assert_int_eq(t_counter(w, "fence_acquisitions"), 2);
    ck_assert_int_eq(t_counter(w, "controller_restarts"), 1);
    /* A new restart drops the fence until its rollout completes. */
    ck_assert_int_eq(t_merge(t, "Deployment", "flux-system", "kustomize-controller",
                             "{\"spec\":{\"template\":{\"metadata\":{\"annotations\":"
                             "{\"kubectl.kubernetes.io/restartedAt\":\"r2\"}}}}}"),
                     200);
    ck_assert_int_eq(t_counter(w, "fence_acquisitions"), 2);
    t->sleep_ms(t, SIM_ROLLOUT_READY_MS + SIM_POD_TERMINATE_MS);
    ck_assert_int_eq(t_counter(w, "fence_acquisitions"), 2);
    t_list_controller_pods(t);
    ck_assert_int_eq(t_counter(w, "fence_acquisitions"), 3);
    ck_assert_int_eq(t_counter(w, "controller_restarts"), 2);
    t->close(t);
    /* A new run never inherits a fence it did not restart under. */
    t = sim_transport_open(w, "reassert", NULL);
    ck_assert_int_eq(tp_kube_get(t, "Lease", "flux-system", "ghcr-auth-refresh", &r), 200);
    rs_resp_free(&r);
    ck_assert_int_eq(t_counter(w, "fence_acquisitions"), 3);
    t->close(t);
    sim_world_close(w);
}
END_TEST

/* ---- determinism ---- */

static char *t_fingerprint(sim_world *w)
{
    rs_transport *t = sim_transport_open(w, "stage", NULL);
    cJSON *fp = cJSON_CreateObject();
    cJSON *ent = cJSON_AddArrayToObject(fp, "entropy");
    cJSON_AddNumberToObject(fp, "pid", t->pid(t));
    for (int i = 0; i < 4; i++) {
        char buf[32];
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)t->entropy(t));
        cJSON_AddItemToArray(ent, cJSON_CreateString(buf));
    }
    t_merge(t, "Deployment", "flux-system", "kustomize-controller",
            "{\"spec\":{\"template\":{\"metadata\":{\"annotations\":"
            "{\"kubectl.kubernetes.io/restartedAt\":\"x\"}}}}}");
    char *fs = t_force_sync_patch("z");
    t_merge(t, "PushSecret", "flux-system", "seed-ghcr", fs);
    free(fs);
    t->sleep_ms(t, 60000);
    rs_resp r;
    tp_kube_list(t, "Pod", NULL, NULL, NULL, &r);
    cJSON_AddItemToObject(fp, "pods", r.body);
    tp_kube_list(t, "Node", NULL, NULL, NULL, &r);
    cJSON_AddItemToObject(fp, "nodes", r.body);
    tp_kube_get(t, "PushSecret", "flux-system", "seed-ghcr", &r);
    cJSON_AddItemToObject(fp, "ps", r.body);
    cJSON_AddItemToObject(fp, "counters", sim_counters_snapshot(w));
    t->close(t);
    char *text = cJSON_PrintUnformatted(fp);
    cJSON_Delete(fp);
    return text;
}

START_TEST(test_same_seed_same_world)
{
    char path2[160];
    snprintf(path2, sizeof path2, "%s2", t_path);
    sim_world *a = t_build_open(t_path);
    sim_world *b = t_build_open(path2);
    char *fa = t_fingerprint(a);
    char *fb = t_fingerprint(b);
    ck_assert_str_eq(fa, fb);
    free(fa);
    free(fb);
    sim_world_close(a);
    sim_world_close(b);
    t_sc.seed = 8;
    b = t_build_open(path2);
    rs_transport *tb = sim_transport_open(b, "stage", NULL);
    a = NULL;
    ck_assert_int_eq(sim_world_open(t_path, &a, NULL), RS_OK);
    rs_transport *ta = sim_transport_open(a, "stage", NULL);
    ck_assert(ta->entropy(ta) != tb->entropy(tb));
    ck_assert_int_ge(ta->pid(ta), 1000);
    ck_assert_int_ne(ta->pid(ta), tb->pid(tb));
    ta->close(ta);
    tb->close(tb);
    sim_world_close(a);
    sim_world_close(b);
}
END_TEST

/* ---- faults and during ---- */

START_TEST(test_faults_fail_timeout_and_nth)
{
    sim_world *w = t_build_open(t_path);
    sc_fault faults[] = {
        {.on = "kube.get Secret/*", .nth = 2, .effect = SC_FAULT_FAIL, .fail_status = 503},
        {.on = "openbao.read infrastructure/ghcr/auth", .nth = 1, .effect = SC_FAULT_TIMEOUT},
        {.on = "kube.list Node",
         .nth = 1,
         .and_after = true,
         .effect = SC_FAULT_FAIL,
         .fail_status = 500},
        {.on = "talos.reboot *", .nth = 1, .effect = SC_FAULT_FAIL, .fail_status = 500},
    };
    sc_run run = {.name = "stage", .faults = faults, .n_faults = 4};
    rs_transport *t = sim_transport_open(w, "stage", &run);
    rs_resp r;
    ck_assert_int_eq(tp_kube_get(t, "Secret", "flux-system", "variables-base", &r), 200);
    rs_resp_free(&r);
    ck_assert_int_eq(tp_kube_get(t, "Secret", "flux-system", "variables-base", &r), 503);
    ck_assert_str_eq(t_str(r.body, "/kind"), "Status");
    rs_resp_free(&r);
    ck_assert_int_eq(tp_kube_get(t, "Secret", "flux-system", "variables-base", &r), 200);
    rs_resp_free(&r);
    int64_t t0 = t->now_ms(t);
    ck_assert_int_eq(tp_openbao_read(t, "secret", "infrastructure/ghcr/auth", &r), 0);
    ck_assert_str_eq(r.error, "timeout");
    ck_assert_ptr_null(r.body);
    ck_assert_int_eq(t->now_ms(t) - t0, SIM_CALL_MS + SIM_TIMEOUT_MS);
    rs_resp_free(&r);
    ck_assert_int_eq(tp_openbao_read(t, "secret", "infrastructure/ghcr/auth", &r), 200);
    rs_resp_free(&r);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(tp_kube_list(t, "Node", NULL, NULL, NULL, &r), 500);
        rs_resp_free(&r);
    }
    ck_assert_int_eq(t_counter(w, "api_calls"), 8);
    ck_assert_int_eq(t_counter(w, "writes"), 0);
    size_t n = 0;
    char **unfired = sim_transport_unfired(t, &n);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(unfired[0], "fault talos.reboot * nth 1 never fired");
    sim_strings_free(unfired, n);
    t->close(t);
    sim_world_close(w);
}
END_TEST

START_TEST(test_lost_response_is_applied_but_unanswered)
{
    sim_world *w = t_build_open(t_path);
    sc_fault faults[] = {
        {.on = "kube.patch PushSecret/flux-system/seed-ghcr",
         .nth = 1,
         .effect = SC_FAULT_LOST_RESPONSE},
        {.on = "kube.patch Lease/*", .nth = 1, .effect = SC_FAULT_FAIL, .fail_status = 409}};
    sc_run run = {.name = "stage", .faults = faults, .n_faults = 2};
    rs_transport *t = sim_transport_open(w, "stage", &run);
    rs_resp r;
    ck_assert_int_eq(t_patch(t, "PushSecret", "flux-system", "seed-ghcr", RS_PATCH_MERGE,
                             "{\"metadata\":{\"annotations\":{\"force-sync\":\"s1\"}}}", &r),
                     0);
    ck_assert_str_eq(r.error, "lost response");
    ck_assert_ptr_null(r.body);
    rs_resp_free(&r);
    cJSON *ps = t_get(w, "PushSecret/flux-system/seed-ghcr");
    ck_assert_str_eq(t_str(ps, "/metadata/annotations/force-sync"), "s1");
    cJSON_Delete(ps);
    ck_assert_int_eq(t_counter(w, "writes"), 1);
    ck_assert_int_eq(t_merge(t, "Lease", "flux-system", "ghcr-auth-refresh",
                             "{\"spec\":{\"holderIdentity\":\"x\"}}"),
                     409);
    ck_assert_int_eq(t_counter(w, "lease_writes"), 0);
    ck_assert_int_eq(t_counter(w, "writes"), 1);
    cJSON *lease = t_get(w, "Lease/flux-system/ghcr-auth-refresh");
    ck_assert_str_eq(t_str(lease, "/spec/holderIdentity"), "");
    cJSON_Delete(lease);
    t->close(t);
    sim_world_close(w);
}
END_TEST

START_TEST(test_during_applies_its_event_before_the_nth_call)
{
    sim_world *w = t_build_open(t_path);
    sc_during during[] = {{.before_call = "kube.get Secret/flux-system/*",
                           .nth = 2,
                           .action = {.kind = "kube.patch",
                                      .args = cJSON_Parse("{\"ref\":\"Node/prod-worker-1\","
                                                          "\"merge-patch\":{\"spec\":"
                                                          "{\"unschedulable\":true}}}")}},
                          {.before_call = "kube.delete *",
                           .nth = 1,
                           .action = {.kind = "advance", .args = cJSON_Parse("{\"ms\":1}")}}};
    sc_run run = {.name = "stage", .during = during, .n_during = 2};
    rs_transport *t = sim_transport_open(w, "stage", &run);
    rs_resp r;
    ck_assert_int_eq(tp_kube_get(t, "Secret", "flux-system", "variables-base", &r), 200);
    rs_resp_free(&r);
    cJSON *node = t_get(w, "Node/prod-worker-1");
    ck_assert_ptr_null(jsonpointer_get(node, "/spec/unschedulable"));
    cJSON_Delete(node);
    ck_assert_int_eq(tp_kube_get(t, "Secret", "flux-system", "variables-base", &r), 200);
    rs_resp_free(&r);
    node = t_get(w, "Node/prod-worker-1");
    ck_assert(cJSON_IsTrue(jsonpointer_get(node, "/spec/unschedulable")));
    cJSON_Delete(node);
    ck_assert_int_eq(t_counter(w, "writes"), 0);
    ck_assert_int_eq(t_counter(w, "api_calls"), 2);
    size_t n = 0;
    char **unfired = sim_transport_unfired(t, &n);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(unfired[0], "during before-call kube.delete * nth 1 never fired");
    sim_strings_free(unfired, n);
    t->close(t);
    cJSON_Delete(during[0].action.args);
    cJSON_Delete(during[1].action.args);
    sim_world_close(w);
}
END_TEST

/* The crashing run: a separate process (re-executed, so a memory checker
 * watching the suite does not count what a kill -9 leaves unfreed). */
static int t_crash_child(const char *path)
{
    sim_world *cw = NULL;
    if (sim_world_open(path, &cw, NULL) != RS_OK) return 3;
    sc_fault faults[] = {{.on = "kube.patch Secret/*", .nth = 1, .effect = SC_FAULT_CRASH}};
    sc_run run = {.name = "stage", .faults = faults, .n_faults = 1};
    rs_transport *t = sim_transport_open(cw, "stage", &run);
    /* No ck_assert here: this process is not a Check test. */
    const char *bodies[] = {"{\"spec\":{\"holderIdentity\":\"c\"}}",
                            "{\"metadata\":{\"labels\":{\"x\":\"y\"}}}"};
    const char *kinds[] = {"Lease", "Secret"};
    const char *names[] = {"ghcr-auth-refresh", "variables-base"};
    for (int i = 0; i < 2; i++) {
        cJSON *body = cJSON_Parse(bodies[i]);
        rs_req req = {.op = RS_OP_KUBE_PATCH,
                      .kind = kinds[i],
                      .ns = "flux-system",
                      .name = names[i],
                      .patch_type = RS_PATCH_MERGE,
                      .body = body};
        rs_resp r;
        t->call(t, &req, &r);
        rs_resp_free(&r);
        cJSON_Delete(body);
    }
    return 4;
}

static char t_self[4096];

START_TEST(test_crash_ends_the_run_with_the_world_committed)
{
    sim_world *w = t_build_open(t_path);
    sim_world_close(w);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        execl(t_self, t_self, "--crash-child", t_path, (char *)NULL);
        _exit(5);
    }
    int wstatus = 0;
    ck_assert_int_eq(waitpid(pid, &wstatus, 0), pid);
    ck_assert(WIFEXITED(wstatus));
    ck_assert_int_eq(WEXITSTATUS(wstatus), 137);
    ck_assert_int_eq(sim_world_open(t_path, &w, NULL), RS_OK);
    ck_assert_int_eq(t_counter(w, "api_calls"), 2);
    ck_assert_int_eq(t_counter(w, "writes"), 1);
    cJSON *lease = t_get(w, "Lease/flux-system/ghcr-auth-refresh");
    ck_assert_str_eq(t_str(lease, "/spec/holderIdentity"), "c");
    cJSON_Delete(lease);
    cJSON *vars = t_get(w, "Secret/flux-system/variables-base");
    ck_assert_ptr_null(jsonpointer_get(vars, "/metadata/labels/x"));
    cJSON_Delete(vars);
    ck_assert_int_eq(sim_world_now_ms(w), 2 * SIM_CALL_MS);
    sim_world_close(w);
}
END_TEST

/* ---- Talos, registry, drains, events ---- */

START_TEST(test_talos_auth_loads_only_at_reboot)
{
    sim_world *w = t_build_open(t_path);
    rs_err e = {0};
    ck_assert_int_eq(t_event(w, "registry.revoke", "{\"credential\":\"previous\"}", &e), RS_OK);
    rs_transport *t = sim_transport_open(w, "stage", NULL);
    rs_resp r;
    const char *img = "{\"image\":\"ghcr.io/devantler-tech/ksail:v7.178.30\"}";
    ck_assert_int_eq(t_call(t, RS_OP_TALOS_PATCH, "prod-worker-1",
                            "{\"registry-auth\":{\"host\":\"ghcr.io\",\"auth\":"
                            "{\"username\":\"" CURRENT_USER "\",\"password\":\"" CURRENT_PASS
                            "\"}}}",
                            &r),
                     200);
    rs_resp_free(&r);
    char *cur = t_cred_text(w, "current");
    char *auth = sim_world_talos_auth(w, "prod-worker-1");
    ck_assert_str_eq(auth, cur);
    free(auth);
    ck_assert_int_eq(t_call(t, RS_OP_TALOS_READ_AUTH, "prod-worker-1", NULL, &r), 200);
    ck_assert_str_eq(t_str(r.body, "/auth/password"), CURRENT_PASS);
    rs_resp_free(&r);
    ck_assert_int_eq(t_call(t, RS_OP_TALOS_IMAGE_REMOVE, "prod-worker-1", img, &r), 200);
    rs_resp_free(&r);
    int64_t t0 = t->now_ms(t);
    ck_assert_int_eq(t_call(t, RS_OP_TALOS_IMAGE_PULL, "prod-worker-1", img, &r), 401);
    rs_resp_free(&r);
    ck_assert_int_eq(t->now_ms(t) - t0, SIM_CALL_MS + SIM_IMAGE_PULL_MS);
    ck_assert_int_eq(t_call(t, RS_OP_TALOS_REBOOT, "prod-worker-1", NULL, &r), 200);
    rs_resp_free(&r);
    cJSON *node = t_get(w, "Node/prod-worker-1");
    ck_assert_str_eq(simw_condition_status(node, "Ready"), "False");
    ck_assert_str_eq(t_str(node, "/spec/taints/0/key"), "node.kubernetes.io/not-ready");
    cJSON_Delete(node);
    t->sleep_ms(t, SIM_REBOOT_MS);
    /* Ready, while the not-ready taint (cleared by a separate write) and
     * Cilium's startup taint linger (DESIGN §3.3 r2; H95, H96). */
    node = t_get(w, "Node/prod-worker-1");
    ck_assert_str_eq(simw_condition_status(node, "Ready"), "True");
    ck_assert_int_eq(cJSON_GetArraySize(jsonpointer_get(node, "/spec/taints")), 2);
    cJSON_Delete(node);
    t->sleep_ms(t, SIMW_UNTAINT_MS);
    node = t_get(w, "Node/prod-worker-1");
    ck_assert_str_eq(t_str(node, "/spec/taints/0/key"), "node.cilium.io/agent-not-ready");
    ck_assert_int_eq(cJSON_GetArraySize(jsonpointer_get(node, "/spec/taints")), 1);
    cJSON_Delete(node);
    t->sleep_ms(t, SIMW_CILIUM_STARTUP_MS);
    node = t_get(w, "Node/prod-worker-1");
    ck_assert_ptr_null(jsonpointer_get(node, "/spec/taints"));
    cJSON_Delete(node);
    ck_assert_int_eq(t_call(t, RS_OP_TALOS_IMAGE_PULL, "prod-worker-1", img, &r), 200);
    rs_resp_free(&r);
    ck_assert_int_eq(t_call(t, RS_OP_TALOS_PATCH, "prod-worker-1",
                            "{\"node-annotations\":{\"platform.devantler.tech/"
                            "ghcr-pull-verified-revision-v2\":\"abc\"}}",
                            &r),
                     200);
    rs_resp_free(&r);
    node = t_get(w, "Node/prod-worker-1");
    ck_assert_str_eq(
        t_str(node,
              "/metadata/annotations/platform.devantler.tech~1ghcr-pull-verified-revision-v2"),
        "abc");
    cJSON_Delete(node);
    ck_assert_int_eq(t_call(t, RS_OP_TALOS_ETCD_STATUS, "prod-control-plane-1", NULL, &r), 200);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r.body, "healthy")));
    rs_resp_free(&r);
    ck_assert_int_eq(t_event(w, "etcd.unhealthy", "{\"node\":\"prod-control-plane-1\"}", &e),
                     RS_OK);
    ck_assert_int_eq(t_call(t, RS_OP_TALOS_ETCD_STATUS, "prod-control-plane-1", NULL, &r), 200);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(r.body, "healthy")));
    rs_resp_free(&r);
    ck_assert_int_eq(t_call(t, RS_OP_TALOS_ETCD_ALARMS, "prod-control-plane-1", NULL, &r), 200);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r.body, "alarms")), 0);
    rs_resp_free(&r);
    ck_assert_int_eq(t_call(t, RS_OP_TALOS_REBOOT, "prod-worker-99", NULL, &r), 404);
    rs_resp_free(&r);
    ck_assert_int_eq(t_counter(w, "node_reboots"), 1);
    ck_assert_int_eq(t_counter(w, "talos_mutations"), 5);
    ck_assert_int_eq(t_kind_writes(w, "talos.image-pull"), 1);
    ck_assert_int_eq(t_counter(w, "writes"), 5);
    free(cur);
    t->close(t);
    sim_world_close(w);
}
END_TEST

START_TEST(test_registry_tokens_and_manifests)
{
    sim_world *w = t_build_open(t_path);
    rs_transport *t = sim_transport_open(w, "stage", NULL);
    rs_resp r;
    const char *good = "{\"username\":\"" CURRENT_USER "\",\"password\":\"" CURRENT_PASS "\"}";
    ck_assert_int_eq(t_call(t, RS_OP_REGISTRY_TOKEN, "devantler-tech/ksail", good, &r), 200);
    char *tok = rs_xstrdup(t_str(r.body, "/token"));
    ck_assert_ptr_null(strstr(tok, CURRENT_PASS));
    rs_resp_free(&r);
    char *mbody = rs_xasprintf("{\"token\":\"%s\"}", tok);
    ck_assert_int_eq(
        t_call(t, RS_OP_REGISTRY_MANIFEST, "devantler-tech/ksail:v7.178.30", mbody, &r), 200);
    rs_resp_free(&r);
    ck_assert_int_eq(t_call(t, RS_OP_REGISTRY_MANIFEST, "devantler-tech/ksail:v0.0.1", mbody, &r),
                     404);
    rs_resp_free(&r);
    ck_assert_int_eq(
        t_call(t, RS_OP_REGISTRY_MANIFEST, "devantler-tech/wedding-app:latest", mbody, &r), 401);
    rs_resp_free(&r);
    ck_assert_int_eq(t_call(t, RS_OP_REGISTRY_TOKEN, "devantler-tech/ksail",
                            "{\"username\":\"old-bot\",\"password\":\"tok-revoked-0000\"}", &r),
                     401);
    rs_resp_free(&r);
    ck_assert_int_eq(t_call(t, RS_OP_REGISTRY_TOKEN, "devantler-tech/other", good, &r), 401);
    rs_resp_free(&r);
    ck_assert_int_eq(t_event(w, "registry.revoke", "{\"credential\":\"current\"}", NULL), RS_OK);
    ck_assert_int_eq(
        t_call(t, RS_OP_REGISTRY_MANIFEST, "devantler-tech/ksail:v7.178.30", mbody, &r), 401);
    rs_resp_free(&r);
    ck_assert_int_eq(t_counter(w, "writes"), 0);
    free(mbody);
    free(tok);
    t->close(t);
    sim_world_close(w);
}
END_TEST

START_TEST(test_eviction_drains_and_pdb_blocks)
{
    sim_world *w = t_build_open(t_path);
    rs_err e = {0};
    ck_assert_int_eq(t_event(w, "pdb.block", "{\"node\":\"prod-worker-2\",\"for_ms\":10000}", &e),
                     RS_OK);
    rs_transport *t = sim_transport_open(w, "stage", NULL);
    rs_resp r;
    rs_req ev = {.op = RS_OP_KUBE_EVICT,
                 .kind = "Pod",
                 .ns = "wedding-app",
                 .name = "wedding-app-prod-worker-1"};
    ck_assert_int_eq(t->call(t, &ev, &r), 201);
    rs_resp_free(&r);
    ck_assert_int_eq(t->call(t, &ev, &r), 201);
    rs_resp_free(&r);
    cJSON *pod = t_get(w, "Pod/wedding-app/wedding-app-prod-worker-1");
    ck_assert_ptr_nonnull(jsonpointer_get(pod, "/metadata/deletionTimestamp"));
    cJSON_Delete(pod);
    t->sleep_ms(t, SIM_EVICT_MS);
    cJSON *gone = NULL;
    ck_assert_int_eq(sim_world_get(w, "Pod/wedding-app/wedding-app-prod-worker-1", &gone), 404);
    cJSON_Delete(gone);
    rs_req blocked = {
        .op = RS_OP_KUBE_EVICT, .kind = "Pod", .ns = "default", .name = "workload-prod-worker-2"};
    ck_assert_int_eq(t->call(t, &blocked, &r), 429);
    rs_resp_free(&r);
    ck_assert_int_eq(t_counter(w, "node_drains"), 2);
    ck_assert_int_eq(t_counter(w, "writes"), 2);
    ck_assert_int_eq(t_kind_writes(w, "Pod"), 2);
    t->sleep_ms(t, 10000);
    ck_assert_int_eq(t->call(t, &blocked, &r), 201);
    rs_resp_free(&r);
    ck_assert_int_eq(t_counter(w, "node_drains"), 2);
    ck_assert_int_eq(t->call(t, &ev, &r), 404);
    rs_resp_free(&r);
    t->close(t);
    sim_world_close(w);
}
END_TEST

START_TEST(test_evicted_mirror_pod_comes_back_at_once)
{
    sim_world *w = t_build_open(t_path);
    rs_transport *t = sim_transport_open(w, "stage", NULL);
    cJSON *before = t_get(w, "Pod/kube-system/kube-scheduler-prod-control-plane-2");
    char *uid = rs_xstrdup(cJSON_GetStringValue(jsonpointer_get(before, "/metadata/uid")));
    cJSON_Delete(before);
    rs_req ev = {.op = RS_OP_KUBE_EVICT,
                 .kind = "Pod",
                 .ns = "kube-system",
                 .name = "kube-scheduler-prod-control-plane-2"};
    rs_resp r;
    ck_assert_int_eq(t->call(t, &ev, &r), 201);
    rs_resp_free(&r);
    /* The kubelet registered it again: present, not terminating, a new UID. */
    cJSON *after = t_get(w, "Pod/kube-system/kube-scheduler-prod-control-plane-2");
    ck_assert_ptr_null(jsonpointer_get(after, "/metadata/deletionTimestamp"));
    ck_assert_str_ne(cJSON_GetStringValue(jsonpointer_get(after, "/metadata/uid")), uid);
    cJSON_Delete(after);
    free(uid);
    t->close(t);
    sim_world_close(w);
}
END_TEST

START_TEST(test_event_errors_name_the_event)
{
    sim_world *w = t_build_open(t_path);
    rs_err e = {0};
    ck_assert_int_eq(
        t_event(w, "kube.patch", "{\"ref\":\"Secret/flux-system/nope\",\"merge-patch\":{}}", &e),
        RS_DATAERR);
    ck_assert_ptr_nonnull(strstr(e.msg, "kube.patch"));
    ck_assert_ptr_nonnull(strstr(e.msg, "404"));
    ck_assert_int_eq(t_event(w, "etcd.unhealthy", "{\"node\":\"prod-worker-77\"}", &e), RS_DATAERR);
    ck_assert_ptr_nonnull(strstr(e.msg, "prod-worker-77"));
    ck_assert_int_eq(t_event(w, "volcano.erupt", "{}", &e), RS_DATAERR);
    ck_assert_int_eq(t_event(w, "kube.apply",
                             "{\"object\":{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\","
                             "\"namespace\":\"default\"},\"data\":{\"a\":\"1\"}}}",
                             &e),
                     RS_OK);
    ck_assert_int_eq(
        t_event(w, "kube.apply",
                "{\"object\":{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\","
                "\"namespace\":\"default\",\"resourceVersion\":\"1\"},\"data\":{\"a\":\"2\"}}}",
                &e),
        RS_OK);
    cJSON *cm = t_get(w, "ConfigMap/default/c");
    ck_assert_str_eq(t_str(cm, "/data/a"), "2");
    cJSON_Delete(cm);
    ck_assert_int_eq(t_event(w, "advance", "{\"ms\":5000}", &e), RS_OK);
    ck_assert_int_eq(sim_world_now_ms(w), 5000);
    ck_assert_int_eq(t_counter(w, "api_calls"), 0);
    sim_world_close(w);
}
END_TEST

/* A long advance jumps the clock: the periodic controller timers skip whole
 * periods instead of firing thousands of times (an `advance: 100000h` once
 * ticked for minutes), yet the clock lands exactly on the target and every
 * periodic timer is re-armed within one period after it. */
START_TEST(test_long_advance_jumps_instead_of_ticking)
{
    sim_world *w = t_build_open(t_path);
    rs_err e = {0};
    long long rev0 = store_revision(w->st);
    int64_t target = 8784LL * 3600 * 1000; /* 366 days, the longest a scenario may give */
    ck_assert_int_eq(t_event(w, "advance", "{\"ms\":31622400000}", &e), RS_OK);
    ck_assert_int_eq(sim_world_now_ms(w), target);
    /* Ticking every ESO refresh (hourly, 4 objects) and Flux interval (10 min,
     * 2 Kustomizations) for a year writes far more than this. */
    ck_assert_int_lt(store_revision(w->st) - rev0, 2000);
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq(sqlite3_prepare_v2(w->db,
                                        "SELECT count(*), min(due_ms), max(due_ms) FROM timers"
                                        " WHERE kind IN ('eso.refresh', 'flux.tick')",
                                        -1, &st, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    ck_assert_int_eq(sqlite3_column_int(st, 0), 6);
    ck_assert_int_gt(sqlite3_column_int64(st, 1), target);
    ck_assert_int_le(sqlite3_column_int64(st, 2), target + 3600LL * 1000);
    sqlite3_finalize(st);
    sim_world_close(w);
}
END_TEST

START_TEST(test_node_events_and_liveness)
{
    sim_world *w = t_build_open(t_path);
    rs_err e = {0};
    cJSON *old = t_get(w, "Node/prod-worker-3");
    ck_assert_int_eq(t_event(w, "node.replace", "{\"node\":\"prod-worker-3\"}", &e), RS_OK);
    cJSON *fresh = t_get(w, "Node/prod-worker-3");
    ck_assert_str_ne(t_str(old, "/metadata/uid"), t_str(fresh, "/metadata/uid"));
    ck_assert_str_eq(t_str(fresh, "/status/addresses/0/address"), "10.1.0.3");
    ck_assert_ptr_null(t_str(
        fresh, "/metadata/annotations/platform.devantler.tech~1ghcr-pull-verified-revision-v2"));
    cJSON_Delete(old);
    cJSON_Delete(fresh);
    ck_assert_int_eq(t_event(w, "node.add", "{\"role\":\"worker\",\"name\":\"prod-worker-4\"}", &e),
                     RS_OK);
    cJSON *added = t_get(w, "Node/prod-worker-4");
    ck_assert_str_eq(t_str(added, "/status/addresses/0/address"), "10.1.0.4");
    cJSON_Delete(added);
    ck_assert_int_eq(t_event(w, "talos.partial-apply",
                             "{\"nodes\":[\"prod-worker-1\"],\"drop-node-annotations\":true,"
                             "\"registry-auth\":\"current\"}",
                             &e),
                     RS_OK);
    char *cur = t_cred_text(w, "current");
    char *auth = sim_world_talos_auth(w, "prod-worker-1");
    ck_assert_str_eq(auth, cur);
    free(auth);
    free(cur);
    cJSON *n1 = t_get(w, "Node/prod-worker-1");
    ck_assert_ptr_null(
        t_str(n1, "/metadata/annotations/platform.devantler.tech~1ghcr-pull-verified-image-v2"));
    cJSON_Delete(n1);
    ck_assert_int_eq(t_event(w, "runs.terminal", "[\"stage\"]", &e), RS_OK);
    rs_transport *t = sim_transport_open(w, "reassert", NULL);
    rs_resp r;
    ck_assert_int_eq(t_call(t, RS_OP_RUN_LIVENESS, "sim.stage", NULL, &r), 200);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r.body, "terminal")));
    rs_resp_free(&r);
    ck_assert_int_eq(t_call(t, RS_OP_RUN_LIVENESS, "sim.reassert", NULL, &r), 200);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(r.body, "terminal")));
    rs_resp_free(&r);
    t->close(t);
    char **secrets = NULL;
    size_t n = 0;
    ck_assert_int_eq(sim_world_secrets(w, &secrets, &n, NULL), RS_OK);
    ck_assert_uint_eq(n, 6);
    bool found = false;
    for (size_t i = 0; i < n; i++)
        found = found || strcmp(secrets[i], CURRENT_PASS) == 0;
    ck_assert(found);
    sim_strings_free(secrets, n);
    sim_world_close(w);
}
END_TEST

/* ---- volume (speed is measured by `make bench`, never asserted here) ---- */

START_TEST(test_sixty_node_world_counts_thousands_of_calls)
{
    t_scenario("previous", 3, 57, 11);
    sim_world *w = t_build_open(t_path);
    rs_transport *t = sim_transport_open(w, "stage", NULL);
    rs_resp r;
    for (int i = 0; i < 1000; i++) {
        tp_kube_get(t, "Secret", "flux-system", "variables-base", &r);
        rs_resp_free(&r);
        t_merge(t, "Secret", "flux-system", "variables-base",
                "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}");
        t->sleep_ms(t, 2000);
        if (i % 50 == 0) {
            tp_kube_list(t, "Node", NULL, NULL, NULL, &r);
            rs_resp_free(&r);
        }
    }
    ck_assert_int_eq(t_counter(w, "api_calls"), 2020);
    t->close(t);
    sim_world_close(w);
}
END_TEST

/* A path that is not a world is bad input (65), never an abort, and the
 * file is left byte for byte as it was, with nothing created beside it. */
static void t_not_a_world(const char *path, const char *content, size_t len, bool sqlite)
{
    unlink(path);
    if (sqlite) {
        sqlite3 *db = NULL;
        ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
        ck_assert_int_eq(
            sqlite3_exec(db, "CREATE TABLE t(a); INSERT INTO t VALUES (1);", NULL, NULL, NULL),
            SQLITE_OK);
        sqlite3_close(db);
    } else if (content) {
        FILE *f = fopen(path, "wb");
        ck_assert_ptr_nonnull(f);
        fwrite(content, 1, len, f);
        fclose(f);
    }
    char before[8192] = "", after[8192] = "";
    size_t nb = 0, na = 0;
    FILE *f = fopen(path, "rb");
    if (f) {
        nb = fread(before, 1, sizeof before, f);
        fclose(f);
    }
    sim_world *w = NULL;
    rs_err e = {0};
    ck_assert_int_eq(sim_world_open(path, &w, &e), RS_DATAERR);
    ck_assert_ptr_null(w);
    ck_assert_ptr_nonnull(strstr(e.msg, path));
    f = fopen(path, "rb");
    if (f) {
        na = fread(after, 1, sizeof after, f);
        fclose(f);
    }
    ck_assert_uint_eq(na, nb);
    ck_assert_int_eq(memcmp(before, after, nb), 0);
    const char *suffixes[] = {"-wal", "-shm", "-journal"};
    for (size_t i = 0; i < RS_ARRAY_LEN(suffixes); i++) {
        char p[160];
        snprintf(p, sizeof p, "%s%s", path, suffixes[i]);
        ck_assert_int_ne(access(p, F_OK), 0);
    }
    unlink(path);
}

START_TEST(test_open_refuses_what_is_not_a_world)
{
    t_not_a_world(t_path, NULL, 0, true);                     /* SQLite, no world tables */
    t_not_a_world(t_path, "", 0, false);                      /* empty file */
    t_not_a_world(t_path, "not an SQLite file\n", 19, false); /* text */
    t_not_a_world(t_path, NULL, 0, false);                    /* missing: not created */
    ck_assert_int_ne(access(t_path, F_OK), 0);
    sim_world *w = NULL;
    rs_err e = {0};
    ck_assert_int_eq(sim_world_open(t_dir, &w, &e), RS_DATAERR); /* a directory */
    ck_assert_ptr_null(w);
}
END_TEST

static Suite *world_suite(void)
{
    Suite *s = suite_create("world");
    TCase *tc = tcase_create("world");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_prod_preset_is_converged_on_the_cluster_credential);
    tcase_add_test(tc, test_prod_preset_pods_per_node);
    tcase_add_test(tc, test_unknown_cluster_credential_is_a_data_error);
    tcase_add_test(tc, test_open_refuses_what_is_not_a_world);
    tcase_add_test(tc, test_pushsecret_force_sync_reaches_openbao_after_the_eso_delay);
    tcase_add_test(tc, test_pushsecret_without_source_is_not_ready);
    tcase_add_test(tc, test_raft_restore_reverts_the_seed_but_pushsecret_stays_ready);
    tcase_add_test(tc, test_restart_rolls_the_controller_pods);
    tcase_add_test(tc, test_flux_reconcile_honours_suspend);
    tcase_add_test(tc, test_read_counts_an_api_call_only);
    tcase_add_test(tc, test_write_counting_follows_the_api_server);
    tcase_add_test(tc, test_lease_and_policy_counters);
    tcase_add_test(tc, test_fence_acquisition_counts_once_the_rollout_completes);
    tcase_add_test(tc, test_same_seed_same_world);
    tcase_add_test(tc, test_faults_fail_timeout_and_nth);
    tcase_add_test(tc, test_lost_response_is_applied_but_unanswered);
    tcase_add_test(tc, test_during_applies_its_event_before_the_nth_call);
    tcase_add_test(tc, test_crash_ends_the_run_with_the_world_committed);
    tcase_add_test(tc, test_talos_auth_loads_only_at_reboot);
    tcase_add_test(tc, test_registry_tokens_and_manifests);
    tcase_add_test(tc, test_eviction_drains_and_pdb_blocks);
    tcase_add_test(tc, test_event_errors_name_the_event);
    tcase_add_test(tc, test_node_events_and_liveness);
    tcase_add_test(tc, test_long_advance_jumps_instead_of_ticking);
    tcase_add_test(tc, test_sixty_node_world_counts_thousands_of_calls);
    tcase_add_test(tc, test_evicted_mirror_pod_comes_back_at_once);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--crash-child") == 0) return t_crash_child(argv[2]);
    ssize_t n = readlink("/proc/self/exe", t_self, sizeof t_self - 1);
    if (n <= 0) return EXIT_FAILURE;
    t_self[n] = '\0';
    SRunner *sr = srunner_create(world_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
