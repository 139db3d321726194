/*
 * check_expect.c — expectation checks. Each failure is one sentence naming the
 * expectation, what was wanted and what was found, so a red scenario says
 * exactly which promise the core broke. Credentials are compared, never
 * printed; Secret data is shown by fingerprint; and every message still
 * passes the runner's redaction filter (core/cred/cred_redact.h), which
 * catches a credential quoted from the scenario itself (an output-contains
 * needle).
 */
#include "sim/check/check_expect.h"
#include "sim/world/world_internal.h"

#include "core/cred/cred.h"
#include "core/cred/cred_redact.h"
#include "sim/store/jsonpatch.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where failures go: the sentences, and beside each the scenario line of
 * the expectation it broke (0 when unknown; the runner then uses the run's
 * `expect:` line). */
typedef struct ex_out {
    cJSON *failures;
    cJSON *lines; /* may be NULL */
} ex_out;

static void fail(const ex_out *o, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(const ex_out *o, int line, const char *fmt, ...)
{
    /* Never truncated: a message cut inside a credential would hide the
     * cut-off part from the redaction filter the runner applies. */
    va_list ap;
    va_start(ap, fmt);
    char *msg = rs_xvasprintf(fmt, ap);
    va_end(ap);
    cJSON_AddItemToArray(o->failures, cJSON_CreateString(msg));
    if (o->lines) cJSON_AddItemToArray(o->lines, cJSON_CreateNumber(line));
    free(msg);
}

/* The line of a node of the expectation's line mirror (sc_expect_lines_for):
 * a number for a scalar, an object's "@" for a map. */
static int line_of(const cJSON *m)
{
    if (cJSON_IsObject(m)) m = cJSON_GetObjectItemCaseSensitive(m, "@");
    return cJSON_IsNumber(m) ? m->valueint : 0;
}

static const cJSON *mirror_key(const cJSON *m, const char *key)
{
    return cJSON_IsObject(m) ? cJSON_GetObjectItemCaseSensitive(m, key) : NULL;
}

/* A value of Secret data as the failure shows it: its fingerprint, never the
 * value (base64 of a docker config is the password in all but name). */
static char *shown_value(const cJSON *v, bool secret)
{
    char *s = cJSON_PrintUnformatted(v);
    if (!secret || !s) return s;
    char fp[CRED_FINGERPRINT_LEN];
    cred_redact_fingerprint(s, strlen(s), fp);
    cred_text_wipe_free(s);
    return rs_xasprintf("a value with fingerprint %s (Secret data is never printed)", fp);
}

bool expect_compare(const cJSON *want, double got, char *desc, size_t desclen)
{
    if (cJSON_IsNumber(want)) {
        snprintf(desc, desclen, "%g", want->valuedouble);
        return fabs(got - want->valuedouble) < 1e-9;
    }
    if (!cJSON_IsString(want)) {
        snprintf(desc, desclen, "(unsupported)");
        return false;
    }
    const char *s = want->valuestring;
    snprintf(desc, desclen, "%s", s);
    const char *num = s;
    int op = 0; /* 1 >=, 2 <=, 3 >, 4 < */
    if (strncmp(s, ">=", 2) == 0)
        op = 1, num = s + 2;
    else if (strncmp(s, "<=", 2) == 0)
        op = 2, num = s + 2;
    else if (s[0] == '>')
        op = 3, num = s + 1;
    else if (s[0] == '<')
        op = 4, num = s + 1;
    double n = strtod(num, NULL);
    switch (op) {
    case 1:
        return got >= n - 1e-9;
    case 2:
        return got <= n + 1e-9;
    case 3:
        return got > n + 1e-9;
    case 4:
        return got < n - 1e-9;
    default:
        return fabs(got - n) < 1e-9;
    }
}

static void check_delta(const cJSON *want, const cJSON *lines, const cJSON *delta, const ex_out *o)
{
    const cJSON *item;
    cJSON_ArrayForEach(item, want)
    {
        const char *key = item->string;
        const cJSON *got = cJSON_GetObjectItemCaseSensitive(delta, key);
        const cJSON *at = mirror_key(lines, key);
        char desc[64];
        if (strcmp(key, "lease_rv_moved") == 0) {
            bool g = cJSON_IsTrue(got);
            if (g != (bool)cJSON_IsTrue(item))
                fail(o, line_of(at), "delta.lease_rv_moved: expected %s, got %s",
                     cJSON_IsTrue(item) ? "true" : "false", g ? "true" : "false");
        } else if (strcmp(key, "writes_by_kind") == 0) {
            const cJSON *k;
            cJSON_ArrayForEach(k, item)
            {
                const cJSON *gk = cJSON_GetObjectItemCaseSensitive(got, k->string);
                double g = cJSON_IsNumber(gk) ? gk->valuedouble : 0;
                if (!expect_compare(k, g, desc, sizeof desc))
                    fail(o, line_of(mirror_key(at, k->string)),
                         "delta.writes_by_kind.%s: expected %s, got %g", k->string, desc, g);
            }
        } else {
            double g = cJSON_IsNumber(got) ? got->valuedouble : 0;
            if (!expect_compare(item, g, desc, sizeof desc))
                fail(o, line_of(at), "delta.%s: expected %s, got %g", key, desc, g);
        }
    }
}

/* The docker config a Secret holds: .dockerconfigjson, else the
 * variables-base key, else the only data key. Caller frees. */
static char *secret_docker_config(const cJSON *obj)
{
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(obj, "data");
    const char *keys[] = {".dockerconfigjson", "ghcr_dockerconfigjson"};
    const cJSON *v = NULL;
    for (size_t i = 0; i < 2 && !cJSON_IsString(v); i++)
        v = cJSON_GetObjectItemCaseSensitive(data, keys[i]);
    if (!cJSON_IsString(v) && cJSON_GetArraySize(data) == 1) v = data->child;
    if (!cJSON_IsString(v)) return NULL;
    size_t len = 0;
    char *text = (char *)base64_decode(v->valuestring, &len);
    if (!text) return NULL;
    char *z = rs_xmalloc(len + 1);
    memcpy(z, text, len);
    z[len] = '\0';
    free(text);
    return z;
}

/* Does text equal catalogue credential `name`? */
/* A Talos node's registry auth is ghcr.io's entry only (ghcr_only): it is
 * the catalogue credential when that entry is. */
static bool credential_is_as(sim_world *w, const char *name, const char *text, bool ghcr_only)
{
    if (!text) return false;
    char *want = NULL, *ct = NULL;
    rs_err e;
    bool eq = false;
    if (sim_world_credential(w, name, &want, &ct, &e) == RS_OK) {
        rs_cred c;
        if (cred_parse(want, strlen(want), "catalogue credential", &c, &e) == RS_OK) {
            eq = ghcr_only ? cred_ghcr_matches_text(&c, text, strlen(text))
                           : cred_matches_text(&c, text, strlen(text));
            cred_free(&c);
        }
    }
    free(want);
    free(ct);
    return eq;
}

static bool credential_is(sim_world *w, const char *name, const char *text)
{
    return credential_is_as(w, name, text, false);
}

static void check_state_one(const cJSON *chk, int line, sim_world *w, const ex_out *o)
{
    const char *ref = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(chk, "ref"));
    const char *path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(chk, "path"));
    const char *cred = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(chk, "credential"));
    const char *bao = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(chk, "openbao"));
    const char *talos = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(chk, "talos"));
    if (bao) {
        char *v = sim_world_openbao_value(w, bao);
        if (!credential_is(w, cred, v))
            fail(o, line, "state openbao %s: expected credential %s, found %s", bao, cred,
                 v ? "another value" : "nothing");
        free(v);
        return;
    }
    if (talos) {
        const char *want =
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(chk, "registry-auth"));
        char *v = sim_world_talos_auth(w, talos);
        if (!credential_is_as(w, want, v, true))
            fail(o, line, "state talos %s: expected registry auth %s, found %s", talos, want,
                 v ? "another value" : "nothing");
        free(v);
        return;
    }
    cJSON *obj = NULL;
    int st = sim_world_get(w, ref, &obj);
    if (cred) {
        char *v = st == 200 ? secret_docker_config(obj) : NULL;
        if (!credential_is(w, cred, v))
            fail(o, line, "state %s: expected credential %s, found %s", ref, cred,
                 st != 200 ? "no object"
                 : v       ? "another value"
                           : "no docker config");
        free(v);
    } else {
        const cJSON *node = st == 200 ? jsonpointer_get(obj, path) : NULL;
        bool absent = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(chk, "absent"));
        const cJSON *equals = cJSON_GetObjectItemCaseSensitive(chk, "equals");
        bool secret = ref && strncmp(ref, "Secret/", 7) == 0;
        if (absent && node) {
            char *s = shown_value(node, secret);
            fail(o, line, "state %s %s: expected absent, found %s", ref, path, s);
            free(s);
        } else if (!absent && equals) {
            /* A missing boolean reads as false, as Kubernetes defaults it. */
            bool ok =
                node ? cJSON_Compare(node, equals, true) : (st == 200 && cJSON_IsFalse(equals));
            if (!ok) {
                char *want = shown_value(equals, secret);
                char *got = node ? shown_value(node, secret) : NULL;
                fail(o, line, "state %s %s: expected %s, found %s", ref, path, want,
                     got ? got : (st == 200 ? "nothing" : "no object"));
                free(want);
                free(got);
            }
        }
    }
    cJSON_Delete(obj);
}

void expect_state_now(sim_world *w, const sc_event *check, const char *where, cJSON *failures,
                      cJSON *failure_lines)
{
    cJSON *own = cJSON_CreateArray(), *own_lines = cJSON_CreateArray();
    const ex_out o = {own, own_lines};
    int i = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, check->args)
    {
        const cJSON *at = cJSON_GetArrayItem(check->lines, i++);
        check_state_one(c, cJSON_IsNumber(at) ? at->valueint : check->pos.line, w, &o);
    }
    i = 0;
    cJSON_ArrayForEach(c, own)
    {
        char *msg = rs_xasprintf("check (%s): %s", where, c->valuestring);
        cJSON_AddItemToArray(failures, cJSON_CreateString(msg));
        free(msg);
        if (failure_lines)
            cJSON_AddItemToArray(failure_lines,
                                 cJSON_CreateNumber(cJSON_GetArrayItem(own_lines, i)->valueint));
        i++;
    }
    cJSON_Delete(own);
    cJSON_Delete(own_lines);
}

void expect_during_failures(sim_world *w, long long after_seq, const char *run_name,
                            cJSON *failures, cJSON *failure_lines)
{
    sqlite3_stmt *st = simw_stmt(w, "SELECT line, message FROM check_failures"
                                    " WHERE run = ?1 AND seq > ?2 ORDER BY seq");
    sqlite3_bind_text(st, 1, run_name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, after_seq);
    while (simw_step_row(w, st)) {
        char *msg = simw_col_text(st, 1);
        cJSON_AddItemToArray(failures, cJSON_CreateString(msg ? msg : ""));
        if (failure_lines)
            cJSON_AddItemToArray(failure_lines, cJSON_CreateNumber(sqlite3_column_int(st, 0)));
        free(msg);
    }
    sqlite3_reset(st);
}

void expect_during_failure_add(sim_world *w, const char *run_name, int line, const char *message)
{
    sqlite3_stmt *st =
        simw_stmt(w, "INSERT INTO check_failures(run, line, message) VALUES(?1, ?2, ?3)");
    sqlite3_bind_text(st, 1, run_name, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, line);
    sqlite3_bind_text(st, 3, message, -1, SQLITE_STATIC);
    simw_step_done(w, st);
}

long long expect_during_mark(sim_world *w)
{
    sqlite3_stmt *st = simw_stmt(w, "SELECT coalesce(max(seq), 0) FROM check_failures");
    long long seq = simw_step_row(w, st) ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return seq;
}

void expect_check(const cJSON *expect, const cJSON *lines, int exit_code, const cJSON *delta,
                  const char *output, sim_world *w, cJSON *failures, cJSON *failure_lines)
{
    const ex_out o = {failures, failure_lines};
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(expect, "exit");
    /* No exit named is "exit 0": a run that failed is never passed just
     * because nobody wrote down what it should do (DESIGN §5.1). */
    int want = cJSON_IsNumber(ex) ? ex->valueint : 0;
    if (want != exit_code)
        fail(&o, line_of(mirror_key(lines, "exit")), "exit: expected %d%s, got %d", want,
             cJSON_IsNumber(ex) ? "" : " (no expect.exit: a run must succeed)", exit_code);
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(expect, "delta");
    if (d) check_delta(d, mirror_key(lines, "delta"), delta, &o);
    const cJSON *oc = cJSON_GetObjectItemCaseSensitive(expect, "output-contains");
    const cJSON *s;
    int i = 0;
    cJSON_ArrayForEach(s, oc)
    {
        int at = line_of(cJSON_GetArrayItem(mirror_key(lines, "output-contains"), i++));
        if (cJSON_IsString(s) && !strstr(output, s->valuestring))
            fail(&o, at, "output-contains: \"%s\" not in the run's output", s->valuestring);
    }
    /* The mirror of output-contains, on the same text. */
    const cJSON *absent = cJSON_GetObjectItemCaseSensitive(expect, "output-not-contains");
    i = 0;
    cJSON_ArrayForEach(s, absent)
    {
        int at = line_of(cJSON_GetArrayItem(mirror_key(lines, "output-not-contains"), i++));
        if (cJSON_IsString(s) && strstr(output, s->valuestring))
            fail(&o, at, "output-not-contains: \"%s\" is in the run's output", s->valuestring);
    }
    const cJSON *order = cJSON_GetObjectItemCaseSensitive(expect, "output-in-order");
    const char *cursor = output;
    i = 0;
    cJSON_ArrayForEach(s, order)
    {
        int at = line_of(cJSON_GetArrayItem(mirror_key(lines, "output-in-order"), i++));
        const char *hit = cJSON_IsString(s) ? strstr(cursor, s->valuestring) : NULL;
        if (!hit) {
            fail(&o, at, "output-in-order: \"%s\" not found after the previous entry",
                 s->valuestring);
            break;
        }
        cursor = hit + strlen(s->valuestring);
    }
    const cJSON *state = cJSON_GetObjectItemCaseSensitive(expect, "state");
    i = 0;
    cJSON_ArrayForEach(s, state)
    {
        int at = line_of(cJSON_GetArrayItem(mirror_key(lines, "state"), i++));
        check_state_one(s, at, w, &o);
    }
}

/* Invariant 6 is judged with the report filter itself (sim_world_redact_set,
 * cred_redact.h): one list of encodings, so the check cannot be blind to a
 * form the filter covers (base64 of user:password once passed it). A credential
 * is in the text exactly when redacting it changes the text. */
static bool text_holds(const cred_redact *set, const char *text)
{
    size_t len = strlen(text), out_len = 0;
    char *red = cred_redact_text(set, text, len, &out_len);
    bool hit = out_len != len || memcmp(red, text, len) != 0;
    cred_text_wipe_free(red);
    return hit;
}

void expect_no_plaintext(sim_world *w, const char *output, const char *where, cJSON *failures)
{
    const ex_out o = {failures, NULL};
    sqlite3_stmt *st = simw_stmt(w, "SELECT name FROM catalogue ORDER BY name");
    while (simw_step_row(w, st)) {
        char *name = simw_col_text(st, 0);
        cred_redact *set = sim_world_redact_set(w, name);
        if (text_holds(set, output))
            fail(&o, 0, "invariant 6: catalogue credential %s appears in %s", name, where);
        cred_redact_free(set);
        free(name);
    }
    sqlite3_reset(st);
    /* §6.6 names tokens too. The sim's registry tokens are derived, not
     * stored; each carries the prefix, found in every encoding above. */
    cred_redact *tokens = cred_redact_new();
    cred_redact_add(tokens, "registry-token", SIM_REGISTRY_TOKEN_PREFIX,
                    strlen(SIM_REGISTRY_TOKEN_PREFIX));
    if (text_holds(tokens, output))
        fail(&o, 0, "invariant 6: a registry token appears in %s", where);
    cred_redact_free(tokens);
}
