/*
 * scenario_yaml.c — libfyaml events to cJSON, remembering where every node
 * stood in the file.
 *
 * libfyaml 0.7's document API gives no source mark for mappings and
 * sequences, and an error that cannot say "line 12, column 7" sends an
 * on-call engineer hunting through a long scenario. So this file drives the
 * event parser, which marks every node, and builds the cJSON tree itself with
 * an explicit stack (bounded by SY_DEPTH_MAX, no recursion). Building it here
 * also lets us catch what a permissive tree would hide: duplicate keys (cJSON
 * would keep both and readers would silently take the first), aliases to
 * unknown anchors, and NUL characters that truncate strings.
 *
 * libfyaml's diagnostics are collected into its diag object, never printed,
 * and the first one is reported in our own "<file>:<line>:<col>:" shape.
 */
#include "sim/scenario/scenario_yaml.h"

#include <errno.h>
#include <libfyaml.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SY_DEPTH_MAX 64     /* libfyaml's own guaranteed minimum depth limit */
#define SY_NODES_MAX 200000 /* stops alias expansion bombs long before memory */
#define SY_PATH_MAX 256
#define SY_EVENTS_MAX 1000000 /* every node is at most two events; generous bound */

#define SY_TAG_STR "tag:yaml.org,2002:str"

typedef struct sy_entry {
    uintptr_t node; /* the cJSON node's address: the lookup key */
    sc_pos pos;
    sc_pos key_pos;
    bool is_int;
    char *num_text;
} sy_entry;

struct sy_doc {
    cJSON *root;
    sy_entry *ents;
    size_t n_ents;
    size_t cap_ents;
    bool sorted;
};

typedef struct sy_frame {
    cJSON *node;
    bool is_map;
    char *key; /* the pending key of a mapping; NULL while a key is awaited */
    sc_pos key_pos;
    size_t n_items;
    char *anchor; /* registered when the collection ends, so aliases see it whole */
    char path[SY_PATH_MAX];
} sy_frame;

typedef struct sy_anchor {
    char *name;
    const cJSON *node;
} sy_anchor;

typedef struct sy_builder {
    const char *file;
    sy_doc *doc;
    rs_err *e;
    sy_frame stack[SY_DEPTH_MAX];
    size_t depth;
    sy_anchor *anchors;
    size_t n_anchors;
    bool have_root;
} sy_builder;

static bool sy_fail(sy_builder *b, sc_pos pos, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool sy_fail(sy_builder *b, sc_pos pos, const char *path, const char *fmt, ...)
{
    char problem[RS_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(problem, sizeof problem, fmt, ap);
    va_end(ap);
    rs_fail(b->e, RS_DATAERR, "%s:%d:%d: %s: %s", b->file, pos.line, pos.col,
            path[0] ? path : "(top level)", problem);
    return false;
}

static sc_pos sy_mark_pos(const struct fy_mark *m)
{
    sc_pos p = {1, 1};
    if (m) {
        p.line = m->line + 1;
        p.col = m->column + 1;
    }
    return p;
}

/* ---- the position table ------------------------------------------------ */

static bool sy_entry_add(sy_builder *b, const cJSON *node, sc_pos pos, sc_pos key_pos, bool is_int,
                         const char *num_text)
{
    sy_doc *d = b->doc;
    if (d->n_ents >= SY_NODES_MAX)
        return sy_fail(b, pos, "", "the document has more than %d nodes (alias expansion?)",
                       SY_NODES_MAX);
    if (d->n_ents == d->cap_ents) {
        d->cap_ents = d->cap_ents ? d->cap_ents * 2 : 64;
        d->ents = rs_xrealloc(d->ents, d->cap_ents * sizeof *d->ents);
    }
    sy_entry *en = &d->ents[d->n_ents++];
    en->node = (uintptr_t)node;
    en->pos = pos;
    en->key_pos = key_pos;
    en->is_int = is_int;
    en->num_text = num_text ? rs_xstrdup(num_text) : NULL;
    return true;
}

static int sy_entry_cmp(const void *a, const void *b)
{
    uintptr_t x = ((const sy_entry *)a)->node, y = ((const sy_entry *)b)->node;
    return x < y ? -1 : x > y;
}

static const sy_entry *sy_find(const sy_doc *d, const cJSON *node)
{
    if (!d || !node) return NULL;
    sy_entry key = {.node = (uintptr_t)node};
    if (d->sorted) return bsearch(&key, d->ents, d->n_ents, sizeof *d->ents, sy_entry_cmp);
    for (size_t i = 0; i < d->n_ents; i++)
        if (d->ents[i].node == key.node) return &d->ents[i];
    return NULL;
}

const cJSON *sy_root(const sy_doc *d)
{
    return d ? d->root : NULL;
}

sc_pos sy_pos(const sy_doc *d, const cJSON *node)
{
    const sy_entry *en = sy_find(d, node);
    return en ? en->pos : (sc_pos){1, 1};
}

sc_pos sy_key_pos(const sy_doc *d, const cJSON *node)
{
    const sy_entry *en = sy_find(d, node);
    return en ? en->key_pos : (sc_pos){1, 1};
}

bool sy_is_int(const sy_doc *d, const cJSON *node)
{
    const sy_entry *en = sy_find(d, node);
    return en && en->is_int;
}

const char *sy_num_text(const sy_doc *d, const cJSON *node)
{
    const sy_entry *en = sy_find(d, node);
    return en ? en->num_text : NULL;
}

void sy_free(sy_doc *d)
{
    if (!d) return;
    for (size_t i = 0; i < d->n_ents; i++)
        free(d->ents[i].num_text);
    free(d->ents);
    cJSON_Delete(d->root);
    free(d);
}

/* ---- scalar typing ------------------------------------------------------- */

static bool sy_all_digits(const char *s)
{
    if (!*s) return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return false;
    return true;
}

static bool sy_looks_int(const char *s)
{
    if (*s == '-' || *s == '+') s++;
    return sy_all_digits(s);
}

/* YAML 1.2 core-schema decimals: 1.5, .5, 2e3, -0.25 (not .inf or .nan). */
static bool sy_looks_float(const char *s)
{
    if (*s == '-' || *s == '+') s++;
    size_t digits = strspn(s, "0123456789");
    s += digits;
    if (*s == '.') {
        size_t frac = strspn(s + 1, "0123456789");
        digits += frac;
        s += 1 + frac;
    }
    if (digits == 0) return false;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '-' || *s == '+') s++;
        if (!sy_all_digits(s)) return false;
        return true;
    }
    return *s == '\0';
}

static bool sy_is_null_word(const char *s)
{
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

static int sy_bool_word(const char *s)
{
    if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) return 1;
    if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) return 0;
    return -1;
}

static cJSON *sy_plain_scalar(const char *text, bool *is_int, bool *is_num)
{
    *is_int = *is_num = false;
    if (sy_is_null_word(text)) return cJSON_CreateNull();
    int bw = sy_bool_word(text);
    if (bw >= 0) return cJSON_CreateBool(bw);
    if (sy_looks_int(text) || sy_looks_float(text)) {
        *is_int = sy_looks_int(text);
        *is_num = true;
        return cJSON_CreateNumber(strtod(text, NULL));
    }
    return cJSON_CreateString(text);
}

/* ---- building ------------------------------------------------------------ */

static void sy_child_path(const sy_builder *b, char *out, size_t n)
{
    if (b->depth == 0) {
        out[0] = '\0';
        return;
    }
    const sy_frame *f = &b->stack[b->depth - 1];
    if (f->is_map)
        snprintf(out, n, "%s%s%s", f->path, f->path[0] ? "." : "", f->key ? f->key : "?");
    else
        snprintf(out, n, "%s[%zu]", f->path, f->n_items);
}

/* Hangs node under the open collection (or makes it the root). The node is
 * owned by the tree from here on, so any later failure frees it with the root. */
static bool sy_attach(sy_builder *b, cJSON *node, sc_pos pos, bool is_int, const char *num)
{
    if (!node) abort(); /* cJSON allocation failure: same policy as rs_xmalloc */
    if (b->depth == 0) {
        if (b->have_root) {
            cJSON_Delete(node);
            return sy_fail(b, pos, "", "a scenario file holds exactly one YAML document");
        }
        b->have_root = true;
        b->doc->root = node;
        return sy_entry_add(b, node, pos, pos, is_int, num);
    }
    sy_frame *f = &b->stack[b->depth - 1];
    sc_pos key_pos = pos;
    if (f->is_map) {
        cJSON_AddItemToObject(f->node, f->key, node);
        key_pos = f->key_pos;
        free(f->key);
        f->key = NULL;
    } else {
        cJSON_AddItemToArray(f->node, node);
        f->n_items++;
    }
    return sy_entry_add(b, node, pos, key_pos, is_int, num);
}

static void sy_anchor_add(sy_builder *b, const char *name, const cJSON *node)
{
    b->anchors = rs_xrealloc(b->anchors, (b->n_anchors + 1) * sizeof *b->anchors);
    b->anchors[b->n_anchors].name = rs_xstrdup(name);
    b->anchors[b->n_anchors].node = node;
    b->n_anchors++;
}

static char *sy_token_text(struct fy_token *t, size_t *len)
{
    size_t n = 0;
    const char *s = t ? fy_token_get_text(t, &n) : NULL;
    char *out = rs_xmalloc(n + 1);
    if (s && n) memcpy(out, s, n);
    out[n] = '\0';
    if (len) *len = n;
    return out;
}

/* A mapping key: a scalar, unique within its mapping. */
static bool sy_key(sy_builder *b, struct fy_event *ev, sc_pos pos)
{
    sy_frame *f = &b->stack[b->depth - 1];
    size_t len = 0;
    char *text = sy_token_text(fy_event_get_token(ev), &len);
    char path[SY_PATH_MAX];
    snprintf(path, sizeof path, "%s%s%s", f->path, f->path[0] ? "." : "", text);
    bool ok = true;
    if (strlen(text) != len) {
        ok = sy_fail(b, pos, f->path, "a mapping key contains a NUL character");
    } else {
        const cJSON *first = cJSON_GetObjectItemCaseSensitive(f->node, text);
        if (first) {
            sc_pos fp = sy_key_pos(b->doc, first);
            ok = sy_fail(b, pos, path, "duplicate key (first given at line %d, column %d)", fp.line,
                         fp.col);
        }
    }
    if (!ok) {
        free(text);
        return false;
    }
    f->key = text;
    f->key_pos = pos;
    return true;
}

static bool sy_scalar(sy_builder *b, struct fy_event *ev, sc_pos pos)
{
    char path[SY_PATH_MAX];
    sy_child_path(b, path, sizeof path);
    struct fy_token *tag = fy_event_get_tag_token(ev);
    const char *tag_text = tag ? fy_token_get_text0(tag) : NULL;
    if (tag_text && strcmp(tag_text, SY_TAG_STR) != 0)
        return sy_fail(b, sy_mark_pos(fy_token_start_mark(tag)), path,
                       "unsupported tag %s (only !!str is accepted)", tag_text);
    struct fy_token *val = fy_event_get_token(ev);
    size_t len = 0;
    char *text = sy_token_text(val, &len);
    if (strlen(text) != len) {
        free(text);
        return sy_fail(b, pos, path, "a scalar contains a NUL character, which is refused");
    }
    bool is_int = false, is_num = false;
    cJSON *node;
    if (!tag_text && fy_token_scalar_style(val) == FYSS_PLAIN)
        node = sy_plain_scalar(text, &is_int, &is_num);
    else
        node = cJSON_CreateString(text);
    bool ok = sy_attach(b, node, pos, is_int, is_num ? text : NULL);
    free(text);
    struct fy_token *anchor = fy_event_get_anchor_token(ev);
    if (ok && anchor) {
        char *name = sy_token_text(anchor, NULL);
        sy_anchor_add(b, name, node);
        free(name);
    }
    return ok;
}

static bool sy_open(sy_builder *b, struct fy_event *ev, sc_pos pos, bool is_map)
{
    char path[SY_PATH_MAX];
    sy_child_path(b, path, sizeof path);
    if (fy_event_get_tag_token(ev))
        return sy_fail(b, pos, path, "tags on mappings and sequences are not supported");
    if (b->depth >= SY_DEPTH_MAX)
        return sy_fail(b, pos, path, "nesting deeper than %d levels", SY_DEPTH_MAX);
    cJSON *node = is_map ? cJSON_CreateObject() : cJSON_CreateArray();
    if (!sy_attach(b, node, pos, false, NULL)) return false;
    sy_frame *f = &b->stack[b->depth++];
    memset(f, 0, sizeof *f);
    f->node = node;
    f->is_map = is_map;
    memcpy(f->path, path, sizeof f->path);
    struct fy_token *anchor = fy_event_get_anchor_token(ev);
    if (anchor) f->anchor = sy_token_text(anchor, NULL);
    return true;
}

static void sy_close(sy_builder *b)
{
    if (b->depth == 0) return;
    sy_frame *f = &b->stack[--b->depth];
    if (f->anchor) sy_anchor_add(b, f->anchor, f->node);
    free(f->anchor);
    free(f->key);
    f->anchor = f->key = NULL;
}

/* Registers every node of copy (an alias expansion) at the alias position,
 * walking it in step with orig so numbers keep their exact text. */
static bool sy_register_copy(sy_builder *b, const cJSON *orig, const cJSON *copy, sc_pos pos)
{
    size_t cap = 64, n = 0;
    const cJSON **st = rs_xmalloc(cap * 2 * sizeof *st);
    bool ok = true;
    for (const cJSON *o = orig->child, *c = copy->child; o && c; o = o->next, c = c->next) {
        if (n == cap) st = rs_xrealloc(st, (cap *= 2) * 2 * sizeof *st);
        st[2 * n] = o;
        st[2 * n + 1] = c;
        n++;
    }
    while (ok && n > 0) {
        n--;
        const cJSON *o = st[2 * n], *c = st[2 * n + 1];
        ok = sy_entry_add(b, c, pos, pos, sy_is_int(b->doc, o), sy_num_text(b->doc, o));
        for (o = o->child, c = c->child; ok && o && c; o = o->next, c = c->next) {
            if (n == cap) st = rs_xrealloc(st, (cap *= 2) * 2 * sizeof *st);
            st[2 * n] = o;
            st[2 * n + 1] = c;
            n++;
        }
    }
    free(st);
    return ok;
}

static bool sy_alias(sy_builder *b, struct fy_event *ev, sc_pos pos)
{
    char path[SY_PATH_MAX];
    sy_child_path(b, path, sizeof path);
    char *name = sy_token_text(fy_event_get_token(ev), NULL);
    const cJSON *target = NULL;
    for (size_t i = b->n_anchors; i > 0 && !target; i--)
        if (!strcmp(b->anchors[i - 1].name, name)) target = b->anchors[i - 1].node;
    if (!target) {
        bool r = sy_fail(b, pos, path, "alias *%s names no earlier anchor", name);
        free(name);
        return r;
    }
    free(name);
    cJSON *copy = cJSON_Duplicate(target, true);
    if (!sy_attach(b, copy, pos, sy_is_int(b->doc, target), sy_num_text(b->doc, target)))
        return false;
    return sy_register_copy(b, target, copy, pos);
}

/* libfyaml marks a quoted scalar at its first character inside the quote and
 * an alias after its '*'; step back one column so errors point at what the
 * user typed. (Both indicators sit on the same line as the mark.) */
static sc_pos sy_event_pos(struct fy_event *ev)
{
    sc_pos pos = sy_mark_pos(fy_event_start_mark(ev));
    bool indicator = ev->type == FYET_ALIAS;
    if (ev->type == FYET_SCALAR) {
        enum fy_scalar_style st = fy_token_scalar_style(fy_event_get_token(ev));
        indicator = st == FYSS_SINGLE_QUOTED || st == FYSS_DOUBLE_QUOTED;
    }
    if (indicator && pos.col > 1) pos.col--;
    return pos;
}

static bool sy_event(sy_builder *b, struct fy_event *ev)
{
    sc_pos pos = sy_event_pos(ev);
    bool want_key = b->depth > 0 && b->stack[b->depth - 1].is_map && !b->stack[b->depth - 1].key;
    switch (ev->type) {
    case FYET_SCALAR:
        return want_key ? sy_key(b, ev, pos) : sy_scalar(b, ev, pos);
    case FYET_MAPPING_START:
    case FYET_SEQUENCE_START:
    case FYET_ALIAS:
        if (want_key)
            return sy_fail(b, pos, b->stack[b->depth - 1].path,
                           "mapping keys must be plain scalars");
        if (ev->type == FYET_ALIAS) return sy_alias(b, ev, pos);
        return sy_open(b, ev, pos, ev->type == FYET_MAPPING_START);
    case FYET_MAPPING_END:
    case FYET_SEQUENCE_END:
        sy_close(b);
        return true;
    default:
        return true;
    }
}

/* ---- driving libfyaml ---------------------------------------------------- */

static void sy_diag_swallow(struct fy_diag *diag, void *user, const char *buf, size_t len)
{
    /* Collected errors are reported by sy_syntax_error in our own shape; raw
     * libfyaml output on stderr would break the file:line:col contract. */
    (void)diag;
    (void)user;
    (void)buf;
    (void)len;
}

static bool sy_syntax_error(sy_builder *b, struct fy_diag *diag)
{
    void *it = NULL;
    struct fy_diag_error *de;
    size_t guard = 0;
    while ((de = fy_diag_errors_iterate(diag, &it)) && guard++ < 1000) {
        if (de->type != FYET_ERROR) continue;
        sc_pos pos = {de->line > 0 ? de->line : 1, de->column > 0 ? de->column : 1};
        return sy_fail(b, pos, "yaml syntax", "%s", de->msg ? de->msg : "invalid YAML");
    }
    return sy_fail(b, (sc_pos){1, 1}, "yaml syntax", "the file is not valid YAML");
}

static bool sy_parse(sy_builder *b, struct fy_parser *p, struct fy_diag *diag)
{
    bool ok = true;
    struct fy_event *ev;
    for (size_t n = 0; ok && (ev = fy_parser_parse(p)); n++) {
        ok = n < SY_EVENTS_MAX ? sy_event(b, ev)
                               : sy_fail(b, sy_mark_pos(fy_event_start_mark(ev)), "",
                                         "the document is too large");
        fy_parser_event_free(p, ev);
    }
    if (ok && fy_parser_get_stream_error(p)) ok = sy_syntax_error(b, diag);
    if (ok && !b->have_root) ok = sy_fail(b, (sc_pos){1, 1}, "", "the file holds no YAML document");
    return ok;
}

static void sy_builder_release(sy_builder *b)
{
    while (b->depth > 0)
        sy_close(b);
    for (size_t i = 0; i < b->n_anchors; i++)
        free(b->anchors[i].name);
    free(b->anchors);
}

rs_code sy_load(const char *path, sy_doc **out, rs_err *e)
{
    *out = NULL;
    FILE *fp = fopen(path, "r");
    if (!fp)
        return rs_fail(e, RS_DATAERR, "%s: cannot read the scenario: %s", path, strerror(errno));
    struct fy_diag_cfg dcfg;
    fy_diag_cfg_default(&dcfg);
    dcfg.fp = NULL;
    dcfg.output_fn = sy_diag_swallow;
    dcfg.colorize = false;
    struct fy_diag *diag = fy_diag_create(&dcfg);
    if (!diag) abort();
    fy_diag_set_collect_errors(diag, true);
    struct fy_parse_cfg pcfg = {.flags = FYPCF_QUIET | FYPCF_DISABLE_MMAP_OPT, .diag = diag};
    struct fy_parser *p = fy_parser_create(&pcfg);
    if (!p) abort();
    sy_builder *b = rs_xcalloc(1, sizeof *b);
    b->file = path;
    b->e = e;
    b->doc = rs_xcalloc(1, sizeof *b->doc);
    bool ok = fy_parser_set_input_fp(p, path, fp) == 0
                  ? sy_parse(b, p, diag)
                  : sy_fail(b, (sc_pos){1, 1}, "", "libfyaml refused the input");
    fy_parser_destroy(p);
    fy_diag_destroy(diag);
    fclose(fp);
    sy_builder_release(b);
    if (ok) {
        qsort(b->doc->ents, b->doc->n_ents, sizeof *b->doc->ents, sy_entry_cmp);
        b->doc->sorted = true;
        *out = b->doc;
    } else {
        sy_free(b->doc);
    }
    free(b);
    return ok ? RS_OK : RS_DATAERR;
}
