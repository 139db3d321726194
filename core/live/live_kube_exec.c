/*
 * live_kube_exec.c — the kubeconfig exec credential plugin (see the header).
 *
 * The one idea: a plugin is a program this process does not control, so it
 * gets what the contract promises and nothing else — its own `env`, the
 * exec info, the allow-listed variables — and its answer is read strictly:
 * the wrong apiVersion or kind, no credential, a credential already
 * expired, an unreadable timestamp are each an error, never a guess. Its
 * stderr is never repeated (a failing plugin may print what it was handed).
 */
#define _GNU_SOURCE
#include "core/live/live_kube_exec.h"

#include "core/cred/cred.h"
#include "core/live/live_kube.h"
#include "core/live/live_talos_exec.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A digit exactly where `shape` has a 9 (no sign or space, unlike %d), its
 * other characters literally; the numbers between them into f[]. Returns
 * false when s does not start with that shape. */
static bool rfc3339_shape(const char *s, const char *shape, int *f)
{
    int k = 0;
    f[0] = 0;
    for (size_t i = 0; shape[i]; i++) {
        if (shape[i] != '9' ? s[i] != shape[i] : s[i] < '0' || s[i] > '9') return false;
        if (shape[i] != '9')
            f[++k] = 0;
        else
            f[k] = f[k] * 10 + (s[i] - '0');
    }
    return true;
}

bool live_rfc3339_unix(const char *s, int64_t *out)
{
    int f[6];
    if (!s || !rfc3339_shape(s, "9999-99-99T99:99:99", f)) return false;
    int y = f[0], mo = f[1], d = f[2], h = f[3], mi = f[4], sec = f[5];
    const char *p = s + 19;
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9') return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    long off = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int g[2];
        if (!rfc3339_shape(p + 1, "99:99", g) || g[0] > 23 || g[1] > 59) return false;
        int oh = g[0], om = g[1];
        off = (oh * 3600L + om * 60L) * (*p == '-' ? -1 : 1);
        p += 6;
    } else {
        return false;
    }
    if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return false;
    struct tm tm = {.tm_year = y - 1900,
                    .tm_mon = mo - 1,
                    .tm_mday = d,
                    .tm_hour = h,
                    .tm_min = mi,
                    .tm_sec = sec};
    *out = (int64_t)timegm(&tm) - off;
    return true;
}

static const char *obj_str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_GetStringValue(v);
}

rs_code live_exec_cred_parse(const char *text, const char *api_version, live_exec_cred *c,
                             rs_err *e)
{
    memset(c, 0, sizeof *c);
    cJSON *doc = cJSON_Parse(text);
    rs_code rc = RS_DATAERR;
    const char *api = obj_str(doc, "apiVersion"), *kind = obj_str(doc, "kind");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(doc, "status");
    const char *tok = obj_str(st, "token"), *cert = obj_str(st, "clientCertificateData");
    const char *key = obj_str(st, "clientKeyData"), *exp = obj_str(st, "expirationTimestamp");
    const cJSON *expn = cJSON_GetObjectItemCaseSensitive(st, "expirationTimestamp");
    if (!cJSON_IsObject(doc)) {
        rs_fail(e, rc, "its output is not a JSON ExecCredential");
    } else if (!kind || strcmp(kind, "ExecCredential") != 0) {
        rs_fail(e, rc, "its output's kind is not ExecCredential");
    } else if (!api || strcmp(api, api_version) != 0) {
        rs_fail(e, rc, "its output's apiVersion is not %s", api_version);
    } else if (!cJSON_IsObject(st)) {
        rs_fail(e, rc, "its output has no status");
    } else if (!(tok && tok[0]) && !(cert && cert[0] && key && key[0])) {
        rs_fail(e, rc,
                "its output has neither status.token nor status.clientCertificateData "
                "with status.clientKeyData");
    } else if ((cert && cert[0]) != (key && key[0])) {
        rs_fail(e, rc, "its output has only one of clientCertificateData and clientKeyData");
    } else if (expn && !cJSON_IsNull(expn) && !(exp && live_rfc3339_unix(exp, &c->expires_unix))) {
        rs_fail(e, rc, "its output's status.expirationTimestamp is not an RFC 3339 time");
    } else {
        c->token = tok && tok[0] ? rs_xstrdup(tok) : NULL;
        c->cert_pem = cert && cert[0] ? rs_xstrdup(cert) : NULL;
        c->key_pem = key && key[0] ? rs_xstrdup(key) : NULL;
        rc = RS_OK;
    }
    cred_json_wipe_delete(doc);
    return rc;
}

/* KUBERNETES_EXEC_INFO=<ExecCredential>: spec.interactive false (stdin is
 * closed), and with provideClusterInfo the cluster the plugin authenticates
 * to (server, certificate-authority-data, tls-server-name, proxy-url,
 * insecure-skip-tls-verify), as the contract names the fields. */
static char *exec_info(const live_kubeconfig *kc)
{
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "apiVersion", kc->exec.api_version);
    cJSON_AddStringToObject(d, "kind", "ExecCredential");
    cJSON *spec = cJSON_AddObjectToObject(d, "spec");
    cJSON_AddBoolToObject(spec, "interactive", false);
    if (kc->exec.provide_cluster_info) {
        cJSON *cl = cJSON_AddObjectToObject(spec, "cluster");
        cJSON_AddStringToObject(cl, "server", kc->server ? kc->server : "");
        if (kc->tls_server_name)
            cJSON_AddStringToObject(cl, "tls-server-name", kc->tls_server_name);
        if (kc->proxy_url) cJSON_AddStringToObject(cl, "proxy-url", kc->proxy_url);
        if (kc->insecure) cJSON_AddBoolToObject(cl, "insecure-skip-tls-verify", true);
        if (kc->ca_pem) {
            char *b64 = base64_encode(kc->ca_pem, kc->ca_pem_len);
            cJSON_AddStringToObject(cl, "certificate-authority-data", b64);
            free(b64);
        }
    }
    char *text = cJSON_PrintUnformatted(d);
    cJSON_Delete(d);
    char *env = rs_xasprintf("KUBERNETES_EXEC_INFO=%s", text);
    free(text);
    return env;
}

rs_code live_exec_cred_get(const live_kubeconfig *kc, int64_t now_unix, live_exec_cred *c,
                           rs_err *e)
{
    memset(c, 0, sizeof *c);
    const live_kube_exec *x = &kc->exec;
    char where[512];
    live_kubeconfig_where(kc, where, sizeof where);
    if (strcmp(x->api_version, "client.authentication.k8s.io/v1") != 0 &&
        strcmp(x->api_version, "client.authentication.k8s.io/v1beta1") != 0)
        return rs_fail(e, RS_DATAERR,
                       "exec plugin of user %s (%s): apiVersion %s is not "
                       "client.authentication.k8s.io/v1 or v1beta1",
                       kc->user, where, x->api_version);
    if (strcmp(x->interactive, "Always") == 0)
        return rs_fail(e, RS_DATAERR,
                       "exec plugin of user %s (%s): interactiveMode Always needs "
                       "a terminal, and a deploy has none",
                       kc->user, where);
    char *argv[LIVE_KUBECONFIG_EXEC_ARGS_MAX + 2];
    size_t n = 0;
    argv[n++] = x->command;
    for (size_t i = 0; i < x->n_args; i++)
        argv[n++] = x->args[i];
    argv[n] = NULL;
    const char *env[LIVE_KUBECONFIG_EXEC_ARGS_MAX + 2];
    size_t m = 0;
    for (size_t i = 0; i < x->n_env; i++)
        env[m++] = x->env[i];
    char *info = exec_info(kc);
    env[m++] = info;
    env[m] = NULL;
    live_exec_result r;
    rs_err why;
    rs_err_clear(&why);
    rs_code rc = live_exec_run_env(argv, NULL, env, LIVE_KUBE_EXEC_TIMEOUT_MS,
                                   LIVE_KUBE_EXEC_OUTPUT_MAX, &r, &why);
    free(info);
    if (rc != RS_OK) {
        live_exec_result_free(&r);
        return rs_fail(e, RS_FAILED, "exec plugin %s of user %s (%s): %s", x->command, kc->user,
                       where, why.msg);
    }
    if (r.timed_out || r.overflow || r.exit_code != 0) {
        rs_fail(e, RS_FAILED,
                "exec plugin %s of user %s (%s) failed: %s (its stderr, %zu bytes, is not "
                "shown: it may hold a credential)",
                x->command, kc->user, where,
                r.timed_out  ? "timed out"
                : r.overflow ? "printed too much"
                             : "non-zero exit",
                r.err_len);
        live_exec_result_free(&r);
        return RS_FAILED;
    }
    rc = live_exec_cred_parse(r.out, x->api_version, c, &why);
    live_exec_result_free(&r);
    if (rc != RS_OK)
        return rs_fail(e, rc, "exec plugin %s of user %s (%s): %s", x->command, kc->user, where,
                       why.msg);
    if (c->expires_unix && c->expires_unix <= now_unix) {
        live_exec_cred_free(c);
        return rs_fail(e, RS_FAILED,
                       "exec plugin %s of user %s (%s) returned a credential that "
                       "has already expired (expirationTimestamp in the past)",
                       x->command, kc->user, where);
    }
    return RS_OK;
}

void live_exec_cred_free(live_exec_cred *c)
{
    if (!c) return;
    if (c->token) cred_text_wipe_free(c->token);
    free(c->cert_pem);
    if (c->key_pem) cred_text_wipe_free(c->key_pem);
    memset(c, 0, sizeof *c);
}
