/*
 * support_transport.c — helpers of the transport tests (see the header).
 */
#include "tests/support_transport.h"

#include "cli/cli.h"
#include "sim/runner/runner.h"
#include "sim/scenario/scenario.h"
#include "sim/world/world.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fake_call(rs_transport *t, const rs_req *req, rs_resp *resp)
{
    fake_root *f = t->ctx;
    if (req->secret.paths[0]) f->n_marked++;
    rs_resp_init(resp);
    int i = f->n_calls++;
    resp->status = f->statuses[i];
    f->now_ms += 25;
    if (resp->status == 0) {
        snprintf(resp->error, sizeof resp->error, "lost");
        resp->sent = f->sent[i] ? RS_SENT_YES : RS_SENT_NO;
    } else {
        resp->sent = RS_SENT_YES;
        resp->body = cJSON_CreateObject();
    }
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

void fake_init(fake_root *f)
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

double tt_num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    ck_assert_msg(cJSON_IsNumber(v), "counter %s missing", k);
    return v->valuedouble;
}

char *tt_scenario_world(const char *file)
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

cJSON *tt_world_counters(const char *db)
{
    sim_world *w = NULL;
    rs_err e;
    ck_assert(sim_world_open(db, &w, &e) == RS_OK);
    cJSON *c = sim_counters_snapshot(w);
    sim_world_close(w);
    return c;
}

/* One `run --output json` in process; returns the result document. */
cJSON *tt_run_json(const char *db, const char *run_name, const char *strategy)
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

char *tt_config_file(const char *text)
{
    char *path = rs_xstrdup("/tmp/reassert-par-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}
