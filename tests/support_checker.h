/*
 * support_checker.h — what the checker's tests share: a history written
 * into a sim world as a rogue core would write it (calls through the sim
 * transport) or as another actor would (world events).
 */
#ifndef TESTS_SUPPORT_CHECKER_H
#define TESTS_SUPPORT_CHECKER_H

#include "core/transport/transport.h"
#include "sim/world/world.h"

/* Another actor's world event (kind, JSON args); fails the test if it
 * cannot apply. */
void tc_event(sim_world *w, const char *kind, const char *args_json);
/* A merge patch (JSON text) through t; the HTTP status. */
int tc_merge(rs_transport *t, const char *kind, const char *ns, const char *name, const char *json);
/* A body-less kube call (get, delete, ...) through t; the HTTP status. */
int tc_kube(rs_transport *t, rs_op op, const char *kind, const char *ns, const char *name);

#endif
