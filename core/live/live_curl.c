/*
 * live_curl.c — libcurl, loaded the first time a live run calls it.
 *
 * The one idea: libcurl and what it pulls in (GnuTLS, Kerberos, LDAP, SSH,
 * ...), each relocated at load, were most of every reassert process's start
 * (about 3 ms, for a `reassert sim` that never calls them). The binary does
 * not link libcurl; this file defines the libcurl functions live_http.c
 * calls, each forwarding to the libcurl.so.4 it opens on first use. The
 * binding is the one process-wide state of core/: written once, before any
 * other libcurl call, and never changed after (libcurl's own global init
 * is process-wide too). A libcurl that cannot be loaded makes
 * curl_global_init fail, and live_curl_error says why.
 */
#define _GNU_SOURCE
#define CURL_DISABLE_TYPECHECK /* the real prototypes are defined here */
#include "core/live/live_curl.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#define LIVE_CURL_SONAME "libcurl.so.4"

/* X(name): every libcurl function live_http.c calls (each bound with the
 * prototype curl.h declares), the variadic ones forwarded below by hand. */
#define LIVE_CURL_FNS                                                                              \
    X(curl_global_init)                                                                            \
    X(curl_global_cleanup)                                                                         \
    X(curl_easy_init)                                                                              \
    X(curl_easy_cleanup)                                                                           \
    X(curl_easy_reset)                                                                             \
    X(curl_easy_perform)                                                                           \
    X(curl_easy_escape)                                                                            \
    X(curl_easy_strerror)                                                                          \
    X(curl_easy_setopt)                                                                            \
    X(curl_easy_getinfo)                                                                           \
    X(curl_free)                                                                                   \
    X(curl_slist_append)                                                                           \
    X(curl_slist_free_all)                                                                         \
    X(curl_share_init)                                                                             \
    X(curl_share_setopt)                                                                           \
    X(curl_share_cleanup)                                                                          \
    X(curl_multi_init)                                                                             \
    X(curl_multi_setopt)                                                                           \
    X(curl_multi_add_handle)                                                                       \
    X(curl_multi_remove_handle)                                                                    \
    X(curl_multi_perform)                                                                          \
    X(curl_multi_poll)                                                                             \
    X(curl_multi_info_read)                                                                        \
    X(curl_multi_cleanup)                                                                          \
    X(curl_url)                                                                                    \
    X(curl_url_cleanup)                                                                            \
    X(curl_url_get)                                                                                \
    X(curl_url_set)

static struct {
#define X(name) __typeof__(name) *(name);
    LIVE_CURL_FNS
#undef X
} fn;

static bool loaded;
static char load_error[256];

/* Opens libcurl and binds every function, once; false (load_error says
 * why) when it cannot. */
static bool curl_load(void)
{
    if (loaded) return true;
    if (load_error[0]) return false;
    void *lib = dlopen(LIVE_CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(load_error, sizeof load_error, "%s", dlerror());
        return false;
    }
#define X(name)                                                                                    \
    if (!(*(void **)&fn.name = dlsym(lib, #name))) {                                               \
        snprintf(load_error, sizeof load_error, "%s has no %s", LIVE_CURL_SONAME, #name);          \
        return false;                                                                              \
    }
    LIVE_CURL_FNS
#undef X
    loaded = true;
    return true;
}

const char *live_curl_error(void)
{
    return load_error[0] ? load_error : "";
}

CURLcode curl_global_init(long flags)
{
    return curl_load() ? fn.curl_global_init(flags) : CURLE_FAILED_INIT;
}

/* Every other function is called only after curl_global_init succeeded
 * (live_http_open), so the binding is there; the guards keep a misuse from
 * jumping through NULL. */
void curl_global_cleanup(void)
{
    if (curl_load()) fn.curl_global_cleanup();
}

CURL *curl_easy_init(void)
{
    return curl_load() ? fn.curl_easy_init() : NULL;
}

void curl_easy_cleanup(CURL *c)
{
    if (curl_load()) fn.curl_easy_cleanup(c);
}

void curl_easy_reset(CURL *c)
{
    if (curl_load()) fn.curl_easy_reset(c);
}

CURLcode curl_easy_perform(CURL *c)
{
    return curl_load() ? fn.curl_easy_perform(c) : CURLE_FAILED_INIT;
}

char *curl_easy_escape(CURL *c, const char *s, int len)
{
    return curl_load() ? fn.curl_easy_escape(c, s, len) : NULL;
}

const char *curl_easy_strerror(CURLcode rc)
{
    return curl_load() ? fn.curl_easy_strerror(rc) : "libcurl is not loaded";
}

/* An option's one argument, taken as its type says (curl.h: the option's
 * number names its type range), and passed on as that type. */
#define FORWARD_OPTION(call, opt, ap)                                                              \
    do {                                                                                           \
        if ((opt) < CURLOPTTYPE_OBJECTPOINT) return call(va_arg(ap, long));                        \
        if ((opt) < CURLOPTTYPE_FUNCTIONPOINT) return call(va_arg(ap, void *));                    \
        if ((opt) < CURLOPTTYPE_OFF_T) return call(va_arg(ap, void (*)(void)));                    \
        if ((opt) < CURLOPTTYPE_BLOB) return call(va_arg(ap, curl_off_t));                         \
        return call(va_arg(ap, void *));                                                           \
    } while (0)

static CURLcode easy_setopt_va(CURL *c, CURLoption opt, va_list ap)
{
#define CALL(arg) fn.curl_easy_setopt(c, opt, arg)
    FORWARD_OPTION(CALL, opt, ap);
#undef CALL
}

CURLcode curl_easy_setopt(CURL *c, CURLoption opt, ...)
{
    if (!curl_load()) return CURLE_FAILED_INIT;
    va_list ap;
    va_start(ap, opt);
    CURLcode rc = easy_setopt_va(c, opt, ap);
    va_end(ap);
    return rc;
}

CURLcode curl_easy_getinfo(CURL *c, CURLINFO info, ...)
{
    if (!curl_load()) return CURLE_FAILED_INIT;
    va_list ap;
    va_start(ap, info);
    void *out = va_arg(ap, void *); /* every CURLINFO takes a pointer */
    va_end(ap);
    return fn.curl_easy_getinfo(c, info, out);
}

void curl_free(void *p)
{
    if (curl_load()) fn.curl_free(p);
}

struct curl_slist *curl_slist_append(struct curl_slist *list, const char *s)
{
    return curl_load() ? fn.curl_slist_append(list, s) : NULL;
}

void curl_slist_free_all(struct curl_slist *list)
{
    if (curl_load()) fn.curl_slist_free_all(list);
}

CURLSH *curl_share_init(void)
{
    return curl_load() ? fn.curl_share_init() : NULL;
}

CURLSHcode curl_share_setopt(CURLSH *sh, CURLSHoption opt, ...)
{
    if (!curl_load()) return CURLSHE_NOT_BUILT_IN;
    va_list ap;
    va_start(ap, opt);
    CURLSHcode rc;
    if (opt == CURLSHOPT_SHARE || opt == CURLSHOPT_UNSHARE)
        rc = fn.curl_share_setopt(sh, opt, va_arg(ap, int)); /* a curl_lock_data */
    else if (opt == CURLSHOPT_LOCKFUNC || opt == CURLSHOPT_UNLOCKFUNC)
        rc = fn.curl_share_setopt(sh, opt, va_arg(ap, void (*)(void)));
    else
        rc = fn.curl_share_setopt(sh, opt, va_arg(ap, void *));
    va_end(ap);
    return rc;
}

CURLSHcode curl_share_cleanup(CURLSH *sh)
{
    return curl_load() ? fn.curl_share_cleanup(sh) : CURLSHE_NOT_BUILT_IN;
}

CURLM *curl_multi_init(void)
{
    return curl_load() ? fn.curl_multi_init() : NULL;
}

static CURLMcode multi_setopt_va(CURLM *m, CURLMoption opt, va_list ap)
{
#define CALL(arg) fn.curl_multi_setopt(m, opt, arg)
    FORWARD_OPTION(CALL, opt, ap);
#undef CALL
}

CURLMcode curl_multi_setopt(CURLM *m, CURLMoption opt, ...)
{
    if (!curl_load()) return CURLM_INTERNAL_ERROR;
    va_list ap;
    va_start(ap, opt);
    CURLMcode rc = multi_setopt_va(m, opt, ap);
    va_end(ap);
    return rc;
}

CURLMcode curl_multi_add_handle(CURLM *m, CURL *c)
{
    return curl_load() ? fn.curl_multi_add_handle(m, c) : CURLM_INTERNAL_ERROR;
}

CURLMcode curl_multi_remove_handle(CURLM *m, CURL *c)
{
    return curl_load() ? fn.curl_multi_remove_handle(m, c) : CURLM_INTERNAL_ERROR;
}

CURLMcode curl_multi_perform(CURLM *m, int *running)
{
    return curl_load() ? fn.curl_multi_perform(m, running) : CURLM_INTERNAL_ERROR;
}

CURLMcode curl_multi_poll(CURLM *m, struct curl_waitfd extra[], unsigned int n, int timeout_ms,
                          int *numfds)
{
    return curl_load() ? fn.curl_multi_poll(m, extra, n, timeout_ms, numfds) : CURLM_INTERNAL_ERROR;
}

CURLMsg *curl_multi_info_read(CURLM *m, int *left)
{
    return curl_load() ? fn.curl_multi_info_read(m, left) : NULL;
}

CURLMcode curl_multi_cleanup(CURLM *m)
{
    return curl_load() ? fn.curl_multi_cleanup(m) : CURLM_INTERNAL_ERROR;
}

CURLU *curl_url(void)
{
    return curl_load() ? fn.curl_url() : NULL;
}

void curl_url_cleanup(CURLU *u)
{
    if (curl_load()) fn.curl_url_cleanup(u);
}

CURLUcode curl_url_get(CURLU *u, CURLUPart what, char **part, unsigned int flags)
{
    return curl_load() ? fn.curl_url_get(u, what, part, flags) : CURLUE_OUT_OF_MEMORY;
}

CURLUcode curl_url_set(CURLU *u, CURLUPart what, const char *part, unsigned int flags)
{
    return curl_load() ? fn.curl_url_set(u, what, part, flags) : CURLUE_OUT_OF_MEMORY;
}
