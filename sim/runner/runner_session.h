/*
 * runner_session.h — the sim root as `reassert run --transport sim:FILE.db`
 * sees it: one world file opened for one run.
 *
 * This is the only door from cli/'s run path into sim/. A session hands out
 * what a live root will also have to provide — the transport, the cluster's
 * configuration, the desired credential by name. The JSON result's counters
 * come from the counting shim (core/transport/transport_count.h), as they
 * will with any root. Nothing else of the simulator is reachable from a run.
 */
#ifndef SIM_RUNNER_SESSION_H
#define SIM_RUNNER_SESSION_H

#include "core/config.h"
#include "core/rs.h"
#include "core/transport/transport.h"
#include "sim/scenario/scenario.h"

#include <cjson/cJSON.h>

typedef struct sim_session sim_session;
struct sim_world; /* sim/world/world.h */

/* Opens the world at db_path for one run named run_name (the transport's
 * run reference). The run's faults and during entries (run may be NULL)
 * apply. When unfired_path is set, closing the session writes there the
 * entries that never fired, one sentence per line. */
rs_code sim_session_open(const char *db_path, const char *run_name, const sc_run *run,
                         const char *unfired_path, sim_session **out, rs_err *e);
/* The same over a world the caller owns and keeps open (the scenario
 * runner's, in memory); closing the session leaves it open. */
rs_code sim_session_open_world(struct sim_world *w, const char *run_name, const sc_run *run,
                               const char *unfired_path, sim_session **out);
/* The root transport (owned by the session), opened on the first call:
 * from then on the world counts this run. */
rs_transport *sim_session_transport(sim_session *s);
/* The core's configuration for this world (fan-out namespaces, defaults). */
rs_code sim_session_config(sim_session *s, rs_config *cfg, rs_err *e);
/* The catalogue credential's docker config text and ciphertext (caller
 * frees both; wipe the text). RS_DATAERR for an unknown name. */
rs_code sim_session_credential(sim_session *s, const char *name, char **text, char **ciphertext,
                               rs_err *e);
/* Every catalogue credential's password and docker config text,
 * NULL-terminated (the recorder's known secrets). Caller frees with
 * sim_session_secrets_free. */
char **sim_session_secrets(sim_session *s);
void sim_session_secrets_free(char **v);
void sim_session_close(sim_session *s);

#endif
