/*
 * serve_call.c — the door every handler calls the sim root through, and the
 * façade's own test-only endpoints (`/reassert/v1/...`): the virtual clock
 * (now, sleep = advance), entropy, the run's pid, and batch costing.
 *
 * The one idea: a live run against the façade must cost what the in-process
 * run costs, call for call. The in-process root charges a batch of n reads
 * ceil(n / parallelism) round trips — the first call of each group of
 * `parallelism` pays one, the rest ride along. A live root in test-clock mode
 * announces its batch (`{"begin": n, "parallelism": P}`) before sending the
 * n requests and closes it (`{"end": true}`) after; the door then charges the
 * calls that reach the root exactly so, whatever endpoint they came through
 * (Kubernetes, OpenBao, registry, Talos).
 */
#include "sim/serve/serve_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static serve_server *server_of(rs_transport *t)
{
    return (serve_server *)t->ctx;
}

static int door_call(rs_transport *t, const rs_req *req, rs_resp *resp)
{
    serve_server *s = server_of(t);
    serve_batch *b = &s->batch;
    if (!b->open) return s->sim->call(s->sim, req, resp);
    bool pays = b->made % b->parallelism == 0;
    b->made++;
    if (b->made >= b->n) b->open = false; /* every announced call arrived */
    return pays ? s->sim->call(s->sim, req, resp) : sim_transport_call_riding(s->sim, req, resp);
}

static void door_call_batch(rs_transport *t, const rs_req *reqs, rs_resp *resps, size_t n,
                            int parallelism)
{
    serve_server *s = server_of(t);
    s->sim->call_batch(s->sim, reqs, resps, n, parallelism);
}

static int64_t door_now_ms(rs_transport *t)
{
    serve_server *s = server_of(t);
    return s->sim->now_ms(s->sim);
}

static void door_sleep_ms(rs_transport *t, int64_t ms)
{
    serve_server *s = server_of(t);
    s->sim->sleep_ms(s->sim, ms);
}

static uint64_t door_entropy(rs_transport *t)
{
    serve_server *s = server_of(t);
    return s->sim->entropy(s->sim);
}

static int door_pid(rs_transport *t)
{
    serve_server *s = server_of(t);
    return s->sim->pid(s->sim);
}

void serve_door_init(serve_server *s)
{
    s->door = (rs_transport){.version = RS_TRANSPORT_VERSION,
                             .name = "serve",
                             .ctx = s,
                             .call = door_call,
                             .call_batch = door_call_batch,
                             .now_ms = door_now_ms,
                             .sleep_ms = door_sleep_ms,
                             .entropy = door_entropy,
                             .pid = door_pid,
                             .close = NULL};
}

/* ---- /reassert/v1/... --------------------------------------------------- */

/* An integral JSON number within [lo, hi] (no fraction, no overflow). */
static bool json_int(const cJSON *j, long long lo, long long hi, long long *out)
{
    if (!cJSON_IsNumber(j)) return false;
    double v = j->valuedouble;
    if (!(v >= (double)lo && v <= (double)hi)) return false;
    long long i = (long long)v;
    if ((double)i != v) return false;
    *out = i;
    return true;
}

static cJSON *now_body(serve_server *s)
{
    cJSON *b = cJSON_CreateObject();
    cJSON_AddNumberToObject(b, "now_ms", (double)s->door.now_ms(&s->door));
    return b;
}

static void facade_sleep(serve_server *s, cJSON *body, serve_answer *a)
{
    long long ms = 0;
    if (!json_int(cJSON_GetObjectItemCaseSensitive(body, "ms"), 0, SERVE_SLEEP_MAX_MS, &ms) ||
        cJSON_GetArraySize(body) != 1) {
        serve_answer_errors(a, 400, "sleep takes {\"ms\": N}, 0 <= N <= 366 days");
        return;
    }
    s->door.sleep_ms(&s->door, ms);
    serve_answer_json(a, 200, now_body(s));
}

static void facade_batch(serve_server *s, cJSON *body, serve_answer *a)
{
    serve_batch *b = &s->batch;
    const cJSON *end = cJSON_GetObjectItemCaseSensitive(body, "end");
    if (end) {
        if (!cJSON_IsTrue(end) || cJSON_GetArraySize(body) != 1) {
            serve_answer_errors(a, 400, "a batch ends with {\"end\": true}");
            return;
        }
        cJSON *r = cJSON_CreateObject();
        cJSON_AddNumberToObject(r, "calls", (double)b->made);
        b->open = false;
        b->n = b->made = 0;
        serve_answer_json(a, 200, r);
        return;
    }
    long long n = 0, p = 0;
    if (!json_int(cJSON_GetObjectItemCaseSensitive(body, "begin"), 1, SERVE_BATCH_MAX, &n) ||
        !json_int(cJSON_GetObjectItemCaseSensitive(body, "parallelism"), 1,
                  RS_TRANSPORT_PARALLELISM_MAX, &p) ||
        cJSON_GetArraySize(body) != 2) {
        serve_answer_errors(a, 400,
                            "a batch begins with {\"begin\": n, \"parallelism\": P}, "
                            "1 <= n <= 1048576, 1 <= P <= 256");
        return;
    }
    if (b->open) {
        char msg[160];
        snprintf(msg, sizeof msg, "a batch is open (%ld of %ld calls made); end it first", b->made,
                 b->n);
        serve_answer_errors(a, 409, msg);
        return;
    }
    *b = (serve_batch){.open = true, .n = (long)n, .parallelism = (long)p, .made = 0};
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, "begin", (double)n);
    cJSON_AddNumberToObject(r, "parallelism", (double)p);
    serve_answer_json(a, 200, r);
}

/* The façade's endpoints move the world's clock (sleep) and change what the
 * next calls cost (batch): with --token-file they need the same bearer as
 * the Kubernetes paths, or any local process could skew a run under test. */
void serve_facade(serve_server *s, const serve_http *h, const char *rest, serve_answer *a)
{
    if (!serve_bearer_ok(s, h)) {
        serve_answer_errors(a, 401, "Unauthorized: the facade endpoints need the bearer token");
        return;
    }
    bool get = serve_method_is(h, "GET"), post = serve_method_is(h, "POST");
    if (strcmp(rest, "clock") == 0 && get) {
        serve_answer_json(a, 200, now_body(s));
    } else if (strcmp(rest, "entropy") == 0 && get) {
        char v[32];
        snprintf(v, sizeof v, "%" PRIu64, s->door.entropy(&s->door));
        cJSON *b = cJSON_CreateObject();
        cJSON_AddStringToObject(b, "value", v);
        serve_answer_json(a, 200, b);
    } else if (strcmp(rest, "pid") == 0 && get) {
        cJSON *b = cJSON_CreateObject();
        cJSON_AddNumberToObject(b, "pid", s->door.pid(&s->door));
        serve_answer_json(a, 200, b);
    } else if ((strcmp(rest, "sleep") == 0 || strcmp(rest, "batch") == 0) && post) {
        bool malformed = false;
        cJSON *body = serve_body_json(h, &malformed);
        if (!cJSON_IsObject(body))
            serve_answer_errors(a, 400, "the request body must be a JSON object");
        else if (strcmp(rest, "sleep") == 0)
            facade_sleep(s, body, a);
        else
            facade_batch(s, body, a);
        cJSON_Delete(body);
    } else if (strcmp(rest, "clock") == 0 || strcmp(rest, "entropy") == 0 ||
               strcmp(rest, "pid") == 0 || strcmp(rest, "sleep") == 0 ||
               strcmp(rest, "batch") == 0) {
        serve_answer_errors(a, 405, "method not allowed");
    } else {
        serve_answer_errors(a, 404, "no such facade endpoint");
    }
}
