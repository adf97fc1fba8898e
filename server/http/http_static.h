/* http_static: the console's files, served from one directory (--console-dir)
 * to any GET or HEAD that is not the API's: "/" and every path that names
 * no file and has no extension get index.html, so the console's own routes
 * load it. A name resolves only beneath the directory (openat2's
 * RESOLVE_BENEATH: no "..", no absolute link, no symlink out of it) and
 * must be a regular file. Vite's hashed files under /assets/ are cached for
 * a year; everything else is revalidated. Without the directory, "/" says
 * the console is not installed (the API works all the same). Runs on the
 * HTTP threads (file opens block): any thread once opened. */
#ifndef CS_HTTP_STATIC_H
#define CS_HTTP_STATIC_H

#include <microhttpd.h>

struct cs_http_static;

/* Opens dir (kept open for the server's life); a directory that cannot be
 * opened is logged and served as not installed. Never NULL. */
struct cs_http_static *cs_http_static_open(const char *dir);
void cs_http_static_close(struct cs_http_static *st);
/* The response to a GET of url (already %-decoded by libmicrohttpd) and its
 * status in *status; NULL when libmicrohttpd could not make one. */
struct MHD_Response *cs_http_static_response(struct cs_http_static *st, const char *url,
                                             unsigned *status);

#endif
