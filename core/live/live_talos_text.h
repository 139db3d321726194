/*
 * live_talos_text.h — reading what talosctl prints, strictly.
 *
 * talosctl's table output is made for people: columns aligned by Go's
 * tabwriter (cells padded with at least three spaces), layouts that changed
 * between releases, an empty answer where a table was expected. A parser
 * that "finds the ERRORS column" somewhere would pass a garbled or
 * truncated answer as healthy, and a control plane would be rebooted while
 * its peer is not a healthy etcd voter (H85, H118). So each reader accepts
 * exactly the layouts it knows and refuses everything else.
 *
 * `etcd status` layouts (one row per node asked; NODE is the --nodes value):
 *   compact:  [NODE] MEMBER  DB SIZE  IN USE  LEADER  RAFT INDEX  RAFT TERM
 *             RAFT APPLIED INDEX  LEARNER  ERRORS
 *   extended: NODE MEMBER  DB SIZE  IN USE  LEADER  RAFT INDEX  RAFT TERM
 *             RAFT APPLIED INDEX  LEARNER  PROTOCOL  STORAGE  ERRORS
 * Each cell has its own grammar (a hex member ID, "25 MB", "18 MB (72.00%)",
 * integers, true/false, a version). Healthy = no ERRORS and a known leader
 * (a leader ID of 0 means the member sees none).
 * `etcd alarm list`: empty output or the header alone mean no alarms;
 * otherwise [NODE] MEMBER ALARM rows with ALARM one of NONE, NOSPACE,
 * CORRUPT (every row counts as an alarm).
 */
#ifndef CORE_LIVE_TALOS_TEXT_H
#define CORE_LIVE_TALOS_TEXT_H

#include "core/config.h"
#include "core/rs.h"

#include <cjson/cJSON.h>
#include <stddef.h>

/* `etcd status` stdout for node -> {"healthy": B, "learner": B, "layout":
 * "compact"|"extended"}. RS_FAILED (e names what) for any other shape. */
rs_code live_talos_etcd_status_parse(const char *text, size_t len, const char *node, cJSON **out,
                                     rs_err *e);

/* `etcd alarm list` stdout for node -> {"alarms": [{"member", "alarm"}...]}. */
rs_code live_talos_etcd_alarms_parse(const char *text, size_t len, const char *node, cJSON **out,
                                     rs_err *e);

/* The machine config (a YAML stream, as `get machineconfig -o
 * jsonpath={.spec}` prints it: talosctl renders the MachineConfig spec as one
 * string holding every document, not only the first) ->
 * {"auth": {"username", "password"}} for
 * host in the configured shape, or {"redacted": true} when Talos redacted
 * the values (a reader-role talosconfig). RS_OK with *out NULL when the
 * config holds no auth for host (the caller answers 404); RS_FAILED for an
 * unreadable stream, a duplicate document, a non-scalar value. The answer
 * holds the password: the caller wipes it. */
rs_code live_talos_auth_parse(const char *text, size_t len, const char *host,
                              rs_talos_auth_shape shape, cJSON **out, rs_err *e);

#endif
