/*
 * kube_cas.h — the one CAS-write-and-adopt helper (DESIGN.md §3.3
 * "Ambiguous writes").
 *
 * A write whose answer is lost may or may not have been applied. Retrying
 * blindly can apply it twice or clobber a concurrent writer; giving up leaves
 * fences behind. So every write whose answer can be lost — Secrets, the
 * force-sync annotation, the Lease, the policy pauses and resumes, the
 * controller restart, node claims — goes through kube_cas_write, and the
 * resolution is written once, here:
 *
 *   plan   builds the write from the current object (or refuses, or says the
 *          object already shows our write);
 *   send   through the gate's door (gated write, or a fence write);
 *   2xx    done; 409/422 on a CAS write: re-read, plan again;
 *   lost   re-read; `seen` decides: our write is there => adopt; the object
 *          is as we planned from => plan again (the re-read is the next
 *          plan's read); anything else => fail closed;
 *   not sent (the transport proves the request never left) => plan again.
 *
 * Every loop is bounded by attempts_max. The helper formats no sentence of
 * its own beyond the answer's description: the caller knows what it wrote
 * and says so from the result.
 */
#ifndef RS_KUBE_CAS_H
#define RS_KUBE_CAS_H

#include "core/gate.h"
#include "core/rs.h"
#include "core/transport/transport.h"

#include <cjson/cJSON.h>
#include <stdbool.h>

/* The gate's door a write goes through (core/gate.h). */
typedef enum kube_cas_door {
    KUBE_CAS_GATED,   /* gate_write: takes the fence up to `need` first */
    KUBE_CAS_FENCE,   /* gate_fence_write: takes or advances a fence; asserts the Lease */
    KUBE_CAS_RELEASE, /* gate_release_write: the Lease's own writes, fence releases */
} kube_cas_door;

/* How a plan gets the object it builds the write from. */
typedef enum kube_cas_read {
    /* Every attempt first reads the object; a conflict's or a lost answer's
     * re-read is the next attempt's read. */
    KUBE_CAS_PLAN_FROM_READ,
    /* The first plan has no read (a merge patch; a CAS on a remembered
     * resourceVersion). After a failed answer the re-read goes to the next
     * plan; after the last attempt's conflict the plan still sees the re-read
     * and may conclude (DONE or REFUSE), but nothing more is sent. */
    KUBE_CAS_PLAN_BLIND,
} kube_cas_read;

typedef enum kube_cas_step {
    KUBE_CAS_WRITE,  /* w is filled: send it */
    KUBE_CAS_DONE,   /* the object already shows our write: nothing to send */
    KUBE_CAS_REFUSE, /* stop: the plan set e */
} kube_cas_step;

typedef enum kube_cas_seen {
    KUBE_CAS_ADOPT,    /* the re-read shows our write: the lost answer was a success */
    KUBE_CAS_RETRY,    /* it shows what we planned from: not applied, plan again */
    KUBE_CAS_NOT_OURS, /* anything else (or the re-read failed): fail closed */
} kube_cas_seen;

/* What a plan sees. */
typedef struct kube_cas_view {
    int attempt;           /* 0-based */
    bool last;             /* no write will be sent whatever the plan says */
    const rs_resp *read;   /* the read this plan builds from (NULL: none was made) */
    int read_status;       /* its HTTP status (0: none made, or no answer) */
    const cJSON *cur;      /* its object (NULL: none) */
    int prev_status;       /* the previous attempt's write answer (0: none, or lost) */
    rs_answer read_answer; /* the read, for a message ("not read" when none was made) */
    rs_answer prev_answer; /* the previous write's answer, for a message */
} kube_cas_view;

/* The write a plan builds. */
typedef struct kube_cas_req {
    rs_op op;                 /* RS_OP_KUBE_PATCH (default) or RS_OP_KUBE_CREATE */
    rs_patch_type patch_type; /* RS_PATCH_JSON when left unset for a patch */
    cJSON *body;              /* consumed by kube_cas_write */
    bool cas;                 /* 409/422 mean "changed since read": re-read, plan again */
    bool reread_on_error;     /* any other failed answer is re-read and planned again too */
} kube_cas_req;

typedef struct kube_cas_ops {
    const char *kind, *ns, *name; /* the object written (and re-read) */
    kube_cas_door door;
    gate_need need; /* KUBE_CAS_GATED: the fence the write needs */
    kube_cas_read read;
    int attempts_max;
    kube_cas_step (*plan)(void *ctx, const kube_cas_view *v, kube_cas_req *w, rs_err *e);
    /* After a lost answer, on the re-read. NULL: a lost answer is never
     * adopted (the write fails closed without a re-read). */
    kube_cas_seen (*seen)(void *ctx, int read_status, const cJSON *obj);
    /* On a 2xx answer (e.g. to remember the new resourceVersion). May be NULL. */
    void (*written)(void *ctx, const rs_resp *answer);
    void *ctx;
} kube_cas_ops;

typedef enum kube_cas_end {
    KUBE_CAS_WRITTEN,     /* a 2xx answer */
    KUBE_CAS_ADOPTED,     /* a lost answer, and the re-read shows our write */
    KUBE_CAS_ALREADY,     /* the plan found our write already there */
    KUBE_CAS_REFUSED,     /* the plan refused; e says why */
    KUBE_CAS_FAILED,      /* a failed answer that is not retried (status, why) */
    KUBE_CAS_UNRESOLVED,  /* a lost answer not adopted: seen said not ours, or no seen */
    KUBE_CAS_CONTENDED,   /* attempts_max spent (status: the last answer) */
    KUBE_CAS_RESTART,     /* the gate just took the fence: restart the round */
    KUBE_CAS_GATE_FAILED, /* the gate could not take or assert the fence; e says why */
} kube_cas_end;

typedef struct kube_cas_result {
    kube_cas_end end;
    int status;      /* the last write's HTTP status (0: lost or not sent) */
    int read_status; /* the last read's HTTP status (0: none, or no answer) */
    int sent;        /* writes that reached the transport */
    /* A write was sent and its answer lost: until confirmed either way it may
     * have been applied (cleanup must treat the object as possibly ours). */
    bool unconfirmed;
    char why[256];         /* the last answer described ("HTTP 409 (Conflict: ...)") */
    rs_answer answer;      /* the last write's answer, for a message (rs_answer_of) */
    rs_answer read_answer; /* the last read's answer ("" when none was made) */
} kube_cas_result;

/* Runs the CAS write described by ops through the gate. Returns res->end. */
kube_cas_end kube_cas_write(rs_gate *g, const kube_cas_ops *ops, kube_cas_result *res, rs_err *e);

/* WRITTEN, ADOPTED or ALREADY: the object now shows our write. */
bool kube_cas_ok(kube_cas_end end);

#endif
