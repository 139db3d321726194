/*
 * test_invariants.c — the DESIGN.md §6 checker and the per-service call
 * counters.
 *
 * Each invariant gets a deliberately broken history, made through the sim
 * transport (as a rogue core would) or through world events, and the test
 * asserts the checker names exactly that invariant; a real run of the core
 * must report nothing. A checker that never fires, or fires on the clean
 * run, fails here before it misleads the scenario suite.
 *
 * Over 600 lines: every invariant needs its own broken history, and they
 * share one fixture that builds and breaks a world.
 */
#include "cli/cli.h"
#include "core/cred/cred.h"
#include "sim/check/check_invariants.h"
#include "sim/runner/runner.h"
#include "sim/world/world.h"
#include "tests/support_checker.h"

#include <check.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROGUE "rogue"
#define ROGUE_HOLDER "0123456789abcdef-sim.rogue-1234-00ff"
#define OTHER_HOLDER "0123456789abcdef-sim.other-run-99-00aa"
#define CURRENT_PASS "tok-current-7f3a"

/* ---- fixtures ---- */

static sc_cred t_creds[3];
static sc_scenario t_sc;
static char t_dir[64];
static char t_path[128];

static void t_scenario(const char *credential)
{
    memset(t_creds, 0, sizeof t_creds);
    t_creds[0] = (sc_cred){.name = "previous",
                           .username = "deploy-bot",
                           .password = "tok-previous-11aa",
                           .ciphertext = "ENC[AES256_GCM,data:previous,type:str]"};
    t_creds[1] = (sc_cred){.name = "current",
                           .username = "deploy-bot",
                           .password = CURRENT_PASS,
                           .ciphertext = "ENC[AES256_GCM,data:current,type:str]"};
    t_creds[2] = (sc_cred){.name = "revoked",
                           .username = "old-bot",
                           .password = "tok-revoked-0000",
                           .ciphertext = "ENC[AES256_GCM,data:revoked,type:str]",
                           .revoked = true};
    memset(&t_sc, 0, sizeof t_sc);
    t_sc.name = "invariants";
    t_sc.seed = 11;
    t_sc.cluster = (sc_cluster){
        .preset = "prod", .control_planes = 3, .workers = 3, .credential = (char *)credential};
    t_sc.desired = "current";
    t_sc.catalogue = t_creds;
    t_sc.n_catalogue = 3;
}

static void setup(void)
{
    snprintf(t_dir, sizeof t_dir, "/tmp/test_invariants.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(t_dir));
    snprintf(t_path, sizeof t_path, "%s/world.db", t_dir);
}

static void teardown(void)
{
    const char *suffixes[] = {"", "-wal", "-shm"};
    for (size_t i = 0; i < RS_ARRAY_LEN(suffixes); i++) {
        char p[160];
        snprintf(p, sizeof p, "%s%s", t_path, suffixes[i]);
        unlink(p);
    }
    rmdir(t_dir);
}

static sim_world *t_world(const char *credential)
{
    t_scenario(credential);
    rs_err e = {0};
    ck_assert_msg(sim_world_build(t_path, &t_sc, &e) == RS_OK, "%s", e.msg);
    sim_world *w = NULL;
    ck_assert_msg(sim_world_open(t_path, &w, &e) == RS_OK, "%s", e.msg);
    return w;
}

static int t_call(rs_transport *t, rs_op op, const char *target, const char *body_json)
{
    cJSON *body = body_json ? cJSON_Parse(body_json) : NULL;
    /* Transport v2: the OpenBao mount and registry host travel, as the core sends them. */
    rs_req req = {.op = op, .target = target, .body = body, .mount = "secret", .host = "ghcr.io"};
    rs_resp r;
    int status = t->call(t, &req, &r);
    rs_resp_free(&r);
    cJSON_Delete(body);
    return status;
}

/* The Lease, as a rogue run named ROGUE takes it. */
static void t_take_lease(rs_transport *t)
{
    ck_assert_int_eq(tc_merge(t, "Lease", "flux-system", "ghcr-auth-refresh",
                              "{\"spec\":{\"holderIdentity\":\"" ROGUE_HOLDER "\"}}"),
                     200);
}

static void t_release_lease(rs_transport *t)
{
    ck_assert_int_eq(tc_merge(t, "Lease", "flux-system", "ghcr-auth-refresh",
                              "{\"spec\":{\"holderIdentity\":\"\"}}"),
                     200);
}

/* Both policy fences (owner annotations + suspend), no controller restart:
 * invariant 1 asks for the Lease and the policy fences, nothing more. */
static void t_take_policy_fences(rs_transport *t)
{
    ck_assert_int_eq(tc_merge(t, "Kustomization", "flux-system", "flux-system",
                              "{\"metadata\":{\"annotations\":{\"platform.devantler.tech/"
                              "ghcr-policy-parent-owner\":\"" ROGUE_HOLDER
                              "\"}},\"spec\":{\"suspend\":true}}"),
                     200);
    ck_assert_int_eq(tc_merge(t, "Kustomization", "flux-system", "infrastructure",
                              "{\"metadata\":{\"annotations\":{\"platform.devantler.tech/"
                              "ghcr-policy-handoff-owner\":\"" ROGUE_HOLDER
                              "\",\"kustomize.toolkit.fluxcd.io/"
                              "reconcile\":\"disabled\"}},\"spec\":{\"suspend\":true}}"),
                     200);
}

static void t_release_policy_fences(rs_transport *t)
{
    ck_assert_int_eq(
        tc_merge(
            t, "Kustomization", "flux-system", "infrastructure",
            "{\"metadata\":{\"annotations\":{\"platform.devantler.tech/"
            "ghcr-policy-handoff-owner\":null,\"kustomize.toolkit.fluxcd.io/reconcile\":null}},"
            "\"spec\":{\"suspend\":false}}"),
        200);
    ck_assert_int_eq(tc_merge(t, "Kustomization", "flux-system", "flux-system",
                              "{\"metadata\":{\"annotations\":{\"platform.devantler.tech/"
                              "ghcr-policy-parent-owner\":null}},\"spec\":{\"suspend\":false}}"),
                     200);
}

/* A checker run over the rows after mark, for a run named name, with every
 * invariant but 7 as asked: the rogue runs below hold fences on purpose and
 * print nothing; invariant 7 has its own tests (t_check_all). */
static cJSON *t_check(sim_world *w, const inv_mark *m, const char *name, int exit_code,
                      const char *output, const int *off, size_t n_off)
{
    int all_off[INV_COUNT + 1];
    size_t n = 0;
    for (size_t i = 0; i < n_off && n < INV_COUNT; i++)
        all_off[n++] = off[i];
    all_off[n++] = 7;
    cJSON *failures = cJSON_CreateArray();
    inv_run r = {.name = name,
                 .desired = "current",
                 .exit_code = exit_code,
                 .output = output,
                 .off = all_off,
                 .n_off = n};
    inv_check(w, m, &r, failures);
    return failures;
}

/* The checker with every invariant on. */
static cJSON *t_check_all(sim_world *w, const inv_mark *m, const char *name, int exit_code,
                          const char *output)
{
    cJSON *failures = cJSON_CreateArray();
    inv_run r = {.name = name, .desired = "current", .exit_code = exit_code, .output = output};
    inv_check(w, m, &r, failures);
    return failures;
}

/* Every failure names invariant `want` (and there is at least one); prints
 * them when not. */
static void t_only(const cJSON *failures, int want)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "invariant %d: ", want);
    char *all = cJSON_Print(failures);
    ck_assert_msg(cJSON_GetArraySize(failures) > 0, "no failure, expected invariant %d", want);
    const cJSON *f;
    cJSON_ArrayForEach(f, failures)
        ck_assert_msg(strncmp(f->valuestring, prefix, strlen(prefix)) == 0,
                      "expected only invariant %d, got %s", want, all);
    free(all);
}

static void t_none(const cJSON *failures)
{
    char *all = cJSON_Print(failures);
    ck_assert_msg(cJSON_GetArraySize(failures) == 0, "expected no violation, got %s", all);
    free(all);
}

static bool t_mentions(const cJSON *failures, const char *text)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, failures) if (strstr(f->valuestring, text)) return true;
    return false;
}

/* ---- holder identities ---- */

START_TEST(test_holder_run_reference_may_contain_dashes)
{
    ck_assert(inv_holder_of_run("0123456789abcdef-sim.stage-1234-00ff", "stage"));
    ck_assert(inv_holder_of_run("0123456789abcdef-sim.claimed-is-reclaimed-12-aa",
                                "claimed-is-reclaimed"));
    ck_assert(!inv_holder_of_run("0123456789abcdef-sim.claimed-is-reclaimed-12-aa", "claimed"));
    ck_assert(!inv_holder_of_run("0123456789abcdef-sim.stage-1234-00ff", "stag"));
    ck_assert(!inv_holder_of_run("0123456789abcdef-gh12.1-1234-00ff", "stage"));
    ck_assert(!inv_holder_of_run("sim.stage-1", "stage"));
    ck_assert(!inv_holder_of_run("", "stage"));
    ck_assert(!inv_holder_of_run(NULL, "stage"));
}
END_TEST

/* ---- per-service call counters (§4 extension) ---- */

static double t_num(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    ck_assert_msg(cJSON_IsNumber(v), "%s missing", key);
    return v->valuedouble;
}

START_TEST(test_per_service_counters_count_every_call_of_their_service)
{
    sim_world *w = t_world("current");
    cJSON *before = sim_counters_snapshot(w);
    rs_transport *t = sim_transport_open(w, "count", NULL);
    ck_assert_int_eq(tc_kube(t, RS_OP_KUBE_GET, "Secret", "flux-system", "variables-base"), 200);
    ck_assert_int_eq(tc_kube(t, RS_OP_KUBE_GET, "Secret", "flux-system", "absent"), 404);
    ck_assert_int_eq(tc_merge(t, "ConfigMap", "flux-system", "absent", "{}"), 404);
    ck_assert_int_eq(t_call(t, RS_OP_OPENBAO_READ, "infrastructure/ghcr/auth", NULL), 200);
    ck_assert_int_eq(t_call(t, RS_OP_TALOS_READ_AUTH, "prod-worker-1", NULL), 200);
    ck_assert_int_eq(t_call(t, RS_OP_TALOS_PATCH, "prod-worker-1", "{}"), 200);
    ck_assert_int_eq(t_call(t, RS_OP_REGISTRY_TOKEN, "devantler-tech/ksail",
                            "{\"username\":\"deploy-bot\",\"password\":\"" CURRENT_PASS "\"}"),
                     200);
    ck_assert_int_eq(t_call(t, RS_OP_RUN_LIVENESS, "sim.ghost", NULL), 200);
    t->close(t);
    cJSON *after = sim_counters_snapshot(w);
    cJSON *delta = sim_counters_delta(before, after);
    ck_assert_double_eq(t_num(delta, "kube_calls"), 3);
    ck_assert_double_eq(t_num(delta, "openbao_calls"), 1);
    ck_assert_double_eq(t_num(delta, "talos_calls"), 2);
    ck_assert_double_eq(t_num(delta, "registry_calls"), 1);
    /* run.liveness is no service of the cluster: api_calls only. */
    ck_assert_double_eq(t_num(delta, "api_calls"), 8);
    ck_assert_double_eq(t_num(after, "kube_calls"), t_num(before, "kube_calls") + 3);
    cJSON_Delete(before);
    cJSON_Delete(after);
    cJSON_Delete(delta);
    sim_world_close(w);
}
END_TEST

/* ---- a clean run ---- */

static int t_core(const char *name, char **output)
{
    rs_run_args args;
    rs_err e = {0};
    ck_assert_int_eq(run_args_parse(0, NULL, &args, &e), RS_OK);
    size_t len = 0;
    FILE *out = open_memstream(output, &len);
    ck_assert_ptr_nonnull(out);
    int code = cli_run_once(
        &args, &(sim_run_req){.db_path = t_path, .run_name = name, .desired_name = "current"}, out);
    fclose(out);
    return code;
}

static int t_rows(sim_world *w, const char *sql)
{
    sqlite3_stmt *st = NULL;
    ck_assert_int_eq(sqlite3_prepare_v2(sim_world_db(w), sql, -1, &st, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    int n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return n;
}

START_TEST(test_clean_rollout_and_quiet_reassert_report_nothing)
{
    sim_world *w = t_world("previous");
    const char *runs[] = {"stage", "reassert"};
    for (size_t i = 0; i < RS_ARRAY_LEN(runs); i++) {
        inv_mark m;
        inv_mark_take(w, &m);
        char *output = NULL;
        int code = t_core(runs[i], &output);
        ck_assert_msg(code == 0, "%s exited %d:\n%s", runs[i], code, output);
        cJSON *failures = t_check(w, &m, runs[i], code, output, NULL, 0);
        t_none(failures);
        cJSON_Delete(failures);
        free(output);
        inv_mark_free(&m);
    }
    /* The stage run's protection was recorded, not assumed: its root write
     * carries both flags, and its first Lease write was made without them. */
    ck_assert_int_eq(t_rows(w, "SELECT count(*) FROM call_log WHERE run = 'stage' AND op ="
                               " 'kube.patch' AND target = 'Secret/flux-system/"
                               "ksail-registry-credentials' AND applied AND lease_held AND"
                               " fences_held"),
                     1);
    ck_assert_int_eq(t_rows(w, "SELECT lease_held FROM call_log WHERE run = 'stage' AND target ="
                               " 'Lease/flux-system/ghcr-auth-refresh' AND applied ORDER BY seq"
                               " LIMIT 1"),
                     0);
    sim_world_close(w);
}
END_TEST

/* ---- invariant 1 ---- */

START_TEST(test_write_without_the_lease_is_invariant_1)
{
    sim_world *w = t_world("current");
    inv_mark m;
    inv_mark_take(w, &m);
    rs_transport *t = sim_transport_open(w, ROGUE, NULL);
    ck_assert_int_eq(tc_merge(t, "Secret", "kyverno", "ghcr-auth",
                              "{\"metadata\":{\"labels\":{\"touched\":\"yes\"}}}"),
                     200);
    t->close(t);
    cJSON *failures = t_check(w, &m, ROGUE, 1, "", NULL, 0);
    t_only(failures, 1);
    ck_assert(t_mentions(failures, "Secret/kyverno/ghcr-auth"));
    ck_assert(t_mentions(failures, "did not hold the Lease"));
    cJSON_Delete(failures);
    /* Switched off for the run, it is not reported. */
    int off[] = {1};
    failures = t_check(w, &m, ROGUE, 1, "", off, 1);
    t_none(failures);
    cJSON_Delete(failures);
    inv_mark_free(&m);
    sim_world_close(w);
}
END_TEST

START_TEST(test_normal_path_write_under_the_lease_alone_is_invariant_1)
{
    sim_world *w = t_world("current");
    inv_mark m;
    inv_mark_take(w, &m);
    rs_transport *t = sim_transport_open(w, ROGUE, NULL);
    t_take_lease(t);
    ck_assert_int_eq(tc_merge(t, "PushSecret", "flux-system", "seed-ghcr",
                              "{\"metadata\":{\"annotations\":{\"force-sync\":\"1\"}}}"),
                     200);
    t->close(t);
    cJSON *failures = t_check(w, &m, ROGUE, 1, "", NULL, 0);
    t_only(failures, 1);
    ck_assert(t_mentions(failures, "PushSecret/flux-system/seed-ghcr"));
    ck_assert(t_mentions(failures, "both policy fences"));
    cJSON_Delete(failures);
    inv_mark_free(&m);
    sim_world_close(w);
}
END_TEST

START_TEST(test_node_release_after_the_fences_is_cleanup_but_a_drain_is_not)
{
    sim_world *w = t_world("current");
    inv_mark m;
    inv_mark_take(w, &m);
    rs_transport *t = sim_transport_open(w, ROGUE, NULL);
    t_take_lease(t);
    t_take_policy_fences(t);
    ck_assert_int_eq(
        tc_merge(
            t, "Node", NULL, "prod-worker-1",
            "{\"metadata\":{\"annotations\":{\"platform.devantler.tech/ghcr-auth-drain-owner\":"
            "\"" ROGUE_HOLDER "\"}},\"spec\":{\"unschedulable\":true}}"),
        200);
    t_release_policy_fences(t);
    /* §3.4 cleanup order: node cleanup after the policy resume is allowed. */
    ck_assert_int_eq(
        tc_merge(
            t, "Node", NULL, "prod-worker-1",
            "{\"metadata\":{\"annotations\":{\"platform.devantler.tech/ghcr-auth-drain-owner\":"
            "null}},\"spec\":{\"unschedulable\":false}}"),
        200);
    cJSON *failures = t_check(w, &m, ROGUE, 1, "", NULL, 0);
    t_none(failures);
    cJSON_Delete(failures);
    /* ... but a Talos write after the fences were released is not cleanup. */
    t_call(t, RS_OP_TALOS_PATCH, "prod-worker-2", "{}");
    t->close(t);
    failures = t_check(w, &m, ROGUE, 1, "", NULL, 0);
    t_only(failures, 1);
    ck_assert(t_mentions(failures, "talos.patch prod-worker-2"));
    cJSON_Delete(failures);
    inv_mark_free(&m);
    sim_world_close(w);
}
END_TEST

/* ---- invariant 2 ---- */

START_TEST(test_exit_0_with_a_stale_consumer_is_invariant_2)
{
    sim_world *w = t_world("current");
    char *prev = NULL, *cipher = NULL;
    ck_assert_int_eq(sim_world_credential(w, "previous", &prev, &cipher, NULL), RS_OK);
    /* The consumer keeps the previous credential, as a missed force-sync would. */
    char *b64 = base64_encode(prev, strlen(prev));
    char *patch = rs_xasprintf("{\"ref\":\"Secret/kyverno/ghcr-auth\",\"merge-patch\":{\"data\":"
                               "{\".dockerconfigjson\":\"%s\"}}}",
                               b64);
    tc_event(w, "kube.patch", patch);
    inv_mark m;
    inv_mark_take(w, &m);
    cJSON *failures = t_check(w, &m, ROGUE, 0, "", NULL, 0);
    t_only(failures, 2);
    ck_assert_int_eq(cJSON_GetArraySize(failures), 1);
    ck_assert(t_mentions(failures, "Secret kyverno/ghcr-auth"));
    cJSON_Delete(failures);
    /* Not a normal-path run: nothing to promise. */
    char *args[] = {"--allow-incomplete-fanout"};
    failures = cJSON_CreateArray();
    inv_run r = {.name = ROGUE, .args = args, .n_args = 1, .desired = "current", .output = ""};
    inv_check(w, &m, &r, failures);
    t_none(failures);
    cJSON_Delete(failures);
    inv_mark_free(&m);
    free(patch);
    free(b64);
    free(prev);
    free(cipher);
    sim_world_close(w);
}
END_TEST

START_TEST(test_exit_0_with_a_fence_left_held_is_invariant_2)
{
    sim_world *w = t_world("current");
    inv_mark m;
    inv_mark_take(w, &m);
    rs_transport *t = sim_transport_open(w, ROGUE, NULL);
    t_take_lease(t);
    t_take_policy_fences(t);
    t->close(t);
    cJSON *failures = t_check(w, &m, ROGUE, 0, "", NULL, 0);
    t_only(failures, 2);
    ck_assert(t_mentions(failures, "Kustomization flux-system/infrastructure is still suspended"));
    ck_assert(t_mentions(failures, "Lease flux-system/ghcr-auth-refresh is still held"));
    cJSON_Delete(failures);
    inv_mark_free(&m);
    sim_world_close(w);
}
END_TEST

/* DESIGN §6 invariant 2 (r2): a node the run reported in
 * annotation_only_nodes is held to its annotations, its Talos auth not
 * checked — that node only: another node with a stale Talos auth is still
 * invariant 2, and so is a listed node whose annotations are stale. (The run
 * side: scenarios/node/annotation-only-held-to-annotations.yaml.) */
static cJSON *t_check_listed(sim_world *w, const inv_mark *m, const char *listed_json)
{
    static const int off[] = {7};
    cJSON *listed = listed_json ? cJSON_Parse(listed_json) : NULL;
    cJSON *failures = cJSON_CreateArray();
    inv_run r = {.name = ROGUE,
                 .desired = "current",
                 .exit_code = 0,
                 .output = "",
                 .off = off,
                 .n_off = 1,
                 .annotation_only = listed};
    inv_check(w, m, &r, failures);
    cJSON_Delete(listed);
    return failures;
}

START_TEST(test_annotation_only_excuses_only_the_listed_node)
{
    sim_world *w = t_world("current");
    tc_event(w, "talos.partial-apply",
             "{\"nodes\":[\"prod-worker-1\",\"prod-worker-2\"],\"registry-auth\":\"previous\"}");
    inv_mark m;
    inv_mark_take(w, &m);
    /* Not listed at all: both nodes. */
    cJSON *failures = t_check_listed(w, &m, NULL);
    t_only(failures, 2);
    ck_assert_int_eq(cJSON_GetArraySize(failures), 2);
    cJSON_Delete(failures);
    /* One listed: the other is still invariant 2. */
    failures = t_check_listed(w, &m, "[\"prod-worker-1\"]");
    t_only(failures, 2);
    ck_assert_int_eq(cJSON_GetArraySize(failures), 1);
    ck_assert(t_mentions(failures, "Talos registry auth of prod-worker-2"));
    ck_assert(!t_mentions(failures, "prod-worker-1"));
    cJSON_Delete(failures);
    /* Both listed: nothing the run did not say. */
    failures = t_check_listed(w, &m, "[\"prod-worker-1\",\"prod-worker-2\"]");
    t_none(failures);
    cJSON_Delete(failures);
    /* Listed, but its annotations are stale: held to them. */
    tc_event(w, "talos.partial-apply",
             "{\"nodes\":[\"prod-worker-1\"],\"drop-node-annotations\":true}");
    failures = t_check_listed(w, &m, "[\"prod-worker-1\",\"prod-worker-2\"]");
    t_only(failures, 2);
    ck_assert(
        t_mentions(failures, "Node/prod-worker-1 does not carry the desired verified revision"));
    ck_assert(!t_mentions(failures, "Talos registry auth"));
    cJSON_Delete(failures);
    inv_mark_free(&m);
    sim_world_close(w);
}
END_TEST

/* A cordon left behind only on an error path: the run hands back its drain
 * claim and fails, but the node stays unschedulable. Invariant 2 holds on
 * every exit (DESIGN §6): uncordoned, or named in an error line as held. */
START_TEST(test_failed_run_leaving_its_cordon_unnamed_is_invariant_2)
{
    sim_world *w = t_world("current");
    inv_mark m;
    inv_mark_take(w, &m);
    rs_transport *t = sim_transport_open(w, ROGUE, NULL);
    t_take_lease(t);
    t_take_policy_fences(t);
    const char *owner = "{\"metadata\":{\"annotations\":{\"platform.devantler.tech/"
                        "ghcr-auth-drain-owner\":";
    char *claim =
        rs_xasprintf("%s\"" ROGUE_HOLDER "\"}},\"spec\":{\"unschedulable\":true}}", owner);
    char *hand_back = rs_xasprintf("%snull}}}", owner);
    ck_assert_int_eq(tc_merge(t, "Node", NULL, "prod-worker-1", claim), 200);
    t_release_policy_fences(t);
    ck_assert_int_eq(tc_merge(t, "Node", NULL, "prod-worker-1", hand_back), 200);
    t_release_lease(t);
    cJSON *failures = t_check(w, &m, ROGUE, 1, "::error::draining failed\n", NULL, 0);
    t_only(failures, 2);
    ck_assert(t_mentions(failures, "exit 1 but Node/prod-worker-1 is still cordoned by this run"));
    cJSON_Delete(failures);
    /* Named as held in an error line: the operator knows. */
    failures = t_check(w, &m, ROGUE, 1, "::error::Node prod-worker-1 left cordoned\n", NULL, 0);
    t_none(failures);
    cJSON_Delete(failures);
    /* Named only in a warning: not named. */
    failures = t_check(w, &m, ROGUE, 1, "::warning::Node prod-worker-1 left cordoned\n", NULL, 0);
    t_only(failures, 2);
    cJSON_Delete(failures);
    /* Uncordoned by the run that cordoned it: nothing to name. */
    t_take_lease(t);
    ck_assert_int_eq(tc_merge(t, "Node", NULL, "prod-worker-1", claim), 200);
    ck_assert_int_eq(tc_merge(t, "Node", NULL, "prod-worker-1",
                              "{\"metadata\":{\"annotations\":{\"platform.devantler.tech/"
                              "ghcr-auth-drain-owner\":null}},\"spec\":{\"unschedulable\":false}}"),
                     200);
    t_release_lease(t);
    t->close(t);
    failures = t_check(w, &m, ROGUE, 1, "::error::draining failed\n", NULL, 0);
    ck_assert(!t_mentions(failures, "still cordoned"));
    cJSON_Delete(failures);
    free(claim);
    free(hand_back);
    inv_mark_free(&m);
    sim_world_close(w);
}
END_TEST

/* ---- invariant 3 ---- */

START_TEST(test_root_write_after_a_talos_mutation_is_invariant_3)
{
    sim_world *w = t_world("current");
    inv_mark m;
    inv_mark_take(w, &m);
    rs_transport *t = sim_transport_open(w, ROGUE, NULL);
    t_take_lease(t);
    t_take_policy_fences(t);
    ck_assert_int_eq(tc_kube(t, RS_OP_KUBE_GET, "Secret", "flux-system", "variables-base"), 200);
    ck_assert_int_eq(tc_kube(t, RS_OP_KUBE_LIST, "Node", NULL, NULL), 200);
    ck_assert_int_eq(t_call(t, RS_OP_TALOS_PATCH, "prod-worker-1", "{}"), 200);
    ck_assert_int_eq(tc_kube(t, RS_OP_KUBE_LIST, "Node", NULL, NULL), 200);
    /* A root write that leaves its data as it was: only invariant 3 can see it. */
    ck_assert_int_eq(tc_merge(t, "Secret", "flux-system", "ksail-registry-credentials",
                              "{\"metadata\":{\"labels\":{\"touched\":\"yes\"}}}"),
                     200);
    t->close(t);
    cJSON *failures = t_check(w, &m, ROGUE, 1, "", NULL, 0);
    t_only(failures, 3);
    ck_assert_int_eq(cJSON_GetArraySize(failures), 1);
    ck_assert(t_mentions(failures, "a Talos mutation came between"));
    cJSON_Delete(failures);
    inv_mark_free(&m);
    sim_world_close(w);
}
END_TEST

START_TEST(test_root_write_after_one_inventory_is_invariant_3)
{
    sim_world *w = t_world("current");
    inv_mark m;
    inv_mark_take(w, &m);
    rs_transport *t = sim_transport_open(w, ROGUE, NULL);
    t_take_lease(t);
    t_take_policy_fences(t);
    ck_assert_int_eq(tc_kube(t, RS_OP_KUBE_GET, "Secret", "flux-system", "variables-base"), 200);
    ck_assert_int_eq(tc_kube(t, RS_OP_KUBE_LIST, "Node", NULL, NULL), 200);
    ck_assert_int_eq(tc_merge(t, "Secret", "flux-system", "ksail-registry-credentials",
                              "{\"metadata\":{\"labels\":{\"touched\":\"yes\"}}}"),
                     200);
    t->close(t);
    cJSON *failures = t_check(w, &m, ROGUE, 1, "", NULL, 0);
    t_only(failures, 3);
    ck_assert(t_mentions(failures, "fewer than two node inventories"));
    cJSON_Delete(failures);
    inv_mark_free(&m);
    sim_world_close(w);
}
END_TEST

/* ---- invariant 4 ---- */

START_TEST(test_uncordoning_a_foreign_cordon_is_invariant_4)
{
    sim_world *w = t_world("current");
    tc_event(
        w, "kube.patch",
        "{\"ref\":\"Node/prod-worker-1\",\"merge-patch\":{\"spec\":{\"unschedulable\":true}}}");
    inv_mark m;
    inv_mark_take(w, &m);
    rs_transport *t = sim_transport_open(w, ROGUE, NULL);
    t_take_lease(t);
    t_take_policy_fences(t);
    /* Claiming an already-cordoned node, then uncordoning it at release. */
    ck_assert_int_eq(
        tc_merge(
            t, "Node", NULL, "prod-worker-1",
            "{\"metadata\":{\"annotations\":{\"platform.devantler.tech/ghcr-auth-drain-owner\":"
            "\"" ROGUE_HOLDER "\"}},\"spec\":{\"unschedulable\":true}}"),
        200);
    ck_assert_int_eq(
        tc_merge(
            t, "Node", NULL, "prod-worker-1",
            "{\"metadata\":{\"annotations\":{\"platform.devantler.tech/ghcr-auth-drain-owner\":"
            "null}},\"spec\":{\"unschedulable\":false}}"),
        200);
    t->close(t);
    cJSON *failures = t_check(w, &m, ROGUE, 1, "", NULL, 0);
    t_only(failures, 4);
    ck_assert_int_eq(cJSON_GetArraySize(failures), 1);
    ck_assert(t_mentions(failures, "uncordoned Node/prod-worker-1"));
    cJSON_Delete(failures);
    inv_mark_free(&m);
    sim_world_close(w);
}
END_TEST

START_TEST(test_uncordoning_a_node_another_run_owns_is_invariant_4)
{
    sim_world *w = t_world("current");
    inv_mark m;
    inv_mark_take(w, &m);
    rs_transport *t = sim_transport_open(w, ROGUE, NULL);
    t_take_lease(t);
    t_take_policy_fences(t);
    ck_assert_int_eq(
        tc_merge(
            t, "Node", NULL, "prod-worker-2",
            "{\"metadata\":{\"annotations\":{\"platform.devantler.tech/ghcr-auth-drain-owner\":"
            "\"" OTHER_HOLDER "\"}},\"spec\":{\"unschedulable\":true}}"),
        200);
    ck_assert_int_eq(
        tc_merge(t, "Node", NULL, "prod-worker-2", "{\"spec\":{\"unschedulable\":false}}"), 200);
    t->close(t);
    cJSON *failures = t_check(w, &m, ROGUE, 1, "", NULL, 0);
    t_only(failures, 4);
    ck_assert(t_mentions(failures, "drain owner did not name this run"));
    cJSON_Delete(failures);
    inv_mark_free(&m);
    sim_world_close(w);
}
END_TEST

START_TEST(test_two_nodes_rebooting_at_once_is_invariant_4)
{
    sim_world *w = t_world("current");
    inv_mark m;
    inv_mark_take(w, &m);
    rs_transport *t = sim_transport_open(w, ROGUE, NULL);
    t_take_lease(t);
    t_take_policy_fences(t);
    ck_assert_int_eq(t_call(t, RS_OP_TALOS_REBOOT, "prod-worker-1", NULL), 200);
    ck_assert_int_eq(t_call(t, RS_OP_TALOS_REBOOT, "prod-worker-2", NULL), 200);
    t->close(t);
    cJSON *failures = t_check(w, &m, ROGUE, 1, "", NULL, 0);
    t_only(failures, 4);
    ck_assert_int_eq(cJSON_GetArraySize(failures), 1);
    ck_assert(
        t_mentions(failures, "rebooted prod-worker-2 while prod-worker-1 was still rebooting"));
    cJSON_Delete(failures);
    inv_mark_free(&m);
    sim_world_close(w);
}
END_TEST

START_TEST(test_control_plane_reboot_beside_an_unhealthy_peer_is_invariant_4)
{
    sim_world *w = t_world("current");
    tc_event(w, "etcd.unhealthy", "{\"node\":\"prod-control-plane-3\"}");
    inv_mark m;
    inv_mark_take(w, &m);
    rs_transport *t = sim_transport_open(w, ROGUE, NULL);
    t_take_lease(t);
    t_take_policy_fences(t);
    /* A worker reboot does not touch quorum. */
    ck_assert_int_eq(t_call(t, RS_OP_TALOS_REBOOT, "prod-worker-1", NULL), 200);
    cJSON *failures = t_check(w, &m, ROGUE, 1, "", NULL, 0);
    t_none(failures);
    cJSON_Delete(failures);
    t->sleep_ms(t, 300000); /* the worker is back */
    ck_assert_int_eq(t_call(t, RS_OP_TALOS_REBOOT, "prod-control-plane-1", NULL), 200);
    t->close(t);
    failures = t_check(w, &m, ROGUE, 1, "", NULL, 0);
    t_only(failures, 4);
    ck_assert_int_eq(cJSON_GetArraySize(failures), 1);
    ck_assert(t_mentions(failures, "control plane prod-control-plane-3 was unhealthy (etcd"));
    cJSON_Delete(failures);
    inv_mark_free(&m);
    sim_world_close(w);
}
END_TEST

/* ---- invariant 5 ---- */

START_TEST(test_failed_run_with_the_root_changed_is_invariant_5)
{
    sim_world *w = t_world("previous");
    inv_mark m;
    inv_mark_take(w, &m);
    /* The root moves during the run with no cutover by it. */
    tc_event(w, "kube.patch",
             "{\"ref\":\"Secret/flux-system/ksail-registry-credentials\",\"merge-patch\":{\"data\":"
             "{\".dockerconfigjson\":\"e30=\"}}}");
    rs_transport *t = sim_transport_open(w, ROGUE, NULL);
    ck_assert_int_eq(tc_kube(t, RS_OP_KUBE_GET, "Secret", "flux-system", "variables-base"), 200);
    t->close(t);
    cJSON *failures = t_check(w, &m, ROGUE, 1, "", NULL, 0);
    t_only(failures, 5);
    ck_assert_int_eq(cJSON_GetArraySize(failures), 1);
    ck_assert(t_mentions(failures, "exited 1"));
    cJSON_Delete(failures);
    /* A crash did no cleanup by definition: invariant 5 does not judge it. */
    failures = t_check(w, &m, ROGUE, 137, "", NULL, 0);
    t_none(failures);
    cJSON_Delete(failures);
    /* Exit 0 is invariant 2's business, not 5's. */
    int off2[] = {2};
    failures = t_check(w, &m, ROGUE, 0, "", off2, 1);
    t_none(failures);
    cJSON_Delete(failures);
    inv_mark_free(&m);
    sim_world_close(w);
}
END_TEST

START_TEST(test_failed_bootstrap_run_that_wrote_the_root_passed_cutover)
{
    sim_world *w = t_world("previous");
    inv_mark m;
    inv_mark_take(w, &m);
    rs_transport *t = sim_transport_open(w, ROGUE, NULL);
    t_take_lease(t);
    ck_assert_int_eq(tc_merge(t, "Secret", "flux-system", "ksail-registry-credentials",
                              "{\"data\":{\".dockerconfigjson\":\"e30=\"}}"),
                     200);
    t->close(t);
    cJSON *failures = t_check(w, &m, ROGUE, 1, "", NULL, 0);
    t_none(failures);
    cJSON_Delete(failures);
    inv_mark_free(&m);
    sim_world_close(w);
}
END_TEST

/* ---- invariant 6 ---- */

START_TEST(test_catalogue_password_in_output_is_invariant_6)
{
    sim_world *w = t_world("current");
    inv_mark m;
    inv_mark_take(w, &m);
    cJSON *failures =
        t_check(w, &m, ROGUE, 1, "::error::login failed for " CURRENT_PASS "\n", NULL, 0);
    t_only(failures, 6);
    cJSON_Delete(failures);
    int off[] = {6};
    failures = t_check(w, &m, ROGUE, 1, "::error::login failed for " CURRENT_PASS "\n", off, 1);
    t_none(failures);
    cJSON_Delete(failures);
    inv_mark_free(&m);
    sim_world_close(w);
}
END_TEST

/* Every encoding DESIGN §5.1/§6.6 and the README name, built here
 * independently of the filter: raw, base64 at each alignment inside a
 * larger text (standard and URL-safe), base64 of user:password (the auth
 * field), and the docker config JSON-escaped inside a JSON document. Each
 * alone must make invariant 6 fail (base64(user:password) once passed). */
START_TEST(test_every_encoding_of_a_credential_is_invariant_6)
{
    sim_world *w = t_world("current");
    inv_mark m;
    inv_mark_take(w, &m);
    const char *userpass = "deploy-bot:" CURRENT_PASS;
    char *forms[8];
    size_t n = 0;
    forms[n++] = rs_xasprintf("held by %s", CURRENT_PASS);
    forms[n++] = base64_encode(userpass, strlen(userpass));
    const char *wrapped[] = {"x", "xy", "xyz"};
    for (size_t i = 0; i < RS_ARRAY_LEN(wrapped); i++) {
        char *plain = rs_xasprintf("%s%s-tail", wrapped[i], CURRENT_PASS);
        forms[n++] = base64_encode(plain, strlen(plain));
        free(plain);
    }
    char *urlsafe = rs_xasprintf("%s?>?%s", CURRENT_PASS, CURRENT_PASS);
    forms[n] = base64_encode(urlsafe, strlen(urlsafe));
    for (char *p = forms[n]; *p; p++)
        *p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
    n++;
    free(urlsafe);
    char *dc = cred_dockerconfig_build("ghcr.io", "deploy-bot", CURRENT_PASS);
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "holder", dc);
    forms[n++] = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    free(dc);
    for (size_t i = 0; i < n; i++) {
        char *out = rs_xasprintf("::error::Lease is held by %s\n", forms[i]);
        cJSON *failures = t_check(w, &m, ROGUE, 1, out, NULL, 0);
        char *all = cJSON_Print(failures);
        ck_assert_msg(t_mentions(failures, "invariant 6"), "form %zu passed invariant 6: %s", i,
                      all);
        free(all);
        cJSON_Delete(failures);
        free(out);
        free(forms[i]);
    }
    /* The username alone, and the other credential's user name, are not
     * secrets: nothing to report. */
    cJSON *failures = t_check(w, &m, ROGUE, 1, "::error::login as deploy-bot failed\n", NULL, 0);
    t_none(failures);
    cJSON_Delete(failures);
    inv_mark_free(&m);
    sim_world_close(w);
}
END_TEST

/* §6.6 names tokens too: a registry bearer token the sim handed the core
 * (every one starts "simtok-"), raw or base64 inside a larger text, fails
 * invariant 6; text that merely talks about tokens does not. */
START_TEST(test_a_registry_token_in_output_is_invariant_6)
{
    sim_world *w = t_world("current");
    inv_mark m;
    inv_mark_take(w, &m);
    const char *tok = "simtok-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    char *bearer = rs_xasprintf("Authorization: Bearer %s", tok);
    char *b64 = base64_encode(bearer, strlen(bearer));
    char *forms[] = {rs_xasprintf("::error::manifest refused for %s\n", tok),
                     rs_xasprintf("::error::request %s\n", b64)};
    for (size_t i = 0; i < RS_ARRAY_LEN(forms); i++) {
        cJSON *failures = t_check(w, &m, ROGUE, 1, forms[i], NULL, 0);
        ck_assert_msg(t_mentions(failures, "invariant 6: a registry token"),
                      "form %zu passed invariant 6", i);
        cJSON_Delete(failures);
        free(forms[i]);
    }
    cJSON *failures =
        t_check(w, &m, ROGUE, 1, "::error::the registry refused the token (HTTP 401)\n", NULL, 0);
    t_none(failures);
    cJSON_Delete(failures);
    free(bearer);
    free(b64);
    inv_mark_free(&m);
    sim_world_close(w);
}
END_TEST

/* ---- invariant 7 ---- */

START_TEST(test_fence_held_and_unnamed_is_invariant_7)
{
    sim_world *w = t_world("current");
    inv_mark m;
    inv_mark_take(w, &m);
    rs_transport *t = sim_transport_open(w, ROGUE, NULL);
    t_take_lease(t);
    t_take_policy_fences(t);
    t->close(t);
    /* Held and named nowhere: one sentence per fence. */
    cJSON *failures = t_check_all(w, &m, ROGUE, 1, "::error::something else failed\n");
    ck_assert(t_mentions(failures, "invariant 7: Lease flux-system/ghcr-auth-refresh"));
    ck_assert(t_mentions(failures, "invariant 7: Kustomization flux-system/flux-system"));
    ck_assert(t_mentions(failures, "invariant 7: Kustomization flux-system/infrastructure"));
    cJSON_Delete(failures);
    /* A mention outside an error line does not count. */
    failures = t_check_all(w, &m, ROGUE, 1, "taking Lease flux-system/ghcr-auth-refresh\n");
    ck_assert(t_mentions(failures, "invariant 7: Lease flux-system/ghcr-auth-refresh"));
    cJSON_Delete(failures);
    /* Named in error lines: not reported. */
    failures = t_check_all(w, &m, ROGUE, 1,
                           "::error::parent fence flux-system/flux-system retained\n"
                           "::error::child fence flux-system/infrastructure retained\n"
                           "::error::releasing Lease flux-system/ghcr-auth-refresh failed\n");
    ck_assert(!t_mentions(failures, "invariant 7"));
    cJSON_Delete(failures);
    /* A crashed run cannot speak: not judged. */
    failures = t_check_all(w, &m, ROGUE, 137, "");
    ck_assert(!t_mentions(failures, "invariant 7"));
    cJSON_Delete(failures);
    inv_mark_free(&m);
    sim_world_close(w);
}
END_TEST

static Suite *invariants_suite(void)
{
    Suite *s = suite_create("invariants");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_holder_run_reference_may_contain_dashes);
    tcase_add_test(tc, test_per_service_counters_count_every_call_of_their_service);
    tcase_add_test(tc, test_clean_rollout_and_quiet_reassert_report_nothing);
    tcase_add_test(tc, test_write_without_the_lease_is_invariant_1);
    tcase_add_test(tc, test_normal_path_write_under_the_lease_alone_is_invariant_1);
    tcase_add_test(tc, test_node_release_after_the_fences_is_cleanup_but_a_drain_is_not);
    tcase_add_test(tc, test_exit_0_with_a_stale_consumer_is_invariant_2);
    tcase_add_test(tc, test_exit_0_with_a_fence_left_held_is_invariant_2);
    tcase_add_test(tc, test_annotation_only_excuses_only_the_listed_node);
    tcase_add_test(tc, test_failed_run_leaving_its_cordon_unnamed_is_invariant_2);
    tcase_add_test(tc, test_root_write_after_a_talos_mutation_is_invariant_3);
    tcase_add_test(tc, test_root_write_after_one_inventory_is_invariant_3);
    tcase_add_test(tc, test_uncordoning_a_foreign_cordon_is_invariant_4);
    tcase_add_test(tc, test_uncordoning_a_node_another_run_owns_is_invariant_4);
    tcase_add_test(tc, test_two_nodes_rebooting_at_once_is_invariant_4);
    tcase_add_test(tc, test_control_plane_reboot_beside_an_unhealthy_peer_is_invariant_4);
    tcase_add_test(tc, test_failed_run_with_the_root_changed_is_invariant_5);
    tcase_add_test(tc, test_failed_bootstrap_run_that_wrote_the_root_passed_cutover);
    tcase_add_test(tc, test_catalogue_password_in_output_is_invariant_6);
    tcase_add_test(tc, test_every_encoding_of_a_credential_is_invariant_6);
    tcase_add_test(tc, test_a_registry_token_in_output_is_invariant_6);
    tcase_add_test(tc, test_fence_held_and_unnamed_is_invariant_7);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(invariants_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
