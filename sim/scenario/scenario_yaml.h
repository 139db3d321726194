/*
 * scenario_yaml.h — the scenario loader's names for the one YAML reader
 * (core/live/live_yaml.h), with positions as sc_pos.
 *
 * The reader moved to core/live/ so `--config` can use it without linking
 * the simulator; these wrappers keep the loader's four files reading as
 * they did. Nothing here parses: see live_yaml.c.
 */
#ifndef SIM_SCENARIO_YAML_H
#define SIM_SCENARIO_YAML_H

#include "core/live/live_yaml.h"
#include "core/rs.h"
#include "sim/scenario/scenario.h"

#include <cjson/cJSON.h>
#include <stdbool.h>

typedef live_yaml_doc sy_doc;

static inline rs_code sy_load(const char *path, sy_doc **out, rs_err *e)
{
    return live_yaml_load(path, "scenario", out, e);
}

static inline void sy_free(sy_doc *d)
{
    live_yaml_free(d);
}

static inline const cJSON *sy_root(const sy_doc *d)
{
    return live_yaml_root(d);
}

static inline sc_pos sy_pos(const sy_doc *d, const cJSON *node)
{
    live_yaml_pos p = live_yaml_pos_of(d, node);
    return (sc_pos){p.line, p.col};
}

static inline sc_pos sy_key_pos(const sy_doc *d, const cJSON *node)
{
    live_yaml_pos p = live_yaml_key_pos(d, node);
    return (sc_pos){p.line, p.col};
}

static inline bool sy_is_int(const sy_doc *d, const cJSON *node)
{
    return live_yaml_is_int(d, node);
}

static inline const char *sy_num_text(const sy_doc *d, const cJSON *node)
{
    return live_yaml_num_text(d, node);
}

#endif
