/*
 * runner_timeline.c — one run's timeline on its virtual-time axis, read from
 * the call log the sim transport wrote at call time: when the run held the
 * Lease and each policy fence, the controller restart, node claims, drains
 * and reboots, every applied write as a mark, and the root cutover.
 *
 * The one idea: the timeline is evidence, like the invariants — what the
 * world saw at each call (the held_mask stamped before it), never what the
 * run's output says it did. A fence is drawn from the write that took it
 * (the call before the first call made under it) to its last call under it;
 * one still held when the run ended is drawn to the end and marked open.
 */
#include "sim/runner/runner_int.h"

#include "sim/world/world_internal.h"

#include <stdlib.h>
#include <string.h>

/* Marks beyond this many writes are counted, not listed: a 1,000-node
 * rotation must not turn the report into megabytes of ticks. */
#define TL_WRITE_MARKS_MAX 4000

static const struct {
    int bit;
    const char *lane;
} tl_fences[] = {{INV_HELD_LEASE, "lease"}, {INV_HELD_PARENT, "parent"}, {INV_HELD_CHILD, "child"}};
#define TL_FENCES (sizeof tl_fences / sizeof tl_fences[0])

typedef struct tl_span {
    bool open;
    int64_t from, to;
    char *label;
} tl_span;

typedef struct tl_state {
    cJSON *spans, *marks;
    int64_t prev_vt; /* the previous call's time (the run's start before any) */
    int64_t fence_from[TL_FENCES], fence_last[TL_FENCES];
    bool fence_open[TL_FENCES];
    tl_span claim, drain, reboot;
    int dropped;
} tl_state;

static void tl_span_add(cJSON *spans, const char *lane, int64_t from, int64_t to, const char *label,
                        bool open)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "lane", lane);
    cJSON_AddNumberToObject(s, "from", (double)from);
    cJSON_AddNumberToObject(s, "to", (double)(to < from ? from : to));
    if (label) cJSON_AddStringToObject(s, "label", label);
    if (open) cJSON_AddBoolToObject(s, "open", true);
    cJSON_AddItemToArray(spans, s);
}

static void tl_mark_add(cJSON *marks, const char *lane, int64_t at, const char *label)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "lane", lane);
    cJSON_AddNumberToObject(m, "at", (double)at);
    cJSON_AddStringToObject(m, "label", label);
    cJSON_AddItemToArray(marks, m);
}

static void tl_close(tl_state *t, tl_span *s, const char *lane, bool open)
{
    if (!s->open) return;
    tl_span_add(t->spans, lane, s->from, s->to, s->label, open);
    free(s->label);
    memset(s, 0, sizeof *s);
}

static void tl_begin(tl_span *s, int64_t at, const char *label)
{
    s->open = true;
    s->from = s->to = at;
    s->label = rs_xstrdup(label ? label : "");
}

static bool tl_ref_is(const char *target, const char *kind, const char *ns, const char *name)
{
    size_t k = strlen(kind), n = strlen(ns);
    return strncmp(target, kind, k) == 0 && target[k] == '/' &&
           strncmp(target + k + 1, ns, n) == 0 && target[k + 1 + n] == '/' &&
           strcmp(target + k + 2 + n, name) == 0;
}

/* The fences: a bit that turns on opens its span at the previous call (the
 * write that took it); one that turns off closes it at its last call. */
static void tl_fences_step(tl_state *t, int mask, int64_t vt)
{
    for (size_t i = 0; i < TL_FENCES; i++) {
        bool held = (mask & tl_fences[i].bit) != 0;
        if (held && !t->fence_open[i]) {
            t->fence_open[i] = true;
            t->fence_from[i] = t->prev_vt;
        } else if (!held && t->fence_open[i]) {
            t->fence_open[i] = false;
            tl_span_add(t->spans, tl_fences[i].lane, t->fence_from[i], t->fence_last[i], NULL,
                        false);
        }
        if (held) t->fence_last[i] = vt;
    }
}

/* The node a node write acts on ("talos.<verb> <node>", "kube.patch
 * Node/<node>"), or NULL for any other call. */
static const char *tl_node_of(const char *op, const char *target, bool write)
{
    if (!write) return NULL;
    if (strncmp(op, "talos.", 6) == 0) return target;
    if (strcmp(op, "kube.patch") == 0 && strncmp(target, "Node/", 5) == 0) return target + 5;
    return NULL;
}

/* Claims, drains and reboots: a node's claim runs from its first Node patch
 * to its last one before another node's; a drain from the first eviction to
 * the next node write (the reboot); a reboot until the next write on that
 * node (Lease renewals while it boots are not its end). */
static void tl_nodes_step(tl_state *t, const char *op, const char *target, bool applied, bool write,
                          int64_t vt)
{
    if (strcmp(op, "kube.evict") == 0) {
        if (!t->drain.open) tl_begin(&t->drain, vt, t->claim.label);
        t->drain.to = vt;
        return;
    }
    const char *node = applied ? tl_node_of(op, target, write) : NULL;
    if (!node) return;
    if (t->drain.open) {
        t->drain.to = vt;
        tl_close(t, &t->drain, "drain", false);
    }
    if (t->reboot.open && strcmp(t->reboot.label, node) == 0) {
        t->reboot.to = vt;
        tl_close(t, &t->reboot, "reboot", false);
    }
    if (strcmp(op, "talos.reboot") == 0) {
        tl_close(t, &t->reboot, "reboot", false);
        tl_begin(&t->reboot, vt, node);
    }
    if (strncmp(op, "kube.", 5) == 0) {
        if (t->claim.open && strcmp(t->claim.label, node) != 0)
            tl_close(t, &t->claim, "claim", false);
        if (!t->claim.open) tl_begin(&t->claim, vt, node);
        t->claim.to = vt;
    }
}

static void tl_marks_step(tl_state *t, const rs_config *c, const char *op, const char *target,
                          int64_t vt)
{
    char *label = rs_xasprintf("%s %s", op, target);
    if (strcmp(op, "kube.patch") == 0 &&
        tl_ref_is(target, "Deployment", c->controller_ns, c->controller_name))
        tl_mark_add(t->marks, "restart", vt, label);
    if (tl_ref_is(target, "Secret", c->root_ns, c->root_name))
        tl_mark_add(t->marks, "cutover", vt, label);
    if (cJSON_GetArraySize(t->marks) < TL_WRITE_MARKS_MAX)
        tl_mark_add(t->marks, "write", vt, label);
    else
        t->dropped++;
    free(label);
}

/* What is still open when the run ended: a fence the world still shows
 * held by the run is open (retained); a claim, drain or reboot ends with
 * the run. */
static void tl_finish(tl_state *t, sim_world *w, const char *run_name, int64_t to_ms)
{
    bool lease = false, fences = false;
    int end_mask = inv_fence_flags(w, run_name, &lease, &fences);
    for (size_t i = 0; i < TL_FENCES; i++) {
        if (!t->fence_open[i]) continue;
        bool still = (end_mask & tl_fences[i].bit) != 0;
        tl_span_add(t->spans, tl_fences[i].lane, t->fence_from[i], still ? to_ms : t->fence_last[i],
                    NULL, still);
    }
    if (t->drain.open) tl_close(t, &t->drain, "drain", false);
    if (t->reboot.open) {
        t->reboot.to = to_ms;
        tl_close(t, &t->reboot, "reboot", true);
    }
    tl_close(t, &t->claim, "claim", false);
}

cJSON *runner_timeline(sim_world *w, long long after_seq, const char *run_name, int64_t from_ms,
                       int64_t to_ms)
{
    tl_state t;
    memset(&t, 0, sizeof t);
    t.spans = cJSON_CreateArray();
    t.marks = cJSON_CreateArray();
    t.prev_vt = from_ms;
    sqlite3_stmt *st = simw_stmt(w, "SELECT op, target, applied, vt_ms, held_mask FROM call_log"
                                    " WHERE run = ?1 AND seq > ?2 ORDER BY seq");
    sqlite3_bind_text(st, 1, run_name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, after_seq);
    while (simw_step_row(w, st)) {
        char *op = simw_col_text(st, 0), *target = simw_col_text(st, 1);
        bool applied = sqlite3_column_int(st, 2) != 0;
        int64_t vt = sqlite3_column_int64(st, 3);
        int mask = sqlite3_column_int(st, 4);
        bool write = op && rs_op_is_write(rs_op_parse(op));
        if (op && target) {
            tl_fences_step(&t, mask, vt);
            tl_nodes_step(&t, op, target, applied, write, vt);
            if (write && applied) tl_marks_step(&t, &w->cfg, op, target, vt);
        }
        t.prev_vt = vt;
        free(op);
        free(target);
    }
    sqlite3_reset(st);
    tl_finish(&t, w, run_name, to_ms);
    cJSON *tl = cJSON_CreateObject();
    cJSON_AddNumberToObject(tl, "from_ms", (double)from_ms);
    cJSON_AddNumberToObject(tl, "to_ms", (double)(to_ms < from_ms ? from_ms : to_ms));
    cJSON_AddItemToObject(tl, "spans", t.spans);
    cJSON_AddItemToObject(tl, "marks", t.marks);
    if (t.dropped) cJSON_AddNumberToObject(tl, "marks_dropped", t.dropped);
    return tl;
}
