/*
 * test_kube_cas.c — the one CAS-write-and-adopt helper (core/kube/kube_cas)
 * against a scripted transport: a write that succeeds, a conflict that is
 * re-read and retried, a lost answer whose re-read shows our write (adopted),
 * a lost answer whose re-read shows someone else's (fails closed, flagged
 * unconfirmed), a request that was provably not sent (resent without a
 * re-read, never flagged), a lost answer with no seen callback, and the gate
 * taking the fence first (nothing sent).
 */
#include "core/gate.h"
#include "core/kube/kube_cas.h"
#include "core/transport/transport.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_NOT_SENT (-1)
#define FAKE_WRITES_MAX 8

/* One object {"metadata":{"resourceVersion":N},"v":"..."}; writes answer
 * from a script. A lost answer (0) is applied first — as a write whose
 * answer the network dropped — leaving `lost_value` (NULL: ours; "-": the
 * write never landed; else a third writer's). */
typedef struct fake {
    int script[FAKE_WRITES_MAX];
    const char *lost_value;
    int reads, writes, rv;
    char v[32];
    char last_sent_rv[32]; /* the resourceVersion the last write tested */
} fake;

static void fake_set(fake *f, const char *v)
{
    snprintf(f->v, sizeof f->v, "%s", v);
    f->rv++;
}

static cJSON *fake_object(const fake *f)
{
    cJSON *o = cJSON_CreateObject();
    char rv[16];
    snprintf(rv, sizeof rv, "%d", f->rv);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "metadata"), "resourceVersion", rv);
    cJSON_AddStringToObject(o, "v", f->v);
    return o;
}

static int fake_call(rs_transport *t, const rs_req *req, rs_resp *resp)
{
    fake *f = t->ctx;
    rs_resp_init(resp);
    if (req->op == RS_OP_KUBE_GET) {
        f->reads++;
        resp->status = 200;
        resp->body = fake_object(f);
        return resp->status;
    }
    ck_assert_int_lt(f->writes, FAKE_WRITES_MAX);
    int answer = f->script[f->writes++];
    const char *tested = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req->body, "rv"));
    snprintf(f->last_sent_rv, sizeof f->last_sent_rv, "%s", tested ? tested : "");
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req->body, "v"));
    if (answer == FAKE_NOT_SENT) {
        resp->status = 0;
        resp->sent = RS_SENT_NO;
        snprintf(resp->error, sizeof resp->error, "connection refused");
        return 0;
    }
    if (answer == 0) {
        if (!f->lost_value || strcmp(f->lost_value, "-") != 0)
            fake_set(f, f->lost_value ? f->lost_value : v);
        snprintf(resp->error, sizeof resp->error, "timeout");
        return 0;
    }
    if (answer >= 200 && answer < 300) {
        fake_set(f, v);
        resp->body = fake_object(f);
    }
    resp->status = answer;
    return answer;
}

static rs_transport fake_transport(fake *f)
{
    rs_transport t = {.version = RS_TRANSPORT_VERSION, .name = "fake", .ctx = f, .call = fake_call};
    return t;
}

static rs_code take_ok(void *owner, gate_need need, rs_err *e)
{
    (void)owner;
    (void)need;
    (void)e;
    return RS_OK;
}

/* The plan and seen of a write that sets v to "ours" under CAS. */
typedef struct writer {
    int plans, seens, written;
} writer;

static kube_cas_step writer_plan(void *ctx, const kube_cas_view *v, kube_cas_req *w, rs_err *e)
{
    writer *wr = ctx;
    wr->plans++;
    if (v->read_status != 200) {
        rs_fail(e, RS_FAILED, "read failed");
        return KUBE_CAS_REFUSE;
    }
    const char *cur = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(v->cur, "v"));
    if (cur && strcmp(cur, "ours") == 0) return KUBE_CAS_DONE;
    const char *rv = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(v->cur, "metadata"), "resourceVersion"));
    w->body = cJSON_CreateObject();
    cJSON_AddStringToObject(w->body, "rv", rv ? rv : "");
    cJSON_AddStringToObject(w->body, "v", "ours");
    w->cas = true;
    return KUBE_CAS_WRITE;
}

static kube_cas_seen writer_seen(void *ctx, int status, const cJSON *obj)
{
    writer *wr = ctx;
    wr->seens++;
    const char *cur = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, "v"));
    if (status != 200 || !cur) return KUBE_CAS_NOT_OURS;
    if (strcmp(cur, "ours") == 0) return KUBE_CAS_ADOPT;
    return strcmp(cur, "old") == 0 ? KUBE_CAS_RETRY : KUBE_CAS_NOT_OURS;
}

static void writer_written(void *ctx, const rs_resp *answer)
{
    (void)answer;
    ((writer *)ctx)->written++;
}

typedef struct cas_case {
    fake f;
    rs_transport t;
    rs_gate *g;
    writer wr;
    kube_cas_ops ops;
    kube_cas_result res;
    rs_err e;
} cas_case;

static void case_init(cas_case *c, const int *script, size_t n, gate_need need)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < n; i++)
        c->f.script[i] = script[i];
    fake_set(&c->f, "old");
    c->t = fake_transport(&c->f);
    c->g = gate_new(&c->t, (rs_gate_ops){.take = take_ok}, NULL, true);
    c->ops = (kube_cas_ops){.kind = "Thing",
                            .ns = "ns",
                            .name = "one",
                            .door = need == GATE_NEED_NONE ? KUBE_CAS_RELEASE : KUBE_CAS_GATED,
                            .need = need,
                            .read = KUBE_CAS_PLAN_FROM_READ,
                            .attempts_max = 3,
                            .plan = writer_plan,
                            .seen = writer_seen,
                            .written = writer_written,
                            .ctx = &c->wr};
    rs_err_clear(&c->e);
}

static kube_cas_end case_run(cas_case *c)
{
    kube_cas_end end = kube_cas_write(c->g, &c->ops, &c->res, &c->e);
    gate_free(c->g);
    c->g = NULL;
    return end;
}

START_TEST(test_kube_cas_success_writes_once_after_one_read)
{
    cas_case c;
    case_init(&c, (int[]){200}, 1, GATE_NEED_NONE);
    ck_assert_int_eq(case_run(&c), KUBE_CAS_WRITTEN);
    ck_assert_int_eq(c.f.reads, 1);
    ck_assert_int_eq(c.f.writes, 1);
    ck_assert_int_eq(c.wr.written, 1);
    ck_assert_int_eq(c.wr.seens, 0);
    ck_assert(!c.res.unconfirmed);
    ck_assert_str_eq(c.f.v, "ours");
}
END_TEST

START_TEST(test_kube_cas_conflict_rereads_and_retries_on_the_new_version)
{
    cas_case c;
    case_init(&c, (int[]){409, 200}, 2, GATE_NEED_NONE);
    ck_assert_int_eq(case_run(&c), KUBE_CAS_WRITTEN);
    ck_assert_int_eq(c.f.reads, 2);
    ck_assert_int_eq(c.f.writes, 2);
    ck_assert_int_eq(c.wr.plans, 2);
    ck_assert_int_eq(c.res.sent, 2);
    ck_assert(!c.res.unconfirmed);
}
END_TEST

START_TEST(test_kube_cas_conflicts_stop_at_attempts_max)
{
    cas_case c;
    case_init(&c, (int[]){409, 422, 409}, 3, GATE_NEED_NONE);
    ck_assert_int_eq(case_run(&c), KUBE_CAS_CONTENDED);
    ck_assert_int_eq(c.f.writes, 3);
    ck_assert_int_eq(c.f.reads, 3); /* no re-read after the last conflict: nothing left to plan */
    ck_assert_int_eq(c.res.status, 409);
    ck_assert_str_eq(c.f.v, "old");
}
END_TEST

START_TEST(test_kube_cas_lost_answer_then_reread_shows_ours_is_adopted)
{
    cas_case c;
    case_init(&c, (int[]){0}, 1, GATE_NEED_NONE);
    ck_assert_int_eq(case_run(&c), KUBE_CAS_ADOPTED);
    ck_assert_int_eq(c.f.writes, 1); /* never sent twice */
    ck_assert_int_eq(c.f.reads, 2);
    ck_assert_int_eq(c.wr.seens, 1);
    ck_assert(c.res.unconfirmed);
    ck_assert(kube_cas_ok(c.res.end));
}
END_TEST

START_TEST(test_kube_cas_lost_answer_not_applied_is_retried_from_the_reread)
{
    cas_case c;
    case_init(&c, (int[]){0, 200}, 2, GATE_NEED_NONE);
    c.f.lost_value = "-"; /* the write never landed */
    ck_assert_int_eq(case_run(&c), KUBE_CAS_WRITTEN);
    ck_assert_int_eq(c.f.writes, 2);
    ck_assert_int_eq(c.f.reads, 2); /* the re-read is the second plan's read */
    ck_assert_int_eq(c.wr.seens, 1);
    ck_assert_int_eq(c.wr.plans, 2);
    ck_assert_str_eq(c.f.last_sent_rv, "1");
    ck_assert_str_eq(c.f.v, "ours");
}
END_TEST

START_TEST(test_kube_cas_lost_answer_with_someone_elses_value_fails_closed)
{
    cas_case c;
    case_init(&c, (int[]){0, 200}, 2, GATE_NEED_NONE);
    c.f.lost_value = "theirs";
    ck_assert_int_eq(case_run(&c), KUBE_CAS_UNRESOLVED);
    ck_assert_int_eq(c.f.writes, 1); /* not retried over a third writer's value */
    ck_assert(c.res.unconfirmed);
    ck_assert(!kube_cas_ok(c.res.end));
    ck_assert_str_eq(c.f.v, "theirs");
}
END_TEST

START_TEST(test_kube_cas_lost_answer_without_seen_fails_without_reread)
{
    cas_case c;
    case_init(&c, (int[]){0, 200}, 2, GATE_NEED_NONE);
    c.ops.seen = NULL;
    ck_assert_int_eq(case_run(&c), KUBE_CAS_UNRESOLVED);
    ck_assert_int_eq(c.f.reads, 1);
    ck_assert_int_eq(c.f.writes, 1);
    ck_assert(c.res.unconfirmed);
}
END_TEST

START_TEST(test_kube_cas_not_sent_is_resent_without_adopting_or_flagging)
{
    cas_case c;
    case_init(&c, (int[]){FAKE_NOT_SENT, 200}, 2, GATE_NEED_NONE);
    ck_assert_int_eq(case_run(&c), KUBE_CAS_WRITTEN);
    ck_assert_int_eq(c.f.writes, 2);
    ck_assert_int_eq(c.wr.seens, 0); /* nothing to adopt: it never left */
    ck_assert(!c.res.unconfirmed);
    ck_assert_str_eq(c.f.v, "ours");
}
END_TEST

START_TEST(test_kube_cas_not_sent_every_time_ends_contended_and_unflagged)
{
    cas_case c;
    case_init(&c, (int[]){FAKE_NOT_SENT, FAKE_NOT_SENT, FAKE_NOT_SENT}, 3, GATE_NEED_NONE);
    ck_assert_int_eq(case_run(&c), KUBE_CAS_CONTENDED);
    ck_assert_int_eq(c.f.writes, 3);
    ck_assert(!c.res.unconfirmed);
    ck_assert_str_eq(c.f.v, "old");
}
END_TEST

START_TEST(test_kube_cas_plan_done_sends_nothing)
{
    cas_case c;
    case_init(&c, (int[]){200}, 1, GATE_NEED_NONE);
    fake_set(&c.f, "ours");
    ck_assert_int_eq(case_run(&c), KUBE_CAS_ALREADY);
    ck_assert_int_eq(c.f.writes, 0);
}
END_TEST

START_TEST(test_kube_cas_gated_write_restarts_when_the_gate_takes_the_fence)
{
    cas_case c;
    case_init(&c, (int[]){200}, 1, GATE_NEED_LEASE);
    ck_assert_int_eq(case_run(&c), KUBE_CAS_RESTART);
    ck_assert_int_eq(c.f.writes, 0); /* a write justified by a pre-fence read is never sent */
}
END_TEST

START_TEST(test_kube_cas_other_error_is_final)
{
    cas_case c;
    case_init(&c, (int[]){500, 200}, 2, GATE_NEED_NONE);
    ck_assert_int_eq(case_run(&c), KUBE_CAS_FAILED);
    ck_assert_int_eq(c.f.writes, 1);
    ck_assert_int_eq(c.res.status, 500);
    ck_assert_str_eq(c.res.why, "HTTP 500");
}
END_TEST

static int checks;
static bool lease_ours;

static rs_code check_lease(void *owner, rs_err *e)
{
    (void)owner;
    checks++;
    return lease_ours ? RS_OK : rs_fail(e, RS_FAILED, "Lease lost");
}

/* Every fence write is proven under the Lease as it goes out, never on an
 * earlier proof: another actor can take the Lease between the parent pause
 * and the child pause (H9; scenario lease/taken-during-fence-take). */
START_TEST(test_kube_cas_fence_door_proves_the_lease_at_every_write)
{
    cas_case c;
    case_init(&c, (int[]){200, 200}, 2, GATE_NEED_NONE);
    gate_free(c.g);
    c.g = gate_new(&c.t, (rs_gate_ops){.take = take_ok, .check = check_lease}, NULL, true);
    c.ops.door = KUBE_CAS_FENCE;
    checks = 0;
    lease_ours = false;
    ck_assert_int_eq(kube_cas_write(c.g, &c.ops, &c.res, &c.e), KUBE_CAS_GATE_FAILED);
    ck_assert_int_eq(c.f.writes, 0); /* never written without the Lease */
    ck_assert_int_eq(checks, 1);
    lease_ours = true;
    ck_assert_int_eq(kube_cas_write(c.g, &c.ops, &c.res, &c.e), KUBE_CAS_WRITTEN);
    ck_assert_int_eq(checks, 2);
    fake_set(&c.f, "old");
    ck_assert_int_eq(kube_cas_write(c.g, &c.ops, &c.res, &c.e), KUBE_CAS_WRITTEN);
    ck_assert_int_eq(checks, 3); /* proven again: no wait in between, still read */
    /* Lost right after a proven write, with no wait: the next one is refused. */
    fake_set(&c.f, "old");
    lease_ours = false;
    int writes = c.f.writes;
    ck_assert_int_eq(kube_cas_write(c.g, &c.ops, &c.res, &c.e), KUBE_CAS_GATE_FAILED);
    ck_assert_int_eq(checks, 4);
    ck_assert_int_eq(c.f.writes, writes);
    /* The release door never asserts: a release must work with the Lease lost. */
    c.ops.door = KUBE_CAS_RELEASE;
    c.f.script[c.f.writes] = 200;
    ck_assert_int_eq(kube_cas_write(c.g, &c.ops, &c.res, &c.e), KUBE_CAS_WRITTEN);
    ck_assert_int_eq(checks, 4);
    gate_free(c.g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kube_cas");
    TCase *tc = tcase_create("kube_cas");
    tcase_add_test(tc, test_kube_cas_success_writes_once_after_one_read);
    tcase_add_test(tc, test_kube_cas_conflict_rereads_and_retries_on_the_new_version);
    tcase_add_test(tc, test_kube_cas_conflicts_stop_at_attempts_max);
    tcase_add_test(tc, test_kube_cas_lost_answer_then_reread_shows_ours_is_adopted);
    tcase_add_test(tc, test_kube_cas_lost_answer_not_applied_is_retried_from_the_reread);
    tcase_add_test(tc, test_kube_cas_lost_answer_with_someone_elses_value_fails_closed);
    tcase_add_test(tc, test_kube_cas_lost_answer_without_seen_fails_without_reread);
    tcase_add_test(tc, test_kube_cas_not_sent_is_resent_without_adopting_or_flagging);
    tcase_add_test(tc, test_kube_cas_not_sent_every_time_ends_contended_and_unflagged);
    tcase_add_test(tc, test_kube_cas_plan_done_sends_nothing);
    tcase_add_test(tc, test_kube_cas_gated_write_restarts_when_the_gate_takes_the_fence);
    tcase_add_test(tc, test_kube_cas_other_error_is_final);
    tcase_add_test(tc, test_kube_cas_fence_door_proves_the_lease_at_every_write);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
