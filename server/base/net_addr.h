/* net_addr: a listener's "HOST:PORT" as a socket address, and whether it
 * is loopback. HOST is a numeric IPv4 address, a bracketed IPv6 one
 * ("[::1]:9464") or "localhost" (127.0.0.1): never a name lookup, so it is
 * safe before and on the loop. Pure functions: any thread. */
#ifndef CS_NET_ADDR_H
#define CS_NET_ADDR_H

#include <stdbool.h>
#include <sys/socket.h>

#include "util.h"

/* Parses text into *out: 0, or -EINVAL with err naming what is wrong
 * (flag names the setting, e.g. "--metrics-listen"). Port 0 is allowed. */
int cs_net_addr_parse(const char *flag, const char *text, struct sockaddr_storage *out,
                      struct cs_err *err);
/* 127.0.0.0/8, ::1, or an IPv4-mapped 127.0.0.0/8. */
bool cs_net_addr_is_loopback(const struct sockaddr_storage *addr);

#endif
