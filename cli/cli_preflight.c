/*
 * cli_preflight.c — every external input a live run's mode uses, checked
 * before the run makes its first cluster call (see cli_live.h).
 *
 * A live run needs programs (talosctl, the decrypt command, an exec
 * plugin, the liveness command), files (the kubeconfig and what it names,
 * the talosconfig, the SOPS file, token and CA files) and environment
 * (BAO_ADDR and a token). Found missing one at a time, each costs a deploy a
 * try; found missing after the fence, a missing talosctl has already taken
 * the Lease, paused Flux and restarted the controller. So every input the
 * mode uses is looked at here, together, without running anything or
 * touching the network, and every problem is reported at once.
 *
 * Exit codes (DESIGN §7: 64 wins over 65): 64 when the invocation names no
 * source at all for an input the mode needs — BAO_ADDR/VAULT_ADDR, or an
 * OpenBao token (--openbao-token-file, BAO_TOKEN, VAULT_TOKEN) for the lazy
 * repair; 65 when an input was named, or found where its documented default
 * points, and cannot be used: a file missing, unreadable or not a regular
 * file, a program that is not there or not executable, a malformed
 * kubeconfig or secret file, a secret too short to redact (cli_live.c).
 *
 * What each mode uses (nothing else is demanded):
 *   repair (and --allow-incomplete-fanout): kubeconfig, the credential
 *     (secret file, decrypt command), talosctl and a talosconfig, the
 *     registry's CA file when named; lazy also OpenBao (address, token, CA);
 *   --check-only: the credential and the registry alone;
 *   --fences, --recover-fences: the kubeconfig, and the liveness command
 *     when one is given (no credential, H27; no Talos, no OpenBao).
 */
#include "cli/cli_live.h"

#include "core/cred/cred_redact.h"
#include "core/live/live_oracle.h"
#include "core/live/live_text.h"
#include "recorder/rec_cassette.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* Where talosctl looks for its configuration when neither --talosconfig
 * nor TALOSCONFIG names one, in order (Talos's client config defaults). */
static const char *const talosconfig_in_cluster = "/var/run/secrets/talos.dev/config";

void cli_problem(cli_problems *p, rs_code code, const char *fmt, ...)
{
    if (p->n == CLI_PROBLEMS_MAX) {
        p->dropped++;
        p->worst = rs_code_worst(p->worst, code);
        return;
    }
    rs_err *e = &p->item[p->n++];
    e->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    p->worst = rs_code_worst(p->worst, code);
}

void cli_problem_err(cli_problems *p, const rs_err *e)
{
    cli_problem(p, e->code, "%s", e->msg);
}

void cli_live_needs_of(const rs_run_args *a, cli_live_needs *n)
{
    const rs_strategy *st =
        a->strategy_name ? rs_strategy_find(a->strategy_name) : rs_strategy_default();
    bool inspects = a->opt.mode == RS_MODE_FENCES || a->opt.mode == RS_MODE_RECOVER_FENCES;
    bool repair = a->opt.mode == RS_MODE_REPAIR;
    *n = (cli_live_needs){
        .kube = a->opt.mode != RS_MODE_CHECK_ONLY,
        .credential = !inspects,
        .talos = repair,
        /* The lazy repair reads the OpenBao seed directly (DESIGN §3.5);
         * eager force-syncs and never does. */
        .bao = repair && st && strcmp(st->name, "lazy") == 0,
        .liveness = inspects && a->liveness_command && a->liveness_command[0],
    };
}

/* Whether path is a regular file this process may execute; why[] if not. */
static bool exec_usable(const char *path, char *why, size_t whylen)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        return false;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, whylen, "%s",
                 S_ISDIR(st.st_mode) ? "it is a directory" : "it is not a regular file");
        return false;
    }
    if (access(path, X_OK) != 0) {
        snprintf(why, whylen, "it is not executable (%s)", strerror(errno));
        return false;
    }
    return true;
}

/* prog as execvpe finds it: a name with a '/' as it is, else the first
 * usable file of that name on PATH. Problem (65) naming what when none. */
static void check_program(cli_problems *p, const char *what, const char *prog)
{
    char why[192] = "";
    if (strchr(prog, '/')) {
        if (!exec_usable(prog, why, sizeof why))
            cli_problem(p, RS_DATAERR, "%s %s: %s", what, prog, why);
        return;
    }
    const char *path = getenv("PATH");
    if (!path || !path[0]) path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *d = path; *d;) {
        size_t len = strcspn(d, ":");
        char cand[PATH_MAX];
        int w = snprintf(cand, sizeof cand, "%.*s/%s", (int)len, len ? d : ".", prog);
        if (w > 0 && (size_t)w < sizeof cand && exec_usable(cand, why, sizeof why)) return;
        d += len;
        if (*d == ':') d++;
    }
    cli_problem(p, RS_DATAERR, "%s %s: no executable file of that name on PATH", what, prog);
}

/* A file the run (or a child) will read: there, regular and readable. */
void cli_check_readable(cli_problems *p, const char *what, const char *path)
{
    char why[192];
    FILE *f = live_fopen_regular(path, NULL, why, sizeof why); /* a FIFO never blocks it */
    if (!f) {
        cli_problem(p, RS_DATAERR, "%s %s: %s", what, path, why);
        return;
    }
    fclose(f);
}

/* The talosconfig talosctl will read: --talosconfig, else TALOSCONFIG, else
 * the first of ~/.talos/config and the in-cluster mount that exists. */
static void check_talosconfig(cli_problems *p, const rs_run_args *a)
{
    if (a->talosconfig) {
        cli_check_readable(p, "--talosconfig", a->talosconfig);
        return;
    }
    const char *env = getenv("TALOSCONFIG");
    if (env && env[0]) {
        cli_check_readable(p, "TALOSCONFIG", env);
        return;
    }
    const char *home = getenv("HOME");
    char *dflt = home && home[0] ? rs_xasprintf("%s/.talos/config", home) : NULL;
    struct stat st;
    if (dflt && stat(dflt, &st) == 0)
        cli_check_readable(p, "talosconfig", dflt);
    else if (stat(talosconfig_in_cluster, &st) == 0)
        cli_check_readable(p, "talosconfig", talosconfig_in_cluster);
    else
        cli_problem(p, RS_DATAERR,
                    "no talosconfig for talosctl: --talosconfig not given, TALOSCONFIG unset, "
                    "and neither ~/.talos/config nor %s exists",
                    talosconfig_in_cluster);
    free(dflt);
}

/* A command template's program (its first word). A template that cannot be
 * split is the caller's to report when it runs it (64). */
static void check_template_program(cli_problems *p, const char *what, const char *tmpl)
{
    char **w = NULL;
    size_t n = 0;
    rs_err e;
    rs_err_clear(&e);
    if (live_words_split(tmpl, what, &w, &n, &e) != RS_OK) {
        cli_problem_err(p, &e);
        return;
    }
    if (n == 0)
        cli_problem(p, RS_USAGE, "%s is empty", what);
    else
        check_program(p, what, w[0]);
    live_words_free(w, n);
}

void cli_live_preflight_static(const rs_run_args *a, const cli_live_needs *n, cli_problems *p)
{
    if (n->credential) {
        check_template_program(p, "--decrypt-command",
                               a->decrypt_command ? a->decrypt_command : cli_live_decrypt_default);
        const char *ca = getenv("REASSERT_REGISTRY_CACERT");
        if (ca && ca[0]) cli_check_readable(p, "REASSERT_REGISTRY_CACERT", ca);
        /* The proof sends the credential (basic auth) and pull tokens. */
        const char *url = getenv("REASSERT_REGISTRY_URL");
        if (url && strncasecmp(url, "http://", 7) == 0)
            cli_problem(p, RS_DATAERR,
                        "REASSERT_REGISTRY_URL %s is plain http, so the registry credential and "
                        "its pull tokens would cross the network in clear; refused: give an "
                        "https:// URL (and REASSERT_REGISTRY_CACERT for its CA)",
                        url);
    }
    if (n->talos) {
        check_program(p, a->talosctl ? "--talosctl" : "talosctl",
                      a->talosctl ? a->talosctl : "talosctl");
        check_talosconfig(p, a);
    }
    if (n->liveness) check_template_program(p, "--liveness-command", a->liveness_command);
    const char *taken = a->record ? rec_cassette_taken(a->record) : NULL;
    if (taken)
        cli_problem(p, RS_USAGE,
                    "--record %s %s; a cassette never replaces a file nor writes through a "
                    "symbolic link",
                    a->record, taken);
}

void cli_live_preflight_kube(const live_kubeconfig *kc, cli_problems *p)
{
    if (kc && kc->has_exec) {
        char what[256];
        snprintf(what, sizeof what, "the exec plugin of user %s (kubeconfig %s)", kc->user,
                 kc->origin);
        check_program(p, what, kc->exec.command);
    }
}

/* The names a run prints that come from its configuration: a secret found
 * inside one would be cut out of every line that names it. NULL-terminated,
 * pointers into cfg; caller frees the array. */
static const char **config_names(const rs_config *cfg)
{
    const char *fixed[] = {cfg->lease_ns,
                           cfg->lease_name,
                           cfg->parent_ns,
                           cfg->parent_name,
                           cfg->child_ns,
                           cfg->child_name,
                           cfg->controller_ns,
                           cfg->controller_name,
                           cfg->controller_selector,
                           cfg->operator_image,
                           cfg->registry_host,
                           cfg->openbao_mount,
                           cfg->openbao_path,
                           cfg->openbao_property,
                           cfg->variables_ns,
                           cfg->variables_name,
                           cfg->variables_key,
                           cfg->pushsecret_ns,
                           cfg->pushsecret_name,
                           cfg->externalsecret_name,
                           cfg->consumer_name,
                           cfg->consumer_key,
                           cfg->root_ns,
                           cfg->root_name,
                           cfg->root_key,
                           cfg->ann.revision,
                           cfg->ann.image,
                           cfg->ann.drain_owner,
                           cfg->ann.drain_journal,
                           cfg->ann.drain_phase,
                           cfg->ann.parent_owner,
                           cfg->ann.child_owner,
                           cfg->ann.reconcile,
                           cfg->ann.restarted_at,
                           cfg->ann.force_sync,
                           cfg->ann.requested_at};
    size_t nf = RS_ARRAY_LEN(fixed);
    const char **out = rs_xcalloc(nf + cfg->n_fanout + cfg->n_pull_targets + 1, sizeof *out);
    size_t n = 0;
    for (size_t i = 0; i < nf; i++)
        if (fixed[i]) out[n++] = fixed[i];
    for (size_t i = 0; i < cfg->n_fanout; i++)
        out[n++] = cfg->fanout_namespaces[i];
    for (size_t i = 0; i < cfg->n_pull_targets; i++)
        out[n++] = cfg->pull_targets[i];
    out[n] = NULL;
    return out;
}

void cli_secret_check(cli_problems *p, const rs_config *cfg, const char *what, const char *secret)
{
    if (!secret) return;
    const char **names = config_names(cfg);
    const char *why = cred_secret_unsafe(secret, strlen(secret), names);
    free(names);
    if (why)
        cli_problem(p, RS_DATAERR,
                    "%s %s, too weak to keep out of the output (every line would lose that text "
                    "to redaction); refused: use a secret of at least %d bytes that is no "
                    "common word",
                    what, why, CRED_SECRET_MIN);
}
