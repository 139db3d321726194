/*
 * cli_live.c — what `reassert run --transport live` needs from outside the
 * core: the kubeconfig (flags and KUBECONFIG/HOME), OpenBao's address, token
 * and CA (BAO_* / VAULT_*), the registry's URL override, talosctl, the
 * liveness command, and the desired credential — the SOPS file's ciphertext
 * (the revision) and its plaintext from --decrypt-command (DESIGN §7).
 *
 * Like cli_options.c, this file reads the environment; core/ never does.
 *
 * The one idea: a secret comes from a file or the environment into memory
 * and goes nowhere else — the decrypt command's stdout is the credential, so
 * it is read through a pipe and wiped; its stderr (which can echo a key or a
 * forged workflow command) is never repeated, only its size and the exit
 * status are named.
 */
#include "cli/cli_live.h"

#include "core/cred/cred.h"
#include "core/live/live_oracle.h"
#include "core/live/live_talos_exec.h"
#include "core/live/live_text.h"
#include "core/live/live_yaml.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define CLI_SECRET_MAX (64u * 1024u)
#define CLI_DECRYPT_TIMEOUT_MS 120000
#define CLI_DECRYPT_OUTPUT_MAX (1024u * 1024u)

const char *const cli_live_decrypt_default =
    "sops --decrypt --extract '[\"stringData\"][\"ghcr_dockerconfigjson\"]' {file}";

/* What the decrypt command may see besides the base allow-list: the keys
 * sops needs. Never an OpenBao or Kubernetes token. */
static const char *const decrypt_env[] = {"SOPS_AGE_KEY_FILE",
                                          "SOPS_AGE_KEY",
                                          "SOPS_AGE_SSH_PRIVATE_KEY_FILE",
                                          "GNUPGHOME",
                                          "SOPS_GPG_EXEC",
                                          "SOPS_PGP_FP",
                                          "AWS_PROFILE",
                                          "AWS_REGION",
                                          "AWS_ACCESS_KEY_ID",
                                          "AWS_SECRET_ACCESS_KEY",
                                          "AWS_SESSION_TOKEN",
                                          "GOOGLE_APPLICATION_CREDENTIALS",
                                          "AZURE_CLIENT_ID",
                                          "AZURE_TENANT_ID",
                                          "AZURE_CLIENT_SECRET",
                                          NULL};

struct cli_live {
    cli_live_needs needs;
    live_kubeconfig *kc;
    rs_transport *root;
    char *bao_token;
    char *bao_token_path; /* ~/.vault-token when the token came from it */
    bool bao_set;         /* an address and a token: the lazy repair's OpenBao client */
    live_bao_opts bao;
    char *ciphertext;  /* the secret file's stringData.ghcr_dockerconfigjson */
    char *warnings[4]; /* NULL-terminated */
    size_t n_warnings;
};

static rs_code secret_ciphertext(const char *path, char **out, rs_err *e);

static const char *env_first(const char *a, const char *b)
{
    const char *v = getenv(a);
    if (v && v[0]) return v;
    v = b ? getenv(b) : NULL;
    return v && v[0] ? v : NULL;
}

/* A token file's text (trimmed) in *out, or RS_DATAERR naming the file.
 * With empty_ok, a file that is empty once trimmed is no token (*out NULL,
 * RS_OK), as a token helper's is. */
static rs_code read_token_file(const char *flag, const char *path, bool empty_ok, char **out,
                               rs_err *e)
{
    *out = NULL;
    char why_open[160];
    FILE *f = live_fopen_regular(path, NULL, why_open, sizeof why_open); /* never blocks */
    if (!f) return rs_fail(e, RS_DATAERR, "%s %s: %s", flag, path, why_open);
    char *buf = rs_xmalloc(CLI_SECRET_MAX + 2);
    size_t n = fread(buf, 1, CLI_SECRET_MAX + 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *why = n > CLI_SECRET_MAX     ? "is too large"
                      : memchr(buf, '\0', n) ? "has a NUL"
                                             : NULL;
    while (!why && n && strchr(" \t\r\n", buf[n - 1]))
        buf[--n] = '\0';
    if (!why && !n && empty_ok) {
        cred_bytes_wipe_free(buf, CLI_SECRET_MAX + 2);
        return RS_OK;
    }
    if (!why && !n) why = "is empty";
    if (why) {
        cred_bytes_wipe_free(buf, CLI_SECRET_MAX + 2);
        return rs_fail(e, RS_DATAERR, "%s %s %s", flag, path, why);
    }
    *out = buf;
    return RS_OK;
}

/* BAO_SKIP_VERIFY / VAULT_SKIP_VERIFY ask the bao and vault CLIs to skip
 * TLS verification. reassert never does: a deploy that asked for it and ran
 * verified anyway would hide that the address cannot be trusted, so a value
 * that means true (or that Go's strconv.ParseBool, which those CLIs use,
 * cannot read) is refused. A value that means false asks for what is done. */
rs_code cli_live_refuse_skip_verify(rs_err *e)
{
    static const char *const names[] = {"BAO_SKIP_VERIFY", "VAULT_SKIP_VERIFY"};
    static const char *const falses[] = {"0", "f", "F", "false", "FALSE", "False"};
    for (size_t i = 0; i < RS_ARRAY_LEN(names); i++) {
        const char *v = getenv(names[i]);
        if (!v || !v[0]) continue;
        bool off = false;
        for (size_t j = 0; j < RS_ARRAY_LEN(falses); j++)
            off = off || strcmp(v, falses[j]) == 0;
        if (!off)
            return rs_fail(e, RS_USAGE,
                           "%s is set: reassert never skips TLS verification of OpenBao; unset "
                           "it and give the server's CA with BAO_CACERT or BAO_CAPATH",
                           names[i]);
    }
    return RS_OK;
}

/* The token the bao and vault CLIs' default token helper stored at login
 * (~/.vault-token, the name OpenBao kept). Absent or empty: no token, as
 * for those CLIs; present but not a readable regular file: an error. */
static rs_code bao_token_helper_file(cli_live *l, rs_err *e)
{
    const char *home = getenv("HOME");
    if (!home || !home[0]) return RS_OK;
    char *path = rs_xasprintf("%s/.vault-token", home);
    struct stat st;
    rs_code c = RS_OK;
    if (stat(path, &st) == 0 || errno != ENOENT)
        c = read_token_file("the OpenBao token helper's file", path, true, &l->bao_token, e);
    if (!l->bao_token) {
        free(path);
        return c;
    }
    l->bao_token_path = path;
    return RS_OK;
}

/* OpenBao's address, token and CA (the lazy repair alone reads it): every
 * problem into p. The token as the bao and vault CLIs look for it: the flag
 * (--openbao-token-file), else BAO_TOKEN, else VAULT_TOKEN, else the token
 * helper's ~/.vault-token. */
static void bao_options(const rs_run_args *a, const rs_config *cfg, cli_live *l, cli_problems *p)
{
    const char *addr = env_first("BAO_ADDR", "VAULT_ADDR");
    if (!addr)
        cli_problem(p, RS_USAGE,
                    "the lazy strategy reads the OpenBao seed directly: set BAO_ADDR (or "
                    "VAULT_ADDR)");
    const char *src = NULL;
    rs_err e;
    rs_err_clear(&e);
    if (a->openbao_token_file) {
        if (read_token_file("--openbao-token-file", a->openbao_token_file, false, &l->bao_token,
                            &e) != RS_OK)
            cli_problem_err(p, &e);
        src = a->openbao_token_file;
    } else {
        const char *bao = getenv("BAO_TOKEN");
        src = bao && bao[0] ? "BAO_TOKEN" : "VAULT_TOKEN";
        const char *t = getenv(src);
        if (t && t[0]) {
            l->bao_token = rs_xstrdup(t);
        } else if (bao_token_helper_file(l, &e) != RS_OK) {
            cli_problem_err(p, &e);
        } else if (l->bao_token) {
            src = l->bao_token_path;
        } else {
            cli_problem(p, RS_USAGE,
                        "the lazy strategy reads the OpenBao seed with a token: give "
                        "--openbao-token-file FILE, set BAO_TOKEN (or VAULT_TOKEN), or log in "
                        "with bao (~/.vault-token)");
        }
    }
    l->bao = (live_bao_opts){.addr = addr,
                             .token = l->bao_token,
                             .token_src = src,
                             .ca_file = env_first("BAO_CACERT", "VAULT_CACERT"),
                             .ca_path = env_first("BAO_CAPATH", "VAULT_CAPATH"),
                             .name_space = env_first("BAO_NAMESPACE", "VAULT_NAMESPACE")};
    if (l->bao.ca_file)
        cli_check_readable(p, getenv("BAO_CACERT") ? "BAO_CACERT" : "VAULT_CACERT", l->bao.ca_file);
    struct stat st;
    if (l->bao.ca_path && (stat(l->bao.ca_path, &st) != 0 || !S_ISDIR(st.st_mode)))
        cli_problem(p, RS_DATAERR, "%s %s: not a directory",
                    getenv("BAO_CAPATH") ? "BAO_CAPATH" : "VAULT_CAPATH", l->bao.ca_path);
    if (l->bao_token) {
        char what[512];
        snprintf(what, sizeof what, "the OpenBao token from %s%s",
                 a->openbao_token_file ? "--openbao-token-file " : "", src);
        cli_secret_check(p, cfg, what, l->bao_token);
    }
    /* The token goes in X-Vault-Token with every read: never in clear. */
    if (addr && l->bao_token && strncasecmp(addr, "http://", 7) == 0)
        cli_problem(p, RS_DATAERR,
                    "%s %s is plain http, so the OpenBao token from %s would cross the network in "
                    "clear; refused: give an https:// address (and BAO_CACERT for its CA)",
                    env_first("BAO_ADDR", NULL) ? "BAO_ADDR" : "VAULT_ADDR", addr, src);
    l->bao_set = addr && l->bao_token;
}

cli_live *cli_live_prepare(const rs_run_args *a, const rs_config *cfg, const cli_live_needs *n,
                           cli_problems *p)
{
    cli_live *l = rs_xcalloc(1, sizeof *l);
    l->needs = *n;
    /* The TEST-ONLY façade clock is read through the kubeconfig's server. */
    if (n->kube || a->test_facade_clock) {
        live_kubeconfig_src src = {.explicit_path = a->kubeconfig,
                                   .env = getenv("KUBECONFIG"),
                                   .home = getenv("HOME"),
                                   .context = a->context,
                                   .sa_host = getenv("KUBERNETES_SERVICE_HOST"),
                                   .sa_port = getenv("KUBERNETES_SERVICE_PORT")};
        rs_err e;
        rs_err_clear(&e);
        if (live_kubeconfig_load(&src, &l->kc, &e) != RS_OK) cli_problem_err(p, &e);
        cli_live_preflight_kube(l->kc, p);
        if (l->kc && l->kc->insecure) {
            /* Honoured, as kubectl honours it, but never silently: the
             * bearer token goes to whoever answers. */
            char where[512];
            l->warnings[l->n_warnings++] = rs_xasprintf(
                "insecure-skip-tls-verify: true for cluster %s (%s): the API server's certificate "
                "is not verified, so whoever answers at that address gets this run's credentials",
                l->kc->cluster, live_kubeconfig_where(l->kc, where, sizeof where));
        }
    }
    if (n->bao) bao_options(a, cfg, l, p);
    if (n->credential) {
        rs_err e;
        rs_err_clear(&e);
        if (secret_ciphertext(a->secret_file, &l->ciphertext, &e) != RS_OK) cli_problem_err(p, &e);
    }
    cli_live_preflight_static(a, n, p);
    return l;
}

rs_code cli_live_start(cli_live *l, const rs_run_args *a, const rs_config *cfg, rs_err *e)
{
    live_root_opts o = {.kc = l->kc,
                        .bao_set = l->bao_set,
                        .bao = l->bao,
                        .registry = {.url = getenv("REASSERT_REGISTRY_URL"),
                                     .ca_file = getenv("REASSERT_REGISTRY_CACERT")},
                        .talos = {.talosctl = a->talosctl,
                                  .talosconfig = a->talosconfig,
                                  .shape = cfg->talos_auth_shape},
                        .oracle = {.command = a->liveness_command},
                        .facade_clock = a->test_facade_clock};
    return live_root_open(&o, &l->root, e);
}

rs_code cli_live_secrets_check(cli_live *l, const rs_config *cfg, const char *text, cli_problems *p)
{
    size_t before = p->n;
    rs_cred cred = {0};
    rs_err e;
    rs_err_clear(&e);
    /* A credential that does not parse is the core's to refuse, by name. */
    if (text && cred_parse(text, strlen(text), "desired credential", &cred, &e) == RS_OK)
        cli_secret_check(p, cfg, "the desired credential's ghcr.io password (--decrypt-command)",
                         cred.password);
    cred_free(&cred);
    const char *bearer = l->root ? live_root_kube_bearer(l->root) : NULL;
    if (bearer && l->kc) {
        char what[768];
        snprintf(what, sizeof what, "the bearer token of user %s (kubeconfig %s, context %s: %s)",
                 l->kc->user, l->kc->origin, l->kc->context,
                 l->kc->token_file ? "tokenFile"
                 : l->kc->has_exec ? "exec"
                                   : "token");
        cli_secret_check(p, cfg, what, bearer);
    }
    return p->n > before ? RS_DATAERR : RS_OK;
}

const char *const *cli_live_warnings(const cli_live *l)
{
    return (const char *const *)l->warnings;
}

size_t cli_live_known(const cli_live *l, const char **out, size_t max)
{
    size_t n = l->root ? live_root_secrets(l->root, out, max) : 0;
    if (!l->root && l->bao_token && n < max) out[n++] = l->bao_token;
    if (!l->root && l->kc && l->kc->token && n < max) out[n++] = l->kc->token;
    return n;
}

rs_transport *cli_live_transport(cli_live *l)
{
    return l->root;
}

void cli_live_close(cli_live *l)
{
    if (!l) return;
    if (l->root) l->root->close(l->root);
    live_kubeconfig_free(l->kc);
    if (l->bao_token) cred_text_wipe_free(l->bao_token);
    free(l->bao_token_path);
    free(l->ciphertext);
    for (size_t i = 0; i < l->n_warnings; i++)
        free(l->warnings[i]);
    free(l);
}

/* ---- the desired credential --------------------------------------------- */

/* The ciphertext scalar stringData.ghcr_dockerconfigjson of the SOPS file. */
static rs_code secret_ciphertext(const char *path, char **out, rs_err *e)
{
    live_yaml_doc *d = NULL;
    rs_code c = live_yaml_load(path, "secret file", &d, e);
    if (c != RS_OK) return c;
    const cJSON *sd = cJSON_GetObjectItemCaseSensitive(live_yaml_root(d), "stringData");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(sd, "ghcr_dockerconfigjson");
    const char *text = cJSON_GetStringValue(v);
    if (!text || !text[0]) {
        live_yaml_free(d);
        return rs_fail(e, RS_DATAERR,
                       "%s: secret file: stringData.ghcr_dockerconfigjson is "
                       "missing or not a string",
                       path);
    }
    *out = rs_xstrdup(text);
    live_yaml_free(d);
    return RS_OK;
}

/* argv from the template: {file} replaced by the secret file, else the file
 * appended as the last word. */
static rs_code decrypt_argv(const char *tmpl, const char *file, char ***argv, size_t *n, rs_err *e)
{
    rs_code c = live_words_split(tmpl, "--decrypt-command", argv, n, e);
    if (c != RS_OK) return c;
    if (*n == 0) {
        live_words_free(*argv, *n);
        return rs_fail(e, RS_USAGE, "--decrypt-command is empty");
    }
    bool placed = false;
    for (size_t i = 0; i < *n; i++) {
        char *at = strstr((*argv)[i], "{file}");
        if (!at) continue;
        char *w = rs_xasprintf("%.*s%s%s", (int)(at - (*argv)[i]), (*argv)[i], file, at + 6);
        free((*argv)[i]);
        (*argv)[i] = w;
        placed = true;
    }
    if (!placed) {
        char **grown = rs_xrealloc(*argv, (*n + 2) * sizeof **argv);
        grown[(*n)++] = rs_xstrdup(file);
        grown[*n] = NULL;
        *argv = grown;
    }
    return RS_OK;
}

rs_code cli_live_credential(const rs_run_args *a, cli_live *l, char **text, char **ciphertext,
                            rs_err *e)
{
    *text = *ciphertext = NULL;
    const char *file = a->secret_file;
    RS_ASSERT(l->ciphertext); /* cli_live_prepare read it, or the run stopped there */
    char **argv = NULL;
    size_t n = 0;
    const char *tmpl = a->decrypt_command ? a->decrypt_command : cli_live_decrypt_default;
    rs_code c = decrypt_argv(tmpl, file, &argv, &n, e);
    if (c != RS_OK) return c;
    live_exec_result r;
    rs_err why;
    rs_err_clear(&why);
    c = live_exec_run(argv, decrypt_env, CLI_DECRYPT_TIMEOUT_MS, CLI_DECRYPT_OUTPUT_MAX, &r, &why);
    if (c != RS_OK) {
        rs_fail(e, RS_DATAERR, "--decrypt-command: %s", why.msg);
    } else if (r.timed_out || r.overflow || r.exit_code != 0) {
        /* Its stderr is not repeated: it can hold key material or text
         * shaped like a workflow command. */
        rs_fail(e, RS_DATAERR,
                "--decrypt-command %s could not decrypt %s: %s (exit %d; its stderr, %zu bytes, "
                "is not shown)",
                argv[0], file,
                r.timed_out  ? "timed out"
                : r.overflow ? "printed too much"
                             : "it failed",
                r.exit_code, r.err_len);
        c = RS_DATAERR;
    } else {
        size_t len = r.out_len;
        while (len && strchr(" \t\r\n", r.out[len - 1]))
            len--;
        *text = rs_xasprintf("%.*s", (int)len, r.out);
        *ciphertext = rs_xstrdup(l->ciphertext);
    }
    live_exec_result_free(&r);
    live_words_free(argv, n);
    return c;
}
