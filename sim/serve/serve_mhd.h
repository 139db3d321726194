/*
 * serve_mhd.h — libmicrohttpd, loaded when `sim serve` first starts its
 * daemon (serve_mhd.c defines the libmicrohttpd functions serve_http.c
 * calls, forwarding to the library it opens then).
 */
#ifndef SIM_SERVE_SERVE_MHD_H
#define SIM_SERVE_SERVE_MHD_H

/* Why libmicrohttpd could not be loaded, or "" when it was or has not been
 * tried yet. */
const char *serve_mhd_error(void);

#endif
