/*
 * test_live_talos_serve.c — the test-only `/talos/<verb>` endpoints of
 * `sim serve` (sim/serve/serve_talos.c) against a world built from a shipped
 * scenario: every verb becomes the one talos.* call the in-process sim root
 * would see (counted once, applied to the world), answered in the envelope
 * the stub talosctl reads; a request that does not fit the contract is
 * refused before any call reaches the world.
 */
#include "sim/scenario/scenario.h"
#include "sim/serve/serve_talos.h"
#include "sim/world/world.h"
#include "tests/support_transport.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct st_fixture {
    char *db;
    sim_world *w;
    rs_transport *t;
} st_fixture;

static void st_open(st_fixture *f)
{
    f->db = tt_scenario_world("two-run-stage-reassert.yaml");
    rs_err e;
    rs_err_clear(&e);
    ck_assert_msg(sim_world_open(f->db, &f->w, &e) == RS_OK, "%s", e.msg);
    f->t = sim_transport_open(f->w, "serve", NULL);
}

static void st_close(st_fixture *f)
{
    f->t->close(f->t);
    sim_world_close(f->w);
    unlink(f->db);
    free(f->db);
}

static double st_counter(st_fixture *f, const char *name)
{
    cJSON *c = sim_counters_snapshot(f->w);
    double v = tt_num(c, name);
    cJSON_Delete(c);
    return v;
}

/* POSTs body to /talos/<verb>; returns the HTTP status and the parsed answer. */
static int st_post(st_fixture *f, const char *verb, const char *body, cJSON **answer)
{
    int http = 0;
    char *out = NULL;
    ck_assert_int_eq(serve_talos_handle(f->t, "POST", verb, body, strlen(body), &http, &out), 0);
    ck_assert_ptr_nonnull(out);
    *answer = cJSON_Parse(out);
    ck_assert_msg(*answer != NULL, "not JSON: %s", out);
    free(out);
    return http;
}

/* The envelope's status (the talos.* call's), checked to be well formed. */
static int st_status(const cJSON *env)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(env, "status");
    ck_assert(cJSON_IsNumber(s));
    ck_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(env, "sent")));
    ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(env, "body"));
    return s->valueint;
}

static const cJSON *st_body(const cJSON *env)
{
    return cJSON_GetObjectItemCaseSensitive(env, "body");
}

START_TEST(test_every_verb_reaches_the_world_as_one_talos_call)
{
    st_fixture f;
    st_open(&f);
    double calls0 = st_counter(&f, "api_calls");
    double talos0 = st_counter(&f, "talos_calls");
    cJSON *a = NULL;

    /* The world holds "previous" for ghcr.io; read-auth shows it. */
    ck_assert_int_eq(
        st_post(&f, "read-auth", "{\"node\":\"prod-worker-1\",\"host\":\"ghcr.io\"}", &a), 200);
    ck_assert_int_eq(st_status(a), 200);
    const cJSON *auth = cJSON_GetObjectItemCaseSensitive(st_body(a), "auth");
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(auth, "username")),
                     "deploy-bot");
    cJSON_Delete(a);

    /* A registry-auth intent changes what read-auth answers. */
    ck_assert_int_eq(st_post(&f, "patch",
                             "{\"node\":\"prod-worker-1\",\"intent\":{\"registry-auth\":{\"host\":"
                             "\"ghcr.io\",\"auth\":{\"username\":\"u2\",\"password\":\"p2\"}}}}",
                             &a),
                     200);
    ck_assert_int_eq(st_status(a), 200);
    cJSON_Delete(a);
    ck_assert_int_eq(
        st_post(&f, "read-auth", "{\"node\":\"prod-worker-1\",\"host\":\"ghcr.io\"}", &a), 200);
    auth = cJSON_GetObjectItemCaseSensitive(st_body(a), "auth");
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(auth, "password")),
                     "p2");
    cJSON_Delete(a);

    /* Another host: the sim node has no auth for it (404 inside the envelope). */
    ck_assert_int_eq(
        st_post(&f, "read-auth", "{\"node\":\"prod-worker-1\",\"host\":\"quay.io\"}", &a), 200);
    ck_assert_int_eq(st_status(a), 404);
    cJSON_Delete(a);

    /* etcd: healthy on a control plane, not running on a worker; no alarms. */
    ck_assert_int_eq(st_post(&f, "etcd-status", "{\"node\":\"prod-control-plane-1\"}", &a), 200);
    ck_assert_int_eq(st_status(a), 200);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st_body(a), "healthy")));
    cJSON_Delete(a);
    ck_assert_int_eq(st_post(&f, "etcd-status", "{\"node\":\"prod-worker-1\"}", &a), 200);
    ck_assert_int_eq(st_status(a), 404);
    cJSON_Delete(a);
    ck_assert_int_eq(st_post(&f, "etcd-alarms", "{\"node\":\"prod-control-plane-2\"}", &a), 200);
    ck_assert_int_eq(st_status(a), 200);
    ck_assert(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(st_body(a), "alarms")));
    cJSON_Delete(a);

    /* Image work and the reboot are writes the world counts. */
    double reboots0 = st_counter(&f, "node_reboots");
    ck_assert_int_eq(st_post(&f, "reboot", "{\"node\":\"prod-worker-2\"}", &a), 200);
    ck_assert_int_eq(st_status(a), 200);
    cJSON_Delete(a);
    ck_assert_double_eq(st_counter(&f, "node_reboots"), reboots0 + 1);
    const char *img = "{\"node\":\"prod-worker-3\",\"image\":\"ghcr.io/devantler-tech/ksail:v7\"}";
    ck_assert_int_eq(st_post(&f, "image-remove", img, &a), 200);
    ck_assert_int_eq(st_status(a), 200);
    cJSON_Delete(a);
    ck_assert_int_eq(
        st_post(&f, "image-pull", "{\"node\":\"prod-worker-3\",\"image\":\"quay.io/x/y:1\"}", &a),
        200);
    ck_assert_int_eq(st_status(a), 404); /* not on the simulated registry */
    cJSON_Delete(a);
    ck_assert_int_eq(st_post(&f, "reboot", "{\"node\":\"prod-worker-99\"}", &a), 200);
    ck_assert_int_eq(st_status(a), 404);
    cJSON_Delete(a);

    /* Eleven requests, eleven calls: the endpoint adds none of its own. */
    ck_assert_double_eq(st_counter(&f, "api_calls"), calls0 + 11);
    ck_assert_double_eq(st_counter(&f, "talos_calls"), talos0 + 11);
    st_close(&f);
}
END_TEST

START_TEST(test_a_request_off_the_contract_never_reaches_the_world)
{
    st_fixture f;
    st_open(&f);
    double calls0 = st_counter(&f, "api_calls");
    struct {
        const char *method, *verb, *body;
        int http;
    } cases[] = {
        {"POST", "format", "{\"node\":\"prod-worker-1\"}", 404},
        {"POST", "", "{\"node\":\"prod-worker-1\"}", 404},
        {"GET", "reboot", "{\"node\":\"prod-worker-1\"}", 405},
        {"POST", "reboot", "{\"node\":", 400},
        {"POST", "reboot", "[\"prod-worker-1\"]", 400},
        {"POST", "reboot", "{}", 400},
        {"POST", "reboot", "{\"node\":\"\"}", 400},
        {"POST", "reboot", "{\"node\":7}", 400},
        {"POST", "reboot", "{\"node\":\"prod-worker-1\",\"force\":true}", 400},
        {"POST", "patch", "{\"node\":\"prod-worker-1\"}", 400},
        {"POST", "patch", "{\"node\":\"prod-worker-1\",\"intent\":\"x\"}", 400},
        {"POST", "read-auth", "{\"node\":\"prod-worker-1\"}", 400},
        {"POST", "image-pull", "{\"node\":\"prod-worker-1\",\"image\":\"\"}", 400},
        {"POST", "etcd-status", "{\"node\":\"prod-control-plane-1\",\"image\":\"x\"}", 400},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int http = 0;
        char *out = NULL;
        ck_assert_int_eq(serve_talos_handle(f.t, cases[i].method, cases[i].verb, cases[i].body,
                                            strlen(cases[i].body), &http, &out),
                         0);
        ck_assert_msg(http == cases[i].http, "case %zu: HTTP %d, want %d", i, http, cases[i].http);
        cJSON *a = cJSON_Parse(out);
        ck_assert_msg(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(a, "error")),
                      "case %zu: no error sentence in %s", i, out);
        cJSON_Delete(a);
        free(out);
    }
    /* A NULL body is refused too. */
    int http = 0;
    char *out = NULL;
    ck_assert_int_eq(serve_talos_handle(f.t, "POST", "reboot", NULL, 0, &http, &out), 0);
    ck_assert_int_eq(http, 400);
    free(out);
    ck_assert_double_eq(st_counter(&f, "api_calls"), calls0);
    st_close(&f);
}
END_TEST

/* A scenario's timeout fault surfaces as status 0 in the envelope, with the
 * sentence and "sent", so the stub can act like a talosctl that hit its
 * deadline (the live side then treats a write as ambiguous). */
START_TEST(test_a_transport_error_travels_in_the_envelope)
{
    st_fixture f;
    f.db = tt_scenario_world("two-run-stage-reassert.yaml");
    rs_err e;
    rs_err_clear(&e);
    ck_assert(sim_world_open(f.db, &f.w, &e) == RS_OK);
    sc_fault fault = {.on = "talos.reboot prod-worker-1", .nth = 1, .effect = SC_FAULT_TIMEOUT};
    sc_run run = {.name = "serve", .faults = &fault, .n_faults = 1};
    f.t = sim_transport_open(f.w, "serve", &run);
    cJSON *a = NULL;
    ck_assert_int_eq(st_post(&f, "reboot", "{\"node\":\"prod-worker-1\"}", &a), 200);
    ck_assert_int_eq(st_status(a), 0);
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "sent")), "unknown");
    ck_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(a, "error")));
    ck_assert(cJSON_IsNull(st_body(a)));
    cJSON_Delete(a);
    st_close(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("live_talos_serve");
    TCase *tc = tcase_create("endpoints");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_every_verb_reaches_the_world_as_one_talos_call);
    tcase_add_test(tc, test_a_request_off_the_contract_never_reaches_the_world);
    tcase_add_test(tc, test_a_transport_error_travels_in_the_envelope);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
