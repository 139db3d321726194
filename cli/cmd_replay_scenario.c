/*
 * cmd_replay_scenario.c — `reassert replay CASSETTE --to-scenario OUT.yaml`
 * (DESIGN.md §8 r2): an incident becomes a regression test.
 *
 * The scenario written seeds its world from the cassette (`cluster:
 * {cassette: FILE}`, the path relative to OUT's folder), has one run per
 * recorded run (a cassette holds one) with the recorded arguments, and
 * expectations that pin what today's core does there under each strategy
 * (exit and counters): the very runs `--reseed` makes. A header comment is
 * left for a person to fill in, and lists what the cassette could not show.
 *
 * The one idea: what is written is proven before it is kept. The file is
 * loaded and run as `reassert sim` would; a scenario that does not load
 * or pass is removed and the command fails, saying why. Same cassette, same
 * bytes: nothing in the file depends on time, paths outside it, or chance.
 */
#define _XOPEN_SOURCE 700 /* realpath, fdopen, O_NOFOLLOW */
#include "cli/cli.h"
#include "cli/cli_replay.h"

#include "sim/runner/runner.h"
#include "sim/scenario/scenario_cassette.h"
#include "sim/world/world.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- paths ---- */

/* cassette's path relative to the folder OUT is written in; caller frees.
 * Both are resolved first, so "../incidents/x.db" and symlinks come out
 * right; NULL with *e set when either cannot be. */
#define TOS_PARTS_MAX 256

/* Splits an absolute path (in place) into its components. */
static size_t tos_split(char *path, char *parts[TOS_PARTS_MAX])
{
    size_t n = 0;
    for (char *tok = strtok(path, "/"); tok && n < TOS_PARTS_MAX; tok = strtok(NULL, "/"))
        parts[n++] = tok;
    return n;
}

static char *tos_relative(const char *cassette, const char *out, rs_err *e)
{
    char cas[PATH_MAX], dir[PATH_MAX];
    char *d = rs_xstrdup(out);
    char *slash = strrchr(d, '/');
    if (slash == d)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    bool ok = realpath(cassette, cas) && realpath(slash ? d : ".", dir);
    free(d);
    if (!ok) {
        rs_fail(e, RS_USAGE, "cannot resolve %s or the folder of %s: %s", cassette, out,
                strerror(errno));
        return NULL;
    }
    char *cp[TOS_PARTS_MAX], *dp[TOS_PARTS_MAX];
    size_t nc = tos_split(cas, cp), nd = tos_split(dir, dp), k = 0;
    while (k < nc && k < nd && strcmp(cp[k], dp[k]) == 0)
        k++;
    /* A scenario reads its cassette from its own folder or below (the
     * loader refuses a ".." component): said now, before anything is run
     * or written, not by the proof run of a file that cannot load. */
    if (k < nd) {
        rs_fail(e, RS_USAGE,
                "the cassette %s is not in the folder of %s nor below it, and a scenario reads "
                "its cassette from its own folder tree: write the scenario beside the cassette "
                "(or in a folder above it), or copy the cassette beside the scenario",
                cassette, out);
        return NULL;
    }
    char *rel = rs_xcalloc(3 * (nd - k) + PATH_MAX + 1, 1);
    for (size_t i = k; i < nd; i++)
        strcat(rel, "../");
    for (size_t i = k; i < nc; i++) {
        strcat(rel, cp[i]);
        if (i + 1 < nc) strcat(rel, "/");
    }
    return rel;
}

/* ---- the file ---- */

/* A JSON string literal (YAML reads it as a double-quoted scalar). */
static void tos_quoted(FILE *fp, const char *s)
{
    cJSON *v = cJSON_CreateString(s);
    char *q = cJSON_PrintUnformatted(v);
    fputs(q, fp);
    free(q);
    cJSON_Delete(v);
}

/* A comment line: text from a cluster never ends the comment. */
static void tos_comment(FILE *fp, const char *prefix, const char *text)
{
    fputs(prefix, fp);
    for (const char *p = text; *p; p++)
        fputc(*p == '\n' || *p == '\r' ? ' ' : *p, fp);
    fputc('\n', fp);
}

static void tos_expect(FILE *fp, const char *strategy, const cJSON *run)
{
    const cJSON *delta = cJSON_GetObjectItemCaseSensitive(run, "delta");
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(run, "exit");
    fprintf(fp, "        %s:\n          exit: %d\n          delta:\n", strategy,
            cJSON_IsNumber(ex) ? ex->valueint : -1);
    for (size_t i = 0; replay_counter_rows[i]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(delta, replay_counter_rows[i]);
        if (!cJSON_IsNumber(v)) continue;
        char *n = cJSON_PrintUnformatted(v);
        fprintf(fp, "            %s: %s\n", replay_counter_rows[i], n);
        free(n);
    }
}

static const char *const tos_strategies[2] = {"lazy", "eager"};

/* When today's core, reseeded, exits otherwise than the recording did
 * under strategy i: the sentence saying the scenario pins another exit
 * (caller frees); NULL when it pins the recorded one or none was recorded. */
static char *tos_exit_warning(const rec_tape *t, cJSON *const runs[2], size_t i)
{
    const char *rx = replay_recorded_exit(t);
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(runs[i], "exit");
    if (!rx || !cJSON_IsNumber(ex) || strtol(rx, NULL, 10) == ex->valueint) return NULL;
    return rs_xasprintf("the scenario pins exit %d under %s where the recorded run exited %s: "
                        "the reseeded world did not keep what the run decided on (see below), "
                        "or today's core decides otherwise",
                        ex->valueint, tos_strategies[i], rx);
}

static void tos_write(FILE *fp, const rec_tape *t, const sc_scenario *sc, const char *rel,
                      cJSON *const runs[2], const cJSON *warnings, const char *name)
{
    const char *strategy = rec_tape_meta(t, "strategy");
    const char *exit_code = rec_tape_meta(t, "exit");
    const char *scenario = rec_tape_meta(t, "scenario");
    const char *transport = rec_tape_meta(t, "transport");
    const char *slash = strrchr(t->path, '/');
    fputs("# Hazard: (fill in: the production hazard this incident shows, e.g. H42 — ...)\n", fp);
    fputs("# Incident: (fill in: what happened, when, and what it cost)\n", fp);
    char *line = rs_xasprintf(
        "%s (%s %s, run %s): strategy %s, exit %s, %zu calls", slash ? slash + 1 : t->path,
        scenario ? "scenario" : "transport",
        scenario    ? scenario
        : transport ? transport
                    : "?",
        sc->runs[0].name, strategy ? strategy : "?",
        exit_code ? exit_code : "none (the recording ended without its end record)", t->n_rows);
    tos_comment(fp, "# Recorded: ", line);
    free(line);
    fputs("# Written by `reassert replay CASSETTE --to-scenario`: the world is seeded from\n"
          "# the cassette's first observations, and the expectations pin what today's\n"
          "# core does there under each strategy. Edit them into the behaviour you want.\n",
          fp);
    for (size_t i = 0; i < 2; i++) {
        char *warn = tos_exit_warning(t, runs, i);
        if (warn) tos_comment(fp, "# Warning: ", warn);
        free(warn);
    }
    const cJSON *w;
    if (cJSON_GetArraySize(warnings) > 0)
        fputs("# What the cassette could not show (the world holds the sim's own there):\n", fp);
    cJSON_ArrayForEach(w, warnings)
    {
        tos_comment(fp, "#   - ", w->valuestring);
    }
    fputs("name: ", fp);
    tos_quoted(fp, name);
    fputs("\nabout: ", fp);
    tos_quoted(fp, "an incident reseeded from its cassette (fill in)");
    fputs("\nseed: 1\nstrategies: [lazy, eager]\ncluster: {cassette: ", fp);
    tos_quoted(fp, rel);
    fputs("}\ndesired: desired\nruns:\n", fp);
    const sc_run *run = &sc->runs[0];
    fputs("  - name: ", fp);
    tos_quoted(fp, run->name);
    fputs("\n", fp);
    if (run->n_args) {
        fputs("    args: [", fp);
        for (size_t i = 0; i < run->n_args; i++) {
            if (i) fputs(", ", fp);
            tos_quoted(fp, run->args[i]);
        }
        fputs("]\n", fp);
    }
    fputs("    expect:\n      by-strategy:\n", fp);
    tos_expect(fp, tos_strategies[0], runs[0]);
    tos_expect(fp, tos_strategies[1], runs[1]);
}

/* The scenario's name: OUT's file name without .yaml/.yml when it is a
 * plain word (a-z, 0-9, '-', '_', '.'), else the recorded scenario's. */
static char *tos_name(const char *out, const char *fallback)
{
    const char *base = strrchr(out, '/');
    base = base ? base + 1 : out;
    size_t n = strlen(base);
    if (n > 5 && strcmp(base + n - 5, ".yaml") == 0)
        n -= 5;
    else if (n > 4 && strcmp(base + n - 4, ".yml") == 0)
        n -= 4;
    bool ok = n > 0 && n <= 63;
    for (size_t i = 0; ok && i < n; i++)
        ok = (base[i] >= 'a' && base[i] <= 'z') || (base[i] >= '0' && base[i] <= '9') ||
             base[i] == '-' || base[i] == '_' || base[i] == '.';
    return ok ? rs_xasprintf("%.*s", (int)n, base) : rs_xstrdup(fallback);
}

/* ---- proving it ---- */

/* Loads the written file and runs it under both strategies; RS_OK when
 * every run passed, else *e says the first failure. */
static rs_code tos_prove(const char *path, rs_err *e)
{
    sc_scenario *sc = NULL;
    if (sc_load(path, &sc, e) != RS_OK) return e->code;
    const char *names[] = {"lazy", "eager"};
    rs_code rc = RS_OK;
    for (size_t i = 0; i < RS_ARRAY_LEN(names) && rc == RS_OK; i++) {
        cJSON *runs = NULL;
        if (!sim_scenario_run(sc, rs_strategy_find(names[i]), names[i], cli_sim_run, &runs)) {
            const cJSON *f = cJSON_GetArrayItem(
                cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(runs, 0), "failures"), 0);
            rc = rs_fail(e, RS_FAILED, "the written scenario does not pass under %s: %s", names[i],
                         cJSON_GetStringValue(f) ? f->valuestring : "(no reason given)");
        }
        cJSON_Delete(runs);
    }
    sc_free(sc);
    return rc;
}

/* OUT is never written over a file nor through a symlink (the house rule
 * of run --record, --record-runtime-proof and sweep --emit-scenario):
 * refused before the cassette is read (a usage error, 64,
 * wins over a bad cassette's 65: DESIGN §7), and again by the exclusive
 * open should something appear meanwhile. */
static int tos_taken(const char *out_path)
{
    char *msg = rs_xasprintf("--to-scenario %s: something is already there; a scenario is never "
                             "written over a file nor through a symbolic link",
                             out_path);
    replay_say(stderr, "reassert replay: ", msg);
    free(msg);
    return RS_USAGE;
}

static FILE *tos_create(const char *out_path, int *code)
{
    int fd = open(out_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (fp) return fp;
    if (fd < 0 && (errno == EEXIST || errno == ELOOP)) {
        *code = tos_taken(out_path);
        return NULL;
    }
    char *msg = rs_xasprintf("cannot write %s: %s", out_path, strerror(errno));
    replay_say(stderr, "reassert replay: ", msg);
    free(msg);
    if (fd >= 0) {
        close(fd);
        unlink(out_path);
    }
    *code = RS_USAGE;
    return NULL;
}

/* What the written scenario could not keep, on stderr as well as in its
 * header: a person reads the command's output, not always the file. */
static void tos_say_warnings(const rec_tape *t, cJSON *const runs[2], const cJSON *warnings)
{
    for (size_t i = 0; i < 2; i++) {
        char *warn = tos_exit_warning(t, runs, i);
        if (warn) cli_say(stderr, "warning", warn);
        free(warn);
    }
    const cJSON *w;
    cJSON_ArrayForEach(w, warnings)
    {
        cli_say(stderr, "warning", w->valuestring);
    }
}

int replay_to_scenario_free(const char *out_path)
{
    struct stat st;
    return lstat(out_path, &st) == 0 ? tos_taken(out_path) : RS_OK;
}

int replay_to_scenario(const rec_tape *t, const char *out_path)
{
    rs_err e;
    rs_err_clear(&e);
    sc_scenario *sc = NULL;
    char *rel = tos_relative(t->path, out_path, &e);
    if (!rel) {
        replay_say(stderr, "reassert replay: ", e.msg);
        return RS_USAGE;
    }
    if (sc_cassette_scenario(t->path, &sc, &e) != RS_OK) {
        replay_say(stderr, "reassert replay: cannot build a world from the cassette: ", e.msg);
        free(rel);
        return RS_DATAERR;
    }
    cJSON *runs[2] = {replay_reseed_run(sc, rs_strategy_find("lazy")),
                      replay_reseed_run(sc, rs_strategy_find("eager"))};
    cJSON *warnings = replay_reseed_warnings(sc, &e);
    int code = warnings ? RS_OK : RS_DATAERR;
    if (!warnings)
        replay_say(stderr, "reassert replay: cannot build a world from the cassette: ", e.msg);
    for (size_t i = 0; i < 2 && code == RS_OK; i++)
        if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(runs[i], "exit"))) {
            replay_say(stderr, "reassert replay: the reseeded run could not be made under ",
                       i ? "eager" : "lazy");
            code = RS_FAILED;
        }
    FILE *fp = code == RS_OK ? tos_create(out_path, &code) : NULL;
    if (fp) {
        char *name = tos_name(out_path, sc->name);
        tos_write(fp, t, sc, rel, runs, warnings, name);
        free(name);
        bool ok = fclose(fp) == 0;
        if (!ok || tos_prove(out_path, &e) != RS_OK) {
            replay_say(stderr, "reassert replay: ", ok ? e.msg : "writing the scenario failed");
            unlink(out_path);
            code = RS_FAILED;
        } else {
            tos_say_warnings(t, runs, warnings);
            replay_say(stdout, "wrote ", out_path);
        }
    }
    cJSON_Delete(runs[0]);
    cJSON_Delete(runs[1]);
    cJSON_Delete(warnings);
    sc_free(sc);
    free(rel);
    return code;
}
