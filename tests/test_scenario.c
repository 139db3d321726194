/*
 * test_scenario.c — the scenario loader (sim/scenario.h, DESIGN.md §5).
 *
 * Valid files must load into exactly the structs the runner expects (both
 * DESIGN.md §5 examples verbatim, defaults, fan-out expansion, catalogue
 * override, per-strategy merge), and every malformed file must fail with
 * RS_DATAERR and the exact "<file>:<line>:<col>: <field>: <problem>" prefix,
 * because that prefix is what an engineer reads in CI to find the typo.
 * Each test writes its YAML into its own mkdtemp directory.
 *
 * Over 600 lines: the loader's error table (one line per malformed input
 * with its exact file:line:col) is long by design.
 */
#include "sim/scenario/scenario.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TS_PATH_MAX 512

/* ---- helpers ----------------------------------------------------------- */

typedef struct ts_file {
    char dir[TS_PATH_MAX];
    char path[TS_PATH_MAX + 16];
} ts_file;

static void ts_write(ts_file *f, const char *yaml)
{
    snprintf(f->dir, sizeof f->dir, "/tmp/test_scenario.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/s.yaml", f->dir);
    FILE *fp = fopen(f->path, "w");
    ck_assert_ptr_nonnull(fp);
    fputs(yaml, fp);
    fclose(fp);
}

static void ts_remove(ts_file *f)
{
    unlink(f->path);
    rmdir(f->dir);
}

static sc_scenario *ts_load_ok(const char *yaml)
{
    ts_file f;
    rs_err e = {0};
    sc_scenario *sc = NULL;
    ts_write(&f, yaml);
    rs_code rc = sc_load(f.path, &sc, &e);
    ts_remove(&f);
    ck_assert_msg(rc == RS_OK, "load failed: %s", e.msg);
    ck_assert_ptr_nonnull(sc);
    return sc;
}

/* Loads yaml, expects RS_DATAERR and a message starting with
 * "<path>:" + want. Returns the message for further checks. */
static void ts_load_err(const char *yaml, const char *want, rs_err *e)
{
    ts_file f;
    sc_scenario *sc = (sc_scenario *)1;
    ts_write(&f, yaml);
    rs_code rc = sc_load(f.path, &sc, e);
    ts_remove(&f);
    ck_assert_int_eq(rc, RS_DATAERR);
    ck_assert_int_eq(e->code, RS_DATAERR);
    ck_assert_ptr_null(sc);
    char prefix[TS_PATH_MAX * 4];
    snprintf(prefix, sizeof prefix, "%s:%s", f.path, want);
    ck_assert_msg(strncmp(e->msg, prefix, strlen(prefix)) == 0, "got  '%s'\nwant '%s...'", e->msg,
                  prefix);
}

static void ts_err(const char *yaml, const char *want)
{
    rs_err e = {0};
    ts_load_err(yaml, want, &e);
}

/* The head every error case builds on: runs[0] is "a", its keys at line 8. */
#define TS_HEAD                                                                                    \
    "name: t\n"                                                                                    \
    "cluster:\n"                                                                                   \
    "  preset: prod\n"                                                                             \
    "  credential: current\n"                                                                      \
    "desired: current\n"                                                                           \
    "runs:\n"                                                                                      \
    "  - name: a\n"

static const char ts_example_1[] =
    "# Hazard: the Reassert after a rotation deploy has nothing to change, yet\n"
    "# production restarts the GitOps engine and churns the Lease.\n"
    "name: two-run-stage-reassert\n"
    "about: Stage on a cluster holding the previous credential, then Reassert.\n"
    "seed: 7\n"
    "cluster:\n"
    "  preset: prod\n"
    "  credential: previous        # what the whole cluster holds at start\n"
    "desired: current              # the credential this deploy brings\n"
    "runs:\n"
    "  - name: stage\n"
    "    args: [--record-runtime-proof, \"{tmp}/proof.json\"]  # {tmp}: private dir per "
    "execution\n"
    "    expect:\n"
    "      exit: 0\n"
    "      delta: {controller_restarts: 1, fence_acquisitions: 1, node_reboots: 6}\n"
    "  - name: reassert\n"
    "    args: [--reuse-runtime-proof, \"{tmp}/proof.json\"]\n"
    "    expect:\n"
    "      exit: 0\n"
    "      delta: {controller_restarts: 0, writes: 0, lease_writes: 0, lease_rv_moved: false}\n"
    "      by-strategy:            # per-strategy overrides of the keys above\n"
    "        eager: {delta: {controller_restarts: 1, writes: \">=1\", lease_writes: \">=1\", "
    "lease_rv_moved: true}}\n";

static const char ts_example_2[] =
    "# Hazard: OpenBao restored from an old raft snapshot, read blips, a lost\n"
    "# response, and another actor cordoning a node mid-run.\n"
    "name: stale-seed-with-blips\n"
    "seed: 3\n"
    "strategies: [lazy]            # eager never reads OpenBao, so the first fault could not "
    "fire\n"
    "cluster: {preset: prod, credential: current, workers: 5, fanout-namespaces: 6}\n"
    "desired: current\n"
    "catalogue:                    # optional; extends/overrides the preset's\n"
    "  current: {username: deploy-bot, password: tok-current-7f3a}   # previous, current, "
    "revoked\n"
    "runs:\n"
    "  - name: reassert\n"
    "    before:\n"
    "      - openbao.raft-restore: {credential: previous}\n"
    "    faults:\n"
    "      - {on: \"openbao.read infrastructure/ghcr/auth\", nth: 1, timeout: true}\n"
    "      - {on: \"kube.patch PushSecret/flux-system/seed-ghcr\", nth: 1, lost-response: "
    "true}\n"
    "    during:\n"
    "      - before-call: \"kube.patch ExternalSecret/kyverno/ghcr-auth\"\n"
    "        nth: 1\n"
    "        do: {kube.patch: {ref: Node/prod-worker-1, merge-patch: {spec: {unschedulable: "
    "true}}}}\n"
    "    expect:\n"
    "      exit: 0\n"
    "      delta: {fence_acquisitions: 1, node_reboots: 0}\n"
    "      output-contains: [\"OpenBao\"]\n"
    "      state:\n"
    "        - {openbao: infrastructure/ghcr/auth, credential: current}\n"
    "        - {ref: Secret/kyverno/ghcr-auth, credential: current}\n"
    "        - {ref: Kustomization/flux-system/infrastructure, path: /spec/suspend, equals: "
    "false}\n"
    "        - {ref: Node/prod-worker-1, path: /spec/unschedulable, equals: true}\n";

static const cJSON *ts_get(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    ck_assert_msg(v != NULL, "missing key %s", key);
    return v;
}

static int ts_int(const cJSON *obj, const char *key)
{
    const cJSON *v = ts_get(obj, key);
    ck_assert(cJSON_IsNumber(v));
    return v->valueint;
}

static const char *ts_str(const cJSON *obj, const char *key)
{
    const cJSON *v = ts_get(obj, key);
    ck_assert(cJSON_IsString(v));
    return v->valuestring;
}

/* ---- valid files -------------------------------------------------------- */

START_TEST(test_design_example_one_loads_with_strategy_overrides)
{
    sc_scenario *sc = ts_load_ok(ts_example_1);
    ck_assert_str_eq(sc->name, "two-run-stage-reassert");
    ck_assert_str_eq(sc->about,
                     "Stage on a cluster holding the previous credential, then Reassert.");
    ck_assert_uint_eq(sc->seed, 7);
    ck_assert_uint_eq(sc->n_strategies, 2);
    ck_assert_str_eq(sc->cluster.credential, "previous");
    ck_assert_str_eq(sc->desired, "current");
    ck_assert_uint_eq(sc->n_runs, 2);
    const sc_run *stage = &sc->runs[0], *re = &sc->runs[1];
    ck_assert_str_eq(stage->name, "stage");
    ck_assert_uint_eq(stage->n_args, 2);
    ck_assert_str_eq(stage->args[0], "--record-runtime-proof");
    ck_assert_str_eq(stage->args[1], "{tmp}/proof.json");
    ck_assert_int_eq(stage->pos.line, 11);
    ck_assert_int_eq(stage->pos.col, 5);
    ck_assert_int_eq(ts_int(stage->expect, "exit"), 0);
    ck_assert_int_eq(ts_int(ts_get(stage->expect, "delta"), "node_reboots"), 6);
    ck_assert_ptr_null(stage->by_strategy);

    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(re->expect, "by-strategy"));
    ck_assert_ptr_nonnull(re->by_strategy);
    cJSON *lazy = sc_expect_for(re, "lazy");
    const cJSON *d = ts_get(lazy, "delta");
    ck_assert_int_eq(ts_int(d, "controller_restarts"), 0);
    ck_assert(cJSON_IsFalse(ts_get(d, "lease_rv_moved")));
    cJSON_Delete(lazy);
    cJSON *eager = sc_expect_for(re, "eager");
    d = ts_get(eager, "delta");
    ck_assert_int_eq(ts_int(eager, "exit"), 0);
    ck_assert_int_eq(ts_int(d, "controller_restarts"), 1);
    ck_assert_str_eq(ts_str(d, "writes"), ">=1");
    ck_assert_str_eq(ts_str(d, "lease_writes"), ">=1");
    ck_assert(cJSON_IsTrue(ts_get(d, "lease_rv_moved")));
    cJSON_Delete(eager);
    sc_free(sc);
}
END_TEST

START_TEST(test_design_example_two_loads_events_faults_and_state)
{
    sc_scenario *sc = ts_load_ok(ts_example_2);
    ck_assert_uint_eq(sc->seed, 3);
    ck_assert_uint_eq(sc->n_strategies, 1);
    ck_assert_str_eq(sc->strategies[0], "lazy");
    ck_assert_int_eq(sc->cluster.workers, 5);
    ck_assert_int_eq(sc->cluster.control_planes, 3);
    ck_assert_uint_eq(sc->cluster.n_fanout, 6);
    ck_assert_str_eq(sc->cluster.fanout_namespaces[3], "tenant-4");
    ck_assert_str_eq(sc->cluster.fanout_namespaces[5], "tenant-6");
    const sc_cred *cur = sc_catalogue_find(sc, "current");
    ck_assert_ptr_nonnull(cur);
    ck_assert_str_eq(cur->password, "tok-current-7f3a");
    ck_assert_uint_eq(sc->n_catalogue, 3);

    const sc_run *r = &sc->runs[0];
    ck_assert_uint_eq(r->n_before, 1);
    ck_assert_str_eq(r->before[0].kind, "openbao.raft-restore");
    ck_assert_str_eq(ts_str(r->before[0].args, "credential"), "previous");
    ck_assert_int_eq(r->before[0].pos.line, 13);
    ck_assert_int_eq(r->before[0].pos.col, 9);
    ck_assert_uint_eq(r->n_faults, 2);
    ck_assert_str_eq(r->faults[0].on, "openbao.read infrastructure/ghcr/auth");
    ck_assert_int_eq(r->faults[0].effect, SC_FAULT_TIMEOUT);
    ck_assert_int_eq(r->faults[0].nth, 1);
    ck_assert(!r->faults[0].and_after);
    ck_assert_int_eq(r->faults[1].effect, SC_FAULT_LOST_RESPONSE);
    ck_assert_uint_eq(r->n_during, 1);
    ck_assert_str_eq(r->during[0].before_call, "kube.patch ExternalSecret/kyverno/ghcr-auth");
    ck_assert_str_eq(r->during[0].action.kind, "kube.patch");
    const cJSON *mp = ts_get(r->during[0].action.args, "merge-patch");
    ck_assert(cJSON_IsTrue(ts_get(ts_get(mp, "spec"), "unschedulable")));

    const cJSON *state = ts_get(r->expect, "state");
    ck_assert_int_eq(cJSON_GetArraySize(state), 4);
    ck_assert(cJSON_IsFalse(ts_get(cJSON_GetArrayItem(state, 2), "equals")));
    ck_assert_str_eq(cJSON_GetArrayItem(ts_get(r->expect, "output-contains"), 0)->valuestring,
                     "OpenBao");
    sc_free(sc);
}
END_TEST

START_TEST(test_defaults_fill_seed_strategies_cluster_and_catalogue)
{
    sc_scenario *sc = ts_load_ok(TS_HEAD);
    ck_assert_uint_eq(sc->seed, 1);
    ck_assert_uint_eq(sc->n_strategies, 2);
    ck_assert_str_eq(sc->strategies[0], "lazy");
    ck_assert_str_eq(sc->strategies[1], "eager");
    ck_assert_ptr_null(sc->about);
    ck_assert_str_eq(sc->cluster.preset, "prod");
    ck_assert_int_eq(sc->cluster.control_planes, 3);
    ck_assert_int_eq(sc->cluster.workers, 3);
    ck_assert_uint_eq(sc->cluster.n_fanout, 3);
    ck_assert_str_eq(sc->cluster.fanout_namespaces[0], "wedding-app");
    ck_assert_str_eq(sc->cluster.fanout_namespaces[1], "ascoachingogvaner");
    ck_assert_str_eq(sc->cluster.fanout_namespaces[2], "kyverno");
    ck_assert_uint_eq(sc->n_catalogue, 3);
    const sc_cred *prev = sc_catalogue_find(sc, "previous");
    ck_assert_str_eq(prev->username, "deploy-bot");
    ck_assert_str_eq(prev->password, "ghp-prev-0a1b2c3d4e5f");
    ck_assert(!prev->revoked);
    ck_assert_ptr_null(prev->pulls);
    ck_assert_ptr_null(prev->dockerconfigjson);
    ck_assert_str_eq(prev->ciphertext, "ENC[AES256_GCM,data:2dc011a5b3f4a1b6f9face5d5bd76d3d,"
                                       "iv:5f9e608929530dd5,tag:sim,type:str]");
    const sc_cred *cur = sc_catalogue_find(sc, "current");
    ck_assert_str_eq(cur->password, "ghp-curr-9f8e7d6c5b4a");
    ck_assert_str_eq(cur->ciphertext, "ENC[AES256_GCM,data:155a262b8918a4c0faef041b934cbe69,"
                                      "iv:66aaa5d83e8a8e4f,tag:sim,type:str]");
    const sc_cred *rev = sc_catalogue_find(sc, "revoked");
    ck_assert(rev->revoked);
    ck_assert_str_eq(rev->password, "ghp-revk-5566778899aa");
    ck_assert_ptr_null(sc_catalogue_find(sc, "nope"));
    const sc_run *r = &sc->runs[0];
    ck_assert_ptr_null(r->expect);
    ck_assert_ptr_null(r->by_strategy);
    ck_assert_uint_eq(r->n_args + r->n_before + r->n_faults + r->n_during, 0);
    cJSON *ex = sc_expect_for(r, "lazy");
    ck_assert(cJSON_IsObject(ex));
    ck_assert_ptr_null(ex->child);
    cJSON_Delete(ex);
    sc_free(sc);
}
END_TEST

START_TEST(test_fanout_count_expands_and_truncates_defaults)
{
    sc_scenario *sc = ts_load_ok("name: t\n"
                                 "cluster: {preset: prod, credential: current, fanout-namespaces: "
                                 "2, control-planes: 1, workers: 0}\n"
                                 "desired: current\nruns: [{name: a}]\n");
    ck_assert_uint_eq(sc->cluster.n_fanout, 2);
    ck_assert_str_eq(sc->cluster.fanout_namespaces[1], "ascoachingogvaner");
    ck_assert_int_eq(sc->cluster.control_planes, 1);
    ck_assert_int_eq(sc->cluster.workers, 0);
    sc_free(sc);
    sc = ts_load_ok("name: t\n"
                    "cluster: {preset: prod, credential: current, fanout-namespaces: 0}\n"
                    "desired: current\nruns: [{name: a}]\n");
    ck_assert_uint_eq(sc->cluster.n_fanout, 0);
    sc_free(sc);
    sc = ts_load_ok("name: t\n"
                    "cluster: {preset: prod, credential: current, fanout-namespaces: 4}\n"
                    "desired: current\nruns: [{name: a}]\n");
    ck_assert_uint_eq(sc->cluster.n_fanout, 4);
    ck_assert_str_eq(sc->cluster.fanout_namespaces[2], "kyverno");
    ck_assert_str_eq(sc->cluster.fanout_namespaces[3], "tenant-4");
    sc_free(sc);
    sc =
        ts_load_ok("name: t\n"
                   "cluster: {preset: prod, credential: current, fanout-namespaces: [team-a, b2]}\n"
                   "desired: current\nruns: [{name: a}]\n");
    ck_assert_uint_eq(sc->cluster.n_fanout, 2);
    ck_assert_str_eq(sc->cluster.fanout_namespaces[0], "team-a");
    ck_assert_str_eq(sc->cluster.fanout_namespaces[1], "b2");
    sc_free(sc);
}
END_TEST

START_TEST(test_catalogue_entries_override_presets_wholesale_and_extend)
{
    sc_scenario *sc = ts_load_ok("name: t\n"
                                 "catalogue:\n"
                                 "  revoked: {dockerconfigjson: '{\"auths\": {}}'}\n"
                                 "  extra:\n"
                                 "    username: u\n"
                                 "    password: p\n"
                                 "    ciphertext: ENC[AES256_GCM,data:abc]\n"
                                 "    pulls: [devantler-tech/ksail:v7.178.30]\n"
                                 "  none: {username: u, password: p, pulls: [], revoked: true}\n"
                                 "  ghcr: {username: g, password: p, manifest-denial: 403}\n"
                                 "cluster: {preset: prod, credential: extra}\n"
                                 "desired: revoked\n"
                                 "runs: [{name: a}]\n");
    ck_assert_uint_eq(sc->n_catalogue, 6);
    ck_assert_str_eq(sc->catalogue[2].name, "revoked");
    ck_assert(!sc->catalogue[2].revoked);
    ck_assert_ptr_null(sc->catalogue[2].username);
    ck_assert_ptr_null(sc->catalogue[2].password);
    ck_assert_str_eq(sc->catalogue[2].dockerconfigjson, "{\"auths\": {}}");
    ck_assert_int_eq(sc->catalogue[2].pos.line, 3);
    ck_assert_int_eq(sc->catalogue[2].pos.col, 12);
    const sc_cred *x = &sc->catalogue[3];
    ck_assert_str_eq(x->name, "extra");
    ck_assert_str_eq(x->ciphertext, "ENC[AES256_GCM,data:abc]");
    ck_assert_uint_eq(x->n_pulls, 1);
    ck_assert_str_eq(x->pulls[0], "devantler-tech/ksail:v7.178.30");
    const sc_cred *none = sc_catalogue_find(sc, "none");
    ck_assert_ptr_nonnull(none->pulls); /* an empty list, not "all required" */
    ck_assert_uint_eq(none->n_pulls, 0);
    ck_assert(none->revoked);
    ck_assert_int_eq(none->manifest_denial, 0);
    ck_assert_int_eq(sc_catalogue_find(sc, "ghcr")->manifest_denial, 403);
    ck_assert_str_eq(sc->cluster.credential, "extra");
    sc_free(sc);
}
END_TEST

START_TEST(test_expect_for_merges_maps_deeply_and_replaces_lists)
{
    sc_scenario *sc = ts_load_ok(TS_HEAD "    expect:\n"
                                         "      exit: 0\n"
                                         "      delta:\n"
                                         "        writes: 0\n"
                                         "        virtual_seconds: \"<62.5\"\n"
                                         "        writes_by_kind: {Secret: 1, Lease: \">=2\"}\n"
                                         "      output-contains: [a, b]\n"
                                         "      by-strategy:\n"
                                         "        eager:\n"
                                         "          exit: 1\n"
                                         "          delta: {writes_by_kind: {Secret: \">=2\"}}\n"
                                         "          output-contains: [c]\n");
    const sc_run *r = &sc->runs[0];
    cJSON *e = sc_expect_for(r, "eager");
    ck_assert_int_eq(ts_int(e, "exit"), 1);
    const cJSON *d = ts_get(e, "delta");
    ck_assert_int_eq(ts_int(d, "writes"), 0);
    ck_assert_str_eq(ts_str(d, "virtual_seconds"), "<62.5");
    ck_assert_str_eq(ts_str(ts_get(d, "writes_by_kind"), "Secret"), ">=2");
    ck_assert_str_eq(ts_str(ts_get(d, "writes_by_kind"), "Lease"), ">=2");
    const cJSON *oc = ts_get(e, "output-contains");
    ck_assert_int_eq(cJSON_GetArraySize(oc), 1);
    ck_assert_str_eq(cJSON_GetArrayItem(oc, 0)->valuestring, "c");
    cJSON_Delete(e);
    /* The run's own expectations are untouched by the merge. */
    e = sc_expect_for(r, "lazy");
    ck_assert_int_eq(ts_int(e, "exit"), 0);
    ck_assert_int_eq(ts_int(ts_get(ts_get(e, "delta"), "writes_by_kind"), "Secret"), 1);
    ck_assert_int_eq(cJSON_GetArraySize(ts_get(e, "output-contains")), 2);
    cJSON_Delete(e);
    sc_free(sc);
}
END_TEST

START_TEST(test_every_event_kind_loads_with_durations_in_ms)
{
    sc_scenario *sc = ts_load_ok(
        TS_HEAD "    before:\n"
                "      - advance: 90s\n"
                "      - kube.patch: {ref: Secret/flux-system/variables-base, json-patch: "
                "[{op: test, path: /data/x, value: \"1\"}, {op: remove, path: /data/x}]}\n"
                "      - kube.delete: {ref: Node/prod-worker-1}\n"
                "      - kube.apply: {object: {kind: ConfigMap, metadata: {name: c, "
                "namespace: d}}}\n"
                "      - openbao.raft-restore: {credential: previous}\n"
                "      - openbao.write: {path: infrastructure/ghcr/auth, credential: revoked}\n"
                "      - talos.partial-apply: {nodes: [prod-worker-1], drop-node-annotations: "
                "true, registry-auth: previous}\n"
                "      - talos.partial-apply: {nodes: [prod-worker-2]}\n"
                "      - node.replace: {node: prod-worker-2}\n"
                "      - node.add: {role: control-plane, name: prod-control-plane-4}\n"
                "      - etcd.unhealthy: {node: prod-control-plane-1}\n"
                "      - etcd.healthy: {node: prod-control-plane-1}\n"
                "      - pdb.block: {node: prod-worker-3, for: 5m}\n"
                "      - registry.revoke: {credential: previous}\n"
                "      - runs.terminal: [a, b]\n"
                "    faults:\n"
                "      - {on: \"kube.*\", nth: 3, and-after: true, fail: 503}\n"
                "      - {on: \"talos.reboot prod-worker-*\", crash: true}\n"
                "    during:\n"
                "      - {before-call: \"registry.token\", do: {advance: 250ms}}\n"
                "    invariants: {off: [1, 6], reason: the fixture replaces a node}\n"
                "  - name: b\n"
                "    args: [--strategy, eager]\n");
    const sc_run *r = &sc->runs[0];
    ck_assert_uint_eq(r->n_before, 15);
    ck_assert_str_eq(r->before[0].kind, "advance");
    ck_assert_int_eq(ts_int(r->before[0].args, "ms"), 90000);
    ck_assert_int_eq(cJSON_GetArraySize(ts_get(r->before[1].args, "json-patch")), 2);
    /* drop-node-annotations is optional (DESIGN §5), absent = false. */
    ck_assert_str_eq(r->before[7].kind, "talos.partial-apply");
    ck_assert_ptr_null(
        cJSON_GetObjectItemCaseSensitive(r->before[7].args, "drop-node-annotations"));
    ck_assert_str_eq(r->before[12].kind, "pdb.block");
    ck_assert_int_eq(ts_int(r->before[12].args, "for_ms"), 300000);
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(r->before[12].args, "for"));
    ck_assert_str_eq(ts_str(r->before[12].args, "node"), "prod-worker-3");
    ck_assert(cJSON_IsArray(r->before[14].args));
    ck_assert_str_eq(r->faults[0].on, "kube.* *");
    ck_assert_int_eq(r->faults[0].nth, 3);
    ck_assert(r->faults[0].and_after);
    ck_assert_int_eq(r->faults[0].effect, SC_FAULT_FAIL);
    ck_assert_int_eq(r->faults[0].fail_status, 503);
    ck_assert_int_eq(r->faults[1].effect, SC_FAULT_CRASH);
    ck_assert_str_eq(r->during[0].before_call, "registry.token *");
    ck_assert_int_eq(r->during[0].nth, 1);
    ck_assert_int_eq(ts_int(r->during[0].action.args, "ms"), 250);
    ck_assert_uint_eq(r->n_invariants_off, 2);
    ck_assert_int_eq(r->invariants_off[1], 6);
    ck_assert_str_eq(r->invariants_reason, "the fixture replaces a node");
    ck_assert_str_eq(sc->runs[1].args[1], "eager");
    sc_free(sc);
}
END_TEST

START_TEST(test_yaml_scalars_keep_their_types_and_aliases_resolve)
{
    sc_scenario *sc = ts_load_ok(
        TS_HEAD "    expect:\n"
                "      state:\n"
                "        - {ref: ConfigMap/ns/c, path: /data/a, equals: \"3\"}\n"
                "        - {ref: ConfigMap/ns/c, path: /data/b, equals: 3}\n"
                "        - {ref: ConfigMap/ns/c, path: /data/c, equals: null}\n"
                "        - {ref: ConfigMap/ns/c, path: /data/d, equals: 1.5}\n"
                "        - {ref: ConfigMap/ns/c, path: /data/e, equals: 'true'}\n"
                "        - {ref: ConfigMap/ns/c, path: /data/f, equals: &obj {k: [1, x]}}\n"
                "        - {ref: ConfigMap/ns/c, path: /data/g, equals: *obj}\n"
                "        - {ref: ConfigMap/ns/c, path: /data/h, absent: true}\n");
    const cJSON *st = ts_get(sc->runs[0].expect, "state");
    ck_assert_str_eq(ts_str(cJSON_GetArrayItem(st, 0), "equals"), "3");
    ck_assert_int_eq(ts_int(cJSON_GetArrayItem(st, 1), "equals"), 3);
    ck_assert(cJSON_IsNull(ts_get(cJSON_GetArrayItem(st, 2), "equals")));
    ck_assert(ts_get(cJSON_GetArrayItem(st, 3), "equals")->valuedouble == 1.5);
    ck_assert_str_eq(ts_str(cJSON_GetArrayItem(st, 4), "equals"), "true");
    ck_assert(cJSON_Compare(ts_get(cJSON_GetArrayItem(st, 5), "equals"),
                            ts_get(cJSON_GetArrayItem(st, 6), "equals"), true));
    sc_free(sc);
}
END_TEST

START_TEST(test_parse_duration_accepts_units_and_refuses_the_rest)
{
    int64_t ms = -1;
    ck_assert(sc_parse_duration_ms("5ms", &ms) && ms == 5);
    ck_assert(sc_parse_duration_ms("0s", &ms) && ms == 0);
    ck_assert(sc_parse_duration_ms("2m", &ms) && ms == 120000);
    ck_assert(sc_parse_duration_ms("2h", &ms) && ms == 7200000);
    const char *bad[] = {"",
                         "5",
                         "s",
                         "-5s",
                         "5 s",
                         "5sec",
                         "1.5s",
                         "5S",
                         "99999999999999999999h",
                         "9223372036854775807h"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!sc_parse_duration_ms(bad[i], &ms), "accepted %s", bad[i]);
    ck_assert(!sc_parse_duration_ms(NULL, &ms));
}
END_TEST

START_TEST(test_counter_names_are_the_design_contract)
{
    ck_assert(sc_counter_known("controller_restarts"));
    ck_assert(sc_counter_known("writes_by_kind"));
    ck_assert(sc_counter_known("virtual_seconds"));
    ck_assert(sc_counter_known("lease_rv_moved"));
    ck_assert(!sc_counter_known("lease_rv"));
    ck_assert(!sc_counter_known("restarts"));
    ck_assert(!sc_counter_known(NULL));
}
END_TEST

/* ---- errors: one per class ------------------------------------------------ */

START_TEST(test_unknown_key_at_top_level_is_refused)
{
    ts_err("name: t\nbogus: 1\n", "2:1: bogus: unknown key (known: name, about, seed, strategies, "
                                  "cluster, clock, desired, catalogue, runs, perturb-menu)");
}
END_TEST

START_TEST(test_unknown_key_in_cluster_is_refused)
{
    ts_err("name: t\ncluster:\n  preset: prod\n  flavor: x\n",
           "4:3: cluster.flavor: unknown key (known: preset, credential, control-planes, workers, "
           "fanout-namespaces)");
}
END_TEST

START_TEST(test_unknown_key_in_run_is_refused)
{
    ts_err(TS_HEAD "    bogus: 1\n", "8:5: runs[0].bogus: unknown key (known: name, args");
}
END_TEST

START_TEST(test_unknown_key_in_event_is_refused)
{
    ts_err(TS_HEAD "    before:\n      - kube.delete: {ref: Secret/ns/x, bogus: 1}\n",
           "9:41: runs[0].before[0].kube.delete.bogus: unknown key (known: ref)");
}
END_TEST

START_TEST(test_unknown_event_and_multi_key_event_are_refused)
{
    ts_err(TS_HEAD "    before:\n      - kube.frob: {ref: Secret/ns/x}\n",
           "9:9: runs[0].before[0].kube.frob: unknown event (known: advance, kube.patch");
    ts_err(TS_HEAD "    before:\n      - {advance: 1s, kube.delete: {ref: A/b}}\n",
           "9:9: runs[0].before[0]: an event is a mapping with exactly one key");
}
END_TEST

START_TEST(test_wrong_type_is_refused)
{
    ts_err(TS_HEAD "    args: 5\n", "8:11: runs[0].args: expected a list, got an integer");
    ts_err("name: [a]\n", "1:7: name: expected a string, got a list");
    ts_err("name: t\nseed: -1\n", "2:7: seed: must be an integer from 0 to");
    ts_err("name: t\nseed: \"1\"\n", "2:7: seed: expected an integer, got a string");
    ts_err(TS_HEAD "    args: [--workers, 3]\n",
           "8:23: runs[0].args[1]: expected a string, got an integer");
    ts_err("name: t\ncluster: {preset: prod, credential: current, workers: 2.5}\n",
           "2:55: cluster.workers: expected an integer, got a number");
}
END_TEST

START_TEST(test_unknown_credential_is_refused_without_echoing_it)
{
    rs_err e = {0};
    ts_load_err("name: t\ncluster: {preset: prod, credential: current}\n"
                "desired: ghp-secret-value\nruns: [{name: a}]\n",
                "3:10: desired: unknown credential (the catalogue has: previous, current, revoked)",
                &e);
    ck_assert_ptr_null(strstr(e.msg, "ghp-secret-value"));
    ts_err(TS_HEAD "    before:\n      - openbao.write: {path: p, credential: nope}\n",
           "9:46: runs[0].before[0].openbao.write.credential: unknown credential");
    ts_err(TS_HEAD "    expect:\n      state: [{talos: prod-worker-1, registry-auth: nope}]\n",
           "9:53: runs[0].expect.state[0].registry-auth: unknown credential");
}
END_TEST

START_TEST(test_catalogue_entry_errors)
{
    ts_err("name: t\ncatalogue:\n  x: {username: u}\n",
           "3:6: catalogue.x.password: required field missing");
    ts_err("name: t\ncatalogue:\n  x: {username: u, password: p, dockerconfigjson: '{}'}\n",
           "3:6: catalogue.x: give either username and password or dockerconfigjson, not both");
    ts_err("name: t\ncatalogue:\n  x: {revoked: true}\n",
           "3:6: catalogue.x: give username and password, or dockerconfigjson");
    ts_err("name: t\ncatalogue:\n  x: {username: u, password: p, pulls: [ksail]}\n",
           "3:41: catalogue.x.pulls[0]: malformed pull target \"ksail\" (want repo:ref)");
    /* H136's registry model: GHCR answers a denied manifest 401, 403 or 404. */
    ts_err("name: t\ncatalogue:\n  x: {username: u, password: p, manifest-denial: 402}\n",
           "3:50: catalogue.x.manifest-denial: must be 401, 403 or 404, not 402");
    ts_err("name: t\ncatalogue:\n  x: {username: u, password: p, manifest-denial: 500}\n",
           "3:50: catalogue.x.manifest-denial: must be an integer from 401 to 404");
    ts_err("name: t\ncatalogue:\n  x: {username: u, password: p, manifest-denial: yes}\n",
           "3:50: catalogue.x.manifest-denial: expected an integer");
}
END_TEST

START_TEST(test_bad_object_reference_is_refused)
{
    ts_err(TS_HEAD "    before:\n      - kube.delete: {ref: secret/x}\n",
           "9:28: runs[0].before[0].kube.delete.ref: malformed object reference \"secret/x\"");
    ts_err(TS_HEAD "    before:\n      - kube.delete: {ref: Secret/a/b/c}\n",
           "9:28: runs[0].before[0].kube.delete.ref: malformed object reference");
    ts_err(TS_HEAD "    before:\n      - kube.delete: {ref: Secret//b}\n",
           "9:28: runs[0].before[0].kube.delete.ref: malformed object reference");
    ts_err(TS_HEAD "    before:\n      - kube.delete: {ref: Node}\n",
           "9:28: runs[0].before[0].kube.delete.ref: malformed object reference");
}
END_TEST

START_TEST(test_bad_duration_is_refused)
{
    ts_err(TS_HEAD "    before:\n      - advance: 5x\n",
           "9:18: runs[0].before[0].advance: malformed duration \"5x\" (want "
           "[-]<integer>(ms|s|m|h))");
    ts_err(TS_HEAD "    before:\n      - advance: 5\n",
           "9:18: runs[0].before[0].advance: expected a duration such as 30s, got an integer");
    ts_err(TS_HEAD "    before:\n      - pdb.block: {node: prod-worker-1, for: 1.5h}\n",
           "9:47: runs[0].before[0].pdb.block.for: malformed duration");
}
END_TEST

START_TEST(test_bad_comparator_is_refused)
{
    ts_err(TS_HEAD "    expect:\n      delta: {writes: \"=>1\"}\n",
           "9:23: runs[0].expect.delta.writes: malformed comparator \"=>1\"");
    ts_err(TS_HEAD "    expect:\n      delta: {writes: \">= 1\"}\n",
           "9:23: runs[0].expect.delta.writes: malformed comparator");
    ts_err(TS_HEAD "    expect:\n      delta: {writes: \">=1.5\"}\n",
           "9:23: runs[0].expect.delta.writes: malformed comparator");
    ts_err(TS_HEAD "    expect:\n      delta: {writes_by_kind: {Secret: \"~1\"}}\n",
           "9:40: runs[0].expect.delta.writes_by_kind.Secret: malformed comparator");
    ts_err(TS_HEAD "    expect:\n      delta: {lease_rv_moved: 1}\n",
           "9:31: runs[0].expect.delta.lease_rv_moved: expected true or false, got an integer");
}
END_TEST

START_TEST(test_unknown_counter_is_refused)
{
    ts_err(TS_HEAD "    expect:\n      delta: {restarts: 1}\n",
           "9:15: runs[0].expect.delta.restarts: unknown counter (known: controller_restarts");
    ts_err(TS_HEAD "    expect:\n      exits: 0\n",
           "9:7: runs[0].expect.exits: unknown key (known: exit, delta");
    ts_err(TS_HEAD "    expect:\n      by-strategy: {lazy: {exit: 0}, fast: {exit: 1}}\n",
           "9:38: runs[0].expect.by-strategy.fast: unknown key (known: lazy, eager)");
}
END_TEST

START_TEST(test_fault_nth_zero_is_refused)
{
    ts_err(TS_HEAD "    faults:\n      - {on: \"kube.get *\", nth: 0, crash: true}\n",
           "9:33: runs[0].faults[0].nth: must be an integer from 1 to 1000000");
    ts_err(TS_HEAD "    faults:\n      - {on: \"kube.get *\", timeout: false}\n",
           "9:37: runs[0].faults[0].timeout: must be true");
    ts_err(TS_HEAD "    faults:\n      - {on: \"kube.get *\", fail: 200}\n",
           "9:34: runs[0].faults[0].fail: must be an integer from 400 to 599");
    ts_err(TS_HEAD "    faults:\n      - {on: \"kube.get *\"}\n",
           "9:9: runs[0].faults[0]: no effect; give exactly one of");
}
END_TEST

START_TEST(test_unknown_operation_verb_is_refused)
{
    ts_err(TS_HEAD "    faults:\n      - {on: \"kube.frob Secret/*\", crash: true}\n",
           "9:14: runs[0].faults[0].on: unknown operation \"kube.frob\"");
    ts_err(TS_HEAD "    faults:\n      - {on: \"vault.*\", crash: true}\n",
           "9:14: runs[0].faults[0].on: unknown operation \"vault.*\"");
    ts_err(TS_HEAD "    during:\n      - {before-call: \"kube.get  x\", do: {advance: 1s}}\n",
           "9:23: runs[0].during[0].before-call: malformed operation");
}
END_TEST

START_TEST(test_fault_with_two_effects_is_refused)
{
    ts_err(TS_HEAD "    faults:\n      - {on: \"kube.get *\", fail: 500, timeout: true}\n",
           "9:39: runs[0].faults[0]: more than one effect (fail and timeout)");
}
END_TEST

START_TEST(test_yaml_syntax_error_gives_position_and_prints_nothing)
{
    /* libfyaml must not write its own diagnostics: capture fd 2. */
    char errpath[] = "/tmp/test_scenario_stderr.XXXXXX";
    int cap = mkstemp(errpath);
    ck_assert_int_ge(cap, 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(cap, 2);
    rs_err e1 = {0}, e2 = {0}, e3 = {0};
    ts_load_err("name: t\nruns: [1, 2\n", "3:1: yaml syntax: flow sequence without a closing", &e1);
    ts_load_err("a:\n  b: 1\n c: 2\n", "3:2: yaml syntax: invalid indentation", &e2);
    ts_load_err("name: t\n---\nname: u\n", "3:1: (top level): a scenario file holds exactly one",
                &e3);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    off_t size = lseek(cap, 0, SEEK_END);
    close(cap);
    unlink(errpath);
    ck_assert_int_eq((int)size, 0);
    ts_err("a: *nope\n", "1:4: a: alias *nope names no earlier anchor");
    ts_err("a: !!int 3\n", "1:4: a: unsupported tag");
    ts_err("a: \"x\\0y\"\n", "1:4: a: a scalar contains a NUL character");
    ts_err("", "1:1: (top level): the file holds no YAML document");
    ts_err("- a\n", "1:1: (top level): expected a mapping, got a list");
}
END_TEST

START_TEST(test_duplicate_key_is_refused_with_both_positions)
{
    ts_err("name: t\nname: u\n", "2:1: name: duplicate key (first given at line 1, column 1)");
    ts_err(TS_HEAD "    expect: {exit: 0, exit: 1}\n",
           "8:23: runs[0].expect.exit: duplicate key (first given at line 8, column 14)");
}
END_TEST

START_TEST(test_duplicate_run_name_is_refused)
{
    ts_err(TS_HEAD "  - name: a\n",
           "8:11: runs[1].name: duplicate run name \"a\" (first at runs[0])");
}
END_TEST

START_TEST(test_runs_terminal_naming_unknown_run_is_refused)
{
    ts_err(TS_HEAD "    before:\n      - runs.terminal: [a, zz]\n",
           "9:28: runs[0].before[0].runs.terminal[1]: names no run of this scenario (\"zz\")");
}
END_TEST

START_TEST(test_missing_required_field_is_refused)
{
    ts_err("name: t\ncluster: {preset: prod, credential: current}\nruns: [{name: a}]\n",
           "1:1: desired: required field missing");
    ts_err("name: t\ncluster: {credential: current}\n",
           "2:10: cluster.preset: required field missing");
    ts_err("name: t\ncluster: {preset: prod, credential: current}\ndesired: current\n"
           "runs:\n  - args: []\n",
           "5:5: runs[0].name: required field missing");
    ts_err(TS_HEAD "    before:\n      - kube.patch: {merge-patch: {}}\n",
           "9:21: runs[0].before[0].kube.patch.ref: required field missing");
    ts_err(TS_HEAD "    invariants: {off: [1]}\n",
           "8:17: runs[0].invariants.reason: required field missing");
    ts_err("name: t\ncluster: {preset: prod, credential: current}\ndesired: current\nruns: []\n",
           "4:7: runs: must not be empty");
}
END_TEST

START_TEST(test_other_malformed_values_are_refused)
{
    ts_err("name: t\ncluster: {preset: dev, credential: current}\n",
           "2:19: cluster.preset: unknown preset \"dev\" (known: prod)");
    ts_err("name: t\ncluster: {preset: prod, credential: current, fanout-namespaces: [a, A]}\n",
           "2:69: cluster.fanout-namespaces[1]: \"A\" is not a DNS label");
    ts_err("name: t\ncluster: {preset: prod, credential: current, fanout-namespaces: [a, a]}\n",
           "2:69: cluster.fanout-namespaces[1]: duplicate namespace \"a\"");
    ts_err("name: t\ncluster: {preset: prod, credential: current, control-planes: 0}\n",
           "2:62: cluster.control-planes: must be an integer from 1 to 254");
    ts_err("name: t\nstrategies: [lazy, quick]\n",
           "2:20: strategies[1]: unknown strategy \"quick\" (known: lazy, eager)");
    ts_err(TS_HEAD "    invariants: {off: [8], reason: r}\n",
           "8:24: runs[0].invariants.off[0]: must be an integer from 1 to 7");
    ts_err(TS_HEAD "    expect:\n      state: [{ref: Node/b, path: data, equals: 1}]\n",
           "9:35: runs[0].expect.state[0].path: expected a JSON pointer starting with /");
    ts_err(TS_HEAD "    expect:\n      state: [{ref: Node/b, path: /x}]\n",
           "9:15: runs[0].expect.state[0]: give exactly one of equals and absent");
    ts_err(TS_HEAD "    expect:\n      state: [{ref: Node/b, credential: current, path: /x}]\n",
           "9:50: runs[0].expect.state[0].path: unknown key (known: ref, credential)");
    ts_err(TS_HEAD "    expect:\n      state: [{path: /x}]\n",
           "9:15: runs[0].expect.state[0]: a state check names exactly one of ref, openbao, "
           "talos");
    ts_err(TS_HEAD "    expect:\n      exit: 256\n",
           "9:13: runs[0].expect.exit: must be an integer from 0 to 255");
    ts_err(TS_HEAD
           "    before:\n      - kube.patch: {ref: Node/b, merge-patch: {}, json-patch: []}\n",
           "9:21: runs[0].before[0].kube.patch: give exactly one of json-patch and merge-patch");
    ts_err(TS_HEAD
           "    before:\n      - kube.patch: {ref: Node/b, json-patch: [{op: frob, path: /a}]}\n",
           "9:53: runs[0].before[0].kube.patch.json-patch[0].op: unknown JSON Patch operation");
    ts_err(TS_HEAD "    before:\n      - node.add: {role: master, name: n}\n",
           "9:26: runs[0].before[0].node.add.role: must be worker or control-plane");
    ts_err(TS_HEAD "    before:\n      - kube.apply: {object: {kind: ConfigMap, metadata: {}}}\n",
           "9:58: runs[0].before[0].kube.apply.object.metadata.name: required field missing");
    ts_err(TS_HEAD "    during:\n      - {before-call: \"kube.get *\", do: {advance: 1d}}\n",
           "9:51: runs[0].during[0].do.advance: malformed duration");
}
END_TEST

START_TEST(test_missing_file_is_a_data_error)
{
    sc_scenario *sc = (sc_scenario *)1;
    rs_err e = {0};
    ck_assert_int_eq(sc_load("/nonexistent/reassert/s.yaml", &sc, &e), RS_DATAERR);
    ck_assert_ptr_null(sc);
    ck_assert_ptr_nonnull(strstr(e.msg, "/nonexistent/reassert/s.yaml: cannot read"));
    sc_free(NULL);
}
END_TEST

static Suite *scenario_suite(void)
{
    Suite *s = suite_create("scenario");
    TCase *ok = tcase_create("valid");
    tcase_add_test(ok, test_design_example_one_loads_with_strategy_overrides);
    tcase_add_test(ok, test_design_example_two_loads_events_faults_and_state);
    tcase_add_test(ok, test_defaults_fill_seed_strategies_cluster_and_catalogue);
    tcase_add_test(ok, test_fanout_count_expands_and_truncates_defaults);
    tcase_add_test(ok, test_catalogue_entries_override_presets_wholesale_and_extend);
    tcase_add_test(ok, test_expect_for_merges_maps_deeply_and_replaces_lists);
    tcase_add_test(ok, test_every_event_kind_loads_with_durations_in_ms);
    tcase_add_test(ok, test_yaml_scalars_keep_their_types_and_aliases_resolve);
    tcase_add_test(ok, test_parse_duration_accepts_units_and_refuses_the_rest);
    tcase_add_test(ok, test_counter_names_are_the_design_contract);
    suite_add_tcase(s, ok);
    TCase *bad = tcase_create("errors");
    tcase_add_test(bad, test_unknown_key_at_top_level_is_refused);
    tcase_add_test(bad, test_unknown_key_in_cluster_is_refused);
    tcase_add_test(bad, test_unknown_key_in_run_is_refused);
    tcase_add_test(bad, test_unknown_key_in_event_is_refused);
    tcase_add_test(bad, test_unknown_event_and_multi_key_event_are_refused);
    tcase_add_test(bad, test_wrong_type_is_refused);
    tcase_add_test(bad, test_unknown_credential_is_refused_without_echoing_it);
    tcase_add_test(bad, test_catalogue_entry_errors);
    tcase_add_test(bad, test_bad_object_reference_is_refused);
    tcase_add_test(bad, test_bad_duration_is_refused);
    tcase_add_test(bad, test_bad_comparator_is_refused);
    tcase_add_test(bad, test_unknown_counter_is_refused);
    tcase_add_test(bad, test_fault_nth_zero_is_refused);
    tcase_add_test(bad, test_unknown_operation_verb_is_refused);
    tcase_add_test(bad, test_fault_with_two_effects_is_refused);
    tcase_add_test(bad, test_yaml_syntax_error_gives_position_and_prints_nothing);
    tcase_add_test(bad, test_duplicate_key_is_refused_with_both_positions);
    tcase_add_test(bad, test_duplicate_run_name_is_refused);
    tcase_add_test(bad, test_runs_terminal_naming_unknown_run_is_refused);
    tcase_add_test(bad, test_missing_required_field_is_refused);
    tcase_add_test(bad, test_other_malformed_values_are_refused);
    tcase_add_test(bad, test_missing_file_is_a_data_error);
    suite_add_tcase(s, bad);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(scenario_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
