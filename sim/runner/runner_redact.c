/*
 * runner_redact.c — the scenario's redaction set (DESIGN.md §5.1).
 *
 * Keyed on the scenario's catalogue, not on what the run happened to print:
 * the filter must catch a credential in a place nobody thought of (a failure
 * quoting an output-contains needle, a Secret's base64 in a state check, a
 * child's dumped output), so it knows every secret the world was built
 * with, in every form the world or the core can write it.
 */
#include "sim/runner/runner_int.h"

#include "core/cred/cred.h"

#include <stdlib.h>
#include <string.h>

/* The registry host the sim's catalogue credentials are built for. */
#define RUNNER_REDACT_HOST "ghcr.io"

cred_redact *runner_redact_set(const sc_scenario *sc)
{
    cred_redact *set = cred_redact_new();
    for (size_t i = 0; sc && i < sc->n_catalogue; i++) {
        const sc_cred *c = &sc->catalogue[i];
        if (c->dockerconfigjson)
            cred_redact_add_dockerconfig(set, c->name, c->dockerconfigjson,
                                         strlen(c->dockerconfigjson));
        if (c->password && c->password[0]) {
            cred_redact_add(set, c->name, c->password, strlen(c->password));
            if (c->username) {
                char *dc = cred_dockerconfig_build(RUNNER_REDACT_HOST, c->username, c->password);
                cred_redact_add_dockerconfig(set, c->name, dc, strlen(dc));
                cred_text_wipe_free(dc);
            }
        }
    }
    return set;
}

void runner_redact(const cred_redact *set, cJSON *node)
{
    cred_redact_json(set, node);
}
