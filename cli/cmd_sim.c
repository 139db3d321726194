/*
 * cmd_sim.c — `reassert sim`: the scenario runner's arguments, the
 * before/after table (`--compare`, reports/), and `sim init`, which builds a
 * scenario's world into a file so a run can be tried by hand.
 *
 * Every run the runner executes goes through cli_sim_run — the same run path
 * as `reassert run` — handed to sim/ as a function pointer, because sim/
 * never includes cli/.
 */
#include "cli/cli.h"

#include "reports/compare.h"
#include "reports/html.h"
#include "reports/step_outputs.h"
#include "reports/summary.h"
#include "sim/world/world.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int sim_usage_error(const char *msg)
{
    char *text = out_escape(msg, false); /* it may quote argv (DESIGN.md §7.1) */
    fprintf(stderr, "reassert sim: %s\n%s", text, rs_usage_text);
    free(text);
    return RS_USAGE;
}

/* The reports written from the runner's result, after every scenario ran. */
typedef struct sim_reports {
    const char *html_dir;     /* --report DIR */
    const char *summary_path; /* GITHUB_STEP_SUMMARY, in a GitHub Actions step */
    const char *outputs_path; /* GITHUB_OUTPUT, in a GitHub Actions step */
    cJSON *outputs;           /* the counts, taken with the reports; exit added after */
} sim_reports;

static int sim_value_option(const char *a, const char *v, sim_opts *o)
{
    if (strcmp(a, "--strategy") == 0) {
        if (strcmp(v, "lazy") != 0 && strcmp(v, "eager") != 0)
            return sim_usage_error("--strategy: expected lazy or eager");
        o->strategy = v;
    } else if (strcmp(a, "--seed") == 0) {
        /* Digits only: strtoull alone would take "+5", " 5" and "-1". */
        char *end = NULL;
        errno = 0;
        unsigned long long n = v[0] >= '0' && v[0] <= '9' ? strtoull(v, &end, 10) : 0;
        if (v[0] < '0' || v[0] > '9' || errno || !end || *end)
            return sim_usage_error("--seed: expected a non-negative decimal integer");
        o->seed = n;
        o->seed_set = true;
    } else if (strcmp(a, "--junit") == 0) {
        o->junit = v;
    } else if (strcmp(a, "--record") == 0) {
        /* One cassette per run in DIR (made here when missing). */
        struct stat st;
        if (mkdir(v, 0700) != 0 && (errno != EEXIST || stat(v, &st) != 0 || !S_ISDIR(st.st_mode)))
            return sim_usage_error("--record DIR: cannot use the directory given");
        o->record_dir = v;
    } else if (strcmp(a, "--report") == 0) {
        if (!v[0]) return sim_usage_error("--report: expected a directory");
        ((sim_reports *)o->report_arg)->html_dir = v;
    } else {
        /* every value option is handled above */
        fprintf(stderr, "reassert sim: %s is not available in this build yet\n", a);
        return RS_USAGE;
    }
    return RS_OK;
}

static bool sim_reports_write(const cJSON *scenarios, void *arg)
{
    sim_reports *r = arg;
    bool ok = true;
    if (r->outputs_path) r->outputs = reports_step_outputs_sim(scenarios);
    rs_err e;
    rs_err_clear(&e);
    if (r->html_dir && reports_html_write(r->html_dir, scenarios, &e) != RS_OK) {
        char *msg = out_escape(e.msg, false); /* it quotes argv (DESIGN.md §7.1) */
        fprintf(stderr, "reassert sim: %s\n", msg);
        free(msg);
        ok = false;
    }
    /* The sim is the CI gate: a summary that never reached the job page is
     * a failed report, as an unwritten JUnit file is. */
    rs_err_clear(&e);
    if (r->summary_path &&
        reports_summary_append(r->summary_path, scenarios, SUMMARY_SIM, &e) != RS_OK) {
        char *msg = out_escape(e.msg, false);
        fprintf(stderr, "reassert sim: %s\n", msg);
        free(msg);
        ok = false;
    }
    return ok;
}

/* In a GitHub Actions step (GITHUB_OUTPUT set): the gate's verdict and
 * counts as step outputs (issue 30). The sim is the CI gate: outputs that
 * never reached the step fail it, as an unwritten summary does. Frees
 * r->outputs; returns the exit code. */
static int sim_step_outputs(sim_reports *r, int code)
{
    cJSON_AddNumberToObject(r->outputs, "exit", code);
    cJSON_AddStringToObject(r->outputs, "outcome", code == RS_OK ? "passed" : "failed");
    rs_err e;
    rs_err_clear(&e);
    if (reports_step_outputs_append(r->outputs_path, r->outputs, &e) != RS_OK) {
        char *msg = out_escape(e.msg, false);
        fprintf(stderr, "reassert sim: %s\n", msg);
        free(msg);
        if (code == RS_OK) code = RS_FAILED;
    }
    cJSON_Delete(r->outputs);
    r->outputs = NULL;
    return code;
}

/* files must hold argc entries. */
static int sim_opts_parse(int argc, char **argv, const char **files, sim_opts *o,
                          sim_reports *reports)
{
    memset(o, 0, sizeof *o);
    memset(reports, 0, sizeof *reports);
    o->files = files;
    o->run = cli_sim_run;
    o->actions = cli_actions();
    o->report = sim_reports_write;
    o->report_arg = reports;
    const char *summary = getenv("GITHUB_STEP_SUMMARY");
    if (summary && summary[0]) reports->summary_path = summary;
    const char *outputs = getenv("GITHUB_OUTPUT");
    if (outputs && outputs[0]) reports->outputs_path = outputs;
    size_t n = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--strategy") == 0 || strcmp(a, "--seed") == 0 ||
                   strcmp(a, "--junit") == 0 || strcmp(a, "--report") == 0 ||
                   strcmp(a, "--record") == 0) {
            if (cli_no_value(argc, argv, i)) {
                char msg[64];
                snprintf(msg, sizeof msg, "%s needs a value", a);
                return sim_usage_error(msg);
            }
            int c = sim_value_option(a, argv[++i], o);
            if (c != RS_OK) return c;
        } else if (a[0] == '-' && a[1] == '-') {
            cli_unknown_arg_say("sim", a);
            return RS_USAGE;
        } else {
            files[n++] = a;
        }
    }
    o->n_files = n;
    if (n == 0) return sim_usage_error("no scenario file given");
    return RS_OK;
}

/* ---- sim init ---- */

typedef struct sim_init_args {
    const char *scenario, *db, *run;
} sim_init_args;

static int sim_init_parse(int argc, char **argv, sim_init_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 0; i < argc; i++) {
        const char **slot = strcmp(argv[i], "--scenario") == 0 ? &a->scenario
                            : strcmp(argv[i], "--db") == 0     ? &a->db
                            : strcmp(argv[i], "--run") == 0    ? &a->run
                                                               : NULL;
        if (!slot) {
            cli_unknown_arg_say("sim init", argv[i]);
            return RS_USAGE;
        }
        if (cli_no_value(argc, argv, i)) {
            fprintf(stderr, "reassert sim init: %s needs a value\n", argv[i]);
            return RS_USAGE;
        }
        *slot = argv[++i];
    }
    if (!a->scenario || !a->db) {
        fprintf(stderr, "reassert sim init: --scenario and --db are required\n%s",
                cli_usage_sim_init);
        return RS_USAGE;
    }
    return RS_OK;
}

/* A world file may be rebuilt; anything else at the path is someone's data. */
static int sim_init_target_ok(const char *db)
{
    struct stat st;
    if (lstat(db, &st) != 0) return errno == ENOENT ? RS_OK : RS_USAGE;
    rs_err e;
    rs_err_clear(&e);
    if (!S_ISREG(st.st_mode) || sim_world_probe(db, &e) != RS_OK) {
        fprintf(stderr,
                "reassert sim init: %s exists and is not a sim world; refusing to overwrite it\n",
                db);
        return RS_USAGE;
    }
    return RS_OK;
}

static const sc_run *sim_init_find_run(const sc_scenario *sc, const char *name)
{
    for (size_t i = 0; i < sc->n_runs; i++)
        if (strcmp(sc->runs[i].name, name) == 0) return &sc->runs[i];
    return NULL;
}

static rs_code sim_init_before(const char *db, const sc_run *run, rs_err *e)
{
    sim_world *w = NULL;
    rs_code c = sim_world_open(db, &w, e);
    for (size_t i = 0; c == RS_OK && i < run->n_before; i++)
        c = sim_world_apply_event(w, &run->before[i], e);
    sim_world_close(w);
    return c;
}

/* A message quoting scenario text, escaped (DESIGN.md §7.1). */
static void sim_init_say(const char *msg)
{
    char *text = out_escape(msg, false);
    fprintf(stderr, "reassert sim init: %s\n", text);
    free(text);
}

static int sim_init(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(cli_usage_sim_init, stdout);
        return RS_OK;
    }
    sim_init_args a;
    int code = sim_init_parse(argc, argv, &a);
    if (code == RS_OK) code = sim_init_target_ok(a.db);
    if (code != RS_OK) return code;
    sc_scenario *sc = NULL;
    rs_err e;
    rs_err_clear(&e);
    if (sc_load(a.scenario, &sc, &e) != RS_OK) {
        sim_init_say(e.msg);
        return e.code;
    }
    const sc_run *run = a.run ? sim_init_find_run(sc, a.run) : NULL;
    if (a.run && !run) {
        char *name = out_escape(sc->name, false);
        char *asked = out_escape(a.run, false); /* argv: the user's text */
        fprintf(stderr, "reassert sim init: scenario %s has no run named '%s'\n", name, asked);
        free(asked);
        free(name);
        sc_free(sc);
        return RS_USAGE;
    }
    if (sim_world_build(a.db, sc, &e) != RS_OK ||
        (run && sim_init_before(a.db, run, &e) != RS_OK)) {
        sim_init_say(e.msg);
        sc_free(sc);
        return e.code;
    }
    char *name = out_escape(sc->name, false);
    printf("built the world of scenario %s in %s%s%s%s\n"
           "try: reassert run --transport sim:%s --desired %s --output json\n",
           name, a.db, run ? " (with the before: events of run " : "", run ? run->name : "",
           run ? ")" : "", a.db, sc->desired);
    free(name);
    sc_free(sc);
    return RS_OK;
}

/* The options of `sim` and `sim --compare` that take a value (sim_opts_parse,
 * reports_compare_main): a folder given as their value is not a scenario
 * folder. */
static const char *const sim_value_opts[] = {"--strategy", "--seed",    "--junit", "--report",
                                             "--record",   "--compare", NULL};

static int sim_scenarios(int argc, char **argv)
{
    bool compare = false;
    for (int i = 0; i < argc; i++)
        compare = compare || strcmp(argv[i], "--compare") == 0;
    if (compare) {
        /* --compare takes its value and scenario files, nothing else. */
        for (int i = 0; i < argc; i++) {
            if (strcmp(argv[i], "--compare") == 0) {
                i++;
            } else if (argv[i][0] == '-') {
                cli_unknown_arg_say("sim", argv[i]);
                return RS_USAGE;
            }
        }
        return reports_compare_main(argc, argv, cli_sim_run);
    }
    const char **files = rs_xcalloc((size_t)argc + 1, sizeof *files);
    sim_opts o;
    sim_reports reports;
    int code = sim_opts_parse(argc, argv, files, &o, &reports);
    if (code == RS_OK) code = sim_main(&o);
    if (reports.outputs) code = sim_step_outputs(&reports, code);
    free(files);
    return code;
}

int cmd_sim(int argc, char **argv)
{
    if (argc > 0 && strcmp(argv[0], "init") == 0) return sim_init(argc - 1, argv + 1);
    if (cli_wants_help(argc, argv)) {
        fputs(cli_usage_sim, stdout);
        return RS_OK;
    }
    /* A folder stands for every scenario under it (`reassert sim scenarios/`). */
    int n = 0;
    char **args = NULL;
    int code = cli_sim_expand(argc, argv, sim_value_opts, &n, &args);
    if (code != RS_OK) return code;
    code = sim_scenarios(n, args);
    cli_sim_expand_free(n, args);
    return code;
}
