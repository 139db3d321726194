/*
 * fuzz_scenario.c — the scenario loader (sim/scenario, through the one YAML
 * reader core/live/live_yaml.c) on arbitrary bytes.
 *
 * fuzz-seeds: scenarios tests/harness/inputs
 *
 * Properties beyond "no crash, leak, sanitizer report or hang": a load either
 * succeeds with at least one run, or fails with RS_DATAERR, no scenario, and
 * a message that starts with the file's path and a position
 * ("<file>:<line>:<col>: ..."). A loaded scenario's runs are read the way
 * the runner reads them (expectations merged per strategy, the desired
 * credential found in the catalogue).
 */
#include "sim/scenario/scenario.h"
#include "tests/fuzz/fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_file(data, size);
    sc_scenario *sc = NULL;
    rs_err e = {0};
    rs_code c = sc_load(path, &sc, &e);
    if (c != RS_OK) {
        FUZZ_CHECK(c == RS_DATAERR, "code %d: %s", (int)c, e.msg);
        FUZZ_CHECK(sc == NULL, "a failed load returned a scenario");
        size_t n = strlen(path);
        FUZZ_CHECK(strncmp(e.msg, path, n) == 0 && e.msg[n] == ':', "error without the path: %s",
                   e.msg);
        int line = 0, col = 0;
        FUZZ_CHECK(sscanf(e.msg + n, ":%d:%d:", &line, &col) == 2 && line >= 1 && col >= 1,
                   "error without line:col: %s", e.msg);
        return 0;
    }
    FUZZ_CHECK(sc != NULL && sc->n_runs >= 1, "a loaded scenario without runs");
    FUZZ_CHECK(sc->n_strategies >= 1, "a loaded scenario without strategies");
    FUZZ_CHECK(sc->desired == NULL || sc_catalogue_find(sc, sc->desired) != NULL,
               "desired credential not in the catalogue");
    for (size_t r = 0; r < sc->n_runs; r++) {
        for (size_t s = 0; s < sc->n_strategies; s++) {
            cJSON *x = sc_expect_for(&sc->runs[r], sc->strategies[s]);
            FUZZ_CHECK(x != NULL, "sc_expect_for returned NULL");
            cJSON_Delete(x);
        }
    }
    sc_free(sc);
    return 0;
}
