/*
 * compare.c — `reassert sim --compare eager,lazy`: runs every scenario under
 * both strategies on fresh worlds and prints, per run, virtual seconds,
 * api_calls, writes, controller_restarts and lease_writes side by side with
 * the lazy/eager ratio. The numbers are the sim's counters (§4), so they are
 * deterministic: the same table on every machine, however loaded.
 */
#include "reports/compare.h"

#include "core/txn.h"
#include "sim/runner/runner.h"
#include "sim/scenario/scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const cols[] = {"virtual_seconds", "api_calls", "writes", "controller_restarts",
                                   "lease_writes"};
static const char *const heads[] = {"virtual s", "api calls", "writes", "restarts", "lease writes"};

static double delta_of(const cJSON *run, const char *key)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(run, "delta");
    return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(d, key));
}

static const cJSON *run_named(const cJSON *runs, const char *name)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, runs)
    {
        const char *n = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "name"));
        if (n && strcmp(n, name) == 0) return r;
    }
    return NULL;
}

static void print_cell(double e, double l, bool seconds)
{
    char ratio[32];
    if (e > 0)
        snprintf(ratio, sizeof ratio, "%.2f", l / e);
    else
        snprintf(ratio, sizeof ratio, "%s", l > 0 ? "inf" : "-");
    if (seconds)
        printf(" %.3f / %.3f (%s) |", e, l, ratio);
    else
        printf(" %.0f / %.0f (%s) |", e, l, ratio);
}

static void print_header(void)
{
    printf("| scenario | run |");
    for (size_t i = 0; i < 5; i++)
        printf(" %s eager / lazy (ratio) |", heads[i]);
    printf("\n|---|---|");
    for (size_t i = 0; i < 5; i++)
        printf("---|");
    printf("\n");
}

static int compare_one(const char *file, sim_run_fn run)
{
    sc_scenario *sc = NULL;
    rs_err e;
    rs_err_clear(&e);
    if (sc_load(file, &sc, &e) != RS_OK) {
        fprintf(stderr, "reassert sim --compare: %s\n", e.msg);
        return RS_DATAERR;
    }
    fprintf(stderr, "comparing %s ...\n", file);
    cJSON *eager = NULL, *lazy = NULL;
    sim_scenario_run(sc, rs_strategy_find("eager"), "eager", run, &eager);
    sim_scenario_run(sc, rs_strategy_find("lazy"), "lazy", run, &lazy);
    for (size_t i = 0; i < sc->n_runs; i++) {
        const cJSON *re = run_named(eager, sc->runs[i].name);
        const cJSON *rl = run_named(lazy, sc->runs[i].name);
        if (!re || !rl) continue;
        printf("| %s | %s |", sc->name, sc->runs[i].name);
        for (size_t c = 0; c < 5; c++)
            print_cell(delta_of(re, cols[c]), delta_of(rl, cols[c]), c == 0);
        printf("\n");
    }
    cJSON_Delete(eager);
    cJSON_Delete(lazy);
    sc_free(sc);
    return RS_OK;
}

int reports_compare_main(int argc, char **argv, sim_run_fn run)
{
    int code = RS_OK;
    int files = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--compare") == 0) {
            if (i + 1 >= argc || strcmp(argv[i + 1], "eager,lazy") != 0) {
                fprintf(stderr, "reassert sim: --compare takes exactly eager,lazy\n");
                return RS_USAGE;
            }
            i++;
        }
        /* any other option was refused by cmd_sim, the command's parser */
    }
    print_header();
    for (int i = 0; i < argc; i++) {
        if (argv[i][0] == '-' || (i > 0 && strcmp(argv[i - 1], "--compare") == 0)) continue;
        files++;
        int c = compare_one(argv[i], run);
        code = rs_code_worst(code, c);
    }
    if (files == 0) {
        fprintf(stderr, "reassert sim --compare: no scenario file given\n");
        return RS_USAGE;
    }
    return code;
}
