/* csched-test-proxy against a real PostgreSQL (testpg's throwaway cluster)
 * with libpq: queries and large rows pass both ways; cut reset fails a
 * connection at once and refuses new ones (ECONNREFUSED), again after each
 * restore; cut blackhole leaves a query unanswered and a new connection
 * unfinished, whatever statement_timeout, keepalives and tcp_user_timeout
 * say, and restore lets both finish; a reset under a blackhole closes what
 * it held; a client killed with SIGKILL ends its backend through the proxy
 * (what frees a killed replica's session and its advisory locks); while
 * the database is down each connection fails at once and the proxy goes
 * on. */
#include <errno.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "testlib.h"
#include "testproxy.h"

/* "At once": well under the seconds a timeout would take. */
#define PROMPT_MS 1000
/* How long a blackholed query or connection is watched for an answer. */
#define HANG_MS 1500
#define WAIT_MS 10000

struct fixture {
    struct cs_testpg *pg;
    struct cs_testproxy *proxy;
};

static PGconn *connect_with(const char *conninfo, const char *more)
{
    char info[1024];

    snprintf(info, sizeof(info), "%s %s", conninfo, more != NULL ? more : "");
    return PQconnectdb(info);
}

static PGconn *connect_ok(const struct fixture *f, const char *more)
{
    PGconn *conn = connect_with(cs_testproxy_conninfo(f->proxy), more);

    if (PQstatus(conn) != CONNECTION_OK)
        fail_msg("connecting through the proxy: %s", PQerrorMessage(conn));
    return conn;
}

/* query_text runs sql and returns its first value (malloc'd), or NULL
 * with the error in err. */
static char *query_text(PGconn *conn, const char *sql, char *err, size_t cap)
{
    PGresult *res = PQexec(conn, sql);
    char *value = NULL;

    if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
        value = strdup(PQgetvalue(res, 0, 0));
    else
        snprintf(err, cap, "%s", PQerrorMessage(conn));
    PQclear(res);
    return value;
}

static void assert_query(PGconn *conn, const char *sql, const char *want)
{
    char err[512] = "";
    char *got = query_text(conn, sql, err, sizeof(err));

    if (got == NULL)
        fail_msg("%s: %s", sql, err);
    assert_string_equal(got, want);
    free(got);
}

/* assert_status asserts the proxy's mode and waits for it to hold open
 * connections: one a client has just closed may take a moment to go. */
static void assert_status(struct fixture *f, const char *mode, unsigned open)
{
    int64_t deadline = cs_test_now_ms() + WAIT_MS;
    struct cs_testproxy_status st;

    for (;;) {
        assert_int_equal(cs_testproxy_status(f->proxy, &st), 0);
        assert_string_equal(st.mode, mode);
        if (st.open == open)
            return;
        if (cs_test_now_ms() > deadline)
            fail_msg("the proxy holds %u connections, want %u", st.open, open);
        cs_test_sleep_ms(10);
    }
}

static int group_setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    int rc;

    if (f == NULL)
        return -ENOMEM;
    rc = cs_testpg_start(&f->pg);
    if (rc == 0)
        rc = cs_testproxy_start_pg(cs_testpg_url(f->pg), &f->proxy);
    if (rc != 0) {
        cs_testpg_stop(f->pg);
        free(f);
        return rc;
    }
    *state = f;
    return 0;
}

static int group_teardown(void **state)
{
    struct fixture *f = *state;

    cs_testproxy_stop(f->proxy);
    cs_testpg_stop(f->pg);
    free(f);
    return 0;
}

/* Each test starts and ends with the link forwarding. */
static int restore(void **state)
{
    struct fixture *f = *state;

    return cs_testproxy_restore(f->proxy);
}

static void test_proxy_forwards_both_ways(void **state)
{
    struct fixture *f = *state;
    PGconn *conn = connect_ok(f, NULL);
    enum { BIG = 3 * 1024 * 1024 };
    char *big = malloc(BIG + 1);
    const char *params[1] = {big};
    char want[32];

    assert_query(conn, "SELECT 1", "1");
    /* Bigger than the proxy's buffers, each way. */
    assert_query(conn, "SELECT length(repeat('x', 5000000))", "5000000");
    PGresult *res = PQexec(conn, "SELECT repeat('x', 5000000)");
    assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
    assert_int_equal(PQgetlength(res, 0, 0), 5000000);
    PQclear(res);
    assert_non_null(big);
    memset(big, 'y', BIG);
    big[BIG] = '\0';
    res = PQexecParams(conn, "SELECT length($1::text)", 1, NULL, params, NULL, NULL, 0);
    snprintf(want, sizeof(want), "%d", BIG);
    assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
    assert_string_equal(PQgetvalue(res, 0, 0), want);
    PQclear(res);
    free(big);
    assert_status(f, "forward", 1);
    PQfinish(conn);
}

/* raw_connect connects a plain TCP socket to the proxy: 0 or -errno. */
static int raw_connect(const struct fixture *f)
{
    struct sockaddr_in addr = {.sin_family = AF_INET,
                               .sin_port = htons(cs_testproxy_port(f->proxy)),
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int rc;

    assert_true(fd >= 0);
    rc = connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0 ? 0 : -errno;
    close(fd);
    return rc;
}

static void test_proxy_reset_fails_at_once(void **state)
{
    struct fixture *f = *state;

    /* Twice: the port is listened on again after each restore. */
    for (int round = 0; round < 2; round++) {
        PGconn *conn = connect_ok(f, NULL);
        char err[512] = "";
        int64_t t0;

        assert_query(conn, "SELECT 1", "1");
        assert_int_equal(cs_testproxy_cut(f->proxy, CS_TESTPROXY_RESET), 0);
        assert_status(f, "reset", 0);
        t0 = cs_test_now_ms();
        assert_null(query_text(conn, "SELECT 1", err, sizeof(err)));
        assert_int_equal(PQstatus(conn), CONNECTION_BAD);
        PQfinish(conn);
        conn = connect_with(cs_testproxy_conninfo(f->proxy), "connect_timeout=10");
        assert_int_equal(PQstatus(conn), CONNECTION_BAD);
        if (strstr(PQerrorMessage(conn), "refused") == NULL)
            fail_msg("a new connection under cut reset: \"%s\", want refused",
                     PQerrorMessage(conn));
        PQfinish(conn);
        assert_int_equal(raw_connect(f), -ECONNREFUSED);
        if (cs_test_now_ms() - t0 > PROMPT_MS)
            fail_msg("failing under cut reset took %lld ms (old query: %s)",
                     (long long)(cs_test_now_ms() - t0), err);

        assert_int_equal(cs_testproxy_restore(f->proxy), 0);
        conn = connect_ok(f, NULL);
        assert_query(conn, "SELECT 2", "2");
        PQfinish(conn);
    }
}

/* no_answer watches conn's socket for HANG_MS and asserts that nothing
 * came: neither a result nor a close. */
static void assert_no_answer(PGconn *conn)
{
    struct pollfd pfd = {.fd = PQsocket(conn), .events = POLLIN};
    int64_t deadline = cs_test_now_ms() + HANG_MS;
    int64_t left;

    while ((left = deadline - cs_test_now_ms()) > 0) {
        int n = poll(&pfd, 1, (int)left);
        if (n > 0)
            fail_msg("the socket turned readable under cut blackhole (revents %#x)",
                     (unsigned)pfd.revents);
    }
    assert_int_equal(PQconsumeInput(conn), 1);
    assert_int_equal(PQisBusy(conn), 1);
    assert_int_equal(PQstatus(conn), CONNECTION_OK);
}

/* wait_result waits for the result of the query in flight on conn and
 * asserts its one value. */
static void wait_result(PGconn *conn, const char *want)
{
    struct pollfd pfd = {.fd = PQsocket(conn), .events = POLLIN};
    int64_t deadline = cs_test_now_ms() + WAIT_MS;

    while (PQisBusy(conn)) {
        if (cs_test_now_ms() > deadline)
            fail_msg("no answer %d ms after restore", WAIT_MS);
        (void)poll(&pfd, 1, 100);
        assert_int_equal(PQconsumeInput(conn), 1);
    }
    PGresult *res = PQgetResult(conn);
    if (PQresultStatus(res) != PGRES_TUPLES_OK)
        fail_msg("the held query failed: %s", PQerrorMessage(conn));
    assert_string_equal(PQgetvalue(res, 0, 0), want);
    PQclear(res);
    while ((res = PQgetResult(conn)) != NULL)
        PQclear(res);
}

/* poll_connect drives a PQconnectStart until deadline_ms; returns the last
 * PQconnectPoll status. */
static PostgresPollingStatusType poll_connect(PGconn *conn, int64_t deadline_ms)
{
    PostgresPollingStatusType st = PGRES_POLLING_WRITING;

    while (st != PGRES_POLLING_OK && st != PGRES_POLLING_FAILED) {
        int64_t left = deadline_ms - cs_test_now_ms();
        struct pollfd pfd = {.fd = PQsocket(conn),
                             .events = st == PGRES_POLLING_READING ? POLLIN : POLLOUT};
        if (left <= 0)
            break;
        if (poll(&pfd, 1, (int)left) > 0)
            st = PQconnectPoll(conn);
    }
    return st;
}

static void test_proxy_blackhole_hangs_then_heals(void **state)
{
    struct fixture *f = *state;
    /* The settings a client would count on, and what none of them changes:
     * the server never sees the query, and the proxy's kernel still
     * acknowledges every byte, so TCP sees nothing wrong. */
    PGconn *held = connect_ok(f, "options='-c statement_timeout=200' tcp_user_timeout=300 "
                                 "keepalives_idle=1 keepalives_interval=1 keepalives_count=1");
    PGconn *late;
    int64_t t0;

    assert_query(held, "SELECT 1", "1");
    /* The earlier tests' connections gone, so that only these are held. */
    assert_status(f, "forward", 1);
    assert_int_equal(cs_testproxy_cut(f->proxy, CS_TESTPROXY_BLACKHOLE), 0);
    assert_int_equal(PQsendQuery(held, "SELECT 41 + 1"), 1);
    assert_int_equal(PQflush(held), 0);
    assert_no_answer(held);

    late = PQconnectStart(cs_testproxy_conninfo(f->proxy));
    assert_non_null(late);
    assert_int_not_equal(PQstatus(late), CONNECTION_BAD);
    assert_int_not_equal(poll_connect(late, cs_test_now_ms() + HANG_MS), PGRES_POLLING_OK);
    assert_int_not_equal(PQstatus(late), CONNECTION_OK);
    assert_int_not_equal(PQstatus(late), CONNECTION_BAD);
    /* A blocking connect ends only at its own timeout (2 s is libpq's
     * least). */
    t0 = cs_test_now_ms();
    PGconn *timed = connect_with(cs_testproxy_conninfo(f->proxy), "connect_timeout=2");
    assert_int_equal(PQstatus(timed), CONNECTION_BAD);
    assert_true(cs_test_now_ms() - t0 >= 1900);
    PQfinish(timed);
    assert_status(f, "blackhole", 3);

    /* Kept: what was held goes on where it stopped. */
    assert_int_equal(cs_testproxy_restore(f->proxy), 0);
    wait_result(held, "42");
    assert_query(held, "SELECT 3", "3");
    assert_int_equal(poll_connect(late, cs_test_now_ms() + WAIT_MS), PGRES_POLLING_OK);
    assert_query(late, "SELECT 4", "4");
    PQfinish(late);
    PQfinish(held);
    PGconn *fresh = connect_ok(f, NULL);
    assert_query(fresh, "SELECT 5", "5");
    PQfinish(fresh);
}

static void test_proxy_reset_under_blackhole_closes_held(void **state)
{
    struct fixture *f = *state;
    PGconn *held = connect_ok(f, NULL);
    char err[512];

    assert_int_equal(cs_testproxy_cut(f->proxy, CS_TESTPROXY_BLACKHOLE), 0);
    assert_int_equal(cs_testproxy_cut(f->proxy, CS_TESTPROXY_RESET), 0);
    assert_int_equal(cs_testproxy_restore(f->proxy), 0);
    assert_null(query_text(held, "SELECT 1", err, sizeof(err)));
    assert_int_equal(PQstatus(held), CONNECTION_BAD);
    PQfinish(held);
    PGconn *fresh = connect_ok(f, NULL);
    assert_query(fresh, "SELECT 6", "6");
    PQfinish(fresh);
}

/* backend_alive counts the sessions of backend pid. */
static int backend_alive(PGconn *admin, const char *pid)
{
    char sql[128], err[512] = "";

    snprintf(sql, sizeof(sql), "SELECT count(*) FROM pg_stat_activity WHERE pid = %s", pid);
    char *n = query_text(admin, sql, err, sizeof(err));
    if (n == NULL)
        fail_msg("%s: %s", sql, err);
    int alive = atoi(n);
    free(n);
    return alive;
}

static void test_proxy_client_killed_ends_backend(void **state)
{
    struct fixture *f = *state;
    PGconn *admin = PQconnectdb(cs_testpg_url(f->pg));
    char pid[32] = "";
    int pipefd[2];
    int64_t deadline;

    assert_int_equal(PQstatus(admin), CONNECTION_OK);
    assert_int_equal(pipe(pipefd), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        /* A client that dies with its session open, as a replica under
         * kill -9: it never says goodbye. */
        PGconn *conn = PQconnectdb(cs_testproxy_conninfo(f->proxy));
        PGresult *res = PQexec(conn, "SELECT pg_backend_pid()");
        const char *v = PQresultStatus(res) == PGRES_TUPLES_OK ? PQgetvalue(res, 0, 0) : "0";
        if (write(pipefd[1], v, strlen(v)) < 0)
            _exit(1);
        close(pipefd[1]);
        pause();
        _exit(0);
    }
    close(pipefd[1]);
    ssize_t n = read(pipefd[0], pid, sizeof(pid) - 1);
    close(pipefd[0]);
    assert_true(n > 0 && strcmp(pid, "0") != 0);
    assert_int_equal(backend_alive(admin, pid), 1);
    assert_int_equal(kill(child, SIGKILL), 0);
    assert_int_equal(waitpid(child, NULL, 0), child);
    deadline = cs_test_now_ms() + WAIT_MS;
    while (backend_alive(admin, pid) != 0) {
        if (cs_test_now_ms() > deadline)
            fail_msg("backend %s still there %d ms after its client was killed", pid, WAIT_MS);
        cs_test_sleep_ms(20);
    }
    PQfinish(admin);
}

/* A target that refuses: each connection is reset at once, the proxy goes
 * on, and forwards again once the database is back (what a replica sees
 * while its database restarts). */
static void test_proxy_target_down(void **state)
{
    struct fixture *f = *state;

    cs_testpg_halt(f->pg);
    for (int i = 0; i < 3; i++) {
        int64_t t0 = cs_test_now_ms();
        PGconn *conn = connect_with(cs_testproxy_conninfo(f->proxy), "connect_timeout=10");
        assert_int_equal(PQstatus(conn), CONNECTION_BAD);
        PQfinish(conn);
        assert_true(cs_test_now_ms() - t0 < PROMPT_MS);
    }
    assert_status(f, "forward", 0);
    assert_int_equal(cs_testpg_resume(f->pg), 0);
    PGconn *conn = connect_ok(f, NULL);
    assert_query(conn, "SELECT 7", "7");
    PQfinish(conn);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_proxy_forwards_both_ways, restore),
        cmocka_unit_test_teardown(test_proxy_reset_fails_at_once, restore),
        cmocka_unit_test_teardown(test_proxy_blackhole_hangs_then_heals, restore),
        cmocka_unit_test_teardown(test_proxy_reset_under_blackhole_closes_held, restore),
        cmocka_unit_test_teardown(test_proxy_client_killed_ends_backend, restore),
        cmocka_unit_test_teardown(test_proxy_target_down, restore),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
