/*
 * runner_record.c — where `reassert sim --record DIR` puts each run's
 * cassette (DIR/<scenario>.<run>.db, under DIR/<strategy>/ when no
 * --strategy picks one), and the check that none of them is there yet.
 *
 * The one idea: a cassette never replaces a file (DESIGN §8; the house rule
 * of every writer), and the refusal comes before the first run, so a
 * refused `sim --record` leaves DIR exactly as it was — never a half-made
 * set of new cassettes beside someone's older ones.
 */
#include "sim/runner/runner.h"
#include "sim/runner/runner_int.h"

#include "recorder/rec_cassette.h"

#include <stdlib.h>
#include <string.h>

char *runner_record_dir(const sim_opts *c, const char *strategy)
{
    if (!c->record_dir) return NULL;
    /* Both strategies record the same run names: each gets its folder. */
    return c->strategy ? rs_xstrdup(c->record_dir) : rs_xasprintf("%s/%s", c->record_dir, strategy);
}

char *runner_record_path(const char *dir, const sc_scenario *sc, const sc_run *run)
{
    /* Each name kept to [A-Za-z0-9._-]: a scenario cannot name a path
     * outside DIR. */
    char *p = rs_xasprintf("%s/%s.%s.db", dir, sc->name, run->name);
    for (char *c = p + strlen(dir) + 1; *c; c++)
        if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
              *c == '.' || *c == '-' || *c == '_'))
            *c = '_';
    return p;
}

/* Whether sim_main will run sc under strategy st (as scenario_run picks). */
static bool record_runs_under(const sim_opts *c, const sc_scenario *sc, const char *st)
{
    if (c->strategy && strcmp(c->strategy, st) != 0) return false;
    if (!rs_strategy_find(st)) return false;
    for (size_t i = 0; i < sc->n_strategies; i++)
        if (strcmp(sc->strategies[i], st) == 0) return true;
    return false;
}

/* Why path cannot take a new cassette, or NULL: something at it (a file, a
 * symlink, anything), a journal beside it SQLite would replay into the new
 * file, or another run of this command recording there too. */
static const char *record_taken(const char *path, char *const *planned, size_t n)
{
    const char *why = rec_cassette_taken(path);
    if (why) return why;
    for (size_t i = 0; i < n; i++)
        if (strcmp(planned[i], path) == 0) return "would be recorded by two runs";
    return NULL;
}

#define RECORD_PLANNED_MAX 4096 /* cassettes one command may plan */

bool runner_record_preflight(const sim_opts *c)
{
    if (!c->record_dir) return true;
    static const char *const strategies[] = {"lazy", "eager"};
    char **planned = rs_xcalloc(RECORD_PLANNED_MAX, sizeof *planned);
    size_t n = 0;
    const char *why = NULL;
    char *bad = NULL;
    for (size_t f = 0; f < c->n_files && !why; f++) {
        sc_scenario *sc = NULL;
        rs_err e;
        rs_err_clear(&e);
        /* A file that does not load is sim_main's to report; it records
         * nothing. */
        if (sc_load(c->files[f], &sc, &e) != RS_OK) continue;
        for (size_t s = 0; s < RS_ARRAY_LEN(strategies) && !why; s++) {
            if (!record_runs_under(c, sc, strategies[s])) continue;
            char *dir = runner_record_dir(c, strategies[s]);
            for (size_t r = 0; r < sc->n_runs && !why && n < RECORD_PLANNED_MAX; r++) {
                char *path = runner_record_path(dir, sc, &sc->runs[r]);
                why = record_taken(path, planned, n);
                if (why)
                    bad = path;
                else
                    planned[n++] = path;
            }
            free(dir);
        }
        sc_free(sc);
    }
    if (why) {
        fputs("reassert sim: --record: ", stderr);
        runner_actions_escape(stderr, bad, false); /* argv and scenario text */
        fprintf(stderr,
                " %s; a cassette never replaces a file nor writes through a symbolic link "
                "(nothing was run)\n",
                why);
    }
    free(bad);
    for (size_t i = 0; i < n; i++)
        free(planned[i]);
    free(planned);
    return why == NULL;
}
