/*
 * runner_cassette.c — what a world seeded from a cassette cannot show
 * (DESIGN.md §8 r2), for `reassert sim` and `reassert replay --reseed`
 * alike: one sentence each, from the world builder itself.
 */
#include "sim/runner/runner.h"
#include "sim/runner/runner_int.h"
#include "sim/world/world.h"

#include <stdlib.h>

cJSON *sim_scenario_warnings(const sc_scenario *sc, rs_err *e)
{
    char **warn = NULL;
    size_t n = 0;
    cJSON *out = NULL;
    sim_world *w = NULL;
    if (sim_world_build_mem(sc, &w, &warn, &n, e) == RS_OK) {
        out = cJSON_CreateArray();
        for (size_t i = 0; i < n; i++)
            cJSON_AddItemToArray(out, cJSON_CreateString(warn[i]));
    }
    sim_world_close(w);
    sim_strings_free(warn, n);
    return out;
}

void sim_scenario_warn(const sc_scenario *sc, FILE *err)
{
    if (!sc->cluster.cassette) return;
    rs_err e;
    rs_err_clear(&e);
    /* A world that cannot be built is the run's failure, reported there. */
    cJSON *w = sim_scenario_warnings(sc, &e);
    cred_redact *redact = runner_redact_set(sc);
    runner_redact(redact, w);
    cred_redact_free(redact);
    const cJSON *it;
    cJSON_ArrayForEach(it, w)
    {
        fputs("warning: ", err);
        runner_actions_escape(err, cJSON_GetStringValue(it) ? it->valuestring : "", false);
        fputc('\n', err);
    }
    cJSON_Delete(w);
}
