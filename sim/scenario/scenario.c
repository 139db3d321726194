/*
 * scenario.c — the top of the scenario loader: a file becomes an sc_scenario
 * (DESIGN.md §5, format v1).
 *
 * The one idea: everything that can be checked without a world is checked
 * once, here, with file:line:column, and the loader reads top to bottom.
 * Calls only go down this order, never back up:
 *
 *   scenario.c          sc_load: the file, the top level, the runs
 *     scenario_cluster.c  the catalogue and the cluster (the world at start)
 *     scenario_events.c   a run's world events, faults and `during:` entries
 *     scenario_expect.c   a run's `expect:` and `invariants:`
 *     scenario_free.c     releasing a scenario, whole or half-read
 *       scenario_field.c    the leaf: typed field checks, errors, the
 *                           catalogue lookup and durations every part shares
 *         scenario_yaml.c     YAML to cJSON with source positions
 *
 * The catalogue is read first (it is what credential names resolve against)
 * and all run names before any run body (runs.terminal may name a later
 * run). Arrays are allocated zeroed at their final length before they are
 * filled, so sc_free can release a scenario that failed half-way through.
 */
#include "sim/scenario/scenario_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- runs ---------------------------------------------------------------- */

#define SC_RUN_NAME_MAX 63

/* A run name names files under the execution's private directory and lines
 * of every report, so it is a DNS-label-like word: [a-z0-9]([-a-z0-9]*[a-z0-9])?
 * of at most 63 characters. No slash, dot, space or control character can
 * pass (no path traversal, no injected report line). */
static bool sc_run_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > SC_RUN_NAME_MAX || s[0] == '-' || s[n - 1] == '-') return false;
    for (size_t i = 0; i < n; i++)
        if (!(s[i] >= 'a' && s[i] <= 'z') && !(s[i] >= '0' && s[i] <= '9') && s[i] != '-')
            return false;
    return true;
}

/* Flags the harness sets itself (the world, the desired credential) or that
 * only a live run could act on: given in `args` they would be ignored or
 * point the run elsewhere, so the load refuses them. */
static const char *const sc_args_refused[] = {"--transport",
                                              "--desired",
                                              "--kubeconfig",
                                              "--context",
                                              "--talosconfig",
                                              "--secret-file",
                                              "--decrypt-command",
                                              "--openbao-token-file",
                                              "--talosctl",
                                              "--liveness-command",
                                              "--test-facade-clock",
                                              "--record",
                                              "--help",
                                              "-h",
                                              "--version",
                                              NULL};

const char *sc_arg_refused(const char *arg)
{
    for (size_t i = 0; sc_args_refused[i]; i++) {
        size_t n = strlen(sc_args_refused[i]);
        if (!strncmp(arg, sc_args_refused[i], n) && (arg[n] == '\0' || arg[n] == '='))
            return sc_args_refused[i];
    }
    return NULL;
}

/* "{tmp}" must start a path inside the private directory: followed by '/'
 * or the end, and no ".." component anywhere in the argument. */
static bool sc_tmp_confined(const char *arg)
{
    bool has_tmp = false;
    for (const char *p = strstr(arg, "{tmp}"); p; p = strstr(p + 5, "{tmp}")) {
        has_tmp = true;
        if (p[5] != '/' && p[5] != '\0') return false;
    }
    if (!has_tmp) return true;
    for (const char *c = arg; c; c = strchr(c, '/')) {
        if (*c == '/') c++;
        if (c[0] == '.' && c[1] == '.' && (c[2] == '/' || c[2] == '\0')) return false;
    }
    return true;
}

bool sc_args_check(char *const *args, size_t n, size_t *at, char *why, size_t len)
{
    for (size_t i = 0; i < n; i++) {
        const char *bad = sc_arg_refused(args[i]);
        *at = i;
        if (bad) {
            snprintf(why, len,
                     "%s may not be given in a scenario's args (the harness sets the world and "
                     "the desired credential; live-only flags have nothing to act on)",
                     bad);
            return false;
        }
        if (!sc_tmp_confined(args[i])) {
            snprintf(why, len,
                     "a {tmp} path must stay inside the private directory (\"{tmp}/...\" "
                     "without a \"..\" component)");
            return false;
        }
        /* A flag that writes or reads a file takes a {tmp} path: the harness
         * never writes outside its own directories (DESIGN §5.1), nor reads
         * a file a scenario or cassette names. */
        static const char *const file_flags[] = {"--record-runtime-proof", "--reuse-runtime-proof"};
        for (size_t k = 0; k < RS_ARRAY_LEN(file_flags); k++) {
            size_t fl = strlen(file_flags[k]);
            const char *value = NULL;
            if (strcmp(args[i], file_flags[k]) == 0 && i + 1 < n) {
                value = args[i + 1];
                *at = i + 1;
            } else if (strncmp(args[i], file_flags[k], fl) == 0 && args[i][fl] == '=') {
                value = args[i] + fl + 1;
            }
            /* An unconfined {tmp} path is named at its own item. */
            if (value && sc_tmp_confined(value) && strncmp(value, "{tmp}/", 6) != 0) {
                snprintf(why, len,
                         "%s %s a file: give it a path under {tmp}/ (the execution's private "
                         "directory)",
                         file_flags[k], k == 0 ? "writes" : "reads");
                return false;
            }
        }
    }
    return true;
}

static bool scl_args(sc_ld *ld, const cJSON *f, const char *path, sc_run *r)
{
    if (!scl_str_list(ld, f, path, &r->args, &r->n_args)) return false;
    size_t at = 0;
    char why[256];
    if (sc_args_check(r->args, r->n_args, &at, why, sizeof why)) return true;
    char ip[SC_PATH_MAX];
    scl_path_idx(ip, path, at);
    return scl_fail_at(ld, cJSON_GetArrayItem(f, (int)at), ip, "%s", why);
}

/* What a run does at a point of its timeline (a `before:` item, a `during:`
 * entry's `do:`): a world event, or `check: [..]` — state checks evaluated
 * at that moment, in the forms of `expect.state`. */
static bool scl_action(sc_ld *ld, const cJSON *item, const char *path, sc_event *out)
{
    const cJSON *v = cJSON_IsObject(item) ? item->child : NULL;
    if (!v || v->next || strcmp(v->string, "check") != 0) return scl_event(ld, item, path, out);
    char kp[SC_PATH_MAX];
    scl_path_key(kp, path, "check");
    if (!scl_check_action(ld, v, kp, out)) return false;
    out->pos = sy_key_pos(ld->doc, v);
    return true;
}

static bool scl_event_list(sc_ld *ld, const cJSON *list, const char *path, sc_event **out,
                           size_t *n)
{
    if (!scl_want_list(ld, list, path)) return false;
    *n = (size_t)cJSON_GetArraySize(list);
    *out = rs_xcalloc(*n ? *n : 1, sizeof **out);
    size_t i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, list)
    {
        char ip[SC_PATH_MAX];
        scl_path_idx(ip, path, i);
        ld->at = SC_REF_BEFORE;
        ld->item = i;
        if (!scl_action(ld, it, ip, &(*out)[i++])) return false;
    }
    return true;
}

static bool scl_fault_list(sc_ld *ld, const cJSON *list, const char *path, sc_run *r)
{
    if (!scl_want_list(ld, list, path)) return false;
    r->n_faults = (size_t)cJSON_GetArraySize(list);
    r->faults = rs_xcalloc(r->n_faults ? r->n_faults : 1, sizeof *r->faults);
    size_t i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, list)
    {
        char ip[SC_PATH_MAX];
        scl_path_idx(ip, path, i);
        if (!scl_fault(ld, it, ip, &r->faults[i++])) return false;
    }
    return true;
}

static bool scl_during_list(sc_ld *ld, const cJSON *list, const char *path, sc_run *r)
{
    if (!scl_want_list(ld, list, path)) return false;
    r->n_during = (size_t)cJSON_GetArraySize(list);
    r->during = rs_xcalloc(r->n_during ? r->n_during : 1, sizeof *r->during);
    size_t i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, list)
    {
        char ip[SC_PATH_MAX], dp[SC_PATH_MAX];
        scl_path_idx(ip, path, i);
        scl_path_key(dp, ip, "do");
        ld->at = SC_REF_DURING;
        ld->item = i;
        if (!scl_during(ld, it, ip, &r->during[i]) ||
            !scl_action(ld, cJSON_GetObjectItemCaseSensitive(it, "do"), dp, &r->during[i].action))
            return false;
        i++;
    }
    return true;
}

static bool scl_run_body(sc_ld *ld, const cJSON *v, const char *path, sc_run *r)
{
    static const char *const keys[] = {"name",   "args",       "before", "faults", "during",
                                       "expect", "invariants", "skew",   NULL};
    char kp[SC_PATH_MAX];
    const cJSON *f;
    if (!scl_keys(ld, v, path, keys)) return false;
    scl_path_key(kp, path, "args");
    if ((f = cJSON_GetObjectItemCaseSensitive(v, "args")) && !scl_args(ld, f, kp, r)) return false;
    scl_path_key(kp, path, "before");
    if ((f = cJSON_GetObjectItemCaseSensitive(v, "before")) &&
        !scl_event_list(ld, f, kp, &r->before, &r->n_before))
        return false;
    scl_path_key(kp, path, "faults");
    if ((f = cJSON_GetObjectItemCaseSensitive(v, "faults")) && !scl_fault_list(ld, f, kp, r))
        return false;
    scl_path_key(kp, path, "during");
    if ((f = cJSON_GetObjectItemCaseSensitive(v, "during")) && !scl_during_list(ld, f, kp, r))
        return false;
    scl_path_key(kp, path, "expect");
    ld->at = SC_REF_EXPECT;
    ld->item = 0;
    if ((f = cJSON_GetObjectItemCaseSensitive(v, "expect")) && !scl_expect(ld, f, kp, r))
        return false;
    if (f) r->expect_pos = sy_key_pos(ld->doc, f); /* where a failed expectation is annotated */
    scl_path_key(kp, path, "skew");
    if ((f = cJSON_GetObjectItemCaseSensitive(v, "skew")) &&
        !scl_duration(ld, f, kp, true, &r->skew_ms))
        return false;
    scl_path_key(kp, path, "invariants");
    return !(f = cJSON_GetObjectItemCaseSensitive(v, "invariants")) || scl_invariants(ld, f, kp, r);
}

/* First pass: every run's name, unique, so runs.terminal can name any run. */
static bool scl_run_names(sc_ld *ld, const cJSON *runs)
{
    sc_scenario *sc = ld->sc;
    size_t i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, runs)
    {
        char path[SC_PATH_MAX], np[SC_PATH_MAX];
        const cJSON *f;
        const char *name;
        scl_path_idx(path, "runs", i);
        scl_path_key(np, path, "name");
        if (!scl_want_map(ld, v, path) || !scl_required(ld, v, "name", path, &f) ||
            !scl_str(ld, f, np, &name))
            return false;
        if (!sc_run_name_ok(name))
            return scl_fail_at(ld, f, np,
                               "a run name must be lowercase letters, digits and '-', starting "
                               "and ending with a letter or digit, at most %d characters",
                               SC_RUN_NAME_MAX);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(sc->runs[j].name, name))
                return scl_fail_at(ld, f, np, "duplicate run name \"%s\" (first at runs[%zu])",
                                   name, j);
        sc->runs[i].name = rs_xstrdup(name);
        sc->runs[i].pos = sy_pos(ld->doc, v);
        i++;
    }
    return true;
}

static bool scl_runs(sc_ld *ld, const cJSON *runs)
{
    sc_scenario *sc = ld->sc;
    if (!scl_want_list(ld, runs, "runs")) return false;
    if (cJSON_GetArraySize(runs) == 0) return scl_fail_at(ld, runs, "runs", "must not be empty");
    sc->n_runs = (size_t)cJSON_GetArraySize(runs);
    sc->runs = rs_xcalloc(sc->n_runs, sizeof *sc->runs);
    if (!scl_run_names(ld, runs)) return false;
    size_t i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, runs)
    {
        char path[SC_PATH_MAX];
        scl_path_idx(path, "runs", i);
        ld->run = i;
        if (!scl_run_body(ld, v, path, &sc->runs[i++])) return false;
    }
    return true;
}

/* ---- top level ----------------------------------------------------------- */

static bool scl_seed(sc_ld *ld, const cJSON *f)
{
    const char *text = sy_num_text(ld->doc, f);
    if (!cJSON_IsNumber(f) || !sy_is_int(ld->doc, f) || !text)
        return scl_fail_at(ld, f, "seed", "expected an integer, got %s", scl_type_name(ld, f));
    if (text[0] == '+') text++;
    errno = 0;
    char *end = NULL;
    unsigned long long v = text[0] == '-' ? 0 : strtoull(text, &end, 10);
    if (text[0] == '-' || errno == ERANGE || !end || *end)
        return scl_fail_at(ld, f, "seed", "must be an integer from 0 to 18446744073709551615");
    ld->sc->seed = (uint64_t)v;
    return true;
}

static bool scl_strategies(sc_ld *ld, const cJSON *f)
{
    sc_scenario *sc = ld->sc;
    if (!scl_str_list(ld, f, "strategies", &sc->strategies, &sc->n_strategies)) return false;
    if (sc->n_strategies == 0)
        return scl_fail_at(ld, f, "strategies", "must name at least one strategy");
    for (size_t i = 0; i < sc->n_strategies; i++) {
        char ip[SC_PATH_MAX];
        const char *s = sc->strategies[i];
        const cJSON *item = cJSON_GetArrayItem(f, (int)i);
        scl_path_idx(ip, "strategies", i);
        if (strcmp(s, "lazy") && strcmp(s, "eager"))
            return scl_fail_at(ld, item, ip, "unknown strategy \"%s\" (known: lazy, eager)", s);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(sc->strategies[j], s))
                return scl_fail_at(ld, item, ip, "strategy \"%s\" listed twice", s);
    }
    return true;
}

static bool scl_header(sc_ld *ld, const cJSON *root)
{
    sc_scenario *sc = ld->sc;
    const cJSON *f;
    const char *s;
    if (!scl_required(ld, root, "name", "", &f) || !scl_str(ld, f, "name", &s)) return false;
    sc->name = rs_xstrdup(s);
    if ((f = cJSON_GetObjectItemCaseSensitive(root, "about"))) {
        if (!scl_str(ld, f, "about", &s)) return false;
        sc->about = rs_xstrdup(s);
    }
    sc->seed = 1;
    if ((f = cJSON_GetObjectItemCaseSensitive(root, "seed")) && !scl_seed(ld, f)) return false;
    if ((f = cJSON_GetObjectItemCaseSensitive(root, "strategies"))) return scl_strategies(ld, f);
    sc->strategies = rs_xcalloc(2, sizeof *sc->strategies);
    sc->strategies[sc->n_strategies++] = rs_xstrdup("lazy");
    sc->strategies[sc->n_strategies++] = rs_xstrdup("eager");
    return true;
}

/* The wall clock of a world from 1970 up to the year 3000: every run after
 * it keeps RFC 3339's four-digit year (world.h SIMW_WALL_MAX_MS). */
#define SC_CLOCK_START_MAX_MS 32503680000000LL /* 3000-01-01T00:00:00Z */

/* `clock: {start: RFC3339}`. */
static bool scl_clock(sc_ld *ld, const cJSON *v)
{
    static const char *const keys[] = {"start", NULL};
    const cJSON *f;
    const char *s;
    if (!scl_want_map(ld, v, "clock") || !scl_keys(ld, v, "clock", keys) ||
        !scl_required(ld, v, "start", "clock", &f) || !scl_str(ld, f, "clock.start", &s))
        return false;
    int64_t ms;
    if (!sc_parse_rfc3339_ms(s, &ms))
        return scl_fail_at(ld, f, "clock.start",
                           "malformed time \"%s\" (want RFC 3339 such as 2026-09-23T10:00:00Z)", s);
    if (ms < 0 || ms >= SC_CLOCK_START_MAX_MS)
        return scl_fail_at(ld, f, "clock.start",
                           "must be from 1970-01-01T00:00:00Z to before 3000-01-01T00:00:00Z");
    ld->sc->clock_start_set = true;
    ld->sc->clock_start_ms = ms;
    return true;
}

/* `perturb-menu: [{name, do: <event>}]` (reassert sweep --perturb). */
static bool scl_perturb_menu(sc_ld *ld, const cJSON *list)
{
    static const char *const keys[] = {"name", "do", NULL};
    sc_scenario *sc = ld->sc;
    if (!scl_want_list(ld, list, "perturb-menu")) return false;
    size_t n = (size_t)cJSON_GetArraySize(list);
    sc->perturb_menu = rs_xcalloc(n ? n : 1, sizeof *sc->perturb_menu);
    const cJSON *it;
    cJSON_ArrayForEach(it, list)
    {
        char ip[SC_PATH_MAX], kp[SC_PATH_MAX];
        const cJSON *f;
        const char *name;
        size_t i = sc->n_perturb_menu;
        scl_path_idx(ip, "perturb-menu", i);
        scl_path_key(kp, ip, "name");
        if (!scl_want_map(ld, it, ip) || !scl_keys(ld, it, ip, keys) ||
            !scl_required(ld, it, "name", ip, &f) || !scl_str(ld, f, kp, &name))
            return false;
        if (!sc_run_name_ok(name))
            return scl_fail_at(ld, f, kp,
                               "a menu name must be lowercase letters, digits and '-', starting "
                               "and ending with a letter or digit");
        for (size_t j = 0; j < i; j++)
            if (!strcmp(sc->perturb_menu[j].name, name))
                return scl_fail_at(ld, f, kp, "duplicate menu name \"%s\"", name);
        sc->perturb_menu[i].name = rs_xstrdup(name);
        sc->n_perturb_menu++;
        scl_path_key(kp, ip, "do");
        ld->at = SC_REF_MENU;
        ld->item = i;
        if (!scl_required(ld, it, "do", ip, &f) || !scl_event(ld, f, kp, &sc->perturb_menu[i].ev))
            return false;
    }
    return true;
}

static bool scl_scenario(sc_ld *ld, const cJSON *root)
{
    static const char *const keys[] = {"name",    "about",        "seed",    "strategies",
                                       "cluster", "clock",        "desired", "catalogue",
                                       "runs",    "perturb-menu", NULL};
    const cJSON *f;
    const char *s;
    if (!scl_want_map(ld, root, "") || !scl_keys(ld, root, "", keys) ||
        !scl_catalogue(ld, cJSON_GetObjectItemCaseSensitive(root, "catalogue"),
                       cJSON_GetObjectItemCaseSensitive(root, "cluster")) ||
        !scl_header(ld, root) || !scl_required(ld, root, "cluster", "", &f) ||
        !scl_cluster(ld, f) || !scl_required(ld, root, "desired", "", &f) ||
        !scl_cred_name(ld, f, "desired", &s))
        return false;
    ld->sc->desired = rs_xstrdup(s);
    if ((f = cJSON_GetObjectItemCaseSensitive(root, "clock")) && !scl_clock(ld, f)) return false;
    if (!scl_required(ld, root, "runs", "", &f) || !scl_runs(ld, f)) return false;
    f = cJSON_GetObjectItemCaseSensitive(root, "perturb-menu");
    return !f || scl_perturb_menu(ld, f);
}

rs_code sc_load(const char *path, sc_scenario **out, rs_err *e)
{
    *out = NULL;
    sy_doc *doc = NULL;
    rs_code rc = sy_load(path, &doc, e);
    if (rc != RS_OK) return rc;
    sc_scenario *sc = rs_xcalloc(1, sizeof *sc);
    sc->file = rs_xstrdup(path);
    sc_ld ld = {.file = path, .doc = doc, .e = e, .sc = sc, .root = sy_root(doc)};
    bool ok = scl_scenario(&ld, sy_root(doc));
    sy_free(doc);
    if (!ok) {
        sc_free(sc);
        return RS_DATAERR;
    }
    *out = sc;
    return RS_OK;
}
