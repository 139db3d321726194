/*
 * live_oracle.c — run liveness from a configured command (see the header).
 *
 * `--recover-fences` releases another run's fences only when that run is
 * provably over (DESIGN §3.4). A wrong "terminal" would let this run write
 * beside a live deploy; a wrong "live" only refuses. So every doubt is a
 * refusal: the command runs without a shell (the run id is digits, but the
 * template is configuration, and configuration is not trusted to quote),
 * its answer must be exactly the JSON this module knows, and the attempt
 * it names must be the holder's.
 */
#include "core/live/live_oracle.h"

#include "core/live/live_talos_exec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LO_WORDS_MAX 64

struct live_oracle {
    char **words; /* the template, split; NULL when no command is configured */
    size_t n;
    int64_t timeout_ms;
};

/* The variables `gh` needs to answer (its own token among them: it is gh's
 * credential, handed to gh, never the registry credential). */
static const char *const lo_env_extra[] = {
    "GH_TOKEN", "GITHUB_TOKEN",  "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "GH_HOST",
    "GH_REPO",  "GH_CONFIG_DIR", "GITHUB_REPOSITORY",   "GITHUB_SERVER_URL",       "GITHUB_API_URL",
    NULL};

void live_words_free(char **w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(w[i]);
    free(w);
}

/* Splits a template into words: blanks separate, '...' is literal, "..."
 * honours \" and \\, a backslash outside quotes takes the next byte. */
rs_code live_words_split(const char *t, const char *what, char ***out, size_t *n, rs_err *e)
{
    char **w = rs_xcalloc(LO_WORDS_MAX, sizeof *w);
    size_t k = 0, len = strlen(t);
    char *buf = rs_xmalloc(len + 1);
    const char *p = t;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p) break;
        size_t b = 0;
        while (*p && *p != ' ' && *p != '\t') {
            char q = *p;
            if (q == '\'' || q == '"') {
                p++;
                while (*p && *p != q) {
                    if (q == '"' && *p == '\\' && (p[1] == '"' || p[1] == '\\')) p++;
                    buf[b++] = *p++;
                }
                if (*p != q) goto unbalanced;
                p++;
            } else if (q == '\\' && p[1]) {
                buf[b++] = p[1];
                p += 2;
            } else {
                buf[b++] = *p++;
            }
        }
        if (k + 1 >= LO_WORDS_MAX) {
            free(buf);
            live_words_free(w, k);
            return rs_fail(e, RS_USAGE, "%s: more than %d words", what, LO_WORDS_MAX - 1);
        }
        w[k++] = rs_xasprintf("%.*s", (int)b, buf);
    }
    free(buf);
    *out = w;
    *n = k;
    return RS_OK;
unbalanced:
    free(buf);
    live_words_free(w, k);
    return rs_fail(e, RS_USAGE, "%s: an unbalanced quote", what);
}

rs_code live_oracle_open(const live_oracle_opts *o, live_oracle **out, rs_err *e)
{
    *out = NULL;
    if (o->timeout_ms < 0) return rs_fail(e, RS_USAGE, "the liveness timeout must be positive");
    live_oracle *lo = rs_xcalloc(1, sizeof *lo);
    lo->timeout_ms = o->timeout_ms ? o->timeout_ms : LIVE_ORACLE_TIMEOUT_MS_DEFAULT;
    if (o->command && o->command[0]) {
        rs_code rc = live_words_split(o->command, "liveness command", &lo->words, &lo->n, e);
        /* H22: a re-run reuses the run id, so a query without the attempt
         * answers for the newest one, which may vouch for a live older one. */
        bool has_run = false, has_attempt = false;
        for (size_t i = 0; rc == RS_OK && i < lo->n; i++) {
            has_run = has_run || strstr(lo->words[i], "{run}") != NULL;
            has_attempt = has_attempt || strstr(lo->words[i], "{attempt}") != NULL;
        }
        if (rc == RS_OK && (lo->n == 0 || !has_run || !has_attempt))
            rc = rs_fail(e, RS_USAGE,
                         "liveness command: the template must name both {run} and {attempt}");
        if (rc != RS_OK) {
            live_oracle_close(lo);
            return rc;
        }
    }
    *out = lo;
    return RS_OK;
}

void live_oracle_close(live_oracle *o)
{
    if (!o) return;
    live_words_free(o->words, o->n);
    free(o);
}

/* word with every {run} and {attempt} replaced (run: at most 31 digits,
 * attempt at most 6, so a 5-byte placeholder grows at most 7 times). */
static char *lo_subst(const char *word, const char *run, const char *attempt)
{
    char *out = rs_xmalloc(strlen(word) * 7 + 1), *o = out;
    for (const char *p = word; *p;) {
        if (strncmp(p, "{run}", 5) == 0) {
            o += sprintf(o, "%s", run);
            p += 5;
        } else if (strncmp(p, "{attempt}", 9) == 0) {
            o += sprintf(o, "%s", attempt);
            p += 9;
        } else {
            *o++ = *p++;
        }
    }
    *o = '\0';
    return out;
}

static const char *const lo_conclusions[] = {
    "success",         "failure", "cancelled", "skipped",         "timed_out",
    "action_required", "neutral", "stale",     "startup_failure", NULL};
static const char *const lo_live_states[] = {"queued",    "in_progress", "waiting",
                                             "requested", "pending",     NULL};

static bool lo_in(const char *s, const char *const *set)
{
    for (size_t i = 0; set[i]; i++)
        if (strcmp(s, set[i]) == 0) return true;
    return false;
}

rs_code live_oracle_parse(const char *text, size_t len, int attempt, bool *terminal, rs_err *e)
{
    const char *end = NULL;
    if (memchr(text, '\0', len)) return rs_fail(e, RS_FAILED, "liveness answer holds a NUL byte");
    cJSON *doc = cJSON_ParseWithLengthOpts(text, len, &end, false);
    size_t used = doc && end ? (size_t)(end - text) : 0;
    while (doc && used < len && strchr(" \t\r\n", text[used]))
        used++;
    const char *problem = !doc || used != len    ? "it is not one JSON document"
                          : !cJSON_IsObject(doc) ? "it is not a JSON object"
                                                 : NULL;
    const char *status = NULL, *conclusion = NULL;
    for (const cJSON *it = problem ? NULL : doc->child; it && !problem; it = it->next) {
        const char **slot = strcmp(it->string, "status") == 0       ? &status
                            : strcmp(it->string, "conclusion") == 0 ? &conclusion
                                                                    : NULL;
        if (slot) {
            if (*slot || !cJSON_IsString(it))
                problem = "status/conclusion repeated or not strings";
            else
                *slot = it->valuestring;
        } else if (strcmp(it->string, "attempt") == 0) {
            if (!cJSON_IsNumber(it) || it->valuedouble != (double)attempt)
                problem = "it names another attempt";
        } else {
            problem = "it has a member other than status, conclusion and attempt";
        }
    }
    if (!problem && (!status || !conclusion)) problem = "it lacks status or conclusion";
    if (!problem) {
        if (strcmp(status, "completed") == 0 && lo_in(conclusion, lo_conclusions))
            *terminal = true;
        else if (lo_in(status, lo_live_states) && conclusion[0] == '\0')
            *terminal = false;
        else
            problem = "its status and conclusion are not a state this version knows";
    }
    cJSON_Delete(doc);
    if (problem) return rs_fail(e, RS_FAILED, "liveness answer not understood: %s", problem);
    return RS_OK;
}

static int lo_fail(rs_resp *resp, int status, rs_sent sent, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int lo_fail(rs_resp *resp, int status, rs_sent sent, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(resp->error, sizeof resp->error, fmt, ap);
    va_end(ap);
    resp->status = status;
    resp->sent = sent;
    if (status != 0) {
        resp->body = cJSON_CreateObject();
        cJSON_AddStringToObject(resp->body, "error", resp->error);
    }
    return status;
}

/* "gh<id>.<attempt>" -> id, attempt (digits, bounded) and the attempt's
 * number; false otherwise. */
static bool lo_ref(const char *ref, char *run, size_t rcap, char *attempt, size_t acap,
                   int *attempt_no)
{
    if (!ref || strncmp(ref, "gh", 2) != 0) return false;
    size_t id = strspn(ref + 2, "0123456789");
    const char *at = ref + 2 + id;
    size_t an = *at == '.' ? strspn(at + 1, "0123456789") : 0;
    if (id == 0 || id >= rcap || an == 0 || an >= acap || an > 6 || at[1 + an] != '\0')
        return false;
    snprintf(run, rcap, "%.*s", (int)id, ref + 2);
    snprintf(attempt, acap, "%.*s", (int)an, at + 1);
    /* At most 6 digits (checked above): the number fits an int, and strtol
     * cannot fail on what strspn accepted. */
    *attempt_no = (int)strtol(attempt, NULL, 10);
    return true;
}

int live_oracle_call(live_oracle *o, const rs_req *req, rs_resp *resp)
{
    rs_resp_init(resp);
    char run[32], attempt[16];
    int attempt_no = 0;
    if (req->op != RS_OP_RUN_LIVENESS)
        return lo_fail(resp, 400, RS_SENT_NO, "the liveness oracle answers run.liveness only");
    if (!o->words)
        return lo_fail(resp, 0, RS_SENT_NO,
                       "no liveness command is configured (liveness.command, "
                       "--liveness-command), so no run can be proven over");
    if (!lo_ref(req->target, run, sizeof run, attempt, sizeof attempt, &attempt_no))
        return lo_fail(resp, 422, RS_SENT_NO,
                       "run reference %s names no GitHub Actions run the liveness command "
                       "can ask about",
                       req->target ? req->target : "(none)");
    char **argv = rs_xcalloc(o->n + 1, sizeof *argv);
    for (size_t i = 0; i < o->n; i++)
        argv[i] = lo_subst(o->words[i], run, attempt);
    live_exec_result x;
    rs_err e;
    rs_err_clear(&e);
    rs_code rc = live_exec_run(argv, lo_env_extra, o->timeout_ms, LIVE_ORACLE_OUTPUT_MAX, &x, &e);
    bool terminal = false;
    if (rc != RS_OK)
        lo_fail(resp, 0, RS_SENT_NO, "liveness command: %s", e.msg);
    else if (x.timed_out || x.overflow || x.exit_code != 0)
        lo_fail(resp, x.timed_out || x.overflow ? 0 : 502, RS_SENT_UNKNOWN,
                "liveness command for %s %s", req->target,
                x.timed_out  ? "timed out"
                : x.overflow ? "printed more than the output bound"
                             : "failed (non-zero exit)");
    else if (live_oracle_parse(x.out, x.out_len, attempt_no, &terminal, &e) != RS_OK)
        lo_fail(resp, 502, RS_SENT_YES, "run %s: %s", req->target, e.msg);
    else {
        resp->status = 200;
        resp->sent = RS_SENT_YES;
        resp->body = cJSON_CreateObject();
        cJSON_AddBoolToObject(resp->body, "terminal", terminal);
    }
    live_exec_result_free(&x);
    live_words_free(argv, o->n);
    return resp->status;
}
