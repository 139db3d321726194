/*
 * main.c — entry point: dispatches to run, sim (init, serve, --compare),
 * sweep and replay (DESIGN.md §7). Nothing else lives here; each command is
 * one cli/cmd_*.c file.
 */
#include "cli/cli.h"

#include <string.h>

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "";
    if (strcmp(cmd, "--version") == 0) {
        printf("reassert %s\n", REASSERT_VERSION);
        return 0;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        fputs(rs_usage_text, stdout);
        return 0;
    }
    if (strcmp(cmd, "sim") == 0) {
        if (argc > 2 && strcmp(argv[2], "serve") == 0) return cmd_serve(argc - 3, argv + 3);
        return cmd_sim(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "sweep") == 0) return cmd_sweep(argc - 2, argv + 2);
    if (strcmp(cmd, "replay") == 0) return cmd_replay(argc - 2, argv + 2);
    if (strcmp(cmd, "run") == 0) return cmd_run(argc - 2, argv + 2);
    return cmd_run(argc - 1, argv + 1);
}
