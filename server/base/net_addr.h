/* net_addr: a listener's "HOST:PORT" as a socket address, and whether it
 * is loopback; a TCP peer's address without its port. HOST is a numeric
 * IPv4 address, a bracketed IPv6 one ("[::1]:9464") or "localhost"
 * (127.0.0.1): never a name lookup, so it is safe before and on the loop.
 * Pure functions: any thread. */
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

/* The address of a TCP peer as gRPC names it ("ipv4:10.0.0.1:40000",
 * "ipv6:[::1]:40000", its brackets maybe written %5B and %5D), without the
 * port, written the one way inet_ntop writes it: "ipv4:10.0.0.1",
 * "ipv6:[::1]" (an IPv4-mapped IPv6 address as ipv4, a zone left out). Into
 * out (cap bytes, CS_NET_PEER_ADDR_MAX is enough): 0, or -EINVAL for any
 * other peer ("fd:7") or text. */
#define CS_NET_PEER_ADDR_MAX 64
int cs_net_addr_of_peer(const char *peer, char *out, size_t cap);

#endif
