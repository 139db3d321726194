/*
 * support_tmpdir.h — a private directory per test and files written into it
 * (the fixture the kubeconfig tests share).
 */
#ifndef TESTS_SUPPORT_TMPDIR_H
#define TESTS_SUPPORT_TMPDIR_H

#include <stddef.h>

/* The current test's directory, made by ts_tmpdir_make. */
extern char ts_dir[64];

/* Makes a fresh directory /tmp/PREFIX.XXXXXX as ts_dir (fails the test if it
 * cannot). */
void ts_tmpdir_make(const char *prefix);

/* Removes ts_dir and everything under it. */
void ts_tmpdir_remove(void);

/* Writes ts_dir/NAME with TEXT; returns the path (one of eight rotating
 * buffers, so a few paths can be held at once). */
const char *ts_put(const char *name, const char *text);

#endif
