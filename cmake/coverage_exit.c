/*
 * Coverage builds only (REASSERT_COVERAGE, `make coverage`): every call to
 * _exit() in the project is linked to this wrapper (-Wl,--wrap=_exit), which
 * writes the process's gcov counters first.
 *
 * The one idea: the scenario runner runs every run of every scenario in a
 * forked child that leaves with _exit() (so the child never runs the parent's
 * atexit handlers or flushes its stdio twice), and _exit() skips gcov's own
 * exit-time dump. Without this the core's transaction, which runs almost only
 * in those children, would show as never executed. A child killed by a signal
 * still loses its counters; that is the only blind spot left.
 */
#include <stdnoreturn.h>

void __gcov_dump(void);
noreturn void __real__exit(int status);
noreturn void __wrap__exit(int status);

noreturn void __wrap__exit(int status)
{
    __gcov_dump();
    __real__exit(status);
}
