/*
 * runner_session.c — one world file opened for one run (see the header).
 *
 * The transport opens on first use, not at open: opening it marks the run's
 * start in the world (the invariants' bookkeeping), and a run that fails
 * before its first call — an unknown credential, a bad --config — must leave
 * the world as it found it.
 */
#include "sim/runner/runner_session.h"

#include "core/cred/cred.h"
#include "sim/world/world.h"

#include <stdio.h>
#include <stdlib.h>

struct sim_session {
    sim_world *w;
    bool borrowed; /* the world is the caller's (a scenario runner's): kept open */
    rs_transport *t;
    char *unfired_path;
    char *run_name;
    const sc_run *run;
};

rs_code sim_session_open(const char *db_path, const char *run_name, const sc_run *run,
                         const char *unfired_path, sim_session **out, rs_err *e)
{
    *out = NULL;
    sim_world *w = NULL;
    rs_code c = sim_world_open(db_path, &w, e);
    if (c != RS_OK) return c;
    sim_session *s = rs_xcalloc(1, sizeof *s);
    s->w = w;
    s->run_name = rs_xstrdup(run_name ? run_name : "");
    s->run = run;
    s->unfired_path = unfired_path ? rs_xstrdup(unfired_path) : NULL;
    *out = s;
    return RS_OK;
}

rs_code sim_session_open_world(sim_world *w, const char *run_name, const sc_run *run,
                               const char *unfired_path, sim_session **out)
{
    sim_session *s = rs_xcalloc(1, sizeof *s);
    s->w = w;
    s->borrowed = true;
    s->run_name = rs_xstrdup(run_name ? run_name : "");
    s->run = run;
    s->unfired_path = unfired_path ? rs_xstrdup(unfired_path) : NULL;
    *out = s;
    return RS_OK;
}

rs_transport *sim_session_transport(sim_session *s)
{
    if (!s->t) {
        s->t = sim_transport_open(s->w, s->run_name, s->run);
    }
    return s->t;
}

rs_code sim_session_config(sim_session *s, rs_config *cfg, rs_err *e)
{
    return sim_world_config(s->w, cfg, e);
}

rs_code sim_session_credential(sim_session *s, const char *name, char **text, char **ciphertext,
                               rs_err *e)
{
    return sim_world_credential(s->w, name, text, ciphertext, e);
}

char **sim_session_secrets(sim_session *s)
{
    char **v = NULL;
    size_t n = 0;
    rs_err e;
    rs_err_clear(&e);
    if (sim_world_secrets(s->w, &v, &n, &e) != RS_OK) n = 0;
    char **out = rs_xcalloc(n + 1, sizeof *out);
    for (size_t i = 0; i < n; i++)
        out[i] = v[i];
    free(v);
    return out;
}

void sim_session_secrets_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        cred_text_wipe_free(v[i]);
    free(v);
}

/* The runner's parent reads this file: a fault that never fired means the
 * scenario did not test what it says. */
static void session_write_unfired(sim_session *s)
{
    if (!s->unfired_path || !s->t) return;
    size_t n = 0;
    char **v = sim_transport_unfired(s->t, &n);
    FILE *f = fopen(s->unfired_path, "w");
    if (f) {
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%s\n", v[i]);
        fclose(f);
    }
    sim_strings_free(v, n);
}

void sim_session_close(sim_session *s)
{
    if (!s) return;
    session_write_unfired(s);
    if (s->t && s->t->close) s->t->close(s->t);
    free(s->unfired_path);
    free(s->run_name);
    if (!s->borrowed) sim_world_close(s->w);
    free(s);
}
