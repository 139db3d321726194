/*
 * main.c — entry point: dispatches to run, sim, sweep and replay.
 */
#include "core/rs.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--version") == 0) {
        printf("reassert %s\n", REASSERT_VERSION);
        return 0;
    }
    fprintf(stderr, "reassert: not yet wired\n");
    return RS_USAGE;
}
