/* Reading a database URL for what must happen before libpq may connect
 * without blocking: a host name has to be resolved first (on libuv's pool),
 * because PQconnectStartParams resolves names synchronously. Pure functions;
 * loop thread. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "store_internal.h"

static bool is_numeric_or_socket(const char *host)
{
    unsigned char addr[sizeof(struct in6_addr)];

    if (host[0] == '\0' || host[0] == '/' || host[0] == '@')
        return true;
    return inet_pton(AF_INET, host, addr) == 1 || inet_pton(AF_INET6, host, addr) == 1;
}

/* A comma-separated list whose every entry needs no resolution. */
static bool all_numeric_or_socket(const char *hosts)
{
    char one[256];

    while (*hosts != '\0') {
        size_t len = strcspn(hosts, ",");

        if (len >= sizeof(one))
            return false;
        memcpy(one, hosts, len);
        one[len] = '\0';
        if (!is_numeric_or_socket(one))
            return false;
        hosts += len;
        if (*hosts == ',')
            hosts++;
    }
    return true;
}

int cs_store_url_host(const char *conninfo, char *host, size_t cap, struct cs_store_err *err)
{
    char *errmsg = NULL;
    PQconninfoOption *opts = PQconninfoParse(conninfo, &errmsg);
    const char *host_val = NULL;
    const char *hostaddr_val = NULL;
    int rc = 0;

    host[0] = '\0';
    if (opts == NULL) {
        cs_store_err_set(err, -EINVAL, "database URL does not parse: %s",
                         errmsg != NULL ? errmsg : "out of memory");
        PQfreemem(errmsg);
        return -EINVAL;
    }
    for (PQconninfoOption *o = opts; o->keyword != NULL; o++) {
        if (strcmp(o->keyword, "host") == 0)
            host_val = o->val;
        else if (strcmp(o->keyword, "hostaddr") == 0)
            hostaddr_val = o->val;
    }
    if ((hostaddr_val != NULL && hostaddr_val[0] != '\0') || host_val == NULL ||
        all_numeric_or_socket(host_val))
        goto out;
    if (strchr(host_val, ',') != NULL) {
        rc = cs_store_err_set(err, -ENOTSUP,
                              "database URL: a list of host names (%s) is not supported; give "
                              "one host name, or numeric addresses",
                              host_val);
        goto out;
    }
    if (strlen(host_val) >= cap) {
        rc = cs_store_err_set(err, -ENAMETOOLONG, "database URL: host name %s is too long",
                              host_val);
        goto out;
    }
    snprintf(host, cap, "%s", host_val);
out:
    PQconninfoFree(opts);
    return rc;
}

size_t cs_store_addr_lists(const struct addrinfo *res, const char *host, char *hostaddrs,
                           size_t cap_addrs, char *hosts, size_t cap_hosts)
{
    size_t n = 0;
    size_t len_addrs = 0;
    size_t len_hosts = 0;

    hostaddrs[0] = hosts[0] = '\0';
    for (const struct addrinfo *ai = res; ai != NULL && n < CS_STORE_MAX_ADDRS; ai = ai->ai_next) {
        char addr[INET6_ADDRSTRLEN];
        const void *src;
        int a;
        int h;

        if (ai->ai_family == AF_INET)
            src = &((const struct sockaddr_in *)ai->ai_addr)->sin_addr;
        else if (ai->ai_family == AF_INET6)
            src = &((const struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
        else
            continue;
        if (inet_ntop(ai->ai_family, src, addr, sizeof(addr)) == NULL)
            continue;
        a = snprintf(hostaddrs + len_addrs, cap_addrs - len_addrs, "%s%s", n > 0 ? "," : "", addr);
        h = snprintf(hosts + len_hosts, cap_hosts - len_hosts, "%s%s", n > 0 ? "," : "", host);
        if (a < 0 || h < 0 || (size_t)a >= cap_addrs - len_addrs ||
            (size_t)h >= cap_hosts - len_hosts) {
            hostaddrs[len_addrs] = hosts[len_hosts] = '\0';
            break;
        }
        len_addrs += (size_t)a;
        len_hosts += (size_t)h;
        n++;
    }
    return n;
}
