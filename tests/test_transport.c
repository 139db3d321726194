/*
 * test_transport.c — the transport interface and its shims: the counting
 * shim agrees with the world's oracle counters on a full Stage and a no-drift
 * Reassert, and judges lost answers and refused writes from the client's
 * side; (later sections) the sent/ambiguous distinction, secret marks and
 * the batch cost.
 */
#include "cli/cli.h"
#include "core/transport/transport_count.h"
#include "sim/runner/runner.h"
#include "sim/scenario/scenario.h"
#include "sim/world/world.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- a scripted root: answers from a table, remembers what it saw ---- */

typedef struct fake_root {
    rs_transport t;
    int statuses[16]; /* answer i gets statuses[i]; 0 = transport error */
    bool sent[16];    /* for status 0: whether the request left */
    int n_calls;
    int64_t now_ms;
} fake_root;

static int fake_call(rs_transport *t, const rs_req *req, rs_resp *resp)
{
    fake_root *f = t->ctx;
    (void)req;
    rs_resp_init(resp);
    int i = f->n_calls++;
    resp->status = f->statuses[i];
    f->now_ms += 25;
    if (resp->status == 0)
        snprintf(resp->error, sizeof resp->error, "lost");
    else
        resp->body = cJSON_CreateObject();
    return resp->status;
}

static int64_t fake_now(rs_transport *t)
{
    return ((fake_root *)t->ctx)->now_ms;
}

static void fake_sleep(rs_transport *t, int64_t ms)
{
    ((fake_root *)t->ctx)->now_ms += ms;
}

static uint64_t fake_entropy(rs_transport *t)
{
    (void)t;
    return 4;
}

static void fake_init(fake_root *f)
{
    memset(f, 0, sizeof *f);
    f->t = (rs_transport){.version = RS_TRANSPORT_VERSION,
                          .name = "fake",
                          .ctx = f,
                          .call = fake_call,
                          .now_ms = fake_now,
                          .sleep_ms = fake_sleep,
                          .entropy = fake_entropy};
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    ck_assert_msg(cJSON_IsNumber(v), "counter %s missing", k);
    return v->valuedouble;
}

/* ---- the counting shim ---- */

START_TEST(test_count_shim_counts_writes_by_answer)
{
    fake_root f;
    fake_init(&f);
    int answers[] = {200, 200, 409, 0, 201};
    memcpy(f.statuses, answers, sizeof answers);
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
    const rs_req *seq[] = {&get, &patch, &patch, &lease, &reboot};
    for (size_t i = 0; i < RS_ARRAY_LEN(seq); i++) {
        rs_resp r;
        t->call(t, seq[i], &r);
        rs_resp_free(&r);
    }
    t->sleep_ms(t, 1000);
    cJSON *c = tp_count_counters(t);
    ck_assert_double_eq(num(c, "api_calls"), 5);
    ck_assert_double_eq(num(c, "kube_calls"), 4);
    ck_assert_double_eq(num(c, "talos_calls"), 1);
    /* 200 patch and 201 reboot applied; 409 refused; the lost Lease patch
     * is neither a write nor forgotten. */
    ck_assert_double_eq(num(c, "writes"), 2);
    ck_assert_double_eq(num(c, "writes_unconfirmed"), 1);
    ck_assert_double_eq(num(c, "lease_writes"), 0);
    ck_assert_double_eq(num(c, "node_reboots"), 1);
    ck_assert_double_eq(num(c, "talos_mutations"), 1);
    const cJSON *kinds = cJSON_GetObjectItemCaseSensitive(c, "writes_by_kind");
    ck_assert_double_eq(num(kinds, "Secret"), 1);
    ck_assert_double_eq(num(kinds, "talos.reboot"), 1);
    ck_assert_double_eq(num(c, "virtual_seconds"), 1.125);
    cJSON_Delete(c);
    cJSON_Delete(body);
    t->close(t);
    ck_assert_int_eq(f.n_calls, 5); /* closing the shim leaves the root alone */
    rs_config_free(&cfg);
}
END_TEST

static char *scenario_world(const char *file)
{
    const char *src = getenv("REASSERT_SRC");
    char path[4096];
    snprintf(path, sizeof path, "%s/scenarios/%s", src ? src : ".", file);
    sc_scenario *sc = NULL;
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(sc_load(path, &sc, &e) == RS_OK, "%s", e.msg);
    char *db = rs_xstrdup("/tmp/reassert-transport-XXXXXX");
    int fd = mkstemp(db);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_msg(sim_world_build(db, sc, &e) == RS_OK, "%s", e.msg);
    sc_free(sc);
    return db;
}

static cJSON *world_counters(const char *db)
{
    sim_world *w = NULL;
    rs_err e;
    ck_assert(sim_world_open(db, &w, &e) == RS_OK);
    cJSON *c = sim_counters_snapshot(w);
    sim_world_close(w);
    return c;
}

/* One `run --output json` in process; returns the result document. */
static cJSON *run_json(const char *db, const char *run_name, const char *strategy)
{
    rs_run_args args;
    rs_err e;
    rs_err_clear(&e);
    char *argv[] = {"--strategy", (char *)strategy, "--output", "json"};
    ck_assert(run_args_parse(4, argv, &args, &e) == RS_OK);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    int rc = cli_run_once(
        &args, &(sim_run_req){.db_path = db, .run_name = run_name, .desired_name = "current"}, out);
    fclose(out);
    ck_assert_int_eq(rc, 0);
    cJSON *doc = cJSON_Parse(text);
    ck_assert_msg(doc != NULL, "not JSON: %s", text);
    free(text);
    return doc;
}

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
    char *db = scenario_world("two-run-stage-reassert.yaml");
    const char *runs[] = {"stage", "reassert"};
    for (size_t r = 0; r < RS_ARRAY_LEN(runs); r++) {
        cJSON *before = world_counters(db);
        cJSON *doc = run_json(db, runs[r], strategy);
        cJSON *after = world_counters(db);
        cJSON *delta = sim_counters_delta(before, after);
        const cJSON *shim = cJSON_GetObjectItemCaseSensitive(doc, "counters");
        assert_shim_matches_world(shim, delta);
        ck_assert_double_eq(num(shim, "writes_unconfirmed"), 0);
        if (r == 0) ck_assert_double_gt(num(shim, "writes"), 0);
        cJSON_Delete(before);
        cJSON_Delete(after);
        cJSON_Delete(delta);
        cJSON_Delete(doc);
    }
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
    tcase_add_loop_test(tc, test_count_shim_agrees_with_world_counters, 0, 2);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
