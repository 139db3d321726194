/*
 * sweep_exec.c — one plan, start to verdict.
 *
 * The scenario's world is built once and kept in memory; each plan starts
 * from an in-memory copy of it (a world build replays the preset's hundreds
 * of objects; a copy is one pass over the pages). The runs before the chosen one run as
 * written, the chosen one with the plan's faults, then — for crash and
 * swarm plans — `--recover-fences` when a fence still names it and the same
 * run again without faults. Every run is judged by the §6 invariants; the
 * last one by its end state: converged, or failed closed naming every fence
 * still held and the command to inspect them. Never a silent wrong answer.
 */
#define _XOPEN_SOURCE 700
#include "sim/sweep/sweep_int.h"

#include "sim/check/check_invariants.h"

#include <ftw.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SW_CRASH_EXIT 137

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

rs_code sw_image_build(const sc_scenario *sc, sim_world **image, rs_err *e)
{
    rs_code c = sim_world_build_mem(sc, image, NULL, NULL, e);
    /* a reference to nothing is bad data, found before any plan */
    if (c == RS_OK) c = sim_world_resolve_refs(*image, sc, e);
    if (c != RS_OK) {
        sim_world_close(*image);
        *image = NULL;
    }
    return c;
}

void sw_outcome_free(sw_outcome *o)
{
    free(o->verdict);
    cJSON_Delete(o->failures);
    memset(o, 0, sizeof *o);
}

static void fail(sw_outcome *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(sw_outcome *o, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    cJSON_AddItemToArray(o->failures, cJSON_CreateString(buf));
}

/* Runs one run; its failures join the plan's, each prefixed by the run. */
static cJSON *run_judged(const sim_run_ctx *rc, const sc_run *run, sw_outcome *o)
{
    cJSON *node = sim_run_checked(rc, run);
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(node, "failures"))
        fail(o, "%s: %s", run->name, cJSON_GetStringValue(f));
    return node;
}

static int node_exit(const cJSON *node)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(node, "exit");
    return cJSON_IsNumber(x) ? x->valueint : -1;
}

/* The end state of the last run: converged, or failed closed naming every
 * fence still held (by anyone) and `reassert --fences`. */
static void judge_end(sim_world *w, const cJSON *node, sw_outcome *o)
{
    int code = node_exit(node);
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(node, "name"));
    const char *output = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(node, "output"));
    o->final_exit = code;
    if (code == 0) {
        o->verdict = rs_xstrdup("converged");
        return;
    }
    if (code != 1) {
        fail(o, "%s: exit %d: neither converged nor failed closed", name, code);
        o->verdict = rs_xasprintf("exit %d", code);
        return;
    }
    o->verdict = rs_xstrdup("failed closed");
    if (!inv_named_in_errors(output, "")) fail(o, "%s: exit 1 and no error line says why", name);
    /* Refused before reading the cluster (a revoked credential fails the
     * registry proof first): it cannot name what it never saw; the run
     * that left the fences named its own (invariant 7). */
    const cJSON *delta = cJSON_GetObjectItemCaseSensitive(node, "delta");
    const cJSON *kube = cJSON_GetObjectItemCaseSensitive(delta, "kube_calls");
    if (cJSON_IsNumber(kube) && kube->valuedouble == 0) {
        free(o->verdict);
        o->verdict = rs_xstrdup("failed closed before any cluster call");
        return;
    }
    sw_held *held = NULL;
    size_t n = sw_fences_held(w, &held);
    /* The fences another run holds need not each be listed — `--fences`
     * reports them all — but at least one must be named, with the command
     * (the run's own fences are invariant 7's: each one named). */
    size_t named = 0;
    for (size_t i = 0; i < n; i++)
        named += inv_named_in_errors(output, held[i].ref);
    if (n && !named)
        fail(o, "%s: failed closed while %s %s is held by %s, and no error names it", name,
             held[0].what, held[0].ref, held[0].holder);
    if (n && !strstr(output ? output : "", "reassert --fences"))
        fail(o,
             "%s: failed closed while %zu fence(s) are held, and no message names the command "
             "to inspect them (`reassert --fences`)",
             name, n);
    sw_held_free(held, n);
}

static bool write_op(const char *op)
{
    static const char *const w[] = {"kube.create",  "kube.patch",         "kube.delete",
                                    "kube.evict",   "openbao.write",      "talos.patch",
                                    "talos.reboot", "talos.image-remove", "talos.image-pull"};
    for (size_t i = 0; i < RS_ARRAY_LEN(w); i++)
        if (strcmp(op, w[i]) == 0) return true;
    return false;
}

static void read_calls(sim_world *w, const char *run_name, sw_base *b)
{
    sqlite3_stmt *st = NULL;
    sqlite3_prepare_v2(sim_world_db(w),
                       "SELECT op, target FROM call_log WHERE run = ?1 ORDER BY seq", -1, &st,
                       NULL);
    sqlite3_bind_text(st, 1, run_name, -1, SQLITE_STATIC);
    size_t cap = 0;
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        if (b->n == cap) {
            cap = cap ? 2 * cap : 256;
            b->calls = rs_xrealloc(b->calls, cap * sizeof *b->calls);
            b->writes = rs_xrealloc(b->writes, cap * sizeof *b->writes);
        }
        const char *op = (const char *)sqlite3_column_text(st, 0);
        const char *target = (const char *)sqlite3_column_text(st, 1);
        b->calls[b->n] = rs_xasprintf("%s %s", op ? op : "", target ? target : "");
        b->writes[b->n] = op && write_op(op);
        b->n++;
    }
    sqlite3_finalize(st);
}

static void exec_plan(const sw_ctx *c, size_t run, const sw_plan *p, const sw_base *b,
                      bool follow_up, bool expect_crash, sw_outcome *o, sw_base *log_out)
{
    memset(o, 0, sizeof *o);
    o->failures = cJSON_CreateArray();
    char tmp[] = "/tmp/reassert-sweep-XXXXXX";
    if (!mkdtemp(tmp)) {
        fail(o, "cannot create the plan's directory");
        o->verdict = rs_xstrdup("error");
        return;
    }
    rs_err e;
    rs_err_clear(&e);
    sim_world *w = NULL;
    if (sim_world_clone(c->image, &w, &e) != RS_OK) {
        fail(o, "%s", e.msg);
        o->verdict = rs_xstrdup("error");
        nftw(tmp, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
        return;
    }
    sim_run_ctx rc = {.sc = c->sc,
                      .strategy = c->strategy,
                      .expect_as = c->expect_as,
                      .tmp = tmp,
                      .world = w,
                      .run_fn = c->run_fn};
    for (size_t r = c->first_run; r < run; r++)
        cJSON_Delete(run_judged(&rc, &c->sc->runs[r], o));
    const sc_run *orig = &c->sc->runs[run];
    sc_run *target = sw_run_with_plan(orig, p, b, c->menu);
    cJSON *last = run_judged(&rc, target, o);
    sw_run_free(target);
    o->exit = node_exit(last);
    if (log_out) read_calls(w, orig->name, log_out);
    /* A fault that never fires is a failure, never a pass (DESIGN §5, §5.1):
     * a --plan whose call is past the end of the run — a
     * reproducer whose call log shifted after a core change — says so. */
    for (size_t i = 0; i < p->n; i++)
        if (b->n && p->f[i].call >= b->n)
            fail(o,
                 "%s: the plan's call %zu is past the end of the run (%zu calls, numbered 0..%zu): "
                 "its fault never fired",
                 orig->name, p->f[i].call, b->n, b->n - 1);
    if (expect_crash && o->exit != SW_CRASH_EXIT)
        fail(o, "%s: the crash was never reached (exit %d)", orig->name, o->exit);
    if (follow_up) {
        sw_held *held = NULL;
        size_t n = sw_fences_held(w, &held);
        if (sw_held_by_run(held, n, orig->name)) {
            sc_run *rec = sw_run_follow(orig, "recover", orig->name);
            o->recovered = true;
            cJSON_Delete(run_judged(&rc, rec, o));
            sw_run_free(rec);
        }
        sw_held_free(held, n);
        sc_run *again = sw_run_follow(orig, "again", NULL);
        cJSON_Delete(last);
        /* The deploy run again from a clean checkout: its own {tmp} (a
         * runtime proof the faulted run wrote is never overwritten). */
        char again_tmp[96];
        snprintf(again_tmp, sizeof again_tmp, "%s/again", tmp);
        sim_run_ctx again_rc = rc;
        if (mkdir(again_tmp, 0700) == 0) again_rc.tmp = again_tmp;
        last = run_judged(&again_rc, again, o);
        sw_run_free(again);
    }
    judge_end(w, last, o);
    cJSON_Delete(last);
    sim_world_close(w);
    o->passed = cJSON_GetArraySize(o->failures) == 0;
    nftw(tmp, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

void sw_exec(const sw_ctx *c, size_t run, const sw_plan *p, const sw_base *b, bool follow_up,
             bool expect_crash, sw_outcome *o)
{
    exec_plan(c, run, p, b, follow_up, expect_crash, o, NULL);
}

sim_world *sw_image_before(const sw_ctx *c, size_t run, cJSON *failures)
{
    sw_outcome o = {.failures = cJSON_CreateArray()};
    char tmp[] = "/tmp/reassert-sweep-XXXXXX";
    sim_world *w = NULL;
    rs_err e;
    rs_err_clear(&e);
    bool made = mkdtemp(tmp) != NULL;
    if (!made) fail(&o, "cannot create a temporary directory");
    if (made && sim_world_clone(c->image, &w, &e) != RS_OK) fail(&o, "%s", e.msg);
    if (w) {
        sim_run_ctx rc = {.sc = c->sc,
                          .strategy = c->strategy,
                          .expect_as = c->expect_as,
                          .tmp = tmp,
                          .world = w,
                          .run_fn = c->run_fn};
        for (size_t r = c->first_run; r < run; r++)
            cJSON_Delete(run_judged(&rc, &c->sc->runs[r], &o));
    }
    const cJSON *f;
    cJSON_ArrayForEach(f, o.failures)
        cJSON_AddItemToArray(failures, cJSON_CreateString(cJSON_GetStringValue(f)));
    sw_outcome_free(&o);
    if (made) nftw(tmp, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    return w;
}

void sw_baseline(const sw_ctx *c, size_t run, sw_base *b)
{
    memset(b, 0, sizeof *b);
    sw_plan none = {0};
    sw_base empty = {0};
    sw_outcome o;
    exec_plan(c, run, &none, &empty, false, false, &o, b);
    b->exit = o.exit;
    b->failures = o.failures;
    o.failures = NULL;
    sw_outcome_free(&o);
}
