/*
 * store_cache.c — the objects of a store whose connection one process owns
 * (an in-memory world), kept parsed beside their rows.
 *
 * The one idea: a read that parses the row's JSON text again on every call
 * was a fifth of a sim run's time. Every change to the objects table goes
 * through the store (store_row.c), which keeps this table in step: a write
 * puts its object here, an erase drops it, a rolled-back SAVEPOINT forgets
 * everything. What is kept is exactly what parsing the stored text gives
 * (store_cache_put refuses an object whose text would not parse back to
 * it), so a copy from here and a parse of the row are the same object.
 */
#include "sim/store/store_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct store_entry {
    char *key; /* kind \0 ns \0 name */
    size_t klen;
    uint64_t hash;
    cJSON *obj;
    struct store_entry *next;
} store_entry;

struct store_cache {
    store_entry **bucket;
    size_t cap; /* a power of two */
    size_t n;
};

#define STORE_CACHE_CAP0 256

store_cache *store_cache_new(void)
{
    store_cache *c = rs_xcalloc(1, sizeof *c);
    c->cap = STORE_CACHE_CAP0;
    c->bucket = rs_xcalloc(c->cap, sizeof *c->bucket);
    return c;
}

static void entry_free(store_entry *e)
{
    cJSON_Delete(e->obj);
    free(e->key);
    free(e);
}

void store_cache_clear(store_cache *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->cap; i++) {
        for (store_entry *e = c->bucket[i], *next; e; e = next) {
            next = e->next;
            entry_free(e);
        }
        c->bucket[i] = NULL;
    }
    c->n = 0;
}

void store_cache_free(store_cache *c)
{
    if (!c) return;
    store_cache_clear(c);
    free(c->bucket);
    free(c);
}

/* kind \0 ns \0 name into buf (NULL when over its size); *len its length. */
static const char *cache_key(char *buf, size_t size, const char *kind, const char *ns,
                             const char *name, size_t *len)
{
    size_t a = strlen(kind) + 1, b = strlen(ns) + 1, n = strlen(name);
    if (a + b + n > size) return NULL;
    memcpy(buf, kind, a);
    memcpy(buf + a, ns, b);
    memcpy(buf + a + b, name, n);
    *len = a + b + n;
    return buf;
}

static uint64_t cache_hash(const char *k, size_t n)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)k[i]) * 1099511628211ULL;
    return h;
}

static store_entry **cache_slot(store_cache *c, const char *k, size_t n, uint64_t h)
{
    store_entry **p = &c->bucket[h & (c->cap - 1)];
    while (*p && !((*p)->hash == h && (*p)->klen == n && memcmp((*p)->key, k, n) == 0))
        p = &(*p)->next;
    return p;
}

static void cache_grow(store_cache *c)
{
    size_t cap = c->cap * 2;
    store_entry **b = rs_xcalloc(cap, sizeof *b);
    for (size_t i = 0; i < c->cap; i++) {
        for (store_entry *e = c->bucket[i], *next; e; e = next) {
            next = e->next;
            e->next = b[e->hash & (cap - 1)];
            b[e->hash & (cap - 1)] = e;
        }
    }
    free(c->bucket);
    c->bucket = b;
    c->cap = cap;
}

const cJSON *store_cache_get(store_cache *c, const char *kind, const char *ns, const char *name)
{
    char buf[1024];
    size_t n = 0;
    const char *k = cache_key(buf, sizeof buf, kind, ns, name, &n);
    if (!c || !k) return NULL;
    store_entry *e = *cache_slot(c, k, n, cache_hash(k, n));
    return e ? e->obj : NULL;
}

void store_cache_drop(store_cache *c, const char *kind, const char *ns, const char *name)
{
    char buf[1024];
    size_t n = 0;
    const char *k = cache_key(buf, sizeof buf, kind, ns, name, &n);
    if (!c) return;
    if (!k) {
        store_cache_clear(c); /* a key this long is never kept, but be sure */
        return;
    }
    store_entry **p = cache_slot(c, k, n, cache_hash(k, n));
    if (!*p) return;
    store_entry *e = *p;
    *p = e->next;
    entry_free(e);
    c->n--;
}

/* Whether the text cJSON prints for v parses back to v itself, with every
 * number as the parser sets it (valueint, the sign of zero: fixed here).
 * Raw text does not, nor a number that is not an integer below 10^15 (NaN
 * and the infinities print as null; other doubles may print rounded). */
static bool cache_round_trips(cJSON *v)
{
    for (; v; v = v->next) {
        if (v->type & cJSON_Raw) return false;
        if (cJSON_IsNumber(v)) {
            double d = v->valuedouble;
            /* (NaN fails the range test; no libm.) */
            if (!(d > -1e15 && d < 1e15) || (double)(long long)d != d) return false;
            if (d == 0) v->valuedouble = 0.0; /* "-0" is printed "0" */
            v->valueint = d >= INT_MAX ? INT_MAX : d <= (double)INT_MIN ? INT_MIN : (int)d;
        }
        if (v->child && !cache_round_trips(v->child)) return false;
    }
    return true;
}

void store_cache_put(store_cache *c, const char *kind, const char *ns, const char *name, cJSON *obj)
{
    char buf[1024];
    size_t n = 0;
    const char *k = cache_key(buf, sizeof buf, kind, ns, name, &n);
    if (!c || !k || !obj || obj->next || !cache_round_trips(obj)) {
        store_cache_drop(c, kind, ns, name);
        cJSON_Delete(obj);
        return;
    }
    uint64_t h = cache_hash(k, n);
    store_entry **p = cache_slot(c, k, n, h);
    if (*p) {
        cJSON_Delete((*p)->obj);
        (*p)->obj = obj;
        return;
    }
    store_entry *e = rs_xcalloc(1, sizeof *e);
    e->key = rs_xmalloc(n);
    memcpy(e->key, k, n);
    e->klen = n;
    e->hash = h;
    e->obj = obj;
    *p = e;
    if (++c->n > 2 * c->cap) cache_grow(c);
}
