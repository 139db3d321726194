/*
 * scenario_cassette.c — a cassette as the world's inputs (see the header).
 *
 * The one idea: the recording decides, never a guess. The catalogue holds
 * exactly the credentials the recording shows (with the synthetic values a
 * strict replay would hand the core), and the registry grants each one only
 * what the recording shows it granted, once it shows a refusal at all.
 */
#include "sim/scenario/scenario_cassette.h"

#include "sim/scenario/scenario_int.h"

#include "core/cred/cred.h"
#include "recorder/rec_config.h"

#include <stdlib.h>
#include <string.h>

rs_code sc_cassette_open(const char *path, sc_cassette *c, rs_err *e)
{
    memset(c, 0, sizeof *c);
    rs_config_defaults(&c->cfg);
    if (rec_tape_load(path, &c->tape, e) != RS_OK) return e->code;
    c->red = rec_redactor_new();
    const char *text = rec_tape_meta(c->tape, "config");
    char *plain = text ? rec_unredact_string(c->red, text) : NULL;
    c->config_doc = plain ? cJSON_Parse(plain) : NULL;
    free(plain);
    if (!cJSON_IsObject(c->config_doc))
        return rs_fail(e, RS_DATAERR, "cassette %s: meta config is missing or not a JSON object",
                       path);
    rs_config_free(&c->cfg);
    return rec_config_load(c->config_doc, &c->cfg, path, e);
}

void sc_cassette_close(sc_cassette *c)
{
    rec_tape_free(c->tape);
    rec_redactor_free(c->red);
    rs_config_free(&c->cfg);
    cJSON_Delete(c->config_doc);
    memset(c, 0, sizeof *c);
}

static cJSON *scc_json(sc_cassette *c, const char *text)
{
    if (!text) return NULL;
    cJSON *doc = cJSON_Parse(text);
    rec_unredact_json(c->red, doc);
    return doc;
}

cJSON *sc_cassette_response(sc_cassette *c, const rec_row *r)
{
    return scc_json(c, r->response);
}

cJSON *sc_cassette_request(sc_cassette *c, const rec_row *r)
{
    return scc_json(c, r->request);
}

const rec_row *sc_cassette_first(const sc_cassette *c, const char *op, const char *target)
{
    for (size_t i = 0; i < c->tape->n_rows; i++) {
        const rec_row *r = &c->tape->rows[i];
        if (strcmp(r->op, op) != 0 || strcmp(r->target ? r->target : "", target) != 0) continue;
        if (r->status == 200 || r->status == 404) return r;
    }
    return NULL;
}

const rec_row *sc_cassette_node_list(const sc_cassette *c)
{
    for (size_t i = 0; i < c->tape->n_rows; i++) {
        const rec_row *r = &c->tape->rows[i];
        if (strcmp(r->op, "kube.list") == 0 && r->status == 200 && r->request &&
            strcmp(r->request, "{\"kind\":\"Node\"}") == 0)
            return r;
    }
    return NULL;
}

/* ---- the catalogue ---- */

char *sc_cassette_secret_text(sc_cassette *c, const char *ns, const char *name, const char *key)
{
    char *target = rs_xasprintf("Secret/%s/%s", ns, name);
    const rec_row *r = sc_cassette_first(c, "kube.get", target);
    free(target);
    if (!r || r->status != 200) return NULL;
    cJSON *obj = sc_cassette_response(c, r);
    const char *b64 = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "data"), key));
    size_t len = 0;
    unsigned char *raw = b64 ? base64_decode(b64, &len) : NULL;
    cJSON_Delete(obj);
    if (raw && strlen((char *)raw) != len) { /* a NUL inside: not a text */
        cred_bytes_wipe_free(raw, len);
        return NULL;
    }
    return (char *)raw;
}

static sc_cred *scc_find_pair(sc_cred *creds, size_t n, const char *user, const char *pass)
{
    for (size_t i = 0; i < n; i++)
        if (creds[i].username && creds[i].password && strcmp(creds[i].username, user) == 0 &&
            strcmp(creds[i].password, pass) == 0)
            return &creds[i];
    return NULL;
}

/* An entry of docker config text; its username/password are read out of it
 * so registry answers can be matched to it. */
static sc_cred *scc_add_text(sc_cred *creds, size_t *n, const char *name, const char *text,
                             const char *ciphertext)
{
    sc_cred *cr = &creds[(*n)++];
    cr->name = rs_xstrdup(name);
    cr->dockerconfigjson = rs_xstrdup(text);
    cr->ciphertext = ciphertext ? rs_xstrdup(ciphertext) : NULL;
    cJSON *doc = cJSON_Parse(text);
    cJSON *auth =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "auths"), "ghcr.io");
    const char *u = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(auth, "username"));
    const char *p = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(auth, "password"));
    const char *a = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(auth, "auth"));
    if (u && p) {
        cr->username = rs_xstrdup(u);
        cr->password = rs_xstrdup(p);
    } else if (a) { /* only auth = base64("user:password") */
        size_t len = 0;
        char *up = (char *)base64_decode(a, &len);
        char *colon = up && strlen(up) == len ? strchr(up, ':') : NULL;
        if (colon) {
            cr->username = rs_xasprintf("%.*s", (int)(colon - up), up);
            cr->password = rs_xstrdup(colon + 1);
        }
        if (up) cred_bytes_wipe_free(up, len);
    }
    cred_json_wipe_delete(doc);
    return cr;
}

/* Every username/password pair a registry token request or a Talos auth
 * read shows, as an entry when no entry has it yet. */
static void scc_add_pair(sc_cred *creds, size_t *n, const cJSON *o)
{
    const char *u = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "username"));
    const char *p = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "password"));
    if (!u || !p || scc_find_pair(creds, *n, u, p) || *n >= SC_CASSETTE_CREDS_MAX) return;
    sc_cred *cr = &creds[*n];
    cr->name = rs_xasprintf("recorded-%zu", *n);
    cr->username = rs_xstrdup(u);
    cr->password = rs_xstrdup(p);
    (*n)++;
}

static void scc_pairs(sc_cassette *c, sc_cred *creds, size_t *n)
{
    for (size_t i = 0; i < c->tape->n_rows; i++) {
        const rec_row *r = &c->tape->rows[i];
        bool token = strcmp(r->op, "registry.token") == 0;
        bool talos = strcmp(r->op, "talos.read-auth") == 0 && r->status == 200;
        if (!token && !talos) continue;
        cJSON *doc = token ? sc_cassette_request(c, r) : sc_cassette_response(c, r);
        scc_add_pair(creds, n, cJSON_GetObjectItemCaseSensitive(doc, token ? "body" : "auth"));
        cred_json_wipe_delete(doc);
    }
}

/* The entry a registry.token row asked for, and the token it was given. */
static sc_cred *scc_token_cred(sc_cassette *c, const rec_row *r, sc_cred *creds, size_t n,
                               char **token)
{
    cJSON *req = sc_cassette_request(c, r);
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(req, "body");
    const char *u = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "username"));
    const char *p = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "password"));
    sc_cred *cr = u && p ? scc_find_pair(creds, n, u, p) : NULL;
    cred_json_wipe_delete(req);
    cJSON *resp = r->status == 200 ? sc_cassette_response(c, r) : NULL;
    const char *tok = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(resp, "token"));
    *token = tok ? rs_xstrdup(tok) : NULL;
    cred_json_wipe_delete(resp);
    return cr;
}

static void scc_pull_add(sc_cred *cr, const char *target)
{
    for (size_t i = 0; i < cr->n_pulls; i++)
        if (strcmp(cr->pulls[i], target) == 0) return;
    cr->pulls = realloc(cr->pulls, (cr->n_pulls + 1) * sizeof *cr->pulls);
    if (!cr->pulls) abort();
    cr->pulls[cr->n_pulls++] = rs_xstrdup(target);
}

/* What the registry granted: a manifest answer is matched to the entry
 * through the token its request carried. An entry the recording shows
 * refused anywhere keeps only the targets it shows granted; the others
 * keep every required target. */
static void scc_grants(sc_cassette *c, sc_cred *creds, size_t n)
{
    bool refused[SC_CASSETTE_CREDS_MAX] = {false};
    sc_cred *granted_of[SC_CASSETTE_CREDS_MAX * 4] = {NULL};
    char *tokens[SC_CASSETTE_CREDS_MAX * 4] = {NULL};
    size_t n_tokens = 0;
    sc_cred acc[SC_CASSETTE_CREDS_MAX];
    memset(acc, 0, sizeof acc);
    for (size_t i = 0; i < c->tape->n_rows; i++) {
        const rec_row *r = &c->tape->rows[i];
        if (strcmp(r->op, "registry.token") == 0) {
            char *tok = NULL;
            sc_cred *cr = scc_token_cred(c, r, creds, n, &tok);
            if (cr && (r->status == 401 || r->status == 403)) refused[cr - creds] = true;
            if (cr && tok && n_tokens < RS_ARRAY_LEN(tokens)) {
                granted_of[n_tokens] = cr;
                tokens[n_tokens++] = tok;
            } else {
                free(tok);
            }
            continue;
        }
        if (strcmp(r->op, "registry.manifest") != 0 || !r->target) continue;
        cJSON *req = sc_cassette_request(c, r);
        const char *tok = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(req, "body"), "token"));
        for (size_t k = 0; tok && k < n_tokens; k++) {
            if (strcmp(tokens[k], tok) != 0) continue;
            size_t idx = (size_t)(granted_of[k] - creds);
            if (r->status == 200)
                scc_pull_add(&acc[idx], r->target);
            else if (r->status == 401 || r->status == 403)
                refused[idx] = true;
            break;
        }
        cred_json_wipe_delete(req);
    }
    for (size_t i = 0; i < n; i++) {
        if (refused[i]) {
            creds[i].pulls = acc[i].pulls ? acc[i].pulls : rs_xcalloc(1, sizeof(char *));
            creds[i].n_pulls = acc[i].n_pulls;
        } else {
            scl_str_list_free(acc[i].pulls, acc[i].n_pulls);
        }
    }
    for (size_t k = 0; k < n_tokens; k++)
        free(tokens[k]);
}

void sc_cassette_catalogue(sc_cassette *c, sc_cred *creds, size_t *n, const char **cluster_cred)
{
    const char *d = rec_tape_meta(c->tape, "desired");
    char *desired = rec_unredact_string(c->red, d ? d : "");
    scc_add_text(creds, n, "desired", desired, rec_tape_meta(c->tape, "desired_ciphertext"));
    char *held = sc_cassette_secret_text(c, c->cfg.variables_ns, c->cfg.variables_name,
                                         c->cfg.variables_key);
    *cluster_cred = "desired";
    if (held && strcmp(held, desired) != 0) {
        scc_add_text(creds, n, "cluster", held, NULL);
        *cluster_cred = "cluster";
    }
    if (held) cred_text_wipe_free(held);
    cred_text_wipe_free(desired);
    scc_pairs(c, creds, n);
    scc_grants(c, creds, *n);
}
