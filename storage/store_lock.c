/* The server lock: one cschedd per database. On every new connection,
 * before the migrations and before any write is sent again, a session-level
 * pg_try_advisory_lock on CS_STORE_SERVER_LOCK_KEY, which the session then
 * holds for its life: PostgreSQL drops it when the session ends, however its
 * server ended. When another session holds it, pg_locks and
 * pg_stat_activity name the holder; a holder with this process's own
 * application_name is a session of ours whose end PostgreSQL has not seen
 * yet (a connection lost on the way), and it is ended. Loop thread; the
 * connection layer feeds the input and decides what a busy lock means. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

/* Two statements, one simple query: the try, then whoever else holds the
 * lock (nobody once it is ours). CASE, unlike AND, fixes the order, so only
 * a session of our own is ended. */
static const char lock_sql[] =
    "SELECT pg_try_advisory_lock(%lld);"
    "SELECT a.pid, coalesce(a.application_name, ''),"
    " coalesce(host(a.client_addr), 'local socket'),"
    " CASE WHEN a.application_name = current_setting('application_name')"
    " THEN pg_terminate_backend(a.pid) ELSE false END"
    " FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
    " WHERE l.locktype = 'advisory' AND l.classid = %u AND l.objid = %u AND l.objsubid = 1"
    " AND l.granted AND l.pid <> pg_backend_pid()";

int cs_store_lock_start(struct cs_store *store, struct cs_store_err *err)
{
    /* pg_locks shows a bigint key as its high and low halves. */
    const unsigned long long key = CS_STORE_SERVER_LOCK_KEY;
    char sql[sizeof(lock_sql) + 64];

    (void)snprintf(sql, sizeof(sql), lock_sql, (long long)key, (unsigned)(key >> 32),
                   (unsigned)(key & 0xffffffffu));
    store->lock_try = CS_STORE_LOCK_SENT;
    store->lock_holder[0] = '\0';
    if (!PQsendQuery(store->conn, sql))
        return cs_store_err_set(err, -ENOTCONN, "%s", PQerrorMessage(store->conn));
    return cs_store_flush_out(store, err);
}

/* The try's answer: one row, "t" or "f". */
static void take_try(struct cs_store *store, const PGresult *res)
{
    if (PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0)
        store->lock_try = CS_STORE_LOCK_GOT;
}

/* The holder, named when the try failed, unless it was a session of ours,
 * now ended. */
static void take_holder(struct cs_store *store, const PGresult *res)
{
    const char *pid;

    if (store->lock_try == CS_STORE_LOCK_GOT || PQntuples(res) != 1)
        return;
    pid = PQgetvalue(res, 0, 0);
    if (strcmp(PQgetvalue(res, 0, 3), "t") == 0) {
        cs_store_log(&store->log, CS_STORE_LOG_INFO,
                     "ended backend %s, a lost session of this server's still holding the "
                     "server lock",
                     pid);
        return;
    }
    (void)snprintf(store->lock_holder, sizeof(store->lock_holder),
                   "the database is in use by another cschedd (application_name \"%s\", "
                   "client %s, backend pid %s); stop it or use another database; if it is "
                   "gone, end its session: SELECT pg_terminate_backend(%s)",
                   PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 2), pid, pid);
}

int cs_store_lock_read(struct cs_store *store, enum cs_store_lock_outcome *outcome,
                       struct cs_store_err *err)
{
    *outcome = CS_STORE_LOCK_PENDING;
    while (store->lock_try != CS_STORE_LOCK_IDLE && !PQisBusy(store->conn)) {
        PGresult *res = PQgetResult(store->conn);
        ExecStatusType st;
        char msg[512];

        if (res == NULL) {
            *outcome = store->lock_try == CS_STORE_LOCK_GOT ? CS_STORE_LOCK_HELD
                       : store->lock_holder[0] != '\0'      ? CS_STORE_LOCK_BUSY
                                                            : CS_STORE_LOCK_RETRY;
            store->lock_try = CS_STORE_LOCK_IDLE;
            return 0;
        }
        st = PQresultStatus(res);
        if (st == PGRES_FATAL_ERROR && cs_store_is_conn_error(store, res)) {
            cs_store_err_set(err, -ENOTCONN, "%s", PQresultErrorMessage(res));
            PQclear(res);
            return -ENOTCONN;
        }
        if (st != PGRES_TUPLES_OK) {
            cs_store_oneline(PQresultErrorMessage(res), msg, sizeof(msg));
            cs_store_log(&store->log, CS_STORE_LOG_ERROR, "taking the server lock failed: %s", msg);
            PQclear(res);
            return -EIO;
        }
        if (PQnfields(res) == 1)
            take_try(store, res);
        else
            take_holder(store, res);
        PQclear(res);
    }
    return 0;
}
