/*
 * runner.c — `reassert sim`: every scenario x strategy on a fresh world in
 * memory, every run through the production run path, then expectations,
 * invariants and a report.
 *
 * A run is the production run path and nothing else (the caller's
 * sim_run_fn, the same code `reassert run --transport sim:FILE.db` runs):
 * options, credential, transport stack, txn_run through the sim transport,
 * its exit code. It runs in this process; a run that a `crash` fault may
 * end runs in a forked child, so the crash ends it exactly as kill -9 would
 * (world_image.c hands its world back). The runner never trusts the run's
 * word for what happened: counters, state and invariants are read from the
 * world the run left behind.
 */
#define _XOPEN_SOURCE 700
#include "sim/runner/runner.h"
#include "sim/runner/runner_int.h"

#include "recorder/rec_cassette.h"
#include "sim/check/check_expect.h"
#include "sim/check/check_invariants.h"
#include "sim/runner/runner_junit.h"
#include "sim/world/world.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *const all_strategies[] = {"lazy", "eager"};

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return rs_xstrdup("");
    size_t cap = 4096, n = 0;
    char *buf = rs_xmalloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n - 1 == 0) buf = rs_xrealloc(buf, cap *= 2);
    }
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Replaces the execution's private directory by "{tmp}" in text (consumed),
 * so a report is byte-for-byte the same on every execution. */
static char *untmp(char *text, const char *tmp)
{
    size_t n = strlen(tmp);
    char *out = rs_xmalloc(strlen(text) + 1 + 8 * (strlen(text) / (n ? n : 1) + 1));
    char *o = out;
    for (const char *p = text; *p;) {
        if (strncmp(p, tmp, n) == 0) {
            o += sprintf(o, "{tmp}");
            p += n;
        } else {
            *o++ = *p++;
        }
    }
    *o = '\0';
    free(text);
    return out;
}

/* A core process that died by a signal did not finish its run, whatever the
 * expectations say (the scenario's `crash` fault exits, it is not killed):
 * the run fails even without an `expect`. */
/* Lines for failures that name no expectation (a killed run, an event that
 * never fired, an invariant): 0, annotated at the run's `expect:`. */
static void pad_lines(cJSON *failure_lines, const cJSON *failures)
{
    while (cJSON_GetArraySize(failure_lines) < cJSON_GetArraySize(failures))
        cJSON_AddItemToArray(failure_lines, cJSON_CreateNumber(0));
}

static void fail_if_killed(int sig, cJSON *failures)
{
    if (!sig) return;
    static const struct {
        int sig;
        const char *name;
    } names[] = {{SIGABRT, "SIGABRT"}, {SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"},
                 {SIGFPE, "SIGFPE"},   {SIGILL, "SIGILL"},   {SIGKILL, "SIGKILL"},
                 {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"},   {SIGPIPE, "SIGPIPE"}};
    const char *name = NULL;
    for (size_t i = 0; i < RS_ARRAY_LEN(names); i++)
        if (names[i].sig == sig) name = names[i].name;
    char *msg = name ? rs_xasprintf("the run's process died by %s (signal %d)", name, sig)
                     : rs_xasprintf("the run's process died by signal %d", sig);
    cJSON_AddItemToArray(failures, cJSON_CreateString(msg));
    free(msg);
}

/* A run its own `crash` fault ended could not write its cassette's end
 * record: the runner, which saw it end and knows why, writes it (exit 137),
 * so a strict replay knows the recording is whole, not cut short. A run
 * killed by a signal gets none: nobody knows where it would have gone. */
static void record_crash_end(const char *record, int code, int sig, cJSON *failures)
{
    if (!record || sig || code != SIM_CRASH_EXIT) return;
    struct stat st;
    if (lstat(record, &st) != 0) return; /* the run ended before its recorder started */
    rs_err e;
    rs_err_clear(&e);
    if (rec_cassette_end_killed(record, SIM_CRASH_EXIT, &e) != RS_OK)
        cJSON_AddItemToArray(failures, cJSON_CreateString(e.msg));
}

static bool strategy_applies(const sc_scenario *sc, const char *s)
{
    for (size_t i = 0; i < sc->n_strategies; i++)
        if (strcmp(sc->strategies[i], s) == 0) return true;
    return false;
}

/* The strategy a run's own args name (`--strategy S`, the last one wins as
 * in run_args_parse), or NULL: that is the strategy the child runs, so the
 * run is labelled and its expectations chosen by it. */
static const char *run_args_strategy(const sc_run *run)
{
    const char *named = NULL;
    for (size_t i = 0; i + 1 < run->n_args; i++)
        if (strcmp(run->args[i], "--strategy") == 0 && rs_strategy_find(run->args[i + 1]))
            named = run->args[++i];
    return named;
}

/* One run: before events, the child, then every check (see sim_run_checked
 * in runner.h). Returns the run's report node, redacted. */
static cJSON *run_checked(const sc_scenario *sc, const sc_run *run, const rs_strategy *strategy,
                          const char *expect_as, const char *tmp, sim_world *w, sim_run_fn run_fn,
                          const char *record_dir, const cred_redact *redact, bool check_expect,
                          bool check_unfired)
{
    const char *named = run_args_strategy(run);
    if (named) expect_as = named;
    cJSON *failures = cJSON_CreateArray();
    cJSON *failure_lines = cJSON_CreateArray(); /* the scenario line of each */
    rs_err e;
    rs_err_clear(&e);
    inv_mark mark = {0};
    long long check_mark = 0;
    /* A `check:` is evaluated where it stands among the events; its
     * failures carry their own lines (failures has no others yet). */
    for (size_t i = 0; i < run->n_before && e.code == RS_OK; i++)
        if (run->before[i].lines)
            expect_state_now(w, &run->before[i], "before", failures, failure_lines);
        else
            sim_world_apply_event(w, &run->before[i], &e);
    cJSON *before = sim_counters_snapshot(w);
    inv_mark_take(w, &mark);
    check_mark = expect_during_mark(w);
    int64_t from_ms = sim_world_now_ms(w);
    if (e.code != RS_OK) cJSON_AddItemToArray(failures, cJSON_CreateString(e.msg));
    char out_path[4096], unfired_path[4096], result_path[4096];
    snprintf(out_path, sizeof out_path, "%s/%s.out", tmp, run->name);
    snprintf(unfired_path, sizeof unfired_path, "%s/%s.unfired", tmp, run->name);
    snprintf(result_path, sizeof result_path, "%s/%s.result", tmp, run->name);
    unlink(result_path); /* an earlier strategy's, or a run of the same name */
    int sig = 0;
    char *record = record_dir ? runner_record_path(record_dir, sc, run) : NULL;
    rs_err lost;
    rs_err_clear(&lost);
    int code = runner_exec(w, sc, run, strategy, tmp, out_path, unfired_path, result_path, record,
                           run_fn, &sig, &lost);
    record_crash_end(record, code, sig, failures);
    free(record);
    cJSON *annotation_only = runner_annotation_only(result_path, failures);
    fail_if_killed(sig, failures);
    if (lost.code != RS_OK) cJSON_AddItemToArray(failures, cJSON_CreateString(lost.msg));
    char *output = untmp(read_file(out_path), tmp);
    char *unfired = read_file(unfired_path);
    /* A sweep's own faults may never be reached (an earlier one changed the
     * path); an event that could not apply is always a failure. */
    for (char *line = strtok(unfired, "\n"); line; line = strtok(NULL, "\n"))
        if (check_unfired || !strstr(line, " never fired"))
            cJSON_AddItemToArray(failures, cJSON_CreateString(line));
    cJSON *after = sim_counters_snapshot(w);
    cJSON *delta = sim_counters_delta(before, after);
    cJSON *timeline = runner_timeline(w, mark.call_seq, run->name, from_ms, sim_world_now_ms(w));
    cJSON *expect = sc_expect_for(run, expect_as);
    cJSON *lines = sc_expect_lines_for(run, expect_as);
    pad_lines(failure_lines, failures);
    expect_during_failures(w, check_mark, run->name, failures, failure_lines);
    if (check_expect) expect_check(expect, lines, code, delta, output, w, failures, failure_lines);
    cJSON_Delete(lines);
    inv_run ir = {.name = run->name,
                  .args = run->args,
                  .n_args = run->n_args,
                  .desired = sc->desired,
                  .exit_code = code,
                  .output = output,
                  .off = run->invariants_off,
                  .n_off = run->n_invariants_off,
                  .annotation_only = annotation_only};
    inv_check(w, &mark, &ir, failures);
    cJSON_Delete(expect);
    pad_lines(failure_lines, failures);
    bool passed = cJSON_GetArraySize(failures) == 0;
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "name", run->name);
    cJSON_AddStringToObject(r, "strategy", named ? named : strategy->name);
    cJSON_AddNumberToObject(r, "exit", code);
    cJSON_AddBoolToObject(r, "passed", passed);
    cJSON_AddItemToObject(r, "counters", after);
    cJSON_AddItemToObject(r, "delta", delta);
    /* What the run reported deciding on annotations alone (DESIGN §3.3 r2). */
    cJSON_AddItemToObject(r, "annotation_only_nodes", annotation_only);
    cJSON_AddItemToObject(r, "failures", failures);
    cJSON_AddItemToObject(r, "failure_lines", failure_lines);
    if (run->n_invariants_off) {
        cJSON_AddItemToObject(
            r, "invariants_off",
            cJSON_CreateIntArray(run->invariants_off, (int)run->n_invariants_off));
        cJSON_AddStringToObject(r, "invariants_off_reason",
                                run->invariants_reason ? run->invariants_reason : "");
    }
    cJSON_AddStringToObject(r, "output", output);
    if (timeline) cJSON_AddItemToObject(r, "timeline", timeline); /* for --report */
    /* Where a failure is annotated: the run's expect, else the run. */
    cJSON_AddNumberToObject(r, "line", run->expect_pos.line ? run->expect_pos.line : run->pos.line);
    runner_redact(redact, r);
    cJSON_Delete(before);
    inv_mark_free(&mark);
    free(output);
    free(unfired);
    return r;
}

/* One run of `reassert sim`: appends the run's JSON to runs; returns whether
 * it passed. */
static bool run_one(const sc_scenario *sc, const sc_run *run, const rs_strategy *strategy,
                    const char *expect_as, const char *tmp, sim_world *w, sim_run_fn run_fn,
                    const char *record_dir, const cred_redact *redact, cJSON *runs)
{
    /* Wall time, for JUnit's time attributes only (a timing field: the
     * --json report, whose bytes a seed fixes, never carries it). */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cJSON *r =
        run_checked(sc, run, strategy, expect_as, tmp, w, run_fn, record_dir, redact, true, true);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall_ms =
        (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    cJSON_AddNumberToObject(r, "wall_ms", wall_ms < 0 ? 0 : wall_ms);
    bool passed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "passed"));
    cJSON_AddItemToArray(runs, r);
    return passed;
}

cJSON *sim_run_checked(const sim_run_ctx *c, const sc_run *run)
{
    cred_redact *redact = runner_redact_set(c->sc);
    cJSON *r = run_checked(c->sc, run, c->strategy, c->expect_as, c->tmp, c->world, c->run_fn, NULL,
                           redact, c->check_expect, c->check_unfired);
    cred_redact_free(redact);
    return r;
}

/* The scenario's world, built once: every strategy runs on its own copy
 * (a build replays the preset's hundreds of objects; a copy is one pass
 * over the pages). */
typedef struct world_src {
    const sc_scenario *sc;
    sim_world *image;
    bool built;
    rs_err e; /* why it could not be built */
} world_src;

/* A fresh world for one strategy: a copy of the image, or the image itself
 * for the last (last: nothing copies it after). */
static sim_world *world_take(world_src *src, bool last, rs_err *e)
{
    if (!src->built) {
        rs_err_clear(&src->e);
        (void)sim_world_build_mem(src->sc, &src->image, NULL, NULL, &src->e);
        src->built = true;
    }
    if (!src->image) {
        *e = src->e;
        return NULL;
    }
    sim_world *w = NULL;
    if (last) {
        w = src->image;
        src->image = NULL;
    } else {
        (void)sim_world_clone(src->image, &w, e);
    }
    return w;
}

/* Every run of one scenario under one strategy, on a fresh world. */
static bool scenario_strategy(const sc_scenario *sc, const rs_strategy *strategy,
                              const char *expect_as, sim_run_fn run_fn, const char *record_dir,
                              world_src *src, bool last, const cred_redact *redact, cJSON *runs,
                              rs_err *load)
{
    char tmp[] = "/tmp/reassert-sim-XXXXXX";
    if (!mkdtemp(tmp)) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "strategy", strategy->name);
        cJSON_AddItemToObject(r, "failures",
                              cJSON_CreateStringArray((const char *[]){"cannot create {tmp}"}, 1));
        cJSON_AddItemToArray(runs, r);
        return false;
    }
    rs_err e;
    rs_err_clear(&e);
    bool passed = true;
    sim_world *w = world_take(src, last, &e);
    /* The world just built resolves every reference of the scenario (a
     * reference to nothing is bad data, found before any run). */
    if (w && sim_world_resolve_refs(w, sc, &e) != RS_OK && load) {
        *load = e;
        passed = false;
    } else if (e.code != RS_OK) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "name", "(world)");
        cJSON_AddStringToObject(r, "strategy", strategy->name);
        cJSON_AddBoolToObject(r, "passed", false);
        cJSON *f = cJSON_AddArrayToObject(r, "failures");
        cJSON_AddItemToArray(f, cJSON_CreateString(e.msg));
        runner_redact(redact, r);
        cJSON_AddItemToArray(runs, r);
        passed = false;
    } else {
        for (size_t i = 0; i < sc->n_runs; i++)
            passed = run_one(sc, &sc->runs[i], strategy, expect_as, tmp, w, run_fn, record_dir,
                             redact, runs) &&
                     passed;
    }
    sim_world_close(w);
    nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return passed;
}

/* Runs one loaded scenario under every strategy that applies; NULL, with
 * *load saying why, when its references do not resolve. */
static cJSON *scenario_run(sc_scenario *sc, const sim_opts *c, rs_err *load)
{
    if (c->seed_set) sc->seed = c->seed;
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "name", sc->name);
    cJSON_AddStringToObject(s, "file", sc->file);
    cJSON *runs = cJSON_CreateArray();
    cJSON *skipped = cJSON_CreateArray();
    bool passed = true;
    const char *reasons[RS_ARRAY_LEN(all_strategies)];
    size_t n_run = 0, done = 0;
    for (size_t i = 0; i < RS_ARRAY_LEN(all_strategies); i++) {
        const char *st = all_strategies[i];
        reasons[i] = NULL;
        if (c->strategy && strcmp(c->strategy, st) != 0)
            reasons[i] = "not selected by --strategy";
        else if (!strategy_applies(sc, st))
            reasons[i] = "the scenario does not apply to it";
        else if (!rs_strategy_find(st))
            reasons[i] = "not available in this build";
        n_run += !reasons[i];
    }
    /* The scenario's own strings too: every report reads this node. */
    cred_redact *redact = runner_redact_set(sc);
    world_src src = {.sc = sc};
    for (size_t i = 0; i < RS_ARRAY_LEN(all_strategies); i++) {
        const char *st = all_strategies[i];
        if (reasons[i]) {
            cJSON *k = cJSON_CreateObject();
            cJSON_AddStringToObject(k, "strategy", st);
            cJSON_AddStringToObject(k, "reason", reasons[i]);
            cJSON *names = cJSON_AddArrayToObject(k, "runs"); /* one skipped test each */
            for (size_t r = 0; r < sc->n_runs; r++)
                cJSON_AddItemToArray(names, cJSON_CreateString(sc->runs[r].name));
            cJSON_AddItemToArray(skipped, k);
            continue;
        }
        char *rdir = runner_record_dir(c, st);
        if (rdir) (void)mkdir(rdir, 0700);
        passed = scenario_strategy(sc, rs_strategy_find(st), st, c->run, rdir, &src,
                                   ++done == n_run, redact, runs, load) &&
                 passed;
        free(rdir);
        if (load->code != RS_OK) break;
    }
    sim_world_close(src.image);
    if (load->code != RS_OK) {
        cred_redact_free(redact);
        cJSON_Delete(runs);
        cJSON_Delete(skipped);
        cJSON_Delete(s);
        return NULL;
    }
    cJSON_AddBoolToObject(s, "passed", passed);
    /* Nothing ran (every strategy skipped): not a pass, and said so. */
    if (cJSON_GetArraySize(runs) == 0) cJSON_AddBoolToObject(s, "all_skipped", true);
    cJSON_AddItemToObject(s, "runs", runs);
    cJSON_AddItemToObject(s, "skipped", skipped);
    runner_redact(redact, s);
    cred_redact_free(redact);
    return s;
}

/* A file that could not be loaded is a failed scenario in every report
 * (DESIGN.md §5.1), never a missing one. */
static cJSON *scenario_unloadable(const char *file, const char *why)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "name", file);
    cJSON_AddStringToObject(s, "file", file);
    cJSON_AddBoolToObject(s, "passed", false);
    cJSON_AddStringToObject(s, "load_error", why);
    cJSON_AddArrayToObject(s, "runs");
    cJSON_AddArrayToObject(s, "skipped");
    return s;
}

/* The JUnit file, when asked for; one that cannot be written fails the
 * command (a CI gate must not read a stale or missing report as green). */
static bool junit_out(const sim_opts *c, const cJSON *scenarios)
{
    if (!c->junit) return true;
    rs_err e;
    rs_err_clear(&e);
    if (sim_junit_write(c->junit, scenarios, &e) == RS_OK) return true;
    char *msg = out_escape(e.msg, false);
    fprintf(stderr, "reassert sim: %s\n", msg);
    free(msg);
    return false;
}

int sim_main(const sim_opts *c)
{
    if (!runner_record_preflight(c)) return RS_USAGE;
    cJSON *scenarios = cJSON_CreateArray();
    size_t n_pass = 0, n_fail = 0, n_bad = 0, n_skip = 0;
    bool junit_ok = true;
    for (size_t i = 0; i < c->n_files; i++) {
        sc_scenario *sc = NULL;
        rs_err e;
        rs_err_clear(&e);
        if (sc_load(c->files[i], &sc, &e) != RS_OK) {
            char *msg = out_escape(e.msg, false);
            fprintf(stderr, "reassert sim: %s\n", msg);
            free(msg);
            cJSON_AddItemToArray(scenarios, scenario_unloadable(c->files[i], e.msg));
            n_bad++;
            continue;
        }
        if (!c->json) {
            /* The path is the user's text: escaped, never a workflow command. */
            fputs("running ", stderr);
            runner_actions_escape(stderr, c->files[i], false);
            fputs(" ...\n", stderr);
        }
        sim_scenario_warn(sc, stderr); /* stderr: --json's bytes stay the report */
        cJSON *s = scenario_run(sc, c, &e);
        if (!s) {
            char *msg = out_escape(e.msg, false);
            fprintf(stderr, "reassert sim: %s\n", msg);
            free(msg);
            cJSON_AddItemToArray(scenarios, scenario_unloadable(c->files[i], e.msg));
            n_bad++;
            sc_free(sc);
            continue;
        }
        bool ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "passed"));
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "all_skipped")))
            n_skip++;
        else
            ok ? n_pass++ : n_fail++;
        if (!c->json) runner_text_scenario(stdout, s, c->actions);
        cJSON_AddItemToArray(scenarios, s);
        sc_free(sc);
    }
    /* The caller's reports (--report, the step summary) see everything. */
    bool hook_ok = !c->report || c->report(scenarios, c->report_arg);
    if (c->json) {
        /* The run's raw output stays in the text report only, its
         * timeline in --report, its wall time in --junit. */
        cJSON *s;
        cJSON_ArrayForEach(s, scenarios)
        {
            cJSON *r;
            cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(s, "runs"))
            {
                cJSON_DeleteItemFromObjectCaseSensitive(r, "output");
                cJSON_DeleteItemFromObjectCaseSensitive(r, "timeline");
                cJSON_DeleteItemFromObjectCaseSensitive(r, "wall_ms");
            }
        }
        cJSON *doc = cJSON_CreateObject();
        cJSON_AddItemToObject(doc, "scenarios", scenarios);
        char *txt = cJSON_Print(doc);
        printf("%s\n", txt);
        free(txt);
        junit_ok = junit_out(c, scenarios);
        cJSON_Delete(doc);
    } else {
        printf("scenarios: %zu passed, %zu failed", n_pass, n_fail);
        if (n_skip) printf(", %zu skipped (no strategy of theirs was run)", n_skip);
        printf("%s\n", n_bad ? " (some could not be loaded)" : "");
        junit_ok = junit_out(c, scenarios);
        cJSON_Delete(scenarios);
    }
    /* The report is the result: one that never reached its reader is a
     * failed run of the gate, never a silent exit 0. */
    bool report_ok = fflush(stdout) == 0 && !ferror(stdout);
    if (!report_ok) fputs("reassert sim: writing the report to standard output failed\n", stderr);
    if (n_bad) return RS_DATAERR;
    return n_fail || !junit_ok || !report_ok || !hook_ok ? RS_FAILED : RS_OK;
}

bool sim_scenario_run(const sc_scenario *sc, const rs_strategy *strategy, const char *expect_as,
                      sim_run_fn run, cJSON **runs_out)
{
    cJSON *runs = cJSON_CreateArray();
    world_src src = {.sc = sc};
    cred_redact *redact = runner_redact_set(sc);
    bool passed =
        scenario_strategy(sc, strategy, expect_as, run, NULL, &src, true, redact, runs, NULL);
    cred_redact_free(redact);
    if (runs_out)
        *runs_out = runs;
    else
        cJSON_Delete(runs);
    return passed;
}
