/* The store's two transition tables and their writers (store_state.h).
 * A cell holds the next state plus one, so that the cells a row leaves out
 * (zero) are the events it refuses. Loop thread. */
#include "store_state.h"

#include <errno.h>
#include <stdint.h>

#include "store_internal.h"

#define TO(state) (1 + CS_STORE_STATE_##state)

/* What each event does to the store's life. The actions are the callers':
 * store.c queues the snapshot when READY leaves OPENING or CANCELLING,
 * answers the open, and finishes the close. */
static const uint8_t life_table[CS_STORE_STATE_COUNT][CS_STORE_EV_COUNT] = {
    [CS_STORE_STATE_NEW] =
        {
            [CS_STORE_EV_OPEN] = TO(OPENING),
            [CS_STORE_EV_CLOSE] = TO(CANCELLING),
        },
    [CS_STORE_STATE_OPENING] =
        {
            [CS_STORE_EV_READY] = TO(LOADING),
            [CS_STORE_EV_WAIT] = TO(STANDBY),
            [CS_STORE_EV_OPEN_FAILED] = TO(FAILED),
            [CS_STORE_EV_CLOSE] = TO(CANCELLING),
        },
    /* A standby renews its lease and watches the active replica's; it
     * loads the snapshot once it takes the active role. */
    [CS_STORE_STATE_STANDBY] =
        {
            [CS_STORE_EV_READY] = TO(STANDBY),
            [CS_STORE_EV_PROMOTE] = TO(LOADING),
            [CS_STORE_EV_FENCE] = TO(FENCED),
            [CS_STORE_EV_CLOSE] = TO(DRAINING),
        },
    /* A reconnect while loading sends the snapshot's reads again. */
    [CS_STORE_STATE_LOADING] =
        {
            [CS_STORE_EV_READY] = TO(LOADING),
            [CS_STORE_EV_LOADED] = TO(LIVE),
            [CS_STORE_EV_OPEN_FAILED] = TO(FAILED),
            [CS_STORE_EV_FENCE] = TO(FENCED),
            [CS_STORE_EV_CLOSE] = TO(CLOSING),
        },
    [CS_STORE_STATE_LIVE] =
        {
            [CS_STORE_EV_READY] = TO(LIVE),
            [CS_STORE_EV_FENCE] = TO(FENCED),
            [CS_STORE_EV_CLOSE] = TO(DRAINING),
        },
    [CS_STORE_STATE_FAILED] = {[CS_STORE_EV_CLOSE] = TO(CLOSING)},
    [CS_STORE_STATE_FENCED] = {[CS_STORE_EV_CLOSE] = TO(CLOSING)},
    /* The open is answered -ECANCELED at the finish, unless a connection
     * ready first queues the snapshot, whose failure then answers it. */
    [CS_STORE_STATE_CANCELLING] =
        {
            [CS_STORE_EV_READY] = TO(CLOSING),
            [CS_STORE_EV_OPEN_FAILED] = TO(CLOSING),
            [CS_STORE_EV_DEADLINE] = TO(CANCELLING),
            [CS_STORE_EV_FINISH] = TO(FINISHING),
        },
    [CS_STORE_STATE_DRAINING] =
        {
            [CS_STORE_EV_READY] = TO(DRAINING),
            [CS_STORE_EV_FENCE] = TO(CLOSING),
            [CS_STORE_EV_DEADLINE] = TO(CLOSING),
            [CS_STORE_EV_FINISH] = TO(FINISHING),
        },
    /* Closed while loading, the snapshot may still arrive before the end of
     * the turn: the store is then live, and its writes are waited for. */
    [CS_STORE_STATE_CLOSING] =
        {
            [CS_STORE_EV_READY] = TO(CLOSING),
            [CS_STORE_EV_LOADED] = TO(DRAINING),
            [CS_STORE_EV_OPEN_FAILED] = TO(CLOSING),
            [CS_STORE_EV_DEADLINE] = TO(CLOSING),
            [CS_STORE_EV_FINISH] = TO(FINISHING),
        },
    /* The finish fails the queues: a snapshot still in them answers the
     * open, or else the finish answers it -ECANCELED. */
    [CS_STORE_STATE_FINISHING] = {[CS_STORE_EV_OPEN_FAILED] = TO(FINISHING)},
};

#undef TO
#define TO(state) (1 + CS_STORE_CONN_##state)

/* What each event does to the connection. A loss drops it from any step
 * that holds one; work on libuv's pool always comes back first. */
static const uint8_t conn_table[CS_STORE_CONN_STATE_COUNT][CS_STORE_CONN_EV_COUNT] = {
    [CS_STORE_CONN_IDLE] =
        {
            [CS_STORE_CONN_EV_START] = TO(STARTING),
            [CS_STORE_CONN_EV_RESOLVE] = TO(RESOLVING),
            [CS_STORE_CONN_EV_CONNECT] = TO(CONNECTING),
            [CS_STORE_CONN_EV_DROP] = TO(IDLE),
        },
    [CS_STORE_CONN_STARTING] = {[CS_STORE_CONN_EV_STARTED] = TO(IDLE)},
    [CS_STORE_CONN_RESOLVING] = {[CS_STORE_CONN_EV_RESOLVED] = TO(IDLE)},
    [CS_STORE_CONN_CONNECTING] =
        {
            [CS_STORE_CONN_EV_MIGRATE] = TO(MIGRATING),
            [CS_STORE_CONN_EV_JOIN] = TO(JOINING),
            [CS_STORE_CONN_EV_PREPARE] = TO(PREPARING),
            [CS_STORE_CONN_EV_DROP] = TO(IDLE),
        },
    [CS_STORE_CONN_MIGRATING] =
        {
            [CS_STORE_CONN_EV_JOIN] = TO(JOINING),
            [CS_STORE_CONN_EV_PREPARE] = TO(PREPARING),
            [CS_STORE_CONN_EV_DROP] = TO(IDLE),
        },
    [CS_STORE_CONN_JOINING] =
        {
            [CS_STORE_CONN_EV_PREPARE] = TO(PREPARING),
            [CS_STORE_CONN_EV_DROP] = TO(IDLE),
        },
    [CS_STORE_CONN_PREPARING] =
        {
            [CS_STORE_CONN_EV_PREPARED] = TO(READY),
            [CS_STORE_CONN_EV_DROP] = TO(IDLE),
        },
    [CS_STORE_CONN_READY] = {[CS_STORE_CONN_EV_DROP] = TO(IDLE)},
};

#undef TO

/* What each state of the life means (store_state.h). */
static const struct {
    const char *name;
    bool live;
    bool closing;
} life_states[CS_STORE_STATE_COUNT] = {
    [CS_STORE_STATE_NEW] = {"NEW", false, false},
    [CS_STORE_STATE_OPENING] = {"OPENING", false, false},
    [CS_STORE_STATE_STANDBY] = {"STANDBY", true, false},
    [CS_STORE_STATE_LOADING] = {"LOADING", false, false},
    [CS_STORE_STATE_LIVE] = {"LIVE", true, false},
    [CS_STORE_STATE_FAILED] = {"FAILED", false, false},
    [CS_STORE_STATE_FENCED] = {"FENCED", false, false},
    [CS_STORE_STATE_CANCELLING] = {"CANCELLING", false, true},
    [CS_STORE_STATE_DRAINING] = {"DRAINING", true, true},
    [CS_STORE_STATE_CLOSING] = {"CLOSING", false, true},
    [CS_STORE_STATE_FINISHING] = {"FINISHING", false, true},
};

static const char *const event_names[CS_STORE_EV_COUNT] = {
    [CS_STORE_EV_OPEN] = "OPEN",         [CS_STORE_EV_READY] = "READY",
    [CS_STORE_EV_WAIT] = "WAIT",         [CS_STORE_EV_PROMOTE] = "PROMOTE",
    [CS_STORE_EV_LOADED] = "LOADED",     [CS_STORE_EV_OPEN_FAILED] = "OPEN_FAILED",
    [CS_STORE_EV_FENCE] = "FENCE",       [CS_STORE_EV_CLOSE] = "CLOSE",
    [CS_STORE_EV_DEADLINE] = "DEADLINE", [CS_STORE_EV_FINISH] = "FINISH",
};

static const struct {
    const char *name;
    bool on_pool;
} conn_states[CS_STORE_CONN_STATE_COUNT] = {
    [CS_STORE_CONN_IDLE] = {"IDLE", false},
    [CS_STORE_CONN_STARTING] = {"STARTING", true},
    [CS_STORE_CONN_RESOLVING] = {"RESOLVING", true},
    [CS_STORE_CONN_CONNECTING] = {"CONNECTING", false},
    [CS_STORE_CONN_JOINING] = {"JOINING", false},
    [CS_STORE_CONN_MIGRATING] = {"MIGRATING", false},
    [CS_STORE_CONN_PREPARING] = {"PREPARING", false},
    [CS_STORE_CONN_READY] = {"READY", false},
};

static const char *const conn_event_names[CS_STORE_CONN_EV_COUNT] = {
    [CS_STORE_CONN_EV_START] = "START",       [CS_STORE_CONN_EV_STARTED] = "STARTED",
    [CS_STORE_CONN_EV_RESOLVE] = "RESOLVE",   [CS_STORE_CONN_EV_RESOLVED] = "RESOLVED",
    [CS_STORE_CONN_EV_CONNECT] = "CONNECT",   [CS_STORE_CONN_EV_JOIN] = "JOIN",
    [CS_STORE_CONN_EV_MIGRATE] = "MIGRATE",   [CS_STORE_CONN_EV_PREPARE] = "PREPARE",
    [CS_STORE_CONN_EV_PREPARED] = "PREPARED", [CS_STORE_CONN_EV_DROP] = "DROP",
};

int cs_store_state_next(enum cs_store_state from, enum cs_store_event event,
                        enum cs_store_state *next)
{
    if ((unsigned)from >= CS_STORE_STATE_COUNT || (unsigned)event >= CS_STORE_EV_COUNT ||
        life_table[from][event] == 0)
        return -EPERM;
    *next = (enum cs_store_state)(life_table[from][event] - 1);
    return 0;
}

int cs_store_conn_state_next(enum cs_store_conn_state from, enum cs_store_conn_event event,
                             enum cs_store_conn_state *next)
{
    if ((unsigned)from >= CS_STORE_CONN_STATE_COUNT || (unsigned)event >= CS_STORE_CONN_EV_COUNT ||
        conn_table[from][event] == 0)
        return -EPERM;
    *next = (enum cs_store_conn_state)(conn_table[from][event] - 1);
    return 0;
}

/* A refused event means the code around the tables went wrong: say which,
 * then abort. */
static _Noreturn void refused(const struct cs_store *store, const char *region, const char *event,
                              const char *state)
{
    cs_store_log(&store->log, CS_STORE_LOG_ERROR, "%s event %s refused in state %s", region, event,
                 state);
    cs_store_assert_fail("an event the store's table allows", __FILE__, __LINE__);
}

enum cs_store_state cs_store_step(struct cs_store *store, enum cs_store_event event)
{
    enum cs_store_state from = store->state;

    if (cs_store_state_next(from, event, &store->state) != 0)
        refused(store, "store", cs_store_event_name(event), cs_store_state_name(from));
    return from;
}

enum cs_store_conn_state cs_store_conn_step(struct cs_store *store, enum cs_store_conn_event event)
{
    enum cs_store_conn_state from = store->conn_state;

    if (cs_store_conn_state_next(from, event, &store->conn_state) != 0)
        refused(store, "connection", cs_store_conn_event_name(event),
                cs_store_conn_state_name(from));
    return from;
}

bool cs_store_is_live(const struct cs_store *store)
{
    return life_states[store->state].live;
}

bool cs_store_is_closing(const struct cs_store *store)
{
    return life_states[store->state].closing;
}

bool cs_store_conn_on_pool(const struct cs_store *store)
{
    return conn_states[store->conn_state].on_pool;
}

const char *cs_store_state_name(enum cs_store_state state)
{
    return (unsigned)state < CS_STORE_STATE_COUNT ? life_states[state].name : "?";
}

const char *cs_store_event_name(enum cs_store_event event)
{
    return (unsigned)event < CS_STORE_EV_COUNT ? event_names[event] : "?";
}

const char *cs_store_conn_state_name(enum cs_store_conn_state state)
{
    return (unsigned)state < CS_STORE_CONN_STATE_COUNT ? conn_states[state].name : "?";
}

const char *cs_store_conn_event_name(enum cs_store_conn_event event)
{
    return (unsigned)event < CS_STORE_CONN_EV_COUNT ? conn_event_names[event] : "?";
}
