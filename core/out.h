/*
 * out.h — what a run says, in GitHub Actions annotation form.
 *
 * Text mode prints `::error::`, `::warning::`, `::notice::` and `::group::`
 * lines as they happen, so a deploy log shows progress on long phases. JSON
 * mode (`--output json`) prints nothing as it goes and collects errors and
 * warnings for the one final document. Callers format names, never secret
 * values: nothing here can scrub a credential after the fact.
 */
#ifndef RS_OUT_H
#define RS_OUT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

typedef struct rs_out {
    FILE *fp;
    bool json;
    cJSON *errors;   /* array of strings */
    cJSON *warnings; /* array of strings */
    int group_depth;
} rs_out;

void out_init(rs_out *o, FILE *fp, bool json);
void out_free(rs_out *o);

void out_info(rs_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void out_notice(rs_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void out_warning(rs_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void out_error(rs_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void out_group_begin(rs_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void out_group_end(rs_out *o);

#endif
