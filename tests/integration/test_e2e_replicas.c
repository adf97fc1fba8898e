/* End-to-end tests of ListReplicas through libcsched against a real cschedd
 * (--replica-id e2e-self) and its real PostgreSQL: rows of two other
 * replicas written by SQL come back with every field, their leases measured
 * on the database's clock; the row of the replica answering, and only that
 * one, is marked self. The server may write its own row (a replica joins
 * the database under its id): the tests look only at the rows they wrote,
 * and at the server's row wherever it came from. The fake replicas are
 * standby and left, states in which no replica acts on another's row. */
#include <libpq-fe.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "e2e.h"
#include "testlib.h"

#define SELF_ID "e2e-self"

/* Runs sql on the server's database as a person with psql would; returns
 * how many rows it returned or changed. */
static long sql(struct cs_e2e *e, const char *query)
{
    PGconn *conn = PQconnectdb(cs_testpg_url(e->pg));
    assert_int_equal(PQstatus(conn), CONNECTION_OK);
    PGresult *res = PQexec(conn, query);
    if (PQresultStatus(res) != PGRES_TUPLES_OK && PQresultStatus(res) != PGRES_COMMAND_OK)
        fail_msg("%s: %s", query, PQerrorMessage(conn));
    long n = PQresultStatus(res) == PGRES_TUPLES_OK ? PQntuples(res) : atol(PQcmdTuples(res));
    PQclear(res);
    PQfinish(conn);
    return n;
}

/* The database's clock now, in unix ms. */
static int64_t db_now_ms(struct cs_e2e *e)
{
    PGconn *conn = PQconnectdb(cs_testpg_url(e->pg));
    assert_int_equal(PQstatus(conn), CONNECTION_OK);
    PGresult *res =
        PQexec(conn, "SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint");
    assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
    int64_t now = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    PQclear(res);
    PQfinish(conn);
    return now;
}

static Csched__V1__ListReplicasResponse *list_replicas(struct cs_e2e *e)
{
    Csched__V1__ListReplicasResponse *resp = NULL;
    struct cs_status st = {0};
    int rc = cs_scheduler_list_replicas(e->client, NULL, &resp, cs_e2e_opts(), &st);

    if (rc != 0)
        fail_msg("ListReplicas: %s \"%s\"", cs_status_code_name(rc), st.message);
    return resp;
}

/* The replica id, or NULL; asserts the list is ordered by id, and that at
 * most one row, the server's, is marked self. */
static const Csched__V1__Replica *find(const Csched__V1__ListReplicasResponse *resp, const char *id)
{
    const Csched__V1__Replica *found = NULL;
    size_t selves = 0;
    for (size_t i = 0; i < resp->n_replicas; i++) {
        const Csched__V1__Replica *r = resp->replicas[i];
        if (i > 0 && strcmp(resp->replicas[i - 1]->id, r->id) >= 0)
            fail_msg("replicas out of order: %s before %s", resp->replicas[i - 1]->id, r->id);
        if (r->self != (strcmp(r->id, SELF_ID) == 0))
            fail_msg("replica %s: self is %d, the server is %s", r->id, r->self, SELF_ID);
        selves += r->self;
        if (strcmp(r->id, id) == 0)
            found = r;
    }
    assert_in_range(selves, 0, 1);
    return found;
}

static int setup(void **state)
{
    static const char *const args[] = {"--replica-id", SELF_ID, NULL};
    return cs_e2e_start(state, args);
}

/* Two other replicas' rows, written by SQL on the database's clock: e2e-a
 * a standby renewed 3 s ago with its lease good for an hour, e2e-b left,
 * renewed 2 minutes ago with its lease run out a minute ago. Both come
 * back with what was written, their lease's age measured between two reads
 * of the database's clock around the call, neither marked self. */
static void test_e2e_replicas_listed(void **state)
{
    struct cs_e2e *e = *state;

    int64_t before = db_now_ms(e);
    assert_int_equal(
        sql(e, "INSERT INTO replicas (id, epoch, instance, state, address, version, joined_at,"
               " renewed_at, lease_until, attempts_until, runs_held) VALUES"
               " ('e2e-a', 7000000001, 'inst-a', 1, 'node-a:50051', '9.8.7',"
               " '2026-01-02 03:04:05.678901+00', clock_timestamp() - interval '3 s',"
               " clock_timestamp() + interval '1 h', clock_timestamp() + interval '1 h', 0),"
               " ('e2e-b', 7000000002, 'inst-b', 4, '', '1.0.0',"
               " '2026-01-01 00:00:00+00', clock_timestamp() - interval '120 s',"
               " clock_timestamp() - interval '60 s', clock_timestamp() - interval '30 s', 2)"),
        2);
    Csched__V1__ListReplicasResponse *resp = list_replicas(e);
    int64_t after = db_now_ms(e);

    const Csched__V1__Replica *a = find(resp, "e2e-a"), *b = find(resp, "e2e-b");
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(a->epoch, 7000000001);
    assert_int_equal(a->state, CSCHED__V1__REPLICA_STATE__REPLICA_STATE_STANDBY);
    assert_string_equal(a->address, "node-a:50051");
    assert_string_equal(a->version, "9.8.7");
    assert_int_equal(a->joined_unix_ms, 1767323045678);
    assert_in_range(a->renewed_unix_ms, before - 3000, after - 3000);
    assert_in_range(a->lease_until_unix_ms, before + 3600000, after + 3600000);
    assert_in_range(a->attempts_until_unix_ms, before + 3600000, after + 3600000);
    assert_in_range(a->lease_age_ms, 3000, 3000 + after - before + 1);
    assert_false(a->lease_expired);
    assert_int_equal(a->runs_held, 0);
    assert_false(a->self);

    assert_int_equal(b->epoch, 7000000002);
    assert_int_equal(b->state, CSCHED__V1__REPLICA_STATE__REPLICA_STATE_LEFT);
    assert_string_equal(b->address, "");
    assert_string_equal(b->version, "1.0.0");
    assert_int_equal(b->joined_unix_ms, 1767225600000);
    assert_in_range(b->lease_until_unix_ms, before - 60000, after - 60000);
    assert_in_range(b->attempts_until_unix_ms, before - 30000, after - 30000);
    assert_in_range(b->lease_age_ms, 120000, 120000 + after - before + 1);
    assert_true(b->lease_expired);
    assert_int_equal(b->runs_held, 2);
    assert_false(b->self);
    printf("replicas: %zu listed, lease ages %lld and %lld ms\n", resp->n_replicas,
           (long long)a->lease_age_ms, (long long)b->lease_age_ms);
    csched__v1__list_replicas_response__free_unpacked(resp, NULL);
    assert_int_equal(sql(e, "DELETE FROM replicas WHERE id IN ('e2e-a', 'e2e-b')"), 2);
}

/* The server's own row, written when it joined, is marked self, and no
 * other row is: here one other standby's. */
static void test_e2e_replicas_self(void **state)
{
    struct cs_e2e *e = *state;

    assert_int_equal(
        sql(e, "INSERT INTO replicas (id, epoch, instance, state, joined_at, renewed_at,"
               " lease_until, attempts_until) VALUES ('e2e-other', 7000000004, 'inst-other', 1,"
               " now(), now(), now() + interval '1 h', now() + interval '1 h')"),
        1);
    Csched__V1__ListReplicasResponse *resp = list_replicas(e);
    const Csched__V1__Replica *self = find(resp, SELF_ID), *other = find(resp, "e2e-other");
    assert_non_null(self);
    assert_true(self->self);
    assert_int_equal(self->state, CSCHED__V1__REPLICA_STATE__REPLICA_STATE_ACTIVE);
    assert_true(self->epoch > 0);
    assert_non_null(other);
    assert_false(other->self);
    csched__v1__list_replicas_response__free_unpacked(resp, NULL);
    assert_int_equal(sql(e, "DELETE FROM replicas WHERE id = 'e2e-other'"), 1);
}

/* A second cschedd on the same database under another id stands by: it
 * serves health (NOT_SERVING) and ListReplicas (itself the standby, the
 * first server the active one), and forwards everything else to the active
 * one, whose answer comes back (once a renewal has shown it the active
 * replica's address; UNAVAILABLE, naming itself a standby, before); the
 * first server goes on serving. SIGTERM stops the standby cleanly. */
static void test_e2e_replicas_standby_answers(void **state)
{
    struct cs_e2e *e = *state;
    static const char *const args[] = {"--replica-id", "e2e-standby", NULL};
    struct cs_testd_options opts = {
        .database_url = cs_testpg_url(e->pg), .extra_args = args, .no_wait = true};
    struct cs_testd *standby = NULL;
    struct cs_client *client = NULL;
    assert_int_equal(cs_testd_start(&opts, &standby), 0);
    int64_t deadline = cs_test_now_ms() + 20000;
    while (sql(e, "SELECT count(*) FROM replicas WHERE id = 'e2e-standby' AND state = 1") != 1 &&
           cs_test_now_ms() < deadline)
        cs_test_sleep_ms(20);
    assert_int_equal(cs_client_new(cs_testd_target(standby), &client), 0);
    struct cs_e2e other = {.pg = e->pg, .d = standby, .client = client};
    int serving = -1;
    while (cs_e2e_health_check(&other, "", &serving) != 0 && cs_test_now_ms() < deadline)
        cs_test_sleep_ms(20);
    assert_int_equal(serving, GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING);

    Csched__V1__ListReplicasResponse *resp = NULL;
    struct cs_status st = {0};
    assert_int_equal(cs_scheduler_list_replicas(client, NULL, &resp, cs_e2e_opts(), &st), 0);
    size_t seen = 0;
    for (size_t i = 0; i < resp->n_replicas; i++) {
        const Csched__V1__Replica *r = resp->replicas[i];
        if (strcmp(r->id, "e2e-standby") == 0) {
            assert_true(r->self);
            assert_int_equal(r->state, CSCHED__V1__REPLICA_STATE__REPLICA_STATE_STANDBY);
            seen++;
        } else if (strcmp(r->id, SELF_ID) == 0) {
            assert_false(r->self);
            assert_int_equal(r->state, CSCHED__V1__REPLICA_STATE__REPLICA_STATE_ACTIVE);
            seen++;
        }
    }
    assert_int_equal(seen, 2);
    csched__v1__list_replicas_response__free_unpacked(resp, NULL);

    Csched__V1__GetJobRequest req = CSCHED__V1__GET_JOB_REQUEST__INIT;
    req.name = "anything";
    Csched__V1__Job *job = NULL;
    int rc;
    while ((rc = cs_scheduler_get_job(client, &req, &job, cs_e2e_opts(), &st)) ==
               GRPC_STATUS_UNAVAILABLE &&
           cs_test_now_ms() < deadline) {
        assert_non_null(strstr(st.message, "replica e2e-standby is a standby"));
        cs_test_sleep_ms(20);
    }
    assert_int_equal(rc, GRPC_STATUS_NOT_FOUND);
    assert_non_null(strstr(st.message, "anything"));

    int first_serving = -1;
    assert_int_equal(cs_e2e_health_check(e, "", &first_serving), 0);
    assert_int_equal(first_serving,
                     GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING);
    cs_client_free(client);
    assert_int_equal(cs_testd_stop(standby), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_replicas_listed),
        cmocka_unit_test(test_e2e_replicas_self),
        cmocka_unit_test(test_e2e_replicas_standby_answers),
    };
    return cmocka_run_group_tests(tests, setup, cs_e2e_teardown);
}
