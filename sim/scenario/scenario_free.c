/*
 * scenario_free.c — releasing a scenario, whole or half-read.
 *
 * The one idea: the loader allocates every array zeroed at its final length
 * before filling it, so one free path serves a complete scenario and one whose
 * load failed half-way; nothing here may assume a field was reached.
 * Catalogue secrets are wiped before they are freed.
 */
#include "sim/scenario/scenario_int.h"

#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

static void sc_secret_free(char *s)
{
    /* Catalogue secrets are test fixtures, but the loader is also how
     * recorded incidents come back; do not leave them in freed heap. */
    if (s) OPENSSL_cleanse(s, strlen(s));
    free(s);
}

void scl_cred_free(sc_cred *c)
{
    free(c->name);
    free(c->username);
    sc_secret_free(c->password);
    sc_secret_free(c->dockerconfigjson);
    free(c->ciphertext);
    scl_str_list_free(c->pulls, c->n_pulls);
    memset(c, 0, sizeof *c);
}

static void sc_event_free(sc_event *ev)
{
    free(ev->kind);
    cJSON_Delete(ev->args);
    cJSON_Delete(ev->lines);
}

static void sc_run_free(sc_run *r)
{
    free(r->name);
    scl_str_list_free(r->args, r->n_args);
    for (size_t i = 0; i < r->n_before; i++)
        sc_event_free(&r->before[i]);
    free(r->before);
    for (size_t i = 0; i < r->n_faults; i++)
        free(r->faults[i].on);
    free(r->faults);
    for (size_t i = 0; i < r->n_during; i++) {
        free(r->during[i].before_call);
        sc_event_free(&r->during[i].action);
    }
    free(r->during);
    cJSON_Delete(r->expect);
    cJSON_Delete(r->by_strategy);
    cJSON_Delete(r->expect_lines);
    cJSON_Delete(r->by_strategy_lines);
    free(r->invariants_off);
    free(r->invariants_reason);
}

void sc_free(sc_scenario *sc)
{
    if (!sc) return;
    free(sc->file);
    free(sc->name);
    free(sc->about);
    scl_str_list_free(sc->strategies, sc->n_strategies);
    free(sc->cluster.preset);
    scl_str_list_free(sc->cluster.fanout_namespaces, sc->cluster.n_fanout);
    free(sc->cluster.credential);
    free(sc->cluster.cassette);
    free(sc->desired);
    for (size_t i = 0; i < sc->n_catalogue; i++)
        scl_cred_free(&sc->catalogue[i]);
    free(sc->catalogue);
    for (size_t i = 0; i < sc->n_runs; i++)
        sc_run_free(&sc->runs[i]);
    free(sc->runs);
    for (size_t i = 0; i < sc->n_refs; i++) {
        free(sc->refs[i].ref);
        free(sc->refs[i].path);
    }
    free(sc->refs);
    for (size_t i = 0; i < sc->n_perturb_menu; i++) {
        free(sc->perturb_menu[i].name);
        sc_event_free(&sc->perturb_menu[i].ev);
    }
    free(sc->perturb_menu);
    free(sc);
}
