/*
 * support_transport.h — what the transport tests share: a scripted root
 * (answers from a table, remembers what it saw), worlds built from shipped
 * scenarios, and one in-process `run --output json`.
 */
#ifndef TESTS_SUPPORT_TRANSPORT_H
#define TESTS_SUPPORT_TRANSPORT_H

#include "core/transport/transport.h"

#include <cjson/cJSON.h>

typedef struct fake_root {
    rs_transport t;
    int statuses[16]; /* answer i gets statuses[i]; 0 = transport error */
    bool sent[16];    /* for status 0: whether the request left */
    int n_calls;
    int64_t now_ms;
    int n_marked; /* requests that arrived with a secret mark */
} fake_root;

void fake_init(fake_root *f);
/* The number at key k of o (fails the test when missing). */
double tt_num(const cJSON *o, const char *k);
/* A world file built from scenarios/FILE (caller unlinks and frees). */
char *tt_scenario_world(const char *file);
/* The world's counters snapshot. */
cJSON *tt_world_counters(const char *db);
/* One `run --strategy S --output json` in process, exit 0; the document. */
cJSON *tt_run_json(const char *db, const char *run_name, const char *strategy);
/* A temporary file holding text (caller unlinks and frees). */
char *tt_config_file(const char *text);

#endif
