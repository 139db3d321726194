/*
 * rec_config.h — the resolved rs_config as JSON (a cassette's meta
 * `config`), and back, so a strict replay runs the core with the recorded
 * configuration.
 */
#ifndef REC_CONFIG_H
#define REC_CONFIG_H

#include "core/config.h"

#include <cjson/cJSON.h>

/* Caller frees. */
cJSON *rec_config_json(const rs_config *cfg);
/* cfg from the defaults, then o's values; cfg->ann points into o, which
 * must outlive cfg. path names the cassette in errors. */
rs_code rec_config_load(const cJSON *o, rs_config *cfg, const char *path, rs_err *e);

#endif
