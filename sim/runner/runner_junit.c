/*
 * runner_junit.c — the JUnit XML report (see runner_junit.h).
 *
 * Input is the scenarios array sim_main builds: per scenario "name", "file",
 * "passed", "runs" (each run's "name", "strategy", "passed", "failures"),
 * "skipped" (each a "strategy", "reason" and the "runs" it would have run)
 * and, for a file that could not be loaded, "load_error". Each suite's
 * counts are taken in a first pass, so the <testsuite> header carries them.
 */
#include "sim/runner/runner_junit.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

typedef enum junit_kind { JUNIT_PASSED, JUNIT_FAILURE, JUNIT_ERROR, JUNIT_SKIPPED } junit_kind;

typedef struct junit_counts {
    long tests, failures, errors, skipped;
    double seconds; /* wall time of the runs counted */
} junit_counts;

static const char *jstr(const cJSON *o, const char *key)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
    return s ? s : "";
}

/* Length of the well-formed UTF-8 sequence at p that XML 1.0 admits as a
 * character (no overlong forms, surrogates, U+FFFE/U+FFFF or beyond
 * U+10FFFF), or 0. */
static size_t utf8_xml_char(const unsigned char *p)
{
    unsigned cp;
    size_t n;
    if (p[0] < 0x80) return 1;
    if (p[0] >= 0xC2 && p[0] <= 0xDF) {
        cp = p[0] & 0x1Fu;
        n = 2;
    } else if (p[0] >= 0xE0 && p[0] <= 0xEF) {
        cp = p[0] & 0x0Fu;
        n = 3;
    } else if (p[0] >= 0xF0 && p[0] <= 0xF4) {
        cp = p[0] & 0x07u;
        n = 4;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0; /* also stops at the terminating NUL */
        cp = (cp << 6) | (p[i] & 0x3Fu);
    }
    static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE ||
        cp == 0xFFFF)
        return 0;
    return n;
}

/* s as XML character data (attr: inside a double-quoted attribute, where
 * TAB, LF and CR are kept as character references). Control characters and
 * anything that is not UTF-8 are dropped: no text can make the file invalid. */
static void xml_text(FILE *f, const char *s, bool attr)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        unsigned char c = *p;
        const char *rep = c == '<'            ? "&lt;"
                          : c == '>'          ? "&gt;"
                          : c == '&'          ? "&amp;"
                          : c == '"'          ? "&quot;"
                          : c == '\r'         ? "&#13;"
                          : attr && c == '\n' ? "&#10;"
                          : attr && c == '\t' ? "&#9;"
                                              : NULL;
        if (rep) {
            fputs(rep, f);
            p++;
            continue;
        }
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) {
            p++;
            continue;
        }
        size_t n = utf8_xml_char(p);
        if (n == 0) {
            p++; /* not UTF-8: dropped */
            continue;
        }
        /* C1 controls (U+0080..U+009F) are dropped like C0 ones. */
        if (n == 2 && p[0] == 0xC2 && p[1] < 0xA0) {
            p += 2;
            continue;
        }
        fwrite(p, 1, n, f);
        p += n;
    }
}

static void xml_attr(FILE *f, const char *name, const char *value)
{
    fprintf(f, " %s=\"", name);
    xml_text(f, value, true);
    fputc('"', f);
}

static junit_kind run_kind(const cJSON *r)
{
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "passed"))) return JUNIT_PASSED;
    /* No world to run in (the runner's "(world)" entry, or no {tmp}): the
     * runs never executed, which is an error, not an unmet expectation. */
    const char *name = jstr(r, "name");
    if (!name[0] || strcmp(name, "(world)") == 0) return JUNIT_ERROR;
    return JUNIT_FAILURE;
}

static void count(junit_counts *c, junit_kind k)
{
    c->tests++;
    c->failures += k == JUNIT_FAILURE;
    c->errors += k == JUNIT_ERROR;
    c->skipped += k == JUNIT_SKIPPED;
}

/* A run's wall time (the runner's "wall_ms": the before events, the forked
 * run and its checks), 0 when absent (a skipped run never ran). */
static double run_seconds(const cJSON *r)
{
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(r, "wall_ms");
    return cJSON_IsNumber(ms) && ms->valuedouble > 0 ? ms->valuedouble / 1e3 : 0.0;
}

static junit_counts suite_counts(const cJSON *s)
{
    junit_counts c = {0};
    if (cJSON_GetObjectItemCaseSensitive(s, "load_error")) {
        count(&c, JUNIT_ERROR);
        return c;
    }
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(s, "runs"))
    {
        count(&c, run_kind(r));
        c.seconds += run_seconds(r);
    }
    const cJSON *k;
    cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(s, "skipped"))
    {
        for (int i = 0; i < cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(k, "runs")); i++)
            count(&c, JUNIT_SKIPPED);
    }
    return c;
}

static void counts_attrs(FILE *f, const junit_counts *c)
{
    fprintf(f, " tests=\"%ld\" failures=\"%ld\" errors=\"%ld\" skipped=\"%ld\" time=\"%.3f\"",
            c->tests, c->failures, c->errors, c->skipped, c->seconds);
}

static void testcase_open(FILE *f, const char *classname, const char *run, const char *strategy,
                          double seconds)
{
    fputs("    <testcase", f);
    xml_attr(f, "classname", classname);
    fputs(" name=\"", f);
    xml_text(f, run, true);
    if (strategy) {
        fputs(" [", f);
        xml_text(f, strategy, true);
        fputc(']', f);
    }
    fprintf(f, "\" time=\"%.3f\"", seconds);
}

/* <failure>/<error>: the first failure as the message, every one as text. */
static void run_testcase(FILE *f, const char *classname, const cJSON *r)
{
    junit_kind k = run_kind(r);
    const char *name = jstr(r, "name");
    testcase_open(f, classname, name[0] ? name : "(tmp)", jstr(r, "strategy"), run_seconds(r));
    if (k == JUNIT_PASSED) {
        fputs("/>\n", f);
        return;
    }
    const cJSON *failures = cJSON_GetObjectItemCaseSensitive(r, "failures");
    const cJSON *first = cJSON_GetArrayItem(failures, 0);
    const char *tag = k == JUNIT_ERROR ? "error" : "failure";
    fprintf(f, ">\n      <%s", tag);
    xml_attr(f, "message", first ? cJSON_GetStringValue(first) : "the run failed");
    xml_attr(f, "type", k == JUNIT_ERROR ? "world" : "expectation");
    fputc('>', f);
    const cJSON *fl;
    cJSON_ArrayForEach(fl, failures)
    {
        xml_text(f, cJSON_GetStringValue(fl), false);
        fputc('\n', f);
    }
    fprintf(f, "</%s>\n    </testcase>\n", tag);
}

static void suite_write(FILE *f, const cJSON *s)
{
    const cJSON *load_error = cJSON_GetObjectItemCaseSensitive(s, "load_error");
    /* An unloadable file has no name of its own: it is known by its path. */
    const char *name = load_error ? jstr(s, "file") : jstr(s, "name");
    junit_counts c = suite_counts(s);
    fputs("  <testsuite", f);
    xml_attr(f, "name", name);
    counts_attrs(f, &c);
    xml_attr(f, "file", jstr(s, "file"));
    fputs(">\n", f);
    if (load_error) {
        testcase_open(f, name, "load", NULL, 0.0);
        fputs(">\n      <error", f);
        xml_attr(f, "message", cJSON_GetStringValue(load_error));
        xml_attr(f, "type", "load");
        fputs("/>\n    </testcase>\n  </testsuite>\n", f);
        return;
    }
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(s, "runs")) run_testcase(f, name, r);
    const cJSON *k;
    cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(s, "skipped"))
    {
        const cJSON *rn;
        cJSON_ArrayForEach(rn, cJSON_GetObjectItemCaseSensitive(k, "runs"))
        {
            testcase_open(f, name, cJSON_GetStringValue(rn), jstr(k, "strategy"), 0.0);
            fputs(">\n      <skipped", f);
            xml_attr(f, "message", jstr(k, "reason"));
            fputs("/>\n    </testcase>\n", f);
        }
    }
    fputs("  </testsuite>\n", f);
}

rs_code sim_junit_write(const char *path, const cJSON *scenarios, rs_err *e)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return rs_fail(e, RS_FAILED, "cannot write the JUnit report %s: %s", path, strerror(errno));
    junit_counts all = {0};
    const cJSON *s;
    cJSON_ArrayForEach(s, scenarios)
    {
        junit_counts c = suite_counts(s);
        all.tests += c.tests;
        all.failures += c.failures;
        all.errors += c.errors;
        all.skipped += c.skipped;
        all.seconds += c.seconds;
    }
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"reassert sim\"", f);
    counts_attrs(f, &all);
    fputs(">\n", f);
    cJSON_ArrayForEach(s, scenarios) suite_write(f, s);
    fputs("</testsuites>\n", f);
    bool ok = !ferror(f);
    int err = errno;
    if (fclose(f) != 0 && ok) {
        ok = false;
        err = errno;
    }
    if (!ok)
        return rs_fail(e, RS_FAILED, "cannot write the JUnit report %s: %s", path, strerror(err));
    return RS_OK;
}
