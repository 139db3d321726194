/*
 * config_file.h — `--config FILE`: a YAML file overriding the production
 * constants of DESIGN.md §3 (fan-out namespaces, Lease, Kustomizations,
 * controller, sync attempts/interval, drain timeout, operator image, required
 * pull targets, OpenBao location). Keys nest (`lease: {name: x}`) or are
 * dotted (`lease.name: x`); an unknown key, a wrong type or a bad value is
 * RS_DATAERR naming file:line:column and the key.
 *
 * Lives beside the scenario loader because it shares its YAML reader; the
 * live transports will call the same function.
 */
#ifndef SIM_CONFIG_FILE_H
#define SIM_CONFIG_FILE_H

#include "core/config.h"
#include "core/rs.h"

rs_code config_file_load(const char *path, rs_config *cfg, rs_err *e);

#endif
