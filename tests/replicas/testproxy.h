/* A csched-test-proxy (proxy.c) run by a test: started as the test's child
 * in a temp dir of its own (port file, control socket, log), its link cut
 * and restored through the control socket, stopped with SIGTERM. The
 * protocol and what each cut does are in tests/replicas/README.md.
 *
 * Functions return 0 or a negative errno after a line on stderr; they
 * block for at most a few seconds. Call them from the thread that started
 * the proxy: it gets SIGTERM when that thread exits. */
#ifndef CS_TESTPROXY_H
#define CS_TESTPROXY_H

#include <stdint.h>

struct cs_testproxy;

enum cs_testproxy_cut {
    /* Every connection reset (the client gets an RST), new ones refused
     * (ECONNREFUSED): a host whose server died. */
    CS_TESTPROXY_RESET,
    /* Connections kept open, nothing forwarded, closes included; new ones
     * accepted and never connected onwards: a frozen or unreachable
     * database, where TCP never closes. */
    CS_TESTPROXY_BLACKHOLE,
};

struct cs_testproxy_status {
    char mode[16]; /* "forward", "blackhole" or "reset" */
    unsigned open; /* connections held now */
    unsigned long accepted;
};

/* cs_testproxy_start starts a proxy to target ("unix:/path" or
 * "IPV4:PORT") and waits (up to 10 s) for its port file. */
int cs_testproxy_start(const char *target, struct cs_testproxy **out);

/* cs_testproxy_start_pg starts a proxy to the unix socket of the cluster
 * that conninfo (cs_testpg_url) names. */
int cs_testproxy_start_pg(const char *conninfo, struct cs_testproxy **out);

/* cs_testproxy_port is the port the proxy listens on, on 127.0.0.1. */
uint16_t cs_testproxy_port(const struct cs_testproxy *p);

/* cs_testproxy_conninfo is the conninfo of cs_testproxy_start_pg's cluster
 * through the proxy ("host=127.0.0.1 port=P user=... dbname=..."); it lives
 * as long as p. */
const char *cs_testproxy_conninfo(const struct cs_testproxy *p);

/* cs_testproxy_log_path is the file the proxy's stderr goes to. */
const char *cs_testproxy_log_path(const struct cs_testproxy *p);

/* cs_testproxy_cut cuts the link as mode says; cs_testproxy_restore
 * forwards again. Connections held by a blackhole are kept and go on where
 * they stopped (what they sent meanwhile is delivered then): a partition
 * that heals before TCP gives up. To have them closed instead, cut reset
 * before restoring. Each returns once the proxy has done it. */
int cs_testproxy_cut(struct cs_testproxy *p, enum cs_testproxy_cut mode);
int cs_testproxy_restore(struct cs_testproxy *p);

/* cs_testproxy_status asks what the proxy holds now. */
int cs_testproxy_status(struct cs_testproxy *p, struct cs_testproxy_status *st);

/* cs_testproxy_stop kills the proxy, reaps it, removes its dir (kept under
 * CSCHED_TEST_KEEP) and frees p. NULL is allowed. */
void cs_testproxy_stop(struct cs_testproxy *p);

#endif
