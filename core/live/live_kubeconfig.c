/*
 * live_kubeconfig.c — kubeconfig files read with the YAML reader and
 * resolved as kubectl resolves them (see the header for the rules).
 *
 * The one idea: merging by "first file to define a name wins" is the same
 * as looking each name up in the files in order, so nothing is merged into
 * a new tree — each lookup walks the files, and an entry's relative paths
 * resolve against the folder of the file that defined it, as client-go
 * resolves them.
 */
#include "core/live/live_kubeconfig.h"

#include "core/cred/cred.h"
#include "core/live/live_pem.h"
#include "core/live/live_yaml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define SA_DIR_DEFAULT "/var/run/secrets/kubernetes.io/serviceaccount"

typedef struct kc_file {
    char *path;
    live_yaml_doc *doc;
} kc_file;

typedef struct kc_set {
    kc_file f[LIVE_KUBECONFIG_FILES_MAX];
    size_t n;
} kc_set;

static bool file_exists(const char *p)
{
    struct stat st;
    return p && p[0] && stat(p, &st) == 0;
}

static bool kc_has(const kc_set *s, const char *p)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->f[i].path, p) == 0) return true;
    return false;
}

static rs_code kc_add(kc_set *s, const char *path, rs_err *e)
{
    if (kc_has(s, path)) return RS_OK;
    if (s->n == LIVE_KUBECONFIG_FILES_MAX)
        return rs_fail(e, RS_DATAERR, "KUBECONFIG names more than %d files",
                       LIVE_KUBECONFIG_FILES_MAX);
    live_yaml_doc *d = NULL;
    rs_code c = live_yaml_load(path, "kubeconfig", &d, e);
    if (c != RS_OK) return c;
    const cJSON *root = live_yaml_root(d);
    if (root && !cJSON_IsNull(root) && !cJSON_IsObject(root)) {
        live_yaml_free(d);
        return rs_fail(e, RS_DATAERR, "%s: kubeconfig: the document is not a mapping", path);
    }
    s->f[s->n].path = rs_xstrdup(path);
    s->f[s->n].doc = d;
    s->n++;
    return RS_OK;
}

static void kc_set_free(kc_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->f[i].path);
        live_yaml_free(s->f[i].doc);
    }
    s->n = 0;
}

/* The files, in kubectl's order of precedence. */
static rs_code kc_files(const live_kubeconfig_src *src, kc_set *s, rs_err *e)
{
    if (src->explicit_path && src->explicit_path[0]) {
        if (!file_exists(src->explicit_path))
            return rs_fail(e, RS_DATAERR, "--kubeconfig %s: no such file", src->explicit_path);
        return kc_add(s, src->explicit_path, e);
    }
    if (src->env && src->env[0]) {
        char *list = rs_xstrdup(src->env);
        rs_code c = RS_OK;
        for (char *save = NULL, *p = strtok_r(list, ":", &save); p && c == RS_OK;
             p = strtok_r(NULL, ":", &save))
            if (file_exists(p)) c = kc_add(s, p, e);
        free(list);
        return c;
    }
    if (src->home && src->home[0]) {
        char *p = rs_xasprintf("%s/.kube/config", src->home);
        rs_code c = file_exists(p) ? kc_add(s, p, e) : RS_OK;
        free(p);
        return c;
    }
    return RS_OK;
}

/* ---- typed fields -------------------------------------------------------- */

static rs_code kc_bad(const kc_file *f, const cJSON *node, const char *field, const char *what,
                      rs_err *e)
{
    live_yaml_pos p = live_yaml_pos_of(f->doc, node);
    return rs_fail(e, RS_DATAERR, "%s:%d:%d: kubeconfig: %s: %s", f->path, p.line, p.col, field,
                   what);
}

/* A string member (a number keeps its source text); absent or null: *out
 * stays NULL. */
static rs_code kc_str(const kc_file *f, const cJSON *obj, const char *key, const char *field,
                      const char **out, rs_err *e)
{
    *out = NULL;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v)) return RS_OK;
    const char *text = cJSON_GetStringValue(v);
    if (text) {
        *out = text;
        return RS_OK;
    }
    const char *num = live_yaml_num_text(f->doc, v);
    if (num) {
        *out = num;
        return RS_OK;
    }
    return kc_bad(f, v, field, "expected a string", e);
}

static const cJSON *kc_map(const kc_file *f, const cJSON *obj, const char *key, const char *field,
                           rs_err *e, rs_code *c)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v)) return NULL;
    if (!cJSON_IsObject(v)) *c = kc_bad(f, v, field, "expected a mapping", e);
    return cJSON_IsObject(v) ? v : NULL;
}

/* The first entry named name in a file's list (clusters, users, contexts);
 * its inner mapping (cluster, user, context) in *inner. */
static rs_code kc_find_in(const kc_file *f, const char *list, const char *inner_key,
                          const char *name, const cJSON **inner, rs_err *e)
{
    *inner = NULL;
    const cJSON *root = live_yaml_root(f->doc);
    const cJSON *arr = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, list) : NULL;
    if (!arr || cJSON_IsNull(arr)) return RS_OK;
    if (!cJSON_IsArray(arr)) return kc_bad(f, arr, list, "expected a list", e);
    const cJSON *it;
    cJSON_ArrayForEach(it, arr)
    {
        if (!cJSON_IsObject(it)) return kc_bad(f, it, list, "each entry must be a mapping", e);
        const char *n = NULL;
        rs_code c = kc_str(f, it, "name", list, &n, e);
        if (c != RS_OK) return c;
        if (!n || strcmp(n, name) != 0) continue;
        c = RS_OK;
        const cJSON *m = kc_map(f, it, inner_key, inner_key, e, &c);
        if (c != RS_OK) return c;
        *inner = m ? m : it; /* a named entry with no body still defines the name */
        return RS_OK;
    }
    return RS_OK;
}

/* Across the files in order: the first to define name wins. */
static rs_code kc_find(const kc_set *s, const char *list, const char *inner_key, const char *name,
                       const kc_file **from, const cJSON **inner, rs_err *e)
{
    *from = NULL;
    *inner = NULL;
    for (size_t i = 0; i < s->n; i++) {
        rs_code c = kc_find_in(&s->f[i], list, inner_key, name, inner, e);
        if (c != RS_OK) return c;
        if (*inner) {
            *from = &s->f[i];
            return RS_OK;
        }
    }
    return RS_OK;
}

/* A path from a file, relative to that file's folder. */
static char *kc_path(const kc_file *f, const char *p)
{
    if (!p || !p[0]) return NULL;
    if (p[0] == '/') return rs_xstrdup(p);
    const char *slash = strrchr(f->path, '/');
    if (!slash) return rs_xstrdup(p);
    return rs_xasprintf("%.*s/%s", (int)(slash - f->path), f->path, p);
}

static rs_code kc_b64(const kc_file *f, const cJSON *obj, const char *key, unsigned char **out,
                      size_t *len, rs_err *e)
{
    const char *t = NULL;
    rs_code c = kc_str(f, obj, key, key, &t, e);
    if (c != RS_OK || !t || !t[0]) return c;
    *out = base64_decode(t, len);
    if (!*out) return kc_bad(f, cJSON_GetObjectItemCaseSensitive(obj, key), key, "not base64", e);
    return RS_OK;
}

/* kc_bad naming the context and cluster too: a TLS input's error says
 * which cluster entry of which context it would have trusted. */
static rs_code kc_bad_tls(const kc_file *f, const cJSON *node, const live_kubeconfig *k,
                          const char *field, const char *what, rs_err *e)
{
    live_yaml_pos p = live_yaml_pos_of(f->doc, node);
    bool user = strncmp(field, "client-", 7) == 0;
    return rs_fail(e, RS_DATAERR, "%s:%d:%d: kubeconfig: context %s, %s %s: %s: %s", f->path,
                   p.line, p.col, k->context, user ? "user" : "cluster",
                   user ? k->user : k->cluster, field, what);
}

/* The certificate authority as client-go takes it, checked before any
 * connection: with insecure-skip-tls-verify it is refused outright
 * (client-go: "specifying a root certificates file with the insecure flag
 * is not allowed"); a certificate-authority file must be readable (clientcmd
 * validates it even when -data is given, and -data then wins); the bytes
 * used must hold a PEM certificate ("unable to load root certificates").
 * Each is a malformed kubeconfig (65), never a TLS failure (1). */
static rs_code kc_ca_check(const kc_file *f, const cJSON *cl, const live_kubeconfig *k, rs_err *e)
{
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(cl, "certificate-authority");
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(cl, "certificate-authority-data");
    if (k->insecure && (k->ca_file || k->ca_pem_len))
        return kc_bad_tls(f, cJSON_GetObjectItemCaseSensitive(cl, "insecure-skip-tls-verify"), k,
                          "insecure-skip-tls-verify",
                          k->ca_file ? "true together with certificate-authority: specifying a "
                                       "root certificates file with the insecure flag is not "
                                       "allowed (kubectl refuses it too)"
                                     : "true together with certificate-authority-data: "
                                       "specifying a root certificates file with the insecure "
                                       "flag is not allowed (kubectl refuses it too)",
                          e);
    if (k->ca_pem_len && !live_pem_has_cert(k->ca_pem, k->ca_pem_len))
        return kc_bad_tls(f, data, k, "certificate-authority-data",
                          "base64 of no PEM certificate (unable to load root certificates)", e);
    if (!k->ca_file) return RS_OK;
    const char *why = live_pem_file_problem(k->ca_file);
    if (!why || (k->ca_pem_len && strcmp(why, "holds no PEM certificate") == 0)) return RS_OK;
    char what[512];
    snprintf(what, sizeof what, "%s %s", k->ca_file, why);
    return kc_bad_tls(f, file, k, "certificate-authority", what, e);
}

static rs_code kc_cluster(const kc_file *f, const cJSON *cl, live_kubeconfig *k, rs_err *e)
{
    const char *server = NULL, *ca = NULL, *sni = NULL, *proxy = NULL;
    rs_code c;
    if ((c = kc_str(f, cl, "server", "cluster.server", &server, e)) != RS_OK ||
        (c = kc_str(f, cl, "certificate-authority", "certificate-authority", &ca, e)) != RS_OK ||
        (c = kc_str(f, cl, "tls-server-name", "tls-server-name", &sni, e)) != RS_OK ||
        (c = kc_str(f, cl, "proxy-url", "proxy-url", &proxy, e)) != RS_OK ||
        (c = kc_b64(f, cl, "certificate-authority-data", &k->ca_pem, &k->ca_pem_len, e)) != RS_OK)
        return c;
    if (!server || !server[0])
        return rs_fail(e, RS_DATAERR, "%s: kubeconfig: cluster %s has no server", f->path,
                       k->cluster);
    if (strncmp(server, "https://", 8) != 0 && strncmp(server, "http://", 7) != 0)
        return kc_bad(f, cJSON_GetObjectItemCaseSensitive(cl, "server"), "cluster.server",
                      "expected an http:// or https:// URL", e);
    k->server = rs_xstrdup(server);
    size_t n = strlen(k->server);
    while (n > 0 && k->server[n - 1] == '/')
        k->server[--n] = '\0';
    k->ca_file = kc_path(f, ca);
    k->tls_server_name = sni ? rs_xstrdup(sni) : NULL;
    k->proxy_url = proxy ? rs_xstrdup(proxy) : NULL;
    const cJSON *ins = cJSON_GetObjectItemCaseSensitive(cl, "insecure-skip-tls-verify");
    if (ins && !cJSON_IsBool(ins) && !cJSON_IsNull(ins))
        return kc_bad(f, ins, "insecure-skip-tls-verify", "expected true or false", e);
    k->insecure = cJSON_IsTrue(ins);
    return kc_ca_check(f, cl, k, e);
}

static rs_code kc_exec(const kc_file *f, const cJSON *ex, live_kubeconfig *k, rs_err *e)
{
    const char *cmd = NULL, *api = NULL, *mode = NULL;
    rs_code c;
    if ((c = kc_str(f, ex, "command", "exec.command", &cmd, e)) != RS_OK ||
        (c = kc_str(f, ex, "apiVersion", "exec.apiVersion", &api, e)) != RS_OK ||
        (c = kc_str(f, ex, "interactiveMode", "exec.interactiveMode", &mode, e)) != RS_OK)
        return c;
    if (!cmd || !cmd[0]) return kc_bad(f, ex, "exec.command", "missing", e);
    k->has_exec = true;
    k->exec.command = strchr(cmd, '/') ? kc_path(f, cmd) : rs_xstrdup(cmd);
    k->exec.api_version = rs_xstrdup(api ? api : "client.authentication.k8s.io/v1");
    k->exec.interactive = rs_xstrdup(mode ? mode : "IfAvailable");
    const cJSON *pci = cJSON_GetObjectItemCaseSensitive(ex, "provideClusterInfo");
    if (pci && !cJSON_IsBool(pci) && !cJSON_IsNull(pci))
        return kc_bad(f, pci, "exec.provideClusterInfo", "expected true or false", e);
    k->exec.provide_cluster_info = cJSON_IsTrue(pci);
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(ex, "args"), *it;
    if (args && !cJSON_IsNull(args)) {
        if (!cJSON_IsArray(args)) return kc_bad(f, args, "exec.args", "expected a list", e);
        cJSON_ArrayForEach(it, args)
        {
            const char *a = cJSON_GetStringValue(it);
            if (!a) a = live_yaml_num_text(f->doc, it);
            if (!a) return kc_bad(f, it, "exec.args", "expected strings", e);
            if (k->exec.n_args == LIVE_KUBECONFIG_EXEC_ARGS_MAX)
                return kc_bad(f, it, "exec.args", "too many", e);
            k->exec.args[k->exec.n_args++] = rs_xstrdup(a);
        }
    }
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(ex, "env");
    if (env && !cJSON_IsNull(env)) {
        if (!cJSON_IsArray(env)) return kc_bad(f, env, "exec.env", "expected a list", e);
        cJSON_ArrayForEach(it, env)
        {
            const char *n = NULL, *v = NULL;
            if (!cJSON_IsObject(it) || kc_str(f, it, "name", "exec.env", &n, e) != RS_OK ||
                kc_str(f, it, "value", "exec.env", &v, e) != RS_OK || !n || !n[0] || strchr(n, '='))
                return kc_bad(f, it, "exec.env", "each entry is {name, value}", e);
            if (k->exec.n_env == LIVE_KUBECONFIG_EXEC_ARGS_MAX)
                return kc_bad(f, it, "exec.env", "too many", e);
            k->exec.env[k->exec.n_env++] = rs_xasprintf("%s=%s", n, v ? v : "");
        }
    }
    return RS_OK;
}

/* A client-certificate or client-key file as clientcmd validates it before
 * any connection ("unable to read client-cert"), and as tls.X509KeyPair
 * needs it (a PEM certificate, a PEM private key) unless -data is given,
 * which then wins: a malformed kubeconfig (65), not a TLS failure. */
static rs_code kc_client_file_check(const kc_file *f, const cJSON *u, const live_kubeconfig *k,
                                    bool key, rs_err *e)
{
    const char *path = key ? k->key_file : k->cert_file;
    if (!path) return RS_OK;
    const char *why = key ? live_pem_key_file_problem(path) : live_pem_file_problem(path);
    bool has_data = key ? k->key_pem_len > 0 : k->cert_pem_len > 0;
    if (!why || (has_data && strncmp(why, "holds no PEM", 12) == 0)) return RS_OK;
    const char *field = key ? "client-key" : "client-certificate";
    char what[512];
    snprintf(what, sizeof what, "%s %s", path, why);
    return kc_bad_tls(f, cJSON_GetObjectItemCaseSensitive(u, field), k, field, what, e);
}

/* A bearer credential (token, tokenFile, an exec plugin's token) for a
 * server without TLS would cross the network in clear with every request.
 * kubectl never sends one there (clientcmd gives a user's credentials only
 * to a TLS server, so its requests go anonymous); reassert refuses the
 * kubeconfig instead, naming the field, so the run does not fail later as
 * an anonymous caller with a reason that hides this one. */
static rs_code kc_plain_http_check(const kc_file *f, const cJSON *u, const live_kubeconfig *k,
                                   rs_err *e)
{
    if (!k->server || strncasecmp(k->server, "http://", 7) != 0) return RS_OK;
    const char *field = k->token_file ? "tokenFile"
                        : k->token    ? "token"
                        : k->has_exec ? "exec"
                                      : NULL;
    if (!field) return RS_OK;
    live_yaml_pos p = live_yaml_pos_of(f->doc, cJSON_GetObjectItemCaseSensitive(u, field));
    return rs_fail(e, RS_DATAERR,
                   "%s:%d:%d: kubeconfig: context %s, user %s: %s: cluster %s's server %s is "
                   "plain http, so this bearer credential would cross the network in clear with "
                   "every request; refused (kubectl sends no credential without TLS): give the "
                   "cluster an https:// server and its certificate-authority",
                   f->path, p.line, p.col, k->context, k->user, field, k->cluster, k->server);
}

static rs_code kc_user(const kc_file *f, const cJSON *u, live_kubeconfig *k, rs_err *e)
{
    const char *cert = NULL, *key = NULL, *token = NULL, *tfile = NULL;
    rs_code c;
    if ((c = kc_str(f, u, "client-certificate", "client-certificate", &cert, e)) != RS_OK ||
        (c = kc_str(f, u, "client-key", "client-key", &key, e)) != RS_OK ||
        (c = kc_str(f, u, "token", "token", &token, e)) != RS_OK ||
        (c = kc_str(f, u, "tokenFile", "tokenFile", &tfile, e)) != RS_OK ||
        (c = kc_b64(f, u, "client-certificate-data", &k->cert_pem, &k->cert_pem_len, e)) != RS_OK ||
        (c = kc_b64(f, u, "client-key-data", &k->key_pem, &k->key_pem_len, e)) != RS_OK)
        return c;
    k->cert_file = kc_path(f, cert);
    k->key_file = kc_path(f, key);
    k->token = token && token[0] ? rs_xstrdup(token) : NULL;
    k->token_file = kc_path(f, tfile);
    if ((c = kc_client_file_check(f, u, k, false, e)) != RS_OK ||
        (c = kc_client_file_check(f, u, k, true, e)) != RS_OK)
        return c;
    const cJSON *ex = kc_map(f, u, "exec", "exec", e, &c);
    if (c != RS_OK) return c;
    if (ex && (c = kc_exec(f, ex, k, e)) != RS_OK) return c;
    return kc_plain_http_check(f, u, k, e);
}

/* The service account a pod runs as, when no kubeconfig exists. */
static rs_code kc_in_cluster(const live_kubeconfig_src *src, live_kubeconfig *k, rs_err *e)
{
    const char *dir = src->sa_dir ? src->sa_dir : SA_DIR_DEFAULT;
    char *tok = rs_xasprintf("%s/token", dir);
    if (!src->sa_host || !src->sa_host[0] || !src->sa_port || !src->sa_port[0] ||
        !file_exists(tok)) {
        free(tok);
        return rs_fail(e, RS_DATAERR,
                       "no kubeconfig: --kubeconfig not given, KUBECONFIG names no existing "
                       "file, ~/.kube/config does not exist, and this is not a pod with a "
                       "service account (KUBERNETES_SERVICE_HOST unset)");
    }
    bool v6 = strchr(src->sa_host, ':') != NULL;
    k->server =
        rs_xasprintf("https://%s%s%s:%s", v6 ? "[" : "", src->sa_host, v6 ? "]" : "", src->sa_port);
    k->token_file = tok;
    k->ca_file = rs_xasprintf("%s/ca.crt", dir);
    k->origin = rs_xstrdup("in-cluster service account");
    k->files = rs_xstrdup(dir);
    k->context = rs_xstrdup("in-cluster");
    k->cluster = rs_xstrdup("in-cluster");
    k->user = rs_xstrdup("service account");
    return RS_OK;
}

static char *kc_files_joined(const kc_set *s)
{
    char *out = rs_xstrdup("");
    for (size_t i = 0; i < s->n; i++) {
        char *n = rs_xasprintf("%s%s%s", out, i ? ", " : "", s->f[i].path);
        free(out);
        out = n;
    }
    return out;
}

static rs_code kc_current(const kc_set *s, const char **name, rs_err *e)
{
    *name = NULL;
    for (size_t i = 0; i < s->n && !*name; i++) {
        const cJSON *root = live_yaml_root(s->f[i].doc);
        if (!cJSON_IsObject(root)) continue;
        rs_code c = kc_str(&s->f[i], root, "current-context", "current-context", name, e);
        if (c != RS_OK) return c;
        if (*name && !(*name)[0]) *name = NULL;
    }
    return RS_OK;
}

static rs_code kc_resolve(const live_kubeconfig_src *src, const kc_set *s, live_kubeconfig *k,
                          rs_err *e)
{
    k->files = kc_files_joined(s);
    const char *ctx = src->context && src->context[0] ? src->context : NULL;
    rs_code c = RS_OK;
    if (!ctx && (c = kc_current(s, &ctx, e)) != RS_OK) return c;
    if (!ctx)
        return rs_fail(e, RS_DATAERR, "kubeconfig %s: no current-context, and no --context given",
                       k->files);
    k->context = rs_xstrdup(ctx);
    const kc_file *cf = NULL, *f = NULL;
    const cJSON *cx = NULL, *m = NULL;
    if ((c = kc_find(s, "contexts", "context", ctx, &cf, &cx, e)) != RS_OK) return c;
    if (!cx)
        return rs_fail(e, RS_DATAERR, "kubeconfig %s: context \"%s\" is not defined%s", k->files,
                       ctx, src->context ? " (--context)" : " (current-context)");
    k->origin = rs_xstrdup(cf->path);
    const char *cl = NULL, *us = NULL;
    if ((c = kc_str(cf, cx, "cluster", "context.cluster", &cl, e)) != RS_OK ||
        (c = kc_str(cf, cx, "user", "context.user", &us, e)) != RS_OK)
        return c;
    if (!cl || !cl[0]) return kc_bad(cf, cx, "context.cluster", "missing", e);
    k->cluster = rs_xstrdup(cl);
    k->user = rs_xstrdup(us ? us : "");
    if ((c = kc_find(s, "clusters", "cluster", cl, &f, &m, e)) != RS_OK) return c;
    if (!m)
        return rs_fail(e, RS_DATAERR,
                       "kubeconfig %s: context \"%s\" names cluster \"%s\", which "
                       "no file defines",
                       k->files, ctx, cl);
    if ((c = kc_cluster(f, m, k, e)) != RS_OK) return c;
    if (!us || !us[0]) return RS_OK; /* no credential: anonymous */
    if ((c = kc_find(s, "users", "user", us, &f, &m, e)) != RS_OK) return c;
    if (!m)
        return rs_fail(e, RS_DATAERR,
                       "kubeconfig %s: context \"%s\" names user \"%s\", which no "
                       "file defines",
                       k->files, ctx, us);
    return kc_user(f, m, k, e);
}

rs_code live_kubeconfig_load(const live_kubeconfig_src *src, live_kubeconfig **out, rs_err *e)
{
    *out = NULL;
    kc_set s = {.n = 0};
    live_kubeconfig *k = rs_xcalloc(1, sizeof *k);
    rs_code c = kc_files(src, &s, e);
    if (c == RS_OK) c = s.n ? kc_resolve(src, &s, k, e) : kc_in_cluster(src, k, e);
    kc_set_free(&s);
    if (c != RS_OK) {
        live_kubeconfig_free(k);
        return c;
    }
    *out = k;
    return RS_OK;
}

void live_kubeconfig_free(live_kubeconfig *k)
{
    if (!k) return;
    free(k->origin);
    free(k->files);
    free(k->context);
    free(k->cluster);
    free(k->user);
    free(k->server);
    free(k->ca_file);
    free(k->ca_pem);
    free(k->tls_server_name);
    free(k->proxy_url);
    free(k->cert_file);
    free(k->key_file);
    free(k->cert_pem);
    if (k->key_pem) cred_bytes_wipe_free(k->key_pem, k->key_pem_len);
    if (k->token) cred_text_wipe_free(k->token);
    free(k->token_file);
    free(k->exec.command);
    for (size_t i = 0; i < k->exec.n_args; i++)
        free(k->exec.args[i]);
    for (size_t i = 0; i < k->exec.n_env; i++)
        cred_text_wipe_free(k->exec.env[i]);
    free(k->exec.api_version);
    free(k->exec.interactive);
    free(k);
}

const char *live_kubeconfig_where(const live_kubeconfig *k, char *buf, size_t len)
{
    snprintf(buf, len, "context %s, server %s%s%s, kubeconfig %s", k->context ? k->context : "?",
             k->server ? k->server : "?", k->proxy_url ? " through proxy " : "",
             k->proxy_url ? k->proxy_url : "", k->origin ? k->origin : "?");
    return buf;
}
