/*
 * serve_backends.c — the OpenBao KV v2 subset (`/v1/<mount>/data/<path>`,
 * X-Vault-Token) and the registry subset (the `/v2/` challenge, the
 * `/token` exchange with basic auth, `/v2/<repo>/manifests/<ref>` with the
 * bearer), each turned into the openbao.* / registry.* request the live
 * transport would have been asked for.
 *
 * `/v1/auth/token/lookup-self` answers a client's token probe.
 *
 * The one idea: what the real service answers before it looks anything up
 * — a wrong OpenBao token (403), a registry request without a bearer (401
 * and the challenge naming this server's /token) — is answered here and
 * never reaches the world, so it is never counted; everything else is one
 * call of the sim root, and the world decides (a revoked credential, a
 * token for another repository, an unknown path).
 */
#include "sim/serve/serve_int.h"

#include "core/cred/cred.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- OpenBao ------------------------------------------------------------ */

/* The namespace a request names, as OpenBao reads X-Vault-Namespace: no
 * leading or trailing '/'. True when it is the one served. */
static bool serve_bao_namespace_ok(const serve_server *s, const serve_http *h)
{
    const char *got = serve_header(h, "X-Vault-Namespace");
    if (!s->bao_namespace) return !got || strspn(got, "/") == strlen(got);
    if (!got) return false;
    got += strspn(got, "/");
    size_t n = strlen(got);
    while (n > 0 && got[n - 1] == '/')
        n--;
    return n == strlen(s->bao_namespace) && strncmp(got, s->bao_namespace, n) == 0;
}

void serve_openbao(serve_server *s, const serve_http *h, const char *rest, serve_answer *a)
{
    /* A token lives in its namespace: named wrongly, it is not valid. */
    if (!serve_bao_namespace_ok(s, h)) {
        serve_answer_errors(a, 403, "permission denied");
        return;
    }
    if (s->bao_token && !serve_secret_eq(s->bao_token, serve_header(h, "X-Vault-Token"))) {
        serve_answer_errors(a, 403, "permission denied");
        return;
    }
    if (h->path_nul) { /* a secret path holding U+0000: no secret is there */
        serve_answer_errors(a, 404, "no secret at a path holding U+0000");
        return;
    }
    if (strcmp(rest, "auth/token/lookup-self") == 0) {
        /* A client's probe of its token: answered here (a token is not part
         * of the world), never echoing the token. */
        if (!serve_method_is(h, "GET")) {
            serve_answer_errors(a, 405, "unsupported operation");
            return;
        }
        cJSON *b = cJSON_CreateObject();
        cJSON *d = cJSON_AddObjectToObject(b, "data");
        cJSON_AddStringToObject(d, "display_name", "token");
        cJSON_AddItemToObject(d, "policies",
                              cJSON_CreateStringArray((const char *[]){"default"}, 1));
        cJSON_AddNumberToObject(d, "ttl", 0);
        serve_answer_json(a, 200, b);
        return;
    }
    /* rest = "<mount>/data/<path>" */
    const char *slash = strchr(rest, '/');
    if (!slash || slash == rest || strncmp(slash, "/data/", 6) != 0 || !slash[6]) {
        serve_answer_errors(a, 404,
                            "no handler for route: this server serves KV v2 reads and "
                            "writes at /v1/<mount>/data/<path>");
        return;
    }
    char *mount = rs_xasprintf("%.*s", (int)(slash - rest), rest);
    rs_req req = {.mount = mount, .target = slash + 6};
    bool malformed = false;
    cJSON *body = NULL;
    if (serve_method_is(h, "GET")) {
        req.op = RS_OP_OPENBAO_READ;
    } else if (serve_method_is(h, "POST") || serve_method_is(h, "PUT")) {
        body = serve_body_json(h, &malformed);
        const cJSON *data = cJSON_GetObjectItemCaseSensitive(body, "data");
        if (malformed || !cJSON_IsObject(data)) {
            serve_answer_errors(a, 400,
                                "failed to parse JSON input: a KV v2 write is "
                                "{\"data\": {...}}");
            cred_json_wipe_delete(body);
            free(mount);
            return;
        }
        req.op = RS_OP_OPENBAO_WRITE;
        req.body = data;
    } else {
        serve_answer_errors(a, 405, "unsupported operation");
        free(mount);
        return;
    }
    rs_req_mark_secrets(&req);
    rs_resp resp;
    s->door.call(&s->door, &req, &resp);
    serve_answer_resp(a, &resp);
    cred_json_wipe_delete(body);
    free(mount);
}

/* ---- registry ----------------------------------------------------------- */

static void registry_errors(serve_answer *a, int status, const char *code, const char *msg)
{
    cJSON *b = cJSON_CreateObject();
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "code", code);
    cJSON_AddStringToObject(e, "message", msg);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(b, "errors"), e);
    serve_answer_json(a, status, b);
}

/* 401 with the challenge a client follows to this server's /token. */
static void registry_challenge(serve_server *s, serve_answer *a, const char *repo, bool invalid)
{
    registry_errors(a, 401, "UNAUTHORIZED", "authentication required");
    char scope[512] = "";
    if (repo) snprintf(scope, sizeof scope, ",scope=\"repository:%s:pull\"", repo);
    a->www_auth = rs_xasprintf("Bearer realm=\"%s/token\",service=\"%s\"%s%s", s->url,
                               s->registry_host, scope, invalid ? ",error=\"invalid_token\"" : "");
}

static const char *bearer_of(const serve_http *h)
{
    const char *auth = serve_header(h, "Authorization");
    return auth && strncmp(auth, "Bearer ", 7) == 0 && auth[7] ? auth + 7 : NULL;
}

/* {"username", "password"} from "Authorization: Basic ...", {} without. */
static cJSON *basic_auth_body(const serve_http *h)
{
    cJSON *b = cJSON_CreateObject();
    const char *auth = serve_header(h, "Authorization");
    if (!auth || strncmp(auth, "Basic ", 6) != 0) return b;
    size_t n = 0;
    unsigned char *raw = base64_decode(auth + 6, &n);
    char *text = raw ? rs_xasprintf("%.*s", (int)n, (const char *)raw) : NULL;
    char *colon = text && strlen(text) == n ? strchr(text, ':') : NULL;
    if (colon) {
        *colon = '\0';
        cJSON_AddStringToObject(b, "username", text);
        cJSON_AddStringToObject(b, "password", colon + 1);
    }
    if (raw) cred_bytes_wipe_free(raw, n);
    if (text) cred_text_wipe_free(text);
    return b;
}

static void registry_token(serve_server *s, const serve_http *h, serve_answer *a)
{
    const char *service = serve_arg(h, "service");
    const char *scope = serve_arg(h, "scope");
    /* scope = "repository:<repo>:<actions>" */
    const char *last = scope ? strrchr(scope, ':') : NULL;
    if (!scope || strncmp(scope, "repository:", 11) != 0 || !last || last <= scope + 11) {
        registry_errors(a, 400, "UNSUPPORTED", "scope=repository:<repo>:pull is required");
        return;
    }
    char *repo = rs_xasprintf("%.*s", (int)(last - (scope + 11)), scope + 11);
    cJSON *body = basic_auth_body(h);
    rs_req req = {.op = RS_OP_REGISTRY_TOKEN,
                  .host = service ? service : s->registry_host,
                  .target = repo,
                  .body = body};
    rs_req_mark_secrets(&req);
    rs_resp resp;
    s->door.call(&s->door, &req, &resp);
    serve_answer_resp(a, &resp);
    cred_json_wipe_delete(body);
    free(repo);
}

/* The answer's Content-Type: the first of the four manifest media types
 * the client's Accept names (the world keeps no manifest body, only its
 * digest, so any of them describes the answer equally), else an OCI index. */
static const char *manifest_media_type(const char *accept)
{
    static const char *const types[] = {
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.docker.distribution.manifest.v2+json",
    };
    const char *best = NULL, *best_at = NULL;
    for (size_t i = 0; accept && i < sizeof types / sizeof types[0]; i++) {
        const char *at = strstr(accept, types[i]);
        if (at && (!best_at || at < best_at)) {
            best = types[i];
            best_at = at;
        }
    }
    return best ? best : types[0];
}

static void registry_manifest(serve_server *s, const serve_http *h, const char *repo_ref,
                              const char *manifests, serve_answer *a)
{
    char *repo = rs_xasprintf("%.*s", (int)(manifests - repo_ref), repo_ref);
    const char *ref = manifests + strlen("/manifests/");
    const char *token = bearer_of(h);
    if (!token) {
        registry_challenge(s, a, repo, false);
        free(repo);
        return;
    }
    char *target = rs_xasprintf("%s:%s", repo, ref);
    cJSON *body = cJSON_CreateObject();
    cJSON_AddStringToObject(body, "token", token);
    rs_req req = {
        .op = RS_OP_REGISTRY_MANIFEST, .host = s->registry_host, .target = target, .body = body};
    rs_req_mark_secrets(&req);
    rs_resp resp;
    s->door.call(&s->door, &req, &resp);
    int status = resp.status;
    const cJSON *digest = cJSON_GetObjectItemCaseSensitive(resp.body, "digest");
    if (status == 200 && cJSON_IsString(digest)) a->digest = rs_xstrdup(digest->valuestring);
    serve_answer_resp(a, &resp);
    if (status == 200) a->ctype = manifest_media_type(serve_header(h, "Accept"));
    if (status == 401) {
        char *body_text = a->body; /* keep the world's errors, add the challenge */
        a->body = NULL;
        registry_challenge(s, a, repo, true);
        free(a->body);
        a->body = body_text;
    }
    cred_json_wipe_delete(body);
    free(target);
    free(repo);
}

void serve_registry(serve_server *s, const serve_http *h, serve_answer *a)
{
    const char *p = h->path;
    bool get = serve_method_is(h, "GET") || serve_method_is(h, "HEAD");
    if (!get) {
        registry_errors(a, 405, "UNSUPPORTED", "this registry serves reads only");
    } else if (h->path_nul) { /* a repository or reference holding U+0000 */
        registry_errors(a, 404, "NAME_UNKNOWN", "repository name not known to registry");
    } else if (strcmp(p, "/token") == 0) {
        registry_token(s, h, a);
    } else if (strcmp(p, "/v2") == 0 || strcmp(p, "/v2/") == 0) {
        /* The ping: it checks no token (it reaches no repository). */
        if (bearer_of(h))
            serve_answer_json(a, 200, cJSON_CreateObject());
        else
            registry_challenge(s, a, NULL, false);
    } else {
        const char *repo_ref = p + strlen("/v2/");
        const char *m = NULL;
        for (const char *q = strstr(repo_ref, "/manifests/"); q; q = strstr(q + 1, "/manifests/"))
            m = q;
        if (m && m > repo_ref && m[strlen("/manifests/")] &&
            !strchr(m + strlen("/manifests/"), '/'))
            registry_manifest(s, h, repo_ref, m, a);
        else
            registry_errors(a, 404, "NAME_UNKNOWN", "this registry serves manifests only");
    }
}
