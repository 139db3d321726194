/*
 * test_transport.c — the transport interface and its shims: the counting
 * shim agrees with the world's oracle counters on a full Stage and a no-drift
 * Reassert, and judges lost answers and refused writes from the client's
 * side; (later sections) the sent/ambiguous distinction, secret marks and
 * the batch cost.
 */
#include "cli/cli.h"
#include "core/gate.h"
#include "core/live/live_config.h"
#include "core/transport/transport_count.h"
#include "sim/runner/runner.h"
#include "sim/scenario/scenario.h"
#include "sim/store/jsonpatch.h"
#include "sim/world/world.h"
#include "tests/support_transport.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the counting shim ---- */

START_TEST(test_count_shim_counts_writes_by_answer)
{
    fake_root f;
    fake_init(&f);
    int answers[] = {200, 200, 409, 0, 201, 0};
    memcpy(f.statuses, answers, sizeof answers);
    f.sent[3] = true; /* the Lease patch left and its answer was lost */
    rs_config cfg;
    rs_config_defaults(&cfg);
    rs_transport *t = tp_count_open(&f.t, &cfg);
    cJSON *body = cJSON_CreateObject();
    rs_req get = {.op = RS_OP_KUBE_GET, .kind = "Secret", .ns = "a", .name = "b"};
    rs_req patch = {.op = RS_OP_KUBE_PATCH,
                    .kind = "Secret",
                    .ns = "a",
                    .name = "b",
                    .patch_type = RS_PATCH_MERGE,
                    .body = body};
    rs_req lease = {.op = RS_OP_KUBE_PATCH,
                    .kind = "Lease",
                    .ns = cfg.lease_ns,
                    .name = cfg.lease_name,
                    .patch_type = RS_PATCH_MERGE,
                    .body = body};
    rs_req reboot = {.op = RS_OP_TALOS_REBOOT, .target = "n1"};
    const rs_req *seq[] = {&get, &patch, &patch, &lease, &reboot, &patch};
    for (size_t i = 0; i < RS_ARRAY_LEN(seq); i++) {
        rs_resp r;
        t->call(t, seq[i], &r);
        rs_resp_free(&r);
    }
    t->sleep_ms(t, 1000);
    cJSON *c = tp_count_counters(t);
    ck_assert_double_eq(tt_num(c, "api_calls"), 6);
    ck_assert_double_eq(tt_num(c, "kube_calls"), 5);
    ck_assert_double_eq(tt_num(c, "talos_calls"), 1);
    /* 200 patch and 201 reboot applied; 409 refused; the lost Lease patch
     * is neither a write nor forgotten; the patch that never left is
     * neither. */
    ck_assert_double_eq(tt_num(c, "writes"), 2);
    ck_assert_double_eq(tt_num(c, "writes_unconfirmed"), 1);
    ck_assert_double_eq(tt_num(c, "lease_writes"), 0);
    ck_assert_double_eq(tt_num(c, "node_reboots"), 1);
    ck_assert_double_eq(tt_num(c, "talos_mutations"), 1);
    const cJSON *kinds = cJSON_GetObjectItemCaseSensitive(c, "writes_by_kind");
    ck_assert_double_eq(tt_num(kinds, "Secret"), 1);
    ck_assert_double_eq(tt_num(kinds, "talos.reboot"), 1);
    ck_assert_double_eq(tt_num(c, "virtual_seconds"), 1.15);
    cJSON_Delete(c);
    cJSON_Delete(body);
    t->close(t);
    ck_assert_int_eq(f.n_calls, 6); /* closing the shim leaves the root alone */
    rs_config_free(&cfg);
}
END_TEST

/* Every §4 counter the shim reports equals the world's delta when no answer
 * was lost: the shim is right wherever the client can know. */
static void assert_shim_matches_world(const cJSON *shim, const cJSON *world)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, world)
    {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(shim, it->string);
        if (strcmp(it->string, "writes_by_kind") == 0) {
            const cJSON *k;
            cJSON_ArrayForEach(k, it)
            {
                const cJSON *sk = cJSON_GetObjectItemCaseSensitive(s, k->string);
                double sv = cJSON_IsNumber(sk) ? sk->valuedouble : 0;
                ck_assert_msg(sv == k->valuedouble, "writes_by_kind.%s: shim %g, world %g",
                              k->string, sv, k->valuedouble);
            }
        } else if (cJSON_IsBool(it)) {
            ck_assert_msg(cJSON_IsBool(s) && cJSON_IsTrue(s) == cJSON_IsTrue(it), "%s differs",
                          it->string);
        } else {
            ck_assert_msg(cJSON_IsNumber(s) && s->valuedouble == it->valuedouble,
                          "%s: shim %g, world %g", it->string, cJSON_GetNumberValue(s),
                          it->valuedouble);
        }
    }
}

START_TEST(test_count_shim_agrees_with_world_counters)
{
    const char *strategy = _i == 0 ? "lazy" : "eager";
    char *db = tt_scenario_world("two-run-stage-reassert.yaml");
    const char *runs[] = {"stage", "reassert"};
    for (size_t r = 0; r < RS_ARRAY_LEN(runs); r++) {
        cJSON *before = tt_world_counters(db);
        cJSON *doc = tt_run_json(db, runs[r], strategy);
        cJSON *after = tt_world_counters(db);
        cJSON *delta = sim_counters_delta(before, after);
        const cJSON *shim = cJSON_GetObjectItemCaseSensitive(doc, "counters");
        assert_shim_matches_world(shim, delta);
        ck_assert_double_eq(tt_num(shim, "writes_unconfirmed"), 0);
        if (r == 0) ck_assert_double_gt(tt_num(shim, "writes"), 0);
        cJSON_Delete(before);
        cJSON_Delete(after);
        cJSON_Delete(delta);
        cJSON_Delete(doc);
    }
    unlink(db);
    free(db);
}
END_TEST

/* ---- transport v2: sent/ambiguous, secret marks, intents, mount ---- */

static sc_run *faulted_run(void)
{
    sc_run *run = calloc(1, sizeof *run);
    run->n_faults = 3;
    run->faults = calloc(3, sizeof *run->faults);
    run->faults[0] = (sc_fault){.on = "kube.patch Secret/flux-system/variables-base",
                                .nth = 1,
                                .effect = SC_FAULT_LOST_RESPONSE};
    run->faults[1] = (sc_fault){
        .on = "kube.patch Secret/flux-system/variables-base", .nth = 2, .effect = SC_FAULT_TIMEOUT};
    run->faults[2] = (sc_fault){.on = "kube.patch Secret/flux-system/variables-base",
                                .nth = 3,
                                .effect = SC_FAULT_FAIL,
                                .fail_status = 503};
    return run;
}

static int sim_patch_labels(rs_transport *t, rs_resp *r)
{
    cJSON *body = cJSON_Parse("{\"metadata\":{\"labels\":{\"a\":\"b\"}}}");
    rs_req req = {.op = RS_OP_KUBE_PATCH,
                  .kind = "Secret",
                  .ns = "flux-system",
                  .name = "variables-base",
                  .patch_type = RS_PATCH_MERGE,
                  .body = body};
    int st = tp_call(t, &req, r);
    cJSON_Delete(body);
    return st;
}

START_TEST(test_lost_answer_is_ambiguous_and_refusal_is_not_sent)
{
    char *db = tt_scenario_world("two-run-stage-reassert.yaml");
    sim_world *w = NULL;
    rs_err e;
    ck_assert(sim_world_open(db, &w, &e) == RS_OK);
    sc_run *run = faulted_run();
    rs_transport *t = sim_transport_open(w, "t", run);
    rs_resp r;
    ck_assert_int_eq(sim_patch_labels(t, &r), 0); /* lost-response: applied, answer lost */
    ck_assert(rs_resp_ambiguous(&r) && r.sent == RS_SENT_YES && !rs_resp_not_sent(&r));
    rs_resp_free(&r);
    ck_assert_int_eq(sim_patch_labels(t, &r), 0); /* timeout: the client cannot know */
    ck_assert(rs_resp_ambiguous(&r) && r.sent == RS_SENT_UNKNOWN);
    rs_resp_free(&r);
    ck_assert_int_eq(sim_patch_labels(t, &r), 503); /* answered: not ambiguous */
    ck_assert(!rs_resp_ambiguous(&r) && !rs_resp_not_sent(&r) && r.sent == RS_SENT_YES);
    rs_resp_free(&r);
    ck_assert_int_eq(sim_patch_labels(t, &r), 200);
    ck_assert(!rs_resp_ambiguous(&r) && r.sent == RS_SENT_YES);
    rs_resp_free(&r);
    t->close(t);
    sim_world_close(w);
    free(run->faults);
    free(run);
    /* A status-0 answer that says "never left" is safe to retry. */
    rs_resp nr;
    rs_resp_init(&nr);
    ck_assert(rs_resp_ambiguous(&nr)); /* unknown by default: fail closed */
    nr.sent = RS_SENT_NO;
    ck_assert(rs_resp_not_sent(&nr) && !rs_resp_ambiguous(&nr));
    unlink(db);
    free(db);
}
END_TEST

/* What a recorder does with a marked value: replace it, whatever its type,
 * by a fingerprint string. */
static void redact(cJSON *v, void *arg)
{
    (*(int *)arg)++;
    cJSON_Delete(v->child);
    v->child = NULL;
    free(v->valuestring);
    v->valuestring = rs_xstrdup("fp:x");
    v->type = cJSON_String;
}

static bool printed_contains(const cJSON *doc, const char *needle)
{
    char *s = cJSON_PrintUnformatted(doc);
    bool found = strstr(s, needle) != NULL;
    free(s);
    return found;
}

/* A message says what an answer was; a transport error is never
 * "HTTP 0" but timed out / connection lost / not sent, with its detail. */
START_TEST(test_answer_text_names_the_transport_error)
{
    ck_assert_str_eq(rs_answer_from(503, RS_SENT_YES, "ignored").text, "HTTP 503");
    ck_assert_str_eq(rs_answer_from(0, RS_SENT_UNKNOWN, "timeout").text,
                     "timed out, no answer (timeout)");
    ck_assert_str_eq(rs_answer_from(0, RS_SENT_YES, "").text,
                     "connection lost after sending, no answer");
    ck_assert_str_eq(rs_answer_from(0, RS_SENT_NO, NULL).text, "not sent");
    rs_resp r;
    rs_resp_init(&r);
    r.sent = RS_SENT_NO;
    snprintf(r.error, sizeof r.error, "Could not resolve host");
    ck_assert_str_eq(rs_answer_of(&r).text, "not sent (Could not resolve host)");
}
END_TEST

START_TEST(test_secret_marks_declare_every_secret_field)
{
    /* Secret create: /data. */
    rs_req create = {.op = RS_OP_KUBE_CREATE, .kind = "Secret", .ns = "a"};
    rs_req_mark_secrets(&create);
    cJSON *obj = cJSON_Parse("{\"metadata\":{\"name\":\"s\"},\"data\":{\"k\":\"c2VjcmV0\"}}");
    int n = 0;
    ck_assert_uint_eq(rs_secret_visit(obj, &create.secret, redact, &n), 1);
    ck_assert(!printed_contains(obj, "c2VjcmV0") && printed_contains(obj, "\"name\":\"s\""));
    cJSON_Delete(obj);
    /* Secret JSON patch: every op's value (the resourceVersion test too: harmless). */
    rs_req patch = {.op = RS_OP_KUBE_PATCH, .kind = "Secret", .patch_type = RS_PATCH_JSON};
    rs_req_mark_secrets(&patch);
    cJSON *ops = cJSON_Parse("[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\","
                             "\"value\":\"7\"},{\"op\":\"replace\",\"path\":\"/data/k\","
                             "\"value\":\"c2VjcmV0\"}]");
    n = 0;
    ck_assert_uint_eq(rs_secret_visit(ops, &patch.secret, redact, &n), 2);
    ck_assert(!printed_contains(ops, "c2VjcmV0") && printed_contains(ops, "/data/k"));
    cJSON_Delete(ops);
    /* Not a Secret: nothing declared. */
    rs_req ks = {.op = RS_OP_KUBE_PATCH, .kind = "Kustomization", .patch_type = RS_PATCH_JSON};
    rs_req_mark_secrets(&ks);
    ck_assert_ptr_null(ks.secret.paths[0]);
    /* Talos auth intent, registry password and token. */
    rs_req talos = {.op = RS_OP_TALOS_PATCH};
    rs_req_mark_secrets(&talos);
    ck_assert_str_eq(talos.secret.paths[0], "/registry-auth/auth");
    rs_req tok = {.op = RS_OP_REGISTRY_TOKEN};
    rs_req_mark_secrets(&tok);
    ck_assert_str_eq(tok.secret.paths[0], "/password");
    /* Marks are a set, bounded. */
    rs_secret_marks m = {{NULL}};
    ck_assert(rs_secret_mark(&m, "/a") && rs_secret_mark(&m, "/a"));
    ck_assert_ptr_null(m.paths[1]);
    const char *many[] = {"/b", "/c", "/d", "/e", "/f", "/g"};
    size_t ok = 0;
    for (size_t i = 0; i < RS_ARRAY_LEN(many); i++)
        ok += rs_secret_mark(&m, many[i]);
    ck_assert_uint_eq(ok, RS_SECRET_MARKS_MAX - 1);
}
END_TEST

/* The sim root declares the secrets of its answers: after redacting by the
 * marks alone, no answer still holds the credential. */
START_TEST(test_sim_answers_mark_their_secrets)
{
    char *db = tt_scenario_world("two-run-stage-reassert.yaml");
    sim_world *w = NULL;
    rs_err e;
    ck_assert(sim_world_open(db, &w, &e) == RS_OK);
    char *cred = NULL, *cipher = NULL;
    ck_assert(sim_world_credential(w, "previous", &cred, &cipher, &e) == RS_OK);
    cJSON *doc = cJSON_Parse(cred);
    const char *pass = cJSON_GetStringValue(jsonpointer_get(doc, "/auths/ghcr.io/password"));
    ck_assert_ptr_nonnull(pass);
    char *password = rs_xstrdup(pass);
    cJSON_Delete(doc);
    rs_transport *t = sim_transport_open(w, "t", NULL);
    cJSON *host = cJSON_Parse("{\"host\":\"ghcr.io\"}");
    rs_req reqs[] = {
        {.op = RS_OP_OPENBAO_READ, .mount = "secret", .target = "infrastructure/ghcr/auth"},
        {.op = RS_OP_TALOS_READ_AUTH, .target = "prod-worker-1", .host = "ghcr.io", .body = host},
        {.op = RS_OP_KUBE_GET, .kind = "Secret", .ns = "flux-system", .name = "variables-base"},
        {.op = RS_OP_KUBE_LIST, .kind = "Secret"},
    };
    for (size_t i = 0; i < RS_ARRAY_LEN(reqs); i++) {
        rs_resp r;
        ck_assert_int_eq(tp_call(t, &reqs[i], &r), 200);
        ck_assert_ptr_nonnull(r.secret.paths[0]);
        int n = 0;
        ck_assert_uint_gt(rs_secret_visit(r.body, &r.secret, redact, &n), 0);
        ck_assert_msg(!printed_contains(r.body, password), "answer %zu still holds the password",
                      i);
        rs_resp_free(&r);
    }
    /* The mount travels: another mount is another path (404). */
    rs_req wrong = {.op = RS_OP_OPENBAO_READ, .mount = "kv", .target = "infrastructure/ghcr/auth"};
    rs_resp r;
    ck_assert_int_eq(tp_call(t, &wrong, &r), 404);
    rs_resp_free(&r);
    /* Talos auth is read per host: another host has none here. */
    cJSON *other = cJSON_Parse("{\"host\":\"quay.io\"}");
    rs_req oh = {.op = RS_OP_TALOS_READ_AUTH, .target = "prod-worker-1", .body = other};
    ck_assert_int_eq(tp_call(t, &oh, &r), 404);
    rs_resp_free(&r);
    /* A machine-config shape is no intent. */
    cJSON *mc = cJSON_Parse("{\"machine\":{\"nodeAnnotations\":{\"x\":\"1\"}}}");
    rs_req old = {.op = RS_OP_TALOS_PATCH, .target = "prod-worker-1", .body = mc};
    ck_assert_int_eq(tp_call(t, &old, &r), 400);
    rs_resp_free(&r);
    cJSON_Delete(mc);
    cJSON_Delete(other);
    cJSON_Delete(host);
    t->close(t);
    sim_world_close(w);
    memset(cred, 0, strlen(cred));
    free(cred);
    free(cipher);
    free(password);
    unlink(db);
    free(db);
}
END_TEST

/* openbao.mount from --config reaches the core's OpenBao read: a mount the
 * world does not serve makes the seed unreadable (HTTP 404), which lazy
 * treats as drift and repairs; the default mount finds nothing to do. */
START_TEST(test_openbao_mount_travels_from_config)
{
    char *db = tt_scenario_world("two-run-stage-reassert.yaml");
    cJSON *stage = tt_run_json(db, "stage", "lazy");
    cJSON_Delete(stage);
    cJSON *same = tt_run_json(db, "same-mount", "lazy");
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(same, "outcome")),
                     "converged");
    cJSON_Delete(same);
    char cfgpath[] = "/tmp/reassert-mount-XXXXXX";
    int fd = mkstemp(cfgpath);
    ck_assert_int_ge(fd, 0);
    const char *yaml = "openbao:\n  mount: kv\n";
    ck_assert_int_eq(write(fd, yaml, strlen(yaml)), (ssize_t)strlen(yaml));
    close(fd);
    rs_run_args args;
    rs_err e;
    char *argv[] = {"--output", "json", "--config", cfgpath};
    ck_assert(run_args_parse(4, argv, &args, &e) == RS_OK);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cli_run_once(
        &args, &(sim_run_req){.db_path = db, .run_name = "mount", .desired_name = "current"}, out);
    fclose(out);
    ck_assert_msg(strstr(text, "\"outcome\":\"repaired\"") && strstr(text, "\"PushSecret\":1"),
                  "the configured mount did not reach the OpenBao read: %s", text);
    free(text);
    unlink(cfgpath);
    unlink(db);
    free(db);
}
END_TEST

/* ---- batches of independent reads ---- */

static int64_t batch_cost_ms(rs_transport *t, size_t n, int parallelism, int *ok)
{
    cJSON *host = cJSON_Parse("{\"host\":\"ghcr.io\"}");
    rs_req *reqs = calloc(n, sizeof *reqs);
    rs_resp *resps = calloc(n, sizeof *resps);
    const char *nodes[] = {"prod-worker-1", "prod-worker-2", "prod-control-plane-1"};
    for (size_t i = 0; i < n; i++)
        reqs[i] = (rs_req){
            .op = RS_OP_TALOS_READ_AUTH, .target = nodes[i % 3], .host = "ghcr.io", .body = host};
    int64_t t0 = t->now_ms(t);
    tp_call_batch(t, reqs, resps, n, parallelism);
    int64_t cost = t->now_ms(t) - t0;
    *ok = 0;
    for (size_t i = 0; i < n; i++) {
        if (resps[i].status == 200 && jsonpointer_get(resps[i].body, "/auth/password")) (*ok)++;
        rs_resp_free(&resps[i]);
    }
    free(reqs);
    free(resps);
    cJSON_Delete(host);
    return cost;
}

START_TEST(test_sim_batch_costs_ceil_n_over_p_round_trips)
{
    char *db = tt_scenario_world("two-run-stage-reassert.yaml");
    sim_world *w = NULL;
    rs_err e;
    ck_assert(sim_world_open(db, &w, &e) == RS_OK);
    rs_config cfg;
    rs_config_defaults(&cfg);
    rs_transport *root = sim_transport_open(w, "batch", NULL);
    rs_transport *t = tp_count_open(root, &cfg);
    int ok = 0;
    ck_assert_int_eq(batch_cost_ms(t, 6, 16, &ok), SIM_CALL_MS); /* ceil(6/16) = 1 */
    ck_assert_int_eq(ok, 6);
    ck_assert_int_eq(batch_cost_ms(t, 40, 16, &ok), 3 * SIM_CALL_MS); /* ceil(40/16) = 3 */
    ck_assert_int_eq(ok, 40);
    ck_assert_int_eq(batch_cost_ms(t, 32, 16, &ok), 2 * SIM_CALL_MS);
    ck_assert_int_eq(batch_cost_ms(t, 5, 1, &ok), 5 * SIM_CALL_MS); /* P = 1: one at a time */
    ck_assert_int_eq(batch_cost_ms(t, 0, 16, &ok), 0);
    /* Every call of a batch is still a call: counted by the shim and the world. */
    cJSON *c = tp_count_counters(t);
    ck_assert_double_eq(tt_num(c, "api_calls"), 6 + 40 + 32 + 5);
    ck_assert_double_eq(tt_num(c, "talos_calls"), 6 + 40 + 32 + 5);
    cJSON_Delete(c);
    t->close(t);
    root->close(root);
    cJSON *snap = sim_counters_snapshot(w);
    ck_assert_double_ge(tt_num(snap, "api_calls"), 83);
    cJSON_Delete(snap);
    sim_world_close(w);
    rs_config_free(&cfg);
    unlink(db);
    free(db);
}
END_TEST

/* A root without a batch entry gets the batch one call at a time, each
 * request with its secrets declared. */
START_TEST(test_batch_without_root_support_calls_one_at_a_time)
{
    fake_root f;
    fake_init(&f);
    for (int i = 0; i < 4; i++)
        f.statuses[i] = 200;
    cJSON *creds = cJSON_Parse("{\"username\":\"u\",\"password\":\"p\"}");
    rs_req reqs[4];
    rs_resp resps[4];
    for (int i = 0; i < 4; i++)
        reqs[i] =
            (rs_req){.op = RS_OP_REGISTRY_TOKEN, .host = "ghcr.io", .target = "a/b", .body = creds};
    tp_call_batch(&f.t, reqs, resps, 4, 16);
    ck_assert_int_eq(f.n_calls, 4);
    ck_assert_int_eq(f.n_marked, 4);
    ck_assert_int_eq(f.now_ms, 4 * 25); /* no batch entry: no shared round trip */
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(resps[i].status, 200);
        rs_resp_free(&resps[i]);
    }
    cJSON_Delete(creds);
}
END_TEST

START_TEST(test_parallelism_is_validated_and_refused_not_clamped)
{
    rs_config c;
    rs_config_defaults(&c);
    ck_assert_int_eq(c.transport_parallelism, 16);
    rs_err e;
    char *ok = tt_config_file("transport:\n  parallelism: 32\n");
    ck_assert_msg(live_config_load(ok, &c, &e) == RS_OK, "%s", e.msg);
    ck_assert_int_eq(c.transport_parallelism, 32);
    const char *bad[] = {"transport.parallelism: 0\n", "transport.parallelism: 257\n",
                         "transport.parallelism: 4.5\n", "transport.parallelism: many\n"};
    for (size_t i = 0; i < RS_ARRAY_LEN(bad); i++) {
        char *p = tt_config_file(bad[i]);
        rs_err_clear(&e);
        ck_assert_int_eq(live_config_load(p, &c, &e), RS_DATAERR);
        ck_assert_msg(
            strstr(e.msg, ":1:24: transport.parallelism: expected an integer from 1 to 256"),
            "got: %s", e.msg);
        ck_assert_int_eq(c.transport_parallelism, 32); /* nothing half-applied */
        unlink(p);
        free(p);
    }
    unlink(ok);
    free(ok);
    rs_config_free(&c);
}
END_TEST

/* The core's no-drift proof uses the batch: with parallelism 1 from
 * --config it pays one round trip per call again. */
START_TEST(test_no_drift_proof_cost_follows_parallelism)
{
    char *db = tt_scenario_world("cost/no-drift-small.yaml");
    cJSON *fast = tt_run_json(db, "p16", "lazy");
    double v16 = tt_num(cJSON_GetObjectItemCaseSensitive(fast, "counters"), "virtual_seconds");
    char *cfg = tt_config_file("transport: {parallelism: 1}\n");
    rs_run_args args;
    rs_err e;
    char *argv[] = {"--output", "json", "--config", cfg};
    ck_assert(run_args_parse(4, argv, &args, &e) == RS_OK);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    ck_assert_int_eq(
        cli_run_once(
            &args, &(sim_run_req){.db_path = db, .run_name = "p1", .desired_name = "current"}, out),
        0);
    fclose(out);
    cJSON *slow = cJSON_Parse(text);
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(slow, "counters");
    /* 49 calls (least privilege: namespaced reads; each of the two node
     * inventories reads the 6 Talos auths): 17 round trips batched, 49 one
     * at a time. The 2 s between the inventories counts the first one's own
     * reads: 2 round trips batched (1.95 s left to wait), 7 one at a time
     * (1.825 s). */
    ck_assert_double_eq(tt_num(sc, "api_calls"), 49);
    ck_assert_double_eq(v16, 2.375);
    ck_assert_double_eq(tt_num(sc, "virtual_seconds"), 3.05);
    cJSON_Delete(slow);
    cJSON_Delete(fast);
    free(text);
    unlink(cfg);
    free(cfg);
    unlink(db);
    free(db);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("transport");
    TCase *tc = tcase_create("count");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_count_shim_counts_writes_by_answer);
    tcase_add_test(tc, test_answer_text_names_the_transport_error);
    tcase_add_loop_test(tc, test_count_shim_agrees_with_world_counters, 0, 2);
    suite_add_tcase(s, tc);
    TCase *v2 = tcase_create("v2");
    tcase_set_timeout(v2, 300);
    tcase_add_test(v2, test_lost_answer_is_ambiguous_and_refusal_is_not_sent);
    tcase_add_test(v2, test_secret_marks_declare_every_secret_field);
    tcase_add_test(v2, test_sim_answers_mark_their_secrets);
    tcase_add_test(v2, test_openbao_mount_travels_from_config);
    suite_add_tcase(s, v2);
    TCase *batch = tcase_create("batch");
    tcase_set_timeout(batch, 300);
    tcase_add_test(batch, test_sim_batch_costs_ceil_n_over_p_round_trips);
    tcase_add_test(batch, test_batch_without_root_support_calls_one_at_a_time);
    tcase_add_test(batch, test_parallelism_is_validated_and_refused_not_clamped);
    tcase_add_test(batch, test_no_drift_proof_cost_follows_parallelism);
    suite_add_tcase(s, batch);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
