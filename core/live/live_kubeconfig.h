/*
 * live_kubeconfig.h — which API server, with which TLS and which identity:
 * the kubeconfig resolved exactly as kubectl resolves it.
 *
 * Files: `--kubeconfig FILE` alone (it must exist); else every file of
 * KUBECONFIG (':'-separated, in order, duplicates and missing files skipped)
 * merged by kubectl's rule — the first file to define a cluster, user or
 * context name wins, and the first non-empty current-context wins; else
 * ~/.kube/config. With no file at all, the in-cluster service account
 * (KUBERNETES_SERVICE_HOST/PORT, its token and ca.crt) is the fallback.
 * The context: `--context NAME`, else current-context.
 *
 * Relative paths in a file (certificate-authority, client-certificate,
 * client-key, tokenFile, an exec command with a '/') are relative to that
 * file's folder. `*-data` wins over its file form; a tokenFile wins over a
 * token (client-go re-reads the file and prefers it).
 *
 * Errors name the file (file:line:col where the YAML reader knows it), the
 * context and the field: RS_DATAERR (exit 65) for a malformed file, an
 * unknown context, a context naming a cluster or user that no file defines,
 * a server that is not an http(s) URL, base64 that does not decode, and a
 * bearer credential (token, tokenFile, exec) for a plain http server —
 * kubectl never sends one without TLS, and reassert refuses the kubeconfig
 * rather than send it or go anonymous.
 */
#ifndef CORE_LIVE_KUBECONFIG_H
#define CORE_LIVE_KUBECONFIG_H

#include "core/rs.h"

#include <stdbool.h>
#include <stddef.h>

#define LIVE_KUBECONFIG_FILES_MAX 32
#define LIVE_KUBECONFIG_EXEC_ARGS_MAX 64

/* Where to look (cli/ reads the environment and fills this). */
typedef struct live_kubeconfig_src {
    const char *explicit_path;     /* --kubeconfig */
    const char *env;               /* KUBECONFIG */
    const char *home;              /* HOME (for ~/.kube/config) */
    const char *context;           /* --context */
    const char *sa_host, *sa_port; /* KUBERNETES_SERVICE_HOST/PORT */
    const char *sa_dir;            /* NULL: /var/run/secrets/kubernetes.io/serviceaccount */
} live_kubeconfig_src;

typedef struct live_kube_exec {
    char *command;
    char *args[LIVE_KUBECONFIG_EXEC_ARGS_MAX + 1]; /* NULL-terminated */
    size_t n_args;
    char *env[LIVE_KUBECONFIG_EXEC_ARGS_MAX + 1]; /* "NAME=VALUE", NULL-terminated */
    size_t n_env;
    char *api_version;
    char *interactive;         /* Never | IfAvailable | Always */
    bool provide_cluster_info; /* spec.cluster in KUBERNETES_EXEC_INFO */
} live_kube_exec;

typedef struct live_kubeconfig {
    char *origin; /* the file that defined the context ("in-cluster" for the fallback) */
    char *files;  /* every file read, ", "-joined (for errors) */
    char *context, *cluster, *user;
    char *server;
    char *ca_file;
    unsigned char *ca_pem;
    size_t ca_pem_len;
    bool insecure;
    char *tls_server_name, *proxy_url;
    char *cert_file, *key_file;
    unsigned char *cert_pem, *key_pem;
    size_t cert_pem_len, key_pem_len;
    char *token; /* a secret: wiped when freed */
    char *token_file;
    bool has_exec;
    live_kube_exec exec;
} live_kubeconfig;

rs_code live_kubeconfig_load(const live_kubeconfig_src *src, live_kubeconfig **out, rs_err *e);
void live_kubeconfig_free(live_kubeconfig *k);

/* "context C (cluster S, file F)": the words every kube error ends with. */
const char *live_kubeconfig_where(const live_kubeconfig *k, char *buf, size_t len);

#endif
