/*
 * runner_core.c — one execution of the core against a world file: the
 * `reassert run --transport sim:FILE.db` path, and what the scenario runner's
 * forked child does for each run.
 */
#include "core/cred/cred.h"
#include "core/txn.h"
#include "sim/runner/config_file.h"
#include "sim/runner/runner.h"
#include "sim/world/world.h"

#include <stdlib.h>
#include <string.h>

static void print_json_result(FILE *out, const rs_result *res, const rs_options *opt,
                              const rs_out *o, const cJSON *delta)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "exit", res->exit);
    cJSON_AddStringToObject(doc, "outcome", res->outcome);
    cJSON_AddStringToObject(doc, "strategy", opt->strategy->name);
    cJSON_AddBoolToObject(doc, "fence_taken", res->fence_taken);
    cJSON_AddItemToObject(doc, "counters",
                          delta ? cJSON_Duplicate(delta, 1) : cJSON_CreateObject());
    cJSON_AddItemToObject(doc, "errors", cJSON_Duplicate(o->errors, 1));
    cJSON_AddItemToObject(doc, "warnings", cJSON_Duplicate(o->warnings, 1));
    char *s = cJSON_PrintUnformatted(doc);
    fprintf(out, "%s\n", s);
    free(s);
    cJSON_Delete(doc);
}

static void write_unfired(rs_transport *t, const char *path)
{
    if (!path) return;
    size_t n = 0;
    char **v = sim_transport_unfired(t, &n);
    FILE *f = fopen(path, "w");
    if (f) {
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%s\n", v[i]);
        fclose(f);
    }
    sim_strings_free(v, n);
}

int sim_run_core(const char *db_path, const char *run_name, const sc_run *run,
                 const rs_run_args *args, const rs_strategy *fallback, const char *desired_name,
                 FILE *out, const char *unfired_path)
{
    rs_err e;
    rs_err_clear(&e);
    sim_world *w = NULL;
    if (sim_world_open(db_path, &w, &e) != RS_OK) {
        fprintf(out, "::error::%s\n", e.msg);
        return e.code;
    }
    rs_config cfg;
    memset(&cfg, 0, sizeof cfg); /* sim_world_config fills it */
    char *text = NULL, *ciphertext = NULL;
    int code = RS_OK;
    if (sim_world_config(w, &cfg, &e) != RS_OK ||
        (args->config_path && config_file_load(args->config_path, &cfg, &e) != RS_OK) ||
        sim_world_credential(w, desired_name, &text, &ciphertext, &e) != RS_OK) {
        fprintf(out, "::error::%s\n", e.msg);
        code = e.code;
    } else {
        rs_options opt = args->opt;
        opt.strategy = args->strategy_name ? rs_strategy_find(args->strategy_name)
                       : fallback          ? fallback
                                           : rs_strategy_default();
        char ref[128];
        snprintf(ref, sizeof ref, "sim.%s", run_name);
        opt.run_ref = ref;
        rs_desired d = {.dockerconfigjson = text, .len = strlen(text), .ciphertext = ciphertext};
        rs_transport *t = sim_transport_open(w, run_name, run);
        cJSON *before = sim_counters_snapshot(w);
        rs_out o;
        out_init(&o, out, args->json_output);
        rs_result res;
        txn_run(t, &cfg, &opt, &d, &o, &res);
        if (args->json_output) {
            cJSON *after = sim_counters_snapshot(w);
            cJSON *delta = sim_counters_delta(before, after);
            print_json_result(out, &res, &opt, &o, delta);
            cJSON_Delete(after);
            cJSON_Delete(delta);
        }
        write_unfired(t, unfired_path);
        out_free(&o);
        cJSON_Delete(before);
        if (t->close) t->close(t);
        code = res.exit;
    }
    if (text) {
        memset(text, 0, strlen(text));
        free(text);
    }
    free(ciphertext);
    rs_config_free(&cfg);
    sim_world_close(w);
    return code;
}
