/*
 * fuzz_talos_text.c — the readers of what talosctl and the liveness command
 * print (core/live/live_talos_text*.c, live_oracle_parse) on arbitrary bytes.
 * The first byte picks the reader ('0' etcd status, '1' alarm list, '2' auth
 * in the document shape, '3' auth in the legacy shape, '4' liveness answer,
 * others modulo 5); the rest is the reader's input, not NUL-terminated.
 *
 * fuzz-seeds: none
 *
 * Properties beyond "no crash, leak, sanitizer report or hang":
 * - etcd status: RS_OK with booleans healthy and learner and a known layout,
 *   or RS_FAILED with no answer and an error naming the node;
 * - alarm list: RS_OK with an array whose every alarm is NONE, NOSPACE or
 *   CORRUPT, or RS_FAILED with no answer;
 * - auth: RS_OK with no answer, {"redacted": true} or non-empty username and
 *   password; RS_FAILED with no answer;
 * - liveness: RS_OK or RS_FAILED, and the same answer twice;
 * - every reader gives the same verdict on the same bytes twice.
 */
#include "core/live/live_oracle.h"
#include "core/live/live_talos_text.h"
#include "tests/fuzz/fuzz_support.h"

#define FZ_NODE "prod-control-plane-1"

static char *fz_printed(const cJSON *a)
{
    return a ? cJSON_PrintUnformatted(a) : NULL;
}

static void fz_same(cJSON *a, cJSON *b, const char *what)
{
    char *x = fz_printed(a), *y = fz_printed(b);
    FUZZ_CHECK((!x && !y) || (x && y && strcmp(x, y) == 0), "%s answers differently twice", what);
    free(x);
    free(y);
}

static void fz_status(const char *t, size_t n)
{
    cJSON *a = NULL, *b = NULL;
    rs_err e = {0}, e2 = {0};
    rs_code c = live_talos_etcd_status_parse(t, n, FZ_NODE, &a, &e);
    FUZZ_CHECK(live_talos_etcd_status_parse(t, n, FZ_NODE, &b, &e2) == c, "verdict changed");
    fz_same(a, b, "etcd status");
    if (c == RS_OK) {
        FUZZ_CHECK(cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(a, "healthy")) &&
                       cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(a, "learner")),
                   "an answer without healthy/learner");
        const char *l = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "layout"));
        FUZZ_CHECK(l && (strcmp(l, "compact") == 0 || strcmp(l, "extended") == 0), "layout");
    } else {
        FUZZ_CHECK(c == RS_FAILED && !a && strstr(e.msg, FZ_NODE), "a refusal: %s", e.msg);
    }
    cJSON_Delete(a);
    cJSON_Delete(b);
}

static void fz_alarms(const char *t, size_t n)
{
    cJSON *a = NULL, *b = NULL;
    rs_err e = {0}, e2 = {0};
    rs_code c = live_talos_etcd_alarms_parse(t, n, FZ_NODE, &a, &e);
    FUZZ_CHECK(live_talos_etcd_alarms_parse(t, n, FZ_NODE, &b, &e2) == c, "verdict changed");
    fz_same(a, b, "alarm list");
    if (c == RS_OK) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(a, "alarms");
        FUZZ_CHECK(cJSON_IsArray(list), "no alarms array");
        for (const cJSON *it = list->child; it; it = it->next) {
            const char *al = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "alarm"));
            FUZZ_CHECK(al && (strcmp(al, "NONE") == 0 || strcmp(al, "NOSPACE") == 0 ||
                              strcmp(al, "CORRUPT") == 0),
                       "an alarm outside the set");
        }
    } else {
        FUZZ_CHECK(c == RS_FAILED && !a, "a refusal with an answer");
    }
    cJSON_Delete(a);
    cJSON_Delete(b);
}

static void fz_auth(const char *t, size_t n, rs_talos_auth_shape shape)
{
    cJSON *a = NULL, *b = NULL;
    rs_err e = {0}, e2 = {0};
    rs_code c = live_talos_auth_parse(t, n, "ghcr.io", shape, &a, &e);
    FUZZ_CHECK(live_talos_auth_parse(t, n, "ghcr.io", shape, &b, &e2) == c, "verdict changed");
    fz_same(a, b, "auth");
    if (c == RS_OK && a) {
        const cJSON *auth = cJSON_GetObjectItemCaseSensitive(a, "auth");
        const char *u = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(auth, "username"));
        const char *p = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(auth, "password"));
        bool redacted = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "redacted"));
        FUZZ_CHECK(redacted != (auth != NULL), "neither auth nor redacted, or both");
        FUZZ_CHECK(redacted || (u && u[0] && p && p[0]), "an empty username or password");
    } else if (c != RS_OK) {
        FUZZ_CHECK(c == RS_FAILED && !a, "a refusal with an answer");
    }
    cJSON_Delete(a);
    cJSON_Delete(b);
}

static void fz_liveness(const char *t, size_t n)
{
    bool x = false, y = true;
    rs_err e = {0}, e2 = {0};
    rs_code c = live_oracle_parse(t, n, 1, &x, &e);
    rs_code c2 = live_oracle_parse(t, n, 1, &y, &e2);
    FUZZ_CHECK(c == c2 && (c != RS_OK || x == y), "liveness answers differently twice");
    FUZZ_CHECK(c == RS_OK || c == RS_FAILED, "code %d", (int)c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    /* A private copy without a terminator: a reader must stay within len. */
    size_t n = size - 1;
    char *t = malloc(n ? n : 1); /* exactly n bytes: ASan sees any read past them */
    if (!t) return 0;
    memcpy(t, data + 1, n);
    switch ((data[0] - '0' + 250) % 5) {
    case 0:
        fz_status(t, n);
        break;
    case 1:
        fz_alarms(t, n);
        break;
    case 2:
        fz_auth(t, n, RS_TALOS_AUTH_DOCUMENT);
        break;
    case 3:
        fz_auth(t, n, RS_TALOS_AUTH_LEGACY);
        break;
    default:
        fz_liveness(t, n);
    }
    free(t);
    return 0;
}
