/*
 * scenario_field.c — the leaf of the scenario loader: the small typed checks
 * every section parser is built from, and the shared vocabulary (object
 * references, durations, the catalogue lookup).
 *
 * One idea: a field is read exactly once, through a check that either yields
 * a value of the promised type or an error naming file, line, column and the
 * field. Nothing downstream ever sees a half-checked value, so the runner and
 * the world can trust shapes without re-validating them. This file calls
 * nothing of the loader above it (only the YAML reader's positions), which is
 * what keeps the loader a tree rather than a circle.
 */
#include "core/live/live_kube_exec.h"
#include "sim/scenario/scenario_int.h"
#include "sim/store/store.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LD_KNOWN_TEXT_MAX 512

bool scl_fail(sc_ld *ld, sc_pos pos, const char *path, const char *fmt, ...)
{
    char problem[RS_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(problem, sizeof problem, fmt, ap);
    va_end(ap);
    rs_fail(ld->e, RS_DATAERR, "%s:%d:%d: %s: %s", ld->file, pos.line, pos.col,
            path[0] ? path : "(top level)", problem);
    return false;
}

bool scl_fail_at(sc_ld *ld, const cJSON *node, const char *path, const char *fmt, ...)
{
    char problem[RS_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(problem, sizeof problem, fmt, ap);
    va_end(ap);
    return scl_fail(ld, sy_pos(ld->doc, node), path, "%s", problem);
}

void scl_path_key(char out[SC_PATH_MAX], const char *path, const char *key)
{
    snprintf(out, SC_PATH_MAX, "%s%s%s", path, path[0] ? "." : "", key);
}

void scl_path_idx(char out[SC_PATH_MAX], const char *path, size_t i)
{
    snprintf(out, SC_PATH_MAX, "%s[%zu]", path, i);
}

const char *scl_type_name(const sc_ld *ld, const cJSON *n)
{
    if (cJSON_IsObject(n)) return "a mapping";
    if (cJSON_IsArray(n)) return "a list";
    if (cJSON_IsString(n)) return "a string";
    if (cJSON_IsBool(n)) return "a boolean";
    if (cJSON_IsNumber(n)) return sy_is_int(ld->doc, n) ? "an integer" : "a number";
    return "null";
}

bool scl_want_map(sc_ld *ld, const cJSON *n, const char *path)
{
    if (cJSON_IsObject(n)) return true;
    return scl_fail_at(ld, n, path, "expected a mapping, got %s", scl_type_name(ld, n));
}

bool scl_want_list(sc_ld *ld, const cJSON *n, const char *path)
{
    if (!cJSON_IsArray(n))
        return scl_fail_at(ld, n, path, "expected a list, got %s", scl_type_name(ld, n));
    if (cJSON_GetArraySize(n) > SC_LIST_MAX)
        return scl_fail_at(ld, n, path, "more than %d items", SC_LIST_MAX);
    return true;
}

static bool scl_key_known(const char *key, const char *const known[])
{
    for (size_t i = 0; known[i]; i++)
        if (!strcmp(key, known[i])) return true;
    return false;
}

static void scl_known_text(const char *const known[], char *out, size_t n)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; known[i] && used < n; i++) {
        int w = snprintf(out + used, n - used, "%s%s", i ? ", " : "", known[i]);
        if (w < 0) break;
        used += (size_t)w;
    }
}

bool scl_keys(sc_ld *ld, const cJSON *map, const char *path, const char *const known[])
{
    const cJSON *it;
    cJSON_ArrayForEach(it, map)
    {
        if (scl_key_known(it->string, known)) continue;
        char kp[SC_PATH_MAX], text[LD_KNOWN_TEXT_MAX];
        scl_path_key(kp, path, it->string);
        scl_known_text(known, text, sizeof text);
        return scl_fail(ld, sy_key_pos(ld->doc, it), kp, "unknown key (known: %s)", text);
    }
    return true;
}

bool scl_required(sc_ld *ld, const cJSON *map, const char *key, const char *path, const cJSON **out)
{
    *out = cJSON_GetObjectItemCaseSensitive(map, key);
    if (*out) return true;
    char kp[SC_PATH_MAX];
    scl_path_key(kp, path, key);
    return scl_fail_at(ld, map, kp, "required field missing");
}

bool scl_str(sc_ld *ld, const cJSON *n, const char *path, const char **out)
{
    if (!cJSON_IsString(n))
        return scl_fail_at(ld, n, path, "expected a string, got %s", scl_type_name(ld, n));
    if (!n->valuestring[0]) return scl_fail_at(ld, n, path, "must not be empty");
    *out = n->valuestring;
    return true;
}

bool scl_int(sc_ld *ld, const cJSON *n, const char *path, long long min, long long max,
             long long *out)
{
    const char *text = sy_num_text(ld->doc, n);
    if (!cJSON_IsNumber(n) || !sy_is_int(ld->doc, n) || !text)
        return scl_fail_at(ld, n, path, "expected an integer, got %s", scl_type_name(ld, n));
    errno = 0;
    char *end = NULL;
    long long v = strtoll(text, &end, 10);
    if (errno == ERANGE || *end || v < min || v > max)
        return scl_fail_at(ld, n, path, "must be an integer from %lld to %lld", min, max);
    *out = v;
    return true;
}

bool scl_bool(sc_ld *ld, const cJSON *n, const char *path, bool *out)
{
    if (!cJSON_IsBool(n))
        return scl_fail_at(ld, n, path, "expected true or false, got %s", scl_type_name(ld, n));
    *out = cJSON_IsTrue(n);
    return true;
}

void scl_str_list_free(char **list, size_t n)
{
    if (!list) return;
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

bool scl_str_list(sc_ld *ld, const cJSON *n, const char *path, char ***out, size_t *count)
{
    *out = NULL;
    *count = 0;
    if (!scl_want_list(ld, n, path)) return false;
    size_t len = (size_t)cJSON_GetArraySize(n);
    char **list = rs_xcalloc(len ? len : 1, sizeof *list);
    size_t i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, n)
    {
        char ip[SC_PATH_MAX];
        const char *s;
        scl_path_idx(ip, path, i);
        if (!scl_str(ld, it, ip, &s)) {
            scl_str_list_free(list, i);
            return false;
        }
        list[i++] = rs_xstrdup(s);
    }
    *out = list;
    *count = i;
    return true;
}

bool scl_cred_name(sc_ld *ld, const cJSON *n, const char *path, const char **out)
{
    if (!scl_str(ld, n, path, out)) return false;
    if (sc_catalogue_find(ld->sc, *out)) return true;
    /* The unknown value is not quoted: a token pasted where a name belongs
     * must not reach CI logs. The catalogue's names are labels, safe to list. */
    char names[LD_KNOWN_TEXT_MAX];
    size_t used = 0;
    names[0] = '\0';
    for (size_t i = 0; i < ld->sc->n_catalogue && used < sizeof names; i++) {
        int w = snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                         ld->sc->catalogue[i].name);
        if (w < 0) break;
        used += (size_t)w;
    }
    return scl_fail_at(ld, n, path, "unknown credential (the catalogue has: %s)", names);
}

/* ---- shared vocabulary ---------------------------------------------------- */

bool sc_parse_duration_ms(const char *text, int64_t *ms)
{
    return live_yaml_duration_ms(text, ms); /* one duration syntax for scenarios and --config */
}

/* 366 days: a year of virtual time, leap day included (README "Input bounds"). */
#define SC_DURATION_MAX_MS (366LL * 24 * 3600 * 1000)

bool scl_duration(sc_ld *ld, const cJSON *n, const char *path, bool negative_ok, int64_t *ms)
{
    if (!cJSON_IsString(n))
        return scl_fail_at(ld, n, path, "expected a duration such as 30s, got %s",
                           scl_type_name(ld, n));
    const char *text = n->valuestring;
    bool negative = text[0] == '-';
    if (!sc_parse_duration_ms(text + (negative || text[0] == '+'), ms))
        return scl_fail_at(ld, n, path, "malformed duration \"%s\" (want %s<integer>(ms|s|m|h))",
                           text, negative_ok ? "[-]" : "");
    if (negative && !negative_ok)
        return scl_fail_at(ld, n, path,
                           "duration \"%s\" is negative (only advance: and a run's skew: take a "
                           "negative duration)",
                           text);
    if (text[0] == '+' && !negative_ok)
        return scl_fail_at(ld, n, path, "malformed duration \"%s\" (want <integer>(ms|s|m|h))",
                           text);
    if (*ms > SC_DURATION_MAX_MS)
        return scl_fail_at(ld, n, path, "duration \"%s\" is longer than 366 days (8784h)", text);
    if (negative) *ms = -*ms;
    return true;
}

static bool sc_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

bool sc_parse_rfc3339_ms(const char *text, int64_t *ms)
{
    int64_t secs;
    if (!text || !live_rfc3339_unix(text, &secs)) return false;
    /* live_rfc3339_unix checks the shape and field ranges; a date must also
     * exist (no February 30th, no leap second): a clock start is exact. */
    int y = atoi(text), mo = atoi(text + 5), d = atoi(text + 8), sec = atoi(text + 17);
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (sec > 59 || d > days[mo - 1] + (mo == 2 && sc_leap(y))) return false;
    int64_t frac = 0;
    if (text[19] == '.')
        for (int i = 0, scale = 100; i < 3 && text[20 + i] >= '0' && text[20 + i] <= '9'; i++) {
            frac += (text[20 + i] - '0') * scale;
            scale /= 10;
        }
    *ms = secs * 1000 + frac;
    return true;
}

const sc_cred *sc_catalogue_find(const sc_scenario *sc, const char *name)
{
    if (!sc || !name) return NULL;
    for (size_t i = 0; i < sc->n_catalogue; i++)
        if (sc->catalogue[i].name && !strcmp(sc->catalogue[i].name, name)) return &sc->catalogue[i];
    return NULL;
}

bool scl_ref(sc_ld *ld, const cJSON *n, const char *path)
{
    const char *s;
    if (!scl_str(ld, n, path, &s)) return false;
    size_t parts = 1, part_len = 0;
    bool ok = isupper((unsigned char)s[0]);
    for (const char *p = s; *p && ok; p++) {
        if (*p == '/') {
            ok = part_len > 0;
            parts++;
            part_len = 0;
        } else {
            ok = !isspace((unsigned char)*p) && (parts > 1 || isalnum((unsigned char)*p));
            part_len++;
        }
    }
    if (!ok || part_len == 0 || (parts != 2 && parts != 3))
        return scl_fail_at(
            ld, n, path,
            "malformed object reference \"%s\" (want Kind/namespace/name or Kind/name)", s);
    size_t kind_len = strcspn(s, "/");
    char kind[64];
    if (kind_len >= sizeof kind || !(memcpy(kind, s, kind_len), kind[kind_len] = '\0', 1) ||
        !store_api_version(kind))
        return scl_fail_at(ld, n, path,
                           "unknown kind in \"%s\" (known: Secret, ConfigMap, Pod, Node, "
                           "Namespace, Event, Deployment, ReplicaSet, DaemonSet, Lease, "
                           "PushSecret, ExternalSecret, Kustomization, PodDisruptionBudget, "
                           "CustomResourceDefinition)",
                           s);
    bool cluster = store_kind_cluster_scoped(kind);
    if (cluster && parts != 2)
        return scl_fail_at(ld, n, path, "%s is cluster-scoped: want %s/name, got \"%s\"", kind,
                           kind, s);
    if (!cluster && parts != 3)
        return scl_fail_at(ld, n, path, "%s is namespaced: want %s/namespace/name, got \"%s\"",
                           kind, kind, s);
    sc_scenario *sc = ld->sc;
    if (sc->n_refs % 16 == 0)
        sc->refs = rs_xrealloc(sc->refs, (sc->n_refs + 16) * sizeof *sc->refs);
    sc->refs[sc->n_refs++] = (sc_ref){.ref = rs_xstrdup(s),
                                      .path = rs_xstrdup(path),
                                      .pos = sy_pos(ld->doc, n),
                                      .at = ld->at,
                                      .run = ld->run,
                                      .item = ld->item};
    return true;
}

bool scl_write_kind_known(const char *kind)
{
    static const char *const other[] = {"openbao", "talos.patch", "talos.reboot",
                                        "talos.image-remove", "talos.image-pull"};
    if (store_api_version(kind)) return true;
    for (size_t i = 0; i < RS_ARRAY_LEN(other); i++)
        if (!strcmp(other[i], kind)) return true;
    return false;
}

/* True when name is prefix<i> with i in [1, max], written canonically. */
static bool sc_numbered(const char *name, const char *prefix, int max)
{
    size_t n = strlen(prefix);
    if (strncmp(name, prefix, n) != 0 || name[n] < '1' || name[n] > '9') return false;
    char *end = NULL;
    errno = 0;
    long i = strtol(name + n, &end, 10);
    return errno == 0 && end && *end == '\0' && i >= 1 && i <= max;
}

/* Whether a node.add event anywhere in the file (runs[*].before[*],
 * runs[*].during[*].do) creates name. Shapes are checked elsewhere. */
static bool sc_node_added(const cJSON *root, const char *name)
{
    const cJSON *run;
    cJSON_ArrayForEach(run, cJSON_GetObjectItemCaseSensitive(root, "runs"))
    {
        const cJSON *ev, *d;
        cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(run, "before"))
        {
            const cJSON *nm = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(ev, "node.add"), "name");
            if (cJSON_IsString(nm) && !strcmp(nm->valuestring, name)) return true;
        }
        cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(run, "during"))
        {
            const cJSON *nm = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(d, "do"),
                                                 "node.add"),
                "name");
            if (cJSON_IsString(nm) && !strcmp(nm->valuestring, name)) return true;
        }
    }
    return false;
}

bool scl_node(sc_ld *ld, const cJSON *n, const char *path)
{
    const char *s;
    if (!scl_str(ld, n, path, &s)) return false;
    const sc_cluster *cl = &ld->sc->cluster;
    if (sc_numbered(s, "prod-control-plane-", cl->control_planes) ||
        sc_numbered(s, "prod-worker-", cl->workers) || sc_node_added(ld->root, s))
        return true;
    return scl_fail_at(ld, n, path,
                       "unknown node \"%s\" (the cluster has prod-control-plane-1..%d, "
                       "prod-worker-1..%d and the nodes node.add events create)",
                       s, cl->control_planes, cl->workers);
}
