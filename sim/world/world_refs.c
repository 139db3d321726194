/*
 * world_refs.c — every object reference of a scenario resolved against the
 * world it builds (DESIGN.md §5.1: a reference to nothing is a load error).
 *
 * The loader checks a reference's shape and kind; only a built world knows
 * whether `Kustomization/flux-sytem/flux-system` names anything. A reference
 * resolves when, at its place in the file, the object may exist:
 *   - it is in the world as built (the preset's objects, or a cassette's);
 *   - it is one the core, or ESO on its behalf, creates by name when absent
 *     (the Lease, variables-base, the root Secret, each fan-out namespace's
 *     consumer Secret) — a deletion does not make a later reference wrong;
 *   - an event creates it (`kube.apply`'s object, `node.add`'s Node) earlier
 *     on the timeline: for a `before:` item, in an earlier run or an earlier
 *     item of the same `before:`; for a `during:` entry or `expect.state`, in
 *     this run or an earlier one (a `during:` entry's own order of firing is
 *     not known before the run); for a `perturb-menu:` event, anywhere.
 * Names nobody can know before the run (a rollout's pods, whose names hash the
 * restart) cannot be referenced; no scenario needs them.
 */
#include "sim/world/world_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct wr_made {
    char *ref;
    sc_ref_at at;
    size_t run, item;
} wr_made;

typedef struct wr_set {
    char **refs; /* sorted after filling */
    size_t n, cap;
    wr_made *made;
    size_t n_made, cap_made;
} wr_set;

static void wr_add(wr_set *s, char *ref)
{
    if (s->n == s->cap)
        s->refs = rs_xrealloc(s->refs, (s->cap = s->cap * 2 + 64) * sizeof *s->refs);
    s->refs[s->n++] = ref;
}

static void wr_add_made(wr_set *s, char *ref, sc_ref_at at, size_t run, size_t item)
{
    if (s->n_made == s->cap_made)
        s->made = rs_xrealloc(s->made, (s->cap_made = s->cap_made * 2 + 16) * sizeof *s->made);
    s->made[s->n_made++] = (wr_made){.ref = ref, .at = at, .run = run, .item = item};
}

static char *wr_ref(const char *kind, const char *ns, const char *name)
{
    return ns && ns[0] ? rs_xasprintf("%s/%s/%s", kind, ns, name)
                       : rs_xasprintf("%s/%s", kind, name);
}

static int wr_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The objects of the world as built, and those the core creates by name. */
static void wr_world(sim_world *w, wr_set *s)
{
    sqlite3_stmt *st = simw_stmt(w, "SELECT kind, ns, name FROM objects");
    while (simw_step_row(w, st))
        wr_add(s, wr_ref((const char *)sqlite3_column_text(st, 0),
                         (const char *)sqlite3_column_text(st, 1),
                         (const char *)sqlite3_column_text(st, 2)));
    sqlite3_reset(st);
    const rs_config *c = &w->cfg;
    wr_add(s, wr_ref("Lease", c->lease_ns, c->lease_name));
    wr_add(s, wr_ref("Secret", c->variables_ns, c->variables_name));
    wr_add(s, wr_ref("Secret", c->root_ns, c->root_name));
    for (size_t i = 0; i < c->n_fanout; i++)
        wr_add(s, wr_ref("Secret", c->fanout_namespaces[i], c->consumer_name));
    qsort(s->refs, s->n, sizeof *s->refs, wr_cmp);
}

/* What one event creates by name, if anything. */
static char *wr_created(const sc_event *ev)
{
    if (!strcmp(ev->kind, "node.add")) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev->args, "name"));
        return name ? wr_ref("Node", NULL, name) : NULL;
    }
    if (strcmp(ev->kind, "kube.apply") != 0) return NULL;
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(ev->args, "object");
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, "kind"));
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "name"));
    const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "namespace"));
    return kind && name ? wr_ref(kind, ns, name) : NULL;
}

static void wr_events(const sc_scenario *sc, wr_set *s)
{
    for (size_t r = 0; r < sc->n_runs; r++) {
        const sc_run *run = &sc->runs[r];
        for (size_t j = 0; j < run->n_before; j++) {
            char *ref = wr_created(&run->before[j]);
            if (ref) wr_add_made(s, ref, SC_REF_BEFORE, r, j);
        }
        for (size_t j = 0; j < run->n_during; j++) {
            char *ref = wr_created(&run->during[j].action);
            if (ref) wr_add_made(s, ref, SC_REF_DURING, r, j);
        }
    }
    for (size_t j = 0; j < sc->n_perturb_menu; j++) {
        char *ref = wr_created(&sc->perturb_menu[j].ev);
        if (ref) wr_add_made(s, ref, SC_REF_MENU, 0, j);
    }
}

/* Whether an event that creates m comes before the reference at. */
static bool wr_made_before(const wr_made *m, const sc_ref *at)
{
    if (at->at == SC_REF_MENU || m->at == SC_REF_MENU) return true;
    if (m->run != at->run) return m->run < at->run;
    if (at->at != SC_REF_BEFORE) return true;
    return m->at == SC_REF_BEFORE && m->item < at->item;
}

static bool wr_resolves(const wr_set *s, const sc_ref *r)
{
    const char *key = r->ref;
    if (bsearch(&key, s->refs, s->n, sizeof *s->refs, wr_cmp)) return true;
    for (size_t i = 0; i < s->n_made; i++)
        if (!strcmp(s->made[i].ref, r->ref) && wr_made_before(&s->made[i], r)) return true;
    return false;
}

static void wr_free(wr_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->refs[i]);
    free(s->refs);
    for (size_t i = 0; i < s->n_made; i++)
        free(s->made[i].ref);
    free(s->made);
}

rs_code sim_world_resolve_refs(sim_world *w, const sc_scenario *sc, rs_err *e)
{
    wr_set s = {0};
    simw_begin(w);
    wr_world(w, &s);
    simw_commit(w);
    wr_events(sc, &s);
    rs_code rc = RS_OK;
    for (size_t i = 0; i < sc->n_refs && rc == RS_OK; i++) {
        const sc_ref *r = &sc->refs[i];
        if (wr_resolves(&s, r)) continue;
        rc = rs_fail(e, RS_DATAERR,
                     "%s:%d:%d: %s: names no object (\"%s\"): the world this scenario builds has "
                     "none, no kube.apply or node.add %s creates it, and the core creates no "
                     "object of that name",
                     sc->file, r->pos.line, r->pos.col, r->path, r->ref,
                     r->at == SC_REF_BEFORE ? "before it" : "in this run or an earlier one");
    }
    wr_free(&s);
    return rc;
}
