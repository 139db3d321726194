/*
 * scenario_readings.c — the values a reseeded run decides on that the
 * recording never observed, and the readings of each worth running (see
 * scenario_cassette.h).
 *
 * The one idea: an unknown is made explicit, never guessed. An eager
 * recording never reads the OpenBao seed (eager force-syncs instead), so a
 * lazy reseed of it would decide on whatever the world builder put there.
 * Instead it runs once per reading that matters: the seed equal to what
 * its consumers show (what a healthy chain implies), and the seed stale —
 * an older credential than its consumers hold, as after a raft restore,
 * the hazard only a direct read shows (scenarios/fanout/stale-openbao-seed.yaml).
 */
#include "sim/scenario/scenario_cassette.h"

#include "sim/scenario/scenario_int.h"

#include "core/cred/cred.h"

#include <stdlib.h>
#include <string.h>

/* The text most of the consumer Secrets' first reads show (the first
 * namespace's wins a tie), or NULL when none was read; *shown and *read
 * say how many showed it and how many were read. Caller wipes and frees. */
static char *rd_consumers_text(sc_cassette *c, size_t *shown, size_t *read)
{
    char *texts[RS_CONFIG_LIST_MAX] = {NULL};
    size_t n = 0, best = 0, best_count = 0;
    for (size_t i = 0; i < c->cfg.n_fanout && i < RS_CONFIG_LIST_MAX; i++) {
        char *t = sc_cassette_secret_text(c, c->cfg.fanout_namespaces[i], c->cfg.consumer_name,
                                          c->cfg.consumer_key);
        if (t) texts[n++] = t;
    }
    for (size_t i = 0; i < n; i++) {
        size_t count = 0;
        for (size_t j = 0; j < n; j++)
            count += strcmp(texts[i], texts[j]) == 0;
        if (count > best_count) {
            best = i;
            best_count = count;
        }
    }
    char *out = n ? rs_xstrdup(texts[best]) : NULL;
    for (size_t i = 0; i < n; i++)
        cred_text_wipe_free(texts[i]);
    *shown = best_count;
    *read = n;
    return out;
}

/* The catalogue entry whose docker config text is text, added as name when
 * none is. */
static const char *rd_entry_for(sc_scenario *sc, const char *name, const char *text)
{
    for (size_t i = 0; i < sc->n_catalogue; i++)
        if (sc->catalogue[i].dockerconfigjson &&
            strcmp(sc->catalogue[i].dockerconfigjson, text) == 0)
            return sc->catalogue[i].name;
    sc->catalogue = rs_xrealloc(sc->catalogue, (sc->n_catalogue + 1) * sizeof *sc->catalogue);
    sc_cred *cr = &sc->catalogue[sc->n_catalogue++];
    memset(cr, 0, sizeof *cr);
    cr->name = rs_xstrdup(name);
    cr->dockerconfigjson = rs_xstrdup(text);
    cr->ciphertext = sc_default_ciphertext(name);
    /* The pair too, so every report's redaction knows the password. */
    cJSON *doc = cJSON_Parse(text);
    const cJSON *auth =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "auths"), "ghcr.io");
    const char *u = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(auth, "username"));
    const char *p = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(auth, "password"));
    if (u && p) {
        cr->username = rs_xstrdup(u);
        cr->password = rs_xstrdup(p);
    }
    cred_json_wipe_delete(doc);
    return cr->name;
}

/* A credential neither the consumers nor desired hold: the stale seed. Its
 * password is derived from theirs, so the same cassette gives the same
 * bytes. Caller wipes and frees. */
static char *rd_stale_text(const char *consumers, const char *desired)
{
    char *seed = rs_xasprintf("reassert-stale-seed:%s:%s", consumers ? consumers : "",
                              desired ? desired : "");
    char hex[65];
    sha256_hex(seed, strlen(seed), hex);
    cred_text_wipe_free(seed);
    char *pass = rs_xasprintf("rs-stale-%.24s", hex);
    char *text = cred_dockerconfig_build("ghcr.io", "stale-seed", pass);
    free(pass);
    return text;
}

static void rd_set(sc_reading *r, const char *name, char *about, const char *kind, cJSON *args)
{
    r->name = rs_xstrdup(name);
    r->about = about;
    r->ev.kind = rs_xstrdup(kind);
    r->ev.args = args;
}

rs_code sc_cassette_readings(sc_scenario *sc, sc_readings *out, rs_err *e)
{
    memset(out, 0, sizeof *out);
    sc_cassette c;
    if (sc_cassette_open(sc->cluster.cassette, &c, e) != RS_OK) {
        sc_cassette_close(&c);
        return e->code;
    }
    if (sc_cassette_first(&c, "openbao.read", c.cfg.openbao_path)) {
        sc_cassette_close(&c); /* the recording read the seed: nothing to guess */
        return RS_OK;
    }
    out->unobserved = rs_xasprintf("openbao.read %s", c.cfg.openbao_path);
    size_t shown = 0, read = 0;
    char *consumers = rd_consumers_text(&c, &shown, &read);
    cJSON *args = cJSON_CreateObject();
    cJSON_AddStringToObject(args, "path", c.cfg.openbao_path);
    if (consumers) {
        cJSON_AddStringToObject(args, "credential", rd_entry_for(sc, "consumers", consumers));
        rd_set(&out->r[out->n++], "seed=consumers",
               rs_xasprintf("the seed equal to what its consumers show (%zu of the %zu consumer "
                            "Secrets read show it)",
                            shown, read),
               "openbao.write", args);
    } else {
        cJSON_AddStringToObject(args, "credential", sc->cluster.credential);
        rd_set(&out->r[out->n++], "seed=variables",
               rs_xstrdup("the seed equal to what variables-base holds (no consumer Secret was "
                          "read)"),
               "openbao.write", args);
    }
    const sc_cred *desired = sc_catalogue_find(sc, sc->desired); /* after rd_entry_for grew it */
    char *stale = rd_stale_text(consumers, desired ? desired->dockerconfigjson : NULL);
    args = cJSON_CreateObject();
    cJSON_AddStringToObject(args, "credential", rd_entry_for(sc, "stale-seed", stale));
    rd_set(&out->r[out->n++], "seed-stale",
           rs_xstrdup("the seed an older credential than its consumers hold, as after a raft "
                      "restore (only a direct read shows it)"),
           "openbao.raft-restore", args);
    cred_text_wipe_free(stale);
    if (consumers) cred_text_wipe_free(consumers);
    sc_cassette_close(&c);
    return RS_OK;
}

void sc_readings_free(sc_readings *rd)
{
    for (size_t i = 0; i < rd->n; i++) {
        free(rd->r[i].name);
        free(rd->r[i].about);
        free(rd->r[i].ev.kind);
        cJSON_Delete(rd->r[i].ev.args);
    }
    free(rd->unobserved);
    memset(rd, 0, sizeof *rd);
}

void sc_reading_push(sc_scenario *sc, const sc_reading *r)
{
    sc_run *run = &sc->runs[0];
    run->before = rs_xrealloc(run->before, (run->n_before + 1) * sizeof *run->before);
    sc_event *ev = &run->before[run->n_before++];
    memset(ev, 0, sizeof *ev);
    ev->kind = rs_xstrdup(r->ev.kind);
    ev->args = cJSON_Duplicate(r->ev.args, 1);
}

void sc_reading_pop(sc_scenario *sc)
{
    sc_run *run = &sc->runs[0];
    if (!run->n_before) return;
    sc_event *ev = &run->before[--run->n_before];
    free(ev->kind);
    cJSON_Delete(ev->args);
    memset(ev, 0, sizeof *ev);
}
