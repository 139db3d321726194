/*
 * scenario_cluster.c — the world a scenario starts from: the credential
 * catalogue and the cluster (preset, sizes, fan-out namespaces).
 *
 * The one idea: the catalogue is complete before anything else is read,
 * because every credential name in the file (cluster.credential, desired,
 * events, state checks) resolves against it. The preset's entries are always
 * there, with deterministic SOPS-shaped ciphertexts, so a scenario names only
 * what it changes.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "core/config.h"
#include "core/cred/cred.h"
#include "sim/scenario/scenario_cassette.h"
#include "sim/scenario/scenario_int.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SC_CONTROL_PLANES_MAX 254 /* InternalIP 10.0.0.<i> */
/* 1,000 nodes: the cost benchmarks' size (README "Input bounds" on wall time). */
#define SC_WORKERS_MAX 1000
#define SC_FANOUT_MAX RS_CONFIG_LIST_MAX /* 256: the core holds no more; refused, never cut */
#define SC_DNS_LABEL_MAX 63

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

/* ---- catalogue ----------------------------------------------------------- */

/* "ENC[AES256_GCM,data:<32 hex>,iv:<16 hex>,tag:sim,type:str]" from
 * SHA-256("reassert-sim:" + name): stable across runs, distinct per name, and
 * shaped like SOPS output so the revision code path is the production one. */
char *sc_default_ciphertext(const char *name)
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

/* GHCR's answers to a manifest read its token does not cover: 401
 * UNAUTHORIZED, 403 DENIED, 404 MANIFEST_UNKNOWN (H136). */
static bool scl_manifest_denial(sc_ld *ld, const cJSON *n, const char *path, sc_cred *c)
{
    long long status = 0;
    if (!scl_int(ld, n, path, 401, 404, &status)) return false;
    if (status == 402) return scl_fail_at(ld, n, path, "must be 401, 403 or 404, not 402");
    c->manifest_denial = (int)status;
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
    static const char *const keys[] = {"username", "password", "dockerconfigjson", "ciphertext",
                                       "revoked",  "pulls",    "manifest-denial",  NULL};
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
    scl_path_key(kp, path, "manifest-denial");
    if ((f = cJSON_GetObjectItemCaseSensitive(v, "manifest-denial")) &&
        !scl_manifest_denial(ld, f, kp, c))
        return false;
    scl_path_key(kp, path, "pulls");
    return !(f = cJSON_GetObjectItemCaseSensitive(v, "pulls")) || scl_pulls(ld, f, kp, c);
}

/* ---- a cassette's cluster (DESIGN.md §8 r2) ------------------------------ */

/* The cassette's entries after the preset's, its cluster credential, node
 * counts (from its first Node list; the preset's 3 + 3 when it has none) and
 * the recorded fan-out namespaces. sc->catalogue has room for them. */
static void sc_cassette_fill(sc_scenario *sc, sc_cassette *c, const char *path)
{
    sc_cred creds[SC_CASSETTE_CREDS_MAX];
    memset(creds, 0, sizeof creds);
    size_t n = 0;
    const char *held = NULL;
    sc_cassette_catalogue(c, creds, &n, &held);
    for (size_t i = 0; i < n; i++) {
        sc_cred *dst = (sc_cred *)sc_catalogue_find(sc, creds[i].name);
        if (dst)
            scl_cred_free(dst);
        else
            dst = &sc->catalogue[sc->n_catalogue++];
        *dst = creds[i];
        if (!dst->ciphertext) dst->ciphertext = sc_default_ciphertext(dst->name);
    }
    sc_cluster *cl = &sc->cluster;
    cl->preset = rs_xstrdup("prod");
    cl->credential = rs_xstrdup(held);
    cl->cassette = rs_xstrdup(path);
    cl->control_planes = cl->workers = 3;
    const rec_row *list = sc_cassette_node_list(c);
    cJSON *nodes = list ? cJSON_Parse(list->response) : NULL;
    if (list) cl->control_planes = cl->workers = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(nodes, "items"))
    {
        const cJSON *labels = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(it, "metadata"), "labels");
        if (cJSON_HasObjectItem(labels, "node-role.kubernetes.io/control-plane"))
            cl->control_planes++;
        else
            cl->workers++;
    }
    cJSON_Delete(nodes);
    cl->fanout_namespaces = rs_xcalloc(c->cfg.n_fanout + 1, sizeof *cl->fanout_namespaces);
    for (size_t i = 0; i < c->cfg.n_fanout; i++)
        cl->fanout_namespaces[i] = rs_xstrdup(c->cfg.fanout_namespaces[i]);
    cl->n_fanout = c->cfg.n_fanout;
}

/* The cassette path as the file names it, resolved against the file's
 * folder, or NULL with why set when it leaves the file's folder tree: a
 * scenario reads a cassette from its own folder or below, as a run's files
 * stay under {tmp} — a scenario copied or checked out elsewhere then takes
 * its world along, and a scenario from a stranger cannot make the harness
 * read any file the user can (an absolute path, a ".." component, or a
 * symbolic link inside the tree that points out of it). A path that does
 * not resolve is left to the cassette's own open (missing, unreadable).
 * Caller frees. */
static char *sc_cassette_path(const char *file, const char *name, const char **why)
{
    *why = NULL;
    if (name[0] == '/') {
        *why = "is an absolute path";
        return NULL;
    }
    for (const char *c = name; c; c = strchr(c, '/')) {
        if (*c == '/') c++;
        if (c[0] == '.' && c[1] == '.' && (c[2] == '/' || c[2] == '\0')) {
            *why = "has a \"..\" component";
            return NULL;
        }
    }
    const char *slash = strrchr(file, '/');
    char *path =
        slash ? rs_xasprintf("%.*s/%s", (int)(slash - file), file, name) : rs_xstrdup(name);
    char *dir =
        slash ? rs_xasprintf("%.*s", (int)(slash - file) + (slash == file), file) : rs_xstrdup(".");
    char real_dir[PATH_MAX], real[PATH_MAX];
    if (realpath(dir, real_dir) && realpath(path, real)) {
        size_t n = strlen(real_dir);
        bool inside =
            strncmp(real, real_dir, n) == 0 && (real[n] == '/' || (n == 1 && real_dir[0] == '/'));
        if (!inside) *why = "leads out of the scenario's folder through a symbolic link";
    }
    free(dir);
    if (*why) {
        free(path);
        return NULL;
    }
    return path;
}

/* `cluster: {cassette: FILE}`: read here, before the file's own catalogue,
 * because the cassette's credentials are names the rest of the file may
 * use. A cassette that cannot be read is this field's error. */
static bool scl_cluster_cassette(sc_ld *ld, const cJSON *cluster, sc_cassette *c, char **path)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(cluster, "cassette");
    const char *s;
    if (!scl_str(ld, f, "cluster.cassette", &s)) return false;
    const char *why = NULL;
    *path = sc_cassette_path(ld->file, s, &why);
    if (!*path)
        return scl_fail_at(ld, f, "cluster.cassette",
                           "\"%s\" %s: a scenario reads its cassette from its own folder or "
                           "below (a relative path without \"..\"); move or copy the cassette "
                           "there",
                           s, why);
    rs_err e;
    rs_err_clear(&e);
    if (sc_cassette_open(*path, c, &e) == RS_OK) return true;
    return scl_fail_at(ld, f, "cluster.cassette", "%s", e.msg);
}

/* A recorded argument with the sim's private directory of the recorded run
 * (/tmp/reassert-sim-XXXXXX) written back as {tmp}: the runner gives each
 * execution a fresh one. Caller frees. */
static char *sc_cassette_arg(const char *arg)
{
    static const char prefix[] = "/tmp/reassert-sim-";
    const char *at = strstr(arg, prefix);
    size_t n = sizeof prefix - 1;
    for (size_t i = 0; at && i < 6; i++)
        if (!isalnum((unsigned char)at[n + i])) at = NULL;
    if (!at) return rs_xstrdup(arg);
    return rs_xasprintf("%.*s{tmp}%s", (int)(at - arg), arg, at + n + 6);
}

/* The recorded run: its name when it is one a scenario may use, else
 * "reassert"; its arguments (a live run records none). */
static void sc_cassette_run(sc_cassette *c, sc_run *run)
{
    const char *name = rec_tape_meta(c->tape, "run");
    bool ok = name && name[0] && strlen(name) <= 63 && name[0] != '-';
    for (const char *p = name; ok && *p; p++)
        ok = islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '-';
    run->name = rs_xstrdup(ok ? name : "reassert");
    const char *args = rec_tape_meta(c->tape, "args");
    char *plain = args ? rec_unredact_string(c->red, args) : NULL;
    cJSON *arr = plain ? cJSON_Parse(plain) : NULL;
    free(plain);
    run->args = rs_xcalloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof *run->args);
    const cJSON *it;
    cJSON_ArrayForEach(it, arr)
    {
        if (cJSON_IsString(it)) run->args[run->n_args++] = sc_cassette_arg(it->valuestring);
    }
    cJSON_Delete(arr);
}

rs_code sc_cassette_scenario(const char *path, sc_scenario **out, rs_err *e)
{
    *out = NULL;
    sc_cassette c;
    if (sc_cassette_open(path, &c, e) != RS_OK) {
        sc_cassette_close(&c);
        return e->code;
    }
    sc_scenario *sc = rs_xcalloc(1, sizeof *sc);
    sc->file = rs_xstrdup(path);
    const char *name = rec_tape_meta(c.tape, "scenario");
    sc->name = rs_xstrdup(name ? name : "cassette");
    sc->seed = 1;
    sc->catalogue =
        rs_xcalloc(RS_ARRAY_LEN(sc_preset_creds) + SC_CASSETTE_CREDS_MAX, sizeof *sc->catalogue);
    sc_preset_catalogue(sc);
    sc_cassette_fill(sc, &c, path);
    sc->desired = rs_xstrdup("desired");
    sc->strategies = rs_xcalloc(2, sizeof *sc->strategies);
    sc->strategies[sc->n_strategies++] = rs_xstrdup("lazy");
    sc->strategies[sc->n_strategies++] = rs_xstrdup("eager");
    sc->runs = rs_xcalloc(1, sizeof *sc->runs);
    sc->n_runs = 1;
    sc_cassette_run(&c, &sc->runs[0]);
    sc_cassette_close(&c);
    /* The recorded arguments obey a scenario's rules: a cassette never
     * makes the harness write or read a file outside its private
     * directory (DESIGN §5.1). */
    size_t at = 0;
    char why[256];
    if (!sc_args_check(sc->runs[0].args, sc->runs[0].n_args, &at, why, sizeof why)) {
        rs_fail(e, RS_DATAERR, "cassette %s: meta args item %zu: %s", path, at, why);
        sc_free(sc);
        return e->code;
    }
    *out = sc;
    return RS_OK;
}

bool scl_catalogue(sc_ld *ld, const cJSON *cat, const cJSON *cluster)
{
    sc_scenario *sc = ld->sc;
    size_t n_file = cat ? (size_t)cJSON_GetArraySize(cat) : 0;
    if (cat && !scl_want_map(ld, cat, "catalogue")) return false;
    sc->catalogue = rs_xcalloc(RS_ARRAY_LEN(sc_preset_creds) + SC_CASSETTE_CREDS_MAX + n_file,
                               sizeof *sc->catalogue);
    sc_preset_catalogue(sc);
    if (cJSON_IsObject(cluster) && cJSON_HasObjectItem(cluster, "cassette")) {
        sc_cassette c;
        memset(&c, 0, sizeof c);
        char *path = NULL;
        bool ok = scl_cluster_cassette(ld, cluster, &c, &path);
        if (ok) sc_cassette_fill(sc, &c, path);
        sc_cassette_close(&c);
        free(path);
        if (!ok) return false;
        sc->cluster.cassette_pos =
            sy_pos(ld->doc, cJSON_GetObjectItemCaseSensitive(cluster, "cassette"));
    }
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
            scl_cred_free(c);
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
    if (cJSON_GetArraySize(f) > SC_FANOUT_MAX)
        return scl_fail(ld, sy_key_pos(ld->doc, f), path,
                        "%d namespaces; at most %d are supported (none is dropped silently)",
                        cJSON_GetArraySize(f), SC_FANOUT_MAX);
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

bool scl_cluster(sc_ld *ld, const cJSON *v)
{
    static const char *const keys[] = {"preset",  "credential",        "control-planes",
                                       "workers", "fanout-namespaces", NULL};
    static const char *const cassette_keys[] = {"cassette", NULL};
    sc_cluster *cl = &ld->sc->cluster;
    const cJSON *f;
    const char *s;
    /* A cassette's cluster was read with the catalogue; it is the whole
     * cluster (sizes, credential and namespaces are what it recorded). */
    if (cl->cassette) return scl_keys(ld, v, "cluster", cassette_keys);
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
