/*
 * live_curl.h — libcurl, loaded the first time a live run calls it
 * (live_curl.c defines the libcurl functions core/live calls, forwarding to
 * the libcurl.so.4 it opens then).
 */
#ifndef CORE_LIVE_LIVE_CURL_H
#define CORE_LIVE_LIVE_CURL_H

/* Why libcurl could not be loaded (dlerror's words), or "" when it was or
 * has not been tried yet. */
const char *live_curl_error(void);

#endif
