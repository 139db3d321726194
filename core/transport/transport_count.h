/*
 * transport_count.h — the counting shim: DESIGN.md §4 counters for any root.
 *
 * Shim order (DESIGN.md §2 r2), outermost first: core -> recorder ->
 * counting -> faults -> root. The shim sees what the core sends and what
 * comes back, so `reassert run --output json` has counters with the sim
 * root, a live root or a replay alike. It judges from the client's side:
 * a write counts when the answer was 2xx; a write whose answer was lost
 * (sent, no status) is counted in `writes_unconfirmed`, because only the
 * world knows whether it was applied. That is why the sim's world-side
 * counters, not these, are the oracle scenarios assert.
 */
#ifndef RS_TRANSPORT_COUNT_H
#define RS_TRANSPORT_COUNT_H

#include "core/config.h"
#include "core/transport/transport.h"

#include <cjson/cJSON.h>

/* Wraps inner (not owned: closing the shim leaves inner open). cfg names
 * the Lease, the policy objects and the controller the counters single out;
 * it must outlive the shim. */
rs_transport *tp_count_open(rs_transport *inner, const rs_config *cfg);
/* The counters of every call since tp_count_open, in the §4 delta shape
 * (`lease_rv_moved`, `writes_by_kind`, `virtual_seconds`, ...). Caller
 * frees. t must come from tp_count_open. */
cJSON *tp_count_counters(rs_transport *t);

#endif
