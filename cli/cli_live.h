/*
 * cli_live.h — the live root and the desired credential of `reassert run
 * --transport live` (cli_live.c).
 */
#ifndef CLI_LIVE_H
#define CLI_LIVE_H

#include "cli/cli_options.h"
#include "core/config.h"
#include "core/live/live_root.h"

typedef struct cli_live cli_live;

/* The default --decrypt-command ({file} is the secret file). */
extern const char *const cli_live_decrypt_default;

/* The kubeconfig, OpenBao, registry, talosctl and oracle settings from a's
 * flags and the environment, and the live root over them (RS_DATAERR for a
 * kubeconfig or token file that cannot be used, RS_FAILED for an exec
 * plugin that fails). Without need_kube (--check-only) no kubeconfig is
 * read. Nothing is sent yet. */
rs_code cli_live_open(const rs_run_args *a, const rs_config *cfg, bool need_kube, cli_live **out,
                      rs_err *e);
/* RS_USAGE when BAO_SKIP_VERIFY or VAULT_SKIP_VERIFY asks to skip TLS
 * verification (reassert never does); checked with the other usage errors,
 * before anything is read. */
rs_code cli_live_refuse_skip_verify(rs_err *e);
rs_transport *cli_live_transport(cli_live *l);
void cli_live_close(cli_live *l);

/* The SOPS file's ciphertext (--secret-file) and its plaintext from the
 * decrypt command; RS_DATAERR naming the file otherwise. Caller wipes text
 * (cred_text_wipe_free) and frees ciphertext. */
rs_code cli_live_credential(const rs_run_args *a, char **text, char **ciphertext, rs_err *e);

#endif
