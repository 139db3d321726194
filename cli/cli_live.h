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

/* What a live run's mode uses from outside (cli_preflight.c says why each). */
typedef struct cli_live_needs {
    bool kube;       /* the kubeconfig: every mode but --check-only */
    bool credential; /* the SOPS file and the decrypt command: all but --fences/--recover-fences */
    bool talos;      /* talosctl and a talosconfig: the repair modes */
    bool bao;        /* OpenBao's address and token: the lazy repair */
    bool liveness;   /* the liveness command: --fences/--recover-fences, when given */
} cli_live_needs;
void cli_live_needs_of(const rs_run_args *a, cli_live_needs *n);

/* Every problem with a run's inputs, collected so they are reported
 * together (one error each); worst is the exit code (64 over 65 over 1). */
#define CLI_PROBLEMS_MAX 16
typedef struct cli_problems {
    rs_err item[CLI_PROBLEMS_MAX];
    size_t n, dropped; /* dropped: past the bound, counted, not kept */
    rs_code worst;
} cli_problems;
void cli_problem(cli_problems *p, rs_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void cli_problem_err(cli_problems *p, const rs_err *e);

/* Preflight, before anything runs or is sent: the kubeconfig loaded (files
 * only: no exec plugin runs), the OpenBao token read, the secret file's
 * ciphertext read, and every program and file the mode uses looked at
 * (cli_preflight.c). Every problem goes into p; the cli_live comes back
 * either way (close it). */
cli_live *cli_live_prepare(const rs_run_args *a, const rs_config *cfg, const cli_live_needs *n,
                           cli_problems *p);
/* What the run's inputs ask that it should warn about, as kubectl warns
 * (insecure-skip-tls-verify: true), NULL-terminated; cli_live_prepare
 * collects them, the run writes each to stderr at once and into its
 * result's warnings. Valid until close. */
const char *const *cli_live_warnings(const cli_live *l);

/* cli_preflight.c's checks, for cli_live_prepare. */
void cli_live_preflight_static(const rs_run_args *a, const cli_live_needs *n, cli_problems *p);
void cli_live_preflight_kube(const live_kubeconfig *kc, cli_problems *p);
void cli_check_readable(cli_problems *p, const char *what, const char *path);

/* A secret of the run's inputs (what names it: "the OpenBao token from
 * BAO_TOKEN") that redaction could not keep out of the output without
 * mangling it (cred_secret_unsafe, against cfg's names): a problem (65)
 * naming the input, never its value. */
void cli_secret_check(cli_problems *p, const rs_config *cfg, const char *what, const char *secret);

/* The desired credential: the secret file's ciphertext (read by prepare)
 * and its plaintext from the decrypt command; RS_DATAERR naming the file
 * otherwise. Caller wipes text (cred_text_wipe_free) and frees ciphertext. */
rs_code cli_live_credential(const rs_run_args *a, cli_live *l, char **text, char **ciphertext,
                            rs_err *e);

/* The live root over what prepare read (runs an exec plugin, reads a token
 * file): RS_FAILED for an exec plugin that fails. Nothing is sent yet. */
rs_code cli_live_start(cli_live *l, const rs_run_args *a, const rs_config *cfg, rs_err *e);
/* RS_USAGE when BAO_SKIP_VERIFY or VAULT_SKIP_VERIFY asks to skip TLS
 * verification (reassert never does); checked with the other usage errors,
 * before anything is read. */
rs_code cli_live_refuse_skip_verify(rs_err *e);
/* After start, before the first call: the secrets known only now (the
 * desired credential's password, text; the bearer token the root will
 * send, from a kubeconfig, a tokenFile or an exec plugin) checked as
 * cli_secret_check does; RS_DATAERR when one was added to p. */
rs_code cli_live_secrets_check(cli_live *l, const rs_config *cfg, const char *text,
                               cli_problems *p);
rs_transport *cli_live_transport(cli_live *l);
/* The secrets read so far (the OpenBao token, the kube bearer), for a
 * cassette's redaction, NULL-terminated in out[0..max]. */
size_t cli_live_known(const cli_live *l, const char **out, size_t max);
void cli_live_close(cli_live *l);

#endif
