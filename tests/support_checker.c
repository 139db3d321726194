/*
 * support_checker.c — helpers of the checker's tests (see the header).
 */
#include "tests/support_checker.h"

#include <check.h>
#include <cjson/cJSON.h>

void tc_event(sim_world *w, const char *kind, const char *args_json)
{
    sc_event ev = {.kind = (char *)kind, .args = cJSON_Parse(args_json)};
    ck_assert_ptr_nonnull(ev.args);
    rs_err e = {0};
    ck_assert_msg(sim_world_apply_event(w, &ev, &e) == RS_OK, "%s", e.msg);
    cJSON_Delete(ev.args);
}

int tc_merge(rs_transport *t, const char *kind, const char *ns, const char *name, const char *json)
{
    cJSON *body = cJSON_Parse(json);
    ck_assert_ptr_nonnull(body);
    rs_req req = {.op = RS_OP_KUBE_PATCH,
                  .kind = kind,
                  .ns = ns,
                  .name = name,
                  .patch_type = RS_PATCH_MERGE,
                  .body = body};
    rs_resp r;
    int status = t->call(t, &req, &r);
    rs_resp_free(&r);
    cJSON_Delete(body);
    return status;
}

int tc_kube(rs_transport *t, rs_op op, const char *kind, const char *ns, const char *name)
{
    rs_req req = {.op = op, .kind = kind, .ns = ns, .name = name};
    rs_resp r;
    int status = t->call(t, &req, &r);
    rs_resp_free(&r);
    return status;
}
