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
 */
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

static void reseed_table(const rec_tape *t, const char *strategy, const cJSON *run,
                         const cJSON *warnings)
{
    const cJSON *delta = cJSON_GetObjectItemCaseSensitive(run, "delta");
    const char *rec_strategy = rec_tape_meta(t, "strategy");
    const char *rec_exit = rec_tape_meta(t, "exit");
    replay_say(stdout, "reseed of ", t->path);
    printf("%-22s %12s %12s\n", "", "recorded", "replayed");
    printf("%-22s %12s %12s\n", "strategy", rec_strategy ? rec_strategy : "-", strategy);
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(run, "exit");
    char cell[32];
    reseed_cell(ex, cell);
    printf("%-22s %12s %12s\n", "exit", rec_exit ? rec_exit : "-", cell);
    for (size_t i = 0; replay_counter_rows[i]; i++) {
        char a[32], b[32];
        reseed_cell(cJSON_GetObjectItemCaseSensitive(t->counters, replay_counter_rows[i]), a);
        reseed_cell(cJSON_GetObjectItemCaseSensitive(delta, replay_counter_rows[i]), b);
        printf("%-22s %12s %12s\n", replay_counter_rows[i], a, b);
    }
    const char *keys[] = {"lease_rv_moved", "writes_by_kind"};
    for (size_t i = 0; i < RS_ARRAY_LEN(keys); i++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(t->counters, keys[i]);
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(delta, keys[i]);
        char *sa = a ? cJSON_PrintUnformatted(a) : rs_xstrdup("-");
        char *sb = b ? cJSON_PrintUnformatted(b) : rs_xstrdup("-");
        char *line = rs_xasprintf("%-22s recorded %s, replayed %s", keys[i], sa, sb);
        replay_say(stdout, "", line);
        free(line);
        free(sa);
        free(sb);
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
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(run, "failures"))
    {
        replay_say(stdout, "replayed run: ", cJSON_GetStringValue(it));
    }
    cJSON_ArrayForEach(it, warnings)
    {
        replay_say(stdout, "warning: ", it->valuestring);
    }
}

static void reseed_json(const rec_tape *t, const char *strategy, const cJSON *run,
                        const cJSON *warnings, bool diverged)
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
    const cJSON *rx = cJSON_GetObjectItemCaseSensitive(run, "exit");
    cJSON_AddItemToObject(ex, "replayed", rx ? cJSON_Duplicate(rx, 1) : cJSON_CreateNull());
    cJSON_AddItemToObject(doc, "recorded",
                          t->counters ? cJSON_Duplicate(t->counters, 1) : cJSON_CreateNull());
    const cJSON *delta = cJSON_GetObjectItemCaseSensitive(run, "delta");
    cJSON_AddItemToObject(doc, "replayed", delta ? cJSON_Duplicate(delta, 1) : cJSON_CreateNull());
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(run, "failures");
    cJSON_AddItemToObject(doc, "failures", f ? cJSON_Duplicate(f, 1) : cJSON_CreateArray());
    cJSON_AddItemToObject(doc, "warnings", cJSON_Duplicate(warnings, 1));
    cJSON_AddBoolToObject(doc, "diverged", diverged);
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
    if (sc_cassette_scenario(t->path, &sc, &e) != RS_OK ||
        !(warnings = replay_reseed_warnings(sc, &e))) {
        replay_say(stderr, "reassert replay: cannot build a world from the cassette: ", e.msg);
        sc_free(sc);
        return e.code == RS_FAILED ? RS_FAILED : RS_DATAERR;
    }
    cJSON *run = replay_reseed_run(sc, strategy);
    int code = RS_OK;
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(run, "exit");
    if (!cJSON_IsNumber(ex)) {
        const cJSON *f = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(run, "failures"), 0);
        replay_say(stderr, "reassert replay: the reseeded run could not be made: ",
                   cJSON_GetStringValue(f) ? f->valuestring : "(no reason given)");
        code = RS_FAILED;
    } else {
        /* The recorded exit is the recording's verdict: a reseeded run that
         * ends otherwise is a divergence, whatever its table shows. */
        const char *rx = replay_recorded_exit(t);
        bool diverged = rx && strtol(rx, NULL, 10) != ex->valueint;
        if (json)
            reseed_json(t, strategy->name, run, warnings, diverged);
        else
            reseed_table(t, strategy->name, run, warnings);
        if (diverged) {
            fprintf(json ? stderr : stdout, "::error::reseed of ");
            char *p = out_escape(t->path, false);
            fprintf(json ? stderr : stdout,
                    "%s: the replayed run exited %d where the recorded run exited %s\n", p,
                    ex->valueint, rx);
            free(p);
            code = RS_FAILED;
        }
    }
    cJSON_Delete(run);
    cJSON_Delete(warnings);
    sc_free(sc);
    if (code == RS_OK && fflush(stdout) != 0) code = RS_FAILED;
    return code;
}
