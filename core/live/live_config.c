/*
 * live_config.c — loading `--config FILE` over the defaults (see the header).
 *
 * The file is applied to a scratch copy and only copied over the caller's
 * configuration when every key was valid: a half-applied configuration would
 * run the transaction against a mix of intended and default objects.
 */
#include "core/live/live_config.h"

#include "core/live/live_yaml.h"
#include "core/transport/transport.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CF_LABEL: an RFC 1123 DNS label (namespaces); CF_NAME: a DNS subdomain
 * (object names); CF_LABELS: a list of DNS labels. Lists never repeat.
 * CF_PARALLELISM: 1..RS_TRANSPORT_PARALLELISM_MAX. */
typedef enum cf_type {
    CF_STR,
    CF_LABEL,
    CF_NAME,
    CF_INT_POS,
    CF_SECONDS,
    CF_DURATION,
    CF_LIST,
    CF_LABELS,
    CF_PARALLELISM,
    CF_AUTH_SHAPE,
    CF_BAO_PATH
} cf_type;

typedef struct cf_key {
    const char *name;
    cf_type type;
    size_t offset;       /* of the char * / int / int64_t field in rs_config */
    size_t count_offset; /* CF_LIST only */
} cf_key;

#define CF_FIELD(f) offsetof(rs_config, f)

static const cf_key cf_keys[] = {
    {"fanout-namespaces", CF_LABELS, CF_FIELD(fanout_namespaces), CF_FIELD(n_fanout)},
    {"required-pull-targets", CF_LIST, CF_FIELD(pull_targets), CF_FIELD(n_pull_targets)},
    {"lease.namespace", CF_LABEL, CF_FIELD(lease_ns), 0},
    {"lease.name", CF_NAME, CF_FIELD(lease_name), 0},
    {"lease.duration-s", CF_INT_POS, CF_FIELD(lease_duration_s), 0},
    {"lease.heartbeat-s", CF_INT_POS, CF_FIELD(lease_heartbeat_s), 0},
    {"parent.namespace", CF_LABEL, CF_FIELD(parent_ns), 0},
    {"parent.name", CF_NAME, CF_FIELD(parent_name), 0},
    {"child.namespace", CF_LABEL, CF_FIELD(child_ns), 0},
    {"child.name", CF_NAME, CF_FIELD(child_name), 0},
    {"controller.namespace", CF_LABEL, CF_FIELD(controller_ns), 0},
    {"controller.name", CF_NAME, CF_FIELD(controller_name), 0},
    {"controller.selector", CF_STR, CF_FIELD(controller_selector), 0},
    {"controller.rollout-timeout-s", CF_INT_POS, CF_FIELD(rollout_timeout_s), 0},
    {"sync.attempts", CF_INT_POS, CF_FIELD(sync_attempts), 0},
    {"talos.convergence-attempts", CF_INT_POS, CF_FIELD(talos_attempts), 0},
    {"sync.interval-s", CF_SECONDS, CF_FIELD(sync_interval_ms), 0},
    {"drain-timeout", CF_DURATION, CF_FIELD(drain_timeout_ms), 0},
    {"lifecycle-taints", CF_LIST, CF_FIELD(lifecycle_taints), CF_FIELD(n_lifecycle_taints)},
    {"operator-image", CF_STR, CF_FIELD(operator_image), 0},
    {"registry-host", CF_STR, CF_FIELD(registry_host), 0},
    {"openbao.mount", CF_BAO_PATH, CF_FIELD(openbao_mount), 0},
    {"openbao.path", CF_BAO_PATH, CF_FIELD(openbao_path), 0},
    {"openbao.property", CF_BAO_PATH, CF_FIELD(openbao_property), 0},
    {"transport.parallelism", CF_PARALLELISM, CF_FIELD(transport_parallelism), 0},
    {"talos.auth-shape", CF_AUTH_SHAPE, CF_FIELD(talos_auth_shape), 0},
};

#define CF_INT_MAX 1000000
#define RS_STR_(x) #x
#define RS_STR(x) RS_STR_(x)

static rs_code cf_fail(rs_err *e, const char *path, live_yaml_pos p, const char *key,
                       const char *what)
{
    return rs_fail(e, RS_DATAERR, "%s:%d:%d: %s: %s", path, p.line, p.col, key, what);
}

/* RFC 1123: a label is 1-63 of [a-z0-9-], starting and ending alphanumeric;
 * a subdomain is dot-separated labels, at most 253 characters. */
static bool cf_dns_label(const char *s, size_t len)
{
    if (len == 0 || len > 63) return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && !(c == '-' && i > 0 && i + 1 < len)) return false;
    }
    return true;
}

static bool cf_dns_subdomain(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 253) return false;
    for (const char *p = s;;) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        if (!cf_dns_label(p, len)) return false;
        if (!dot) return true;
        p = dot + 1;
    }
}

/* An OpenBao mount, KV path or property: segments of [A-Za-z0-9._-] joined
 * by single '/', none of them "." or "..", no leading or trailing '/' — a
 * value that could leave the configured place (or carry a query, a newline)
 * is refused. */
static bool cf_bao_path(const char *s)
{
    if (!s[0] || s[0] == '/') return false;
    const char *seg = s;
    for (const char *p = s;; p++) {
        if (*p == '/' || *p == '\0') {
            size_t n = (size_t)(p - seg);
            if (n == 0 || (n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
                return false;
            if (*p == '\0') return true;
            seg = p + 1;
            continue;
        }
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        if (!ok) return false;
    }
}

/* The rule each item of a list obeys (items 0..i-1 already checked); NULL
 * when list[i] holds. */
static const char *cf_item_why(bool labels, const char *const *list, size_t i)
{
    if (!list[i] || !list[i][0]) return "expected a non-empty string";
    if (labels && !cf_dns_label(list[i], strlen(list[i])))
        return "expected a DNS label (a-z, 0-9 and '-', at most 63)";
    for (size_t k = 0; k < i; k++)
        if (strcmp(list[k], list[i]) == 0) return "a value is listed twice";
    return NULL;
}

static rs_code cf_list(const live_yaml_doc *d, const char *path, const char *key, const cJSON *v,
                       bool labels, char **list, size_t *n, rs_err *e)
{
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0 ||
        cJSON_GetArraySize(v) > RS_CONFIG_LIST_MAX)
        return cf_fail(e, path, live_yaml_pos_of(d, v), key,
                       "expected a non-empty list of strings");
    const char *vals[RS_CONFIG_LIST_MAX];
    size_t count = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, v)
    {
        vals[count] = cJSON_IsString(it) ? it->valuestring : NULL;
        const char *why = cf_item_why(labels, vals, count);
        if (why) return cf_fail(e, path, live_yaml_pos_of(d, it), key, why);
        count++;
    }
    rs_config_set_list(list, n, vals, count);
    return RS_OK;
}

/* The rule of k on the value cfg holds (however it got there: a --config
 * file, a cassette's meta); NULL when it holds. */
static const char *cf_value_why(const cf_key *k, const rs_config *cfg)
{
    const char *base = (const char *)cfg;
    if (k->type == CF_LIST || k->type == CF_LABELS) {
        const char *const *list = (const char *const *)(base + k->offset);
        size_t n = *(const size_t *)(base + k->count_offset);
        if (n == 0) return "expected a non-empty list of strings";
        for (size_t i = 0; i < n; i++) {
            const char *why = cf_item_why(k->type == CF_LABELS, list, i);
            if (why) return why;
        }
        return NULL;
    }
    if (k->type == CF_STR || k->type == CF_LABEL || k->type == CF_NAME || k->type == CF_BAO_PATH) {
        const char *s = *(const char *const *)(base + k->offset);
        if (!s || !s[0]) return "expected a non-empty string";
        if (k->type == CF_LABEL && !cf_dns_label(s, strlen(s)))
            return "expected a DNS label (a-z, 0-9 and '-', at most 63)";
        if (k->type == CF_BAO_PATH && !cf_bao_path(s))
            return "expected segments of A-Z, a-z, 0-9, '.', '_' and '-' joined by '/' "
                   "(no '..', no leading or trailing '/')";
        if (k->type == CF_NAME && !cf_dns_subdomain(s))
            return "expected a DNS subdomain (DNS labels joined by '.')";
        return NULL;
    }
    if (k->type == CF_DURATION)
        return *(const int64_t *)(base + k->offset) > 0
                   ? NULL
                   : "expected a duration like 45m (<integer>(ms|s|m|h))";
    if (k->type == CF_AUTH_SHAPE) {
        int t = *(const int *)(base + k->offset); /* never an out-of-range enum load */
        return t == (int)RS_TALOS_AUTH_LEGACY || t == (int)RS_TALOS_AUTH_DOCUMENT
                   ? NULL
                   : "expected document (Talos v1.12+: a RegistryAuthConfig document) or "
                     "legacy (machine.registries.config)";
    }
    int n = *(const int *)(base + k->offset);
    /* Refused, not clamped: a bound the operator did not get is a surprise. */
    if (k->type == CF_PARALLELISM)
        return n >= 1 && n <= RS_TRANSPORT_PARALLELISM_MAX
                   ? NULL
                   : "expected an integer from 1 to " RS_STR(RS_TRANSPORT_PARALLELISM_MAX);
    if (k->type == CF_SECONDS) {
        if (n % 1000 != 0) return "expected a positive integer";
        n /= 1000;
    }
    /* talos.convergence-attempts: 0 is "not given" (sync.attempts applies). */
    if (n == 0 && k->offset == CF_FIELD(talos_attempts)) return NULL;
    return n >= 1 && n <= CF_INT_MAX ? NULL : "expected a positive integer";
}

/* A value of the wrong YAML shape is refused here; a value of the right
 * shape is stored and then checked by the rule a resolved value obeys
 * (cf_value_why), the one a cassette's configuration obeys too. */
static rs_code cf_apply(const live_yaml_doc *d, const char *path, const cf_key *k, const cJSON *v,
                        rs_config *cfg, rs_err *e)
{
    char *base = (char *)cfg;
    if (k->type == CF_LIST || k->type == CF_LABELS)
        return cf_list(d, path, k->name, v, k->type == CF_LABELS, (char **)(base + k->offset),
                       (size_t *)(base + k->count_offset), e);
    if (k->type == CF_STR || k->type == CF_LABEL || k->type == CF_NAME || k->type == CF_BAO_PATH) {
        rs_config_set_str((char **)(base + k->offset), cJSON_IsString(v) ? v->valuestring : "");
    } else if (k->type == CF_DURATION) {
        int64_t ms;
        if (!cJSON_IsString(v) || !live_yaml_duration_ms(v->valuestring, &ms)) ms = 0;
        *(int64_t *)(base + k->offset) = ms;
    } else if (k->type == CF_AUTH_SHAPE) {
        const char *t = cJSON_GetStringValue(v);
        *(int *)(base + k->offset) = !t                           ? -1
                                     : strcmp(t, "legacy") == 0   ? (int)RS_TALOS_AUTH_LEGACY
                                     : strcmp(t, "document") == 0 ? (int)RS_TALOS_AUTH_DOCUMENT
                                                                  : -1;
    } else {
        /* Not an integer, or beyond any bound: -1, which every integer rule
         * refuses with its own sentence. */
        int n = cJSON_IsNumber(v) && live_yaml_is_int(d, v) && v->valuedouble >= 1 &&
                        v->valuedouble <= CF_INT_MAX
                    ? (int)v->valuedouble
                    : -1;
        *(int *)(base + k->offset) = k->type == CF_SECONDS && n > 0 ? n * 1000 : n;
    }
    const char *why = cf_value_why(k, cfg);
    return why ? cf_fail(e, path, live_yaml_pos_of(d, v), k->name, why) : RS_OK;
}

#define CF_NKEYS RS_ARRAY_LEN(cf_keys)

/* Where each key was given (line 0: not given), for the one-key-once rule
 * and for the checks that relate two keys. */
typedef struct cf_seen {
    live_yaml_pos pos[sizeof cf_keys / sizeof cf_keys[0]];
} cf_seen;

/* Walks nested maps, joining keys with '.', bounded by an explicit depth. */
static rs_code cf_walk(const live_yaml_doc *d, const char *path, const cJSON *map,
                       const char *prefix, int depth, rs_config *cfg, cf_seen *seen, rs_err *e)
{
    if (depth > 3) return cf_fail(e, path, live_yaml_pos_of(d, map), prefix, "nested too deeply");
    const cJSON *it;
    cJSON_ArrayForEach(it, map)
    {
        char key[256];
        snprintf(key, sizeof key, "%s%s%s", prefix, prefix[0] ? "." : "", it->string);
        const cf_key *k = NULL;
        size_t ki = 0;
        for (size_t i = 0; i < CF_NKEYS && !k; i++)
            if (strcmp(cf_keys[i].name, key) == 0) k = &cf_keys[ki = i];
        rs_code c;
        if (k) {
            c = cf_apply(d, path, k, it, cfg, e); /* a bad value is named first */
            if (c == RS_OK && seen->pos[ki].line > 0) {
                char why[160];
                snprintf(why, sizeof why,
                         "given twice (first at line %d; dotted and nested keys name the same "
                         "setting)",
                         seen->pos[ki].line);
                c = cf_fail(e, path, live_yaml_key_pos(d, it), key, why);
            }
            if (seen->pos[ki].line == 0) seen->pos[ki] = live_yaml_key_pos(d, it);
        } else if (cJSON_IsObject(it))
            c = cf_walk(d, path, it, key, depth + 1, cfg, seen, e);
        else
            c = cf_fail(e, path, live_yaml_key_pos(d, it), key, "unknown configuration key");
        if (c != RS_OK) return c;
    }
    return RS_OK;
}

static live_yaml_pos cf_pos(const cf_seen *seen, const char *name)
{
    for (size_t i = 0; i < CF_NKEYS; i++)
        if (strcmp(cf_keys[i].name, name) == 0) return seen->pos[i];
    return (live_yaml_pos){0, 0};
}

/* The registry proof's targets, as the proof will split them: every
 * required target and the operator image must be repo:ref, and the
 * operator image must live on registry-host (H138: the image the nodes pull
 * is proved, and this credential proves only its own registry). Refused
 * before the proof starts, for a --config file (naming file:line:column
 * like every other key) and a cassette's config alike. NULL when they
 * hold; else the sentence, with *key the setting to name (seen: the one
 * given; NULL: operator-image). */
static const char *cf_targets_why(const rs_config *c, const cf_seen *seen, const char **key,
                                  char *why, size_t len)
{
    char repo[512];
    for (size_t i = 0; i < c->n_pull_targets; i++) {
        if (rs_config_target_split(c->pull_targets[i], repo, sizeof repo)) continue;
        *key = "required-pull-targets";
        snprintf(why, len, "required pull target %.256s is not repo:ref", c->pull_targets[i]);
        return why;
    }
    bool own = !seen || cf_pos(seen, "operator-image").line > 0;
    *key = own ? "operator-image" : "registry-host";
    size_t hl = strlen(c->registry_host);
    const char *img = c->operator_image;
    if (strncmp(img, c->registry_host, hl) != 0 || img[hl] != '/') {
        snprintf(why, len,
                 "operator-image %.256s is not on the registry %.256s the credential is proved "
                 "against",
                 img, c->registry_host);
        return why;
    }
    if (!rs_config_target_split(img + hl + 1, repo, sizeof repo)) {
        snprintf(why, len, "operator-image %.256s is not <registry-host>/repo:ref", img);
        return why;
    }
    return NULL;
}

/* The rules that relate keys (DESIGN §3 r2; H141–H143): refused, never
 * clamped, before any cluster call. NULL when they hold; else the sentence,
 * with *key the setting to name: the one given (seen; NULL: the one set). */
static const char *cf_relation_why(const rs_config *c, const cf_seen *seen, const char **key,
                                   char *why, size_t len)
{
    if (c->sync_attempts < 2) {
        *key = "sync.attempts";
        return "must be at least 2 (two identical fence observations need two reads)";
    }
    if (rs_config_talos_attempts(c) < 3) {
        bool own =
            seen ? cf_pos(seen, "talos.convergence-attempts").line > 0 : c->talos_attempts > 0;
        *key = own ? "talos.convergence-attempts" : "sync.attempts";
        return own ? "must be at least 3 (a target pass and two clean inventories)"
                   : "Talos convergence attempts default to sync.attempts and must be at "
                     "least 3 (a target pass and two clean inventories); set "
                     "talos.convergence-attempts";
    }
    if (c->lease_heartbeat_s >= c->lease_duration_s) {
        bool hb = !seen || cf_pos(seen, "lease.heartbeat-s").line > 0;
        *key = hb ? "lease.heartbeat-s" : "lease.duration-s";
        snprintf(why, len,
                 "the heartbeat (%d s) must be below the Lease duration (%d s), or the Lease "
                 "lapses between renewals",
                 c->lease_heartbeat_s, c->lease_duration_s);
        return why;
    }
    return NULL;
}

static rs_code cf_validate(const char *path, const rs_config *c, const cf_seen *seen, rs_err *e)
{
    const char *key = NULL;
    char buf[768];
    const char *why = cf_relation_why(c, seen, &key, buf, sizeof buf);
    if (!why) why = cf_targets_why(c, seen, &key, buf, sizeof buf);
    return why ? cf_fail(e, path, cf_pos(seen, key), key, why) : RS_OK;
}

bool live_config_check(const rs_config *cfg, size_t *offset, const char **key, char *why,
                       size_t len)
{
    for (size_t i = 0; i < CF_NKEYS; i++) {
        const char *w = cf_value_why(&cf_keys[i], cfg);
        if (w) {
            *offset = cf_keys[i].offset;
            *key = cf_keys[i].name;
            snprintf(why, len, "%s", w);
            return false;
        }
    }
    char buf[768];
    const char *w = cf_relation_why(cfg, NULL, key, buf, sizeof buf);
    if (!w) w = cf_targets_why(cfg, NULL, key, buf, sizeof buf);
    if (!w) return true;
    for (size_t i = 0; i < CF_NKEYS; i++)
        if (strcmp(cf_keys[i].name, *key) == 0) *offset = cf_keys[i].offset;
    snprintf(why, len, "%s", w);
    return false;
}

static void cf_copy_over(rs_config *dst, const rs_config *src)
{
    rs_config_free(dst);
    *dst = *src; /* ownership of every string moves to dst */
}

rs_code live_config_load(const char *path, rs_config *cfg, rs_err *e)
{
    live_yaml_doc *d = NULL;
    rs_code c = live_yaml_load(path, "configuration", &d, e);
    if (c != RS_OK) return c;
    const cJSON *root = live_yaml_root(d);
    rs_config scratch;
    rs_config_defaults(&scratch);
    /* Start from the caller's values (e.g. the sim's fan-out namespaces). */
    rs_config_set_list(scratch.fanout_namespaces, &scratch.n_fanout,
                       (const char *const *)cfg->fanout_namespaces, cfg->n_fanout);
    if (!cJSON_IsObject(root))
        c = cf_fail(e, path, live_yaml_pos_of(d, root), "(top)", "expected a map");
    else {
        cf_seen seen;
        memset(&seen, 0, sizeof seen);
        c = cf_walk(d, path, root, "", 0, &scratch, &seen, e);
        if (c == RS_OK) c = cf_validate(path, &scratch, &seen, e);
    }
    live_yaml_free(d);
    if (c != RS_OK) {
        rs_config_free(&scratch);
        return c;
    }
    cf_copy_over(cfg, &scratch);
    return RS_OK;
}
