/*
 * live_talos_text_auth.c — the registry auth a node's machine config holds
 * for one host (live_talos_auth_parse, see live_talos_text.h).
 *
 * The config is a YAML stream of documents. In the `document` shape (Talos
 * v1.12+, H106) the auth is the `RegistryAuthConfig` document named after
 * the host; in the `legacy` shape it is machine.registries.config.<host>.auth
 * of the v1alpha1 document. Either carries username/password or `auth`
 * (base64 of "user:password"). Talos redacts secrets for a reader role by
 * printing "******" in their place: that is an answer ("redacted"), not a
 * credential. Two documents for the same host are refused: which one Talos
 * would apply is not this reader's guess to make.
 */
#include "core/live/live_talos_text.h"

#include "core/cred/cred.h"
#include "core/live/live_text.h"

#include <libfyaml.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define LA_REDACTED "******"

static void la_diag_swallow(struct fy_diag *diag, void *user, const char *buf, size_t len)
{
    (void)diag;
    (void)user;
    (void)buf;
    (void)len;
}

/* The scalar at key of mapping m (NULL when absent or null); *bad when the
 * value is not a scalar. */
static const char *la_scalar(struct fy_node *m, const char *key, bool *bad)
{
    struct fy_node *v = fy_node_mapping_lookup_by_string(m, key, FY_NT);
    if (!v || fy_node_is_null(v)) return NULL;
    if (!fy_node_is_scalar(v)) {
        *bad = true;
        return NULL;
    }
    return fy_node_get_scalar0(v);
}

/* {"auth": {...}} / {"redacted": true} from an auth mapping; NULL + *bad
 * when it holds neither form. */
static cJSON *la_answer(struct fy_node *m, bool *bad)
{
    const char *u = la_scalar(m, "username", bad);
    const char *p = la_scalar(m, "password", bad);
    const char *a = la_scalar(m, "auth", bad);
    if (*bad) return NULL;
    cJSON *ans = cJSON_CreateObject();
    if ((p && strcmp(p, LA_REDACTED) == 0) || (a && strcmp(a, LA_REDACTED) == 0)) {
        cJSON_AddBoolToObject(ans, "redacted", true);
        return ans;
    }
    char *user = NULL, *pass = NULL;
    if (u && u[0] && p && p[0]) {
        user = rs_xstrdup(u);
        pass = rs_xstrdup(p);
    } else if (a && a[0]) {
        size_t n = 0;
        unsigned char *raw = base64_decode(a, &n);
        unsigned char *colon = raw ? memchr(raw, ':', n) : NULL;
        if (colon && colon != raw && (size_t)(colon - raw) + 1 < n && !memchr(raw, '\0', n)) {
            user = rs_xasprintf("%.*s", (int)(colon - raw), (const char *)raw);
            pass =
                rs_xasprintf("%.*s", (int)(n - (size_t)(colon - raw) - 1), (const char *)colon + 1);
        }
        if (raw) cred_bytes_wipe_free(raw, n);
    }
    if (!user) {
        cJSON_Delete(ans);
        *bad = true;
        return NULL;
    }
    cJSON *auth = cJSON_AddObjectToObject(ans, "auth");
    cJSON_AddStringToObject(auth, "username", user);
    cJSON_AddStringToObject(auth, "password", pass);
    cred_text_wipe_free(user);
    cred_text_wipe_free(pass);
    return ans;
}

/* The auth mapping one document holds for host in shape, or NULL. */
static struct fy_node *la_auth_node(struct fy_node *root, const char *host,
                                    rs_talos_auth_shape shape)
{
    if (!root || !fy_node_is_mapping(root)) return NULL;
    if (shape == RS_TALOS_AUTH_DOCUMENT) {
        bool bad = false;
        const char *kind = la_scalar(root, "kind", &bad);
        const char *name = la_scalar(root, "name", &bad);
        return !bad && kind && name && strcmp(kind, "RegistryAuthConfig") == 0 &&
                       strcmp(name, host) == 0
                   ? root
                   : NULL;
    }
    struct fy_node *n = fy_node_mapping_lookup_by_string(root, "machine", FY_NT);
    const char *path[] = {"registries", "config"};
    for (size_t i = 0; n && i < 2; i++)
        n = fy_node_is_mapping(n) ? fy_node_mapping_lookup_by_string(n, path[i], FY_NT) : NULL;
    n = n && fy_node_is_mapping(n) ? fy_node_mapping_lookup_by_string(n, host, FY_NT) : NULL;
    n = n && fy_node_is_mapping(n) ? fy_node_mapping_lookup_by_string(n, "auth", FY_NT) : NULL;
    return n && fy_node_is_mapping(n) ? n : NULL;
}

rs_code live_talos_auth_parse(const char *text, size_t len, const char *host,
                              rs_talos_auth_shape shape, cJSON **out, rs_err *e)
{
    *out = NULL;
    /* Strict bytes before libfyaml sees them (no NUL, well-formed UTF-8):
     * invalid UTF-8 in a directive makes libfyaml 0.7 loop forever. */
    if (live_text_check("Talos machine config", text, len, e) != RS_OK) {
        if (e) e->code = RS_FAILED; /* a reader's failure, not bad input of ours */
        return RS_FAILED;
    }
    struct fy_diag_cfg dcfg;
    fy_diag_cfg_default(&dcfg);
    dcfg.fp = NULL;
    dcfg.output_fn = la_diag_swallow;
    dcfg.colorize = false;
    struct fy_diag *diag = fy_diag_create(&dcfg);
    if (!diag) abort();
    struct fy_parse_cfg pcfg = {.flags = FYPCF_QUIET, .diag = diag};
    struct fy_parser *p = fy_parser_create(&pcfg);
    if (!p) abort();
    const char *problem = fy_parser_set_string(p, text, len) == 0 ? NULL : "unreadable";
    size_t found = 0;
    cJSON *ans = NULL;
    struct fy_document *d;
    while (!problem && (d = fy_parse_load_document(p)) != NULL) {
        struct fy_node *auth = la_auth_node(fy_document_root(d), host, shape);
        if (auth && ++found == 1) {
            bool bad = false;
            ans = la_answer(auth, &bad);
            if (bad) problem = "its registry auth holds neither username/password nor auth";
        }
        fy_parse_document_destroy(p, d);
    }
    if (!problem && fy_parser_get_stream_error(p)) problem = "not a YAML stream";
    if (!problem && found > 1) problem = "more than one registry auth for the host";
    fy_parser_destroy(p);
    fy_diag_destroy(diag);
    if (problem) {
        cred_json_wipe_delete(ans);
        return rs_fail(e, RS_FAILED, "Talos machine config for %s: %s", host, problem);
    }
    *out = ans;
    return RS_OK;
}
