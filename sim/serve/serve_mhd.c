/*
 * serve_mhd.c — libmicrohttpd, loaded when `sim serve` first starts its
 * daemon.
 *
 * The one idea: libmicrohttpd pulls in GnuTLS and its dependencies, each
 * relocated when a process starts — a cost every reassert process paid
 * (about a millisecond) though only `sim serve` serves HTTP. The binary does
 * not link it; this file defines the libmicrohttpd functions serve_http.c
 * calls, each forwarding to the libmicrohttpd.so.12 it opens on first use
 * (the variadic start through MHD_start_daemon_va). One binding per
 * process, written once and never changed after. A library that cannot be
 * loaded makes MHD_start_daemon return NULL, and serve_mhd_error says why.
 */
#define _GNU_SOURCE
#include "sim/serve/serve_mhd.h"

#include <dlfcn.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#define SERVE_MHD_SONAME "libmicrohttpd.so.12"

#define SERVE_MHD_FNS                                                                              \
    X(MHD_start_daemon_va)                                                                         \
    X(MHD_stop_daemon)                                                                             \
    X(MHD_lookup_connection_value)                                                                 \
    X(MHD_create_response_from_buffer)                                                             \
    X(MHD_create_response_from_buffer_with_free_callback)                                          \
    X(MHD_add_response_header)                                                                     \
    X(MHD_queue_response)                                                                          \
    X(MHD_destroy_response)

static struct {
#define X(name) __typeof__(name) *(name);
    SERVE_MHD_FNS
#undef X
} fn;

static bool loaded;
static char load_error[256];

static bool mhd_load(void)
{
    if (loaded) return true;
    if (load_error[0]) return false;
    void *lib = dlopen(SERVE_MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(load_error, sizeof load_error, "%s", dlerror());
        return false;
    }
#define X(name)                                                                                    \
    if (!(*(void **)&fn.name = dlsym(lib, #name))) {                                               \
        snprintf(load_error, sizeof load_error, "%s has no %s", SERVE_MHD_SONAME, #name);          \
        return false;                                                                              \
    }
    SERVE_MHD_FNS
#undef X
    loaded = true;
    return true;
}

const char *serve_mhd_error(void)
{
    return load_error;
}

struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
                                    void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
    if (!mhd_load()) return NULL;
    va_list ap;
    va_start(ap, dh_cls);
    struct MHD_Daemon *d = fn.MHD_start_daemon_va(flags, port, apc, apc_cls, dh, dh_cls, ap);
    va_end(ap);
    return d;
}

/* The rest run only inside a daemon MHD_start_daemon started: bound. */
void MHD_stop_daemon(struct MHD_Daemon *d)
{
    if (mhd_load()) fn.MHD_stop_daemon(d);
}

const char *MHD_lookup_connection_value(struct MHD_Connection *c, enum MHD_ValueKind kind,
                                        const char *key)
{
    return mhd_load() ? fn.MHD_lookup_connection_value(c, kind, key) : NULL;
}

struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer,
                                                     enum MHD_ResponseMemoryMode mode)
{
    return mhd_load() ? fn.MHD_create_response_from_buffer(size, buffer, mode) : NULL;
}

struct MHD_Response *
MHD_create_response_from_buffer_with_free_callback(size_t size, void *buffer,
                                                   MHD_ContentReaderFreeCallback crfc)
{
    return mhd_load() ? fn.MHD_create_response_from_buffer_with_free_callback(size, buffer, crfc)
                      : NULL;
}

enum MHD_Result MHD_add_response_header(struct MHD_Response *r, const char *header,
                                        const char *content)
{
    return mhd_load() ? fn.MHD_add_response_header(r, header, content) : MHD_NO;
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *c, unsigned int status,
                                   struct MHD_Response *r)
{
    return mhd_load() ? fn.MHD_queue_response(c, status, r) : MHD_NO;
}

void MHD_destroy_response(struct MHD_Response *r)
{
    if (mhd_load()) fn.MHD_destroy_response(r);
}
