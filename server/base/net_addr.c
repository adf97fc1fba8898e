/* net_addr: parsing "HOST:PORT" without name lookups (see net_addr.h). */
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
