/*
 * world_backends.c — the systems beside Kubernetes: the registry's catalogue
 * of credentials and pull grants, OpenBao's KV v2 versions, and the Talos
 * machines (machine-config registry auth, containerd's loaded auth, node
 * annotations, image cache, etcd health).
 *
 * The one idea: Talos keeps two auths per node. The machine config is what a
 * patch changes; containerd only loads it at boot, so an image pull uses the
 * loaded auth — which is why a node whose config is fixed still fails to pull
 * until it reboots.
 */
#include "sim/world/world_internal.h"

#include "core/config.h"
#include "core/cred/cred.h"
#include "sim/store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- OpenBao KV v2 ---- */

cJSON *simw_bao_current(sim_world *w, const char *path, int *version)
{
    sqlite3_stmt *st = simw_stmt(w, "SELECT data, version FROM openbao WHERE path = ?1"
                                    " ORDER BY version DESC LIMIT 1");
    sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
    cJSON *data = NULL;
    int v = 0;
    if (simw_step_row(w, st)) {
        data = cJSON_Parse((const char *)sqlite3_column_text(st, 0));
        v = sqlite3_column_int(st, 1);
    }
    sqlite3_reset(st);
    if (version) *version = v;
    return data;
}

/* KV v2: every write is a new version, identical data included. */
int simw_bao_write(sim_world *w, const char *path, const cJSON *data)
{
    int version = 0;
    cJSON_Delete(simw_bao_current(w, path, &version));
    char *text = cJSON_PrintUnformatted(data);
    sqlite3_stmt *st = simw_stmt(w, "INSERT INTO openbao(path, version, data, created_ms)"
                                    " VALUES(?1, ?2, ?3, ?4)");
    sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, version + 1);
    sqlite3_bind_text(st, 3, text, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, simw_now(w));
    simw_step_done(w, st);
    free(text);
    return version + 1;
}

/* ---- registry ---- */

/* "repo:ref" matches target "repo:ref" exactly, or bare target "repo". */
static bool registry_target_match(const char *grant, const char *target)
{
    if (strchr(target, ':')) return strcmp(grant, target) == 0;
    size_t n = strlen(target);
    return strncmp(grant, target, n) == 0 && grant[n] == ':';
}

static bool registry_pulls_allow(sim_world *w, const char *pulls_json, const char *target)
{
    if (!pulls_json) {
        for (size_t i = 0; i < w->cfg.n_pull_targets; i++)
            if (registry_target_match(w->cfg.pull_targets[i], target)) return true;
        return false;
    }
    cJSON *pulls = cJSON_Parse(pulls_json);
    bool ok = false;
    const cJSON *it;
    cJSON_ArrayForEach(it, pulls)
    {
        if (cJSON_IsString(it) && registry_target_match(it->valuestring, target)) ok = true;
    }
    cJSON_Delete(pulls);
    return ok;
}

char *simw_registry_grant(sim_world *w, const char *username, const char *password,
                          const char *target)
{
    if (!username || !password) return NULL;
    sqlite3_stmt *st = simw_stmt(w, "SELECT name, pulls FROM catalogue WHERE username = ?1"
                                    " AND password = ?2 AND revoked = 0 ORDER BY name");
    sqlite3_bind_text(st, 1, username, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, password, -1, SQLITE_STATIC);
    char *names[64];
    char *pulls[64];
    size_t n = 0;
    while (n < RS_ARRAY_LEN(names) && simw_step_row(w, st)) {
        names[n] = simw_col_text(st, 0);
        pulls[n++] = simw_col_text(st, 1);
    }
    sqlite3_reset(st);
    char *grant = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!grant && registry_pulls_allow(w, pulls[i], target)) grant = rs_xstrdup(names[i]);
        free(names[i]);
        free(pulls[i]);
    }
    return grant;
}

static char *registry_denial_key(const char *name)
{
    return rs_xasprintf("registry.manifest-denial.%s", name);
}

int simw_registry_manifest_denial(sim_world *w, const char *name)
{
    char *key = registry_denial_key(name);
    char *v = simw_meta_get(w, key);
    free(key);
    long status = v ? strtol(v, NULL, 10) : 0;
    free(v);
    return status == 401 || status == 403 || status == 404 ? (int)status : 0;
}

void simw_registry_manifest_denial_set(sim_world *w, const char *name, int status)
{
    char *key = registry_denial_key(name);
    char v[8];
    snprintf(v, sizeof v, "%d", status);
    simw_meta_set(w, key, v);
    free(key);
}

char *simw_registry_any_package(sim_world *w, const char *username, const char *password)
{
    if (!username || !password) return NULL;
    sqlite3_stmt *st = simw_stmt(w, "SELECT name FROM catalogue WHERE username = ?1"
                                    " AND password = ?2 AND revoked = 0 ORDER BY name");
    sqlite3_bind_text(st, 1, username, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, password, -1, SQLITE_STATIC);
    char *name = NULL;
    while (!name && simw_step_row(w, st)) {
        char *n = simw_col_text(st, 0);
        if (simw_registry_manifest_denial(w, n))
            name = n;
        else
            free(n);
    }
    sqlite3_reset(st);
    return name;
}

void simw_registry_token(const char *cred_name, const char *repo, char out[72])
{
    char *seed = rs_xasprintf("sim-registry-token\n%s\n%s", cred_name, repo);
    char hex[65];
    sha256_hex(seed, strlen(seed), hex);
    free(seed);
    _Static_assert(sizeof SIM_REGISTRY_TOKEN_PREFIX == 8, "the prefix is 7 bytes");
    memcpy(out, SIM_REGISTRY_TOKEN_PREFIX, 7);
    memcpy(out + 7, hex, 64);
    out[71] = '\0';
}

/* Tokens are not stored: they are recomputed per catalogue entry, so a
 * revoked credential's token dies with it. */
char *simw_registry_token_owner(sim_world *w, const char *token, const char *repo)
{
    sqlite3_stmt *st = simw_stmt(w, "SELECT name FROM catalogue WHERE revoked = 0 ORDER BY name");
    char *owner = NULL;
    while (!owner && simw_step_row(w, st)) {
        char tok[72];
        simw_registry_token((const char *)sqlite3_column_text(st, 0), repo, tok);
        if (strcmp(tok, token) == 0) owner = simw_col_text(st, 0);
    }
    sqlite3_reset(st);
    return owner;
}

bool simw_cred_userpass(sim_world *w, const char *name, char **username, char **password)
{
    sqlite3_stmt *st = simw_stmt(w, "SELECT username, password FROM catalogue WHERE name = ?1");
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    *username = *password = NULL;
    if (simw_step_row(w, st)) {
        *username = simw_col_text(st, 0);
        *password = simw_col_text(st, 1);
    }
    sqlite3_reset(st);
    if (*username && *password) return true;
    free(*username);
    free(*password);
    *username = *password = NULL;
    return false;
}

/* ---- Talos ---- */

bool simw_talos_exists(sim_world *w, const char *node)
{
    sqlite3_stmt *st = simw_stmt(w, "SELECT 1 FROM talos WHERE node = ?1");
    sqlite3_bind_text(st, 1, node, -1, SQLITE_STATIC);
    bool found = simw_step_row(w, st);
    sqlite3_reset(st);
    return found;
}

/* Column names are never interpolated from input: each maps to fixed SQL. */
static const char *talos_select_sql(const char *column)
{
    if (strcmp(column, "registry_auth") == 0)
        return "SELECT registry_auth FROM talos WHERE node = ?1";
    if (strcmp(column, "loaded_auth") == 0) return "SELECT loaded_auth FROM talos WHERE node = ?1";
    if (strcmp(column, "node_annotations") == 0)
        return "SELECT node_annotations FROM talos WHERE node = ?1";
    if (strcmp(column, "images") == 0) return "SELECT images FROM talos WHERE node = ?1";
    if (strcmp(column, "etcd_healthy") == 0)
        return "SELECT etcd_healthy FROM talos WHERE node = ?1";
    if (strcmp(column, "rebooting") == 0) return "SELECT rebooting FROM talos WHERE node = ?1";
    if (strcmp(column, "reboot_seq") == 0) return "SELECT reboot_seq FROM talos WHERE node = ?1";
    if (strcmp(column, "pdb_block_until") == 0)
        return "SELECT pdb_block_until FROM talos WHERE node = ?1";
    if (strcmp(column, "reboot_mode") == 0) return "SELECT reboot_mode FROM talos WHERE node = ?1";
    return NULL;
}

static const char *talos_update_sql(const char *column)
{
    if (strcmp(column, "registry_auth") == 0)
        return "UPDATE talos SET registry_auth = ?2 WHERE node = ?1";
    if (strcmp(column, "loaded_auth") == 0)
        return "UPDATE talos SET loaded_auth = ?2 WHERE node = ?1";
    if (strcmp(column, "node_annotations") == 0)
        return "UPDATE talos SET node_annotations = ?2 WHERE node = ?1";
    if (strcmp(column, "images") == 0) return "UPDATE talos SET images = ?2 WHERE node = ?1";
    if (strcmp(column, "etcd_healthy") == 0)
        return "UPDATE talos SET etcd_healthy = ?2 WHERE node = ?1";
    if (strcmp(column, "rebooting") == 0) return "UPDATE talos SET rebooting = ?2 WHERE node = ?1";
    if (strcmp(column, "reboot_seq") == 0)
        return "UPDATE talos SET reboot_seq = ?2 WHERE node = ?1";
    if (strcmp(column, "pdb_block_until") == 0)
        return "UPDATE talos SET pdb_block_until = ?2 WHERE node = ?1";
    if (strcmp(column, "reboot_mode") == 0)
        return "UPDATE talos SET reboot_mode = ?2 WHERE node = ?1";
    return NULL;
}

static sqlite3_stmt *talos_stmt(sim_world *w, const char *sql, const char *node)
{
    if (!sql) simw_die(w, "talos column lookup (unknown column)");
    sqlite3_stmt *st = simw_stmt(w, sql);
    sqlite3_bind_text(st, 1, node, -1, SQLITE_STATIC);
    return st;
}

cJSON *simw_talos_json(sim_world *w, const char *node, const char *column)
{
    sqlite3_stmt *st = talos_stmt(w, talos_select_sql(column), node);
    cJSON *v = NULL;
    if (simw_step_row(w, st) && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = cJSON_Parse((const char *)sqlite3_column_text(st, 0));
    sqlite3_reset(st);
    return v;
}

void simw_talos_set_json(sim_world *w, const char *node, const char *column, const cJSON *v)
{
    sqlite3_stmt *st = talos_stmt(w, talos_update_sql(column), node);
    char *text = v ? cJSON_PrintUnformatted(v) : NULL;
    if (text)
        sqlite3_bind_text(st, 2, text, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, 2);
    simw_step_done(w, st);
    free(text);
}

int64_t simw_talos_int(sim_world *w, const char *node, const char *column)
{
    sqlite3_stmt *st = talos_stmt(w, talos_select_sql(column), node);
    int64_t v = simw_step_row(w, st) ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return v;
}

void simw_talos_set_int(sim_world *w, const char *node, const char *column, int64_t v)
{
    sqlite3_stmt *st = talos_stmt(w, talos_update_sql(column), node);
    sqlite3_bind_int64(st, 2, v);
    simw_step_done(w, st);
}

void simw_talos_insert(sim_world *w, const char *node, const char *role, const cJSON *auth,
                       const cJSON *annotations, int etcd_healthy)
{
    sqlite3_stmt *st =
        simw_stmt(w, "INSERT OR REPLACE INTO talos(node, role, registry_auth, loaded_auth,"
                     " node_annotations, images, etcd_healthy) VALUES(?1, ?2, ?3, ?3, ?4, ?5, ?6)");
    char *auth_text = auth ? cJSON_PrintUnformatted(auth) : NULL;
    char *ann_text = cJSON_PrintUnformatted(annotations);
    cJSON *images = cJSON_CreateArray();
    cJSON_AddItemToArray(images, cJSON_CreateString(w->cfg.operator_image));
    char *img_text = cJSON_PrintUnformatted(images);
    cJSON_Delete(images);
    sqlite3_bind_text(st, 1, node, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, role, -1, SQLITE_STATIC);
    if (auth_text)
        sqlite3_bind_text(st, 3, auth_text, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 3);
    sqlite3_bind_text(st, 4, ann_text, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, img_text, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 6, etcd_healthy);
    simw_step_done(w, st);
    free(auth_text);
    free(ann_text);
    free(img_text);
}

/* Talos applies machine.nodeAnnotations to its Node object; a null value
 * removes the key in both places (merge-patch semantics). */
void simw_node_annotations_apply(sim_world *w, const char *node, const cJSON *annotations)
{
    cJSON *current = simw_talos_json(w, node, "node_annotations");
    if (!cJSON_IsObject(current)) {
        cJSON_Delete(current);
        current = cJSON_CreateObject();
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, annotations)
    {
        cJSON_DeleteItemFromObjectCaseSensitive(current, it->string);
        if (cJSON_IsString(it)) cJSON_AddStringToObject(current, it->string, it->valuestring);
    }
    simw_talos_set_json(w, node, "node_annotations", current);
    cJSON_Delete(current);
    cJSON *patch = cJSON_CreateObject();
    cJSON_AddItemToObject(cJSON_AddObjectToObject(patch, "metadata"), "annotations",
                          cJSON_Duplicate(annotations, 1));
    simw_merge(w, "Node", NULL, node, patch);
}

cJSON *simw_auth_take(char *user, char *pass)
{
    cJSON *auth = cJSON_CreateObject();
    cJSON_AddStringToObject(auth, "username", user);
    cJSON_AddStringToObject(auth, "password", pass);
    free(user);
    free(pass);
    return auth;
}

cJSON *simw_cred_auth(sim_world *w, const char *cred)
{
    char *user = NULL, *pass = NULL;
    if (!cred || !simw_cred_userpass(w, cred, &user, &pass)) return NULL;
    return simw_auth_take(user, pass);
}

/* ---- the redaction set (invariant 6 and the runner's report filter) ---- */

/* The registry host the sim's catalogue credentials are built for. */
#define SIMW_REDACT_HOST "ghcr.io"

void sim_redact_add_cred(cred_redact *set, const char *name, const char *dockerconfigjson,
                         const char *username, const char *password)
{
    if (dockerconfigjson)
        cred_redact_add_dockerconfig(set, name, dockerconfigjson, strlen(dockerconfigjson));
    if (!password || !password[0]) return;
    cred_redact_add(set, name, password, strlen(password));
    if (!username) return;
    char *dc = cred_dockerconfig_build(SIMW_REDACT_HOST, username, password);
    cred_redact_add_dockerconfig(set, name, dc, strlen(dc));
    cred_text_wipe_free(dc);
}

cred_redact *sim_world_redact_set(sim_world *w, const char *name)
{
    cred_redact *set = cred_redact_new();
    sqlite3_stmt *st = simw_stmt(w, "SELECT name, dockerconfigjson, username, password"
                                    " FROM catalogue WHERE ?1 IS NULL OR name = ?1 ORDER BY name");
    if (name) sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    while (simw_step_row(w, st))
        sim_redact_add_cred(
            set, (const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1),
            (const char *)sqlite3_column_text(st, 2), (const char *)sqlite3_column_text(st, 3));
    sqlite3_reset(st);
    return set;
}
