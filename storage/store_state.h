/* The store's state machine: two regions, each an enum and a table of
 * transitions (state x event -> next state), and the one function per
 * region that writes its field.
 *
 * The life (enum cs_store_state, store->state): made, opening, the
 * snapshot loading, live, and how it ends: an open that failed, a store
 * fenced by another server, a close. The connection (enum
 * cs_store_conn_state, store->conn_state): the steps from nothing to a
 * connection that takes batches, and back to nothing when it is lost.
 * They are two regions because they change apart: a store being closed
 * still reconnects to commit its writes (DRAINING goes through every
 * connection step), and one flat enum would copy each connection step for
 * each phase of the life.
 *
 * An event the table refuses in the current state is a bug: the writer
 * aborts. A new state (a replica's standby, say) is a row in its table and
 * in its description below, and the events that lead to it: never a flag.
 * Loop thread. */
#ifndef CS_STORE_STATE_H
#define CS_STORE_STATE_H

#include <stdbool.h>

struct cs_store;

enum cs_store_state {
    CS_STORE_STATE_NEW,        /* made; cs_store_open not called */
    CS_STORE_STATE_OPENING,    /* the embedded server, then the first connection */
    CS_STORE_STATE_STANDBY,    /* joined as a standby: waits to take the active role */
    CS_STORE_STATE_LOADING,    /* the active replica: the snapshot's reads are queued */
    CS_STORE_STATE_LIVE,       /* open_cb has the snapshot */
    CS_STORE_STATE_FAILED,     /* open_cb has an error; nothing more is tried */
    CS_STORE_STATE_FENCED,     /* another replica took this one's lease over */
    CS_STORE_STATE_CANCELLING, /* closed before the snapshot was queued */
    CS_STORE_STATE_DRAINING,   /* closed while live: writes wait for their commit */
    CS_STORE_STATE_CLOSING,    /* closed: only work on libuv's pool is waited for */
    CS_STORE_STATE_FINISHING,  /* connection gone, queues failed, handles closing */
    CS_STORE_STATE_COUNT,
};

enum cs_store_event {
    CS_STORE_EV_OPEN,        /* cs_store_open */
    CS_STORE_EV_READY,       /* the connection is ready (again) */
    CS_STORE_EV_WAIT,        /* the first connection is ready, and the replica a standby */
    CS_STORE_EV_PROMOTE,     /* the standby took the active role */
    CS_STORE_EV_LOADED,      /* the open is answered with the snapshot */
    CS_STORE_EV_OPEN_FAILED, /* the open is answered with an error */
    CS_STORE_EV_FENCE,       /* the replica's epoch is no longer its own */
    CS_STORE_EV_CLOSE,       /* cs_store_close */
    CS_STORE_EV_DEADLINE,    /* the close's deadline passed */
    CS_STORE_EV_FINISH,      /* the close waits for nothing more */
    CS_STORE_EV_COUNT,
};

enum cs_store_conn_state {
    CS_STORE_CONN_IDLE,       /* no connection; a reconnect may be due */
    CS_STORE_CONN_STARTING,   /* the embedded server starts (libuv's pool) */
    CS_STORE_CONN_RESOLVING,  /* the host name resolves (libuv's pool) */
    CS_STORE_CONN_CONNECTING, /* PQconnectPoll */
    CS_STORE_CONN_JOINING,    /* the replica's join, a simple query outside pipeline mode */
    CS_STORE_CONN_MIGRATING,  /* migrations, simple queries outside pipeline mode */
    CS_STORE_CONN_PREPARING,  /* pipeline mode: the statements being prepared */
    CS_STORE_CONN_READY,      /* batches go out */
    CS_STORE_CONN_STATE_COUNT,
};

enum cs_store_conn_event {
    CS_STORE_CONN_EV_START,    /* the embedded server's (re)start is queued */
    CS_STORE_CONN_EV_STARTED,  /* and is back */
    CS_STORE_CONN_EV_RESOLVE,  /* the host name's resolution is queued */
    CS_STORE_CONN_EV_RESOLVED, /* and is back */
    CS_STORE_CONN_EV_CONNECT,  /* PQconnectStartParams took the parameters */
    CS_STORE_CONN_EV_MIGRATE,  /* connected, and migrations are due */
    CS_STORE_CONN_EV_JOIN,     /* the schema current, and the replica not joined yet */
    CS_STORE_CONN_EV_PREPARE,  /* the schema current and the replica joined */
    CS_STORE_CONN_EV_PREPARED, /* every statement prepared */
    CS_STORE_CONN_EV_DROP,     /* the connection, if any, is closed */
    CS_STORE_CONN_EV_COUNT,
};

/* Sets *next to the state the table moves from to on event. Returns 0, or
 * -EPERM when the table refuses event in from. */
int cs_store_state_next(enum cs_store_state from, enum cs_store_event event,
                        enum cs_store_state *next);
int cs_store_conn_state_next(enum cs_store_conn_state from, enum cs_store_conn_event event,
                             enum cs_store_conn_state *next);

/* The only writers of store->state and store->conn_state: move the region
 * on event and return the state it left; abort, naming both, when the
 * table refuses it. */
enum cs_store_state cs_store_step(struct cs_store *store, enum cs_store_event event);
enum cs_store_conn_state cs_store_conn_step(struct cs_store *store, enum cs_store_conn_event event);

/* What the current states mean. Live: the replica has joined and is not
 * fenced (STANDBY, LIVE, DRAINING): a lost connection is rebuilt. Closing: cs_store_close was
 * called. On the pool: the connection waits for work on libuv's pool, which a close waits for. */
bool cs_store_is_live(const struct cs_store *store);
bool cs_store_is_closing(const struct cs_store *store);
bool cs_store_conn_on_pool(const struct cs_store *store);

/* Names for logs and test messages ("?" out of range). */
const char *cs_store_state_name(enum cs_store_state state);
const char *cs_store_event_name(enum cs_store_event event);
const char *cs_store_conn_state_name(enum cs_store_conn_state state);
const char *cs_store_conn_event_name(enum cs_store_conn_event event);

#endif
