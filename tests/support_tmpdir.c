/*
 * support_tmpdir.c — a private directory per test and files written into it.
 */
#include "tests/support_tmpdir.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

char ts_dir[64];

void ts_tmpdir_make(const char *prefix)
{
    snprintf(ts_dir, sizeof ts_dir, "/tmp/%s.XXXXXX", prefix);
    ck_assert_ptr_nonnull(mkdtemp(ts_dir));
}

void ts_tmpdir_remove(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", ts_dir);
    ck_assert_int_eq(system(cmd), 0);
}

const char *ts_put(const char *name, const char *text)
{
    static char paths[8][256];
    static int slot;
    char *p = paths[slot++ % 8];
    snprintf(p, 256, "%s/%s", ts_dir, name);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return p;
}
