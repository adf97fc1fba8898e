/* identity: who a call comes from and the role it holds. Filled by rpc for
 * every call before its handler runs; read by handlers (the audit trail,
 * created_by, triggered_by). Plain data, any thread.
 *
 * Roles nest: an operator may do all a viewer may, an admin all an operator
 * may. */
#ifndef CS_IDENTITY_H
#define CS_IDENTITY_H

#include <stdbool.h>
#include <string.h>

enum cs_role {
    CS_ROLE_NONE = 0,
    CS_ROLE_VIEWER = 1,
    CS_ROLE_OPERATOR = 2,
    CS_ROLE_ADMIN = 3,
    /* Another replica of the same database, proven by the cluster's key
     * (docs/design/0036): the only role the Worker service takes. No
     * credential of a person grants it. */
    CS_ROLE_REPLICA = 4,
};

#define CS_IDENTITY_NAME_MAX 256

struct cs_identity {
    enum cs_role role;
    /* What the audit trail shows, e.g. "unix:uid=1000(alice)". */
    char name[CS_IDENTITY_NAME_MAX];
    /* Whether an identity source knew the caller. An unknown one is named
     * by its address ("ipv4:10.0.0.1", "ipv6:[::1]", no port: each new
     * connection has a new one), or "fd:N" on the socket. */
    bool known;
    /* The replica that forwarded the call (rpc_forward.h); "" for a call
     * made here. */
    char via[64];
};

/* Whether gRPC's peer string names a TCP peer ("ipv4:..." or "ipv6:...");
 * a unix-socket connection cschedd accepted shows as "fd:N". */
static inline bool cs_peer_is_tcp(const char *peer)
{
    return strncmp(peer, "ipv4:", 5) == 0 || strncmp(peer, "ipv6:", 5) == 0;
}

#endif
