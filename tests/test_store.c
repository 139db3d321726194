/*
 * test_store.c — the sim store answers as the Kubernetes API server does.
 *
 * The core's idempotence and its fences are judged against this store, so
 * each test pins one API-server behaviour the core depends on: revisions,
 * compare-and-swap, no-op patches, generation, selectors, Status bodies.
 *
 * Over 600 lines: one API-server behaviour per test, each small; splitting
 * them by file would only scatter the shared fixture.
 */
#include "core/cred/cred.h"
#include "sim/store/store.h"

#include <check.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static sqlite3 *raw; /* the connection */
static store *db;    /* the store over it */

static void setup(void)
{
    ck_assert_int_eq(sqlite3_open(":memory:", &raw), SQLITE_OK);
    ck_assert_int_eq(store_init(raw), SQLITE_OK);
    db = store_open(raw);
}

static void teardown(void)
{
    store_close(db);
    sqlite3_close(raw);
    db = NULL;
    raw = NULL;
}

static cJSON *parse(const char *text)
{
    cJSON *j = cJSON_Parse(text);
    ck_assert_msg(j != NULL, "test JSON does not parse: %s", text);
    return j;
}

static const char *meta(const cJSON *obj, const char *key)
{
    const cJSON *v =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double generation(const cJSON *obj)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "generation");
    ck_assert(cJSON_IsNumber(v));
    return v->valuedouble;
}

static const char *str(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Creates kind/ns from JSON text and asserts 201. */
static void create(const char *kind, const char *ns, const char *text)
{
    cJSON *obj = parse(text);
    cJSON *out = NULL;
    int code = store_create(db, kind, ns, obj, &out);
    char *body = cJSON_PrintUnformatted(out);
    ck_assert_msg(code == 201, "create %s: %d %s", text, code, body);
    free(body);
    cJSON_Delete(out);
    cJSON_Delete(obj);
}

static int patch(const char *kind, const char *ns, const char *name, rs_patch_type t,
                 const char *text, cJSON **out)
{
    cJSON *p = parse(text);
    int code = store_patch(db, kind, ns, name, t, p, out);
    cJSON_Delete(p);
    return code;
}

/* Asserts out is a Status with this code and reason, then frees it. */
static void assert_status(cJSON *out, int code, const char *reason)
{
    ck_assert_ptr_nonnull(out);
    ck_assert_str_eq(str(out, "kind"), "Status");
    ck_assert_str_eq(str(out, "apiVersion"), "v1");
    ck_assert_str_eq(str(out, "status"), "Failure");
    ck_assert_str_eq(str(out, "reason"), reason);
    ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(out, "code")->valueint, code);
    ck_assert(strlen(str(out, "message")) > 5);
    cJSON_Delete(out);
}

START_TEST(test_create_stamps_identity_and_takes_a_revision)
{
    ck_assert_int_eq(store_init(raw), SQLITE_OK); /* idempotent */
    ck_assert_int_eq(store_revision(db), 0);
    cJSON *obj = parse("{\"metadata\":{\"name\":\"auth\",\"labels\":{\"a\":\"b\"}},"
                       "\"type\":\"Opaque\",\"data\":{\"k\":\"dg==\"}}");
    cJSON *out = NULL;
    ck_assert_int_eq(store_create(db, "Secret", "kyverno", obj, &out), 201);
    ck_assert_str_eq(str(out, "kind"), "Secret");
    ck_assert_str_eq(str(out, "apiVersion"), "v1");
    ck_assert_str_eq(meta(out, "name"), "auth");
    ck_assert_str_eq(meta(out, "namespace"), "kyverno");
    ck_assert_str_eq(meta(out, "resourceVersion"), "1");
    ck_assert_int_eq(strlen(meta(out, "uid")), 36);
    ck_assert_double_eq(generation(out), 1);
    ck_assert_int_eq(store_revision(db), 1);
    cJSON *got = NULL;
    ck_assert_int_eq(store_get(db, "Secret", "kyverno", "auth", &got), 200);
    ck_assert(cJSON_Compare(got, out, true));
    cJSON_Delete(got);
    cJSON_Delete(out);
    cJSON_Delete(obj);
}
END_TEST

START_TEST(test_uid_is_deterministic_and_unique)
{
    create("ConfigMap", "a", "{\"metadata\":{\"name\":\"x\"}}");
    create("ConfigMap", "a", "{\"metadata\":{\"name\":\"y\"}}");
    cJSON *x = NULL, *y = NULL;
    store_get(db, "ConfigMap", "a", "x", &x);
    store_get(db, "ConfigMap", "a", "y", &y);
    ck_assert_str_ne(meta(x, "uid"), meta(y, "uid"));
    /* A second world replaying the same calls gets the same uids. */
    store *first = db;
    sqlite3 *first_raw = raw;
    setup();
    create("ConfigMap", "a", "{\"metadata\":{\"name\":\"x\"}}");
    cJSON *x2 = NULL;
    store_get(db, "ConfigMap", "a", "x", &x2);
    ck_assert_str_eq(meta(x, "uid"), meta(x2, "uid"));
    teardown();
    db = first;
    raw = first_raw;
    cJSON_Delete(x);
    cJSON_Delete(y);
    cJSON_Delete(x2);
}
END_TEST

START_TEST(test_create_existing_name_is_409_already_exists)
{
    create("Secret", "ns", "{\"metadata\":{\"name\":\"s\"}}");
    cJSON *obj = parse("{\"metadata\":{\"name\":\"s\"}}");
    cJSON *out = NULL;
    ck_assert_int_eq(store_create(db, "Secret", "ns", obj, &out), 409);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(out, "details")->child->valuestring, "s");
    ck_assert_ptr_nonnull(strstr(str(out, "message"), "secrets \"s\" already exists"));
    assert_status(out, 409, "AlreadyExists");
    ck_assert_int_eq(store_revision(db), 1);
    /* Same name in another namespace is another object. */
    ck_assert_int_eq(store_create(db, "Secret", "other", obj, &out), 201);
    cJSON_Delete(out);
    cJSON_Delete(obj);
}
END_TEST

START_TEST(test_create_rejects_bad_input)
{
    cJSON *out = NULL;
    cJSON *noname = parse("{\"metadata\":{}}");
    ck_assert_int_eq(store_create(db, "Secret", "ns", noname, &out), 422);
    assert_status(out, 422, "Invalid");
    cJSON *named = parse("{\"metadata\":{\"name\":\"n\",\"namespace\":\"a\"}}");
    ck_assert_int_eq(store_create(db, "Secret", "b", named, &out), 400);
    assert_status(out, 400, "BadRequest");
    ck_assert_int_eq(store_create(db, "Secret", NULL, noname, &out), 422);
    assert_status(out, 422, "Invalid");
    cJSON *bare = parse("{\"metadata\":{\"name\":\"n\"}}");
    ck_assert_int_eq(store_create(db, "Secret", NULL, bare, &out), 400);
    assert_status(out, 400, "BadRequest");
    /* The namespace may come from the object when the caller passes none. */
    ck_assert_int_eq(store_create(db, "Secret", NULL, named, &out), 201);
    ck_assert_str_eq(meta(out, "namespace"), "a");
    cJSON_Delete(out);
    cJSON_Delete(noname);
    cJSON_Delete(named);
    cJSON_Delete(bare);
}
END_TEST

START_TEST(test_missing_object_and_unknown_kind_are_404)
{
    cJSON *out = NULL;
    ck_assert_int_eq(store_get(db, "Secret", "ns", "nope", &out), 404);
    ck_assert_ptr_nonnull(strstr(str(out, "message"), "secrets \"nope\" not found"));
    assert_status(out, 404, "NotFound");
    ck_assert_int_eq(store_get(db, "Lease", "ns", "nope", &out), 404);
    ck_assert_ptr_nonnull(strstr(str(out, "message"), "leases.coordination.k8s.io"));
    assert_status(out, 404, "NotFound");
    ck_assert_int_eq(store_delete(db, "Secret", "ns", "nope", &out), 404);
    assert_status(out, 404, "NotFound");
    ck_assert_int_eq(patch("Secret", "ns", "nope", RS_PATCH_MERGE, "{}", &out), 404);
    assert_status(out, 404, "NotFound");
    const char *unknown_kind = "Widget";
    ck_assert_int_eq(store_get(db, unknown_kind, "ns", "x", &out), 404);
    ck_assert_ptr_nonnull(strstr(str(out, "message"), "unknown"));
    assert_status(out, 404, "NotFound");
    ck_assert_int_eq(store_list(db, unknown_kind, NULL, NULL, NULL, &out), 404);
    assert_status(out, 404, "NotFound");
    cJSON *obj = parse("{\"metadata\":{\"name\":\"x\"}}");
    ck_assert_int_eq(store_create(db, unknown_kind, "ns", obj, &out), 404);
    assert_status(out, 404, "NotFound");
    ck_assert_int_eq(patch(unknown_kind, "ns", "x", RS_PATCH_MERGE, "{}", &out), 404);
    assert_status(out, 404, "NotFound");
    cJSON_Delete(obj);
}
END_TEST

START_TEST(test_metadata_patch_moves_rv_not_generation)
{
    create("Secret", "ns", "{\"metadata\":{\"name\":\"s\"},\"data\":{\"k\":\"YQ==\"}}");
    create("Secret", "ns", "{\"metadata\":{\"name\":\"other\"}}");
    cJSON *out = NULL;
    ck_assert_int_eq(patch("Secret", "ns", "s", RS_PATCH_STRATEGIC,
                           "{\"metadata\":{\"annotations\":{\"reassert/rev\":\"abc\"}}}", &out),
                     200);
    ck_assert_str_eq(meta(out, "resourceVersion"), "3");
    ck_assert_double_eq(generation(out), 1);
    cJSON_Delete(out);
    ck_assert_int_eq(
        patch("Secret", "ns", "s", RS_PATCH_MERGE, "{\"data\":{\"k\":\"Yg==\"}}", &out), 200);
    ck_assert_str_eq(meta(out, "resourceVersion"), "4");
    ck_assert_double_eq(generation(out), 2);
    cJSON_Delete(out);
    /* status is not spec: it moves rv only. */
    ck_assert_int_eq(patch("Secret", "ns", "s", RS_PATCH_MERGE, "{\"status\":{\"x\":1}}", &out),
                     200);
    ck_assert_str_eq(meta(out, "resourceVersion"), "5");
    ck_assert_double_eq(generation(out), 2);
    cJSON_Delete(out);
}
END_TEST

START_TEST(test_noop_patch_is_200_and_keeps_resource_version)
{
    create("Kustomization", "flux-system",
           "{\"metadata\":{\"name\":\"infra\",\"labels\":{\"a\":\"1\"}},\"spec\":{\"suspend\":"
           "false}}");
    cJSON *out = NULL;
    ck_assert_int_eq(patch("Kustomization", "flux-system", "infra", RS_PATCH_MERGE,
                           "{\"spec\":{\"suspend\":false},\"metadata\":{\"labels\":{\"a\":\"1\"}}}",
                           &out),
                     200);
    ck_assert_str_eq(meta(out, "resourceVersion"), "1");
    ck_assert_str_eq(str(out, "apiVersion"), "kustomize.toolkit.fluxcd.io/v1");
    cJSON_Delete(out);
    ck_assert_int_eq(patch("Kustomization", "flux-system", "infra", RS_PATCH_JSON,
                           "[{\"op\":\"replace\",\"path\":\"/spec/suspend\",\"value\":false}]",
                           &out),
                     200);
    ck_assert_str_eq(meta(out, "resourceVersion"), "1");
    cJSON_Delete(out);
    ck_assert_int_eq(store_revision(db), 1);
}
END_TEST

START_TEST(test_json_patch_test_op_is_compare_and_swap)
{
    create("Lease", "flux-system",
           "{\"metadata\":{\"name\":\"reassert\"},\"spec\":{\"holderIdentity\":\"\"}}");
    cJSON *out = NULL;
    ck_assert_int_eq(
        patch("Lease", "flux-system", "reassert", RS_PATCH_JSON,
              "[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\"1\"},"
              "{\"op\":\"replace\",\"path\":\"/spec/holderIdentity\",\"value\":\"sim.a\"}]",
              &out),
        200);
    ck_assert_str_eq(meta(out, "resourceVersion"), "2");
    cJSON_Delete(out);
    /* The second contender's precondition is stale: 422, nothing written. */
    ck_assert_int_eq(
        patch("Lease", "flux-system", "reassert", RS_PATCH_JSON,
              "[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":\"1\"},"
              "{\"op\":\"replace\",\"path\":\"/spec/holderIdentity\",\"value\":\"sim.b\"}]",
              &out),
        422);
    ck_assert_ptr_nonnull(strstr(str(out, "message"), "/metadata/resourceVersion"));
    assert_status(out, 422, "Invalid");
    ck_assert_int_eq(store_get(db, "Lease", "flux-system", "reassert", &out), 200);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(out, "spec"),
                                                      "holderIdentity")
                         ->valuestring,
                     "sim.a");
    cJSON_Delete(out);
    ck_assert_int_eq(store_revision(db), 2);
}
END_TEST

START_TEST(test_bad_patches_are_422_or_400)
{
    create("Secret", "ns", "{\"metadata\":{\"name\":\"s\"}}");
    cJSON *out = NULL;
    ck_assert_int_eq(patch("Secret", "ns", "s", RS_PATCH_JSON,
                           "[{\"op\":\"remove\",\"path\":\"/data/missing\"}]", &out),
                     422);
    assert_status(out, 422, "Invalid");
    ck_assert_int_eq(patch("Secret", "ns", "s", RS_PATCH_JSON, "{\"op\":\"remove\"}", &out), 400);
    assert_status(out, 400, "BadRequest");
    ck_assert_int_eq(patch("Secret", "ns", "s", RS_PATCH_MERGE, "[1]", &out), 400);
    assert_status(out, 400, "BadRequest");
    ck_assert_int_eq(patch("Secret", "ns", "s", RS_PATCH_NONE, "{}", &out), 400);
    assert_status(out, 400, "BadRequest");
    ck_assert_int_eq(store_revision(db), 1);
}
END_TEST

START_TEST(test_patch_may_not_change_identity)
{
    create("Secret", "ns", "{\"metadata\":{\"name\":\"s\"}}");
    cJSON *out = NULL;
    ck_assert_int_eq(
        patch("Secret", "ns", "s", RS_PATCH_MERGE, "{\"metadata\":{\"name\":\"t\"}}", &out), 422);
    assert_status(out, 422, "Invalid");
    ck_assert_int_eq(
        patch("Secret", "ns", "s", RS_PATCH_MERGE, "{\"metadata\":{\"namespace\":\"x\"}}", &out),
        422);
    assert_status(out, 422, "Invalid");
    ck_assert_int_eq(patch("Secret", "ns", "s", RS_PATCH_JSON,
                           "[{\"op\":\"replace\",\"path\":\"/metadata/uid\",\"value\":\"u\"}]",
                           &out),
                     422);
    assert_status(out, 422, "Invalid");
    /* Dropping store-owned fields is not a change of identity: they come back. */
    ck_assert_int_eq(patch("Secret", "ns", "s", RS_PATCH_MERGE,
                           "{\"metadata\":{\"uid\":null,\"resourceVersion\":null},\"kind\":null}",
                           &out),
                     200);
    ck_assert_str_eq(meta(out, "resourceVersion"), "1");
    ck_assert_str_eq(str(out, "kind"), "Secret");
    ck_assert_ptr_nonnull(meta(out, "uid"));
    cJSON_Delete(out);
}
END_TEST

START_TEST(test_patch_with_stale_resource_version_is_409)
{
    create("Node", NULL, "{\"metadata\":{\"name\":\"w1\"},\"spec\":{}}");
    cJSON *out = NULL;
    ck_assert_int_eq(
        patch("Node", NULL, "w1", RS_PATCH_MERGE,
              "{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"unschedulable\":true}}", &out),
        200);
    ck_assert_str_eq(meta(out, "resourceVersion"), "2");
    cJSON_Delete(out);
    ck_assert_int_eq(
        patch("Node", NULL, "w1", RS_PATCH_MERGE,
              "{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"unschedulable\":false}}",
              &out),
        409);
    ck_assert_ptr_nonnull(strstr(str(out, "message"), "the object has been modified"));
    assert_status(out, 409, "Conflict");
    ck_assert_int_eq(store_revision(db), 2);
}
END_TEST

START_TEST(test_replace_is_cas_on_resource_version)
{
    create("ConfigMap", "ns", "{\"metadata\":{\"name\":\"c\"},\"data\":{\"a\":\"1\"}}");
    cJSON *out = NULL;
    cJSON *cur = NULL;
    ck_assert_int_eq(store_get(db, "ConfigMap", "ns", "c", &cur), 200);
    /* Identical PUT: no change, no revision. */
    ck_assert_int_eq(store_replace(db, "ConfigMap", "ns", "c", cur, &out), 200);
    ck_assert_str_eq(meta(out, "resourceVersion"), "1");
    cJSON_Delete(out);
    cJSON_ReplaceItemInObjectCaseSensitive(cur, "data", parse("{\"a\":\"2\"}"));
    ck_assert_int_eq(store_replace(db, "ConfigMap", "ns", "c", cur, &out), 200);
    ck_assert_str_eq(meta(out, "resourceVersion"), "2");
    ck_assert_double_eq(generation(out), 2);
    cJSON_Delete(out);
    /* cur still says rv 1: stale. */
    ck_assert_int_eq(store_replace(db, "ConfigMap", "ns", "c", cur, &out), 409);
    assert_status(out, 409, "Conflict");
    /* Without a resourceVersion the PUT is unconditional. */
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(cur, "metadata"),
                                            "resourceVersion");
    cJSON_ReplaceItemInObjectCaseSensitive(cur, "data", parse("{\"a\":\"3\"}"));
    ck_assert_int_eq(store_replace(db, "ConfigMap", "ns", "c", cur, &out), 200);
    ck_assert_str_eq(meta(out, "resourceVersion"), "3");
    cJSON_Delete(out);
    ck_assert_int_eq(store_replace(db, "ConfigMap", "ns", "missing", cur, &out), 400);
    assert_status(out, 400, "BadRequest");
    cJSON_Delete(cur);
    cur = parse("{\"metadata\":{\"name\":\"missing\"}}");
    ck_assert_int_eq(store_replace(db, "ConfigMap", "ns", "missing", cur, &out), 404);
    assert_status(out, 404, "NotFound");
    cJSON_Delete(cur);
}
END_TEST

START_TEST(test_delete_returns_object_and_takes_a_revision)
{
    create("Pod", "ns", "{\"metadata\":{\"name\":\"p\"}}");
    cJSON *out = NULL;
    ck_assert_int_eq(store_delete(db, "Pod", "ns", "p", &out), 200);
    ck_assert_str_eq(meta(out, "name"), "p");
    cJSON_Delete(out);
    ck_assert_int_eq(store_revision(db), 2);
    ck_assert_int_eq(store_get(db, "Pod", "ns", "p", &out), 404);
    assert_status(out, 404, "NotFound");
    /* Re-created: a new uid, as a replaced node gets. */
    create("Pod", "ns", "{\"metadata\":{\"name\":\"p\"}}");
    ck_assert_int_eq(store_get(db, "Pod", "ns", "p", &out), 200);
    ck_assert_str_eq(meta(out, "resourceVersion"), "3");
    cJSON_Delete(out);
}
END_TEST

START_TEST(test_cluster_scoped_kinds_have_no_namespace)
{
    ck_assert(store_kind_cluster_scoped("Node"));
    ck_assert(store_kind_cluster_scoped("Namespace"));
    ck_assert(store_kind_cluster_scoped("CustomResourceDefinition"));
    ck_assert(!store_kind_cluster_scoped("Secret"));
    ck_assert(!store_kind_cluster_scoped("Widget"));
    create("Node", "", "{\"metadata\":{\"name\":\"n1\",\"namespace\":\"x\"}}");
    cJSON *out = NULL;
    ck_assert_int_eq(store_get(db, "Node", NULL, "n1", &out), 200);
    ck_assert_ptr_null(meta(out, "namespace"));
    cJSON_Delete(out);
    ck_assert_int_eq(store_list(db, "Node", NULL, NULL, NULL, &out), 200);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(out, "items")), 1);
    ck_assert_str_eq(str(out, "kind"), "NodeList");
    cJSON_Delete(out);
}
END_TEST

START_TEST(test_api_versions)
{
    static const char *const table[][2] = {
        {"Secret", "v1"},
        {"ConfigMap", "v1"},
        {"Pod", "v1"},
        {"Node", "v1"},
        {"Namespace", "v1"},
        {"Event", "v1"},
        {"Deployment", "apps/v1"},
        {"ReplicaSet", "apps/v1"},
        {"DaemonSet", "apps/v1"},
        {"Lease", "coordination.k8s.io/v1"},
        {"PushSecret", "external-secrets.io/v1alpha1"},
        {"ExternalSecret", "external-secrets.io/v1beta1"},
        {"Kustomization", "kustomize.toolkit.fluxcd.io/v1"},
        {"PodDisruptionBudget", "policy/v1"},
        {"CustomResourceDefinition", "apiextensions.k8s.io/v1"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        ck_assert_str_eq(store_api_version(table[i][0]), table[i][1]);
    ck_assert_ptr_null(store_api_version("Widget"));
    ck_assert_ptr_null(store_api_version(NULL));
}
END_TEST

/* Names of the list's items, joined by ',' into buf. */
static const char *list_names(const char *kind, const char *ns, const char *labels,
                              const char *fields, char *buf, size_t len)
{
    cJSON *out = NULL;
    int code = store_list(db, kind, ns, labels, fields, &out);
    ck_assert_msg(code == 200, "list %s/%s/%s: %d", ns ? ns : "", labels ? labels : "",
                  fields ? fields : "", code);
    buf[0] = '\0';
    const cJSON *item = NULL;
    cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(out, "items"))
    {
        if (buf[0]) strncat(buf, ",", len - strlen(buf) - 1);
        strncat(buf, meta(item, "name"), len - strlen(buf) - 1);
    }
    cJSON_Delete(out);
    return buf;
}

static void seed_pods(void)
{
    create("Pod", "b",
           "{\"metadata\":{\"name\":\"web-1\",\"labels\":{\"app\":\"web\",\"tier\":\"fe\"}},"
           "\"spec\":{\"nodeName\":\"w1\"}}");
    create("Pod", "a",
           "{\"metadata\":{\"name\":\"web-2\",\"labels\":{\"app\":\"web\"}},"
           "\"spec\":{\"nodeName\":\"w2\"}}");
    create("Pod", "a",
           "{\"metadata\":{\"name\":\"db\",\"labels\":{\"app\":\"db\",\"tier\":\"be\"}},"
           "\"spec\":{\"nodeName\":\"w1\",\"priority\":7}}");
    create("Pod", "a", "{\"metadata\":{\"name\":\"pending\"},\"spec\":{}}");
}

START_TEST(test_list_is_sorted_by_namespace_then_name)
{
    seed_pods();
    char buf[256];
    ck_assert_str_eq(list_names("Pod", NULL, NULL, NULL, buf, sizeof buf),
                     "db,pending,web-2,web-1");
    ck_assert_str_eq(list_names("Pod", "", "", "", buf, sizeof buf), "db,pending,web-2,web-1");
    ck_assert_str_eq(list_names("Pod", "b", NULL, NULL, buf, sizeof buf), "web-1");
    ck_assert_str_eq(list_names("Secret", NULL, NULL, NULL, buf, sizeof buf), "");
    cJSON *out = NULL;
    ck_assert_int_eq(store_list(db, "Pod", "a", NULL, NULL, &out), 200);
    ck_assert_str_eq(str(out, "kind"), "PodList");
    ck_assert_str_eq(str(out, "apiVersion"), "v1");
    ck_assert_str_eq(meta(out, "resourceVersion"), "4");
    cJSON_Delete(out);
}
END_TEST

START_TEST(test_label_selectors)
{
    seed_pods();
    char buf[256];
    ck_assert_str_eq(list_names("Pod", NULL, "app=web", NULL, buf, sizeof buf), "web-2,web-1");
    ck_assert_str_eq(list_names("Pod", NULL, "app==web", NULL, buf, sizeof buf), "web-2,web-1");
    ck_assert_str_eq(list_names("Pod", NULL, "app!=web", NULL, buf, sizeof buf), "db,pending");
    ck_assert_str_eq(list_names("Pod", NULL, "tier", NULL, buf, sizeof buf), "db,web-1");
    ck_assert_str_eq(list_names("Pod", NULL, "!tier", NULL, buf, sizeof buf), "pending,web-2");
    ck_assert_str_eq(list_names("Pod", NULL, "app in (db, web),tier", NULL, buf, sizeof buf),
                     "db,web-1");
    ck_assert_str_eq(list_names("Pod", NULL, "tier notin (fe)", NULL, buf, sizeof buf),
                     "db,pending,web-2");
    ck_assert_str_eq(list_names("Pod", NULL, " app = web , tier!=fe ", NULL, buf, sizeof buf),
                     "web-2");
    ck_assert_str_eq(list_names("Pod", NULL, "app=", NULL, buf, sizeof buf), "");
    ck_assert_str_eq(list_names("Pod", "a", "app in (web)", NULL, buf, sizeof buf), "web-2");
}
END_TEST

START_TEST(test_field_selectors)
{
    seed_pods();
    create("Node", NULL, "{\"metadata\":{\"name\":\"w1\"},\"spec\":{\"unschedulable\":true}}");
    create("Node", NULL, "{\"metadata\":{\"name\":\"w2\"},\"spec\":{}}");
    char buf[256];
    ck_assert_str_eq(list_names("Pod", NULL, NULL, "spec.nodeName=w1", buf, sizeof buf),
                     "db,web-1");
    ck_assert_str_eq(
        list_names("Pod", NULL, NULL, "spec.nodeName==w1,metadata.namespace=a", buf, sizeof buf),
        "db");
    ck_assert_str_eq(list_names("Pod", NULL, NULL, "metadata.name!=db", buf, sizeof buf),
                     "pending,web-2,web-1");
    ck_assert_str_eq(list_names("Pod", NULL, NULL, "spec.nodeName=", buf, sizeof buf), "pending");
    ck_assert_str_eq(list_names("Pod", NULL, "app=web", "spec.nodeName=w1", buf, sizeof buf),
                     "web-1");
    ck_assert_str_eq(list_names("Node", NULL, NULL, "spec.unschedulable=true", buf, sizeof buf),
                     "w1");
    ck_assert_str_eq(list_names("Node", NULL, NULL, "spec.unschedulable!=true", buf, sizeof buf),
                     "w2");
    ck_assert_str_eq(list_names("Secret", NULL, NULL, "type!=Opaque", buf, sizeof buf), "");
    /* Escaped `,` `=` `\\` stand for themselves (a value, not a second term). */
    create("Pod", "a", "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"nodeName\":\"w,1=\\\\\"}}");
    ck_assert_str_eq(list_names("Pod", NULL, NULL, "spec.nodeName=w\\,1\\=\\\\", buf, sizeof buf),
                     "x");
    /* Only the fields the API server indexes for a kind: any other field
     * (even one every object has) is 400 "field label not supported". */
    static const struct {
        const char *kind, *sel;
    } unsupported[] = {{"Pod", "spec.priority=7"},
                       {"Node", "spec!=x"},
                       {"Node", "spec=x"},
                       {"Node", "spec.nodeName=w1"},
                       {"ConfigMap", "data.a=1"},
                       {"Pod", "metadata.name=db,spec.x=1"},
                       {"Lease", "spec.holderIdentity=me"},
                       {"Secret", "metadata.labels=x"}};
    for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++) {
        cJSON *out = NULL;
        ck_assert_msg(
            store_list(db, unsupported[i].kind, NULL, NULL, unsupported[i].sel, &out) == 400,
            "%s field selector \"%s\" was accepted", unsupported[i].kind, unsupported[i].sel);
        const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(out, "message"));
        ck_assert_ptr_nonnull(msg);
        ck_assert_ptr_nonnull(strstr(msg, "field label not supported"));
        assert_status(out, 400, "BadRequest");
    }
}
END_TEST

START_TEST(test_invalid_selectors_are_400)
{
    static const char *const bad_labels[] = {
        "app in web", "app in (web", "=web",  "app=web,",      "app>1",
        "app=we b",   "-app=x",      "a/b/c", "app notin ()x", "app in ()",
    };
    /* `===`, `!==` and a value with an unescaped `=` or an unknown
     * escape are 400, as the API server's UnescapeValue refuses them. */
    static const char *const bad_fields[] = {"spec.nodeName",
                                             "=x",
                                             "a=b,",
                                             "spec nodeName=x",
                                             ".spec=x",
                                             "spec.nodeName===x",
                                             "spec.nodeName!==x",
                                             "metadata.name=a=b",
                                             "metadata.name=a\\b",
                                             "metadata.name=a\\"};
    cJSON *out = NULL;
    for (size_t i = 0; i < sizeof bad_labels / sizeof bad_labels[0]; i++) {
        ck_assert_msg(store_list(db, "Pod", NULL, bad_labels[i], NULL, &out) == 400,
                      "label selector \"%s\" was accepted", bad_labels[i]);
        assert_status(out, 400, "BadRequest");
    }
    for (size_t i = 0; i < sizeof bad_fields / sizeof bad_fields[0]; i++) {
        ck_assert_msg(store_list(db, "Pod", NULL, NULL, bad_fields[i], &out) == 400,
                      "field selector \"%s\" was accepted", bad_fields[i]);
        assert_status(out, 400, "BadRequest");
    }
}
END_TEST

START_TEST(test_store_status_shape)
{
    cJSON *st = store_status(404, "NotFound", "secrets \"%s\" not found", "x");
    ck_assert_str_eq(str(st, "message"), "secrets \"x\" not found");
    ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(st, "metadata"));
    assert_status(st, 404, "NotFound");
}
END_TEST

/* ---- admission: what the API server does before storing (DESIGN §3.3 r2) ---- */

START_TEST(test_secret_string_data_is_merged_into_data)
{
    create("Secret", "ns",
           "{\"metadata\":{\"name\":\"s\"},\"data\":{\"a\":\"b2xk\",\"k\":\"eA==\"},"
           "\"stringData\":{\"a\":\"new\"}}");
    cJSON *out = NULL;
    ck_assert_int_eq(store_get(db, "Secret", "ns", "s", &out), 200);
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(out, "data");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(data, "a")->valuestring, "bmV3");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(data, "k")->valuestring, "eA==");
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(out, "stringData"));
    cJSON_Delete(out);
    /* On a patch too. */
    ck_assert_int_eq(
        patch("Secret", "ns", "s", RS_PATCH_MERGE, "{\"stringData\":{\"z\":\"zz\"}}", &out), 200);
    data = cJSON_GetObjectItemCaseSensitive(out, "data");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(data, "z")->valuestring, "eno=");
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(out, "stringData"));
    cJSON_Delete(out);
}
END_TEST

START_TEST(test_secret_over_one_mebibyte_is_422)
{
    size_t n = 1024 * 1024 + 3; /* decoded bytes: 3 over the limit */
    unsigned char *raw = calloc(n, 1);
    char *b64 = base64_encode(raw, n);
    free(raw);
    cJSON *obj = parse("{\"metadata\":{\"name\":\"big\"},\"data\":{}}");
    cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(obj, "data"), "k", b64);
    free(b64);
    cJSON *out = NULL;
    ck_assert_int_eq(store_create(db, "Secret", "ns", obj, &out), 422);
    assert_status(out, 422, "Invalid");
    cJSON_Delete(obj);
    out = NULL;
    ck_assert_int_eq(store_get(db, "Secret", "ns", "big", &out), 404);
    cJSON_Delete(out);
}
END_TEST

/* Hazard: H4 — the API server validates Lease acquireTime/renewTime as
 * MicroTime. The sim refuses any other form, so every scenario that takes the
 * Lease fails if the core ever writes another form. */
START_TEST(test_lease_times_must_be_micro_time)
{
    create("Lease", "ns",
           "{\"metadata\":{\"name\":\"l\"},\"spec\":{\"holderIdentity\":\"\","
           "\"renewTime\":\"2026-01-02T03:04:05.123456Z\"}}");
    cJSON *out = NULL;
    static const char *const bad[] = {"2026-01-02T03:04:05Z", "2026-01-02T03:04:05.123Z",
                                      "2026-01-02T03:04:05.123456+00:00", "yesterday"};
    for (size_t i = 0; i < 4; i++) {
        char *p = rs_xasprintf("{\"spec\":{\"acquireTime\":\"%s\"}}", bad[i]);
        ck_assert_int_eq(patch("Lease", "ns", "l", RS_PATCH_MERGE, p, &out), 400);
        assert_status(out, 400, "BadRequest");
        free(p);
        out = NULL;
    }
    ck_assert_int_eq(patch("Lease", "ns", "l", RS_PATCH_MERGE,
                           "{\"spec\":{\"acquireTime\":\"2026-01-02T03:04:05.000001Z\"}}", &out),
                     200);
    cJSON_Delete(out);
}
END_TEST

static Suite *store_suite(void)
{
    Suite *s = suite_create("store");
    TCase *tc = tcase_create("store");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_create_stamps_identity_and_takes_a_revision);
    tcase_add_test(tc, test_uid_is_deterministic_and_unique);
    tcase_add_test(tc, test_create_existing_name_is_409_already_exists);
    tcase_add_test(tc, test_create_rejects_bad_input);
    tcase_add_test(tc, test_missing_object_and_unknown_kind_are_404);
    tcase_add_test(tc, test_metadata_patch_moves_rv_not_generation);
    tcase_add_test(tc, test_noop_patch_is_200_and_keeps_resource_version);
    tcase_add_test(tc, test_json_patch_test_op_is_compare_and_swap);
    tcase_add_test(tc, test_bad_patches_are_422_or_400);
    tcase_add_test(tc, test_patch_may_not_change_identity);
    tcase_add_test(tc, test_patch_with_stale_resource_version_is_409);
    tcase_add_test(tc, test_replace_is_cas_on_resource_version);
    tcase_add_test(tc, test_delete_returns_object_and_takes_a_revision);
    tcase_add_test(tc, test_cluster_scoped_kinds_have_no_namespace);
    tcase_add_test(tc, test_api_versions);
    tcase_add_test(tc, test_list_is_sorted_by_namespace_then_name);
    tcase_add_test(tc, test_label_selectors);
    tcase_add_test(tc, test_field_selectors);
    tcase_add_test(tc, test_invalid_selectors_are_400);
    tcase_add_test(tc, test_store_status_shape);
    tcase_add_test(tc, test_secret_string_data_is_merged_into_data);
    tcase_add_test(tc, test_secret_over_one_mebibyte_is_422);
    tcase_add_test(tc, test_lease_times_must_be_micro_time);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(store_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
