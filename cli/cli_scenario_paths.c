/*
 * cli_scenario_paths.c — `reassert sim DIR`: a folder on sim's command line
 * stands for every scenario under it, so `reassert sim scenarios/` is the
 * whole suite, the same set ctest registers (CMakeLists.txt).
 *
 * The walk takes every `*.yaml` at any depth, in bytewise order of the whole
 * path (the order does not depend on the file system), and leaves out what
 * is not a scenario of the suite: folders named `pending` (scenarios today's
 * core fails, scenarios/README.md), names starting with a dot, and other
 * files (a cassette, a README). A folder reached through a symbolic link is
 * not walked (a link loop cannot hang the gate); any other entry named
 * *.yaml goes to the scenario loader, which refuses what is not a regular
 * file. A folder that holds no scenario is a usage error, never an empty
 * PASS.
 */
#include "cli/cli.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SCN_DEPTH_MAX 32     /* folders inside the folder given */
#define SCN_FILES_MAX 100000 /* scenario files one command may name */

typedef struct scn_list {
    char **path;
    size_t n, cap;
} scn_list;

static void scn_push(scn_list *l, char *path)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->path = rs_xrealloc(l->path, l->cap * sizeof *l->path);
    }
    l->path[l->n++] = path;
}

static bool scn_is_yaml(const char *name)
{
    size_t n = strlen(name);
    return n > 5 && strcmp(name + n - 5, ".yaml") == 0;
}

static char *scn_join(const char *dir, const char *name)
{
    size_t d = strlen(dir);
    while (d > 1 && dir[d - 1] == '/')
        d--;
    char *p = rs_xmalloc(d + strlen(name) + 2);
    memcpy(p, dir, d);
    p[d] = '/';
    strcpy(p + d + 1, name);
    return p;
}

/* A message quoting a path (the user's text), escaped (DESIGN.md §7.1). */
static void scn_say(const char *what, const char *path, const char *why)
{
    char *p = out_escape(path, false);
    fprintf(stderr, "reassert sim: %s %s%s%s\n", what, p, why ? ": " : "", why ? why : "");
    free(p);
}

static int scn_walk(const char *dir, int depth, scn_list *out)
{
    if (depth > SCN_DEPTH_MAX) {
        scn_say("folders nested deeper than 32 levels under", dir, NULL);
        return RS_USAGE;
    }
    DIR *d = opendir(dir);
    if (!d) {
        scn_say("cannot read the folder", dir, strerror(errno));
        return RS_DATAERR;
    }
    int code = RS_OK;
    for (struct dirent *de; code == RS_OK && (de = readdir(d));) {
        if (de->d_name[0] == '.') continue;
        char *path = scn_join(dir, de->d_name);
        struct stat st;
        if (lstat(path, &st) != 0) {
            scn_say("cannot read", path, strerror(errno));
            code = RS_DATAERR;
        } else if (S_ISDIR(st.st_mode)) {
            if (strcmp(de->d_name, "pending") != 0) code = scn_walk(path, depth + 1, out);
        } else if (scn_is_yaml(de->d_name) && out->n >= SCN_FILES_MAX) {
            scn_say("more than 100000 scenario files under", dir, NULL);
            code = RS_USAGE;
        } else if (scn_is_yaml(de->d_name)) {
            /* Anything else named *.yaml goes to the loader, which refuses
             * what is not a regular file (65, naming it; a FIFO is never
             * waited on): nothing under the folder is skipped unsaid. */
            scn_push(out, path);
            path = NULL;
        }
        free(path);
    }
    closedir(d);
    return code;
}

static int scn_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files one folder stands for, sorted, appended to out. */
static int scn_expand_dir(const char *dir, scn_list *out)
{
    scn_list found = {0};
    int code = scn_walk(dir, 0, &found);
    if (code == RS_OK && found.n == 0) {
        scn_say("no scenario (*.yaml, pending/ aside) under", dir, NULL);
        code = RS_USAGE;
    }
    if (code == RS_OK) qsort(found.path, found.n, sizeof *found.path, scn_cmp);
    for (size_t i = 0; i < found.n; i++) {
        if (code == RS_OK)
            scn_push(out, found.path[i]);
        else
            free(found.path[i]);
    }
    free(found.path);
    return code;
}

static bool scn_takes_value(const char *arg, const char *const *value_opts)
{
    for (size_t i = 0; value_opts[i]; i++)
        if (strcmp(arg, value_opts[i]) == 0) return true;
    return false;
}

int cli_sim_expand(int argc, char **argv, const char *const *value_opts, int *out_argc,
                   char ***out_argv)
{
    scn_list out = {0};
    int code = RS_OK;
    for (int i = 0; i < argc && code == RS_OK; i++) {
        struct stat st;
        bool value = i > 0 && scn_takes_value(argv[i - 1], value_opts);
        if (!value && argv[i][0] != '-' && stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
            code = scn_expand_dir(argv[i], &out);
        else
            scn_push(&out, rs_xstrdup(argv[i]));
    }
    scn_push(&out, NULL);
    *out_argc = (int)out.n - 1;
    *out_argv = out.path;
    if (code != RS_OK) {
        cli_sim_expand_free(*out_argc, *out_argv);
        *out_argc = 0;
        *out_argv = NULL;
    }
    return code;
}

void cli_sim_expand_free(int argc, char **argv)
{
    for (int i = 0; argv && i < argc; i++)
        free(argv[i]);
    free(argv);
}
