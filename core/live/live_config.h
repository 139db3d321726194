/*
 * live_config.h — `--config FILE`: a YAML file overriding the production
 * constants of DESIGN.md §3 (fan-out namespaces, Lease, Kustomizations,
 * controller, sync attempts/interval, drain timeout, operator image, required
 * pull targets, OpenBao location). Keys nest (`lease: {name: x}`) or are
 * dotted (`lease.name: x`); an unknown key, a wrong type or a bad value is
 * RS_DATAERR naming file:line:column and the key.
 *
 * Lives in core/live/ with the YAML reader it uses (core/live/live_yaml.h),
 * so `reassert run` reads its configuration without linking the simulator.
 */
#ifndef CORE_LIVE_CONFIG_H
#define CORE_LIVE_CONFIG_H

#include "core/config.h"
#include "core/rs.h"

#include <stdbool.h>
#include <stddef.h>

rs_code live_config_load(const char *path, rs_config *cfg, rs_err *e);

/* The rules a `--config` file's values obey — each value, the rules that
 * relate keys, and the registry proof's targets (operator-image on
 * registry-host) — checked on a configuration however it was made (a
 * cassette's meta config, DESIGN.md §8): true when
 * every rule holds; else false with *offset (the breaking field's offset in
 * rs_config), *key (its --config name) and why (one sentence) set. */
bool live_config_check(const rs_config *cfg, size_t *offset, const char **key, char *why,
                       size_t len);

#endif
