/*
 * live_talos_text.c — strict readers of talosctl's output (see the header).
 *
 * Tables: the header line fixes the column starts (cells are separated by
 * at least two spaces; names such as "DB SIZE" hold single ones); every row
 * is sliced at those starts, a cell must begin exactly at its column and
 * leave at least two spaces before the next one, and each cell must match
 * its column's grammar. A table whose header is not one of the known
 * layouts is refused whole.
 */
#include "core/live/live_talos_text.h"

#include "core/cred/cred.h"

#include <libfyaml.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LT_COLS_MAX 12
#define LT_NAME_MAX 24
#define LT_CELL_MAX 512
#define LT_ROWS_MAX 64

typedef struct lt_line {
    const char *s;
    size_t len;
} lt_line;

typedef struct lt_table {
    size_t n;
    size_t start[LT_COLS_MAX];
    char name[LT_COLS_MAX][LT_NAME_MAX];
} lt_table;

typedef char lt_cells[LT_COLS_MAX][LT_CELL_MAX];

/* A line of spaces only (the text need not be NUL-terminated). */
static bool lt_blank(lt_line l)
{
    for (size_t i = 0; i < l.len; i++)
        if (l.s[i] != ' ') return false;
    return true;
}

/* Splits text into lines (a final newline is optional; trailing empty lines
 * are dropped). No NUL, CR, tab or other control byte anywhere: tabwriter
 * output holds none, so one is a sign of something else. */
static bool lt_split(const char *text, size_t len, lt_line *lines, size_t *n, rs_err *e)
{
    *n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c < 0x20 && c != '\n') {
            rs_fail(e, RS_FAILED, "talosctl output holds control byte 0x%02x at offset %zu", c, i);
            return false;
        }
    }
    size_t at = 0;
    while (at < len) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t l = nl ? (size_t)(nl - (text + at)) : len - at;
        if (*n == LT_ROWS_MAX) {
            rs_fail(e, RS_FAILED, "talosctl output has more than %d lines", LT_ROWS_MAX);
            return false;
        }
        lines[(*n)++] = (lt_line){text + at, l};
        at += l + 1;
    }
    while (*n > 0 && lt_blank(lines[*n - 1]))
        (*n)--;
    return true;
}

/* The header's cells and where each starts. */
static bool lt_header(lt_line h, lt_table *t)
{
    t->n = 0;
    size_t i = 0;
    while (i < h.len) {
        if (h.s[i] == ' ') {
            i++;
            continue;
        }
        if (t->n == 0 ? i != 0 : h.s[i - 1] != ' ' || h.s[i - 2] != ' ') return false;
        size_t s = i;
        while (i < h.len && !(h.s[i] == ' ' && (i + 1 >= h.len || h.s[i + 1] == ' ')))
            i++;
        if (t->n == LT_COLS_MAX || i - s >= LT_NAME_MAX) return false;
        memcpy(t->name[t->n], h.s + s, i - s);
        t->name[t->n][i - s] = '\0';
        t->start[t->n++] = s;
    }
    return t->n > 0;
}

/* Whether t's names are exactly names[0..n) (NULL-terminated). */
static bool lt_layout_is(const lt_table *t, const char *const *names)
{
    size_t k = 0;
    for (; names[k]; k++)
        if (k >= t->n || strcmp(t->name[k], names[k]) != 0) return false;
    return k == t->n;
}

/* Slices a row at the header's column starts; false when a cell is out of
 * its column or (except the last) not ASCII. */
static bool lt_row(const lt_table *t, lt_line r, lt_cells cells)
{
    for (size_t c = 0; c < t->n; c++) {
        size_t s = t->start[c];
        size_t end = c + 1 < t->n ? t->start[c + 1] : r.len;
        if (c + 1 < t->n)
            for (size_t k = end - 2; k < end; k++)
                if (k < r.len && r.s[k] != ' ') return false;
        if (s > 0 && s - 1 < r.len && r.s[s - 1] != ' ') return false;
        if (end > r.len) end = r.len;
        size_t l = s < end ? end - s : 0;
        while (l > 0 && r.s[s + l - 1] == ' ')
            l--;
        if (l > 0 && r.s[s] == ' ') return false;
        if (l >= LT_CELL_MAX) return false;
        for (size_t k = 0; c + 1 < t->n && k < l; k++)
            if ((unsigned char)r.s[s + k] >= 0x80) return false;
        memcpy(cells[c], r.s + s, l);
        cells[c][l] = '\0';
    }
    return true;
}

static bool lt_digits(const char *s, size_t min, size_t max)
{
    size_t n = strspn(s, "0123456789");
    return s[n] == '\0' && n >= min && n <= max;
}

static bool lt_hex_id(const char *s)
{
    size_t n = strspn(s, "0123456789abcdef");
    return s[n] == '\0' && n >= 1 && n <= 16;
}

/* go-humanize's Bytes: "0 B", "25 MB", "4.1 GB". Returns the length used. */
static size_t lt_bytes_prefix(const char *s)
{
    size_t n = strspn(s, "0123456789");
    if (n == 0 || n > 4) return 0;
    if (s[n] == '.') {
        size_t f = strspn(s + n + 1, "0123456789");
        if (f != 1) return 0;
        n += 1 + f;
    }
    if (s[n] != ' ') return 0;
    n++;
    static const char *const units[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        size_t ul = strlen(units[i]);
        if (strncmp(s + n, units[i], ul) == 0 && (s[n + ul] == '\0' || s[n + ul] == ' '))
            return n + ul;
    }
    return 0;
}

static bool lt_bytes(const char *s)
{
    size_t n = lt_bytes_prefix(s);
    return n > 0 && s[n] == '\0';
}

/* "18 MB (72.00%)" */
static bool lt_in_use(const char *s)
{
    size_t n = lt_bytes_prefix(s);
    if (n == 0 || strncmp(s + n, " (", 2) != 0) return false;
    const char *p = s + n + 2;
    size_t w = strspn(p, "0123456789");
    if (w == 0 || w > 3 || p[w] != '.') return false;
    p += w + 1;
    return strspn(p, "0123456789") == 2 && strcmp(p + 2, "%)") == 0;
}

static bool lt_bool(const char *s)
{
    return strcmp(s, "true") == 0 || strcmp(s, "false") == 0;
}

/* "3.5.0", "3.6", "3.5.0-rc.1"; empty is allowed (an etcd that reports none). */
static bool lt_version(const char *s)
{
    if (!s[0]) return true;
    size_t n = strspn(s, "0123456789.");
    if (n == 0 || s[0] == '.' || s[n - 1] == '.' || strstr(s, "..")) return false;
    if (s[n] == '\0') return true;
    if (s[n] != '-' && s[n] != '+') return false;
    const char *rest = s + n + 1;
    return rest[0] && strspn(rest, "0123456789abcdefghijklmnopqrstuvwxyz"
                                   "ABCDEFGHIJKLMNOPQRSTUVWXYZ.-+") == strlen(rest);
}

static const char *const lt_status_compact[] = {
    "MEMBER",  "DB SIZE", "IN USE", "LEADER", "RAFT INDEX", "RAFT TERM", "RAFT APPLIED INDEX",
    "LEARNER", "ERRORS",  NULL};
static const char *const lt_status_compact_node[] = {
    "NODE",    "MEMBER",     "DB SIZE",   "IN USE",
    "LEADER",  "RAFT INDEX", "RAFT TERM", "RAFT APPLIED INDEX",
    "LEARNER", "ERRORS",     NULL};
static const char *const lt_status_extended[] = {
    "NODE",    "MEMBER",     "DB SIZE",   "IN USE",
    "LEADER",  "RAFT INDEX", "RAFT TERM", "RAFT APPLIED INDEX",
    "LEARNER", "PROTOCOL",   "STORAGE",   "ERRORS",
    NULL};

/* Checks one status row (cells after an optional NODE, at offset o). */
static const char *lt_status_row_problem(const lt_cells c, size_t o, bool extended)
{
    if (!lt_hex_id(c[o])) return "MEMBER is not a member ID";
    if (!lt_bytes(c[o + 1])) return "DB SIZE is not a size";
    if (!lt_in_use(c[o + 2])) return "IN USE is not a size with a percentage";
    if (!lt_hex_id(c[o + 3])) return "LEADER is not a member ID";
    if (!lt_digits(c[o + 4], 1, 20) || !lt_digits(c[o + 5], 1, 20) || !lt_digits(c[o + 6], 1, 20))
        return "a RAFT column is not a number";
    if (!lt_bool(c[o + 7])) return "LEARNER is not true or false";
    if (extended && (!lt_version(c[o + 8]) || !lt_version(c[o + 9])))
        return "PROTOCOL or STORAGE is not a version";
    return NULL;
}

rs_code live_talos_etcd_status_parse(const char *text, size_t len, const char *node, cJSON **out,
                                     rs_err *e)
{
    *out = NULL;
    lt_line lines[LT_ROWS_MAX];
    size_t n = 0;
    if (!lt_split(text, len, lines, &n, e)) return rs_wrap(e, "etcd status of %s", node);
    lt_table t;
    if (n == 0 || !lt_header(lines[0], &t))
        return rs_fail(e, RS_FAILED, "etcd status of %s: no table header in talosctl's answer",
                       node);
    bool extended = lt_layout_is(&t, lt_status_extended);
    bool with_node = extended || lt_layout_is(&t, lt_status_compact_node);
    if (!extended && !with_node && !lt_layout_is(&t, lt_status_compact))
        return rs_fail(e, RS_FAILED,
                       "etcd status of %s: the table's columns are not a layout this "
                       "version knows (compact or extended)",
                       node);
    if (n != 2)
        return rs_fail(e, RS_FAILED, "etcd status of %s: expected one member row, got %zu", node,
                       n - 1);
    lt_cells *cells = rs_xmalloc(sizeof *cells);
    size_t o = with_node ? 1 : 0;
    const char *problem = !lt_row(&t, lines[1], *cells) ? "a cell is out of its column"
                          : with_node && strcmp((*cells)[0], node) != 0
                              ? "the row names another node"
                              : lt_status_row_problem(*cells, o, extended);
    if (problem) {
        free(cells);
        return rs_fail(e, RS_FAILED, "etcd status of %s: %s", node, problem);
    }
    const char *errors = (*cells)[t.n - 1];
    bool leader_known = strspn((*cells)[o + 3], "0") != strlen((*cells)[o + 3]);
    cJSON *a = cJSON_CreateObject();
    cJSON_AddBoolToObject(a, "healthy", errors[0] == '\0' && leader_known);
    cJSON_AddBoolToObject(a, "learner", strcmp((*cells)[o + 7], "true") == 0);
    cJSON_AddStringToObject(a, "layout", extended ? "extended" : "compact");
    free(cells);
    *out = a;
    return RS_OK;
}

static const char *const lt_alarm_layout[] = {"MEMBER", "ALARM", NULL};
static const char *const lt_alarm_layout_node[] = {"NODE", "MEMBER", "ALARM", NULL};

rs_code live_talos_etcd_alarms_parse(const char *text, size_t len, const char *node, cJSON **out,
                                     rs_err *e)
{
    *out = NULL;
    lt_line lines[LT_ROWS_MAX];
    size_t n = 0;
    if (!lt_split(text, len, lines, &n, e)) return rs_wrap(e, "etcd alarm list of %s", node);
    cJSON *a = cJSON_CreateObject();
    cJSON *alarms = cJSON_AddArrayToObject(a, "alarms");
    if (n == 0) { /* talosctl prints the header only with the first alarm */
        *out = a;
        return RS_OK;
    }
    lt_table t;
    bool with_node = lt_header(lines[0], &t) && lt_layout_is(&t, lt_alarm_layout_node);
    if (!with_node && !(t.n > 0 && lt_layout_is(&t, lt_alarm_layout))) {
        cJSON_Delete(a);
        return rs_fail(e, RS_FAILED,
                       "etcd alarm list of %s: talosctl's answer is not an alarm table", node);
    }
    lt_cells *cells = rs_xmalloc(sizeof *cells);
    size_t o = with_node ? 1 : 0;
    for (size_t i = 1; i < n; i++) {
        const char *alarm = (*cells)[o + 1];
        bool ok = lt_row(&t, lines[i], *cells) && (!with_node || strcmp((*cells)[0], node) == 0) &&
                  lt_hex_id((*cells)[o]) &&
                  (strcmp(alarm, "NONE") == 0 || strcmp(alarm, "NOSPACE") == 0 ||
                   strcmp(alarm, "CORRUPT") == 0);
        if (!ok) {
            free(cells);
            cJSON_Delete(a);
            return rs_fail(e, RS_FAILED, "etcd alarm list of %s: row %zu is not an alarm", node, i);
        }
        cJSON *row = cJSON_CreateObject();
        cJSON_AddStringToObject(row, "member", (*cells)[o]);
        cJSON_AddStringToObject(row, "alarm", alarm);
        cJSON_AddItemToArray(alarms, row);
    }
    free(cells);
    *out = a;
    return RS_OK;
}
