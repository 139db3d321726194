/*
 * out.c — annotation-style progress and diagnostics (see out.h): formats
 * each line and hands it to the sink; holds no file of its own.
 */
#include "core/out.h"

#include "core/cred/cred_redact.h"
#include "core/rs.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void out_init(rs_out *o, rs_out_sink sink, bool json)
{
    o->sink = sink;
    o->filter = NULL;
    o->json = json;
    o->errors = cJSON_CreateArray();
    o->warnings = cJSON_CreateArray();
    o->group_depth = 0;
    memset(o->group_titles, 0, sizeof o->group_titles);
}

void out_set_filter(rs_out *o, const struct cred_redact *filter)
{
    o->filter = filter;
}

void out_free(rs_out *o)
{
    cJSON_Delete(o->errors);
    cJSON_Delete(o->warnings);
    o->errors = o->warnings = NULL;
    for (int i = 0; i < OUT_GROUP_DEPTH_MAX; i++) {
        free(o->group_titles[i]);
        o->group_titles[i] = NULL;
    }
    o->group_depth = 0;
}

/* The message, formatted and then passed through the run's credential
 * filter: nothing that reaches a sink or the collected errors escapes it. */
static char *vformat(const rs_out *o, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    char *s = rs_xmalloc((size_t)(n < 0 ? 0 : n) + 1);
    vsnprintf(s, (size_t)(n < 0 ? 0 : n) + 1, fmt, ap);
    if (!o->filter) return s;
    char *clean = cred_redact_text(o->filter, s, strlen(s), NULL);
    free(s);
    return clean;
}

char *out_escape(const char *msg, bool line_start)
{
    if (!msg) msg = "";
    size_t n = 0;
    for (const char *p = msg; *p; p++)
        n += (*p == '%' || *p == '\r' || *p == '\n') ? 3 : 1;
    char *s = rs_xmalloc(n + 3), *o = s; /* + a ':' become "%3A" */
    const char *p = msg;
    if (line_start) {
        while (*p == ' ' || *p == '\t')
            *o++ = *p++;
        /* The Actions runner trims leading blanks before it looks for "::". */
        if (p[0] == ':' && p[1] == ':') {
            memcpy(o, "%3A", 3);
            o += 3;
            p++;
        }
    }
    for (; *p; p++) {
        const char *esc = *p == '%' ? "%25" : *p == '\r' ? "%0D" : *p == '\n' ? "%0A" : NULL;
        if (esc) {
            memcpy(o, esc, 3);
            o += 3;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
    return s;
}

char *out_plain_line(const char *line, size_t len)
{
    static const struct {
        const char *command, *plain;
    } kinds[] = {{"::error::", "error: "},
                 {"::warning::", "warning: "},
                 {"::notice::", "notice: "},
                 {"::group::", "==> "},
                 {"::endgroup::", NULL}};
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        len--;
    const char *prefix = "", *p = line, *end = line + len;
    for (size_t i = 0; i < RS_ARRAY_LEN(kinds); i++) {
        size_t n = strlen(kinds[i].command);
        if (len < n || memcmp(line, kinds[i].command, n) != 0) continue;
        if (!kinds[i].plain) return NULL;
        prefix = kinds[i].plain;
        p = line + n;
        break;
    }
    /* Worst case: every byte kept, a "%3A" for a leading ':', the '\n'. */
    char *s = rs_xmalloc(strlen(prefix) + (size_t)(end - p) + 4), *o = s;
    memcpy(o, prefix, strlen(prefix));
    o += strlen(prefix);
    if (!prefix[0]) {
        while (p < end && (*p == ' ' || *p == '\t'))
            *o++ = *p++;
        if (end - p >= 2 && p[0] == ':' && p[1] == ':') {
            memcpy(o, "%3A", 3);
            o += 3;
            p++;
        }
    }
    memcpy(o, p, (size_t)(end - p));
    o += end - p;
    *o++ = '\n';
    *o = '\0';
    return s;
}

/* The one place a line reaches the sink: the program's own prefix, then the
 * message escaped (DESIGN.md §7.1), so no text a message carries — a Lease
 * holder, a name, an error from the cluster — ends the line, opens or closes a
 * group, or forges an annotation. */
static void out_line(rs_out *o, const char *prefix, const char *msg)
{
    if (o->json || !o->sink.write) return;
    char *text = out_escape(msg, prefix[0] == '\0');
    char *line = rs_xasprintf("%s%s\n", prefix, text);
    o->sink.write(o->sink.ctx, line, strlen(line));
    free(line);
    free(text);
}

static void emit(rs_out *o, const char *prefix, cJSON *collect, const char *fmt, va_list ap)
{
    char *msg = vformat(o, fmt, ap);
    if (collect) cJSON_AddItemToArray(collect, cJSON_CreateString(msg));
    out_line(o, prefix, msg);
    free(msg);
}

void out_info(rs_out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(o, "", NULL, fmt, ap);
    va_end(ap);
}

void out_notice(rs_out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(o, "::notice::", NULL, fmt, ap);
    va_end(ap);
}

void out_warning(rs_out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(o, "::warning::", o->warnings, fmt, ap);
    va_end(ap);
}

void out_warning_said(rs_out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = vformat(o, fmt, ap);
    va_end(ap);
    cJSON_AddItemToArray(o->warnings, cJSON_CreateString(msg));
    free(msg);
}

void out_error(rs_out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(o, "::error::", o->errors, fmt, ap);
    va_end(ap);
}

void out_group_begin(rs_out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *title = vformat(o, fmt, ap);
    va_end(ap);
    if (o->group_depth >= OUT_GROUP_DEPTH_MAX) {
        /* Too deep to track: the lines stay in the current group. */
        o->group_depth++;
        free(title);
        return;
    }
    /* GitHub does not nest groups: close the outer one first. */
    if (o->group_depth > 0) out_line(o, "::endgroup::", "");
    out_line(o, "::group::", title);
    o->group_titles[o->group_depth++] = title;
}

void out_group_end(rs_out *o)
{
    if (o->group_depth <= 0) return;
    int top = --o->group_depth;
    if (top >= OUT_GROUP_DEPTH_MAX) return;
    free(o->group_titles[top]);
    o->group_titles[top] = NULL;
    out_line(o, "::endgroup::", "");
    if (top > 0) {
        char *again = rs_xasprintf("%s (continued)", o->group_titles[top - 1]);
        out_line(o, "::group::", again);
        free(again);
    }
}
