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
#include <stdint.h>

/* Wraps inner (not owned: closing the shim leaves inner open). cfg names
 * the Lease, the policy objects and the controller the counters single out;
 * it must outlive the shim. */
rs_transport *tp_count_open(rs_transport *inner, const rs_config *cfg);
/* The counters of every call since tp_count_open, in the §4 delta shape
 * (`lease_rv_moved`, `writes_by_kind`, `virtual_seconds`, ...). Caller
 * frees. t must come from tp_count_open. `virtual_seconds` runs from the
 * clock read tp_count_open made to the one tp_count_stop made, or to a read
 * made now when the shim was not stopped. */
cJSON *tp_count_counters(rs_transport *t);
/* The clock read virtual_seconds starts from (made by tp_count_open). */
int64_t tp_count_start_ms(rs_transport *t);
/* The run is over: reads the clock one last time and keeps that reading as
 * the end of virtual_seconds, so every later tp_count_counters gives the
 * same document (a recording's counters, its end record and `--output json`
 * agree on a clock that moves between two reads). Returns that reading; a
 * second stop returns the first one's. */
int64_t tp_count_stop(rs_transport *t);

#endif
