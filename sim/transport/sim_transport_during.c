/*
 * sim_transport_during.c — a run's `during:` entries: a world event applied
 * just before the nth core call matching `before-call`, inside that call's
 * transaction, so the core's next read sees another actor's change exactly
 * where a scenario put it. An event that cannot apply is remembered and
 * reported with the unfired entries (a scenario that did not test what it
 * says must fail).
 */
#include "sim/transport/sim_transport_int.h"

#include "sim/check/check_expect.h"
#include "sim/store/store.h"

#include <stdlib.h>
#include <string.h>

/* A deleted object has no row left to show a new revision: the deletion
 * of a fence object — the Lease or either policy-fence Kustomization — is
 * recorded by name, so a fence another actor deleted is judged as one
 * another actor took (invariant 1's waiver (b)). Other deletions stay
 * unrecorded: invariant 2's waiver (c) reads no fence object, so it is not
 * widened. */
static void note_fence_deleted(simt_ctx *c, const sc_event *ev)
{
    if (strcmp(ev->kind, "kube.delete") != 0) return;
    const char *ref = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev->args, "ref"));
    if (!ref) return;
    const rs_config *cfg = &c->w->cfg;
    char *fences[] = {rs_xasprintf("Lease/%s/%s", cfg->lease_ns, cfg->lease_name),
                      rs_xasprintf("Kustomization/%s/%s", cfg->parent_ns, cfg->parent_name),
                      rs_xasprintf("Kustomization/%s/%s", cfg->child_ns, cfg->child_name)};
    for (size_t i = 0; i < sizeof fences / sizeof fences[0]; i++) {
        if (strcmp(ref, fences[i]) != 0) continue;
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(c->w->db,
                               "INSERT INTO foreign_writes(run, ref, after_call)"
                               " SELECT ?1, ?2, (SELECT coalesce(max(seq), 0) FROM call_log)",
                               -1, &st, NULL) == SQLITE_OK) {
            sqlite3_bind_text(st, 1, c->run_name, -1, SQLITE_STATIC);
            sqlite3_bind_text(st, 2, fences[i], -1, SQLITE_STATIC);
            sqlite3_step(st);
        }
        sqlite3_finalize(st);
    }
    for (size_t i = 0; i < sizeof fences / sizeof fences[0]; i++)
        free(fences[i]);
}

/* Remembers which objects another actor's event changed, and after which
 * call of this run (invariant 2 does not blame the run for a change made
 * after its last look at the object: no reader can see the future). */
static void note_foreign(simt_ctx *c, const sc_event *ev, long long rev_before)
{
    sqlite3 *db = c->w->db;
    const char *sql =
        "INSERT INTO foreign_writes(run, ref, after_call)"
        " SELECT ?1, kind || '/' || CASE WHEN ns = '' THEN '' ELSE ns || '/' END || name,"
        " (SELECT coalesce(max(seq), 0) FROM call_log) FROM objects WHERE rv > ?2"
        " UNION ALL SELECT ?1, 'openbao', (SELECT coalesce(max(seq), 0) FROM call_log)"
        " WHERE ?3";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return;
    sqlite3_bind_text(st, 1, c->run_name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, rev_before);
    sqlite3_bind_int(st, 3, strncmp(ev->kind, "openbao.", 8) == 0);
    sqlite3_step(st);
    sqlite3_finalize(st);
    note_fence_deleted(c, ev);
}

/* A `check:` entry: the state checks, evaluated on the world as the core's
 * call is about to see it; each failure is a row at its own scenario line.
 * With and-after an entry is checked at every later matching call until it
 * first fails (one failure says the promise broke; more would bury it). */
static void during_check(simt_ctx *c, size_t i)
{
    const sc_during *d = &c->run->during[i];
    if (c->check_failed[i]) return;
    cJSON *failures = cJSON_CreateArray(), *lines = cJSON_CreateArray();
    char *where =
        rs_xasprintf("during before-call %s, matching call %d", d->before_call, c->during_seen[i]);
    expect_state_now(c->w, &d->action, where, failures, lines);
    free(where);
    int k = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, failures)
    {
        const cJSON *at = cJSON_GetArrayItem(lines, k++);
        expect_during_failure_add(c->w, c->run_name, at->valueint, f->valuestring);
    }
    c->check_failed[i] = k > 0;
    cJSON_Delete(failures);
    cJSON_Delete(lines);
}

void simt_during(simt_ctx *c, const char *opname)
{
    const sc_run *run = c->run;
    for (size_t i = 0; run && i < run->n_during; i++) {
        const sc_during *d = &run->during[i];
        if (!simt_hit(d->before_call, opname, &c->during_seen[i], d->nth, d->and_after)) continue;
        c->during_fired[i] = true;
        if (d->action.lines) {
            during_check(c, i);
            continue;
        }
        rs_err e = {0};
        long long rev = store_revision(c->w->st);
        if (simw_apply_event(c->w, &d->action, &e) != RS_OK && !c->during_error[i])
            c->during_error[i] = rs_xstrdup(e.msg);
        note_foreign(c, &d->action, rev);
    }
}
