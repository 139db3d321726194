/*
 * live_yaml.c — libfyaml events to cJSON, remembering where every node
 * stood in the file.
 *
 * libfyaml 0.7's document API gives no source mark for mappings and
 * sequences, and an error that cannot say "line 12, column 7" sends an
 * on-call engineer hunting through a long scenario. So this file drives the
 * event parser, which marks every node, and builds the cJSON tree itself with
 * an explicit stack (bounded by LY_DEPTH_MAX, no recursion). Building it here
 * also lets us catch what a permissive tree would hide: duplicate keys (cJSON
 * would keep both and readers would silently take the first), aliases to
 * unknown anchors, and NUL characters that truncate strings.
 *
 * libfyaml's diagnostics are collected into its diag object, never printed,
 * and the first one is reported in our own "<file>:<line>:<col>:" shape.
 *
 * The parser never sees the file itself: live_text.c reads it whole and
 * refuses NUL bytes and invalid UTF-8 anywhere (a parser that stopped there
 * would drop the rest of the file silently), and the parse must reach the end
 * of the stream. Lookups (positions, anchors, duplicate keys) are hashed, so
 * alias-heavy files cost linear time (live_yaml_index.c).
 */
#include "core/live/live_yaml.h"

#include "core/live/live_text.h"
#include "core/live/live_yaml_index.h"

#include <ctype.h>
#include <errno.h>
#include <libfyaml.h>
#include <openssl/crypto.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LY_DEPTH_MAX 64     /* libfyaml's own guaranteed minimum depth limit */
#define LY_NODES_MAX 200000 /* stops alias expansion bombs long before memory */
#define LY_PATH_MAX 256
#define LY_EVENTS_MAX 1000000     /* every node is at most two events; generous bound */
#define LY_SCALAR_MAX (64 * 1024) /* longest scalar or key, bytes: README "Input bounds" */

#define LY_TAG_STR "tag:yaml.org,2002:str"

typedef struct ly_entry {
    uintptr_t node; /* the cJSON node's address: the lookup key */
    live_yaml_pos pos;
    live_yaml_pos key_pos;
    bool is_int;
    char *num_text;
} ly_entry;

struct live_yaml_doc {
    cJSON *root;
    ly_entry *ents;
    size_t n_ents;
    size_t cap_ents;
    size_t *slots;  /* open addressing over ents by node address: 1 + index, 0 = empty */
    size_t n_slots; /* a power of two, at least twice n_ents */
};

typedef struct ly_frame {
    cJSON *node;
    bool is_map;
    char *key; /* the pending key of a mapping; NULL while a key is awaited */
    live_yaml_pos key_pos;
    size_t n_items;
    char *anchor; /* registered when the collection ends, so aliases see it whole */
    char path[LY_PATH_MAX];
} ly_frame;

typedef struct ly_builder {
    const char *file;
    const char *what; /* "scenario", "configuration": names the file in errors */
    live_yaml_doc *doc;
    rs_err *e;
    ly_frame stack[LY_DEPTH_MAX];
    size_t depth;
    live_yaml_index anchors; /* (NULL, name) -> node: the latest anchor of that name */
    live_yaml_index members; /* (mapping, key) -> member: duplicate keys */
    bool have_root;
    bool stream_ended;
} ly_builder;

static bool ly_fail(ly_builder *b, live_yaml_pos pos, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool ly_fail(ly_builder *b, live_yaml_pos pos, const char *path, const char *fmt, ...)
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

static live_yaml_pos ly_mark_pos(const struct fy_mark *m)
{
    live_yaml_pos p = {1, 1};
    if (m) {
        p.line = m->line + 1;
        p.col = m->column + 1;
    }
    return p;
}

/* ---- the position table ------------------------------------------------ */

/* Every lookup is O(1): a file full of aliases must cost linear time, not
 * a scan of the table per node (a 1 MB alias file once took 10 s). */
static void ly_slots_put(live_yaml_doc *d, size_t idx)
{
    size_t mask = d->n_slots - 1;
    size_t i = live_yaml_hash_ptr(d->ents[idx].node) & mask;
    while (d->slots[i])
        i = (i + 1) & mask;
    d->slots[i] = idx + 1;
}

static bool ly_entry_add(ly_builder *b, const cJSON *node, live_yaml_pos pos, live_yaml_pos key_pos,
                         bool is_int, const char *num_text)
{
    live_yaml_doc *d = b->doc;
    if (d->n_ents >= LY_NODES_MAX)
        return ly_fail(b, pos, "", "the document has more than %d nodes (alias expansion?)",
                       LY_NODES_MAX);
    if (d->n_ents == d->cap_ents) {
        d->cap_ents = d->cap_ents ? d->cap_ents * 2 : 64;
        d->ents = rs_xrealloc(d->ents, d->cap_ents * sizeof *d->ents);
    }
    ly_entry *en = &d->ents[d->n_ents++];
    en->node = (uintptr_t)node;
    en->pos = pos;
    en->key_pos = key_pos;
    en->is_int = is_int;
    en->num_text = num_text ? rs_xstrdup(num_text) : NULL;
    if (2 * d->n_ents > d->n_slots) {
        free(d->slots);
        d->n_slots = d->n_slots ? d->n_slots * 2 : 128;
        d->slots = rs_xcalloc(d->n_slots, sizeof *d->slots);
        for (size_t i = 0; i < d->n_ents; i++)
            ly_slots_put(d, i);
    } else {
        ly_slots_put(d, d->n_ents - 1);
    }
    return true;
}

static const ly_entry *ly_find(const live_yaml_doc *d, const cJSON *node)
{
    if (!d || !node || !d->n_slots) return NULL;
    size_t mask = d->n_slots - 1;
    for (size_t i = live_yaml_hash_ptr((uintptr_t)node) & mask; d->slots[i]; i = (i + 1) & mask)
        if (d->ents[d->slots[i] - 1].node == (uintptr_t)node) return &d->ents[d->slots[i] - 1];
    return NULL;
}

const cJSON *live_yaml_root(const live_yaml_doc *d)
{
    return d ? d->root : NULL;
}

live_yaml_pos live_yaml_pos_of(const live_yaml_doc *d, const cJSON *node)
{
    const ly_entry *en = ly_find(d, node);
    return en ? en->pos : (live_yaml_pos){1, 1};
}

live_yaml_pos live_yaml_key_pos(const live_yaml_doc *d, const cJSON *node)
{
    const ly_entry *en = ly_find(d, node);
    return en ? en->key_pos : (live_yaml_pos){1, 1};
}

bool live_yaml_is_int(const live_yaml_doc *d, const cJSON *node)
{
    const ly_entry *en = ly_find(d, node);
    return en && en->is_int;
}

const char *live_yaml_num_text(const live_yaml_doc *d, const cJSON *node)
{
    const ly_entry *en = ly_find(d, node);
    return en ? en->num_text : NULL;
}

/* Every string value cleansed before the tree is freed: a kubeconfig's
 * token, a scenario's password and a SOPS file's ciphertext all pass
 * through here. Iterative (an explicit stack), as deep as the tree. */
static void ly_wipe(cJSON *root)
{
    size_t cap = 64, n = 0;
    cJSON **st = rs_xmalloc(cap * sizeof *st);
    if (root) st[n++] = root;
    while (n) {
        cJSON *c = st[--n];
        if (c->valuestring) OPENSSL_cleanse(c->valuestring, strlen(c->valuestring));
        for (cJSON *k = c->child; k; k = k->next) {
            if (n == cap) {
                cap *= 2;
                st = rs_xrealloc(st, cap * sizeof *st);
            }
            st[n++] = k;
        }
    }
    free(st);
}

void live_yaml_free(live_yaml_doc *d)
{
    if (!d) return;
    ly_wipe(d->root);
    for (size_t i = 0; i < d->n_ents; i++)
        free(d->ents[i].num_text);
    free(d->ents);
    free(d->slots);
    cJSON_Delete(d->root);
    free(d);
}

/* ---- building ------------------------------------------------------------ */

static void ly_child_path(const ly_builder *b, char *out, size_t n)
{
    if (b->depth == 0) {
        out[0] = '\0';
        return;
    }
    const ly_frame *f = &b->stack[b->depth - 1];
    if (f->is_map)
        snprintf(out, n, "%s%s%s", f->path, f->path[0] ? "." : "", f->key ? f->key : "?");
    else
        snprintf(out, n, "%s[%zu]", f->path, f->n_items);
}

/* Hangs node under the open collection (or makes it the root). The node is
 * owned by the tree from here on, so any later failure frees it with the root. */
static bool ly_attach(ly_builder *b, cJSON *node, live_yaml_pos pos, bool is_int, const char *num)
{
    if (!node) abort(); /* cJSON allocation failure: same policy as rs_xmalloc */
    if (b->depth == 0) {
        if (b->have_root) {
            cJSON_Delete(node);
            return ly_fail(b, pos, "", "a %s file holds exactly one YAML document", b->what);
        }
        b->have_root = true;
        b->doc->root = node;
        return ly_entry_add(b, node, pos, pos, is_int, num);
    }
    ly_frame *f = &b->stack[b->depth - 1];
    live_yaml_pos key_pos = pos;
    if (f->is_map) {
        cJSON_AddItemToObject(f->node, f->key, node);
        live_yaml_index_put(&b->members, f->node, f->key, node);
        key_pos = f->key_pos;
        free(f->key);
        f->key = NULL;
    } else {
        cJSON_AddItemToArray(f->node, node);
        f->n_items++;
    }
    return ly_entry_add(b, node, pos, key_pos, is_int, num);
}

static char *ly_token_text(struct fy_token *t, size_t *len)
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
static bool ly_key(ly_builder *b, struct fy_event *ev, live_yaml_pos pos)
{
    ly_frame *f = &b->stack[b->depth - 1];
    size_t len = 0;
    char *text = ly_token_text(fy_event_get_token(ev), &len);
    char path[LY_PATH_MAX];
    snprintf(path, sizeof path, "%s%s%s", f->path, f->path[0] ? "." : "", text);
    bool ok = true;
    if (strlen(text) != len) {
        ok = ly_fail(b, pos, f->path, "a mapping key contains a NUL character");
    } else if (len > LY_SCALAR_MAX) {
        ok = ly_fail(b, pos, f->path, "a mapping key longer than %d bytes", LY_SCALAR_MAX);
    } else {
        const cJSON *first = live_yaml_index_get(&b->members, f->node, text);
        if (first) {
            live_yaml_pos fp = live_yaml_key_pos(b->doc, first);
            ok = ly_fail(b, pos, path, "duplicate key (first given at line %d, column %d)", fp.line,
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

static bool ly_scalar(ly_builder *b, struct fy_event *ev, live_yaml_pos pos)
{
    char path[LY_PATH_MAX];
    ly_child_path(b, path, sizeof path);
    struct fy_token *tag = fy_event_get_tag_token(ev);
    const char *tag_text = tag ? fy_token_get_text0(tag) : NULL;
    if (tag_text && strcmp(tag_text, LY_TAG_STR) != 0)
        return ly_fail(b, ly_mark_pos(fy_token_start_mark(tag)), path,
                       "unsupported tag %s (only !!str is accepted)", tag_text);
    struct fy_token *val = fy_event_get_token(ev);
    size_t len = 0;
    char *text = ly_token_text(val, &len);
    if (strlen(text) != len) {
        free(text);
        return ly_fail(b, pos, path, "a scalar contains a NUL character, which is refused");
    }
    if (len > LY_SCALAR_MAX) {
        free(text);
        return ly_fail(b, pos, path, "a value longer than %d bytes (64 KiB), which is refused",
                       LY_SCALAR_MAX);
    }
    bool is_int = false, is_num = false;
    cJSON *node;
    if (!tag_text && fy_token_scalar_style(val) == FYSS_PLAIN)
        node = live_yaml_plain_scalar(text, &is_int, &is_num);
    else
        node = cJSON_CreateString(text);
    bool ok = ly_attach(b, node, pos, is_int, is_num ? text : NULL);
    free(text);
    struct fy_token *anchor = fy_event_get_anchor_token(ev);
    if (ok && anchor) {
        char *name = ly_token_text(anchor, NULL);
        live_yaml_index_put(&b->anchors, NULL, name, node);
        free(name);
    }
    return ok;
}

static bool ly_open(ly_builder *b, struct fy_event *ev, live_yaml_pos pos, bool is_map)
{
    char path[LY_PATH_MAX];
    ly_child_path(b, path, sizeof path);
    if (fy_event_get_tag_token(ev))
        return ly_fail(b, pos, path, "tags on mappings and sequences are not supported");
    if (b->depth >= LY_DEPTH_MAX)
        return ly_fail(b, pos, path, "nesting deeper than %d levels", LY_DEPTH_MAX);
    cJSON *node = is_map ? cJSON_CreateObject() : cJSON_CreateArray();
    if (!ly_attach(b, node, pos, false, NULL)) return false;
    ly_frame *f = &b->stack[b->depth++];
    memset(f, 0, sizeof *f);
    f->node = node;
    f->is_map = is_map;
    memcpy(f->path, path, sizeof f->path);
    struct fy_token *anchor = fy_event_get_anchor_token(ev);
    if (anchor) f->anchor = ly_token_text(anchor, NULL);
    return true;
}

static void ly_close(ly_builder *b)
{
    if (b->depth == 0) return;
    ly_frame *f = &b->stack[--b->depth];
    if (f->anchor) live_yaml_index_put(&b->anchors, NULL, f->anchor, f->node);
    free(f->anchor);
    free(f->key);
    f->anchor = f->key = NULL;
}

/* Registers every node of copy (an alias expansion) at the alias position,
 * walking it in step with orig so numbers keep their exact text. */
static bool ly_register_copy(ly_builder *b, const cJSON *orig, const cJSON *copy, live_yaml_pos pos)
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
        ok = ly_entry_add(b, c, pos, pos, live_yaml_is_int(b->doc, o),
                          live_yaml_num_text(b->doc, o));
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

static bool ly_alias(ly_builder *b, struct fy_event *ev, live_yaml_pos pos)
{
    char path[LY_PATH_MAX];
    ly_child_path(b, path, sizeof path);
    char *name = ly_token_text(fy_event_get_token(ev), NULL);
    const cJSON *target = live_yaml_index_get(&b->anchors, NULL, name);
    if (!target) {
        bool r = ly_fail(b, pos, path, "alias *%s names no earlier anchor", name);
        free(name);
        return r;
    }
    free(name);
    cJSON *copy = cJSON_Duplicate(target, true);
    if (!ly_attach(b, copy, pos, live_yaml_is_int(b->doc, target),
                   live_yaml_num_text(b->doc, target)))
        return false;
    return ly_register_copy(b, target, copy, pos);
}

/* libfyaml marks a quoted scalar at its first character inside the quote and
 * an alias after its '*'; step back one column so errors point at what the
 * user typed. (Both indicators sit on the same line as the mark.) */
static live_yaml_pos ly_event_pos(struct fy_event *ev)
{
    live_yaml_pos pos = ly_mark_pos(fy_event_start_mark(ev));
    bool indicator = ev->type == FYET_ALIAS;
    if (ev->type == FYET_SCALAR) {
        enum fy_scalar_style st = fy_token_scalar_style(fy_event_get_token(ev));
        indicator = st == FYSS_SINGLE_QUOTED || st == FYSS_DOUBLE_QUOTED;
    }
    if (indicator && pos.col > 1) pos.col--;
    return pos;
}

static bool ly_event(ly_builder *b, struct fy_event *ev)
{
    live_yaml_pos pos = ly_event_pos(ev);
    bool want_key = b->depth > 0 && b->stack[b->depth - 1].is_map && !b->stack[b->depth - 1].key;
    switch (ev->type) {
    case FYET_SCALAR:
        return want_key ? ly_key(b, ev, pos) : ly_scalar(b, ev, pos);
    case FYET_MAPPING_START:
    case FYET_SEQUENCE_START:
    case FYET_ALIAS:
        if (want_key)
            return ly_fail(b, pos, b->stack[b->depth - 1].path,
                           "mapping keys must be plain scalars");
        if (ev->type == FYET_ALIAS) return ly_alias(b, ev, pos);
        return ly_open(b, ev, pos, ev->type == FYET_MAPPING_START);
    case FYET_MAPPING_END:
    case FYET_SEQUENCE_END:
        ly_close(b);
        return true;
    case FYET_STREAM_END:
        b->stream_ended = true;
        return true;
    default:
        return true;
    }
}

/* ---- driving libfyaml ---------------------------------------------------- */

static void ly_diag_swallow(struct fy_diag *diag, void *user, const char *buf, size_t len)
{
    /* Collected errors are reported by ly_syntax_error in our own shape; raw
     * libfyaml output on stderr would break the file:line:col contract. */
    (void)diag;
    (void)user;
    (void)buf;
    (void)len;
}

static bool ly_syntax_error(ly_builder *b, struct fy_diag *diag)
{
    void *it = NULL;
    struct fy_diag_error *de;
    size_t guard = 0;
    while ((de = fy_diag_errors_iterate(diag, &it)) && guard++ < 1000) {
        if (de->type != FYET_ERROR) continue;
        live_yaml_pos pos = {de->line > 0 ? de->line : 1, de->column > 0 ? de->column : 1};
        return ly_fail(b, pos, "yaml syntax", "%s", de->msg ? de->msg : "invalid YAML");
    }
    return ly_fail(b, (live_yaml_pos){1, 1}, "yaml syntax", "the file is not valid YAML");
}

static bool ly_parse(ly_builder *b, struct fy_parser *p, struct fy_diag *diag)
{
    bool ok = true;
    struct fy_event *ev;
    for (size_t n = 0; ok && (ev = fy_parser_parse(p)); n++) {
        ok = n < LY_EVENTS_MAX ? ly_event(b, ev)
                               : ly_fail(b, ly_mark_pos(fy_event_start_mark(ev)), "",
                                         "the document is too large");
        fy_parser_event_free(p, ev);
    }
    if (ok && fy_parser_get_stream_error(p)) ok = ly_syntax_error(b, diag);
    /* The parser must have reached the end of the stream: a reader that
     * stops early would drop the rest of the file without a word. */
    if (ok && !b->stream_ended)
        ok = ly_fail(b, (live_yaml_pos){1, 1}, "yaml syntax",
                     "the YAML stream ended before the end of the file");
    if (ok && !b->have_root)
        ok = ly_fail(b, (live_yaml_pos){1, 1}, "", "the file holds no YAML document");
    return ok;
}

static void ly_builder_release(ly_builder *b)
{
    while (b->depth > 0)
        ly_close(b);
    live_yaml_index_free(&b->anchors);
    live_yaml_index_free(&b->members);
}

rs_code live_yaml_load(const char *path, const char *what, live_yaml_doc **out, rs_err *e)
{
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    rs_code rc = live_text_read(path, what, &text, &len, e);
    if (rc != RS_OK) return rc;
    rc = live_yaml_load_text(text, len, path, what, out, e);
    OPENSSL_cleanse(text, len);
    free(text);
    return rc;
}

rs_code live_yaml_load_text(const char *text, size_t len, const char *path, const char *what,
                            live_yaml_doc **out, rs_err *e)
{
    *out = NULL;
    struct fy_diag_cfg dcfg;
    fy_diag_cfg_default(&dcfg);
    dcfg.fp = NULL;
    dcfg.output_fn = ly_diag_swallow;
    dcfg.colorize = false;
    struct fy_diag *diag = fy_diag_create(&dcfg);
    if (!diag) abort();
    fy_diag_set_collect_errors(diag, true);
    struct fy_parse_cfg pcfg = {.flags = FYPCF_QUIET, .diag = diag};
    struct fy_parser *p = fy_parser_create(&pcfg);
    if (!p) abort();
    ly_builder *b = rs_xcalloc(1, sizeof *b);
    b->file = path;
    b->what = what;
    b->e = e;
    b->doc = rs_xcalloc(1, sizeof *b->doc);
    bool ok = fy_parser_set_string(p, text, len) == 0
                  ? ly_parse(b, p, diag)
                  : ly_fail(b, (live_yaml_pos){1, 1}, "", "libfyaml refused the input");
    fy_parser_destroy(p);
    fy_diag_destroy(diag);
    ly_builder_release(b);
    if (ok)
        *out = b->doc;
    else
        live_yaml_free(b->doc);
    free(b);
    return ok ? RS_OK : RS_DATAERR;
}
