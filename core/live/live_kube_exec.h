/*
 * live_kube_exec.h — a kubeconfig `exec` credential plugin, run as the
 * client.authentication.k8s.io ExecCredential contract describes: the
 * command with its args (no shell), KUBERNETES_EXEC_INFO and the entry's
 * `env` added to an allow-listed environment (a token this process holds
 * for another service never reaches the plugin), stdin closed (so
 * interactiveMode Always is refused), stdout one ExecCredential whose
 * apiVersion is the one asked for, with status.token or
 * status.clientCertificateData + clientKeyData, and an optional
 * expirationTimestamp (RFC 3339).
 */
#ifndef CORE_LIVE_KUBE_EXEC_H
#define CORE_LIVE_KUBE_EXEC_H

#include "core/live/live_kubeconfig.h"
#include "core/rs.h"

#include <stdint.h>

typedef struct live_exec_cred {
    char *token;              /* secret: wiped when freed */
    char *cert_pem, *key_pem; /* key: secret */
    int64_t expires_unix;     /* 0: no expiry */
} live_exec_cred;

/* Parses the plugin's stdout strictly; RS_DATAERR naming what is wrong. */
rs_code live_exec_cred_parse(const char *text, const char *api_version, live_exec_cred *c,
                             rs_err *e);
/* Runs kc's plugin and parses its answer. RS_FAILED when it cannot run,
 * fails, or answers a credential already expired at now_unix. */
rs_code live_exec_cred_get(const live_kubeconfig *kc, int64_t now_unix, live_exec_cred *c,
                           rs_err *e);
void live_exec_cred_free(live_exec_cred *c);

/* "2026-01-02T03:04:05Z" / "...05.123+01:00" -> seconds since the epoch;
 * false when malformed. */
bool live_rfc3339_unix(const char *s, int64_t *out);

#endif
