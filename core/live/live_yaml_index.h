/*
 * live_yaml_index.h — the YAML reader's O(1) lookups (live_yaml.c): a hash
 * map from (owner, key) to a value. Anchors are (NULL, name) -> node;
 * mapping members are (mapping, key) -> member, for duplicate keys. A file
 * full of aliases or keys must cost linear time: a scan per lookup made a
 * 1 MB alias file take 10 s.
 */
#ifndef CORE_LIVE_YAML_INDEX_H
#define CORE_LIVE_YAML_INDEX_H

#include <stddef.h>
#include <stdint.h>

typedef struct ly_index_slot {
    const void *owner;
    char *key; /* owned; NULL = empty slot */
    const void *val;
} ly_index_slot;

typedef struct live_yaml_index {
    ly_index_slot *slots;
    size_t n_slots; /* a power of two, at least twice n */
    size_t n;
} live_yaml_index;

/* Sets (owner, key) to val; a later put for the same pair replaces it. */
void live_yaml_index_put(live_yaml_index *ix, const void *owner, const char *key, const void *val);
/* The value for (owner, key), or NULL. */
const void *live_yaml_index_get(const live_yaml_index *ix, const void *owner, const char *key);
void live_yaml_index_free(live_yaml_index *ix);

/* A well-mixed hash of an address. */
size_t live_yaml_hash_ptr(uintptr_t p);

#endif
