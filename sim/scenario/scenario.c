/*
 * scenario.c — loads a scenario file (DESIGN.md §5, format v1) into the
 * plain structs of scenario.h: the top level, the catalogue, the cluster and
 * the runs. Events, faults and expectations live in scenario_events.c and
 * scenario_expect.c; YAML parsing with positions in scenario_yaml.c.
 *
 * The one idea: everything that can be checked without a world is checked
 * here, once, with file:line:column. The catalogue is read first (it is what
 * credential names resolve against) and all run names before any run body
 * (runs.terminal may name a later run). Arrays are allocated zeroed at their
 * final length before they are filled, so sc_free can release a scenario that
 * failed half-way through.
 */
#include "core/cred/cred.h"
#include "sim/scenario/scenario_int.h"

#include <ctype.h>
#include <errno.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SC_CONTROL_PLANES_MAX 254 /* InternalIP 10.0.0.<i> */
#define SC_WORKERS_MAX 4096       /* InternalIP 10.1.<i div 256>.<i mod 256>; far past any test */
#define SC_FANOUT_MAX 1000
#define SC_DNS_LABEL_MAX 63
#define SC_MERGE_PAIRS_MAX 100000 /* expectations are a few dozen nodes */

typedef struct sc_preset_cred {
    const char *name;
    const char *username;
    const char *password;
    bool revoked;
} sc_preset_cred;

/* The prod preset's catalogue (DESIGN.md §5): always present, overridable. */
static const sc_preset_cred sc_preset_creds[] = {
    {"previous", "deploy-bot", "ghp-prev-0a1b2c3d4e5f", false},
    {"current", "deploy-bot", "ghp-curr-9f8e7d6c5b4a", false},
    {"revoked", "deploy-bot", "ghp-revk-5566778899aa", true},
};

static const char *const sc_default_fanout[] = {"wedding-app", "ascoachingogvaner", "kyverno"};

/* ---- public helpers ------------------------------------------------------ */

bool sc_parse_duration_ms(const char *text, int64_t *ms)
{
    return live_yaml_duration_ms(text, ms); /* one duration syntax for scenarios and --config */
}

const sc_cred *sc_catalogue_find(const sc_scenario *sc, const char *name)
{
    if (!sc || !name) return NULL;
    for (size_t i = 0; i < sc->n_catalogue; i++)
        if (sc->catalogue[i].name && !strcmp(sc->catalogue[i].name, name)) return &sc->catalogue[i];
    return NULL;
}

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

cJSON *sc_expect_for(const sc_run *run, const char *strategy)
{
    cJSON *out = run && run->expect ? cJSON_Duplicate(run->expect, true) : cJSON_CreateObject();
    if (!out) abort();
    const cJSON *over =
        run && strategy ? cJSON_GetObjectItemCaseSensitive(run->by_strategy, strategy) : NULL;
    if (cJSON_IsObject(over)) sc_merge(out, over);
    return out;
}

/* ---- freeing ------------------------------------------------------------- */

static void sc_secret_free(char *s)
{
    /* Catalogue secrets are test fixtures, but the loader is also how
     * recorded incidents come back; do not leave them in freed heap. */
    if (s) OPENSSL_cleanse(s, strlen(s));
    free(s);
}

static void sc_cred_free(sc_cred *c)
{
    free(c->name);
    free(c->username);
    sc_secret_free(c->password);
    sc_secret_free(c->dockerconfigjson);
    free(c->ciphertext);
    scl_str_list_free(c->pulls, c->n_pulls);
    memset(c, 0, sizeof *c);
}

static void sc_event_free(sc_event *ev)
{
    free(ev->kind);
    cJSON_Delete(ev->args);
}

static void sc_run_free(sc_run *r)
{
    free(r->name);
    scl_str_list_free(r->args, r->n_args);
    for (size_t i = 0; i < r->n_before; i++)
        sc_event_free(&r->before[i]);
    free(r->before);
    for (size_t i = 0; i < r->n_faults; i++)
        free(r->faults[i].on);
    free(r->faults);
    for (size_t i = 0; i < r->n_during; i++) {
        free(r->during[i].before_call);
        sc_event_free(&r->during[i].action);
    }
    free(r->during);
    cJSON_Delete(r->expect);
    cJSON_Delete(r->by_strategy);
    free(r->invariants_off);
    free(r->invariants_reason);
}

void sc_free(sc_scenario *sc)
{
    if (!sc) return;
    free(sc->file);
    free(sc->name);
    free(sc->about);
    scl_str_list_free(sc->strategies, sc->n_strategies);
    free(sc->cluster.preset);
    scl_str_list_free(sc->cluster.fanout_namespaces, sc->cluster.n_fanout);
    free(sc->cluster.credential);
    free(sc->desired);
    for (size_t i = 0; i < sc->n_catalogue; i++)
        sc_cred_free(&sc->catalogue[i]);
    free(sc->catalogue);
    for (size_t i = 0; i < sc->n_runs; i++)
        sc_run_free(&sc->runs[i]);
    free(sc->runs);
    free(sc);
}

/* ---- catalogue ----------------------------------------------------------- */

/* "ENC[AES256_GCM,data:<32 hex>,iv:<16 hex>,tag:sim,type:str]" from
 * SHA-256("reassert-sim:" + name): stable across runs, distinct per name, and
 * shaped like SOPS output so the revision code path is the production one. */
static char *sc_default_ciphertext(const char *name)
{
    char *seed = rs_xasprintf("reassert-sim:%s", name);
    char hex[65];
    sha256_hex(seed, strlen(seed), hex);
    free(seed);
    return rs_xasprintf("ENC[AES256_GCM,data:%.32s,iv:%.16s,tag:sim,type:str]", hex, hex + 32);
}

static void sc_preset_catalogue(sc_scenario *sc)
{
    for (size_t i = 0; i < RS_ARRAY_LEN(sc_preset_creds); i++) {
        sc_cred *c = &sc->catalogue[sc->n_catalogue++];
        c->name = rs_xstrdup(sc_preset_creds[i].name);
        c->username = rs_xstrdup(sc_preset_creds[i].username);
        c->password = rs_xstrdup(sc_preset_creds[i].password);
        c->revoked = sc_preset_creds[i].revoked;
        c->ciphertext = sc_default_ciphertext(c->name);
    }
}

static bool scl_pulls(sc_ld *ld, const cJSON *n, const char *path, sc_cred *c)
{
    if (!scl_str_list(ld, n, path, &c->pulls, &c->n_pulls)) return false;
    for (size_t i = 0; i < c->n_pulls; i++) {
        const char *colon = strchr(c->pulls[i], ':');
        if (colon && colon != c->pulls[i] && colon[1]) continue;
        char ip[SC_PATH_MAX];
        scl_path_idx(ip, path, i);
        return scl_fail_at(ld, cJSON_GetArrayItem(n, (int)i), ip,
                           "malformed pull target \"%s\" (want repo:ref)", c->pulls[i]);
    }
    return true;
}

/* {username, password} or {dockerconfigjson}: exactly one form. */
static bool scl_cred_form(sc_ld *ld, const cJSON *v, const char *path, sc_cred *c)
{
    char kp[SC_PATH_MAX];
    const cJSON *user = cJSON_GetObjectItemCaseSensitive(v, "username");
    const cJSON *pass = cJSON_GetObjectItemCaseSensitive(v, "password");
    const cJSON *dcj = cJSON_GetObjectItemCaseSensitive(v, "dockerconfigjson");
    const char *s;
    if ((user || pass) && dcj)
        return scl_fail_at(ld, v, path,
                           "give either username and password or dockerconfigjson, not both");
    if (dcj) {
        scl_path_key(kp, path, "dockerconfigjson");
        if (!scl_str(ld, dcj, kp, &s)) return false;
        c->dockerconfigjson = rs_xstrdup(s);
        return true;
    }
    if (!user && !pass)
        return scl_fail_at(ld, v, path, "give username and password, or dockerconfigjson");
    if (!scl_required(ld, v, "username", path, &user) ||
        !scl_required(ld, v, "password", path, &pass))
        return false;
    scl_path_key(kp, path, "username");
    if (!scl_str(ld, user, kp, &s)) return false;
    c->username = rs_xstrdup(s);
    scl_path_key(kp, path, "password");
    if (!scl_str(ld, pass, kp, &s)) return false;
    c->password = rs_xstrdup(s);
    return true;
}

static bool scl_cred_entry(sc_ld *ld, const cJSON *v, const char *path, sc_cred *c)
{
    static const char *const keys[] = {
        "username", "password", "dockerconfigjson", "ciphertext", "revoked", "pulls", NULL};
    char kp[SC_PATH_MAX];
    const cJSON *f;
    const char *s;
    c->pos = sy_pos(ld->doc, v);
    if (!scl_want_map(ld, v, path) || !scl_keys(ld, v, path, keys) ||
        !scl_cred_form(ld, v, path, c))
        return false;
    if ((f = cJSON_GetObjectItemCaseSensitive(v, "ciphertext"))) {
        scl_path_key(kp, path, "ciphertext");
        if (!scl_str(ld, f, kp, &s)) return false;
        /* Kept verbatim even when it is not ENC[...]: refusing a plaintext
         * source is the core's job (exit 65), and a scenario proves it. */
        c->ciphertext = rs_xstrdup(s);
    } else {
        c->ciphertext = sc_default_ciphertext(c->name);
    }
    scl_path_key(kp, path, "revoked");
    if ((f = cJSON_GetObjectItemCaseSensitive(v, "revoked")) && !scl_bool(ld, f, kp, &c->revoked))
        return false;
    scl_path_key(kp, path, "pulls");
    return !(f = cJSON_GetObjectItemCaseSensitive(v, "pulls")) || scl_pulls(ld, f, kp, c);
}

static bool scl_catalogue(sc_ld *ld, const cJSON *cat)
{
    sc_scenario *sc = ld->sc;
    size_t n_file = cat ? (size_t)cJSON_GetArraySize(cat) : 0;
    if (cat && !scl_want_map(ld, cat, "catalogue")) return false;
    sc->catalogue = rs_xcalloc(RS_ARRAY_LEN(sc_preset_creds) + n_file, sizeof *sc->catalogue);
    sc_preset_catalogue(sc);
    const cJSON *v;
    cJSON_ArrayForEach(v, cat)
    {
        char path[SC_PATH_MAX];
        scl_path_key(path, "catalogue", v->string);
        if (!v->string[0])
            return scl_fail(ld, sy_key_pos(ld->doc, v), path,
                            "a credential name must not be empty");
        /* A file entry replaces a preset entry of the same name wholesale. */
        sc_cred *c = (sc_cred *)sc_catalogue_find(sc, v->string);
        if (c)
            sc_cred_free(c);
        else
            c = &sc->catalogue[sc->n_catalogue++];
        c->name = rs_xstrdup(v->string);
        if (!scl_cred_entry(ld, v, path, c)) return false;
    }
    return true;
}

/* ---- cluster ------------------------------------------------------------- */

static bool sc_dns_label(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > SC_DNS_LABEL_MAX || s[0] == '-' || s[n - 1] == '-') return false;
    for (size_t i = 0; i < n; i++)
        if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '-')
            return false;
    return true;
}

static bool scl_fanout_list(sc_ld *ld, const cJSON *f, const char *path, sc_cluster *cl)
{
    if (!scl_str_list(ld, f, path, &cl->fanout_namespaces, &cl->n_fanout)) return false;
    for (size_t i = 0; i < cl->n_fanout; i++) {
        char ip[SC_PATH_MAX];
        const char *ns = cl->fanout_namespaces[i];
        const cJSON *item = cJSON_GetArrayItem(f, (int)i);
        scl_path_idx(ip, path, i);
        if (!sc_dns_label(ns))
            return scl_fail_at(ld, item, ip, "\"%s\" is not a DNS label (a-z, 0-9, -; 1-63)", ns);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(cl->fanout_namespaces[j], ns))
                return scl_fail_at(ld, item, ip, "duplicate namespace \"%s\"", ns);
    }
    return true;
}

/* N => the three production namespaces, then tenant-4, tenant-5, ... */
static void sc_fanout_n(sc_cluster *cl, size_t n)
{
    cl->fanout_namespaces = rs_xcalloc(n ? n : 1, sizeof *cl->fanout_namespaces);
    for (size_t i = 0; i < n; i++)
        cl->fanout_namespaces[i] = i < RS_ARRAY_LEN(sc_default_fanout)
                                       ? rs_xstrdup(sc_default_fanout[i])
                                       : rs_xasprintf("tenant-%zu", i + 1);
    cl->n_fanout = n;
}

static bool scl_cluster_sizes(sc_ld *ld, const cJSON *v, sc_cluster *cl)
{
    const cJSON *f;
    long long n;
    cl->control_planes = 3;
    cl->workers = 3;
    if ((f = cJSON_GetObjectItemCaseSensitive(v, "control-planes"))) {
        if (!scl_int(ld, f, "cluster.control-planes", 1, SC_CONTROL_PLANES_MAX, &n)) return false;
        cl->control_planes = (int)n;
    }
    if ((f = cJSON_GetObjectItemCaseSensitive(v, "workers"))) {
        if (!scl_int(ld, f, "cluster.workers", 0, SC_WORKERS_MAX, &n)) return false;
        cl->workers = (int)n;
    }
    f = cJSON_GetObjectItemCaseSensitive(v, "fanout-namespaces");
    if (!f) {
        sc_fanout_n(cl, RS_ARRAY_LEN(sc_default_fanout));
        return true;
    }
    if (cJSON_IsArray(f)) return scl_fanout_list(ld, f, "cluster.fanout-namespaces", cl);
    if (!cJSON_IsNumber(f))
        return scl_fail_at(ld, f, "cluster.fanout-namespaces",
                           "expected a count or a list of namespaces, got %s",
                           scl_type_name(ld, f));
    if (!scl_int(ld, f, "cluster.fanout-namespaces", 0, SC_FANOUT_MAX, &n)) return false;
    sc_fanout_n(cl, (size_t)n);
    return true;
}

static bool scl_cluster(sc_ld *ld, const cJSON *v)
{
    static const char *const keys[] = {"preset",  "credential",        "control-planes",
                                       "workers", "fanout-namespaces", NULL};
    sc_cluster *cl = &ld->sc->cluster;
    const cJSON *f;
    const char *s;
    if (!scl_want_map(ld, v, "cluster") || !scl_keys(ld, v, "cluster", keys) ||
        !scl_required(ld, v, "preset", "cluster", &f) || !scl_str(ld, f, "cluster.preset", &s))
        return false;
    if (strcmp(s, "prod") != 0)
        return scl_fail_at(ld, f, "cluster.preset", "unknown preset \"%s\" (known: prod)", s);
    cl->preset = rs_xstrdup(s);
    if (!scl_required(ld, v, "credential", "cluster", &f) ||
        !scl_cred_name(ld, f, "cluster.credential", &s))
        return false;
    cl->credential = rs_xstrdup(s);
    return scl_cluster_sizes(ld, v, cl);
}

/* ---- runs ---------------------------------------------------------------- */

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
        if (!scl_event(ld, it, ip, &(*out)[i++])) return false;
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
        char ip[SC_PATH_MAX];
        scl_path_idx(ip, path, i);
        if (!scl_during(ld, it, ip, &r->during[i++])) return false;
    }
    return true;
}

static bool scl_run_body(sc_ld *ld, const cJSON *v, const char *path, sc_run *r)
{
    static const char *const keys[] = {"name",   "args",   "before",     "faults",
                                       "during", "expect", "invariants", NULL};
    char kp[SC_PATH_MAX];
    const cJSON *f;
    if (!scl_keys(ld, v, path, keys)) return false;
    scl_path_key(kp, path, "args");
    if ((f = cJSON_GetObjectItemCaseSensitive(v, "args")) &&
        !scl_str_list(ld, f, kp, &r->args, &r->n_args))
        return false;
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
    if ((f = cJSON_GetObjectItemCaseSensitive(v, "expect")) && !scl_expect(ld, f, kp, r))
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

static bool scl_scenario(sc_ld *ld, const cJSON *root)
{
    static const char *const keys[] = {"name",    "about",     "seed", "strategies", "cluster",
                                       "desired", "catalogue", "runs", NULL};
    const cJSON *f;
    const char *s;
    if (!scl_want_map(ld, root, "") || !scl_keys(ld, root, "", keys) ||
        !scl_catalogue(ld, cJSON_GetObjectItemCaseSensitive(root, "catalogue")) ||
        !scl_header(ld, root) || !scl_required(ld, root, "cluster", "", &f) ||
        !scl_cluster(ld, f) || !scl_required(ld, root, "desired", "", &f) ||
        !scl_cred_name(ld, f, "desired", &s))
        return false;
    ld->sc->desired = rs_xstrdup(s);
    return scl_required(ld, root, "runs", "", &f) && scl_runs(ld, f);
}

rs_code sc_load(const char *path, sc_scenario **out, rs_err *e)
{
    *out = NULL;
    sy_doc *doc = NULL;
    rs_code rc = sy_load(path, &doc, e);
    if (rc != RS_OK) return rc;
    sc_scenario *sc = rs_xcalloc(1, sizeof *sc);
    sc->file = rs_xstrdup(path);
    sc_ld ld = {.file = path, .doc = doc, .e = e, .sc = sc};
    bool ok = scl_scenario(&ld, sy_root(doc));
    sy_free(doc);
    if (!ok) {
        sc_free(sc);
        return RS_DATAERR;
    }
    *out = sc;
    return RS_OK;
}
