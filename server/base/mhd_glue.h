/* mhd_glue: what cschedd's two libmicrohttpd servers (metrics/ and http/)
 * share: libmicrohttpd's complaints into cschedd's log, and the port a
 * daemon bound. Any thread. */
#ifndef CS_MHD_GLUE_H
#define CS_MHD_GLUE_H

#include <microhttpd.h>
#include <stdarg.h>

/* MHD_OPTION_EXTERNAL_LOGGER's callback: one warning line per complaint.
 * The attribute says fmt is a printf format, which clang's
 * -Wformat-nonliteral asks for. */
__attribute__((format(printf, 2, 0))) void cs_mhd_log_cb(void *cls, const char *fmt, va_list ap);
/* The TCP port daemon listens on; 0 if libmicrohttpd cannot say. */
int cs_mhd_port(struct MHD_Daemon *daemon);

#endif
