/* net_addr: parsing "HOST:PORT" and peers' addresses without name lookups
 * (see net_addr.h). */
#include "net_addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cs_net_addr_parse(const char *flag, const char *text, struct sockaddr_storage *out,
                      struct cs_err *err)
{
    memset(out, 0, sizeof(*out));
    const char *colon = strrchr(text, ':');
    if (colon == NULL || colon == text)
        return cs_err_set(err, -EINVAL, "%s \"%s\" must be HOST:PORT", flag, text);
    char *end;
    errno = 0;
    long port = strtol(colon + 1, &end, 10);
    if (colon[1] == '\0' || *end != '\0' || errno != 0 || port < 0 || port > 65535)
        return cs_err_set(err, -EINVAL, "%s \"%s\": the port must be a number from 0 to 65535",
                          flag, text);
    char host[64];
    size_t n = (size_t)(colon - text);
    if (n >= sizeof(host))
        return cs_err_set(err, -EINVAL, "%s \"%s\": the host is too long", flag, text);
    memcpy(host, text, n);
    host[n] = '\0';
    struct sockaddr_in *v4 = (struct sockaddr_in *)out;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)out;
    if (strcmp(host, "localhost") == 0)
        (void)snprintf(host, sizeof(host), "127.0.0.1");
    if (host[0] == '[' && n > 2 && host[n - 1] == ']') {
        host[n - 1] = '\0';
        if (inet_pton(AF_INET6, host + 1, &v6->sin6_addr) == 1) {
            v6->sin6_family = AF_INET6;
            v6->sin6_port = htons((uint16_t)port);
            return 0;
        }
    } else if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        return 0;
    }
    return cs_err_set(err, -EINVAL,
                      "%s \"%s\": the host must be a numeric address (127.0.0.1, [::1]) or "
                      "localhost",
                      flag, text);
}

bool cs_net_addr_is_loopback(const struct sockaddr_storage *addr)
{
    if (addr->ss_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)addr;
        return (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
    }
    if (addr->ss_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)addr)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
    }
    return false;
}

/* hex_value's answer for a character that is no hex digit. */
#define NOT_HEX (-1)

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return NOT_HEX;
}

/* Decodes the %XX escapes of text into out (cap bytes), keeping a '%' that
 * starts none (a zone written as is: fe80::1%eth0): 0, or -EINVAL when out
 * is too small. */
static int percent_decode(const char *text, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = text; *p != '\0'; p++) {
        char c = *p;
        int hi = c == '%' ? hex_value(p[1]) : NOT_HEX,
            lo = hi != NOT_HEX ? hex_value(p[2]) : NOT_HEX;
        if (lo != NOT_HEX) {
            c = (char)(hi * 16 + lo);
            p += 2;
        }
        if (n + 1 >= cap)
            return -EINVAL;
        out[n++] = c;
    }
    out[n] = '\0';
    return 0;
}

int cs_net_addr_of_peer(const char *peer, char *out, size_t cap)
{
    char host[CS_NET_PEER_ADDR_MAX], text[INET6_ADDRSTRLEN];
    struct in6_addr a6;
    struct in_addr a4;
    bool v6 = strncmp(peer, "ipv6:", 5) == 0;

    if ((!v6 && strncmp(peer, "ipv4:", 5) != 0) ||
        percent_decode(peer + 5, host, sizeof(host)) != 0)
        return -EINVAL;
    char *colon = strrchr(host, ':');
    if (colon == NULL)
        return -EINVAL;
    *colon = '\0'; /* the port */
    if (!v6) {
        if (inet_pton(AF_INET, host, &a4) != 1)
            return -EINVAL;
    } else {
        size_t n = strlen(host);
        if (n < 3 || host[0] != '[' || host[n - 1] != ']')
            return -EINVAL;
        host[n - 1] = '\0';
        host[strcspn(host, "%")] = '\0'; /* the zone: fe80::1%eth0 */
        if (inet_pton(AF_INET6, host + 1, &a6) != 1)
            return -EINVAL;
        if (IN6_IS_ADDR_V4MAPPED(&a6)) {
            memcpy(&a4, &a6.s6_addr[12], sizeof(a4));
            v6 = false;
        }
    }
    if (v6 ? inet_ntop(AF_INET6, &a6, text, sizeof(text)) == NULL
           : inet_ntop(AF_INET, &a4, text, sizeof(text)) == NULL)
        return -EINVAL;
    int len = snprintf(out, cap, v6 ? "ipv6:[%s]" : "ipv4:%s", text);
    return len > 0 && (size_t)len < cap ? 0 : -EINVAL;
}
