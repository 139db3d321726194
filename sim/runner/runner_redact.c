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

cred_redact *runner_redact_set(const sc_scenario *sc)
{
    cred_redact *set = cred_redact_new();
    for (size_t i = 0; sc && i < sc->n_catalogue; i++) {
        const sc_cred *c = &sc->catalogue[i];
        sim_redact_add_cred(set, c->name, c->dockerconfigjson, c->username, c->password);
    }
    return set;
}

void runner_redact(const cred_redact *set, cJSON *node)
{
    cred_redact_json(set, node);
}
