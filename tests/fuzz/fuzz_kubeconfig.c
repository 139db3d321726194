/*
 * fuzz_kubeconfig.c — the kubeconfig reader (core/live/live_kubeconfig.c,
 * live_kubeconfig_load) on arbitrary bytes: clusters with their CA and TLS
 * fields, users with tokens, token files, client certificates and keys, exec
 * plugins with their args and env, contexts and current-context.
 *
 * fuzz-seeds: none
 *
 * An input holding the line "#--8<--" is two files, loaded as KUBECONFIG
 * "first:second" (kubectl's merge: the first file to name a cluster, user or
 * context wins); otherwise it is the one file of --kubeconfig.
 *
 * Properties beyond "no crash, leak, sanitizer report or hang":
 * - a load succeeds or fails with RS_DATAERR and a message naming one of
 *   the files (every error says which kubeconfig is wrong);
 * - a refusal never quotes a token, a password or a client key of the input
 *   (values of 8 bytes or more under those keys that are not also a key or
 *   a name elsewhere in the input);
 * - a loaded kubeconfig has a context and a cluster, a server that is an
 *   http:// or https:// URL, an exec plugin with a command and at most
 *   LIVE_KUBECONFIG_EXEC_ARGS_MAX args and env entries (NULL-terminated),
 *   and says where it came from (live_kubeconfig_where names the context).
 */
#include "core/live/live_kubeconfig.h"
#include "tests/fuzz/fuzz_support.h"

#include <cjson/cJSON.h>

static char fz_second[4096];

static void fz_second_cleanup(void)
{
    if (fz_second[0]) unlink(fz_second);
}

/* The second file's private path (created once, removed at exit). */
static const char *fz_write_second(const uint8_t *data, size_t size)
{
    if (!fz_second[0]) {
        const char *dir = getenv("TMPDIR");
        snprintf(fz_second, sizeof fz_second, "%s/reassert-fuzz2-XXXXXX",
                 dir && dir[0] ? dir : "/tmp");
        int fd = mkstemp(fz_second);
        if (fd < 0) {
            perror("fuzz: mkstemp");
            exit(2);
        }
        close(fd);
        atexit(fz_second_cleanup);
    }
    FILE *fp = fopen(fz_second, "wb");
    if (!fp || (size && fwrite(data, 1, size, fp) != size) || fclose(fp) != 0) {
        perror("fuzz: write");
        exit(2);
    }
    return fz_second;
}

/* Whether needle occurs in the input other than as the value we look at:
 * then an error may name it for another reason (it is also a key or a
 * name). */
static bool fz_elsewhere(const char *text, size_t len, const char *needle)
{
    size_t n = strlen(needle), hits = 0;
    for (size_t i = 0; n && i + n <= len; i++)
        hits += memcmp(text + i, needle, n) == 0;
    return hits > 1;
}

/* The secret-looking values of the input: "token: X", "password: X",
 * "client-key-data: X" on one line (block or flow YAML alike). */
static void fz_no_secret_in(const char *text, size_t len, const char *msg)
{
    static const char *const keys[] = {
        "token:", "password:", "client-key-data:", "token\":", "password\":", "client-key-data\":"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        size_t kl = strlen(keys[k]);
        for (size_t i = 0; i + kl <= len; i++) {
            if (memcmp(text + i, keys[k], kl) != 0) continue;
            size_t a = i + kl;
            while (a < len && (text[a] == ' ' || text[a] == '"' || text[a] == '\''))
                a++;
            size_t b = a;
            while (b < len && !strchr(" \t\r\n,}\"'#", text[b]))
                b++;
            if (b - a < 8) continue;
            char *v = strndup(text + a, b - a);
            if (!v) abort();
            if (!fz_elsewhere(text, len, v))
                FUZZ_CHECK(strstr(msg, v) == NULL, "the error quotes a %.*s value: %s",
                           (int)(kl - 1), keys[k], msg);
            free(v);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char cut[] = "\n#--8<--\n";
    const uint8_t *second = NULL;
    for (size_t i = 0; i + sizeof cut - 1 <= size && !second; i++)
        if (memcmp(data + i, cut, sizeof cut - 1) == 0) second = data + i;
    size_t first_len = second ? (size_t)(second - data) : size;
    const char *path = fuzz_write_file(data, first_len);
    char env[8300] = "";
    live_kubeconfig_src src = {.explicit_path = path};
    if (second) {
        size_t off = first_len + sizeof cut - 1;
        const char *path2 = fz_write_second(data + off, size - off);
        snprintf(env, sizeof env, "%s:%s", path, path2);
        src = (live_kubeconfig_src){.env = env};
    }
    live_kubeconfig *k = NULL;
    rs_err e = {0};
    rs_code c = live_kubeconfig_load(&src, &k, &e);
    char *text = fuzz_cstr(data, size);
    if (c != RS_OK) {
        FUZZ_CHECK(c == RS_DATAERR, "code %d: %s", (int)c, e.msg);
        FUZZ_CHECK(k == NULL, "a failed load handed back a kubeconfig");
        FUZZ_CHECK(strstr(e.msg, path) != NULL || (second && strstr(e.msg, fz_second) != NULL),
                   "the error names no kubeconfig file: %s", e.msg);
        fz_no_secret_in(text, size, e.msg);
    } else {
        FUZZ_CHECK(k && k->context && k->context[0] && k->cluster && k->cluster[0],
                   "loaded without a context or a cluster");
        FUZZ_CHECK(k->server && (strncmp(k->server, "https://", 8) == 0 ||
                                 strncmp(k->server, "http://", 7) == 0),
                   "loaded with a server that is not an http(s) URL: %s",
                   k->server ? k->server : "(none)");
        if (k->has_exec) {
            FUZZ_CHECK(k->exec.command && k->exec.command[0], "an exec plugin without a command");
            FUZZ_CHECK(k->exec.n_args <= LIVE_KUBECONFIG_EXEC_ARGS_MAX &&
                           k->exec.args[k->exec.n_args] == NULL,
                       "exec args: %zu, not NULL-terminated", k->exec.n_args);
            FUZZ_CHECK(k->exec.n_env <= LIVE_KUBECONFIG_EXEC_ARGS_MAX &&
                           k->exec.env[k->exec.n_env] == NULL,
                       "exec env: %zu, not NULL-terminated", k->exec.n_env);
            for (size_t i = 0; i < k->exec.n_env; i++)
                FUZZ_CHECK(strchr(k->exec.env[i], '=') != NULL, "exec env %s is not NAME=VALUE",
                           k->exec.env[i]);
        }
        char where[512];
        FUZZ_CHECK(strstr(live_kubeconfig_where(k, where, sizeof where), "context") != NULL,
                   "live_kubeconfig_where says nothing: %s", where);
        live_kubeconfig_free(k);
    }
    free(text);
    return 0;
}
