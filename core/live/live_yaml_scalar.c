/*
 * live_yaml_scalar.c — typing plain YAML scalars (core schema: null, bool,
 * int, float, else string) and duration scalars; used by live_yaml.c.
 */
#include "core/live/live_yaml.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- scalar typing ------------------------------------------------------- */

static bool ly_all_digits(const char *s)
{
    if (!*s) return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return false;
    return true;
}

static bool ly_looks_int(const char *s)
{
    if (*s == '-' || *s == '+') s++;
    return ly_all_digits(s);
}

/* YAML 1.2 core-schema decimals: 1.5, .5, 2e3, -0.25 (not .inf or .nan). */
static bool ly_looks_float(const char *s)
{
    if (*s == '-' || *s == '+') s++;
    size_t digits = strspn(s, "0123456789");
    s += digits;
    if (*s == '.') {
        size_t frac = strspn(s + 1, "0123456789");
        digits += frac;
        s += 1 + frac;
    }
    if (digits == 0) return false;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '-' || *s == '+') s++;
        if (!ly_all_digits(s)) return false;
        return true;
    }
    return *s == '\0';
}

static bool ly_is_null_word(const char *s)
{
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

static int ly_bool_word(const char *s)
{
    if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) return 1;
    if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) return 0;
    return -1;
}

cJSON *live_yaml_plain_scalar(const char *text, bool *is_int, bool *is_num)
{
    *is_int = *is_num = false;
    if (ly_is_null_word(text)) return cJSON_CreateNull();
    int bw = ly_bool_word(text);
    if (bw >= 0) return cJSON_CreateBool(bw);
    if (ly_looks_int(text) || ly_looks_float(text)) {
        *is_int = ly_looks_int(text);
        *is_num = true;
        return cJSON_CreateNumber(strtod(text, NULL));
    }
    return cJSON_CreateString(text);
}

bool live_yaml_duration_ms(const char *text, int64_t *ms)
{
    if (!text || !isdigit((unsigned char)text[0])) return false;
    int64_t n = 0;
    const char *p = text;
    for (; isdigit((unsigned char)*p); p++) {
        if (n > (INT64_MAX - 9) / 10) return false;
        n = n * 10 + (*p - '0');
    }
    int64_t unit;
    if (!strcmp(p, "ms"))
        unit = 1;
    else if (!strcmp(p, "s"))
        unit = 1000;
    else if (!strcmp(p, "m"))
        unit = 60 * 1000;
    else if (!strcmp(p, "h"))
        unit = 60 * 60 * 1000;
    else
        return false;
    if (n > INT64_MAX / unit) return false;
    *ms = n * unit;
    return true;
}
