/*
 * out.h — what a run says, in GitHub Actions annotation form, written
 * through a sink the caller gives.
 *
 * Text mode hands `::error::`, `::warning::`, `::notice::` and `::group::`
 * lines to the sink as they happen, so a deploy log shows progress on long
 * phases. JSON mode (`--output json`) hands the sink nothing and collects
 * errors and warnings for the one final document. The core never touches a
 * file or a terminal: where the lines go (stdout, a pipe to the scenario
 * runner, a buffer in a test) is the sink's business, and the sink lives in
 * cli/. Callers format names, never secret values; but a name is often
 * cluster text (a Lease holder, an owner annotation, an error body), and
 * cluster text may carry a credential. So every message and group title
 * passes the filter set by out_set_filter (the credentials of the run, in
 * every encoding cred_redact knows) before it is collected or written
 * (H59, DESIGN.md §3.1). What a message carries is then escaped on
 * its way to the sink (out_escape), so cluster or scenario text never forms
 * a workflow command.
 */
#ifndef RS_OUT_H
#define RS_OUT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h> /* snprintf: callers format names into messages */

/* One complete line (with its trailing '\n') per call. A sink must not fail
 * the run: a log that cannot be written is not a reason to leave fences. */
typedef struct rs_out_sink {
    void (*write)(void *ctx, const char *line, size_t len);
    void *ctx;
} rs_out_sink;

/* Actions log groups do not nest: opening a group while another is open
 * closes the outer one, and closing the inner one reopens the outer one as
 * "<title> (continued)". Deeper nesting than this is flattened. */
#define OUT_GROUP_DEPTH_MAX 4

struct cred_redact;

typedef struct rs_out {
    rs_out_sink sink;                 /* write may be NULL: say nothing */
    const struct cred_redact *filter; /* NULL: no credential to hide */
    bool json;
    cJSON *errors;   /* array of strings */
    cJSON *warnings; /* array of strings */
    int group_depth;
    char *group_titles[OUT_GROUP_DEPTH_MAX]; /* the open groups, outermost first */
} rs_out;

/* The Actions-log form of text that is not the program's own (DESIGN.md
 * §7.1): '%' -> "%25", CR -> "%0D", LF -> "%0A"; with line_start (the text
 * begins a line), a leading "::" after blanks has its first ':' written
 * "%3A", so it cannot be read as a workflow command. Caller frees. Every
 * line the sink receives has its message passed through this. */
char *out_escape(const char *msg, bool line_start);

/* One line as the sink received it (workflow-command form, with or without
 * its '\n'), rewritten for a terminal, where workflow commands are noise
 * (issue 30: they are for GitHub Actions only): "::error::M" becomes
 * "error: M", "::warning::M" "warning: M", "::notice::M" "notice: M",
 * "::group::T" "==> T", and "::endgroup::" nothing (NULL). The message
 * keeps its escaping (out_escape: CR, LF and '%' as "%0D", "%0A", "%25"; a
 * leading "::" of any other line "%3A:"), so no plain line starts a
 * workflow command either: an Actions log may still show it (a container
 * that does not see GITHUB_ACTIONS). The result ends in '\n'. Caller
 * frees. */
char *out_plain_line(const char *line, size_t len);

void out_init(rs_out *o, rs_out_sink sink, bool json);
/* Every later message and group title is redacted by filter (borrowed: it
 * must outlive every later call on o; NULL turns filtering off). */
void out_set_filter(rs_out *o, const struct cred_redact *filter);
void out_free(rs_out *o);

void out_info(rs_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void out_notice(rs_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void out_warning(rs_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A warning already said elsewhere (a live run's warnings about its inputs
 * go to stderr before its output begins): collected for the result
 * document and the job summary, not handed to the sink again. */
void out_warning_said(rs_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void out_error(rs_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void out_group_begin(rs_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void out_group_end(rs_out *o);

#endif
