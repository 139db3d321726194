/*
 * scenario_expect.c — a run's `expect:` and `invariants:` (DESIGN.md §5).
 *
 * Expectations are what the CI gate asserts, so a typo in one must fail the
 * load rather than pass silently: an unknown counter ("controller_restart")
 * or a malformed comparator (">= 1", "=>1") would otherwise be a check that
 * can never fail. The checked tree is kept as cJSON (by-strategy apart) for
 * the runner, which merges per strategy with sc_expect_for.
 */
#include "sim/scenario/scenario_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define LD_EXIT_MAX 255
#define LD_INVARIANT_MAX 7        /* DESIGN.md §6 numbers its invariants 1..7 */
#define SC_MERGE_PAIRS_MAX 100000 /* expectations are a few dozen nodes */

static const char *const scl_counters[] = {
    "controller_restarts",
    "lease_writes",
    "writes",
    "writes_by_kind",
    "fence_acquisitions",
    "policy_pauses",
    "node_reboots",
    "node_drains",
    "talos_mutations",
    "api_calls",
    "virtual_seconds",
    "lease_rv_moved",
    "kube_calls",
    "openbao_calls",
    "talos_calls",
    "registry_calls",
    NULL,
};

bool sc_counter_known(const char *name)
{
    for (size_t i = 0; name && scl_counters[i]; i++)
        if (!strcmp(scl_counters[i], name)) return true;
    return false;
}

/* ">=N", "<=N", ">N", "<N"; N a non-negative integer, or decimal when allowed. */
static bool scl_comparator_ok(const char *s, bool decimal)
{
    if (s[0] == '>' || s[0] == '<')
        s += (s[1] == '=') ? 2 : 1;
    else
        return false;
    size_t digits = strspn(s, "0123456789");
    if (digits == 0) return false;
    s += digits;
    if (decimal && *s == '.') {
        size_t frac = strspn(s + 1, "0123456789");
        if (frac == 0) return false;
        s += 1 + frac;
    }
    return *s == '\0';
}

static bool scl_count(sc_ld *ld, const cJSON *v, const char *path, bool decimal)
{
    long long n;
    if (cJSON_IsNumber(v) && sy_is_int(ld->doc, v)) return scl_int(ld, v, path, 0, LLONG_MAX, &n);
    if (cJSON_IsNumber(v) && decimal) {
        if (v->valuedouble >= 0) return true;
        return scl_fail_at(ld, v, path, "must not be negative");
    }
    if (cJSON_IsString(v)) {
        if (scl_comparator_ok(v->valuestring, decimal)) return true;
        return scl_fail_at(ld, v, path,
                           "malformed comparator \"%s\" (want N, \">=N\", \"<=N\", \">N\" or "
                           "\"<N\" with N a non-negative %s)",
                           v->valuestring, decimal ? "number" : "integer");
    }
    return scl_fail_at(ld, v, path, "expected %s or a comparator string such as \">=1\", got %s",
                       decimal ? "a number" : "an integer", scl_type_name(ld, v));
}

static bool scl_delta(sc_ld *ld, const cJSON *delta, const char *path)
{
    if (!scl_want_map(ld, delta, path)) return false;
    const cJSON *it;
    cJSON_ArrayForEach(it, delta)
    {
        char kp[SC_PATH_MAX];
        scl_path_key(kp, path, it->string);
        bool ok;
        if (!sc_counter_known(it->string)) {
            ok = scl_fail(ld, sy_key_pos(ld->doc, it), kp,
                          "unknown counter (known: controller_restarts, lease_writes, writes, "
                          "writes_by_kind, fence_acquisitions, policy_pauses, node_reboots, "
                          "node_drains, talos_mutations, api_calls, virtual_seconds, "
                          "lease_rv_moved, kube_calls, openbao_calls, talos_calls, "
                          "registry_calls)");
        } else if (!strcmp(it->string, "lease_rv_moved")) {
            bool b;
            ok = scl_bool(ld, it, kp, &b);
        } else if (!strcmp(it->string, "writes_by_kind")) {
            ok = scl_want_map(ld, it, kp);
            const cJSON *k;
            cJSON_ArrayForEach(k, it)
            {
                char wp[SC_PATH_MAX];
                scl_path_key(wp, kp, k->string);
                if (ok && !scl_write_kind_known(k->string))
                    ok = scl_fail(ld, sy_key_pos(ld->doc, k), wp,
                                  "unknown kind (a kind of the sim's API server such as Secret, "
                                  "Node, PushSecret; openbao; or talos.patch, talos.reboot, "
                                  "talos.image-remove, talos.image-pull)");
                if (ok) ok = scl_count(ld, k, wp, false);
            }
        } else {
            ok = scl_count(ld, it, kp, !strcmp(it->string, "virtual_seconds"));
        }
        if (!ok) return false;
    }
    return true;
}

static bool scl_json_pointer(sc_ld *ld, const cJSON *n, const char *path)
{
    const char *s;
    if (!scl_str(ld, n, path, &s)) return false;
    if (s[0] == '/') return true;
    return scl_fail_at(ld, n, path, "expected a JSON pointer starting with /");
}

static bool scl_check_ref(sc_ld *ld, const cJSON *c, const char *path)
{
    static const char *const cred_keys[] = {"ref", "credential", NULL};
    static const char *const path_keys[] = {"ref", "path", "equals", "absent", NULL};
    char kp[SC_PATH_MAX];
    const cJSON *f;
    bool cred = cJSON_GetObjectItemCaseSensitive(c, "credential") != NULL;
    if (!scl_keys(ld, c, path, cred ? cred_keys : path_keys)) return false;
    scl_path_key(kp, path, "ref");
    if (!scl_ref(ld, cJSON_GetObjectItemCaseSensitive(c, "ref"), kp)) return false;
    if (cred) {
        const char *name;
        scl_path_key(kp, path, "credential");
        return scl_cred_name(ld, cJSON_GetObjectItemCaseSensitive(c, "credential"), kp, &name);
    }
    if (!scl_required(ld, c, "path", path, &f)) return false;
    scl_path_key(kp, path, "path");
    if (!scl_json_pointer(ld, f, kp)) return false;
    const cJSON *eq = cJSON_GetObjectItemCaseSensitive(c, "equals");
    const cJSON *ab = cJSON_GetObjectItemCaseSensitive(c, "absent");
    if (!eq == !ab) return scl_fail_at(ld, c, path, "give exactly one of equals and absent");
    if (eq) return true;
    bool absent;
    scl_path_key(kp, path, "absent");
    if (!scl_bool(ld, ab, kp, &absent)) return false;
    return absent || scl_fail_at(ld, ab, kp, "must be true (use equals to check a value)");
}

/* {openbao: <path>, credential} or {talos: <node>, registry-auth}. */
static bool scl_check_pair(sc_ld *ld, const cJSON *c, const char *path, const char *subject,
                           const char *cred_key)
{
    const char *const keys[] = {subject, cred_key, NULL};
    char kp[SC_PATH_MAX];
    const cJSON *f;
    const char *s;
    if (!scl_keys(ld, c, path, keys) || !scl_required(ld, c, subject, path, &f)) return false;
    scl_path_key(kp, path, subject);
    if (!scl_str(ld, f, kp, &s) || (!strcmp(subject, "talos") && !scl_node(ld, f, kp)) ||
        !scl_required(ld, c, cred_key, path, &f))
        return false;
    scl_path_key(kp, path, cred_key);
    return scl_cred_name(ld, f, kp, &s);
}

static bool scl_state_check(sc_ld *ld, const cJSON *c, const char *path)
{
    if (!scl_want_map(ld, c, path)) return false;
    bool ref = cJSON_GetObjectItemCaseSensitive(c, "ref") != NULL;
    bool bao = cJSON_GetObjectItemCaseSensitive(c, "openbao") != NULL;
    bool talos = cJSON_GetObjectItemCaseSensitive(c, "talos") != NULL;
    if ((int)ref + (int)bao + (int)talos != 1)
        return scl_fail_at(ld, c, path, "a state check names exactly one of ref, openbao, talos");
    if (ref) return scl_check_ref(ld, c, path);
    if (bao) return scl_check_pair(ld, c, path, "openbao", "credential");
    return scl_check_pair(ld, c, path, "talos", "registry-auth");
}

bool scl_check_action(sc_ld *ld, const cJSON *list, const char *path, sc_event *out)
{
    if (!scl_want_list(ld, list, path)) return false;
    if (cJSON_GetArraySize(list) == 0)
        return scl_fail_at(ld, list, path, "must hold at least one state check");
    size_t i = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, list)
    {
        char ip[SC_PATH_MAX];
        scl_path_idx(ip, path, i++);
        if (!scl_state_check(ld, c, ip)) return false;
    }
    out->args = cJSON_Duplicate(list, true);
    out->lines = cJSON_CreateArray();
    if (!out->args || !out->lines) abort();
    cJSON_ArrayForEach(c, list)
        cJSON_AddItemToArray(out->lines, cJSON_CreateNumber(sy_pos(ld->doc, c).line));
    out->kind = rs_xstrdup("check");
    return true;
}

/* exit, delta, output-contains, output-not-contains, output-in-order, state:
 * the keys by-strategy may override. */
static bool scl_expect_body(sc_ld *ld, const cJSON *ex, const char *path, bool top)
{
    static const char *const top_keys[] = {"exit",
                                           "delta",
                                           "output-contains",
                                           "output-not-contains",
                                           "output-in-order",
                                           "state",
                                           "by-strategy",
                                           NULL};
    char kp[SC_PATH_MAX];
    const cJSON *f;
    if (!scl_want_map(ld, ex, path) || !scl_keys(ld, ex, path, top_keys)) return false;
    if (!top && (f = cJSON_GetObjectItemCaseSensitive(ex, "by-strategy"))) {
        scl_path_key(kp, path, "by-strategy");
        return scl_fail(ld, sy_key_pos(ld->doc, f), kp, "by-strategy does not nest");
    }
    long long code;
    scl_path_key(kp, path, "exit");
    if ((f = cJSON_GetObjectItemCaseSensitive(ex, "exit")) &&
        !scl_int(ld, f, kp, 0, LD_EXIT_MAX, &code))
        return false;
    scl_path_key(kp, path, "delta");
    if ((f = cJSON_GetObjectItemCaseSensitive(ex, "delta")) && !scl_delta(ld, f, kp)) return false;
    scl_path_key(kp, path, "output-contains");
    char **texts;
    size_t n;
    if ((f = cJSON_GetObjectItemCaseSensitive(ex, "output-contains"))) {
        if (!scl_str_list(ld, f, kp, &texts, &n)) return false;
        scl_str_list_free(texts, n);
    }
    /* Extensions of §5: the texts must appear in this order (e.g. workers
     * rolled before control planes); the texts must not appear at all (the
     * raw error is not echoed, no release command for a fence). */
    static const char *const text_lists[] = {"output-in-order", "output-not-contains"};
    for (size_t k = 0; k < RS_ARRAY_LEN(text_lists); k++) {
        scl_path_key(kp, path, text_lists[k]);
        if ((f = cJSON_GetObjectItemCaseSensitive(ex, text_lists[k]))) {
            if (!scl_str_list(ld, f, kp, &texts, &n)) return false;
            scl_str_list_free(texts, n);
        }
    }
    scl_path_key(kp, path, "state");
    if (!(f = cJSON_GetObjectItemCaseSensitive(ex, "state"))) return true;
    if (!scl_want_list(ld, f, kp)) return false;
    size_t i = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, f)
    {
        char ip[SC_PATH_MAX];
        scl_path_idx(ip, kp, i++);
        if (!scl_state_check(ld, c, ip)) return false;
    }
    return true;
}

/* One node of the line mirror (see sc_run.expect_lines): a number for a
 * scalar, an empty array, or a map holding only its own line as "@". */
static cJSON *scl_line_node(const sc_ld *ld, const cJSON *node)
{
    cJSON *m = cJSON_IsObject(node)  ? cJSON_CreateObject()
               : cJSON_IsArray(node) ? cJSON_CreateArray()
                                     : cJSON_CreateNumber(sy_pos(ld->doc, node).line);
    if (!m) abort();
    if (cJSON_IsObject(node)) cJSON_AddNumberToObject(m, "@", sy_pos(ld->doc, node).line);
    return m;
}

/* The line mirror of a checked expectation tree, built without recursion
 * (a worklist of source container and mirror container, like sc_merge). */
static cJSON *scl_lines(const sc_ld *ld, const cJSON *root)
{
    cJSON *out = scl_line_node(ld, root);
    size_t cap = 16, n = 0;
    struct scl_pair {
        const cJSON *src;
        cJSON *dst;
    } *work = rs_xmalloc(cap * sizeof *work);
    work[n++] = (struct scl_pair){root, out};
    while (n > 0) {
        struct scl_pair w = work[--n];
        const cJSON *c;
        cJSON_ArrayForEach(c, w.src)
        {
            cJSON *m = scl_line_node(ld, c);
            if (cJSON_IsObject(w.dst))
                cJSON_AddItemToObject(w.dst, c->string, m);
            else
                cJSON_AddItemToArray(w.dst, m);
            if (!cJSON_IsObject(c) && !cJSON_IsArray(c)) continue;
            if (n == cap) work = rs_xrealloc(work, (cap *= 2) * sizeof *work);
            work[n++] = (struct scl_pair){c, m};
        }
    }
    free(work);
    return out;
}

bool scl_expect(sc_ld *ld, const cJSON *expect, const char *path, sc_run *run)
{
    static const char *const strategies[] = {"lazy", "eager", NULL};
    char kp[SC_PATH_MAX];
    if (!scl_expect_body(ld, expect, path, true)) return false;
    const cJSON *bs = cJSON_GetObjectItemCaseSensitive(expect, "by-strategy");
    if (bs) {
        scl_path_key(kp, path, "by-strategy");
        if (!scl_want_map(ld, bs, kp) || !scl_keys(ld, bs, kp, strategies)) return false;
        const cJSON *s;
        cJSON_ArrayForEach(s, bs)
        {
            char sp[SC_PATH_MAX];
            scl_path_key(sp, kp, s->string);
            if (!scl_expect_body(ld, s, sp, false)) return false;
        }
    }
    run->expect = cJSON_Duplicate(expect, true);
    cJSON_DeleteItemFromObjectCaseSensitive(run->expect, "by-strategy");
    run->by_strategy = bs ? cJSON_Duplicate(bs, true) : NULL;
    run->expect_lines = scl_lines(ld, expect);
    cJSON_DeleteItemFromObjectCaseSensitive(run->expect_lines, "by-strategy");
    run->by_strategy_lines = bs ? scl_lines(ld, bs) : NULL;
    return true;
}

bool scl_invariants(sc_ld *ld, const cJSON *inv, const char *path, sc_run *run)
{
    static const char *const keys[] = {"reason", "off", NULL};
    char kp[SC_PATH_MAX];
    const cJSON *f;
    const char *reason;
    if (!scl_want_map(ld, inv, path) || !scl_keys(ld, inv, path, keys) ||
        !scl_required(ld, inv, "reason", path, &f))
        return false;
    scl_path_key(kp, path, "reason");
    if (!scl_str(ld, f, kp, &reason)) return false;
    run->invariants_reason = rs_xstrdup(reason);
    if (!(f = cJSON_GetObjectItemCaseSensitive(inv, "off"))) return true;
    scl_path_key(kp, path, "off");
    if (!scl_want_list(ld, f, kp)) return false;
    run->invariants_off = rs_xcalloc((size_t)cJSON_GetArraySize(f) + 1, sizeof(int));
    const cJSON *it;
    cJSON_ArrayForEach(it, f)
    {
        char ip[SC_PATH_MAX];
        long long n;
        scl_path_idx(ip, kp, run->n_invariants_off);
        if (!scl_int(ld, it, ip, 1, LD_INVARIANT_MAX, &n)) return false;
        run->invariants_off[run->n_invariants_off++] = (int)n;
    }
    return true;
}

/* ---- per strategy ------------------------------------------------------- */

/* Deep merge without recursion: a worklist of (destination, source) maps. */
static void sc_merge(cJSON *dst, const cJSON *src)
{
    size_t cap = 16, n = 0, done = 0;
    struct sc_pair {
        cJSON *dst;
        const cJSON *src;
    } *work = rs_xmalloc(cap * sizeof *work);
    work[n++] = (struct sc_pair){dst, src};
    while (n > 0 && done++ < SC_MERGE_PAIRS_MAX) {
        struct sc_pair w = work[--n];
        const cJSON *s;
        cJSON_ArrayForEach(s, w.src)
        {
            cJSON *d = cJSON_GetObjectItemCaseSensitive(w.dst, s->string);
            if (cJSON_IsObject(d) && cJSON_IsObject(s)) {
                if (n == cap) work = rs_xrealloc(work, (cap *= 2) * sizeof *work);
                work[n++] = (struct sc_pair){d, s};
            } else if (d) {
                cJSON_ReplaceItemInObjectCaseSensitive(w.dst, s->string, cJSON_Duplicate(s, true));
            } else {
                cJSON_AddItemToObject(w.dst, s->string, cJSON_Duplicate(s, true));
            }
        }
    }
    free(work);
}

static cJSON *sc_merged(const cJSON *base, const cJSON *by_strategy, const char *strategy)
{
    cJSON *out = base ? cJSON_Duplicate(base, true) : cJSON_CreateObject();
    if (!out) abort();
    const cJSON *over = strategy ? cJSON_GetObjectItemCaseSensitive(by_strategy, strategy) : NULL;
    if (cJSON_IsObject(over)) sc_merge(out, over);
    return out;
}

cJSON *sc_expect_for(const sc_run *run, const char *strategy)
{
    return run ? sc_merged(run->expect, run->by_strategy, strategy) : sc_merged(NULL, NULL, NULL);
}

cJSON *sc_expect_lines_for(const sc_run *run, const char *strategy)
{
    return run ? sc_merged(run->expect_lines, run->by_strategy_lines, strategy)
               : sc_merged(NULL, NULL, NULL);
}
