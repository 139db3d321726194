/*
 * cmd_replay.c — `reassert replay CASSETTE --list [--op GLOB]`, `[--strict]
 * [--strategy S] [--json]` (DESIGN.md §7, §8; strict is the default mode),
 * and the parsing of `--reseed [--strategy S]
 * [--json]` (cmd_replay_reseed.c) and `--to-scenario OUT.yaml`
 * (cmd_replay_scenario.c).
 *
 * Every text a cassette holds came from a cluster: it is printed through
 * out_escape, never as a workflow command (DESIGN.md §7.1). A cassette that
 * cannot be read is exit 65 with one sentence naming the file (and seq).
 */
#include "cli/cli.h"
#include "cli/cli_options.h"
#include "cli/cli_replay.h"

#include "core/transport/transport_count.h"
#include "core/txn.h"
#include "recorder/rec_cassette.h"
#include "recorder/rec_replay.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct replay_args {
    const char *cassette, *op_glob, *strategy, *to_scenario;
    bool list, strict, reseed, json;
    char *op_match; /* --op normalised to "<verb glob> <target glob>" */
} replay_args;

static int replay_usage(const char *msg, const char *arg)
{
    char *text = out_escape(arg ? arg : "", false); /* argv: the user's text */
    fprintf(stderr, "reassert replay: %s%s%s\n%s", msg, arg ? " " : "", text, cli_usage_replay);
    free(text);
    return RS_USAGE;
}

/* Whether a glob is one fnmatch reads as written: every '[' that opens a
 * bracket expression closes it (an unclosed one is matched as a literal
 * '[', so "[" would list nothing and read as "no such call"). */
static bool replay_glob_ok(const char *g)
{
    for (const char *p = g; *p; p++) {
        if (*p == '\\') {
            if (!*++p) return false; /* a trailing backslash escapes nothing */
            continue;
        }
        if (*p != '[') continue;
        const char *q = p + 1;
        if (*q == '!' || *q == '^') q++;
        if (*q == ']') q++; /* a leading ']' is a member */
        while (*q && *q != ']')
            q++;
        if (!*q) return false;
        p = q;
    }
    return true;
}

/* Whether verb_glob matches an operation --list can show: a §5 verb or a
 * clock, entropy or pid row. */
static bool replay_verb_matches_any(const char *verb_glob)
{
    static const char *const clock_ops[] = {"clock.now", "clock.sleep", "entropy", "pid"};
    for (int op = 0; op < RS_OP_COUNT; op++)
        if (fnmatch(verb_glob, rs_op_name((rs_op)op), 0) == 0) return true;
    for (size_t i = 0; i < RS_ARRAY_LEN(clock_ops); i++)
        if (fnmatch(verb_glob, clock_ops[i], 0) == 0) return true;
    return false;
}

/* --op "<verb glob> [<target glob>]", the form a scenario's faults and
 * during: take (kube.get Secret*): normalised to one "<verb> <target>" glob
 * matched against "<op> <target>" (the target defaults to "*"). A glob
 * that could list nothing for a reason other than the cassette — an
 * unclosed '[', a second space, a verb no operation has — is a usage error
 * saying which, never an empty list. */
static int replay_op_glob(replay_args *a)
{
    const char *g = a->op_glob, *sp = strchr(g, ' ');
    size_t vlen = sp ? (size_t)(sp - g) : strlen(g);
    const char *target = sp ? sp + 1 : "*";
    char *verb = rs_xmalloc(vlen + 1);
    memcpy(verb, g, vlen);
    verb[vlen] = '\0';
    int code = RS_OK;
    if (!vlen || !*target || strpbrk(target, " \t\r\n") || strpbrk(verb, "\t\r\n"))
        code = replay_usage("--op takes '<operation glob> [<target glob>]' (one space):", g);
    else if (!replay_glob_ok(verb) || !replay_glob_ok(target))
        code = replay_usage("--op has an unclosed '[' (or a trailing '\\'):", g);
    else if (!replay_verb_matches_any(verb))
        code = replay_usage("--op matches no operation (kube.*, openbao.*, talos.*, "
                            "registry.*, run.liveness, clock.*, entropy, pid):",
                            g);
    if (code == RS_OK) a->op_match = rs_xasprintf("%s %s", verb, target);
    free(verb);
    return code;
}

static int replay_parse(int argc, char **argv, replay_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        if (strcmp(s, "--list") == 0) {
            a->list = true;
        } else if (strcmp(s, "--strict") == 0) {
            a->strict = true;
        } else if (strcmp(s, "--json") == 0) {
            a->json = true;
        } else if (strcmp(s, "--op") == 0) {
            if (cli_no_value(argc, argv, i)) return replay_usage("--op needs a value", NULL);
            a->op_glob = argv[++i];
        } else if (strcmp(s, "--reseed") == 0) {
            a->reseed = true;
        } else if (strcmp(s, "--strategy") == 0) {
            if (cli_no_value(argc, argv, i)) return replay_usage("--strategy needs a value", NULL);
            a->strategy = argv[++i];
        } else if (strcmp(s, "--to-scenario") == 0) {
            if (cli_no_value(argc, argv, i))
                return replay_usage("--to-scenario needs a value", NULL);
            a->to_scenario = argv[++i];
        } else if (s[0] == '-') {
            cli_unknown_arg_say("replay", s);
            return RS_USAGE;
        } else if (a->cassette) {
            return replay_usage("one cassette at a time; also given:", s);
        } else {
            a->cassette = s;
        }
    }
    if (!a->cassette) return replay_usage("no cassette given", NULL);
    int modes = (int)a->list + (int)a->strict + (int)a->reseed + (int)(a->to_scenario != NULL);
    if (modes > 1)
        return replay_usage("give at most one of --list, --strict, --reseed and --to-scenario",
                            NULL);
    /* No mode is strict replay (DESIGN §7 synopsis): the
     * check §8 makes of a recording — does today's core make the same
     * calls on that input — and the one mode that changes nothing. */
    if (modes == 0) a->strict = true;
    if (a->op_glob && !a->list) return replay_usage("--op filters --list", NULL);
    if (a->json && !a->strict && !a->reseed)
        return replay_usage("--json goes with --strict or --reseed", NULL);
    if (a->strategy && !a->strict && !a->reseed)
        return replay_usage("--strategy goes with --strict or --reseed", NULL);
    if (a->strategy && !rs_strategy_find(a->strategy))
        return replay_usage("--strategy names no strategy:", a->strategy);
    /* Last: the one check that allocates (a->op_match, freed by the caller). */
    return a->op_glob ? replay_op_glob(a) : RS_OK;
}

void replay_say(FILE *fp, const char *prefix, const char *text)
{
    char *t = out_escape(text ? text : "", false);
    fprintf(fp, "%s%s\n", prefix, t);
    free(t);
}

/* ---- --list ---- */

/* Each call's time since the run's start (meta vt_start; the first row's
 * when absent): a live run's clock is the wall clock, whose epoch seconds
 * say nothing about when in the run a call came. */
static int replay_list(const rec_tape *t, const char *glob)
{
    const char *vt = rec_tape_meta(t, "vt_start");
    int64_t start = vt ? strtoll(vt, NULL, 10) : t->n_rows ? t->rows[0].vt_ms : 0;
    printf("%-6s %14s  %-18s %-50s %s\n", "seq", "since start", "op", "target", "status");
    for (size_t i = 0; i < t->n_rows; i++) {
        const rec_row *r = &t->rows[i];
        if (glob) {
            char *line = rs_xasprintf("%s %s", r->op, r->target ? r->target : "");
            bool hit = fnmatch(glob, line, 0) == 0;
            free(line);
            if (!hit) continue;
        }
        char *target = out_escape(r->target ? r->target : "", false);
        char *op = out_escape(r->op, false);
        int64_t since = r->vt_ms - start;
        int64_t mag = since < 0 ? -since : since;
        char when[40];
        snprintf(when, sizeof when, "%c%" PRId64 ".%03d s", since < 0 ? '-' : '+', mag / 1000,
                 (int)(mag % 1000));
        printf("%-6" PRId64 " %14s  %-18s %-50s %d", r->seq, when, op, target, r->status);
        if (r->error) {
            char *err = out_escape(r->error, false);
            printf("  %s", err);
            free(err);
        }
        putchar('\n');
        free(target);
        free(op);
    }
    return fflush(stdout) == 0 ? RS_OK : RS_FAILED;
}

/* ---- --strict ---- */

/* The last seq a cassette holds (0 for none). */
static int64_t replay_last_seq(const rec_tape *t)
{
    return t->n_rows ? t->rows[t->n_rows - 1].seq : 0;
}

/* How the recording ends: with its end record (meta exit: the run
 * finished, or the runner saw its crash fault end it), or without one — a
 * run killed before it could write one, or a file copied before its end. */
static bool replay_has_end(const rec_tape *t)
{
    return rec_tape_meta(t, "exit") != NULL;
}

/* A run its scenario's crash fault ended: exit 137 and no counters. */
static bool replay_crash_end(const rec_tape *t)
{
    const char *x = rec_tape_meta(t, "exit");
    return x && strcmp(x, "137") == 0 && !t->counters;
}

/* Why the replayed run stopped short of the recording: the last recorded
 * call it made, its exit and its first error (NULL for none). */
typedef struct replay_end {
    int exit_code;
    const char *error;
} replay_end;

static void replay_print_json(const rec_tape *t, rec_replay *rp, cJSON *replayed,
                              const replay_end *end)
{
    int exit_code = end->exit_code;
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddItemToObject(doc, "recorded",
                          t->counters ? cJSON_Duplicate(t->counters, 1) : cJSON_CreateNull());
    cJSON_AddItemToObject(doc, "replayed", cJSON_Duplicate(replayed, 1));
    int64_t at = rec_replay_diverged_at(rp);
    if (at >= 0) {
        cJSON_AddNumberToObject(doc, "diverged_at", (double)at);
        cJSON *d = cJSON_AddObjectToObject(doc, "divergence");
        cJSON_AddStringToObject(d, "recorded", rec_replay_recorded(rp));
        cJSON_AddStringToObject(d, "replayed", rec_replay_replayed(rp));
        /* When the replayed run ended with calls left: after which call,
         * and its first error (its exit is exit.replayed). */
        if (rec_replay_run_ended(rp)) {
            cJSON_AddNumberToObject(d, "ended_after", (double)rec_replay_last_matched_seq(rp));
            cJSON_AddItemToObject(d, "error",
                                  end->error ? cJSON_CreateString(end->error) : cJSON_CreateNull());
        }
    } else {
        cJSON_AddNullToObject(doc, "diverged_at");
    }
    /* Extensions of the DESIGN §8 document: where a recording without its
     * end record stops (null when it has one), how many recorded rows the
     * replay made, and the recorded and the replayed exit. */
    if (replay_has_end(t))
        cJSON_AddNullToObject(doc, "ended_at");
    else
        cJSON_AddNumberToObject(doc, "ended_at", (double)replay_last_seq(t));
    cJSON_AddNumberToObject(doc, "matched", (double)rec_replay_matched(rp));
    cJSON *ex = cJSON_AddObjectToObject(doc, "exit");
    const char *re = rec_tape_meta(t, "exit");
    cJSON_AddItemToObject(
        ex, "recorded", re ? cJSON_CreateNumber((double)strtol(re, NULL, 10)) : cJSON_CreateNull());
    cJSON_AddNumberToObject(ex, "replayed", exit_code);
    char *s = cJSON_PrintUnformatted(doc);
    printf("%s\n", s);
    free(s);
    cJSON_Delete(doc);
}

/* A verdict's error line: a workflow command in a GitHub Actions step,
 * "error: ..." elsewhere (cli_say), escaped either way: the path is the
 * user's text. */
static void replay_error(FILE *fp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void replay_error(FILE *fp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = rs_xvasprintf(fmt, ap);
    va_end(ap);
    cli_say(fp, "error", msg);
    free(msg);
}

/* The verdict on a replay that made every recorded call: 0 only when the
 * recording is whole (its end record), its counters came out again and the
 * replayed run exited as the recorded one did (DESIGN §8: the exit is part
 * of what a recording proves). */
static int replay_verdict_whole(const rec_tape *t, rec_replay *rp, cJSON *replayed, int exit_code,
                                bool json, FILE *fp, const char *note)
{
    if (!replay_has_end(t)) {
        /* Killed before its end record, or copied before the end: what came
         * after seq N is not in the file, so the replay proves nothing of
         * it — never a success (issue 28). */
        replay_error(fp,
                     "strict replay of %s: recording ended at seq %" PRId64
                     " without its end record (the run was killed there, or the file was copied "
                     "before the run ended); the replay made each of its %zu recorded calls, and "
                     "what the run did after seq %" PRId64 " is not in the cassette",
                     t->path, replay_last_seq(t), rec_replay_matched(rp), replay_last_seq(t));
        if (note) replay_say(fp, "  ", note);
        return RS_FAILED;
    }
    if (replay_crash_end(t)) {
        if (json) return RS_OK;
        fprintf(fp,
                "strict replay of %s: %zu calls, each the recorded one; the recorded run was "
                "ended by a crash fault after seq %" PRId64 " (exit 137): no counters to "
                "compare\n",
                t->path, rec_replay_matched(rp), replay_last_seq(t));
        if (note) replay_say(fp, "  ", note);
        return RS_OK;
    }
    if (!t->counters || !cJSON_Compare(t->counters, replayed, true)) {
        char *a = t->counters ? cJSON_PrintUnformatted(t->counters) : rs_xstrdup("(none)");
        char *b = cJSON_PrintUnformatted(replayed);
        replay_error(fp, "strict replay of %s made every recorded call, but the counters differ",
                     t->path);
        if (note) replay_say(fp, "  ", note);
        replay_say(fp, "  recorded: ", a);
        replay_say(fp, "  replayed: ", b);
        free(a);
        free(b);
        return RS_FAILED;
    }
    /* rec_meta_check has read meta exit as an integer in 0..255. */
    long recorded_exit = strtol(rec_tape_meta(t, "exit"), NULL, 10);
    if (recorded_exit != exit_code) {
        replay_error(fp,
                     "strict replay of %s made every recorded call with equal counters, but "
                     "exited %d where the recorded run exited %ld",
                     t->path, exit_code, recorded_exit);
        if (note) replay_say(fp, "  ", note);
        return RS_FAILED;
    }
    if (json) return RS_OK;
    fprintf(fp,
            "strict replay of %s: %zu calls, each the recorded one; counters equal; exit %d as "
            "recorded\n",
            t->path, rec_replay_matched(rp), exit_code);
    if (note) replay_say(fp, "  ", note);
    return RS_OK;
}

/* note: how the replay differs from the recording by request (another
 * strategy), said with the verdict; NULL for none. With --json the
 * document is stdout's and a failure's sentences go to stderr. */
static int replay_verdict(const rec_tape *t, rec_replay *rp, cJSON *replayed, const replay_end *end,
                          bool json, const char *note)
{
    int64_t at = rec_replay_diverged_at(rp);
    FILE *fp = json ? stderr : stdout;
    if (json) replay_print_json(t, rp, replayed, end);
    if (at >= 0) {
        replay_error(fp, "strict replay of %s diverged at seq %" PRId64, t->path, at);
        if (note) replay_say(fp, "  ", note);
        replay_say(fp, "  recorded: ", rec_replay_recorded(rp));
        replay_say(fp, "  replayed: ", rec_replay_replayed(rp));
        if (rec_replay_run_ended(rp)) {
            /* The call that made the run stop is the last one it made as
             * recorded — an edited answer is found there, not at seq N+1. */
            int64_t last = rec_replay_last_matched_seq(rp);
            if (last > 0)
                fprintf(fp, "  the replayed run ended after seq %" PRId64 " with exit %d", last,
                        end->exit_code);
            else
                fprintf(fp, "  the replayed run ended before its first call with exit %d",
                        end->exit_code);
            replay_say(fp, end->error ? ": " : "", end->error ? end->error : "");
        }
        return RS_FAILED;
    }
    return replay_verdict_whole(t, rp, replayed, end->exit_code, json, fp, note);
}

/* --strict --strategy S: today's core under S against the recording. The
 * recorded strategy replays as recorded; another one is the question "would
 * S have made the same calls here?", answered by the first call it changes
 * (exit 1, both sides shown) — never by pretending the recording was S. */
static int replay_strict(const rec_tape *t, const char *strategy_name, bool json)
{
    rec_replay *rp = rec_replay_new(t);
    rs_config cfg;
    rs_options opt;
    const char *desired = NULL, *ciphertext = NULL;
    rs_err e;
    rs_err_clear(&e);
    int code;
    char *note = NULL;
    if (rec_replay_inputs(rp, &cfg, &opt, &desired, &ciphertext, &e) != RS_OK) {
        replay_say(stderr, "reassert replay: ", e.msg);
        code = e.code;
    } else {
        const rs_strategy *asked = strategy_name ? rs_strategy_find(strategy_name) : NULL;
        if (asked && asked != opt.strategy) {
            note = rs_xasprintf("(recorded under %s, replayed under %s by --strategy)",
                                opt.strategy->name, asked->name);
            opt.strategy = asked;
        }
        rs_transport *count = tp_count_open(rec_replay_root(rp), &cfg);
        rs_transport *check = rec_replay_check(rp, count);
        /* The core's own messages are the recorded run's; the verdict is
         * what this command prints. */
        FILE *sink = fopen("/dev/null", "w");
        rs_out o;
        out_init(&o, cli_out_file(sink ? sink : stderr), false);
        rs_desired d = {
            .dockerconfigjson = desired, .len = strlen(desired), .ciphertext = ciphertext};
        rs_result res = {.exit = RS_FAILED, .outcome = "failed"};
        txn_run(check, &cfg, &opt, &d, &o, &res);
        rec_replay_finish(rp);
        cJSON *replayed = tp_count_counters(count);
        replay_end end = {.exit_code = res.exit,
                          .error = cJSON_GetStringValue(cJSON_GetArrayItem(o.errors, 0))};
        code = replay_verdict(t, rp, replayed, &end, json, note);
        cJSON_Delete(replayed);
        rs_result_free(&res);
        out_free(&o);
        if (sink) fclose(sink);
        count->close(count);
    }
    free(note);
    rs_config_free(&cfg);
    rec_replay_free(rp);
    return code;
}

/* ---- the cassette's inputs, before any replay ---- */

/* meta config, options and args obey the rules `--config` and `reassert
 * run`'s own arguments obey (the same validators, DESIGN.md §3, §7): a
 * cassette the core would refuse as input is never replayed (65). */
static rs_code replay_check_meta(const rec_tape *t, rs_err *e)
{
    rec_replay *rp = rec_replay_new(t);
    rs_config cfg;
    rs_options opt;
    const char *desired = NULL, *ciphertext = NULL;
    rs_code c = rec_replay_inputs(rp, &cfg, &opt, &desired, &ciphertext, e);
    rs_config_free(&cfg);
    rec_replay_free(rp);
    if (c != RS_OK) return c;
    const char *text = rec_tape_meta(t, "args");
    if (!text) return RS_OK; /* a live recording of an older build keeps none */
    cJSON *arr = cJSON_Parse(text);
    int n = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : -1;
    char **argv = rs_xcalloc((size_t)(n > 0 ? n : 0) + 1, sizeof *argv);
    for (int i = 0; i < n && c == RS_OK; i++) {
        const cJSON *it = cJSON_GetArrayItem(arr, i);
        if (!cJSON_IsString(it))
            c = rs_fail(e, RS_DATAERR, "cassette %s: meta args item %d is not a string", t->path,
                        i);
        else
            argv[i] = it->valuestring;
    }
    if (n < 0) c = rs_fail(e, RS_DATAERR, "cassette %s: meta args is not a JSON list", t->path);
    rs_run_args a;
    memset(&a, 0, sizeof a);
    rs_err pe;
    rs_err_clear(&pe);
    if (c == RS_OK && n > 0 && run_args_parse(n, argv, &a, &pe) != RS_OK)
        c = rs_fail(e, RS_DATAERR, "cassette %s: meta args: %s", t->path, pe.msg);
    /* The options a run records are what its arguments asked for. */
    if (c == RS_OK && n > 0 &&
        (a.opt.mode != opt.mode || a.opt.allow_incomplete_fanout != opt.allow_incomplete_fanout ||
         a.opt.require_auth_proof != opt.require_auth_proof))
        c = rs_fail(e, RS_DATAERR,
                    "cassette %s: meta options disagree with meta args (mode, "
                    "allow_incomplete_fanout or require_auth_proof)",
                    t->path);
    free(argv);
    cJSON_Delete(arr);
    return c;
}

/* A cassette of a run refused before its first call (meta refused, written
 * by `run --record`): there is no call to replay, list or seed a world
 * from, so every mode says why the run was refused; --list (the calls: none)
 * exits 0, the others 65 (nothing a replay could run on, as a cassette no
 * world can be built from is). */
static int replay_refused(const rec_tape *t, bool list)
{
    const char *why = rec_tape_meta(t, "refused");
    const char *exit_code = rec_tape_meta(t, "exit");
    char *msg = rs_xasprintf("cassette %s records a run refused before its first call (exit %s), "
                             "so it holds no call to replay:",
                             t->path, exit_code ? exit_code : "?");
    replay_say(stderr, "reassert replay: ", msg);
    free(msg);
    for (const char *line = why; line && *line;) {
        size_t n = strcspn(line, "\n");
        char *one = rs_xasprintf("%.*s", (int)n, line);
        replay_say(stderr, "  ", one);
        free(one);
        line += n + (line[n] == '\n');
    }
    if (!list) return RS_DATAERR;
    return replay_list(t, NULL);
}

int cmd_replay(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        fputs(cli_usage_replay, stdout);
        return RS_OK;
    }
    replay_args a;
    int code = replay_parse(argc, argv, &a);
    if (code == RS_OK && a.to_scenario) code = replay_to_scenario_free(a.to_scenario);
    rec_tape *t = NULL;
    rs_err e;
    rs_err_clear(&e);
    if (code != RS_OK || rec_tape_load(a.cassette, &t, &e) != RS_OK) {
        if (code == RS_OK) {
            replay_say(stderr, "reassert replay: ", e.msg);
            code = e.code;
        }
        free(a.op_match);
        return code;
    }
    if (replay_check_meta(t, &e) != RS_OK) {
        replay_say(stderr, "reassert replay: ", e.msg);
        code = e.code;
    } else if (rec_tape_meta(t, "refused"))
        code = replay_refused(t, a.list);
    else if (a.list)
        code = replay_list(t, a.op_match);
    else if (a.strict)
        code = replay_strict(t, a.strategy, a.json);
    else if (a.reseed)
        code = replay_reseed(t, a.strategy, a.json);
    else
        code = replay_to_scenario(t, a.to_scenario);
    rec_tape_free(t);
    free(a.op_match);
    return code;
}
