/*
 * gate.h — the write gate: the single path through which the transaction
 * mutates anything (DESIGN.md §3.5, lazy item 1).
 *
 * The transaction holds an rs_gate, never a transport, so there is no handle
 * it could write around the fence with. Reads pass straight through. A write
 * declares the fence it needs (the Lease for a bootstrap write; Lease plus both
 * policy fences plus the controller restart for a normal-path write); if that
 * fence is not held, the gate takes it first through the owner's callback. In
 * a restart-on-fence gate (lazy) the write is then *not* performed: the gate
 * answers GATE_FENCE_TAKEN and the caller restarts its round, so no write is
 * ever justified by a read made before the fence.
 *
 * Fence writes themselves go through two more doors, because they are what
 * the fence is made of:
 *   gate_fence_write   takes or advances a fence under the Lease (policy
 *                      pauses, the controller restart, a node's phase): it
 *                      asserts the Lease like gate_write does, at every
 *                      write and never on an earlier proof (another actor
 *                      can take the Lease between two fence writes); once
 *                      the policy fences are held the Lease read rides in
 *                      their batch, one round trip;
 *   gate_release_write the Lease's own writes (it cannot assert what it is
 *                      acquiring) and the CAS releases of fences this run —
 *                      or a provably terminal one — holds, which must work
 *                      even when the Lease is lost (cleanup, DESIGN §3.4).
 *
 * The gate is opaque: only gate.c sees its fields.
 */
#ifndef RS_GATE_H
#define RS_GATE_H

#include "core/rs.h"
#include "core/transport/transport.h"

typedef enum gate_need {
    GATE_NEED_NONE = 0,
    GATE_NEED_LEASE = 1, /* bootstrap writes */
    GATE_NEED_FULL = 2,  /* Lease + parent + child + controller restart */
} gate_need;

typedef enum gate_result {
    GATE_WRITTEN = 0,     /* the write reached the transport; see resp */
    GATE_FENCE_TAKEN = 1, /* fence just taken, write not performed: restart the round */
    GATE_FAILED = 2,      /* the fence could not be taken or is no longer held; see err */
} gate_result;

typedef struct rs_gate_ops {
    /* Takes whatever is missing to reach `need`. */
    rs_code (*take)(void *owner, gate_need need, rs_err *e);
    /* Asserts the fence is still held before a mutation (renews if due). */
    rs_code (*check)(void *owner, rs_err *e);
    /* Called before every wait: renews the Lease when its heartbeat is due, so
     * a long drain or reboot wait never lets it lapse. May be NULL. */
    void (*heartbeat)(void *owner);
} rs_gate_ops;

typedef struct rs_gate rs_gate;

rs_gate *gate_new(rs_transport *t, rs_gate_ops ops, void *owner, bool restart_on_fence);
void gate_free(rs_gate *g);

/* Takes the fence up to `need` without writing (eager takes it up front). */
rs_code gate_take(rs_gate *g, gate_need need, rs_err *e);

int gate_read(rs_gate *g, const rs_req *req, rs_resp *resp);
/* n independent reads, at most `parallelism` in flight (transport v2 batch). */
void gate_read_batch(rs_gate *g, const rs_req *reqs, rs_resp *resps, size_t n, int parallelism);
gate_result gate_write(rs_gate *g, gate_need need, const rs_req *req, rs_resp *resp, rs_err *e);
/* GATE_WRITTEN or GATE_FAILED (the Lease could not be asserted; see e). */
gate_result gate_fence_write(rs_gate *g, const rs_req *req, rs_resp *resp, rs_err *e);
int gate_release_write(rs_gate *g, const rs_req *req, rs_resp *resp);

gate_need gate_held(const rs_gate *g);
int gate_writes(const rs_gate *g);  /* writes performed through the gate (incl. fence writes) */
int gate_changes(const rs_gate *g); /* gated (non-fence) writes the cluster accepted */

int64_t gate_now_ms(rs_gate *g);
void gate_sleep_ms(rs_gate *g, int64_t ms);
/* A wait with no heartbeat: the Lease renewal's own back-off (a renewal
 * cannot renew the Lease while it waits to renew it). */
void gate_wait_ms(rs_gate *g, int64_t ms);
uint64_t gate_entropy(rs_gate *g);
int gate_pid(rs_gate *g);

#endif
