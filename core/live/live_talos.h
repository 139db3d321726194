/*
 * live_talos.h — the Talos side of a live run that does not need talosctl to
 * be present: turning the core's Talos intents into the machine-config patch
 * a Talos node expects.
 *
 * The core speaks intents (transport v2: "set the registry auth for host H
 * to credential C"); which machine-config shape carries them is a fact of
 * the Talos version, so it is decided here, once. Talos v1.12+ (production
 * runs v1.13) reads registry auth from a separate `RegistryAuthConfig`
 * document; older nodes read `machine.registries.config.<host>.auth`, kept
 * behind `talos.auth-shape: legacy` (DESIGN §3.3 r2; H106). The patch is
 * handed to talosctl by file or stdin, never argv (the live transport's job).
 */
#ifndef CORE_LIVE_TALOS_H
#define CORE_LIVE_TALOS_H

#include "core/config.h"
#include "core/rs.h"

#include <cjson/cJSON.h>

/* The machine-config patch for a `talos.patch` intent body
 * {"registry-auth":{"host":H,"auth":{"username":U,"password":P}}}, in the
 * configured shape, as YAML text (JSON-quoted scalars). NULL with e set when
 * the intent is malformed. The text holds the password: the caller wipes it
 * (cred_text_wipe_free). */
char *live_talos_auth_patch(const cJSON *intent, rs_talos_auth_shape shape, rs_err *e);

#endif
