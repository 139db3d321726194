/*
 * fuzz_config.c — the `--config FILE` reader (core/live/live_config.c,
 * live_config_load) on arbitrary bytes.
 *
 * fuzz-seeds: none
 *
 * Properties beyond "no crash, leak, sanitizer report or hang": a load either
 * succeeds or fails with RS_DATAERR and a message that starts with
 * "<file>:<line>:<col>: "; a failed load leaves the caller's configuration
 * exactly as it was (the reader works on a scratch copy).
 */
#include "core/config.h"
#include "core/live/live_config.h"
#include "tests/fuzz/fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_file(data, size);
    rs_config cfg;
    rs_config_defaults(&cfg);
    char *ns_before = cfg.n_fanout ? strdup(cfg.fanout_namespaces[0]) : NULL;
    size_t n_before = cfg.n_fanout;
    int attempts_before = cfg.sync_attempts;
    rs_err e = {0};
    rs_code c = live_config_load(path, &cfg, &e);
    if (c != RS_OK) {
        FUZZ_CHECK(c == RS_DATAERR, "code %d: %s", (int)c, e.msg);
        size_t n = strlen(path);
        int line = 0, col = 0;
        FUZZ_CHECK(strncmp(e.msg, path, n) == 0 && sscanf(e.msg + n, ":%d:%d:", &line, &col) == 2 &&
                       line >= 1 && col >= 1,
                   "error without file:line:col: %s", e.msg);
        FUZZ_CHECK(cfg.n_fanout == n_before && cfg.sync_attempts == attempts_before &&
                       (!ns_before || strcmp(cfg.fanout_namespaces[0], ns_before) == 0),
                   "a failed load changed the configuration");
    } else {
        FUZZ_CHECK(cfg.n_fanout >= 1 && cfg.sync_attempts >= 1,
                   "a loaded configuration without fan-out namespaces or sync attempts");
    }
    free(ns_before);
    rs_config_free(&cfg);
    return 0;
}
