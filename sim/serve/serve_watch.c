/*
 * serve_watch.c — `?watch=true` on a collection, as the API server's watch
 * cache answers it: a stream of {"type", "object"} lines from a
 * resourceVersion on (none or "0": the current objects as ADDED first),
 * label and field selectors (an object that leaves the selection is
 * DELETED for the watch, one that enters it ADDED), BOOKMARK events with
 * `allowWatchBookmarks=true` (every minute and at the end), the stream
 * ended after `timeoutSeconds` (default 30 minutes, the API server's
 * --min-request-timeout), and a watch from a revision the log no longer
 * holds answered with an ERROR event, 410 Expired "too old resource
 * version", after which a client lists again.
 *
 * The one idea: the world's one global revision orders everything. The
 * store logs every change with the revision it took (store_watch.c); a
 * watch remembers the revision it has seen and, without holding the world
 * lock, waits for the revision to move (serve_server.changed), then reads
 * the changes after it under the lock. A watch never blocks a request.
 */
#define _GNU_SOURCE /* POLLRDHUP (a watch whose client left) */
#include "sim/serve/serve_int.h"

#include "core/cred/cred.h"
#include "sim/store/store.h"
#include "sim/store/store_select.h"

#include <errno.h>
#include <microhttpd.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WATCH_DEFAULT_TIMEOUT_S 1800 /* --min-request-timeout */
#define WATCH_BOOKMARK_S 60          /* the watch cache's bookmark interval */
#define WATCH_BATCH 256              /* changes read under the lock at a time */
#define WATCH_SLICE_MS 1000          /* how often a waiting watch looks at its client */

struct serve_watch {
    serve_server *s;
    int fd; /* the client's socket: a watch whose client left ends */
    char *kind, *ns;
    store_selector *labels, *fields;
    bool bookmarks, table;
    long long rev;      /* every change up to this revision is sent */
    long long deadline; /* monotonic ms */
    long long next_bookmark;
    bool done;
    char *buf; /* what is not yet handed to libmicrohttpd */
    size_t len, off, cap;
    char *include; /* includeObject (a Table watch's rows) */
};

static long long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Events carry Secrets: the buffer is wiped before it is freed or grown. */
static void watch_put(serve_watch *w, const char *text)
{
    size_t n = strlen(text);
    if (w->off == w->len) w->off = w->len = 0;
    if (w->len + n + 2 > w->cap) {
        size_t cap = w->cap ? w->cap : 8192;
        while (cap < w->len + n + 2)
            cap *= 2;
        char *grown = rs_xmalloc(cap);
        if (w->buf) {
            memcpy(grown, w->buf, w->len);
            cred_bytes_wipe_free(w->buf, w->cap);
        }
        w->buf = grown;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, text, n);
    w->len += n;
    w->buf[w->len++] = '\n';
}

static void watch_event(serve_watch *w, const char *type, cJSON *obj)
{
    cJSON *ev = cJSON_CreateObject();
    cJSON_AddStringToObject(ev, "type", type);
    if (w->table && strcmp(type, "ERROR") != 0) {
        /* A Table watch's objects are Tables (a bookmark's has no rows). */
        cJSON *items = cJSON_CreateArray();
        if (strcmp(type, "BOOKMARK") != 0) cJSON_AddItemToArray(items, cJSON_Duplicate(obj, true));
        const char *rv = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "resourceVersion"));
        cJSON *t = serve_table_items(w->s, w->kind, items, rv, w->include);
        cred_json_wipe_delete(items);
        cred_json_wipe_delete(obj);
        obj = t;
    }
    cJSON_AddItemToObject(ev, "object", obj);
    char *text = cJSON_PrintUnformatted(ev);
    watch_put(w, text);
    cred_text_wipe_free(text);
    cred_json_wipe_delete(ev);
}

static void watch_bookmark(serve_watch *w, bool initial_end)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", w->kind);
    cJSON_AddStringToObject(o, "apiVersion", store_api_version(w->kind));
    cJSON *md = cJSON_AddObjectToObject(o, "metadata");
    char rv[32];
    snprintf(rv, sizeof rv, "%lld", w->rev);
    cJSON_AddStringToObject(md, "resourceVersion", rv);
    if (initial_end)
        cJSON_AddStringToObject(cJSON_AddObjectToObject(md, "annotations"),
                                "k8s.io/initial-events-end", "true");
    watch_event(w, "BOOKMARK", o);
}

static bool watch_selects(const serve_watch *w, const cJSON *obj)
{
    if (!obj) return false;
    if (w->ns) {
        const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
        const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "namespace"));
        if (!ns || strcmp(ns, w->ns) != 0) return false;
    }
    return store_selector_match(w->labels, obj) && store_selector_match(w->fields, obj);
}

static void set_rv(cJSON *obj, long long rev)
{
    char rv[32];
    snprintf(rv, sizeof rv, "%lld", rev);
    cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    if (cJSON_IsObject(md))
        cJSON_ReplaceItemInObjectCaseSensitive(md, "resourceVersion", cJSON_CreateString(rv));
}

/* One change as this watch sees it: through its selection. */
static void watch_on_change(const store_event *ev, void *arg)
{
    serve_watch *w = arg;
    if (ev->rev > w->rev) w->rev = ev->rev;
    bool now = strcmp(ev->type, "DELETED") != 0 && watch_selects(w, ev->obj);
    bool before = ev->prev && watch_selects(w, ev->prev);
    const char *type = now && before ? "MODIFIED" : now ? "ADDED" : before ? "DELETED" : NULL;
    if (!type) return;
    cJSON *obj = cJSON_Duplicate(ev->obj, true);
    if (strcmp(ev->type, "DELETED") == 0) set_rv(obj, ev->rev); /* the deletion's revision */
    watch_event(w, type, obj);
}

/* Under the lock: the changes since w->rev, at most WATCH_BATCH at a time. */
static void watch_catch_up(serve_watch *w)
{
    sqlite3 *db = sim_world_db(w->s->w);
    long long upto = store_revision(sim_world_store(w->s->w));
    for (;;) {
        int n = store_watch_events(db, w->kind, w->rev, WATCH_BATCH, watch_on_change, w);
        if (n < WATCH_BATCH) break;
    }
    if (upto > w->rev) w->rev = upto; /* nothing of this kind up to there */
}

/* True when the client has closed its side (or the socket failed). */
static bool client_gone(int fd)
{
    if (fd < 0) return false;
    struct pollfd p = {.fd = fd, .events = POLLRDHUP};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

/* Waits (without the world lock) until there is something to send. */
static void watch_fill(serve_watch *w)
{
    serve_server *s = w->s;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        long long now = mono_ms();
        if (s->stopping || now >= w->deadline) {
            if (w->bookmarks && !s->stopping) watch_bookmark(w, false);
            w->done = true;
            break;
        }
        if (s->rev_seen > w->rev) {
            long long before = w->len;
            watch_catch_up(w);
            if ((long long)w->len > before) break;
            continue;
        }
        if (w->bookmarks && now >= w->next_bookmark) {
            w->next_bookmark = now + WATCH_BOOKMARK_S * 1000;
            watch_bookmark(w, false);
            break;
        }
        if (client_gone(w->fd)) {
            w->done = true;
            break;
        }
        long long until = w->deadline;
        if (w->bookmarks && w->next_bookmark < until) until = w->next_bookmark;
        if (until > now + WATCH_SLICE_MS) until = now + WATCH_SLICE_MS;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        long long ns = ts.tv_nsec + (until - now) * 1000000LL;
        ts.tv_sec += ns / 1000000000LL;
        ts.tv_nsec = ns % 1000000000LL;
        int rc = pthread_cond_timedwait(&s->changed, &s->lock, &ts);
        (void)rc;
    }
    pthread_mutex_unlock(&s->lock);
}

static ssize_t watch_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    serve_watch *w = cls;
    while (w->off == w->len) {
        if (w->done)
            return client_gone(w->fd) ? MHD_CONTENT_READER_END_WITH_ERROR
                                      : MHD_CONTENT_READER_END_OF_STREAM;
        watch_fill(w);
    }
    size_t n = w->len - w->off < max ? w->len - w->off : max;
    memcpy(buf, w->buf + w->off, n);
    memset(w->buf + w->off, 0, n);
    w->off += n;
    return (ssize_t)n;
}

void serve_watch_free(serve_watch *w)
{
    if (!w) return;
    free(w->kind);
    free(w->ns);
    free(w->include);
    store_selector_free(w->labels);
    store_selector_free(w->fields);
    if (w->buf) cred_bytes_wipe_free(w->buf, w->cap);
    free(w);
}

static void watch_free_cb(void *cls)
{
    serve_watch_free(cls);
}

void *serve_watch_response(serve_watch *w)
{
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, watch_read, w, watch_free_cb);
    if (!r) serve_watch_free(w);
    return r;
}

/* A query parameter as a bounded non-negative integer; -1 absent, -2 bad. */
static long long arg_count(const serve_http *h, const char *name, long long max)
{
    const char *v = serve_arg(h, name);
    if (!v) return -1;
    char *end = NULL;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (!v[0] || *end || errno || n < 0 || n > max) return -2;
    return n;
}

void serve_watch_open(serve_server *s, const serve_http *h, const char *kind, const char *ns,
                      serve_answer *a)
{
    sqlite3 *db = sim_world_db(s->w);
    long long timeout = arg_count(h, "timeoutSeconds", 365LL * 24 * 3600);
    const char *rv_text = serve_arg(h, "resourceVersion");
    long long rv = -1;
    if (rv_text && rv_text[0]) {
        char *end = NULL;
        errno = 0;
        rv = strtoll(rv_text, &end, 10);
        if (*end || errno || rv < 0) {
            serve_answer_status(a, 400, "BadRequest", "invalid resource version: %.64s", rv_text);
            return;
        }
    }
    if (timeout == -2) {
        serve_answer_status(a, 400, "BadRequest",
                            "timeoutSeconds must be a whole number of seconds");
        return;
    }
    char why[256];
    serve_watch *w = rs_xcalloc(1, sizeof *w);
    w->s = s;
    w->kind = rs_xstrdup(kind);
    w->ns = ns && ns[0] ? rs_xstrdup(ns) : NULL;
    w->labels = store_selector_parse_labels(serve_arg(h, "labelSelector"), why, sizeof why);
    w->fields = w->labels
                    ? store_selector_parse_fields(serve_arg(h, "fieldSelector"), why, sizeof why)
                    : NULL;
    if (!w->labels || !w->fields ||
        !store_selector_fields_supported(w->fields, kind, why, sizeof why)) {
        serve_watch_free(w);
        serve_answer_status(a, 400, "BadRequest", "%s", why);
        return;
    }
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(h->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    w->fd = ci ? ci->connect_fd : -1;
    w->bookmarks = serve_arg_true(h, "allowWatchBookmarks");
    w->table = serve_table_wanted(h);
    w->include = serve_arg(h, "includeObject") ? rs_xstrdup(serve_arg(h, "includeObject")) : NULL;
    long long now = mono_ms();
    w->deadline = now + (timeout >= 0 ? timeout : WATCH_DEFAULT_TIMEOUT_S) * 1000;
    w->next_bookmark = now + WATCH_BOOKMARK_S * 1000;
    bool initial = rv <= 0 || serve_arg_true(h, "sendInitialEvents");
    if (initial) {
        /* The current objects first, as ADDED (the list the client missed). */
        cJSON *list = NULL;
        int code = store_list(sim_world_store(s->w), kind, w->ns, serve_arg(h, "labelSelector"),
                              serve_arg(h, "fieldSelector"), &list);
        if (code != 200) {
            serve_watch_free(w);
            serve_answer_json(a, code, list);
            return;
        }
        w->rev = store_revision(sim_world_store(s->w));
        cJSON *item;
        cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(list, "items"))
        {
            watch_event(w, "ADDED", cJSON_Duplicate(item, true));
        }
        cred_json_wipe_delete(list);
        if (serve_arg_true(h, "sendInitialEvents") && w->bookmarks) watch_bookmark(w, true);
    } else if (rv < store_watch_horizon(db)) {
        cJSON *st = store_status(410, "Expired", "too old resource version: %lld (%lld)", rv,
                                 store_watch_horizon(db));
        watch_event(w, "ERROR", st);
        w->done = true;
    } else {
        w->rev = rv;
        watch_catch_up(w);
    }
    a->status = 200;
    a->ctype = "application/json";
    a->watch = w;
}
