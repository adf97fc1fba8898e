/* mhd_glue: libmicrohttpd's log and port, shared (see mhd_glue.h). */
#define CS_LOG_COMPONENT "http"
#include "mhd_glue.h"

#include <stdio.h>
#include <string.h>

#include "log.h"

void cs_mhd_log_cb(void *cls, const char *fmt, va_list ap)
{
    char msg[512];
    (void)vsnprintf(msg, sizeof(msg), fmt, ap);
    msg[strcspn(msg, "\n")] = '\0';
    cs_log_warn("libmicrohttpd: %s", msg);
}

int cs_mhd_port(struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info != NULL ? info->port : 0;
}
