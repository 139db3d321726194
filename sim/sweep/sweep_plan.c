/*
 * sweep_plan.c — a plan as text ("12:fail=503,57:crash", the reproduce
 * command's --plan) and as the scenario entries it becomes.
 *
 * A fault names a call by its index in the run's fault-free call log; it
 * becomes a §5 fault or `during:` entry on that call's exact operation name
 * and its occurrence (nth) among the calls of that name. Once an earlier
 * fault changed the run's path, a later entry may never be reached: that is
 * part of the search, never a failure.
 */
#include "sim/sweep/sweep_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool parse_num(const char *s, size_t len, long long max, long long *out)
{
    if (len == 0 || len > 12) return false;
    long long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (s[i] - '0');
    }
    if (v > max) return false;
    *out = v;
    return true;
}

static bool parse_effect(const char *eff, size_t len, const sw_menu *m, sw_fault *f, char *why,
                         size_t whylen)
{
    long long v = 0;
#define IS(lit) (len == strlen(lit) && strncmp(eff, lit, len) == 0)
#define HAS(lit) (len > strlen(lit) && strncmp(eff, lit, strlen(lit)) == 0)
    if (IS("crash")) {
        f->kind = SW_CRASH;
    } else if (IS("timeout")) {
        f->kind = SW_TIMEOUT;
    } else if (IS("lost-response")) {
        f->kind = SW_LOST;
    } else if (HAS("fail=")) {
        if (!parse_num(eff + 5, len - 5, 599, &v) || v < 400) {
            snprintf(why, whylen, "fail=<status> takes an HTTP status from 400 to 599");
            return false;
        }
        f->kind = SW_FAIL;
        f->status = (int)v;
    } else if (HAS("latency=")) {
        if (!parse_num(eff + 8, len - 8, SW_LATENCY_MS_MAX, &v) || v < 1) {
            snprintf(why, whylen, "latency=<ms> takes 1 to %d milliseconds", SW_LATENCY_MS_MAX);
            return false;
        }
        f->kind = SW_LATENCY;
        f->ms = v;
    } else if (HAS("perturb=")) {
        char name[128];
        size_t n = len - 8 < sizeof name - 1 ? len - 8 : sizeof name - 1;
        memcpy(name, eff + 8, n);
        name[n] = '\0';
        long at = sw_menu_find(m, name);
        if (at < 0) {
            snprintf(why, whylen, "perturb=%s: not on the perturbation menu", name);
            return false;
        }
        f->kind = SW_EVENT;
        f->menu = (size_t)at;
    } else {
        snprintf(why, whylen,
                 "unknown effect (known: crash, fail=<status>, timeout, lost-response, "
                 "latency=<ms>, perturb=<menu name>)");
        return false;
    }
    return true;
#undef IS
#undef HAS
}

bool sw_plan_parse(const char *spec, const sw_menu *m, sw_plan *p, char *why, size_t whylen)
{
    memset(p, 0, sizeof *p);
    const char *s = spec;
    while (*s) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        const char *colon = memchr(s, ':', len);
        long long call = 0;
        if (p->n == SW_PLAN_MAX) {
            snprintf(why, whylen, "at most %d faults", SW_PLAN_MAX);
            return false;
        }
        if (!colon || !parse_num(s, (size_t)(colon - s), 1000000000LL, &call)) {
            snprintf(why, whylen, "each fault is <call index>:<effect>");
            return false;
        }
        sw_fault *f = &p->f[p->n];
        f->call = (size_t)call;
        if (!parse_effect(colon + 1, len - (size_t)(colon + 1 - s), m, f, why, whylen))
            return false;
        p->n++;
        if (!end) break;
        s = end + 1;
        if (!*s) {
            snprintf(why, whylen, "a trailing ','");
            return false;
        }
    }
    if (p->n == 0) {
        snprintf(why, whylen, "no fault given");
        return false;
    }
    return true;
}

char *sw_fault_spec(const sw_fault *f, const sw_menu *m)
{
    switch (f->kind) {
    case SW_CRASH:
        return rs_xasprintf("%zu:crash", f->call);
    case SW_FAIL:
        return rs_xasprintf("%zu:fail=%d", f->call, f->status);
    case SW_TIMEOUT:
        return rs_xasprintf("%zu:timeout", f->call);
    case SW_LOST:
        return rs_xasprintf("%zu:lost-response", f->call);
    case SW_LATENCY:
        return rs_xasprintf("%zu:latency=%lld", f->call, (long long)f->ms);
    default:
        return rs_xasprintf("%zu:perturb=%s", f->call, m->items[f->menu].name);
    }
}

char *sw_plan_spec(const sw_plan *p, const sw_menu *m)
{
    char *out = rs_xstrdup("");
    for (size_t i = 0; i < p->n; i++) {
        char *one = sw_fault_spec(&p->f[i], m);
        char *next = rs_xasprintf("%s%s%s", out, i ? "," : "", one);
        free(one);
        free(out);
        out = next;
    }
    return out;
}

void sw_plan_drop(sw_plan *p, size_t i)
{
    memmove(&p->f[i], &p->f[i + 1], (p->n - i - 1) * sizeof p->f[0]);
    p->n--;
}

void sw_base_free(sw_base *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->calls[i]);
    free(b->calls);
    free(b->writes);
    cJSON_Delete(b->failures);
    memset(b, 0, sizeof *b);
}

/* The operation name as a glob that matches only itself. */
static char *glob_exact(const char *op)
{
    char *out = rs_xmalloc(2 * strlen(op) + 1), *o = out;
    for (const char *s = op; *s; s++) {
        if (strchr("*?[\\", *s)) *o++ = '\\';
        *o++ = *s;
    }
    *o = '\0';
    return out;
}

/* nth: the call's occurrence among the calls with its operation name. */
static int nth_of(const sw_base *b, size_t call)
{
    int nth = 0;
    for (size_t i = 0; i <= call && i < b->n; i++)
        if (strcmp(b->calls[i], b->calls[call]) == 0) nth++;
    return nth;
}

/* Ownership: the appended faults' globs and the appended during entries'
 * globs, kinds and args belong to the copy, and so does everything of a
 * follow-up run; the rest is orig's. */
typedef struct sw_run_copy {
    sc_run run;
    size_t own_faults_from, own_during_from;
    bool own_before;
} sw_run_copy;

sc_run *sw_run_with_plan(const sc_run *orig, const sw_plan *p, const sw_base *base,
                         const sw_menu *m)
{
    sw_run_copy *c = rs_xcalloc(1, sizeof *c);
    c->run = *orig;
    c->own_faults_from = orig->n_faults;
    c->own_during_from = orig->n_during;
    c->run.faults = rs_xcalloc(orig->n_faults + p->n + 1, sizeof *c->run.faults);
    c->run.during = rs_xcalloc(orig->n_during + p->n + 1, sizeof *c->run.during);
    if (orig->n_faults) memcpy(c->run.faults, orig->faults, orig->n_faults * sizeof *orig->faults);
    if (orig->n_during) memcpy(c->run.during, orig->during, orig->n_during * sizeof *orig->during);
    for (size_t i = 0; i < p->n; i++) {
        const sw_fault *f = &p->f[i];
        if (f->call >= base->n) continue; /* beyond the run: never reached */
        char *glob = glob_exact(base->calls[f->call]);
        int nth = nth_of(base, f->call);
        if (f->kind == SW_LATENCY || f->kind == SW_EVENT) {
            sc_during *d = &c->run.during[c->run.n_during++];
            d->before_call = glob;
            d->nth = nth;
            if (f->kind == SW_LATENCY) {
                d->action.kind = rs_xstrdup("advance");
                d->action.args = cJSON_CreateObject();
                cJSON_AddNumberToObject(d->action.args, "ms", (double)f->ms);
            } else {
                d->action.kind = rs_xstrdup(m->items[f->menu].ev.kind);
                d->action.args = cJSON_Duplicate(m->items[f->menu].ev.args, true);
            }
            continue;
        }
        sc_fault *sf = &c->run.faults[c->run.n_faults++];
        sf->on = glob;
        sf->nth = nth;
        sf->effect = f->kind == SW_CRASH     ? SC_FAULT_CRASH
                     : f->kind == SW_FAIL    ? SC_FAULT_FAIL
                     : f->kind == SW_TIMEOUT ? SC_FAULT_TIMEOUT
                                             : SC_FAULT_LOST_RESPONSE;
        sf->fail_status = f->status;
    }
    return &c->run;
}

sc_run *sw_run_follow(const sc_run *orig, const char *suffix, const char *terminal_run)
{
    sw_run_copy *c = rs_xcalloc(1, sizeof *c);
    c->run.name = rs_xasprintf("%s-%s", orig->name, suffix);
    c->run.pos = orig->pos;
    c->run.skew_ms = orig->skew_ms; /* the same machine, the same clock */
    c->own_before = true;
    c->run.faults = rs_xcalloc(1, sizeof *c->run.faults);
    c->run.during = rs_xcalloc(1, sizeof *c->run.during);
    if (terminal_run) {
        /* As an operator would: the crashed run is provably terminal, its
         * Lease has run past its duration (a Lease renewed within it
         * refuses recovery, H21), then --recover-fences. */
        c->run.args = rs_xcalloc(2, sizeof *c->run.args);
        c->run.args[0] = rs_xstrdup("--recover-fences");
        c->run.n_args = 1;
        c->run.before = rs_xcalloc(2, sizeof *c->run.before);
        c->run.before[0].kind = rs_xstrdup("advance");
        c->run.before[0].args = cJSON_CreateObject();
        cJSON_AddNumberToObject(c->run.before[0].args, "ms", SW_LEASE_EXPIRY_MS);
        c->run.before[1].kind = rs_xstrdup("runs.terminal");
        c->run.before[1].args = cJSON_CreateArray();
        cJSON_AddItemToArray(c->run.before[1].args, cJSON_CreateString(terminal_run));
        c->run.n_before = 2;
    } else {
        c->run.args = rs_xcalloc(orig->n_args + 1, sizeof *c->run.args);
        for (size_t i = 0; i < orig->n_args; i++)
            c->run.args[i] = rs_xstrdup(orig->args[i]);
        c->run.n_args = orig->n_args;
    }
    return &c->run;
}

void sw_run_free(sc_run *r)
{
    if (!r) return;
    sw_run_copy *c = (sw_run_copy *)r; /* run is the first member */
    for (size_t i = c->own_faults_from; i < r->n_faults; i++)
        free(r->faults[i].on);
    for (size_t i = c->own_during_from; i < r->n_during; i++) {
        free(r->during[i].before_call);
        free(r->during[i].action.kind);
        cJSON_Delete(r->during[i].action.args);
    }
    free(r->faults);
    free(r->during);
    if (c->own_before) {
        free(r->name);
        for (size_t i = 0; i < r->n_args; i++)
            free(r->args[i]);
        free(r->args);
        for (size_t i = 0; i < r->n_before; i++) {
            free(r->before[i].kind);
            cJSON_Delete(r->before[i].args);
        }
        free(r->before);
    }
    free(c);
}
