/*
 * cmd_replay_reseed.c — `reassert replay CASSETTE --reseed [--strategy S]
 * [--json]` (DESIGN.md §8): today's core on a sim world seeded from the
 * cassette's first observations, printed beside the recorded run.
 *
 * The replayed run is a scenario run like any other (sc_cassette_scenario:
 * the recorded run's name and arguments, desired credential `desired`), so
 * `--to-scenario` writes down exactly what this command runs. The recorded
 * column is the recording's counters (the core's side, as the recorder's
 * counting shim saw them); the replayed column is the sim world's.
 *
 * What if the run decided on a value the recording never observed (an
 * eager recording never reads the OpenBao seed; a lazy run does)? Then the
 * world as built held a guess, and the run is made once per reading of it
 * instead (scenario_readings.c), one column each: the verdict is shown for
 * every world the recording cannot tell apart, never for one guessed.
 */
#include "cli/cli.h"
#include "cli/cli_replay.h"

#include "sim/runner/runner.h"
#include "sim/scenario/scenario_cassette.h"
#include "sim/world/world.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

const char *const replay_counter_rows[] = {"writes",
                                           "controller_restarts",
                                           "lease_writes",
                                           "fence_acquisitions",
                                           "policy_pauses",
                                           "node_reboots",
                                           "node_drains",
                                           "talos_mutations",
                                           "api_calls",
                                           "virtual_seconds",
                                           NULL};

/* What the world builder could not take from the cassette. Warnings are
 * world-building facts, not the run's: building the world once more here
 * (cheap) keeps the runner's path the scenario path. */
cJSON *replay_reseed_warnings(const sc_scenario *sc, rs_err *e)
{
    return sim_scenario_warnings(sc, e);
}

cJSON *replay_reseed_run(const sc_scenario *sc, const rs_strategy *strategy)
{
    cJSON *runs = NULL;
    sim_scenario_run(sc, strategy, strategy->name, cli_sim_run, &runs);
    cJSON *run = cJSON_DetachItemFromArray(runs, 0);
    cJSON_Delete(runs);
    return run;
}

static void reseed_cell(const cJSON *v, char out[32])
{
    if (cJSON_IsBool(v))
        snprintf(out, 32, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsNumber(v) && v->valuedouble != (double)(long long)v->valuedouble)
        snprintf(out, 32, "%.3f", v->valuedouble);
    else if (cJSON_IsNumber(v))
        snprintf(out, 32, "%lld", (long long)v->valuedouble);
    else
        snprintf(out, 32, "-");
}

/* One replayed column: the run under the world as built, or under one
 * reading of a value the recording never observed. */
typedef struct reseed_col {
    const char *label; /* "replayed", or the reading's name */
    cJSON *run;        /* the runner's report of the run (exit, delta, failures) */
    bool diverged;     /* its exit is not the recorded one */
} reseed_col;

/* A column's cell of row key: its label (key NULL), its exit ("exit"), or
 * the counter key of its delta. */
static const char *reseed_col_cell(const reseed_col *c, const char *key, char buf[32])
{
    if (!key) return c->label;
    const cJSON *from =
        strcmp(key, "exit") == 0 ? c->run : cJSON_GetObjectItemCaseSensitive(c->run, "delta");
    reseed_cell(cJSON_GetObjectItemCaseSensitive(from, key), buf);
    return buf;
}

static void reseed_row(const char *name, const char *recorded, const reseed_col *cols, size_t n,
                       int width, const char *key)
{
    printf("%-22s %*s", name, width, recorded);
    for (size_t i = 0; i < n; i++) {
        char buf[32];
        printf(" %*s", width, reseed_col_cell(&cols[i], key, buf));
    }
    putchar('\n');
}

static void reseed_table(const rec_tape *t, const char *strategy, const reseed_col *cols, size_t n,
                         const sc_readings *rd, const cJSON *warnings)
{
    const char *rec_strategy = rec_tape_meta(t, "strategy");
    const char *rec_exit = rec_tape_meta(t, "exit");
    int width = rd->n ? 16 : 12;
    replay_say(stdout, "reseed of ", t->path);
    reseed_row("", "recorded", cols, n, width, NULL);
    printf("%-22s %*s", "strategy", width, rec_strategy ? rec_strategy : "-");
    for (size_t i = 0; i < n; i++)
        printf(" %*s", width, strategy);
    putchar('\n');
    reseed_row("exit", rec_exit ? rec_exit : "-", cols, n, width, "exit");
    for (size_t k = 0; replay_counter_rows[k]; k++) {
        char a[32];
        reseed_cell(cJSON_GetObjectItemCaseSensitive(t->counters, replay_counter_rows[k]), a);
        reseed_row(replay_counter_rows[k], a, cols, n, width, replay_counter_rows[k]);
    }
    const char *keys[] = {"lease_rv_moved", "writes_by_kind"};
    for (size_t k = 0; k < RS_ARRAY_LEN(keys); k++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(t->counters, keys[k]);
        char *line = rs_xasprintf("%-22s recorded ", keys[k]);
        char *sa = a ? cJSON_PrintUnformatted(a) : rs_xstrdup("-");
        char *acc = rs_xasprintf("%s%s", line, sa);
        for (size_t i = 0; i < n; i++) {
            const cJSON *b = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(cols[i].run, "delta"), keys[k]);
            char *sb = b ? cJSON_PrintUnformatted(b) : rs_xstrdup("-");
            char *next = rs_xasprintf("%s, %s %s", acc, cols[i].label, sb);
            free(acc);
            free(sb);
            acc = next;
        }
        replay_say(stdout, "", acc);
        free(acc);
        free(sa);
        free(line);
    }
    int64_t last = t->n_rows ? t->rows[t->n_rows - 1].seq : 0;
    if (!rec_tape_meta(t, "exit"))
        printf("(recording ended at seq %" PRId64
               " without its end record: the run was killed there, or the file was copied "
               "before it ended; no recorded exit or counters)\n",
               last);
    else if (!t->counters)
        printf("(the recorded run was ended after seq %" PRId64 " (exit %s): no counters)\n", last,
               rec_exit);
    if (rd->n) {
        char *why = rs_xasprintf(
            "what-if: the recording never made %s (an eager run force-syncs instead of "
            "reading it), and the %s run decided on it: it ran once per reading",
            rd->unobserved, strategy);
        replay_say(stdout, "", why);
        free(why);
        for (size_t i = 0; i < rd->n && i < n; i++) {
            char *line = rs_xasprintf("  %s: %s", rd->r[i].name, rd->r[i].about);
            replay_say(stdout, "", line);
            free(line);
        }
    }
    for (size_t i = 0; i < n; i++) {
        const cJSON *it;
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(cols[i].run, "failures"))
        {
            char *prefix = n > 1 ? rs_xasprintf("replayed run (%s): ", cols[i].label)
                                 : rs_xstrdup("replayed run: ");
            replay_say(stdout, prefix, cJSON_GetStringValue(it));
            free(prefix);
        }
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, warnings)
    {
        replay_say(stdout, "warning: ", it->valuestring);
    }
}

/* One column's run as --json shows it: exit, delta, failures. */
static void reseed_json_run(cJSON *into, const reseed_col *c)
{
    const cJSON *rx = cJSON_GetObjectItemCaseSensitive(c->run, "exit");
    cJSON_AddItemToObject(into, "exit", rx ? cJSON_Duplicate(rx, 1) : cJSON_CreateNull());
    const cJSON *delta = cJSON_GetObjectItemCaseSensitive(c->run, "delta");
    cJSON_AddItemToObject(into, "replayed", delta ? cJSON_Duplicate(delta, 1) : cJSON_CreateNull());
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(c->run, "failures");
    cJSON_AddItemToObject(into, "failures", f ? cJSON_Duplicate(f, 1) : cJSON_CreateArray());
    cJSON_AddBoolToObject(into, "diverged", c->diverged);
}

/* DESIGN §8's document, extended: the first column is "replayed" (with
 * readings, the first reading's run); "what_if" lists every reading. */
static void reseed_json(const rec_tape *t, const char *strategy, const reseed_col *cols, size_t n,
                        const sc_readings *rd, const cJSON *warnings)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "cassette", t->path);
    cJSON *st = cJSON_AddObjectToObject(doc, "strategy");
    const char *rs = rec_tape_meta(t, "strategy");
    cJSON_AddItemToObject(st, "recorded", rs ? cJSON_CreateString(rs) : cJSON_CreateNull());
    cJSON_AddStringToObject(st, "replayed", strategy);
    cJSON *ex = cJSON_AddObjectToObject(doc, "exit");
    const char *re = rec_tape_meta(t, "exit");
    cJSON_AddItemToObject(
        ex, "recorded", re ? cJSON_CreateNumber((double)strtol(re, NULL, 10)) : cJSON_CreateNull());
    const cJSON *rx = cJSON_GetObjectItemCaseSensitive(cols[0].run, "exit");
    cJSON_AddItemToObject(ex, "replayed", rx ? cJSON_Duplicate(rx, 1) : cJSON_CreateNull());
    cJSON_AddItemToObject(doc, "recorded",
                          t->counters ? cJSON_Duplicate(t->counters, 1) : cJSON_CreateNull());
    const cJSON *delta = cJSON_GetObjectItemCaseSensitive(cols[0].run, "delta");
    cJSON_AddItemToObject(doc, "replayed", delta ? cJSON_Duplicate(delta, 1) : cJSON_CreateNull());
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(cols[0].run, "failures");
    cJSON_AddItemToObject(doc, "failures", f ? cJSON_Duplicate(f, 1) : cJSON_CreateArray());
    cJSON_AddItemToObject(doc, "warnings", cJSON_Duplicate(warnings, 1));
    bool diverged = false;
    for (size_t i = 0; i < n; i++)
        diverged = diverged || cols[i].diverged;
    cJSON_AddBoolToObject(doc, "diverged", diverged);
    if (!rd->n) {
        cJSON_AddNullToObject(doc, "what_if");
    } else {
        cJSON *w = cJSON_AddObjectToObject(doc, "what_if");
        cJSON_AddStringToObject(w, "unobserved", rd->unobserved);
        cJSON *arr = cJSON_AddArrayToObject(w, "readings");
        for (size_t i = 0; i < n && i < rd->n; i++) {
            cJSON *r = cJSON_CreateObject();
            cJSON_AddStringToObject(r, "name", rd->r[i].name);
            cJSON_AddStringToObject(r, "about", rd->r[i].about);
            reseed_json_run(r, &cols[i]);
            cJSON_AddItemToArray(arr, r);
        }
    }
    char *s = cJSON_PrintUnformatted(doc);
    printf("%s\n", s);
    free(s);
    cJSON_Delete(doc);
}

const char *replay_recorded_exit(const rec_tape *t)
{
    const char *x = rec_tape_meta(t, "exit");
    /* A crash fault's exit is the fault's, not the core's: the reseeded
     * world injects no fault, so it is never compared. */
    return x && strcmp(x, "137") != 0 ? x : NULL;
}

/* Whether the run read what the recording never did (its decision may
 * hang on it): today, the OpenBao seed. */
static bool reseed_read_unobserved(const cJSON *run)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(run, "delta"), "openbao_calls");
    return cJSON_IsNumber(n) && n->valuedouble > 0;
}

/* The replayed runs: one on the world as built; and when that run read a
 * value the recording never observed, one per reading of it instead (the
 * world as built held a guess there). RS_DATAERR when the cassette cannot
 * be read again. */
static rs_code reseed_runs(sc_scenario *sc, const rs_strategy *strategy, sc_readings *rd,
                           reseed_col cols[SC_READINGS_MAX], size_t *n, rs_err *e)
{
    cols[0] = (reseed_col){.label = "replayed", .run = replay_reseed_run(sc, strategy)};
    *n = 1;
    if (!reseed_read_unobserved(cols[0].run)) return RS_OK;
    if (sc_cassette_readings(sc, rd, e) != RS_OK) return e->code;
    if (!rd->n) return RS_OK; /* the recording read it too: nothing was guessed */
    cJSON_Delete(cols[0].run);
    *n = 0;
    for (size_t i = 0; i < rd->n; i++) {
        sc_reading_push(sc, &rd->r[i]);
        cols[(*n)++] = (reseed_col){.label = rd->r[i].name, .run = replay_reseed_run(sc, strategy)};
        sc_reading_pop(sc);
    }
    return RS_OK;
}

int replay_reseed(const rec_tape *t, const char *strategy_name, bool json)
{
    const rs_strategy *strategy = rs_strategy_find(strategy_name ? strategy_name : "lazy");
    if (!strategy) {
        replay_say(stderr, "reassert replay: --strategy names no strategy: ", strategy_name);
        return RS_USAGE;
    }
    sc_scenario *sc = NULL;
    rs_err e;
    rs_err_clear(&e);
    cJSON *warnings = NULL;
    sc_readings rd;
    memset(&rd, 0, sizeof rd);
    reseed_col cols[SC_READINGS_MAX];
    size_t n = 0;
    if (sc_cassette_scenario(t->path, &sc, &e) != RS_OK ||
        !(warnings = replay_reseed_warnings(sc, &e)) ||
        reseed_runs(sc, strategy, &rd, cols, &n, &e) != RS_OK) {
        replay_say(stderr, "reassert replay: cannot build a world from the cassette: ", e.msg);
        for (size_t i = 0; i < n; i++)
            cJSON_Delete(cols[i].run);
        cJSON_Delete(warnings);
        sc_readings_free(&rd);
        sc_free(sc);
        return e.code == RS_FAILED ? RS_FAILED : RS_DATAERR;
    }
    int code = RS_OK;
    const char *rx = replay_recorded_exit(t);
    for (size_t i = 0; i < n && code == RS_OK; i++) {
        const cJSON *ex = cJSON_GetObjectItemCaseSensitive(cols[i].run, "exit");
        if (!cJSON_IsNumber(ex)) {
            const cJSON *f =
                cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(cols[i].run, "failures"), 0);
            replay_say(stderr, "reassert replay: the reseeded run could not be made: ",
                       cJSON_GetStringValue(f) ? f->valuestring : "(no reason given)");
            code = RS_FAILED;
        }
        /* The recorded exit is the recording's verdict: a reseeded run that
         * ends otherwise — under any reading the recording cannot rule
         * out — is a divergence, whatever its table shows. */
        cols[i].diverged = ex && rx && strtol(rx, NULL, 10) != ex->valueint;
    }
    if (code == RS_OK) {
        if (json)
            reseed_json(t, strategy->name, cols, n, &rd, warnings);
        else
            reseed_table(t, strategy->name, cols, n, &rd, warnings);
        for (size_t i = 0; i < n; i++) {
            if (!cols[i].diverged) continue;
            char *under = n > 1 ? rs_xasprintf(" (%s)", cols[i].label) : rs_xstrdup("");
            char *msg = rs_xasprintf(
                "reseed of %s: the replayed run%s exited %d where the recorded run exited %s",
                t->path, under, cJSON_GetObjectItemCaseSensitive(cols[i].run, "exit")->valueint,
                rx);
            cli_say(json ? stderr : stdout, "error", msg); /* escaped: the path is argv */
            free(msg);
            free(under);
            code = RS_FAILED;
        }
    }
    for (size_t i = 0; i < n; i++)
        cJSON_Delete(cols[i].run);
    cJSON_Delete(warnings);
    sc_readings_free(&rd);
    sc_free(sc);
    if (code == RS_OK && fflush(stdout) != 0) code = RS_FAILED;
    return code;
}
