/*
 * store_select.h — label and field selectors for the sim store's list.
 *
 * Parsed once per list call into a small fixed-size form, then matched
 * against each stored object, so a list costs O(objects of that kind).
 */
#ifndef SIM_STORE_SELECT_H
#define SIM_STORE_SELECT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct store_selector store_selector;

/* Parses a label selector as kubectl passes it: "a=b,c==d,e!=f,g,!h,
 * i in (x,y),j notin (z)". NULL or blank matches everything. Returns NULL
 * with a sentence in why on a malformed selector. Caller frees. */
store_selector *store_selector_parse_labels(const char *text, char *why, size_t whylen);

/* Parses a field selector: "metadata.name=x,spec.unschedulable!=true" (a
 * dotted path; =, ==, !=). Same contract as above; which paths a kind
 * supports is store_selector_fields_supported's question. */
store_selector *store_selector_parse_fields(const char *text, char *why, size_t whylen);

/* False (with "field label not supported: <field>" in why) when a field
 * selector names a field the API server does not index for kind. */
bool store_selector_fields_supported(const store_selector *s, const char *kind, char *why,
                                     size_t whylen);

/* True when obj satisfies every requirement. Field values compare as
 * strings: booleans as "true"/"false", numbers as printed, absent or null
 * fields as "". */
bool store_selector_match(const store_selector *s, const cJSON *obj);

void store_selector_free(store_selector *s);

#endif
