/*
 * test_scenario_input.c — strict input for the scenario loader (DESIGN.md
 * §5.1, issue 10; README "Input bounds"): bytes that are not UTF-8 text,
 * sizes and counts past their bounds, run names and paths that could escape,
 * and references that could only fail at run time. Each case must fail the
 * load with RS_DATAERR and the exact "<file>:<line>:<col>: <field>: ..."
 * prefix; nothing may be silently cut.
 */
#include "sim/scenario/scenario.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TI_HEAD                                                                                    \
    "name: t\nseed: 1\ncluster: {preset: prod, credential: current}\ndesired: current\n"           \
    "runs:\n  - name: first\n    expect: {exit: 0}\n"

static char *ti_write(const char *text, size_t n)
{
    char *path = strdup("/tmp/test_scenario_input-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, text + done, n - done);
        ck_assert_int_gt(w, 0);
        done += (size_t)w;
    }
    close(fd);
    return path;
}

/* Loads text (n bytes), expects RS_DATAERR and "<path>:" + want as prefix. */
static void ti_err_n(const char *text, size_t n, const char *want)
{
    char *p = ti_write(text, n);
    sc_scenario *sc = (sc_scenario *)1;
    rs_err e = {0};
    rs_code rc = sc_load(p, &sc, &e);
    unlink(p);
    char prefix[1024];
    snprintf(prefix, sizeof prefix, "%s:%s", p, want);
    free(p);
    ck_assert_msg(rc == RS_DATAERR, "loaded (rc %d), want: %s", rc, prefix);
    ck_assert_ptr_null(sc);
    ck_assert_msg(strncmp(e.msg, prefix, strlen(prefix)) == 0, "got  '%s'\nwant '%s...'", e.msg,
                  prefix);
}

static void ti_err(const char *text, const char *want)
{
    ti_err_n(text, strlen(text), want);
}

static sc_scenario *ti_ok(const char *text)
{
    char *p = ti_write(text, strlen(text));
    sc_scenario *sc = NULL;
    rs_err e = {0};
    rs_code rc = sc_load(p, &sc, &e);
    unlink(p);
    free(p);
    ck_assert_msg(rc == RS_OK, "load failed: %s", e.msg);
    return sc;
}

/* ---- bytes --------------------------------------------------------------- */

/* A valid run, then a bad byte on line 8, then a run that must not vanish. */
static void ti_cut(const char *line8, size_t n8, const char *want)
{
    static const char tail[] = "  - name: second\n    expect: {exit: 99}\n";
    char buf[1024];
    size_t n = 0;
    memcpy(buf, TI_HEAD, strlen(TI_HEAD));
    n += strlen(TI_HEAD);
    memcpy(buf + n, line8, n8);
    n += n8;
    memcpy(buf + n, tail, sizeof tail - 1);
    n += sizeof tail - 1;
    ti_err_n(buf, n, want);
}

START_TEST(test_nul_anywhere_refuses_the_file)
{
    static const char comment[] = "# a comment \0 with a NUL byte\n";
    ti_cut(comment, sizeof comment - 1, "8:13: (bytes): a NUL byte");
    static const char value[] = "  - name: \"mid\0dle\"\n    expect: {exit: 0}\n";
    ti_cut(value, sizeof value - 1, "8:15: (bytes): a NUL byte");
}
END_TEST

START_TEST(test_invalid_utf8_anywhere_refuses_the_file)
{
    static const char ff[] = "# a comment \xff\xfe that is not UTF-8\n";
    ti_cut(ff, sizeof ff - 1, "8:13: (bytes): byte 0xFF is not valid UTF-8");
    static const char overlong[] = "  - name: \"x\xc0\xafy\"\n    expect: {exit: 0}\n";
    ti_cut(overlong, sizeof overlong - 1, "8:13: (bytes): byte 0xC0 is not valid UTF-8");
    static const char surrogate[] = "# CESU surrogate \xed\xa0\x80 in a comment\n";
    ti_cut(surrogate, sizeof surrogate - 1, "8:18: (bytes): byte 0xED is not valid UTF-8");
    static const char high[] = "# past U+10FFFF \xf4\x90\x80\x80\n";
    ti_cut(high, sizeof high - 1, "8:17: (bytes): byte 0xF4 is not valid UTF-8");
    /* Multi-byte characters before the bad byte count as one column each. */
    static const char wide[] = "# \xc3\xa9\xe2\x82\xac \xff\n";
    ti_cut(wide, sizeof wide - 1, "8:6: (bytes): byte 0xFF is not valid UTF-8");
    /* The file ends inside a character. */
    static const char cut[] = TI_HEAD "# truncated \xe2\x82";
    ti_err_n(cut, sizeof cut - 1, "8:13: (bytes): byte 0xE2 is not valid UTF-8");
}
END_TEST

START_TEST(test_valid_utf8_still_loads)
{
    sc_scenario *sc = ti_ok(TI_HEAD "# caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x91\n"
                                    "about: \"na\xc3\xafve\"\n");
    ck_assert_str_eq(sc->about, "na\xc3\xafve");
    sc_free(sc);
}
END_TEST

/* ---- sizes --------------------------------------------------------------- */

START_TEST(test_file_over_4_mib_is_refused)
{
    size_t n = 4u * 1024u * 1024u + 1;
    char *big = malloc(n);
    ck_assert_ptr_nonnull(big);
    memcpy(big, TI_HEAD, strlen(TI_HEAD));
    memset(big + strlen(TI_HEAD), '#', n - strlen(TI_HEAD));
    big[n - 1] = '\n';
    ti_err_n(big, n, "1:1: (file): the scenario is larger than 4194304 bytes");
    free(big);
}
END_TEST

START_TEST(test_value_over_64_kib_is_refused)
{
    size_t pw = 64 * 1024 + 1;
    size_t cap = strlen(TI_HEAD) + pw + 128;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    int k = snprintf(text, cap, "%scatalogue:\n  big: {username: u, password: \"", TI_HEAD);
    memset(text + k, 'p', pw);
    strcpy(text + k + pw, "\"}\n");
    ti_err(text, "9:32: catalogue.big.password: a value longer than 65536 bytes");
    /* Exactly at the bound is accepted. */
    memset(text + k, 'p', pw - 1);
    strcpy(text + k + pw - 1, "\"}\n");
    sc_scenario *sc = ti_ok(text);
    ck_assert_uint_eq(strlen(sc_catalogue_find(sc, "big")->password), pw - 1);
    sc_free(sc);
    free(text);
}
END_TEST

/* Many aliases and many keys resolve correctly through the hashed lookups. */
START_TEST(test_many_aliases_and_keys_resolve)
{
    size_t n = 9000, cap = 64 + n * 8 + 512;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    int k = snprintf(text, cap, "%s", TI_HEAD);
    k += snprintf(text + k, cap - (size_t)k,
                  "  - name: r\n    expect:\n      output-contains: [&a \"x\"");
    for (size_t i = 0; i < n; i++)
        k += snprintf(text + k, cap - (size_t)k, ", *a");
    snprintf(text + k, cap - (size_t)k, "]\n");
    sc_scenario *sc = ti_ok(text);
    const cJSON *oc = cJSON_GetObjectItemCaseSensitive(sc->runs[1].expect, "output-contains");
    ck_assert_int_eq(cJSON_GetArraySize(oc), (int)n + 1);
    ck_assert_str_eq(cJSON_GetArrayItem(oc, (int)n)->valuestring, "x");
    sc_free(sc);
    free(text);
    /* A duplicate key is still found in a big mapping, with both positions. */
    ti_err(TI_HEAD "catalogue:\n  a: {username: u, password: p}\n  b: {username: u, password: p}\n"
                   "  a: {username: v, password: q}\n",
           "11:3: catalogue.a: duplicate key (first given at line 9, column 3)");
}
END_TEST

/* ---- run names, args and {tmp} ----------------------------------------- */

#define TI_R "name: t\ncluster: {preset: prod, credential: current}\ndesired: current\nruns:\n"

START_TEST(test_run_names_are_dns_label_like)
{
    static const char *const bad[] = {
        "a/b",
        "Reassert",
        "reassert-",
        "-r",
        "\"r\\n::error::X\"",
        "\"../../victim\"",
        "\"a.b\"",
        "\"a b\"",
        "a234567890123456789012345678901234567890123456789012345678901234", /* 64 */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text[512];
        snprintf(text, sizeof text, TI_R "  - name: %s\n", bad[i]);
        ti_err(text, "5:11: runs[0].name: a run name must be lowercase letters, digits and '-'");
    }
    sc_scenario *sc =
        ti_ok(TI_R "  - name: a23456789012345678901234567890123456789012345678901234567890123\n"
                   "  - name: 0-x\n");
    ck_assert_str_eq(sc->runs[1].name, "0-x");
    sc_free(sc);
}
END_TEST

START_TEST(test_args_the_harness_sets_are_refused)
{
    ti_err(TI_R "  - name: r\n    args: [--check-only, --transport, \"sim:/tmp/x.db\"]\n",
           "6:26: runs[0].args[1]: --transport may not be given in a scenario's args");
    ti_err(TI_R "  - name: r\n    args: [--desired=current]\n",
           "6:12: runs[0].args[0]: --desired may not be given");
    ti_err(TI_R "  - name: r\n    args: [--kubeconfig, /k]\n",
           "6:12: runs[0].args[0]: --kubeconfig may not be given");
    ti_err(TI_R "  - name: r\n    args: [-h]\n", "6:12: runs[0].args[0]: -h may not be given");
    sc_scenario *sc = ti_ok(TI_R "  - name: r\n    args: [--output, json, --strategy, eager, "
                                 "--transportx]\n");
    ck_assert_uint_eq(sc->runs[0].n_args, 5);
    sc_free(sc);
}
END_TEST

START_TEST(test_tmp_paths_stay_in_the_private_directory)
{
    ti_err(TI_R "  - name: r\n    args: [--record-runtime-proof, \"{tmp}/../../etc/proof.json\"]\n",
           "6:36: runs[0].args[1]: a {tmp} path must stay inside the private directory");
    ti_err(TI_R "  - name: r\n    args: [--record-runtime-proof, \"{tmp}/a/..\"]\n",
           "6:36: runs[0].args[1]: a {tmp} path");
    ti_err(TI_R "  - name: r\n    args: [--record-runtime-proof, \"{tmp}x/proof.json\"]\n",
           "6:36: runs[0].args[1]: a {tmp} path");
    sc_scenario *sc = ti_ok(TI_R "  - name: r\n    args: [--record-runtime-proof, "
                                 "\"{tmp}/a..b/proof.json\", --config, \"{tmp}\"]\n");
    ck_assert_str_eq(sc->runs[0].args[1], "{tmp}/a..b/proof.json");
    sc_free(sc);
}
END_TEST

/* ---- references resolve at load time ------------------------------------ */

START_TEST(test_kinds_refs_and_nodes_resolve_at_load)
{
    ti_err(TI_R "  - name: r\n    expect:\n      delta: {writes_by_kind: {Secret: 0, Sekret: 0}}\n",
           "7:43: runs[0].expect.delta.writes_by_kind.Sekret: unknown kind");
    ti_err(TI_R "  - name: r\n    expect:\n      state:\n        - {ref: Secret/x, path: /data, "
                "absent: true}\n",
           "8:17: runs[0].expect.state[0].ref: Secret is namespaced: want "
           "Secret/namespace/name");
    ti_err(TI_R "  - name: r\n    before:\n      - kube.delete: {ref: Node/ns/x}\n",
           "7:28: runs[0].before[0].kube.delete.ref: Node is cluster-scoped");
    ti_err(TI_R "  - name: r\n    before:\n      - kube.delete: {ref: Sekret/ns/x}\n",
           "7:28: runs[0].before[0].kube.delete.ref: unknown kind in \"Sekret/ns/x\"");
    ti_err(TI_R "  - name: r\n    expect:\n      state:\n        - {talos: nope, registry-auth: "
                "current}\n",
           "8:19: runs[0].expect.state[0].talos: unknown node \"nope\"");
    ti_err(TI_R "  - name: r\n    before:\n      - node.replace: {node: prod-worker-99}\n",
           "7:30: runs[0].before[0].node.replace.node: unknown node \"prod-worker-99\"");
    ti_err(TI_R "  - name: r\n    before:\n      - node.replace: {node: prod-worker-01}\n",
           "7:30: runs[0].before[0].node.replace.node: unknown node");
    ti_err(TI_R
           "  - name: r\n    before:\n      - talos.partial-apply: {nodes: [prod-worker-1, x], "
           "drop-node-annotations: true}\n",
           "7:54: runs[0].before[0].talos.partial-apply.nodes[1]: unknown node \"x\"");
    ti_err(TI_R
           "  - name: r\n    before:\n      - pdb.block: {node: prod-control-plane-4, for: 1m}\n",
           "7:27: runs[0].before[0].pdb.block.node: unknown node");
    /* Preset nodes within the cluster's sizes, and nodes a node.add creates
     * (in any run), resolve; known write kinds load. */
    sc_scenario *sc = ti_ok(
        "name: t\ncluster: {preset: prod, credential: current, workers: 5}\ndesired: current\n"
        "runs:\n  - name: r\n    before:\n      - node.replace: {node: prod-worker-5}\n"
        "      - etcd.unhealthy: {node: prod-control-plane-3}\n"
        "    expect:\n      state:\n        - {talos: extra-1, registry-auth: current}\n"
        "      delta: {writes_by_kind: {Secret: 0, PushSecret: 0, Node: 0, openbao: 0, "
        "talos.reboot: 0, talos.image-pull: 0}}\n"
        "  - name: s\n    before:\n      - node.add: {role: worker, name: extra-1}\n");
    ck_assert_uint_eq(sc->n_runs, 2);
    sc_free(sc);
}
END_TEST

/* ---- counts -------------------------------------------------------------- */

START_TEST(test_fanout_over_256_is_refused_not_cut)
{
    ti_err("name: t\ncluster: {preset: prod, credential: current, fanout-namespaces: 257}\n"
           "desired: current\nruns:\n  - name: r\n",
           "2:65: cluster.fanout-namespaces: must be an integer from 0 to 256");
    size_t cap = 257 * 16 + 512;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    int k = snprintf(text, cap,
                     "name: t\ncluster:\n  preset: prod\n  credential: current\n"
                     "  fanout-namespaces:\n");
    for (int i = 1; i <= 257; i++)
        k += snprintf(text + k, cap - (size_t)k, "    - ns-%d\n", i);
    snprintf(text + k, cap - (size_t)k, "desired: current\nruns:\n  - name: r\n");
    ti_err(text, "5:3: cluster.fanout-namespaces: 257 namespaces; at most 256 are supported");
    /* 256 is the bound, kept whole. */
    char *at = strstr(text, "    - ns-257\n");
    memmove(at, at + strlen("    - ns-257\n"), strlen(at + strlen("    - ns-257\n")) + 1);
    sc_scenario *sc = ti_ok(text);
    ck_assert_uint_eq(sc->cluster.n_fanout, 256);
    ck_assert_str_eq(sc->cluster.fanout_namespaces[255], "ns-256");
    sc_free(sc);
    free(text);
}
END_TEST

START_TEST(test_workers_are_bounded)
{
    ti_err("name: t\ncluster: {preset: prod, credential: previous, workers: 4096}\n"
           "desired: current\nruns:\n  - name: r\n",
           "2:56: cluster.workers: must be an integer from 0 to 1000");
    sc_scenario *sc = ti_ok("name: t\ncluster: {preset: prod, credential: previous, workers: 1000}"
                            "\ndesired: current\nruns:\n  - name: r\n");
    ck_assert_int_eq(sc->cluster.workers, 1000);
    sc_free(sc);
}
END_TEST

START_TEST(test_durations_are_bounded_to_366_days)
{
    ti_err(TI_R "  - name: r\n    before:\n      - advance: 100000h\n",
           "7:18: runs[0].before[0].advance: duration \"100000h\" is longer than 366 days");
    ti_err(TI_R "  - name: r\n    before:\n      - advance: 9223372036854775s\n",
           "7:18: runs[0].before[0].advance: duration \"9223372036854775s\" is longer");
    ti_err(TI_R "  - name: r\n    before:\n      - advance: 31622400001ms\n",
           "7:18: runs[0].before[0].advance: duration \"31622400001ms\" is longer");
    ti_err(TI_R "  - name: r\n    before:\n      - pdb.block: {node: prod-worker-1, for: 8785h}\n",
           "7:47: runs[0].before[0].pdb.block.for: duration \"8785h\" is longer");
    sc_scenario *sc = ti_ok(TI_R "  - name: r\n    before:\n      - advance: 8784h\n");
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(sc->runs[0].before[0].args, "ms");
    ck_assert_double_eq(ms->valuedouble, 31622400000.0);
    sc_free(sc);
}
END_TEST

static Suite *ti_suite(void)
{
    Suite *s = suite_create("scenario_input");
    TCase *t = tcase_create("input");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, test_nul_anywhere_refuses_the_file);
    tcase_add_test(t, test_invalid_utf8_anywhere_refuses_the_file);
    tcase_add_test(t, test_valid_utf8_still_loads);
    tcase_add_test(t, test_file_over_4_mib_is_refused);
    tcase_add_test(t, test_value_over_64_kib_is_refused);
    tcase_add_test(t, test_many_aliases_and_keys_resolve);
    tcase_add_test(t, test_run_names_are_dns_label_like);
    tcase_add_test(t, test_args_the_harness_sets_are_refused);
    tcase_add_test(t, test_tmp_paths_stay_in_the_private_directory);
    tcase_add_test(t, test_fanout_over_256_is_refused_not_cut);
    tcase_add_test(t, test_kinds_refs_and_nodes_resolve_at_load);
    tcase_add_test(t, test_workers_are_bounded);
    tcase_add_test(t, test_durations_are_bounded_to_366_days);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(ti_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
