/*
 * sweep.c — `reassert sweep`: the three searches and the one-plan replay.
 *
 *   crash    for every write k of a run: crash there (kill -9), recover the
 *            crashed run's fences if it left any, run it again; judge.
 *   perturb  for every call k of a run and every menu entry: the other
 *            actor's event just before the call; judge the run.
 *   swarm    N plans drawn from the seed (1 to 4 faults each: fail,
 *            timeout, lost-response, crash, latency, menu events), each
 *            followed by a fault-free run; a failing plan is shrunk (drop
 *            one fault at a time while it still fails) and printed with
 *            the one command that replays it (`--plan`).
 *
 * Plans are numbered in one fixed order (strategy, run, plan), so
 * `--shard I/N` takes every plan whose number is I-1 modulo N: shards are
 * disjoint, cover every plan, and need no coordination.
 */
#include "sim/sweep/sweep_int.h"
#include "sim/sweep/sweep_report.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Plan i of a swarm: a function of the seed and i alone, so a shard draws
 * the very plans the whole swarm would. */
static void swarm_plan(uint64_t seed, size_t i, const sw_base *b, const sw_menu *m, sw_plan *p)
{
    static const int statuses[] = {500, 503, 429, 409, 422, 404, 403};
    uint64_t s = seed ^ (0xd1b54a32d192ed03ULL * (uint64_t)(i + 1));
    memset(p, 0, sizeof *p);
    p->n = 1 + (size_t)(splitmix(&s) % SW_SWARM_FAULTS_MAX);
    for (size_t k = 0; k < p->n; k++) {
        sw_fault *f = &p->f[k];
        f->call = b->n ? (size_t)(splitmix(&s) % b->n) : 0;
        unsigned w = (unsigned)(splitmix(&s) % 100);
        if (w < 25) {
            f->kind = SW_FAIL;
            f->status = statuses[splitmix(&s) % RS_ARRAY_LEN(statuses)];
        } else if (w < 40) {
            f->kind = SW_TIMEOUT;
        } else if (w < 60) {
            f->kind = SW_LOST;
        } else if (w < 70) {
            f->kind = SW_CRASH;
        } else if (w < 80) {
            f->kind = SW_LATENCY;
            f->ms = 100 + (int64_t)(splitmix(&s) % 60000);
        } else {
            f->kind = SW_EVENT;
            f->menu = (size_t)(splitmix(&s) % m->n);
            /* One actor does a thing once per plan (a second node.add of
             * the same name is not an event, it is an error). */
            for (size_t j = 0; j < k; j++)
                if (p->f[j].kind == SW_EVENT && p->f[j].menu == f->menu) f->kind = SW_TIMEOUT;
        }
    }
}

/* Drops one fault at a time while the plan still fails; returns the number
 * of plans executed. *failures: the shrunk plan's own failures (what its
 * reproduce command prints), NULL when no fault could be dropped. */
static size_t shrink(const sw_ctx *c, size_t run, const sw_base *b, sw_plan *p, cJSON **failures)
{
    *failures = NULL;
    size_t tries = 0;
    bool changed = true;
    while (changed && p->n > 1) {
        changed = false;
        for (size_t i = 0; i < p->n && !changed; i++) {
            sw_plan t = *p;
            sw_plan_drop(&t, i);
            sw_outcome o;
            sw_exec(c, run, &t, b, true, false, &o);
            tries++;
            if (!o.passed) {
                *p = t;
                changed = true;
                cJSON_Delete(*failures);
                *failures = o.failures;
                o.failures = NULL;
            }
            sw_outcome_free(&o);
        }
    }
    return tries;
}

typedef struct sw_run_state {
    const sweep_opts *o;
    sw_ctx ctx;
    sw_report *rep;
    size_t next_index; /* the global plan number */
    bool emitted;
    int emit_status;
} sw_run_state;

static bool mine(const sw_run_state *st, size_t index)
{
    return index % st->o->shard_n == st->o->shard_i - 1;
}

/* Writes the first failing plan as a scenario, when asked. */
static void maybe_emit(sw_run_state *st, size_t run, const sw_plan *p, const sw_base *b,
                       bool follow_up)
{
    if (!st->o->emit || st->emitted) return;
    st->emitted = true;
    rs_err e;
    rs_err_clear(&e);
    if (sw_emit(&st->ctx, run, p, b, follow_up, st->o->emit, &e) != RS_OK) {
        sw_report_note(st->rep, e.msg);
        st->emit_status = RS_FAILED;
    }
}

static void one_plan(sw_run_state *st, size_t run, const sw_base *b, sw_plan *p, cJSON *row,
                     bool follow_up, bool expect_crash, bool may_shrink)
{
    sw_outcome out;
    sw_exec(&st->ctx, run, p, b, follow_up, expect_crash, &out);
    char *spec = sw_plan_spec(p, st->ctx.menu);
    cJSON_AddStringToObject(row, "plan", spec);
    free(spec);
    if (!out.passed && may_shrink) {
        sw_plan small = *p;
        cJSON *small_failures = NULL;
        size_t tries = shrink(&st->ctx, run, b, &small, &small_failures);
        char *s = sw_plan_spec(&small, st->ctx.menu);
        cJSON_AddStringToObject(row, "shrunk", s);
        cJSON_AddNumberToObject(row, "shrunk_faults", (double)small.n);
        cJSON_AddNumberToObject(row, "shrink_runs", (double)tries);
        cJSON_AddItemToObject(row, "shrunk_failures",
                              small_failures ? small_failures
                                             : cJSON_Duplicate(out.failures, true));
        free(s);
        *p = small;
    }
    if (!out.passed) maybe_emit(st, run, p, b, follow_up);
    sw_report_plan(st->rep, row, &out, p);
    sw_outcome_free(&out);
}

static void sweep_plans(sw_run_state *st, size_t run, sw_base *b);

/* Every plan of one run starts from the world the earlier runs leave: it is
 * made once (they run fault-free, judged), not replayed per plan. */
static void sweep_run(sw_run_state *st, size_t run)
{
    sim_world *base = st->ctx.image;
    cJSON *before = cJSON_CreateArray();
    sim_world *pre = run ? sw_image_before(&st->ctx, run, before) : NULL;
    sw_base b;
    if (run && !pre) {
        memset(&b, 0, sizeof b);
        b.failures = before;
        b.exit = -1;
        sw_report_section(st->rep, st->ctx.strategy->name, st->ctx.sc->runs[run].name, &b);
        sw_base_free(&b);
        return;
    }
    if (pre) {
        st->ctx.image = pre;
        st->ctx.first_run = run;
    }
    sw_baseline(&st->ctx, run, &b);
    /* An earlier run's own failures belong to this section's baseline. */
    const cJSON *f;
    cJSON_ArrayForEach(f, before)
        cJSON_AddItemToArray(b.failures, cJSON_CreateString(cJSON_GetStringValue(f)));
    cJSON_Delete(before);
    sweep_plans(st, run, &b);
    sw_base_free(&b);
    st->ctx.image = base;
    st->ctx.first_run = 0;
    sim_world_close(pre);
}

static void sweep_plans(sw_run_state *st, size_t run, sw_base *bp)
{
    const sweep_opts *o = st->o;
    const sw_ctx *c = &st->ctx;
    const sw_base b = *bp;
    sw_report_section(st->rep, c->strategy->name, c->sc->runs[run].name, &b);
    if (o->mode == SWEEP_CRASH) {
        size_t k = 0;
        for (size_t i = 0; i < b.n; i++) {
            if (!b.writes[i]) continue;
            k++;
            if (!mine(st, st->next_index++)) continue;
            sw_plan p = {.n = 1, .f = {{.kind = SW_CRASH, .call = i}}};
            cJSON *row = cJSON_CreateObject();
            cJSON_AddNumberToObject(row, "write", (double)k);
            cJSON_AddStringToObject(row, "call", b.calls[i]);
            one_plan(st, run, &b, &p, row, true, true, false);
        }
    } else if (o->mode == SWEEP_PERTURB) {
        for (size_t i = 0; i < b.n; i++) {
            for (size_t m = 0; m < c->menu->n; m++) {
                if (!mine(st, st->next_index++)) continue;
                sw_plan p = {.n = 1, .f = {{.kind = SW_EVENT, .call = i, .menu = m}}};
                cJSON *row = cJSON_CreateObject();
                cJSON_AddStringToObject(row, "call", b.calls[i]);
                cJSON_AddStringToObject(row, "event", c->menu->items[m].name);
                one_plan(st, run, &b, &p, row, false, false, false);
            }
        }
    } else if (o->mode == SWEEP_SWARM) {
        for (size_t i = 0; i < o->swarm_n; i++) {
            if (!mine(st, st->next_index++)) continue;
            sw_plan p;
            swarm_plan(o->seed, i, &b, c->menu, &p);
            cJSON *row = cJSON_CreateObject();
            cJSON_AddNumberToObject(row, "swarm_plan", (double)i);
            one_plan(st, run, &b, &p, row, true, false, true);
        }
    } else {
        sw_plan p;
        char why[256];
        sw_plan_parse(o->plan, c->menu, &p, why, sizeof why); /* checked in sweep_main */
        if (mine(st, st->next_index++)) {
            cJSON *row = cJSON_CreateObject();
            one_plan(st, run, &b, &p, row, !o->plan_perturb, false, false);
        }
    }
}

static const char *const broken_names[] = {
    [RS_BROKEN_NONE] = "",
    [RS_BROKEN_SKIP_CORDON_RESTORE] = "skip-cordon-restore",
    [RS_BROKEN_LEASE_FIRST] = "lease-before-policy",
    [RS_BROKEN_ROOT_EARLY] = "root-before-second-inventory",
};

rs_broken sweep_broken_find(const char *name)
{
    for (size_t i = 1; i < RS_ARRAY_LEN(broken_names); i++)
        if (strcmp(name, broken_names[i]) == 0) return (rs_broken)i;
    return RS_BROKEN_NONE;
}

const char *sweep_broken_name(rs_broken b)
{
    return (size_t)b < RS_ARRAY_LEN(broken_names) ? broken_names[b] : "";
}

static bool strategy_applies(const sc_scenario *sc, const char *s)
{
    for (size_t i = 0; i < sc->n_strategies; i++)
        if (strcmp(sc->strategies[i], s) == 0) return true;
    return false;
}

static int usage(const char *fmt, const char *arg)
{
    char *a = out_escape(arg ? arg : "", false);
    fprintf(stderr, "reassert sweep: ");
    fprintf(stderr, fmt, a);
    fprintf(stderr, "\n");
    free(a);
    return RS_USAGE;
}

int sweep_main(const sweep_opts *o)
{
    sc_scenario *sc = NULL;
    rs_err e;
    rs_err_clear(&e);
    if (sc_load(o->file, &sc, &e) != RS_OK) {
        char *msg = out_escape(e.msg, false);
        fprintf(stderr, "reassert sweep: %s\n", msg);
        free(msg);
        return RS_DATAERR;
    }
    long only = -1;
    for (size_t i = 0; o->run && i < sc->n_runs; i++)
        if (strcmp(sc->runs[i].name, o->run) == 0) only = (long)i;
    sw_menu menu;
    sw_menu_build(sc, &menu);
    int rc = RS_OK;
    sw_plan check;
    char why[256];
    if (o->run && only < 0)
        rc = usage("--run %s: the scenario has no run of that name", o->run);
    else if (o->mode == SWEEP_PLAN && !sw_plan_parse(o->plan, &menu, &check, why, sizeof why))
        rc = usage("--plan: %s", why);
    sim_world *image = NULL;
    if (rc == RS_OK && sw_image_build(sc, &image, &e) != RS_OK) {
        char *msg = out_escape(e.msg, false);
        fprintf(stderr, "reassert sweep: %s\n", msg);
        free(msg);
        rc = RS_DATAERR;
    }
    if (rc != RS_OK) {
        sw_menu_free(&menu);
        sc_free(sc);
        return rc;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    sw_run_state st = {.o = o};
    st.rep = sw_report_new(o, sc, &menu);
    st.ctx = (sw_ctx){.sc = sc, .run_fn = o->run_fn, .image = image, .menu = &menu};
    static const char *const names[] = {"lazy", "eager"};
    for (size_t s = 0; s < (o->strategy ? 1 : RS_ARRAY_LEN(names)); s++) {
        if (o->strategy) {
            st.ctx.strategy = o->strategy;
            st.ctx.expect_as = o->expect_as ? o->expect_as : "lazy";
        } else {
            if (!strategy_applies(sc, names[s]) || !rs_strategy_find(names[s])) continue;
            st.ctx.strategy = rs_strategy_find(names[s]);
            st.ctx.expect_as = names[s];
        }
        for (size_t r = 0; r < sc->n_runs; r++)
            if (only < 0 || (size_t)only == r) sweep_run(&st, r);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (o->emit && !st.emitted) sw_report_note(st.rep, "no plan failed; no scenario written");
    bool ok = sw_report_finish(st.rep, wall_s);
    sim_world_close(image);
    sw_menu_free(&menu);
    sc_free(sc);
    if (!ok) return RS_FAILED;
    return st.emit_status;
}
