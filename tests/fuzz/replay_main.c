/*
 * replay_main.c — the main a fuzz target gets when it is built without
 * libFuzzer (the plain and sanitizer builds): it runs the target once over
 * every input it is given, so ctest replays each corpus quickly and
 * deterministically (no mutation, no time limit).
 *
 * Usage: fuzz_<target> PATH...   (a file is one input; a directory is every
 * regular file under it, at any depth, in name order — as libFuzzer reads a
 * corpus folder, so a seed folder such as scenarios/ may hold sub-folders;
 * a folder reached through a symbolic link is not walked). Exit 0 after the last
 * input; a property the target checks, or a sanitizer, aborts on the input
 * it names just before. No input at all is a failure (exit 1): an empty or
 * misnamed corpus must not pass as "replayed clean".
 */
#include "tests/fuzz/fuzz_support.h"

#include <dirent.h>
#include <sys/stat.h>

static int rp_count;

static int rp_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void rp_file(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        exit(1);
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len, fp)) > 0) {
        len += got;
        if (len == cap) buf = realloc(buf, cap *= 2);
    }
    if (!buf || ferror(fp)) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        exit(1);
    }
    fclose(fp);
    printf("replay: %s (%zu bytes)\n", path, len);
    fflush(stdout);
    /* An exact-size copy, so a read past the input is caught by ASan. */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) abort();
    if (len) memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    rp_count++;
}

static void rp_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open %s\n", dir);
        exit(1);
    }
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *de; (de = readdir(d));) {
        if (de->d_name[0] == '.') continue;
        char **grown = realloc(names, (n + 1) * sizeof *names);
        if (!grown) abort();
        names = grown;
        names[n] = malloc(strlen(dir) + strlen(de->d_name) + 2);
        if (!names[n]) abort();
        sprintf(names[n], "%s/%s", dir, de->d_name);
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, rp_cmp);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (lstat(names[i], &st) == 0 && S_ISDIR(st.st_mode))
            rp_dir(names[i]);
        else if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode))
            rp_file(names[i]);
        free(names[i]);
    }
    free(names);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE-OR-DIRECTORY...\n", argv[0]);
        return 64;
    }
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: no such file or directory\n", argv[i]);
            return 1;
        }
        if (S_ISDIR(st.st_mode))
            rp_dir(argv[i]);
        else
            rp_file(argv[i]);
    }
    if (rp_count == 0) {
        fprintf(stderr, "replay: no input found\n");
        return 1;
    }
    printf("replay: %d inputs, no crash, no failed property\n", rp_count);
    return 0;
}
