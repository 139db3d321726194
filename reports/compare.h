/*
 * compare.h — the before/after table: every scenario under eager (production
 * today) and lazy (the fix), per run, side by side.
 */
#ifndef REPORTS_COMPARE_H
#define REPORTS_COMPARE_H

/* `reassert sim --compare eager,lazy SCENARIO.yaml... [--markdown]`. */
int reports_compare_main(int argc, char **argv);

#endif
