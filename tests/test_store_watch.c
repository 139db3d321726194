/*
 * test_store_watch.c — the store's watch log (sim/store/store_watch.c),
 * what `sim serve`'s watches are answered from: every change of an object
 * with the revision it took, in order — a create ADDED, a patch MODIFIED
 * (with the object before it), a delete DELETED at the revision the delete
 * took (store_delete erases, then bumps: the log depends on that order);
 * a no-op patch and a write rolled back leave nothing; the horizon is the
 * revision the log was enabled at, and moves on compaction. Also the
 * creationTimestamp the store stamps from its clock, kept by updates.
 */
#include "core/cred/cred.h"
#include "sim/store/store.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sqlite3 *db;
static store *st; /* the store over db */

static void setup(void)
{
    ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
    ck_assert_int_eq(store_init(db), SQLITE_OK);
    st = store_open(db);
}

static void teardown(void)
{
    store_close(st);
    st = NULL;
    sqlite3_close(db);
    db = NULL;
}

static void create(const char *name, const char *labels)
{
    char text[256];
    snprintf(text, sizeof text, "{\"metadata\":{\"name\":\"%s\",\"labels\":%s}}", name, labels);
    cJSON *obj = cJSON_Parse(text), *out = NULL;
    ck_assert_int_eq(store_create(st, "ConfigMap", "default", obj, &out), 201);
    cJSON_Delete(out);
    cJSON_Delete(obj);
}

static int merge(const char *name, const char *patch)
{
    cJSON *p = cJSON_Parse(patch), *out = NULL;
    int code = store_patch(st, "ConfigMap", "default", name, RS_PATCH_MERGE, p, &out);
    cJSON_Delete(out);
    cJSON_Delete(p);
    return code;
}

typedef struct seen {
    char text[1024];
    long long revs[16];
    int n;
} seen;

static void record(const store_event *ev, void *arg)
{
    seen *s = arg;
    size_t used = strlen(s->text);
    snprintf(s->text + used, sizeof s->text - used, "%s%s %s%s", used ? "," : "", ev->type,
             ev->name, ev->prev ? "+prev" : "");
    if (s->n < 16) s->revs[s->n++] = ev->rev;
}

static seen events_after(long long rev)
{
    seen s = {.text = "", .n = 0};
    ck_assert_int_ge(store_watch_events(db, "ConfigMap", rev, 100, record, &s), 0);
    return s;
}

START_TEST(test_every_change_is_logged_with_its_revision)
{
    create("before", "{}"); /* before the log: not in it */
    long long start = store_revision(st);
    ck_assert_int_eq(store_watch_enable(db), SQLITE_OK);
    ck_assert_int_eq(store_watch_horizon(db), start);
    create("a", "{\"x\":\"1\"}");
    long long created = store_revision(st);
    ck_assert_int_eq(merge("a", "{\"metadata\":{\"labels\":{\"x\":\"2\"}}}"), 200);
    long long modified = store_revision(st);
    ck_assert_int_eq(merge("a", "{\"metadata\":{\"labels\":{\"x\":\"2\"}}}"), 200); /* no-op */
    ck_assert_int_eq(store_revision(st), modified);
    cJSON *out = NULL;
    ck_assert_int_eq(store_delete(st, "ConfigMap", "default", "a", &out), 200);
    cJSON_Delete(out);
    long long deleted = store_revision(st);
    seen s = events_after(start);
    ck_assert_str_eq(s.text, "ADDED a,MODIFIED a+prev,DELETED a+prev");
    ck_assert_int_eq(s.n, 3);
    ck_assert_int_eq(s.revs[0], created);
    ck_assert_int_eq(s.revs[1], modified);
    ck_assert_int_eq(s.revs[2], deleted); /* the revision the delete took */
    s = events_after(modified);
    ck_assert_str_eq(s.text, "DELETED a+prev");
}
END_TEST

START_TEST(test_a_rolled_back_write_leaves_no_event)
{
    ck_assert_int_eq(store_watch_enable(db), SQLITE_OK);
    long long start = store_revision(st);
    ck_assert_int_eq(sqlite3_exec(db, "SAVEPOINT t", NULL, NULL, NULL), SQLITE_OK);
    create("dry", "{}");
    sqlite3_exec(db, "ROLLBACK TO t", NULL, NULL, NULL);
    sqlite3_exec(db, "RELEASE t", NULL, NULL, NULL);
    /* A write the store refuses (a stale resourceVersion) logs nothing either. */
    create("b", "{}");
    ck_assert_int_eq(
        merge("b", "{\"metadata\":{\"resourceVersion\":\"999\",\"labels\":{\"y\":\"1\"}}}"), 409);
    seen s = events_after(start);
    ck_assert_str_eq(s.text, "ADDED b");
}
END_TEST

START_TEST(test_compaction_moves_the_horizon)
{
    ck_assert_int_eq(store_watch_enable(db), SQLITE_OK);
    for (int i = 0; i < 5; i++) {
        char name[16];
        snprintf(name, sizeof name, "c%d", i);
        create(name, "{}");
    }
    store_watch_compact(db, 2);
    long long h = store_watch_horizon(db);
    ck_assert_int_eq(h, store_revision(st) - 2);
    seen s = events_after(h);
    ck_assert_str_eq(s.text, "ADDED c3,ADDED c4");
}
END_TEST

START_TEST(test_creation_timestamp_from_the_store_clock)
{
    store_set_now(db, 1767225600LL * 1000 + 61500); /* 2026-01-01T00:01:01.5Z */
    create("t", "{}");
    cJSON *obj = NULL;
    ck_assert_int_eq(store_get(st, "ConfigMap", "default", "t", &obj), 200);
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    ck_assert_str_eq(
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "creationTimestamp")),
        "2026-01-01T00:01:01Z");
    cJSON_Delete(obj);
    store_set_now(db, 1767225600LL * 1000 + 3600000);
    /* An update keeps it, whatever the patch says. */
    ck_assert_int_eq(
        merge("t", "{\"metadata\":{\"creationTimestamp\":\"1999-01-01T00:00:00Z\",\"labels\":{}}}"),
        200);
    ck_assert_int_eq(store_get(st, "ConfigMap", "default", "t", &obj), 200);
    md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    ck_assert_str_eq(
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "creationTimestamp")),
        "2026-01-01T00:01:01Z");
    cJSON_Delete(obj);
}
END_TEST

static Suite *watch_suite(void)
{
    Suite *s = suite_create("store_watch");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_every_change_is_logged_with_its_revision);
    tcase_add_test(tc, test_a_rolled_back_write_leaves_no_event);
    tcase_add_test(tc, test_compaction_moves_the_horizon);
    tcase_add_test(tc, test_creation_timestamp_from_the_store_clock);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(watch_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
