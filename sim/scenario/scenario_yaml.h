/*
 * scenario_yaml.h — YAML to cJSON with source positions, for the scenario
 * loader (sim/scenario*.c) only.
 *
 * The loader validates a cJSON tree, but every error must name the YAML line
 * and column, so the conversion keeps a side table from each cJSON node to
 * where it (and, for a mapping member, its key) stood in the file. Scalars are
 * typed once here: plain true/false become booleans, plain integers and
 * decimals numbers, plain null/~/empty null; quoted and block scalars always
 * stay strings, so `"3"` is never the number 3.
 */
#ifndef SIM_SCENARIO_YAML_H
#define SIM_SCENARIO_YAML_H

#include "core/rs.h"
#include "sim/scenario/scenario.h"

#include <cjson/cJSON.h>
#include <stdbool.h>

typedef struct sy_doc sy_doc;

/* Parses path into *root (owned by the doc). YAML syntax errors, duplicate
 * keys, unknown aliases, unsupported tags and NUL characters fail with
 * "<path>:<line>:<col>: <field>: <problem>" and RS_DATAERR; libfyaml's own
 * diagnostics are captured, never printed. */
rs_code sy_load(const char *path, sy_doc **out, rs_err *e);
void sy_free(sy_doc *d);

const cJSON *sy_root(const sy_doc *d);
/* Where node's value starts (1-based); {1, 1} for a node not in the table. */
sc_pos sy_pos(const sy_doc *d, const cJSON *node);
/* Where the key of a mapping member starts; the value's position otherwise. */
sc_pos sy_key_pos(const sy_doc *d, const cJSON *node);
/* True when node came from a plain integer scalar ("3", "-1", "+7"). */
bool sy_is_int(const sy_doc *d, const cJSON *node);
/* The source text of a numeric scalar (exact, unlike the double); NULL for
 * other nodes. */
const char *sy_num_text(const sy_doc *d, const cJSON *node);

#endif
