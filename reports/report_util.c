/*
 * report_util.c — the pieces the HTML page and the step summary share:
 * reading the runner's result nodes, escaping, and the before/after pairs.
 *
 * The one idea: escaping lives in one place per output language, and every
 * string of a report goes through it — scenario and cluster text is data in
 * HTML and Markdown alike.
 */
#include "reports/report_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/rs.h"

const rep_col rep_compare_cols[] = {
    {"virtual_seconds", "virtual seconds", true},
    {"api_calls", "api calls", false},
    {"writes", "writes", false},
    {"controller_restarts", "controller restarts", false},
    {"lease_writes", "lease writes", false},
    {"fence_acquisitions", "fence acquisitions", false},
};
const size_t rep_compare_n = sizeof rep_compare_cols / sizeof rep_compare_cols[0];

const char *rep_str(const cJSON *node, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(node, key));
}

double rep_num(const cJSON *node, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(node, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

const char *rep_verdict(const cJSON *s)
{
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "all_skipped"))) return "SKIPPED";
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "passed")) ? "PASS" : "FAIL";
}

void rep_html(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
        switch (*p) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&#39;", f);
            break;
        default:
            if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f)
                fputs("&#xFFFD;", f);
            else
                fputc(*p, f);
        }
    }
}

static void rep_number(FILE *f, double v)
{
    if (v == (double)(long long)v)
        fprintf(f, "%lld", (long long)v);
    else
        fprintf(f, "%.3f", v);
}

void rep_html_value(FILE *f, const cJSON *v)
{
    if (cJSON_IsNumber(v)) {
        rep_number(f, v->valuedouble);
    } else if (cJSON_IsBool(v)) {
        fputs(cJSON_IsTrue(v) ? "true" : "false", f);
    } else if (cJSON_IsString(v)) {
        rep_html(f, v->valuestring);
    } else if (cJSON_IsObject(v)) {
        const cJSON *k;
        bool first = true;
        cJSON_ArrayForEach(k, v)
        {
            fputs(first ? "" : ", ", f);
            first = false;
            rep_html(f, k->string);
            fputs(": ", f);
            rep_html_value(f, k);
        }
        if (first) fputs("-", f);
    }
}

void rep_md(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
        switch (*p) {
        case '|':
            fputs("&#124;", f);
            break;
        case '`':
            fputs("&#96;", f);
            break;
        case '\n':
        case '\r':
            fputc(' ', f);
            break;
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '*':
            fputs("\\*", f);
            break;
        case '_':
            fputs("\\_", f);
            break;
        case '[':
            fputs("\\[", f);
            break;
        case ']':
            fputs("\\]", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                fputc(' ', f);
            else
                fputc(*p, f);
        }
    }
}

const cJSON *rep_run_of(const cJSON *s, const char *strategy, const char *name)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(s, "runs"))
    {
        const char *st = rep_str(r, "strategy"), *n = rep_str(r, "name");
        if (st && n && strcmp(st, strategy) == 0 && strcmp(n, name) == 0) return r;
    }
    return NULL;
}

const cJSON *rep_eager_twin(const cJSON *s, const cJSON *run)
{
    const char *st = rep_str(run, "strategy"), *name = rep_str(run, "name");
    return st && name && strcmp(st, "lazy") == 0 ? rep_run_of(s, "eager", name) : NULL;
}

void html_compare(FILE *f, const cJSON *s)
{
    bool any = false;
    const cJSON *l;
    cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(s, "runs"))
    {
        const cJSON *eg = rep_eager_twin(s, l);
        if (!eg) continue;
        if (!any) {
            fputs("<table class=\"compare\"><tr><th>run: eager → lazy</th>", f);
            for (size_t c = 0; c < rep_compare_n; c++)
                fprintf(f, "<th>%s</th>", rep_compare_cols[c].head);
            fputs("</tr>\n", f);
            any = true;
        }
        fputs("<tr><td>", f);
        rep_html(f, rep_str(l, "name"));
        fputs("</td>", f);
        const cJSON *de = cJSON_GetObjectItemCaseSensitive(eg, "delta");
        const cJSON *dl = cJSON_GetObjectItemCaseSensitive(l, "delta");
        for (size_t c = 0; c < rep_compare_n; c++) {
            const char *fmt = rep_compare_cols[c].seconds ? "%.3f" : "%.0f";
            fputs("<td class=\"n\">", f);
            fprintf(f, fmt, rep_num(de, rep_compare_cols[c].key));
            fputs(" → ", f);
            fprintf(f, fmt, rep_num(dl, rep_compare_cols[c].key));
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    if (any) fputs("</table>\n", f);
}

int rep_mkdirs(const char *dir)
{
    if (!dir || !dir[0]) {
        errno = ENOENT;
        return -1;
    }
    char *p = rs_xstrdup(dir);
    int rc = 0;
    for (char *s = p + 1; rc == 0; s++) {
        bool end = *s == '\0';
        if (*s != '/' && !end) continue;
        char keep = *s;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) rc = -1;
        *s = keep;
        if (end) break;
    }
    struct stat st;
    if (rc == 0 && stat(dir, &st) != 0) rc = -1;
    if (rc == 0 && !S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        rc = -1;
    }
    free(p);
    return rc;
}
