/* The migration driver: on the first connection, before pipeline mode, the
 * embedded migrations (migrate.c decides which) are applied as simple
 * queries: take the advisory lock, list the applied versions, apply what is
 * missing in one transaction, unlock. Loop thread; the connection layer
 * feeds it the socket's input and acts on what it returns. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "migrate.h"
#include "store_internal.h"

/* Sends the SQL of the current step (simple query protocol, so a step may
 * hold several statements). */
static int migrate_send(struct cs_store *store, struct cs_store_err *err)
{
    char sql[128];
    char *owned = NULL;
    const char *text = sql;
    int rc;

    switch (store->migrate_step) {
    case CS_STORE_MIGRATE_LOCK:
        snprintf(sql, sizeof(sql), "SELECT pg_advisory_lock(%lld)",
                 (long long)CS_STORE_MIGRATE_LOCK_KEY);
        break;
    case CS_STORE_MIGRATE_LIST:
        text = cs_store_migrate_list_sql;
        break;
    case CS_STORE_MIGRATE_APPLY:
        /* By version: a gap (a number not merged yet) makes them differ
         * from the count. */
        cs_store_log(&store->log, CS_STORE_LOG_INFO, "applying migrations %d to %d",
                     cs_store_migrations[store->migrate_first].version,
                     cs_store_migrations[cs_store_migrations_count - 1].version);
        owned = cs_store_migrate_sql(cs_store_migrations, cs_store_migrations_count,
                                     store->migrate_first, cs_store_now_unix_ms());
        text = owned;
        break;
    case CS_STORE_MIGRATE_UNLOCK:
        snprintf(sql, sizeof(sql), "SELECT pg_advisory_unlock(%lld)",
                 (long long)CS_STORE_MIGRATE_LOCK_KEY);
        break;
    case CS_STORE_MIGRATE_DONE:
    case CS_STORE_MIGRATE_FAILED:
        CS_STORE_ASSERT(!"no migration step left");
    }
    if (!PQsendQuery(store->conn, text))
        rc = cs_store_err_set(err, -ENOTCONN, "%s", PQerrorMessage(store->conn));
    else
        rc = cs_store_flush_out(store, err);
    free(owned);
    return rc;
}

/* Reads the applied versions and decides where to start. */
static void migrate_plan(struct cs_store *store, const PGresult *res)
{
    int n = PQntuples(res);
    int *applied = cs_store_xcalloc((size_t)n + 1, sizeof(*applied));
    int rc;

    for (int i = 0; i < n; i++)
        applied[i] = atoi(PQgetvalue(res, i, 0));
    rc = cs_store_migrate_plan(cs_store_migrations, cs_store_migrations_count, applied, (size_t)n,
                               &store->migrate_first);
    if (rc == -EPROTO)
        cs_store_log(&store->log, CS_STORE_LOG_ERROR,
                     "the database has schema version %d, newer than this build knows (%zu): "
                     "run a newer cschedd",
                     applied[n - 1], cs_store_migrations_count);
    else if (rc != 0)
        cs_store_log(&store->log, CS_STORE_LOG_ERROR,
                     "schema_migrations holds versions this build does not expect");
    free(applied);
    if (rc != 0)
        store->migrate_step = CS_STORE_MIGRATE_FAILED;
}

/* Takes one result of the current step; PQclears it. */
static int migrate_result(struct cs_store *store, PGresult *res, struct cs_store_err *err)
{
    ExecStatusType st = PQresultStatus(res);

    if (st == PGRES_FATAL_ERROR) {
        if (cs_store_is_conn_error(store, res)) {
            cs_store_err_set(err, -ENOTCONN, "%s", PQresultErrorMessage(res));
            PQclear(res);
            return -ENOTCONN;
        }
        char msg[512];

        cs_store_oneline(PQresultErrorMessage(res), msg, sizeof(msg));
        cs_store_log(&store->log, CS_STORE_LOG_ERROR, "migration step %d failed: %s",
                     (int)store->migrate_step, msg);
        store->migrate_step = CS_STORE_MIGRATE_FAILED;
    } else if (st == PGRES_TUPLES_OK && store->migrate_step == CS_STORE_MIGRATE_LIST) {
        migrate_plan(store, res);
    }
    PQclear(res);
    return 0;
}

/* The current step has ended: on to the next, or done. */
static int migrate_next(struct cs_store *store, struct cs_store_err *err)
{
    if (store->migrate_step == CS_STORE_MIGRATE_FAILED)
        return -EIO;
    store->migrate_step++;
    if (store->migrate_step == CS_STORE_MIGRATE_APPLY &&
        store->migrate_first == cs_store_migrations_count)
        store->migrate_step++;
    if (store->migrate_step == CS_STORE_MIGRATE_DONE)
        return 0;
    return migrate_send(store, err);
}

int cs_store_schema_version(void)
{
    return cs_store_migrations[cs_store_migrations_count - 1].version;
}

int cs_store_migrate_read(struct cs_store *store, struct cs_store_err *err)
{
    int rc;

    while (!PQisBusy(store->conn)) {
        PGresult *res = PQgetResult(store->conn);

        if (res == NULL)
            return migrate_next(store, err);
        rc = migrate_result(store, res, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int cs_store_migrate_start(struct cs_store *store, struct cs_store_err *err)
{
    store->migrate_step = CS_STORE_MIGRATE_LOCK;
    return migrate_send(store, err);
}
