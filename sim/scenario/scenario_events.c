/*
 * scenario_events.c — world events, faults and `during:` entries of a run
 * (DESIGN.md §5).
 *
 * Each event has one table row: its name and the check for its value. A
 * misspelt event, a credential missing from the catalogue or a malformed
 * reference fails the load here, because a scenario that only breaks when a
 * fault finally fires mid-run gives a misleading verdict about the core.
 * Values are kept as cJSON; only durations are rewritten (to integer ms), so
 * the world never parses "30s" itself.
 */
#include "core/transport/transport.h"
#include "sim/scenario/scenario_int.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LD_NTH_MAX 1000000 /* a call count no run reaches; catches typos like 1e9 */

/* Checks the value is a mapping with only `known` keys, the first n_required
 * of which must be present. */
static bool scl_shape(sc_ld *ld, const cJSON *v, const char *path, const char *const known[],
                      size_t n_required)
{
    if (!scl_want_map(ld, v, path) || !scl_keys(ld, v, path, known)) return false;
    for (size_t i = 0; i < n_required; i++) {
        const cJSON *f;
        if (!scl_required(ld, v, known[i], path, &f)) return false;
    }
    return true;
}

/* The member `key` of v, checked as a non-empty string. */
static bool scl_field_str(sc_ld *ld, const cJSON *v, const char *key, const char *path)
{
    char kp[SC_PATH_MAX];
    const char *s;
    scl_path_key(kp, path, key);
    return scl_str(ld, cJSON_GetObjectItemCaseSensitive(v, key), kp, &s);
}

static bool scl_field_cred(sc_ld *ld, const cJSON *v, const char *key, const char *path)
{
    char kp[SC_PATH_MAX];
    const char *s;
    scl_path_key(kp, path, key);
    return scl_cred_name(ld, cJSON_GetObjectItemCaseSensitive(v, key), kp, &s);
}

/* ---- one check per event ---------------------------------------------- */

/* A negative advance is a clock step: the wall clock the core and the API
 * server read jumps back; no time passes (world_events.c). */
static bool ev_advance(sc_ld *ld, const cJSON *v, const char *path, cJSON **args)
{
    int64_t ms;
    if (!scl_duration(ld, v, path, true, &ms)) return false;
    *args = cJSON_CreateObject();
    cJSON_AddNumberToObject(*args, "ms", (double)ms);
    return true;
}

static bool scl_json_patch(sc_ld *ld, const cJSON *list, const char *path)
{
    static const char *const keys[] = {"op", "path", "value", "from", NULL};
    static const char *const ops[] = {"add", "remove", "replace", "move", "copy", "test", NULL};
    if (!scl_want_list(ld, list, path)) return false;
    size_t i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, list)
    {
        char ip[SC_PATH_MAX], kp[SC_PATH_MAX];
        const cJSON *op, *ptr;
        scl_path_idx(ip, path, i++);
        if (!scl_shape(ld, it, ip, keys, 2) || !scl_field_str(ld, it, "op", ip)) return false;
        op = cJSON_GetObjectItemCaseSensitive(it, "op");
        size_t k = 0;
        while (ops[k] && strcmp(ops[k], op->valuestring))
            k++;
        scl_path_key(kp, ip, "op");
        if (!ops[k]) return scl_fail_at(ld, op, kp, "unknown JSON Patch operation");
        ptr = cJSON_GetObjectItemCaseSensitive(it, "path");
        scl_path_key(kp, ip, "path");
        if (!cJSON_IsString(ptr) || (ptr->valuestring[0] && ptr->valuestring[0] != '/'))
            return scl_fail_at(ld, ptr, kp, "expected a JSON pointer (\"\" or starting with /)");
    }
    return true;
}

static bool ev_kube_patch(sc_ld *ld, const cJSON *v, const char *path, cJSON **args)
{
    static const char *const keys[] = {"ref", "json-patch", "merge-patch", NULL};
    char kp[SC_PATH_MAX];
    if (!scl_shape(ld, v, path, keys, 1)) return false;
    scl_path_key(kp, path, "ref");
    if (!scl_ref(ld, cJSON_GetObjectItemCaseSensitive(v, "ref"), kp)) return false;
    const cJSON *jp = cJSON_GetObjectItemCaseSensitive(v, "json-patch");
    const cJSON *mp = cJSON_GetObjectItemCaseSensitive(v, "merge-patch");
    if (!jp == !mp)
        return scl_fail_at(ld, v, path, "give exactly one of json-patch and merge-patch");
    if (jp) {
        scl_path_key(kp, path, "json-patch");
        if (!scl_json_patch(ld, jp, kp)) return false;
    } else {
        scl_path_key(kp, path, "merge-patch");
        if (!scl_want_map(ld, mp, kp)) return false;
    }
    *args = cJSON_Duplicate(v, true);
    return true;
}

static bool ev_kube_delete(sc_ld *ld, const cJSON *v, const char *path, cJSON **args)
{
    static const char *const keys[] = {"ref", NULL};
    char kp[SC_PATH_MAX];
    scl_path_key(kp, path, "ref");
    if (!scl_shape(ld, v, path, keys, 1) ||
        !scl_ref(ld, cJSON_GetObjectItemCaseSensitive(v, "ref"), kp))
        return false;
    *args = cJSON_Duplicate(v, true);
    return true;
}

static bool ev_kube_apply(sc_ld *ld, const cJSON *v, const char *path, cJSON **args)
{
    static const char *const keys[] = {"object", NULL};
    char op[SC_PATH_MAX], mp[SC_PATH_MAX];
    const cJSON *obj, *meta;
    if (!scl_shape(ld, v, path, keys, 1)) return false;
    scl_path_key(op, path, "object");
    obj = cJSON_GetObjectItemCaseSensitive(v, "object");
    if (!scl_want_map(ld, obj, op) || !scl_required(ld, obj, "kind", op, &meta) ||
        !scl_field_str(ld, obj, "kind", op) || !scl_required(ld, obj, "metadata", op, &meta))
        return false;
    scl_path_key(mp, op, "metadata");
    if (!scl_want_map(ld, meta, mp) || !scl_required(ld, meta, "name", mp, &obj) ||
        !scl_field_str(ld, meta, "name", mp))
        return false;
    *args = cJSON_Duplicate(v, true);
    return true;
}

static bool ev_credential_only(sc_ld *ld, const cJSON *v, const char *path, cJSON **args)
{
    static const char *const keys[] = {"credential", NULL};
    if (!scl_shape(ld, v, path, keys, 1) || !scl_field_cred(ld, v, "credential", path))
        return false;
    *args = cJSON_Duplicate(v, true);
    return true;
}

static bool ev_openbao_write(sc_ld *ld, const cJSON *v, const char *path, cJSON **args)
{
    static const char *const keys[] = {"path", "credential", NULL};
    if (!scl_shape(ld, v, path, keys, 2) || !scl_field_str(ld, v, "path", path) ||
        !scl_field_cred(ld, v, "credential", path))
        return false;
    *args = cJSON_Duplicate(v, true);
    return true;
}

static bool ev_talos_partial(sc_ld *ld, const cJSON *v, const char *path, cJSON **args)
{
    static const char *const keys[] = {"nodes", "drop-node-annotations", "registry-auth", NULL};
    char kp[SC_PATH_MAX];
    char **nodes;
    size_t n_nodes;
    bool drop;
    /* drop-node-annotations is optional (DESIGN §5 lists it as a plain
     * bool): absent means false, the annotations stay — the world's
     * applier reads it so. */
    if (!scl_shape(ld, v, path, keys, 1)) return false;
    scl_path_key(kp, path, "nodes");
    const cJSON *nl = cJSON_GetObjectItemCaseSensitive(v, "nodes");
    if (!scl_str_list(ld, nl, kp, &nodes, &n_nodes)) return false;
    scl_str_list_free(nodes, n_nodes);
    if (n_nodes == 0) return scl_fail_at(ld, nl, kp, "must name at least one node");
    for (size_t i = 0; i < n_nodes; i++) {
        char ip[SC_PATH_MAX];
        scl_path_idx(ip, kp, i);
        if (!scl_node(ld, cJSON_GetArrayItem(nl, (int)i), ip)) return false;
    }
    scl_path_key(kp, path, "drop-node-annotations");
    const cJSON *dn = cJSON_GetObjectItemCaseSensitive(v, "drop-node-annotations");
    if (dn && !scl_bool(ld, dn, kp, &drop)) return false;
    if (cJSON_GetObjectItemCaseSensitive(v, "registry-auth") &&
        !scl_field_cred(ld, v, "registry-auth", path))
        return false;
    *args = cJSON_Duplicate(v, true);
    return true;
}

static bool ev_node_only(sc_ld *ld, const cJSON *v, const char *path, cJSON **args)
{
    static const char *const keys[] = {"node", NULL};
    char kp[SC_PATH_MAX];
    scl_path_key(kp, path, "node");
    if (!scl_shape(ld, v, path, keys, 1) || !scl_field_str(ld, v, "node", path) ||
        !scl_node(ld, cJSON_GetObjectItemCaseSensitive(v, "node"), kp))
        return false;
    *args = cJSON_Duplicate(v, true);
    return true;
}

static bool ev_node_add(sc_ld *ld, const cJSON *v, const char *path, cJSON **args)
{
    static const char *const keys[] = {"role", "name", NULL};
    char kp[SC_PATH_MAX];
    if (!scl_shape(ld, v, path, keys, 2) || !scl_field_str(ld, v, "role", path) ||
        !scl_field_str(ld, v, "name", path))
        return false;
    const cJSON *role = cJSON_GetObjectItemCaseSensitive(v, "role");
    scl_path_key(kp, path, "role");
    if (strcmp(role->valuestring, "worker") && strcmp(role->valuestring, "control-plane"))
        return scl_fail_at(ld, role, kp, "must be worker or control-plane");
    *args = cJSON_Duplicate(v, true);
    return true;
}

static bool ev_next_reboot(sc_ld *ld, const cJSON *v, const char *path, cJSON **args)
{
    static const char *const keys[] = {"node", "mode", NULL};
    char kp[SC_PATH_MAX];
    if (!scl_shape(ld, v, path, keys, 2) || !scl_field_str(ld, v, "node", path) ||
        !scl_field_str(ld, v, "mode", path))
        return false;
    const cJSON *mode = cJSON_GetObjectItemCaseSensitive(v, "mode");
    scl_path_key(kp, path, "mode");
    if (strcmp(mode->valuestring, "fast") && strcmp(mode->valuestring, "stuck") &&
        strcmp(mode->valuestring, "ignored"))
        return scl_fail_at(ld, mode, kp, "must be fast, stuck or ignored");
    *args = cJSON_Duplicate(v, true);
    return true;
}

static bool ev_pdb_block(sc_ld *ld, const cJSON *v, const char *path, cJSON **args)
{
    static const char *const keys[] = {"node", "for", NULL};
    char kp[SC_PATH_MAX];
    int64_t ms;
    scl_path_key(kp, path, "node");
    if (!scl_shape(ld, v, path, keys, 2) || !scl_field_str(ld, v, "node", path) ||
        !scl_node(ld, cJSON_GetObjectItemCaseSensitive(v, "node"), kp))
        return false;
    scl_path_key(kp, path, "for");
    if (!scl_duration(ld, cJSON_GetObjectItemCaseSensitive(v, "for"), kp, false, &ms)) return false;
    *args = cJSON_CreateObject();
    cJSON_AddStringToObject(*args, "node",
                            cJSON_GetObjectItemCaseSensitive(v, "node")->valuestring);
    cJSON_AddNumberToObject(*args, "for_ms", (double)ms);
    return true;
}

/* "gh<digits>.<digits>": the run reference a CI run puts in its holder
 * identity (run id and attempt; H22). */
static bool scl_ci_run_ref(const char *s)
{
    if (strncmp(s, "gh", 2) != 0) return false;
    const char *p = s + 2;
    size_t id = strspn(p, "0123456789");
    if (id == 0 || p[id] != '.') return false;
    size_t at = strspn(p + id + 1, "0123456789");
    return at > 0 && p[id + 1 + at] == '\0';
}

static bool ev_runs_terminal(sc_ld *ld, const cJSON *v, const char *path, cJSON **args)
{
    char **names;
    size_t n;
    if (!scl_str_list(ld, v, path, &names, &n)) return false;
    bool ok = n > 0 || scl_fail_at(ld, v, path, "must name at least one run");
    for (size_t i = 0; ok && i < n; i++) {
        if (scl_ci_run_ref(names[i])) continue; /* a CI run reference, gh<id>.<attempt> */
        size_t r = 0;
        while (r < ld->sc->n_runs && strcmp(ld->sc->runs[r].name, names[i]))
            r++;
        if (r < ld->sc->n_runs) continue;
        char ip[SC_PATH_MAX];
        scl_path_idx(ip, path, i);
        ok = scl_fail_at(ld, cJSON_GetArrayItem(v, (int)i), ip,
                         "names no run of this scenario (\"%s\") nor a CI run reference "
                         "(gh<run id>.<attempt>)",
                         names[i]);
    }
    scl_str_list_free(names, n);
    if (ok) *args = cJSON_Duplicate(v, true);
    return ok;
}

typedef bool (*scl_event_fn)(sc_ld *ld, const cJSON *v, const char *path, cJSON **args);

static const struct {
    const char *name;
    scl_event_fn check;
} scl_events[] = {
    {"advance", ev_advance},
    {"kube.patch", ev_kube_patch},
    {"kube.delete", ev_kube_delete},
    {"eso.same-second-refresh", ev_kube_delete}, /* {ref}: same shape */
    {"kube.apply", ev_kube_apply},
    {"openbao.raft-restore", ev_credential_only},
    {"openbao.write", ev_openbao_write},
    {"talos.partial-apply", ev_talos_partial},
    {"node.replace", ev_node_only},
    {"node.add", ev_node_add},
    {"etcd.unhealthy", ev_node_only},
    {"etcd.healthy", ev_node_only},
    {"etcd.garbled", ev_node_only},
    {"etcd.learner", ev_node_only},
    {"pdb.block", ev_pdb_block},
    {"talos.next-reboot", ev_next_reboot},
    {"registry.revoke", ev_credential_only},
    {"runs.terminal", ev_runs_terminal},
    {"runs.silent", ev_runs_terminal},
};

static void scl_event_names(char *out, size_t n)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < RS_ARRAY_LEN(scl_events) && used < n; i++) {
        int w = snprintf(out + used, n - used, "%s%s", i ? ", " : "", scl_events[i].name);
        if (w < 0) break;
        used += (size_t)w;
    }
}

bool scl_event(sc_ld *ld, const cJSON *item, const char *path, sc_event *out)
{
    if (!scl_want_map(ld, item, path)) return false;
    int keys = cJSON_GetArraySize(item);
    if (keys != 1)
        return scl_fail_at(ld, item, path,
                           "an event is a mapping with exactly one key, the event name (got %d)",
                           keys);
    const cJSON *v = item->child;
    char ep[SC_PATH_MAX];
    scl_path_key(ep, path, v->string);
    size_t i = 0;
    while (i < RS_ARRAY_LEN(scl_events) && strcmp(scl_events[i].name, v->string))
        i++;
    if (i == RS_ARRAY_LEN(scl_events) && !strcmp(v->string, "check"))
        return scl_fail(ld, sy_key_pos(ld->doc, v), ep,
                        "a check is not a world event: it goes in a run's before: or a during: "
                        "entry's do:");
    if (i == RS_ARRAY_LEN(scl_events)) {
        char names[512];
        scl_event_names(names, sizeof names);
        return scl_fail(ld, sy_key_pos(ld->doc, v), ep, "unknown event (known: %s)", names);
    }
    cJSON *args = NULL;
    if (!scl_events[i].check(ld, v, ep, &args)) return false;
    out->kind = rs_xstrdup(v->string);
    out->args = args;
    out->pos = sy_key_pos(ld->doc, v);
    return true;
}

/* ---- operation globs, faults, during ------------------------------------ */

static bool scl_verb_matches_any(const char *verb_glob)
{
    for (int op = 0; op < RS_OP_COUNT; op++)
        if (fnmatch(verb_glob, rs_op_name((rs_op)op), 0) == 0) return true;
    return false;
}

/* "<verb glob> [<target glob>]", stored normalised as "<verb> <target>" with
 * the target defaulting to "*", so matchers see one shape. */
static bool scl_op_glob(sc_ld *ld, const cJSON *n, const char *path, char **out)
{
    const char *s;
    if (!scl_str(ld, n, path, &s)) return false;
    const char *sp = strchr(s, ' ');
    size_t vlen = sp ? (size_t)(sp - s) : strlen(s);
    const char *target = sp ? sp + 1 : "*";
    char *verb = rs_xmalloc(vlen + 1);
    memcpy(verb, s, vlen);
    verb[vlen] = '\0';
    bool ok = true;
    if (!*target || strpbrk(target, " \t\r\n"))
        ok = scl_fail_at(ld, n, path,
                         "malformed operation \"%s\" (want \"<verb> <target>\", one space)", s);
    else if (!vlen || !scl_verb_matches_any(verb))
        ok = scl_fail_at(ld, n, path,
                         "unknown operation \"%s\" (verbs: kube.get|list|create|patch|delete|"
                         "evict, openbao.read|write, talos.patch|reboot|image-remove|"
                         "image-pull|etcd-status|etcd-alarms|read-auth, registry.token|manifest)",
                         verb);
    if (ok) *out = rs_xasprintf("%s %s", verb, target);
    free(verb);
    return ok;
}

/* nth (default 1) and and-after (default false), shared by faults and during. */
static bool scl_nth(sc_ld *ld, const cJSON *v, const char *path, int *nth, bool *and_after)
{
    char kp[SC_PATH_MAX];
    long long n = 1;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(v, "nth");
    scl_path_key(kp, path, "nth");
    if (f && !scl_int(ld, f, kp, 1, LD_NTH_MAX, &n)) return false;
    *nth = (int)n;
    *and_after = false;
    f = cJSON_GetObjectItemCaseSensitive(v, "and-after");
    scl_path_key(kp, path, "and-after");
    return !f || scl_bool(ld, f, kp, and_after);
}

static bool scl_fault_effect(sc_ld *ld, const cJSON *f, const char *path, sc_fault *out)
{
    static const char *const names[] = {"fail", "timeout", "lost-response", "crash"};
    char kp[SC_PATH_MAX];
    scl_path_key(kp, path, f->string);
    if (!strcmp(f->string, "fail")) {
        long long status;
        if (!scl_int(ld, f, kp, 400, 599, &status)) return false;
        out->effect = SC_FAULT_FAIL;
        out->fail_status = (int)status;
        return true;
    }
    bool on;
    if (!scl_bool(ld, f, kp, &on)) return false;
    if (!on) return scl_fail_at(ld, f, kp, "must be true (omit the key otherwise)");
    for (size_t i = 1; i < RS_ARRAY_LEN(names); i++)
        if (!strcmp(f->string, names[i])) out->effect = (sc_fault_effect)i;
    return true;
}

bool scl_fault(sc_ld *ld, const cJSON *item, const char *path, sc_fault *out)
{
    static const char *const keys[] = {"on",      "nth",           "and-after", "fail",
                                       "timeout", "lost-response", "crash",     NULL};
    char kp[SC_PATH_MAX];
    if (!scl_shape(ld, item, path, keys, 1)) return false;
    out->pos = sy_pos(ld->doc, item);
    scl_path_key(kp, path, "on");
    if (!scl_op_glob(ld, cJSON_GetObjectItemCaseSensitive(item, "on"), kp, &out->on) ||
        !scl_nth(ld, item, path, &out->nth, &out->and_after))
        return false;
    const cJSON *first = NULL, *f;
    cJSON_ArrayForEach(f, item)
    {
        bool effect = !strcmp(f->string, "fail") || !strcmp(f->string, "timeout") ||
                      !strcmp(f->string, "lost-response") || !strcmp(f->string, "crash");
        if (!effect) continue;
        if (first)
            return scl_fail(ld, sy_key_pos(ld->doc, f), path,
                            "more than one effect (%s and %s); give exactly one of fail, "
                            "timeout, lost-response, crash",
                            first->string, f->string);
        first = f;
        if (!scl_fault_effect(ld, f, path, out)) return false;
    }
    if (!first)
        return scl_fail_at(ld, item, path,
                           "no effect; give exactly one of fail, timeout, lost-response, crash");
    return true;
}

bool scl_during(sc_ld *ld, const cJSON *item, const char *path, sc_during *out)
{
    static const char *const keys[] = {"before-call", "do", "nth", "and-after", NULL};
    char kp[SC_PATH_MAX];
    if (!scl_shape(ld, item, path, keys, 2)) return false;
    out->pos = sy_pos(ld->doc, item);
    scl_path_key(kp, path, "before-call");
    return scl_op_glob(ld, cJSON_GetObjectItemCaseSensitive(item, "before-call"), kp,
                       &out->before_call) &&
           scl_nth(ld, item, path, &out->nth, &out->and_after);
}
