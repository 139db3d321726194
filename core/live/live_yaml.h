/*
 * live_yaml.h — YAML to cJSON with source positions: the one YAML reader,
 * shared by `--config FILE` (core/live/live_config.c) and the scenario
 * loader (sim/scenario/).
 *
 * core/live/ is the only part of core/ that may link libfyaml (and, later,
 * the live clients' libraries): the transaction itself reads no file.
 *
 * A loader validates a cJSON tree, but every error must name the YAML line
 * and column, so the conversion keeps a side table from each cJSON node to
 * where it (and, for a mapping member, its key) stood in the file. Scalars are
 * typed once here: plain true/false become booleans, plain integers and
 * decimals numbers, plain null/~/empty null; quoted and block scalars always
 * stay strings, so `"3"` is never the number 3.
 */
#ifndef CORE_LIVE_YAML_H
#define CORE_LIVE_YAML_H

#include "core/rs.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct live_yaml_pos {
    int line; /* 1-based */
    int col;  /* 1-based */
} live_yaml_pos;

typedef struct live_yaml_doc live_yaml_doc;

/* Parses path into a document; `what` ("scenario", "configuration") names
 * the file in errors. The file is read whole first (live_text.h: at most
 * 4 MiB, no NUL byte, strict UTF-8), and the parse must reach the end of the
 * stream. YAML syntax errors, duplicate keys, unknown aliases, unsupported
 * tags, scalars over 64 KiB, nesting over 64 and more than 200 000 nodes fail
 * with
 * "<path>:<line>:<col>: <field>: <problem>" and RS_DATAERR; libfyaml's own
 * diagnostics are captured, never printed. */
rs_code live_yaml_load(const char *path, const char *what, live_yaml_doc **out, rs_err *e);
/* The same from text in memory (len bytes; path only names it in errors).
 * The text is the caller's: it is neither changed nor freed. */
rs_code live_yaml_load_text(const char *text, size_t len, const char *path, const char *what,
                            live_yaml_doc **out, rs_err *e);
void live_yaml_free(live_yaml_doc *d);

const cJSON *live_yaml_root(const live_yaml_doc *d);
/* Where node's value starts (1-based); {1, 1} for a node not in the table. */
live_yaml_pos live_yaml_pos_of(const live_yaml_doc *d, const cJSON *node);
/* Where the key of a mapping member starts; the value's position otherwise. */
live_yaml_pos live_yaml_key_pos(const live_yaml_doc *d, const cJSON *node);
/* True when node came from a plain integer scalar ("3", "-1", "+7"). */
bool live_yaml_is_int(const live_yaml_doc *d, const cJSON *node);
/* The source text of a numeric scalar (exact, unlike the double); NULL for
 * other nodes. */
const char *live_yaml_num_text(const live_yaml_doc *d, const cJSON *node);

/* A plain (unquoted, untagged) scalar typed by the YAML 1.2 core schema:
 * null, boolean, number (then *is_num, and *is_int for integers) or string. */
cJSON *live_yaml_plain_scalar(const char *text, bool *is_int, bool *is_num);

/* Parses "<integer>(ms|s|m|h)" (a duration scalar). False when malformed. */
bool live_yaml_duration_ms(const char *text, int64_t *ms);

#endif
