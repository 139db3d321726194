/*
 * rec_cassette.h — the cassette file (DESIGN.md §8, a contract for the table
 * and column names): meta(key, value), calls(seq, op, target, request,
 * status, response, error, vt_ms, wall_ms, sent, batch), counters(name,
 * value). `sent` and `batch` extend the contract's columns: whether a request
 * without an answer left the client, and which calls went as one batch.
 *
 * Written in WAL mode, one transaction per call, each checkpointed into the
 * file at once: a run killed mid-way keeps every call up to its last, in
 * the .db alone. The end record (meta exit and vt_end, the counters) is one
 * transaction; a cassette without it is a run that never ended (killed, or
 * copied before its end), and replay says so. Read whole into memory and
 * checked row by row: a file that is not a cassette, or a row that cannot be
 * replayed, is RS_DATAERR with one sentence naming the file (and the seq).
 */
#ifndef REC_CASSETTE_H
#define REC_CASSETTE_H

#include "core/rs.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

/* The format this build writes and the newest it reads. */
#define REC_FORMAT_VERSION 1

/* One call as stored (text already redacted). */
typedef struct rec_row {
    int64_t seq;
    char *op, *target;
    char *request;  /* JSON object text; NULL for none */
    int status;     /* HTTP-like; 0 transport error */
    char *response; /* JSON text; NULL for none */
    char *error;    /* NULL for none */
    int64_t vt_ms, wall_ms;
    int sent; /* rs_sent */
    int64_t batch;
} rec_row;

typedef struct rec_cassette rec_cassette;

/* Creates path, mode 0600, exclusively: anything already there (a file, a
 * symlink, a -wal or -journal beside it) is RS_USAGE naming path. */
rs_code rec_cassette_create(const char *path, rec_cassette **out, rs_err *e);
/* Why a cassette cannot be made at path ("is already there": a file or a
 * symlink; "has a journal beside it": a -wal or -journal SQLite would replay
 * into it), or NULL when it can. The check rec_cassette_create makes first,
 * for a caller that refuses before anything runs. */
const char *rec_cassette_taken(const char *path);
rs_code rec_cassette_meta(rec_cassette *c, const char *key, const char *value, rs_err *e);
/* Appends one row, in a transaction of its own. */
rs_code rec_cassette_call(rec_cassette *c, const rec_row *row, rs_err *e);
/* Every row written so far once more through fn (target, request, response
 * and error; fn returns the new text, caller-owned, or NULL for "unchanged"),
 * in one transaction; then the write-ahead log is truncated, so no earlier
 * version of a row stays in the -wal (and secure_delete zeroes it in the
 * file). The recorder calls it when a call taught it a secret that rows
 * written before may hold. */
enum { REC_COL_TARGET, REC_COL_REQUEST, REC_COL_RESPONSE, REC_COL_ERROR };
typedef char *(*rec_text_fn)(void *ctx, int column, const char *text);
rs_code rec_cassette_rewrite(rec_cassette *c, rec_text_fn fn, void *ctx, rs_err *e);
/* The end record: meta (an object of key -> string: the run's exit, its
 * last clock read) and the run's counters (an object of name -> JSON value),
 * in one transaction, so a cassette has all of its end or none of it. */
rs_code rec_cassette_end(rec_cassette *c, const cJSON *meta, const cJSON *counters, rs_err *e);
/* The end record of a run whose process died before it could write one,
 * written by the process that saw it die and knows why: the scenario's own
 * `crash` fault ended it (exit 137, DESIGN §5). meta exit alone (the
 * counters died with the process); an end record already there is kept. */
rs_code rec_cassette_end_killed(const char *path, int exit_code, rs_err *e);
void rec_cassette_close(rec_cassette *c);
/* Removes path and its -wal, -shm and -journal (a cassette made and not
 * started, a private read-only copy). */
void rec_cassette_remove(const char *path);

/* A cassette read back whole. */
typedef struct rec_tape {
    char *path;
    cJSON *meta;     /* object: key -> string */
    cJSON *counters; /* object, or NULL when the run never finished */
    rec_row *rows;
    size_t n_rows;
} rec_tape;

/* Reads and checks path; RS_DATAERR naming the file (and seq) otherwise. */
rs_code rec_tape_load(const char *path, rec_tape **out, rs_err *e);
void rec_tape_free(rec_tape *t);
/* meta[key] or NULL. */
const char *rec_tape_meta(const rec_tape *t, const char *key);
/* True for the non-transport ops a cassette records: clock.now,
 * clock.sleep, entropy, pid. */
bool rec_op_is_clock(const char *op);

#endif
