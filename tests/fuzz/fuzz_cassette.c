/*
 * fuzz_cassette.c — the cassette reader (recorder/rec_tape.c,
 * rec_tape_load) and what strict replay derives from a loaded cassette
 * (rec_replay_inputs, every answer turned back into synthetic values) on
 * arbitrary bytes.
 *
 * fuzz-seeds: none
 *
 * Properties beyond "no crash, leak, sanitizer report or hang": a load
 * either succeeds or fails with RS_DATAERR and a message that starts with
 * "cassette <file>: "; a loaded cassette's rows are in seq order, each with
 * an operation, its request a JSON object and its response JSON; the replay
 * inputs either load or fail with RS_DATAERR naming the file.
 */
#include "core/config.h"
#include "recorder/rec_cassette.h"
#include "recorder/rec_redact.h"
#include "recorder/rec_replay.h"
#include "tests/fuzz/fuzz_support.h"

static void fuzz_sidecars_remove(const char *path)
{
    char p[4200];
    snprintf(p, sizeof p, "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", path);
    unlink(p);
}

static void fuzz_replay_inputs(const rec_tape *t)
{
    rec_replay *rp = rec_replay_new(t);
    rs_config cfg;
    rs_options opt;
    const char *desired = NULL, *ciphertext = NULL;
    rs_err e = {0};
    rs_code c = rec_replay_inputs(rp, &cfg, &opt, &desired, &ciphertext, &e);
    /* rec_tape_load checked meta whole (rec_meta_check). */
    FUZZ_CHECK(c == RS_OK, "replay inputs of a loaded cassette: code %d: %s", (int)c, e.msg);
    rs_config_free(&cfg);
    rec_replay_free(rp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_file(data, size);
    rec_tape *t = NULL;
    rs_err e = {0};
    rs_code c = rec_tape_load(path, &t, &e);
    fuzz_sidecars_remove(path);
    if (c != RS_OK) {
        char prefix[4200];
        snprintf(prefix, sizeof prefix, "cassette %s: ", path);
        FUZZ_CHECK(c == RS_DATAERR, "code %d: %s", (int)c, e.msg);
        FUZZ_CHECK(strncmp(e.msg, prefix, strlen(prefix)) == 0, "error without the file: %s",
                   e.msg);
        return 0;
    }
    rec_redactor *r = rec_redactor_new();
    for (size_t i = 0; i < t->n_rows; i++) {
        const rec_row *row = &t->rows[i];
        FUZZ_CHECK(row->op != NULL, "row %zu without an operation", i);
        FUZZ_CHECK(row->seq == (int64_t)i + 1, "row %zu loaded with seq %lld", i,
                   (long long)row->seq);
        if (row->response) {
            cJSON *body = cJSON_Parse(row->response);
            FUZZ_CHECK(body != NULL, "seq %lld: a response that is not JSON was loaded",
                       (long long)row->seq);
            rec_unredact_json(r, body);
            cJSON_Delete(body);
        }
    }
    rec_redactor_free(r);
    fuzz_replay_inputs(t);
    rec_tape_free(t);
    return 0;
}
