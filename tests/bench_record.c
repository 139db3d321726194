/*
 * bench_record.c — `make bench-record`: what recording and strict replay
 * cost per call (issue 11), written to build/bench/record.json.
 *
 * One run — the Stage of two-run-stage-reassert (a full rotation, about
 * 1,200 transport, clock and entropy calls) — is run in process through the
 * production run path (cli_run_once) on a fresh copy of its world, once
 * plain and once with --record, and the cassette is then strictly replayed
 * (cmd_replay). Each is timed with this process's own monotonic clock,
 * ROUNDS times; the figures are medians:
 *   record overhead per call = (recorded run - plain run) / calls recorded
 *   strict replay per call   = replay / calls recorded (the replay stands
 *                              in for the world, so all of it is overhead)
 *
 *   bench_record SOURCE_ROOT OUT.json
 */
#include "cli/cli.h"
#include "sim/scenario/scenario.h"
#include "sim/world/world.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 7

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_s(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

/* This process's CPU time: what a loaded machine does not inflate. */
static double cpu_s(void)
{
    return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void sh(const char *cmd)
{
    if (system(cmd) != 0) {
        fprintf(stderr, "bench-record: `%s` failed\n", cmd);
        exit(1);
    }
}

/* One in-process run on a fresh copy of the world; seconds (*cpu: CPU
 * seconds). */
static double timed_run(const char *dir, const char *cassette, double *cpu)
{
    char cmd[8400], db[4200];
    snprintf(cmd, sizeof cmd, "cp %s/pristine.db %s/run.db", dir, dir);
    sh(cmd);
    snprintf(db, sizeof db, "sim:%s/run.db", dir);
    char *argv[] = {"--transport", db, "--desired", "current", "--record", (char *)cassette, NULL};
    int argc = cassette ? 6 : 4;
    rs_run_args args;
    rs_err e;
    rs_err_clear(&e);
    if (run_args_parse(argc, argv, &args, &e) != RS_OK) {
        fprintf(stderr, "bench-record: %s\n", e.msg);
        exit(1);
    }
    FILE *devnull = fopen("/dev/null", "w");
    double t0 = now_s(), c0 = cpu_s();
    int code = cli_run_once(&args, NULL, devnull);
    double t = now_s() - t0;
    *cpu = cpu_s() - c0;
    fclose(devnull);
    if (code != RS_OK) {
        fprintf(stderr, "bench-record: the run exited %d\n", code);
        exit(1);
    }
    return t;
}

/* cmd_replay --strict with its verdict sent to /dev/null; seconds. */
static double timed_replay(const char *cassette)
{
    fflush(stdout);
    int saved = dup(1), null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    char *argv[] = {(char *)cassette, "--strict", NULL};
    double t0 = now_s();
    int code = cmd_replay(2, argv);
    double t = now_s() - t0;
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    close(null);
    if (code != RS_OK) {
        fprintf(stderr, "bench-record: strict replay exited %d\n", code);
        exit(1);
    }
    return t;
}

static long count_calls(const char *cassette)
{
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "sqlite3 %s 'SELECT count(*) FROM calls'", cassette);
    FILE *p = popen(cmd, "r");
    long n = 0;
    if (!p || fscanf(p, "%ld", &n) != 1) n = 0;
    if (p) pclose(p);
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: bench_record SOURCE_ROOT OUT.json\n");
        return 64;
    }
    char dir[] = "/tmp/reassert-bench-record-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char cmd[8400], cassette[4200], path[4200];
    snprintf(path, sizeof path, "%s/scenarios/two-run-stage-reassert.yaml", argv[1]);
    sc_scenario *sc = NULL;
    rs_err e;
    rs_err_clear(&e);
    snprintf(cassette, sizeof cassette, "%s/pristine.db", dir);
    if (sc_load(path, &sc, &e) != RS_OK || sim_world_build(cassette, sc, &e) != RS_OK) {
        fprintf(stderr, "bench-record: %s\n", e.msg);
        return 1;
    }
    sc_free(sc);
    double plain[ROUNDS], rec[ROUNDS], rep[ROUNDS], plain_cpu[ROUNDS], rec_cpu[ROUNDS];
    long calls = 0;
    for (int i = 0; i < ROUNDS; i++) {
        snprintf(cassette, sizeof cassette, "%s/c%d.db", dir, i);
        plain[i] = timed_run(dir, NULL, &plain_cpu[i]);
        rec[i] = timed_run(dir, cassette, &rec_cpu[i]);
        rep[i] = timed_replay(cassette);
        calls = count_calls(cassette);
    }
    qsort(plain, ROUNDS, sizeof *plain, cmp_double);
    qsort(rec, ROUNDS, sizeof *rec, cmp_double);
    qsort(rep, ROUNDS, sizeof *rep, cmp_double);
    qsort(plain_cpu, ROUNDS, sizeof *plain_cpu, cmp_double);
    qsort(rec_cpu, ROUNDS, sizeof *rec_cpu, cmp_double);
    if (calls <= 0) return 1;
    double rec_us = (rec[ROUNDS / 2] - plain[ROUNDS / 2]) / (double)calls * 1e6;
    double rec_cpu_us = (rec_cpu[ROUNDS / 2] - plain_cpu[ROUNDS / 2]) / (double)calls * 1e6;
    double rep_us = rep[ROUNDS / 2] / (double)calls * 1e6;
    FILE *out = fopen(argv[2], "w");
    if (!out) return 1;
    fprintf(out,
            "{\"title\": \"Record and replay overhead\", \"rows\": ["
            "{\"name\": \"record overhead per call\", \"value\": %.1f, \"unit\": \"us\"}, "
            "{\"name\": \"record overhead per call, CPU\", \"value\": %.1f, \"unit\": \"us\"}, "
            "{\"name\": \"strict replay per call\", \"value\": %.1f, \"unit\": \"us\"}, "
            "{\"name\": \"record + strict replay per call\", \"value\": %.1f, \"unit\": \"us\"}, "
            "{\"name\": \"calls in the recorded run\", \"value\": %ld, \"unit\": \"calls\"}], "
            "\"note\": \"two-run-stage-reassert's Stage in process (cli_run_once) on a fresh "
            "world copy, plain and with --record, then replay --strict; median of %d rounds, "
            "this process's monotonic clock (CPU: its CPU clock, which a loaded machine does "
            "not inflate); record overhead = (recorded - plain) / calls, "
            "replay = replay time / calls\"}\n",
            rec_us, rec_cpu_us, rep_us, rec_us + rep_us, calls, ROUNDS);
    fclose(out);
    printf("record %.1f us/call, strict replay %.1f us/call (%ld calls, median of %d)\n", rec_us,
           rep_us, calls, ROUNDS);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    sh(cmd);
    return 0;
}
