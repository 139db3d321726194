/*
 * world_preset.c — the `prod` preset (DESIGN.md §5): every object of the §1
 * chain, converged on the scenario's cluster credential, plus the catalogue,
 * OpenBao seed and Talos machines.
 *
 * The one idea: a preset world is what a healthy production cluster looks
 * like right after a successful deploy — a no-drift run against it must find
 * nothing to write.
 */
#include "sim/world/world_internal.h"

#include "sim/store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PRESET_DS_NAME "kube-proxy"

static const char *const preset_default_fanout[] = {"wedding-app", "ascoachingogvaner", "kyverno"};

/* ---- catalogue ---- */

static char *preset_default_ciphertext(const char *name)
{
    return rs_xasprintf("ENC[AES256_GCM,data:sim-%s,iv:sim,tag:sim,type:str]", name);
}

static void preset_catalogue_insert(sim_world *w, const sim_world_cred *c)
{
    char *text = c->dockerconfigjson ? rs_xstrdup(c->dockerconfigjson)
                                     : simw_dockerconfig(c->username ? c->username : "",
                                                         c->password ? c->password : "");
    char *user = NULL, *pass = NULL;
    simw_dockerconfig_auth(text, &user, &pass);
    char *cipher = c->ciphertext ? rs_xstrdup(c->ciphertext) : preset_default_ciphertext(c->name);
    char *pulls = NULL;
    if (c->pulls) {
        cJSON *arr = cJSON_CreateArray();
        for (size_t i = 0; i < c->n_pulls; i++)
            cJSON_AddItemToArray(arr, cJSON_CreateString(c->pulls[i]));
        pulls = cJSON_PrintUnformatted(arr);
        cJSON_Delete(arr);
    }
    sqlite3_stmt *st = simw_stmt(w, "INSERT OR REPLACE INTO catalogue(name, dockerconfigjson,"
                                    " ciphertext, username, password, revoked, pulls)"
                                    " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    sqlite3_bind_text(st, 1, c->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, text, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, cipher, -1, SQLITE_STATIC);
    if (user) sqlite3_bind_text(st, 4, user, -1, SQLITE_STATIC);
    if (pass) sqlite3_bind_text(st, 5, pass, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 6, c->revoked ? 1 : 0);
    if (pulls) sqlite3_bind_text(st, 7, pulls, -1, SQLITE_STATIC);
    simw_step_done(w, st);
    if (c->manifest_denial) simw_registry_manifest_denial_set(w, c->name, c->manifest_denial);
    free(text);
    free(user);
    free(pass);
    free(cipher);
    free(pulls);
}

/* ---- object helpers ---- */

static cJSON *preset_meta(cJSON *obj, const char *kind, const char *ns, const char *name)
{
    const char *api = store_api_version(kind);
    if (api) cJSON_AddStringToObject(obj, "apiVersion", api);
    cJSON_AddStringToObject(obj, "kind", kind);
    cJSON *meta = cJSON_AddObjectToObject(obj, "metadata");
    cJSON_AddStringToObject(meta, "name", name);
    if (ns && ns[0]) cJSON_AddStringToObject(meta, "namespace", ns);
    return meta;
}

static cJSON *preset_object(const char *kind, const char *ns, const char *name, cJSON **meta)
{
    cJSON *obj = cJSON_CreateObject();
    cJSON *m = preset_meta(obj, kind, ns, name);
    if (meta) *meta = m;
    return obj;
}

/* Creates obj (consumed); returns the stored object (caller frees) or NULL,
 * with e set, when the store refuses — which would be a preset bug. */
static cJSON *preset_create(sim_world *w, cJSON *obj, rs_err *e)
{
    const char *kind = cJSON_GetObjectItemCaseSensitive(obj, "kind")->valuestring;
    const char *path_ns[] = {"metadata", "namespace"};
    const char *path_name[] = {"metadata", "name"};
    const char *ns = simw_json_str(obj, path_ns, 2);
    const char *name = simw_json_str(obj, path_name, 2);
    cJSON *out = NULL;
    int status = store_create(w->st, kind, ns, obj, &out);
    if (status != 201 && status != 200) {
        rs_fail(e, RS_FAILED, "preset object %s/%s/%s could not be created (HTTP %d)", kind,
                ns ? ns : "", name ? name : "", status);
        cJSON_Delete(out);
        out = NULL;
    }
    cJSON_Delete(obj);
    return out;
}

static bool preset_create_drop(sim_world *w, cJSON *obj, rs_err *e)
{
    cJSON *out = preset_create(w, obj, e);
    cJSON_Delete(out);
    return out != NULL;
}

static const char *obj_rv(const cJSON *obj)
{
    const char *path[] = {"metadata", "resourceVersion"};
    return simw_json_str(obj, path, 2);
}

static void add_ready(cJSON *obj, const char *reason, int64_t wall_ms)
{
    cJSON *status = cJSON_GetObjectItemCaseSensitive(obj, "status");
    if (!status) status = cJSON_AddObjectToObject(obj, "status");
    cJSON *conds = cJSON_AddArrayToObject(status, "conditions");
    cJSON_AddItemToArray(conds, simw_condition("Ready", "True", reason, reason, wall_ms));
}

/* ---- the chain (§1) ---- */

static bool preset_namespaces(sim_world *w, rs_err *e)
{
    const char *fixed[] = {"flux-system", "kube-system", "default", "wedding-app"};
    size_t n = RS_ARRAY_LEN(fixed) + w->cfg.n_fanout;
    for (size_t i = 0; i < n; i++) {
        const char *ns =
            i < RS_ARRAY_LEN(fixed) ? fixed[i] : w->cfg.fanout_namespaces[i - RS_ARRAY_LEN(fixed)];
        cJSON *existing = simw_get(w, "Namespace", NULL, ns);
        if (existing) {
            cJSON_Delete(existing);
            continue;
        }
        cJSON *obj = preset_object("Namespace", NULL, ns, NULL);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(obj, "status"), "phase", "Active");
        if (!preset_create_drop(w, obj, e)) return false;
    }
    return true;
}

static bool preset_crds(sim_world *w, rs_err *e)
{
    const char *kinds[] = {"PushSecret", "ExternalSecret"};
    const char *plurals[] = {"pushsecrets", "externalsecrets"};
    for (size_t i = 0; i < 2; i++) {
        char *name = rs_xasprintf("%s.external-secrets.io", plurals[i]);
        cJSON *obj = preset_object("CustomResourceDefinition", NULL, name, NULL);
        free(name);
        cJSON *spec = cJSON_AddObjectToObject(obj, "spec");
        cJSON_AddStringToObject(spec, "group", "external-secrets.io");
        cJSON_AddStringToObject(spec, "scope", "Namespaced");
        cJSON *names = cJSON_AddObjectToObject(spec, "names");
        cJSON_AddStringToObject(names, "kind", kinds[i]);
        cJSON_AddStringToObject(names, "plural", plurals[i]);
        if (!preset_create_drop(w, obj, e)) return false;
    }
    return true;
}

static cJSON *preset_secret(const char *ns, const char *name, const char *type, const char *key,
                            const char *text)
{
    cJSON *obj = preset_object("Secret", ns, name, NULL);
    cJSON_AddStringToObject(obj, "type", type);
    char *b64 = base64_encode(text, strlen(text));
    cJSON_AddStringToObject(cJSON_AddObjectToObject(obj, "data"), key, b64);
    free(b64);
    return obj;
}

static bool preset_pushsecret(sim_world *w, const char *variables_rv, rs_err *e)
{
    const rs_config *c = &w->cfg;
    cJSON *obj = preset_object("PushSecret", c->pushsecret_ns, c->pushsecret_name, NULL);
    cJSON *spec = cJSON_AddObjectToObject(obj, "spec");
    cJSON_AddStringToObject(spec, "refreshInterval", "1h");
    cJSON *store = cJSON_CreateObject();
    cJSON_AddStringToObject(store, "name", "openbao");
    cJSON_AddStringToObject(store, "kind", "ClusterSecretStore");
    cJSON_AddItemToArray(cJSON_AddArrayToObject(spec, "secretStoreRefs"), store);
    cJSON *sel = cJSON_AddObjectToObject(cJSON_AddObjectToObject(spec, "selector"), "secret");
    cJSON_AddStringToObject(sel, "name", c->variables_name);
    cJSON *item = cJSON_CreateObject();
    cJSON *match = cJSON_AddObjectToObject(item, "match");
    cJSON_AddStringToObject(match, "secretKey", c->variables_key);
    cJSON *remote = cJSON_AddObjectToObject(match, "remoteRef");
    cJSON_AddStringToObject(remote, "remoteKey", c->openbao_path);
    cJSON_AddStringToObject(remote, "property", c->openbao_property);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(spec, "data"), item);
    add_ready(obj, "Synced", simw_wall_start(w));
    char ts[32];
    simw_rfc3339(simw_wall_start(w), ts);
    cJSON *status = cJSON_GetObjectItemCaseSensitive(obj, "status");
    cJSON_AddStringToObject(status, "refreshTime", ts);
    cJSON_AddStringToObject(status, "syncedResourceVersion", variables_rv ? variables_rv : "");
    return preset_create_drop(w, obj, e);
}

static bool preset_externalsecret(sim_world *w, const char *ns, const char *text, rs_err *e)
{
    const rs_config *c = &w->cfg;
    cJSON *obj = preset_object("ExternalSecret", ns, c->externalsecret_name, NULL);
    cJSON *spec = cJSON_AddObjectToObject(obj, "spec");
    cJSON_AddStringToObject(spec, "refreshInterval", "1h");
    cJSON *store = cJSON_AddObjectToObject(spec, "secretStoreRef");
    cJSON_AddStringToObject(store, "name", "openbao");
    cJSON_AddStringToObject(store, "kind", "ClusterSecretStore");
    cJSON *target = cJSON_AddObjectToObject(spec, "target");
    cJSON_AddStringToObject(target, "name", c->consumer_name);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(target, "template"), "type",
                            "kubernetes.io/dockerconfigjson");
    cJSON *item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "secretKey", c->consumer_key);
    cJSON *remote = cJSON_AddObjectToObject(item, "remoteRef");
    cJSON_AddStringToObject(remote, "key", c->openbao_path);
    cJSON_AddStringToObject(remote, "property", c->openbao_property);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(spec, "data"), item);
    add_ready(obj, "SecretSynced", simw_wall_start(w));
    char ts[32];
    simw_rfc3339(simw_wall_start(w), ts);
    cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(obj, "status"), "refreshTime", ts);
    if (!preset_create_drop(w, obj, e)) return false;
    return preset_create_drop(w,
                              preset_secret(ns, c->consumer_name, "kubernetes.io/dockerconfigjson",
                                            c->consumer_key, text),
                              e);
}

static bool preset_chain(sim_world *w, const char *text, rs_err *e)
{
    const rs_config *c = &w->cfg;
    cJSON *vars = preset_create(
        w, preset_secret(c->variables_ns, c->variables_name, "Opaque", c->variables_key, text), e);
    if (!vars) return false;
    bool ok = preset_pushsecret(w, obj_rv(vars), e);
    cJSON_Delete(vars);
    if (!ok) return false;
    cJSON *seed = cJSON_CreateObject();
    cJSON_AddStringToObject(seed, c->openbao_property, text);
    simw_bao_write(w, c->openbao_path, seed);
    cJSON_Delete(seed);
    for (size_t i = 0; i < c->n_fanout; i++)
        if (!preset_externalsecret(w, c->fanout_namespaces[i], text, e)) return false;
    return preset_create_drop(w,
                              preset_secret(c->root_ns, c->root_name,
                                            "kubernetes.io/dockerconfigjson", c->root_key, text),
                              e);
}

/* ---- fences' objects: Lease, Kustomizations, controller Deployment ---- */

static bool preset_flux(sim_world *w, rs_err *e)
{
    const rs_config *c = &w->cfg;
    cJSON *lease = preset_object("Lease", c->lease_ns, c->lease_name, NULL);
    cJSON *ls = cJSON_AddObjectToObject(lease, "spec");
    cJSON_AddStringToObject(ls, "holderIdentity", "");
    cJSON_AddNumberToObject(ls, "leaseDurationSeconds", c->lease_duration_s);
    if (!preset_create_drop(w, lease, e)) return false;
    const char *ks_ns[] = {c->parent_ns, c->child_ns};
    const char *ks_name[] = {c->parent_name, c->child_name};
    const char *ks_path[] = {"./k8s/clusters/prod", "./k8s/infrastructure"};
    for (size_t i = 0; i < 2; i++) {
        cJSON *ks = preset_object("Kustomization", ks_ns[i], ks_name[i], NULL);
        cJSON *spec = cJSON_AddObjectToObject(ks, "spec");
        cJSON_AddStringToObject(spec, "interval", "10m");
        cJSON_AddStringToObject(spec, "path", ks_path[i]);
        cJSON_AddBoolToObject(spec, "prune", true);
        cJSON_AddBoolToObject(spec, "suspend", false);
        cJSON *src = cJSON_AddObjectToObject(spec, "sourceRef");
        cJSON_AddStringToObject(src, "kind", "GitRepository");
        cJSON_AddStringToObject(src, "name", "flux-system");
        add_ready(ks, "ReconciliationSucceeded", simw_wall_start(w));
        cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(ks, "status"),
                                "lastAppliedRevision",
                                "main@sha1:0000000000000000000000000000000000000001");
        if (!preset_create_drop(w, ks, e)) return false;
    }
    cJSON *dep = preset_object("Deployment", c->controller_ns, c->controller_name, NULL);
    cJSON *spec = cJSON_AddObjectToObject(dep, "spec");
    cJSON_AddNumberToObject(spec, "replicas", 2);
    cJSON_AddStringToObject(
        cJSON_AddObjectToObject(cJSON_AddObjectToObject(spec, "selector"), "matchLabels"), "app",
        "kustomize-controller");
    cJSON *tmpl = cJSON_AddObjectToObject(spec, "template");
    cJSON *tmeta = cJSON_AddObjectToObject(tmpl, "metadata");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(tmeta, "labels"), "app",
                            "kustomize-controller");
    cJSON_AddObjectToObject(tmeta, "annotations");
    cJSON *container = cJSON_CreateObject();
    cJSON_AddStringToObject(container, "name", "manager");
    cJSON_AddStringToObject(container, "image", "ghcr.io/fluxcd/kustomize-controller:v1.5.1");
    cJSON *tspec = cJSON_AddObjectToObject(tmpl, "spec");
    cJSON_AddItemToArray(cJSON_AddArrayToObject(tspec, "containers"), container);
    return preset_create_drop(w, dep, e);
}

/* ---- nodes and their pods ---- */

char *simw_boot_id(const char *node, int64_t n)
{
    /* Shaped like the kernel's random boot_id, derived from name and boot
     * number so runs stay reproducible. */
    uint32_t h = 2166136261u;
    for (const char *p = node; *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    return rs_xasprintf("%08x-%04x-4%03x-8000-%012llx", h, (unsigned)(n & 0xffff),
                        (unsigned)((h >> 8) & 0xfff), (unsigned long long)n);
}

cJSON *simw_node_object(sim_world *w, const char *name, bool control_plane, int index,
                        const char *revision)
{
    cJSON *meta = NULL;
    cJSON *node = preset_object("Node", NULL, name, &meta);
    cJSON *labels = cJSON_AddObjectToObject(meta, "labels");
    cJSON_AddStringToObject(labels, "kubernetes.io/hostname", name);
    cJSON_AddStringToObject(labels, "kubernetes.io/os", "linux");
    if (control_plane) cJSON_AddStringToObject(labels, "node-role.kubernetes.io/control-plane", "");
    cJSON *ann = cJSON_AddObjectToObject(meta, "annotations");
    if (revision) {
        cJSON_AddStringToObject(ann, w->cfg.ann.revision, revision);
        cJSON_AddStringToObject(ann, w->cfg.ann.image, w->cfg.operator_image);
    }
    cJSON_AddObjectToObject(node, "spec");
    cJSON *status = cJSON_AddObjectToObject(node, "status");
    cJSON *addrs = cJSON_AddArrayToObject(status, "addresses");
    char ip[32];
    if (control_plane)
        snprintf(ip, sizeof ip, "10.0.0.%d", index);
    else
        snprintf(ip, sizeof ip, "10.1.%d.%d", index / 256, index % 256);
    cJSON *a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "type", "InternalIP");
    cJSON_AddStringToObject(a, "address", ip);
    cJSON_AddItemToArray(addrs, a);
    a = cJSON_CreateObject();
    cJSON_AddStringToObject(a, "type", "Hostname");
    cJSON_AddStringToObject(a, "address", name);
    cJSON_AddItemToArray(addrs, a);
    char *boot = simw_boot_id(name, 0);
    cJSON *info = cJSON_AddObjectToObject(status, "nodeInfo");
    cJSON_AddStringToObject(info, "bootID", boot);
    free(boot);
    /* What a Talos node reports (kubectl get nodes' VERSION, -o wide). */
    cJSON_AddStringToObject(info, "kubeletVersion", "v1.32.0");
    cJSON_AddStringToObject(info, "osImage", "Talos (v1.9.5)");
    cJSON_AddStringToObject(info, "kernelVersion", "6.12.18-talos");
    cJSON_AddStringToObject(info, "containerRuntimeVersion", "containerd://2.0.3");
    cJSON_AddStringToObject(info, "operatingSystem", "linux");
    cJSON_AddStringToObject(info, "architecture", "amd64");
    cJSON_AddStringToObject(info, "kubeProxyVersion", "v1.32.0");
    char *machine = simw_boot_id(name, -1); /* stable across reboots */
    cJSON_AddStringToObject(info, "machineID", machine);
    cJSON_AddStringToObject(info, "systemUUID", machine);
    free(machine);
    cJSON *conds = cJSON_AddArrayToObject(status, "conditions");
    cJSON_AddItemToArray(conds, simw_condition("Ready", "True", "KubeletReady",
                                               "kubelet is posting ready status", simw_wall(w)));
    return node;
}

/* What runs a preset pod: a workload controller, a DaemonSet, or the
 * kubelet itself (a static pod, seen through the API as a mirror pod). */
typedef enum preset_owner { PRESET_WORKLOAD, PRESET_DAEMONSET, PRESET_STATIC } preset_owner;

static void preset_owner_ref(cJSON *meta, const char *kind, const char *name, const char *uid)
{
    cJSON *owner = cJSON_CreateObject();
    cJSON_AddStringToObject(owner, "apiVersion", strcmp(kind, "Node") == 0 ? "v1" : "apps/v1");
    cJSON_AddStringToObject(owner, "kind", kind);
    cJSON_AddStringToObject(owner, "name", name);
    cJSON_AddStringToObject(owner, "uid", uid);
    cJSON_AddBoolToObject(owner, "controller", true);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(meta, "ownerReferences"), owner);
}

static cJSON *preset_pod(sim_world *w, const char *ns, const char *name, const char *node,
                         const char *app, preset_owner owner)
{
    cJSON *meta = NULL;
    cJSON *pod = preset_object("Pod", ns, name, &meta);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(meta, "labels"), "app", app);
    if (owner == PRESET_DAEMONSET)
        preset_owner_ref(meta, "DaemonSet", PRESET_DS_NAME, "sim-daemonset-" PRESET_DS_NAME);
    if (owner == PRESET_STATIC) {
        /* As the kubelet registers a static pod: the mirror annotation and
         * the Node as its controller. */
        char *hash = rs_xasprintf("sim-static-%s", name);
        cJSON_AddStringToObject(cJSON_AddObjectToObject(meta, "annotations"),
                                w->cfg.ann.config_mirror, hash);
        free(hash);
        char *uid = rs_xasprintf("sim-node-%s", node);
        preset_owner_ref(meta, "Node", node, uid);
        free(uid);
    }
    cJSON *spec = cJSON_AddObjectToObject(pod, "spec");
    cJSON_AddStringToObject(spec, "nodeName", node);
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "name", app);
    cJSON_AddStringToObject(c, "image", "registry.example/workload:1");
    cJSON_AddItemToArray(cJSON_AddArrayToObject(spec, "containers"), c);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(pod, "status"), "phase", "Running");
    add_ready(pod, "PodReady", simw_wall(w));
    return pod;
}

/* The pods a node runs in the preset; missing ones are (re)created — after a
 * reboot the evicted workload pods are scheduled back onto the node, and the
 * kubelet recreates a deleted mirror pod at once. Every node runs the
 * DaemonSet pod; workers run two workload pods; control planes run
 * kube-apiserver, kube-controller-manager and kube-scheduler as static pods
 * (as every Talos control plane does: DESIGN §3.3 r2). */
void simw_node_pods_ensure(sim_world *w, const char *node)
{
    sqlite3_stmt *st = simw_stmt(w, "SELECT role FROM talos WHERE node = ?1");
    sqlite3_bind_text(st, 1, node, -1, SQLITE_STATIC);
    char *role = simw_step_row(w, st) ? simw_col_text(st, 0) : NULL;
    sqlite3_reset(st);
    bool worker = role && strcmp(role, "worker") == 0;
    free(role);
    static const struct {
        const char *ns, *app;
        preset_owner owner;
        bool worker; /* runs on workers (else on control planes) */
    } pods[] = {
        {"kube-system", PRESET_DS_NAME, PRESET_DAEMONSET, true},
        {"kube-system", PRESET_DS_NAME, PRESET_DAEMONSET, false},
        {"wedding-app", "wedding-app", PRESET_WORKLOAD, true},
        {"default", "workload", PRESET_WORKLOAD, true},
        {"kube-system", "kube-apiserver", PRESET_STATIC, false},
        {"kube-system", "kube-controller-manager", PRESET_STATIC, false},
        {"kube-system", "kube-scheduler", PRESET_STATIC, false},
    };
    for (size_t i = 0; i < RS_ARRAY_LEN(pods); i++) {
        if (pods[i].worker != worker) continue;
        char *name = rs_xasprintf("%s-%s", pods[i].app, node);
        cJSON *existing = simw_get(w, "Pod", pods[i].ns, name);
        if (!existing) {
            cJSON *pod = preset_pod(w, pods[i].ns, name, node, pods[i].app, pods[i].owner);
            cJSON *out = NULL;
            store_create(w->st, "Pod", pods[i].ns, pod, &out);
            cJSON_Delete(out);
            cJSON_Delete(pod);
        }
        cJSON_Delete(existing);
        free(name);
    }
}

static bool preset_nodes(sim_world *w, const sim_world_desc *d, const char *revision,
                         const cJSON *auth, rs_err *e)
{
    int counts[2] = {d->control_planes, d->workers};
    const char *roles[2] = {"control-plane", "worker"};
    cJSON *ann = cJSON_CreateObject();
    cJSON_AddStringToObject(ann, w->cfg.ann.revision, revision);
    cJSON_AddStringToObject(ann, w->cfg.ann.image, w->cfg.operator_image);
    bool ok = true;
    for (int r = 0; r < 2 && ok; r++) {
        for (int i = 1; i <= counts[r] && ok; i++) {
            char *name = rs_xasprintf("prod-%s-%d", roles[r], i);
            ok = preset_create_drop(w, simw_node_object(w, name, r == 0, i, revision), e);
            if (ok) {
                simw_talos_insert(w, name, roles[r], auth, ann, 1);
                simw_node_pods_ensure(w, name);
            }
            free(name);
        }
    }
    cJSON_Delete(ann);
    return ok;
}

/* ---- meta ---- */

static void preset_meta_rows(sim_world *w, const sim_world_desc *d)
{
    cJSON *cluster = cJSON_CreateObject();
    cJSON_AddStringToObject(cluster, "preset", "prod");
    cJSON_AddNumberToObject(cluster, "control_planes", d->control_planes);
    cJSON_AddNumberToObject(cluster, "workers", d->workers);
    cJSON *fan = cJSON_AddArrayToObject(cluster, "fanout");
    for (size_t i = 0; i < w->cfg.n_fanout; i++)
        cJSON_AddItemToArray(fan, cJSON_CreateString(w->cfg.fanout_namespaces[i]));
    cJSON_AddStringToObject(cluster, "credential", d->credential);
    char *text = cJSON_PrintUnformatted(cluster);
    simw_meta_set(w, "cluster", text);
    free(text);
    cJSON_Delete(cluster);
    simw_clocks_set(w, d->clock_ms, d->wall_start_set ? d->wall_start_ms : SIMW_EPOCH_MS);
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)d->seed);
    simw_meta_set(w, "seed", buf);
    simw_meta_set(w, "rng", buf);
    simw_meta_set(w, "run", "");
    simw_meta_set_int(w, "next_control-plane", d->control_planes + 1);
    simw_meta_set_int(w, "next_worker", d->workers + 1);
}

static void preset_config(sim_world *w, const sim_world_desc *d)
{
    rs_config_defaults(&w->cfg);
    if (d->fanout_namespaces && d->n_fanout > 0)
        rs_config_set_list(w->cfg.fanout_namespaces, &w->cfg.n_fanout, d->fanout_namespaces,
                           d->n_fanout);
    else
        rs_config_set_list(w->cfg.fanout_namespaces, &w->cfg.n_fanout, preset_default_fanout,
                           RS_ARRAY_LEN(preset_default_fanout));
}

rs_code simw_preset_build(sim_world *w, const sim_world_desc *d, rs_err *e)
{
    if (!d->preset || strcmp(d->preset, "prod") != 0)
        return rs_fail(e, RS_DATAERR, "cluster preset %s is not known (only prod is)",
                       d->preset ? d->preset : "(none)");
    preset_config(w, d);
    for (size_t i = 0; i < d->n_catalogue; i++)
        preset_catalogue_insert(w, &d->catalogue[i]);
    char *text = NULL, *cipher = NULL;
    if (!d->credential || sim_world_credential(w, d->credential, &text, &cipher, e) != RS_OK)
        return rs_fail(e, RS_DATAERR, "cluster credential %s is not in the catalogue",
                       d->credential ? d->credential : "(none)");
    preset_meta_rows(w, d);
    char revision[65];
    sha256_hex(cipher, strlen(cipher), revision);
    cJSON *auth = simw_cred_auth(w, d->credential);
    bool ok = preset_namespaces(w, e) && preset_crds(w, e) && preset_chain(w, text, e) &&
              preset_flux(w, e) && preset_nodes(w, d, revision, auth, e);
    cJSON_Delete(auth);
    free(text);
    free(cipher);
    return ok ? RS_OK : e ? e->code : RS_FAILED;
}
