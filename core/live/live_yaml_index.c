/*
 * live_yaml_index.c — open-addressing hash map (owner, key) -> value for the
 * YAML reader (see live_yaml_index.h).
 */
#include "core/live/live_yaml_index.h"

#include "core/rs.h"

#include <stdlib.h>
#include <string.h>

size_t live_yaml_hash_ptr(uintptr_t p)
{
    uint64_t x = (uint64_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static size_t lyi_hash(const void *owner, const char *key)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *key; key++)
        h = (h ^ (unsigned char)*key) * 1099511628211ULL;
    return (size_t)h ^ live_yaml_hash_ptr((uintptr_t)owner);
}

/* The slot holding (owner, key), or the empty slot where it would go. */
static ly_index_slot *lyi_slot(ly_index_slot *slots, size_t n_slots, const void *owner,
                               const char *key)
{
    size_t mask = n_slots - 1;
    size_t i = lyi_hash(owner, key) & mask;
    while (slots[i].key && (slots[i].owner != owner || strcmp(slots[i].key, key) != 0))
        i = (i + 1) & mask;
    return &slots[i];
}

void live_yaml_index_put(live_yaml_index *ix, const void *owner, const char *key, const void *val)
{
    if (2 * (ix->n + 1) > ix->n_slots) {
        size_t n = ix->n_slots ? ix->n_slots * 2 : 64;
        ly_index_slot *slots = rs_xcalloc(n, sizeof *slots);
        for (size_t i = 0; i < ix->n_slots; i++)
            if (ix->slots[i].key)
                *lyi_slot(slots, n, ix->slots[i].owner, ix->slots[i].key) = ix->slots[i];
        free(ix->slots);
        ix->slots = slots;
        ix->n_slots = n;
    }
    ly_index_slot *s = lyi_slot(ix->slots, ix->n_slots, owner, key);
    if (!s->key) {
        s->key = rs_xstrdup(key);
        s->owner = owner;
        ix->n++;
    }
    s->val = val;
}

const void *live_yaml_index_get(const live_yaml_index *ix, const void *owner, const char *key)
{
    if (!ix->n_slots) return NULL;
    return lyi_slot(ix->slots, ix->n_slots, owner, key)->val;
}

void live_yaml_index_free(live_yaml_index *ix)
{
    for (size_t i = 0; i < ix->n_slots; i++)
        free(ix->slots[i].key);
    free(ix->slots);
    *ix = (live_yaml_index){0};
}
