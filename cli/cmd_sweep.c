/*
 * cmd_sweep.c — `reassert sweep`: the arguments; the search itself is
 * sim/sweep/ (sweep.h), handed cli_sim_run so every plan's runs take the
 * production run path, as `reassert sim` runs do.
 */
#include "cli/cli.h"

#include "sim/sweep/sweep.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int sweep_usage(const char *fmt, const char *arg)
{
    char *a = out_escape(arg ? arg : "", false); /* argv is the user's text (§7.1) */
    fputs("reassert sweep: ", stderr);
    fprintf(stderr, fmt, a);
    fprintf(stderr, "\n%s", cli_usage_sweep);
    free(a);
    return RS_USAGE;
}

/* Digits only, 0..max. */
static bool parse_u64(const char *v, unsigned long long max, unsigned long long *out)
{
    if (!v || v[0] < '0' || v[0] > '9') return false;
    char *end = NULL;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || !end || *end || n > max) return false;
    *out = n;
    return true;
}

static bool parse_shard(const char *v, unsigned *i, unsigned *n)
{
    const char *slash = strchr(v, '/');
    if (!slash || slash - v > 8) return false;
    char left[16];
    memcpy(left, v, (size_t)(slash - v));
    left[slash - v] = '\0';
    unsigned long long a = 0, b = 0;
    if (!parse_u64(left, 10000, &a) || !parse_u64(slash + 1, 10000, &b)) return false;
    if (a < 1 || b < 1 || a > b) return false;
    *i = (unsigned)a;
    *n = (unsigned)b;
    return true;
}

static int sweep_value(const char *a, const char *v, sweep_opts *o, bool *seed_set)
{
    unsigned long long n = 0;
    if (strcmp(a, "--run") == 0) {
        o->run = v;
    } else if (strcmp(a, "--strategy") == 0) {
        o->strategy = rs_strategy_find(v);
        if (!o->strategy || (strcmp(v, "lazy") != 0 && strcmp(v, "eager") != 0))
            return sweep_usage("--strategy: expected lazy or eager, got '%s'", v);
        o->expect_as = o->strategy->name;
    } else if (strcmp(a, "--swarm") == 0) {
        if (!parse_u64(v, 1000000, &n) || n < 1)
            return sweep_usage("--swarm: expected a number of plans from 1 to 1000000, got '%s'",
                               v);
        if (o->mode != SWEEP_CRASH)
            return sweep_usage("%s: only one of --perturb, --swarm, --plan", a);
        o->mode = SWEEP_SWARM;
        o->swarm_n = (unsigned)n;
    } else if (strcmp(a, "--seed") == 0) {
        if (!parse_u64(v, UINT64_MAX, &n))
            return sweep_usage("--seed: expected a non-negative decimal integer, got '%s'", v);
        o->seed = n;
        *seed_set = true;
    } else if (strcmp(a, "--plan") == 0) {
        /* --perturb --plan: the plan judged as the perturbation sweep does. */
        if (o->plan || (o->mode != SWEEP_CRASH && o->mode != SWEEP_PERTURB))
            return sweep_usage("%s: only one of --perturb, --swarm, --plan", a);
        o->plan_perturb = o->mode == SWEEP_PERTURB;
        o->mode = SWEEP_PLAN;
        o->plan = v;
    } else if (strcmp(a, "--shard") == 0) {
        if (!parse_shard(v, &o->shard_i, &o->shard_n))
            return sweep_usage("--shard: expected I/N with 1 <= I <= N <= 10000, got '%s'", v);
    } else { /* --emit-scenario */
        struct stat sb;
        if (lstat(v, &sb) == 0)
            return sweep_usage("--emit-scenario: %s exists; it is never overwritten", v);
        o->emit = v;
    }
    return RS_OK;
}

int cmd_sweep(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(cli_usage_sweep, stdout);
        return RS_OK;
    }
    sweep_opts o = {.mode = SWEEP_CRASH, .shard_i = 1, .shard_n = 1, .seed = 1};
    o.out = stdout;
    bool seed_set = false;
    rs_broken broken = RS_BROKEN_NONE;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--test-only-broken") == 0) {
            if (cli_no_value(argc, argv, i)) return sweep_usage("%s needs a value", a);
            if (broken != RS_BROKEN_NONE) return sweep_usage("%s: given twice", a);
            broken = sweep_broken_find(argv[++i]);
            if (broken == RS_BROKEN_NONE)
                return sweep_usage("--test-only-broken: expected " SWEEP_BROKEN_NAMES
                                   " (deliberate defects, for testing the sweeps), got '%s'",
                                   argv[i]);
        } else if (strcmp(a, "--json") == 0) {
            o.json = true;
        } else if (strcmp(a, "--perturb") == 0) {
            if (o.mode == SWEEP_PLAN && !o.plan_perturb) {
                o.plan_perturb = true; /* --plan SPEC --perturb */
            } else if (o.mode != SWEEP_CRASH) {
                return sweep_usage("%s: only one of --perturb, --swarm, --plan", a);
            } else {
                o.mode = SWEEP_PERTURB;
            }
        } else if (!strcmp(a, "--run") || !strcmp(a, "--strategy") || !strcmp(a, "--swarm") ||
                   !strcmp(a, "--seed") || !strcmp(a, "--plan") || !strcmp(a, "--shard") ||
                   !strcmp(a, "--emit-scenario")) {
            if (cli_no_value(argc, argv, i)) return sweep_usage("%s needs a value", a);
            int c = sweep_value(a, argv[++i], &o, &seed_set);
            if (c != RS_OK) return c;
        } else if (a[0] == '-') {
            cli_unknown_arg_say("sweep", a);
            return RS_USAGE;
        } else if (o.file) {
            return sweep_usage("one scenario at a time (a second one: '%s')", a);
        } else {
            o.file = a;
        }
    }
    if (!o.file) return sweep_usage("no scenario given%s", "");
    if (seed_set && o.mode != SWEEP_SWARM) return sweep_usage("--seed is for --swarm%s", "");
    /* TEST-ONLY: a copy of the named strategy carrying a deliberate defect. */
    static rs_strategy defective;
    if (broken != RS_BROKEN_NONE) {
        if (!o.strategy) return sweep_usage("--test-only-broken needs --strategy lazy|eager%s", "");
        if (o.emit)
            return sweep_usage("--emit-scenario: a scenario file cannot carry the test-only "
                               "defect of --test-only-broken%s",
                               "");
        defective = *o.strategy;
        defective.broken = broken;
        o.strategy = &defective;
    }
    o.run_fn = cli_sim_run;
    return sweep_main(&o);
}
