/*
 * cli_run.c — the run path: options -> root -> desired credential ->
 * `--config` -> runtime proof in -> txn_run -> output sink -> result
 * document -> runtime proof out.
 *
 * One function serves `reassert run` and every run of `reassert sim` (whose
 * forked child calls cli_sim_run), so a scenario proves the path production
 * takes, not a copy of it. The only door into sim/ is the sim root
 * (sim/runner/runner_session.h) behind `--transport sim:FILE.db`; a live
 * root will sit beside it with the same four questions answered. The
 * counters of `--output json` come from the counting shim, so they exist
 * with any root.
 */
#include "cli/cli.h"

#include "cli/cli_live.h"

#include "core/cred/cred.h"
#include "core/cred/cred_redact.h"
#include "core/live/live_config.h"
#include "core/live/live_root.h"
#include "core/transport/transport_count.h"
#include "core/txn.h"
#include "recorder/rec_cassette.h"
#include "recorder/recorder.h"
#include "reports/step_outputs.h"
#include "reports/summary.h"
#include "sim/runner/runner_session.h"
#include "sim/scenario/scenario.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static cJSON *run_result_doc(const rs_result *res, const rs_options *opt, const rs_out *o,
                             cJSON *counters);
static void run_summary(const cJSON *doc, bool wall_clock);
static void run_step_outputs(const cJSON *doc);

/* The result document of a run that failed before txn_run: exit code, the
 * errors o collected. */
static cJSON *run_failed_doc(const char *strategy_name, const rs_out *o, int code)
{
    const rs_strategy *st = strategy_name ? rs_strategy_find(strategy_name) : NULL;
    rs_result res = {.exit = code, .outcome = "failed"};
    rs_options opt = {.strategy = st ? st : rs_strategy_default()};
    return run_result_doc(&res, &opt, o, NULL);
}

/* A run that ends before txn_run: every problem one error (text: one error
 * line each; JSON: the one document, each in "errors"), exit the worst
 * code. top: `reassert run` itself (its text for a person or a CI log, the
 * step summary and outputs), not a scenario run's child (whose output the
 * harness reads). */
static int run_fail_list(FILE *out, bool json, const char *strategy_name, const cli_problems *p,
                         const char *const *said, bool top)
{
    rs_out o;
    out_init(&o, top ? cli_out_stream(out) : cli_out_file(out), json);
    for (size_t i = 0; said && said[i]; i++)
        out_warning_said(&o, "%s", said[i]);
    for (size_t i = 0; i < p->n; i++)
        out_error(&o, "%s", p->item[i].msg);
    if (p->dropped) out_error(&o, "... and %zu more problems with the run's inputs", p->dropped);
    if (json || top) {
        cJSON *doc = run_failed_doc(strategy_name, &o, p->worst);
        if (json) {
            char *s = cJSON_PrintUnformatted(doc);
            fprintf(out, "%s\n", s);
            fflush(out);
            free(s);
        }
        if (top) run_summary(doc, false); /* no call was made: no time */
        if (top) run_step_outputs(doc);
        cJSON_Delete(doc);
    }
    out_free(&o);
    return p->worst;
}

static int run_fail(FILE *out, bool json, const char *strategy_name, const rs_err *e, bool top)
{
    cli_problems p = {.n = 0};
    cli_problem_err(&p, e);
    return run_fail_list(out, json, strategy_name, &p, NULL, top);
}

int cli_run_fail(FILE *out, bool json, const char *strategy_name, const rs_err *e)
{
    return run_fail(out, json, strategy_name, e, false);
}

/* A scenario's run (sim != NULL) is the sim's to summarise, never its own. */
static int run_fail_early(const rs_run_args *args, const sim_run_req *sim, FILE *out,
                          const rs_err *e)
{
    return run_fail(out, args->json_output, args->strategy_name, e, sim == NULL);
}

/* The result document of `run --output json` (counters consumed). */
static cJSON *run_result_doc(const rs_result *res, const rs_options *opt, const rs_out *o,
                             cJSON *counters)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "exit", res->exit);
    cJSON_AddStringToObject(doc, "outcome", res->outcome);
    cJSON_AddStringToObject(doc, "strategy", opt->strategy->name);
    cJSON_AddBoolToObject(doc, "fence_taken", res->fence_taken);
    cJSON *aon = cJSON_AddArrayToObject(doc, "annotation_only_nodes");
    for (size_t i = 0; i < res->n_annotation_only; i++)
        cJSON_AddItemToArray(aon, cJSON_CreateString(res->annotation_only_nodes[i]));
    cJSON_AddItemToObject(doc, "counters", counters ? counters : cJSON_CreateObject());
    cJSON_AddItemToObject(doc, "errors", cJSON_Duplicate(o->errors, 1));
    cJSON_AddItemToObject(doc, "warnings", cJSON_Duplicate(o->warnings, 1));
    return doc;
}

/* In a GitHub Actions step (GITHUB_STEP_SUMMARY set), the run's outcome and
 * counters go to the job summary too. The result on stdout is the run's
 * answer; a summary that cannot be written is warned about, never a reason
 * to fail a deploy that did its work. */
static void run_summary(const cJSON *doc, bool wall_clock)
{
    const char *path = getenv("GITHUB_STEP_SUMMARY");
    if (!path || !path[0]) return;
    rs_err e;
    rs_err_clear(&e);
    if (reports_summary_append(path, doc, wall_clock ? SUMMARY_RUN_WALL_CLOCK : SUMMARY_RUN, &e) !=
        RS_OK)
        cli_say(stderr, "warning", e.msg); /* escaped: the path is the environment's text */
}

/* In a GitHub Actions step (GITHUB_OUTPUT set), the run's outcome, fence
 * and counters become step outputs a later step can branch on (issue 30).
 * Like the summary: warned about, never a reason to fail the deploy. */
static void run_step_outputs(const cJSON *doc)
{
    const char *path = getenv("GITHUB_OUTPUT");
    if (!path || !path[0]) return;
    cJSON *outputs = reports_step_outputs_run(doc);
    rs_err e;
    rs_err_clear(&e);
    if (reports_step_outputs_append(path, outputs, &e) != RS_OK) cli_say(stderr, "warning", e.msg);
    cJSON_Delete(outputs);
}

void cli_run_step_outputs_failed(const char *strategy_name, const rs_err *e)
{
    rs_out o;
    out_init(&o, cli_out_file(NULL), true);
    out_error(&o, "%s", e->msg);
    cJSON *doc = run_failed_doc(strategy_name, &o, e->code);
    run_step_outputs(doc);
    cJSON_Delete(doc);
    out_free(&o);
}

/* The proof the core recorded lands on disk only when the whole run
 * succeeded; a write failure fails the run, since the next Reassert would
 * verify fully without it and an operator must know why. */
static void run_proof_out(const rs_options *opt, rs_result *res, rs_out *o)
{
    if (!opt->record_proof_path || res->exit != RS_OK || !res->proof_recorded) return;
    rs_err e;
    rs_err_clear(&e);
    if (cli_proof_write(opt->record_proof_path, res->proof_recorded, &e) != RS_OK) {
        out_error(o, "%s (the run itself succeeded)", e.msg);
        res->exit = RS_FAILED;
        return;
    }
    out_info(o, "runtime proof recorded at %s", opt->record_proof_path);
}

/* A `reassert run`'s arguments as a scenario may give them, for its
 * cassette's meta args (DESIGN §8 r2: --reseed and --to-scenario reuse
 * them). Every flag a scenario refuses (sc_arg_refused: the transport, the
 * sim world's desired name, kubeconfig, context, talosconfig, talosctl,
 * secret and token files, the decrypt and liveness commands, the cassette
 * itself) goes with its value, and so does every file of the recording
 * machine a replay cannot have: --config (its values are meta config) and
 * the runtime-proof paths (meta options keep them). What stays — the mode,
 * --strategy, --output — is never a credential nor a file's content.
 * Pointers into args->argv; caller frees the array; *n its length. */
static char **run_portable_args(const rs_run_args *args, int *n)
{
    static const char *const local_files[] = {"--config", "--record-runtime-proof",
                                              "--reuse-runtime-proof"};
    char **out = rs_xcalloc((size_t)args->argc + 1, sizeof *out);
    *n = 0;
    for (int i = 0; i < args->argc; i++) {
        const char *f = args->argv[i];
        bool drop = sc_arg_refused(f) != NULL;
        for (size_t k = 0; k < RS_ARRAY_LEN(local_files); k++)
            drop = drop || strcmp(f, local_files[k]) == 0;
        bool valued = run_arg_takes_value(f) && i + 1 < args->argc;
        if (!drop) {
            out[(*n)++] = args->argv[i];
            if (valued) out[(*n)++] = args->argv[i + 1];
        }
        if (valued) i++;
    }
    return out;
}

/* Options resolved, the proof read, the transaction run, the proof written,
 * the result printed. */
/* The recorder on top of the stack when --record (or sim --record) asks for
 * it; NULL otherwise, or with *e set when the cassette cannot be made. */
static rs_transport *run_recorder(const rs_run_args *args, const sim_run_req *sim, rs_transport *t,
                                  const rs_config *cfg, const rs_options *opt, const rs_desired *d,
                                  const char *const *known, rs_err *e)
{
    const char *path = sim && sim->record_path ? sim->record_path : args->record;
    if (!path) return NULL;
    /* A scenario's run records its args as the scenario gave them; a
     * `reassert run` (live, or --transport sim:) its portable ones. */
    int argc = 0;
    char **portable = sim ? NULL : run_portable_args(args, &argc);
    rec_run_info info = {.transport =
                             sim || strncmp(args->transport, "sim:", 4) == 0 ? "sim" : "live",
                         .cfg = cfg,
                         .opt = opt,
                         .desired = d,
                         .scenario = sim ? sim->scenario_name : NULL,
                         .run = sim ? sim->run_name : NULL,
                         .argc = sim ? sim->argc : argc,
                         .argv = sim ? sim->argv : portable,
                         .vt_start_ms = tp_count_start_ms(t)};
    rs_transport *rec = rec_shim_open(t, path, &info, known, e);
    free(portable);
    return rec;
}

/* The live root's tokens as they are now: a kubeconfig tokenFile is read
 * again after a rotation (and an exec plugin run again), so the recorder
 * must learn the new token mid-run, not only the first one. */
static size_t run_live_secrets(void *root, const char **out, size_t max)
{
    return live_root_secrets(root, out, max);
}

static void run_recorder_rotating(rs_transport *rec, rs_transport *root)
{
    if (rec && strcmp(root->name, "live") == 0) rec_shim_secret_source(rec, run_live_secrets, root);
}

/* The cassette's counters; a cassette that could not be written fails a
 * run that otherwise succeeded (the incident record is part of the job). */
static void run_recorder_finish(rs_transport *rec, rs_transport *count, rs_result *res, rs_out *o)
{
    int64_t end_ms = tp_count_stop(count);
    cJSON *counters = tp_count_counters(count);
    rs_err e;
    rs_err_clear(&e);
    if (rec_shim_finish(rec, counters, res->exit, end_ms, &e) != RS_OK) {
        out_error(o, "%s (the run itself ended with exit %d)", e.msg, res->exit);
        if (res->exit == RS_OK) res->exit = RS_FAILED;
    }
    cJSON_Delete(counters);
}

/* The credentials a run's output must never show: the desired one and
 * every other the root knows (the sim catalogue; the live bearer tokens). */
static cred_redact *run_filter(const rs_desired *d, const char *const *known)
{
    cred_redact *f = cred_redact_new();
    if (d->dockerconfigjson && d->len)
        cred_redact_add_dockerconfig(f, "desired", d->dockerconfigjson, d->len);
    for (size_t i = 0; known && known[i]; i++)
        cred_redact_add_dockerconfig(f, "secret", known[i], strlen(known[i]));
    return f;
}

/* A scenario run's report for its checker (sim_run_req.result_path): the
 * nodes it decided on annotations alone, which invariant 2 holds to their
 * annotations only (DESIGN §6 r2). Node names only, never a credential. */
static void run_result_for_checker(const sim_run_req *sim, const rs_result *res)
{
    if (!sim || !sim->result_path) return;
    cJSON *doc = cJSON_CreateObject();
    cJSON *aon = cJSON_AddArrayToObject(doc, "annotation_only_nodes");
    for (size_t i = 0; i < res->n_annotation_only; i++)
        cJSON_AddItemToArray(aon, cJSON_CreateString(res->annotation_only_nodes[i]));
    char *text = cJSON_PrintUnformatted(doc);
    FILE *f = fopen(sim->result_path, "w");
    /* Unwritten, the checker holds every node to its Talos auth: stricter. */
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    free(text);
    cJSON_Delete(doc);
}

/* said: warnings already written to stderr (a live run's inputs), kept for
 * the result document and the job summary. */
static int run_txn(const rs_run_args *args, const sim_run_req *sim, rs_transport *root,
                   const rs_config *cfg, const rs_desired *d, const char *run_name,
                   const char *const *known, const char *const *said, FILE *out)
{
    /* The stack, outermost first: core -> (recorder) -> counting -> root;
     * the sim root applies a scenario run's faults inside its own call. */
    rs_transport *t = tp_count_open(root, cfg);
    rs_options opt = args->opt;
    opt.strategy = args->strategy_name    ? rs_strategy_find(args->strategy_name)
                   : sim && sim->strategy ? sim->strategy
                                          : rs_strategy_default();
    char ref[128] = "";
    if (run_name) snprintf(ref, sizeof ref, "sim.%s", run_name);
    /* A live run is named by its CI run (gh<id>.<attempt>), so --fences can
     * ask whether it is still alive; a sim run by its scenario run. */
    opt.run_ref = run_name ? ref : args->run_ref;
    char why[256] = "";
    char *proof_in = NULL;
    bool proof_irregular = false;
    if (opt.reuse_proof_path) {
        proof_in = cli_proof_read(opt.reuse_proof_path, &proof_irregular, why, sizeof why);
        opt.reuse_proof_text = proof_in;
        opt.reuse_proof_error = proof_in ? NULL : why;
    }
    rs_out o;
    out_init(&o, sim ? cli_out_file(out) : cli_out_stream(out), args->json_output);
    /* Cluster text the core prints (a Lease holder, an owner, an error
     * body) may carry a credential: every line and the result document pass
     * this filter (H59; DESIGN §3.1). */
    cred_redact *filter = run_filter(d, known);
    out_set_filter(&o, filter);
    for (size_t i = 0; said && said[i]; i++)
        out_warning_said(&o, "%s", said[i]);
    rs_result res = {.exit = RS_FAILED, .outcome = "failed"};
    rs_err e;
    rs_err_clear(&e);
    /* Refused before the first call: the run would otherwise converge the
     * cluster and only then find it cannot leave its proof behind. */
    rs_transport *rec = NULL;
    if (proof_irregular) {
        /* Bad input, refused before the first call (DESIGN §5.1): a
         * FIFO would have been waited on, a device read without end. */
        rs_fail(&e, RS_DATAERR, "--reuse-runtime-proof %s: %s", opt.reuse_proof_path, why);
        out_error(&o, "%s", e.msg);
        res.exit = e.code;
    } else if (opt.record_proof_path &&
               cli_proof_check_absent(opt.record_proof_path, &e) != RS_OK) {
        out_error(&o, "%s", e.msg);
    } else if (!(rec = run_recorder(args, sim, t, cfg, &opt, d, known, &e)) && e.code != RS_OK) {
        out_error(&o, "%s", e.msg);
        res.exit = e.code;
    } else {
        run_recorder_rotating(rec, root);
        txn_run(rec ? rec : t, cfg, &opt, d, &o, &res);
        run_result_for_checker(sim, &res);
        /* One end for virtual_seconds: the cassette's counters and this
         * run's --output json are then the same document. */
        tp_count_stop(t);
        run_proof_out(&opt, &res, &o);
        if (rec) run_recorder_finish(rec, t, &res, &o);
    }
    if (args->json_output || !sim) {
        cJSON *doc = run_result_doc(&res, &opt, &o, tp_count_counters(t));
        cred_redact_json(filter, doc);
        if (args->json_output) {
            char *s = cJSON_PrintUnformatted(doc);
            fprintf(out, "%s\n", s);
            free(s);
        }
        /* A live run's clock is the wall clock, unless the test-only
         * facade clock stands in for it. */
        if (!sim)
            run_summary(doc, strncmp(args->transport, "sim:", 4) != 0 && !args->test_facade_clock);
        if (!sim) run_step_outputs(doc);
        cJSON_Delete(doc);
    }
    if (fflush(out) != 0 || ferror(out)) {
        /* The result never reached its reader: not a success. */
        fputs("reassert: writing the result to standard output failed\n", stderr);
        if (res.exit == RS_OK) res.exit = RS_FAILED;
    }
    if (rec) rec->close(rec);
    t->close(t);
    out_free(&o);
    cred_redact_free(filter);
    free(proof_in);
    rs_result_free(&res);
    return res.exit;
}

/* The sim root named by --transport sim:FILE.db (or the scenario runner's). */
static int run_sim(const rs_run_args *args, const sim_run_req *sim, FILE *out)
{
    const char *run_name = sim ? sim->run_name : "cli";
    const char *desired = sim ? sim->desired_name : args->desired_name;
    bool inspects = args->opt.mode == RS_MODE_FENCES || args->opt.mode == RS_MODE_RECOVER_FENCES;
    rs_err e;
    rs_err_clear(&e);
    sim_session *root = NULL;
    rs_code rc =
        sim && sim->world
            ? sim_session_open_world(sim->world, run_name, sim->run, sim->unfired_path, &root)
        : sim ? sim_session_open(sim->db_path, run_name, sim->run, sim->unfired_path, &root, &e)
              : sim_session_open(args->transport + 4, run_name, NULL, NULL, &root, &e);
    if (rc != RS_OK) return run_fail_early(args, sim, out, &e);
    rs_config cfg;
    memset(&cfg, 0, sizeof cfg); /* sim_session_config fills it */
    char *text = NULL, *ciphertext = NULL;
    int code;
    if (sim_session_config(root, &cfg, &e) != RS_OK ||
        (args->config_path && live_config_load(args->config_path, &cfg, &e) != RS_OK) ||
        ((desired || !inspects) &&
         sim_session_credential(root, desired ? desired : "", &text, &ciphertext, &e) != RS_OK)) {
        code = run_fail_early(args, sim, out, &e);
    } else {
        /* No desired credential only for --fences / --recover-fences
         * (cmd_run refuses it otherwise): they need none (H27). */
        rs_desired d = {.dockerconfigjson = text ? text : "",
                        .len = text ? strlen(text) : 0,
                        .ciphertext = ciphertext};
        char **known = sim_session_secrets(root);
        code = run_txn(args, sim, sim_session_transport(root), &cfg, &d, run_name,
                       (const char *const *)known, NULL, out);
        sim_session_secrets_free(known);
    }
    cred_text_wipe_free(text); /* the credential leaves memory with the run */
    free(ciphertext);
    rs_config_free(&cfg);
    sim_session_close(root);
    return code;
}

/* The root of a run refused before its first call, under its cassette:
 * the recorder asks it the clock (meta vt_start) and nothing else; any call
 * is refused unsent. */
static int refused_call(rs_transport *t, const rs_req *req, rs_resp *resp)
{
    (void)t;
    (void)req;
    rs_resp_init(resp);
    resp->sent = RS_SENT_NO;
    snprintf(resp->error, sizeof resp->error, "the run was refused before its first call");
    return 0;
}

static int64_t refused_now_ms(rs_transport *t)
{
    (void)t;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* `run --record` of a run refused before its first call still leaves its
 * cassette, holding why (meta refused, one problem per line), its exit
 * and zero counters: the incident record of a deploy that did not start
 * says so instead of being missing. A cassette that cannot be made (its
 * path taken) is among the problems already. */
static void run_record_refusal(const rs_run_args *args, const rs_config *cfg, const cli_problems *p,
                               const char *const *known)
{
    if (!args->record || rec_cassette_taken(args->record)) return;
    rs_transport root = {.version = RS_TRANSPORT_VERSION,
                         .name = "refused",
                         .call = refused_call,
                         .now_ms = refused_now_ms};
    rs_transport *count = tp_count_open(&root, cfg);
    rs_options opt = args->opt;
    opt.strategy =
        args->strategy_name ? rs_strategy_find(args->strategy_name) : rs_strategy_default();
    char *why = rs_xstrdup("");
    for (size_t i = 0; i < p->n; i++) {
        char *w = rs_xasprintf("%s%s%s", why, i ? "\n" : "", p->item[i].msg);
        free(why);
        why = w;
    }
    int argc = 0;
    char **portable = run_portable_args(args, &argc);
    rec_run_info info = {.transport = "live",
                         .cfg = cfg,
                         .opt = &opt,
                         .argc = argc,
                         .argv = portable,
                         .vt_start_ms = tp_count_start_ms(count),
                         .refused = why};
    rs_err e;
    rs_err_clear(&e);
    rs_transport *rec = rec_shim_open(count, args->record, &info, known, &e);
    if (rec) {
        int64_t end_ms = tp_count_stop(count);
        cJSON *counters = tp_count_counters(count);
        rec_shim_finish(rec, counters, p->worst, end_ms, &e);
        cJSON_Delete(counters);
        rec->close(rec);
    }
    count->close(count);
    free(portable);
    free(why);
}

/* The live root: every input the mode uses checked first (cli_preflight.c;
 * every problem reported together, before anything runs), then the
 * credential from the SOPS file, the root, and the network checks that can
 * fail before the first write. */
static int run_live(const rs_run_args *args, FILE *out)
{
    rs_err e;
    rs_err_clear(&e);
    rs_config cfg;
    rs_config_defaults(&cfg);
    cli_live_needs need;
    cli_live_needs_of(args, &need);
    cli_problems p = {.n = 0};
    if (args->config_path && live_config_load(args->config_path, &cfg, &e) != RS_OK)
        cli_problem_err(&p, &e);
    cli_live *live = cli_live_prepare(args, &cfg, &need, &p);
    /* Said at once, on stderr, as kubectl says it: the run may take long. */
    const char *const *said = cli_live_warnings(live);
    for (size_t i = 0; said[i]; i++)
        cli_say(stderr, "warning", said[i]); /* escaped: it quotes a kubeconfig */
    char *text = NULL, *ciphertext = NULL;
    int code = RS_OK;
    if (p.n)
        code = p.worst;
    else if (need.credential && cli_live_credential(args, live, &text, &ciphertext, &e) != RS_OK)
        code = e.code;
    else if (cli_live_start(live, args, &cfg, &e) != RS_OK)
        code = e.code;
    else if (cli_live_secrets_check(live, &cfg, text, &p) != RS_OK)
        code = p.worst;
    else if (live_root_preflight(cli_live_transport(live), need.kube, need.bao, &e) != RS_OK)
        code = e.code;
    if (code != RS_OK) {
        if (!p.n) cli_problem_err(&p, &e);
        const char *known[8] = {NULL};
        cli_live_known(live, known, RS_ARRAY_LEN(known) - 1);
        run_record_refusal(args, &cfg, &p, known);
        code = run_fail_list(out, args->json_output, args->strategy_name, &p, said, true);
    } else {
        rs_desired d = {.dockerconfigjson = text ? text : "",
                        .len = text ? strlen(text) : 0,
                        .ciphertext = ciphertext};
        const char *known[8] = {NULL};
        live_root_secrets(cli_live_transport(live), known, RS_ARRAY_LEN(known) - 1);
        code = run_txn(args, NULL, cli_live_transport(live), &cfg, &d, NULL, known, said, out);
    }
    if (text) cred_text_wipe_free(text);
    free(ciphertext);
    cli_live_close(live);
    rs_config_free(&cfg);
    return code;
}

int cli_run_once(const rs_run_args *args, const sim_run_req *sim, FILE *out)
{
    if (sim || (args->transport && strncmp(args->transport, "sim:", 4) == 0))
        return run_sim(args, sim, out);
    return run_live(args, out);
}

int cli_sim_run(const sim_run_req *req, FILE *out)
{
    rs_run_args args;
    rs_err e;
    rs_err_clear(&e);
    if (run_args_parse(req->argc, req->argv, &args, &e) != RS_OK)
        return cli_run_fail(out, run_args_want_json(req->argc, req->argv), NULL, &e);
    return cli_run_once(&args, req, out);
}
