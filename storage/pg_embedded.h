/* The embedded PostgreSQL: a private server from the system's binaries,
 * kept under one directory (DIR/data), listening only on a unix socket.
 * These calls BLOCK (initdb takes seconds): the store runs them on libuv's
 * pool, tests call them directly.
 *
 * When the process runs as root, PostgreSQL runs as an unprivileged system
 * user (default "postgres", through runuser), and DIR is chowned to it. That
 * user must be able to enter every directory above DIR. The directory
 * right above DIR (the server's state directory), when this process owns it,
 * gets o+x (enter, not list); any other directory it cannot enter, such as
 * /root (mode 0700), fails with -EACCES and a message naming the directory
 * and the fix. The socket lives in DIR itself, or, when that path is too long for a
 * unix socket, in /tmp/csched-pg-<hash of DIR>. */
#ifndef CS_PG_EMBEDDED_H
#define CS_PG_EMBEDDED_H

#include <stdbool.h>
#include <stddef.h>

#include "store.h"

struct cs_pg_embedded_options {
    /* fsync, synchronous_commit and full_page_writes off, as PostgreSQL's
     * own test clusters run: fast, and a crash may lose the database. */
    bool fsync_off;
    /* Directory of initdb and pg_ctl; NULL means $CSCHED_PG_BINDIR, else the
     * newest /usr/lib/postgresql/<N>/bin, else $PATH. */
    const char *bindir;
    /* As root: the user PostgreSQL runs as; NULL means "postgres". */
    const char *user;
    /* Also listen on 127.0.0.1 at this TCP port (tests of TCP connections);
     * 0 means unix socket only. */
    int tcp_port;
    /* A start after the connection to the server was lost: a server that
     * runs is left alone without a log line; one that does not (it was
     * killed, or stopped by hand) is started with a warning. */
    bool again;
    /* Where its log lines go, from the calling thread; NULL: stderr. */
    cs_store_log_cb log_cb;
    void *log_arg;
};

/* Creates DIR if needed, runs initdb on first use (DIR/data), starts the
 * server unless it already runs, and writes a libpq connection string for it
 * to conninfo_out. opts may be NULL. Returns 0 or a negative errno; the
 * reason goes to opts->log_cb, and the server's own log is
 * DIR/postgresql.log. */
int cs_pg_embedded_start(const char *dir, const struct cs_pg_embedded_options *opts,
                         char *conninfo_out, size_t cap);

/* Stops the server under DIR (pg_ctl stop -m fast) if it runs. opts (may be
 * NULL) gives the binaries and the log callback; the rest is the cluster's
 * own. Returns 0 or a negative errno. */
int cs_pg_embedded_stop(const char *dir, const struct cs_pg_embedded_options *opts);

#endif
