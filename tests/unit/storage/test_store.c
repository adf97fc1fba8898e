/* Unit tests of the store's pure logic: message <-> row mapping (against
 * results built with libpq's PQmakeEmptyPGresult, no server), the embedded
 * migrations and the plan over applied versions, and database URLs. */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <libpq-fe.h>
#include <netdb.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "migrate.h"
#include "store_internal.h"

/* The mapping's log: stderr, as a store without a log callback has it. */
static const struct cs_store_logger quiet = {NULL, NULL};

/* Column types of a synthetic binary result. */
enum col_type { COL_INT8, COL_INT4, COL_INT2, COL_BOOL, COL_TEXT, COL_BYTEA };

static PGresult *make_result(const enum col_type *types, int n)
{
    PGresult *res = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
    PGresAttDesc attrs[40];

    assert_true(n <= 40);
    memset(attrs, 0, sizeof(attrs));
    for (int i = 0; i < n; i++) {
        attrs[i].name = (char *)"c";
        attrs[i].format = 1;
        attrs[i].typlen = types[i] == COL_INT8 ? 8 : types[i] == COL_INT4 ? 4 : -1;
    }
    assert_true(PQsetResultAttrs(res, n, attrs));
    return res;
}

static void set_int(PGresult *res, int row, int col, int64_t v, int len)
{
    char buf[8];
    uint64_t u64 = htobe64((uint64_t)v);
    uint32_t u32 = htobe32((uint32_t)(int32_t)v);
    uint16_t u16 = htobe16((uint16_t)(int16_t)v);

    if (len == 8)
        memcpy(buf, &u64, 8);
    else if (len == 4)
        memcpy(buf, &u32, 4);
    else
        memcpy(buf, &u16, 2);
    assert_true(PQsetvalue(res, row, col, buf, len));
}

static void set_text(PGresult *res, int row, int col, const char *s)
{
    assert_true(PQsetvalue(res, row, col, (char *)s, (int)strlen(s)));
}

static void set_null(PGresult *res, int row, int col)
{
    assert_true(PQsetvalue(res, row, col, NULL, -1));
}

static void test_store_row_reads_each_int_width(void **state)
{
    const enum col_type types[] = {COL_INT8, COL_INT4, COL_INT2, COL_BOOL, COL_INT8};
    PGresult *res = make_result(types, 5);
    char t = 1;

    set_int(res, 0, 0, -5000000000LL, 8);
    set_int(res, 0, 1, -7, 4);
    set_int(res, 0, 2, 300, 2);
    assert_true(PQsetvalue(res, 0, 3, &t, 1));
    set_null(res, 0, 4);
    assert_int_equal(cs_store_row_int(res, 0, 0), -5000000000LL);
    assert_int_equal(cs_store_row_int(res, 0, 1), -7);
    assert_int_equal(cs_store_row_int(res, 0, 2), 300);
    assert_true(cs_store_row_bool(res, 0, 3));
    assert_true(cs_store_row_is_null(res, 0, 4));
    assert_int_equal(cs_store_row_int(res, 0, 4), 0);
    PQclear(res);
}

static uint32_t be32_at(const uint8_t *p)
{
    uint32_t v;

    memcpy(&v, p, 4);
    return be32toh(v);
}

/* The layout of PostgreSQL's array_recv: ndim, has-null flag, element type,
 * then length and lower bound of the dimension; each element a length (-1
 * for NULL) and its bytes. */
/* Integers keep their value beside their decimal text, which is exact at
 * both ends of the range; bools and ints are not freed with the text. */
static void test_store_params_int_text(void **state)
{
    struct cs_store_params p = {0};
    const int64_t v[] = {0, 7, -1, 1234567890123, INT64_MAX, INT64_MIN};
    const char *const want[] = {
        "0", "7", "-1", "1234567890123", "9223372036854775807", "-9223372036854775808"};
    (void)state;

    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        cs_store_params_int(&p, v[i]);
    cs_store_params_text(&p, "x");
    cs_store_params_bool(&p, true);
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        assert_string_equal(p.values[i], want[i]);
        assert_true((p.is_int & (1u << i)) != 0);
        assert_true(p.ints[i] == v[i]);
    }
    assert_string_equal(p.values[6], "x");
    assert_false((p.is_int & (1u << 6)) != 0);
    assert_string_equal(p.values[7], "t");
    cs_store_params_clear(&p);
    assert_int_equal(p.n, 0);
    assert_int_equal(p.is_int, 0);
}

static void test_store_array_binary_layout(void **state)
{
    struct cs_store_array a;
    struct cs_store_params p = {0};
    const uint8_t *buf;
    uint64_t v64;

    cs_store_array_init(&a, CS_STORE_OID_INT8);
    cs_store_array_int(&a, -2);
    cs_store_array_null(&a);
    cs_store_array_param(&a, &p);
    assert_null(a.buf);
    assert_int_equal(p.n, 1);
    assert_int_equal(p.formats[0], 1);
    assert_int_equal(p.lengths[0], 20 + 12 + 4);
    buf = (const uint8_t *)p.values[0];
    assert_int_equal(be32_at(buf), 1);
    assert_int_equal(be32_at(buf + 4), 1);
    assert_int_equal(be32_at(buf + 8), 20);
    assert_int_equal(be32_at(buf + 12), 2);
    assert_int_equal(be32_at(buf + 16), 1);
    assert_int_equal(be32_at(buf + 20), 8);
    memcpy(&v64, buf + 24, 8);
    assert_int_equal((int64_t)be64toh(v64), -2);
    assert_int_equal(be32_at(buf + 32), UINT32_MAX);

    /* Text goes as its bytes, quotes and all; an empty one is not NULL. */
    cs_store_array_init(&a, CS_STORE_OID_TEXT);
    cs_store_array_bytes(&a, "a\"{,}", 5);
    cs_store_array_bytes(&a, "", 0);
    for (int i = 0; i < 300; i++)
        cs_store_array_bytes(&a, "x", 1);
    cs_store_array_param(&a, &p);
    assert_int_equal(p.n, 2);
    buf = (const uint8_t *)p.values[1];
    assert_int_equal(p.lengths[1], 20 + 4 + 5 + 4 + 300 * 5);
    assert_int_equal(be32_at(buf + 4), 0);
    assert_int_equal(be32_at(buf + 8), 25);
    assert_int_equal(be32_at(buf + 12), 302);
    assert_int_equal(be32_at(buf + 20), 5);
    assert_memory_equal(buf + 24, "a\"{,}", 5);
    assert_int_equal(be32_at(buf + 29), 0);
    assert_int_equal(be32_at(buf + 33), 1);
    cs_store_params_clear(&p);
}

static void test_store_job_params_round_trip(void **state)
{
    const enum col_type types[] = {COL_TEXT, COL_BYTEA, COL_INT8, COL_INT8, COL_INT8};
    char *argv[] = {"sleep", "1"};
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    struct cs_store_params p = {0};
    PGresult *res = make_result(types, 5);
    Csched__V1__Job *back;

    job.name = "nightly";
    job.command = argv;
    job.n_command = 2;
    job.timeout_seconds = 30;
    job.version = 4;
    job.created_unix_ms = 11;
    job.updated_unix_ms = 12;
    cs_store_job_params(&job, 7, &p);
    assert_int_equal(p.n, 6);
    assert_string_equal(p.values[0], "nightly");
    assert_int_equal(p.formats[1], 1);
    assert_string_equal(p.values[2], "4");
    assert_string_equal(p.values[5], "7");
    set_text(res, 0, 0, "nightly");
    assert_true(PQsetvalue(res, 0, 1, p.values[1], p.lengths[1]));
    set_int(res, 0, 2, 5, 8);
    set_int(res, 0, 3, 11, 8);
    set_int(res, 0, 4, 13, 8);
    back = cs_store_job_from_row(&quiet, res, 0);
    assert_non_null(back);
    assert_string_equal(back->name, "nightly");
    assert_int_equal(back->n_command, 2);
    assert_string_equal(back->command[0], "sleep");
    assert_int_equal(back->timeout_seconds, 30);
    /* The columns win over the packed copy. */
    assert_int_equal(back->version, 5);
    assert_int_equal(back->updated_unix_ms, 13);
    protobuf_c_message_free_unpacked(&back->base, NULL);
    cs_store_params_clear(&p);
    PQclear(res);
}

static void test_store_job_from_row_refuses_garbage(void **state)
{
    const enum col_type types[] = {COL_TEXT, COL_BYTEA, COL_INT8, COL_INT8, COL_INT8};
    PGresult *res = make_result(types, 5);

    set_text(res, 0, 0, "bad");
    assert_true(PQsetvalue(res, 0, 1, "\xff\xff\xff", 3));
    set_int(res, 0, 2, 1, 8);
    set_int(res, 0, 3, 1, 8);
    set_int(res, 0, 4, 1, 8);
    assert_null(cs_store_job_from_row(&quiet, res, 0));
    PQclear(res);
}

static void test_store_run_params_map_outcome_and_env(void **state)
{
    Csched__V1__Run run = CSCHED__V1__RUN__INIT;
    Csched__V1__Run__EnvEntry e = CSCHED__V1__RUN__ENV_ENTRY__INIT;
    Csched__V1__Run__EnvEntry *env[] = {&e};
    Csched__V1__Run *env_only;
    struct cs_store_params p = {0};

    run.id = 9;
    run.job_name = "j";
    run.state = CSCHED__V1__RUN_STATE__RUN_STATE_FAILED;
    run.outcome_case = CSCHED__V1__RUN__OUTCOME_TERM_SIGNAL;
    run.term_signal = 15;
    run.cancel_requested = 1;
    run.triggered_by = "bob";
    run.not_before_unix_ms = 1234;
    e.key = "A";
    e.value = "b";
    run.env = env;
    run.n_env = 1;
    run.array_id = 7;
    run.array_index = 2;
    run.array_max_running = 3;
    cs_store_run_params(&run, &p);
    assert_int_equal(p.n, 15);
    assert_string_equal(p.values[0], "9");
    assert_string_equal(p.values[2], "5");
    assert_int_equal(p.formats[3], 1);
    env_only = csched__v1__run__unpack(NULL, (size_t)p.lengths[3], (uint8_t *)p.values[3]);
    assert_non_null(env_only);
    assert_int_equal(env_only->n_env, 1);
    assert_string_equal(env_only->env[0]->key, "A");
    /* The array's index and cap travel with the env; its id has a column too. */
    assert_int_equal(env_only->array_id, 7);
    assert_int_equal(env_only->array_index, 2);
    assert_int_equal(env_only->array_max_running, 3);
    csched__v1__run__free_unpacked(env_only, NULL);
    assert_string_equal(p.values[14], "7");
    assert_null(p.values[8]);
    assert_string_equal(p.values[9], "15");
    assert_string_equal(p.values[11], "t");
    assert_string_equal(p.values[12], "bob");
    assert_string_equal(p.values[13], "1234");
    cs_store_params_clear(&p);

    run.n_env = 0;
    run.array_id = 0;
    run.outcome_case = CSCHED__V1__RUN__OUTCOME__NOT_SET;
    cs_store_run_params(&run, &p);
    assert_null(p.values[3]);
    assert_null(p.values[8]);
    assert_null(p.values[9]);
    cs_store_params_clear(&p);
}

static void test_store_run_filter_picks_statement(void **state)
{
    struct cs_store_run_filter all = {.limit = 0};
    struct cs_store_run_filter by_job = {.job_name = "x", .before_id = 40, .limit = 5};
    const char *const names[] = {"a", "NULL"};
    struct cs_store_run_filter in = {.job_names = names, .n_job_names = 2, .since_unix_ms = 7};
    struct cs_store_run_filter not_in = {.job_names_exclude = true};
    struct cs_store_params p = {0};

    assert_int_equal(cs_store_run_filter_params(&all, &p), CS_STORE_STMT_RUN_LIST);
    assert_int_equal(p.n, 4);
    assert_string_equal(p.values[2], "100");
    assert_string_equal(p.values[3], "0");
    cs_store_params_clear(&p);
    assert_int_equal(cs_store_run_filter_params(&by_job, &p), CS_STORE_STMT_RUN_LIST_JOB);
    assert_int_equal(p.n, 5);
    assert_string_equal(p.values[1], "40");
    assert_string_equal(p.values[4], "x");
    cs_store_params_clear(&p);
    /* Quoted: an unquoted NULL in an array literal is SQL NULL. */
    assert_int_equal(cs_store_run_filter_params(&in, &p), CS_STORE_STMT_RUN_LIST_JOBS);
    assert_string_equal(p.values[3], "7");
    assert_string_equal(p.values[4], "{\"a\",\"NULL\"}");
    cs_store_params_clear(&p);
    assert_int_equal(cs_store_run_filter_params(&not_in, &p), CS_STORE_STMT_RUN_LIST_NOT_JOBS);
    assert_string_equal(p.values[4], "{}");
    cs_store_params_clear(&p);
    /* An array's runs are all of one job: its id alone picks them. */
    struct cs_store_run_filter array = {.job_name = "x", .array_id = 12};
    assert_int_equal(cs_store_run_filter_params(&array, &p), CS_STORE_STMT_RUN_LIST_ARRAY);
    assert_int_equal(p.n, 5);
    assert_string_equal(p.values[4], "12");
    cs_store_params_clear(&p);
}

/* One row of the runs-join-attempts shape (ROW_COLS columns: the run's 14,
 * then the attempt's 19 from A). */
enum { A = 14, ROW_COLS = A + 19 };
static void set_run_row(PGresult *res, int row, int64_t id, int attempt, const char *dir)
{
    set_int(res, row, 0, id, 8);
    set_text(res, row, 1, "job");
    set_int(res, row, 2, 3, 2);
    set_null(res, row, 3);
    set_text(res, row, 4, "");
    for (int c = 5; c <= 7; c++)
        set_int(res, row, c, 100 * c, 8);
    set_int(res, row, 8, 2, 4);
    set_null(res, row, 9);
    set_text(res, row, 10, "msg");
    assert_true(PQsetvalue(res, row, 11, "\0", 1));
    set_text(res, row, 12, "alice");
    set_int(res, row, 13, 4000, 8);
    if (attempt == 0) {
        for (int c = A; c < ROW_COLS; c++)
            set_null(res, row, c);
        return;
    }
    set_int(res, row, A, attempt, 4);
    set_int(res, row, A + 1, 5, 2);
    set_null(res, row, A + 2);
    set_int(res, row, A + 3, 9, 4);
    for (int c = A + 4; c <= A + 5; c++)
        set_int(res, row, c, c, 8);
    set_int(res, row, A + 6, 77, 4);
    for (int c = A + 7; c <= A + 9; c++)
        set_int(res, row, c, c, 8);
    set_text(res, row, A + 10, "");
    set_text(res, row, A + 11, dir);
    set_int(res, row, A + 12, 0, 4);
    set_int(res, row, A + 13, 300 * attempt, 8);
    set_int(res, row, A + 14, 7, 8);
    for (int c = A + 15; c <= A + 18; c++)
        set_int(res, row, c, 1000 * c + attempt, 8);
}

static void test_store_runs_from_rows_groups_attempts(void **state)
{
    enum col_type types[ROW_COLS];
    PGresult *res;
    Csched__V1__Run **runs;
    char **dirs;
    size_t n;

    for (int i = 0; i < ROW_COLS; i++)
        types[i] = COL_INT8;
    res = make_result(types, ROW_COLS);
    set_run_row(res, 0, 5, 1, "/a/1");
    set_run_row(res, 1, 5, 2, "/a/2");
    set_run_row(res, 2, 4, 0, NULL);
    n = cs_store_runs_from_rows(&quiet, res, &runs, &dirs);
    assert_int_equal(n, 2);
    assert_int_equal(runs[0]->id, 5);
    assert_int_equal(runs[0]->n_attempts, 2);
    assert_int_equal(runs[0]->attempts[1]->number, 2);
    assert_int_equal(runs[0]->attempts[1]->outcome_case, CSCHED__V1__ATTEMPT__OUTCOME_TERM_SIGNAL);
    assert_int_equal(runs[0]->attempts[1]->term_signal, 9);
    assert_int_equal(runs[0]->attempts[1]->minder_pid, 77);
    assert_int_equal(runs[0]->attempts[1]->retry_delay_ms, 600);
    assert_int_equal(runs[0]->attempts[1]->retry_jitter_ms, 7);
    assert_int_equal(runs[0]->attempts[1]->stdout_written_bytes, 1000 * (A + 15) + 2);
    assert_int_equal(runs[0]->attempts[1]->stdout_kept_bytes, 1000 * (A + 16) + 2);
    assert_int_equal(runs[0]->attempts[1]->stderr_written_bytes, 1000 * (A + 17) + 2);
    assert_int_equal(runs[0]->attempts[1]->stderr_kept_bytes, 1000 * (A + 18) + 2);
    assert_int_equal(runs[0]->not_before_unix_ms, 4000);
    assert_int_equal(runs[0]->outcome_case, CSCHED__V1__RUN__OUTCOME_EXIT_CODE);
    assert_int_equal(runs[0]->exit_code, 2);
    assert_int_equal(runs[0]->state, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
    assert_int_equal(runs[0]->started_unix_ms, 600);
    assert_string_equal(runs[0]->message, "msg");
    assert_false(runs[0]->cancel_requested);
    assert_string_equal(runs[0]->triggered_by, "alice");
    assert_string_equal(dirs[0], "/a/2");
    assert_int_equal(runs[1]->id, 4);
    assert_int_equal(runs[1]->n_attempts, 0);
    assert_null(dirs[1]);
    free(dirs[0]);
    free(dirs);
    cs_store_runs_free(runs, n);
    PQclear(res);
}

static void test_store_event_params_round_trip(void **state)
{
    const enum col_type types[] = {COL_INT8, COL_INT8, COL_INT8, COL_TEXT, COL_INT4,
                                   COL_INT2, COL_INT4, COL_INT4, COL_TEXT, COL_BOOL};
    Csched__V1__Event e = CSCHED__V1__EVENT__INIT;
    struct cs_store_params p = {0};
    PGresult *res = make_result(types, 10);
    char t = 1;
    Csched__V1__Event *back;

    e.seq = 42;
    e.run_id = 7;
    e.job_name = "j";
    e.attempt = 2;
    e.state = CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED;
    e.outcome_case = CSCHED__V1__EVENT__OUTCOME_EXIT_CODE;
    e.exit_code = 0;
    e.recovered = true;
    cs_store_event_params(&e, &p);
    assert_int_equal(p.n, CS_STORE_EVENT_COLS);
    assert_string_equal(p.values[6], "0");
    assert_null(p.values[7]);
    assert_string_equal(p.values[9], "t");
    cs_store_params_clear(&p);

    set_int(res, 0, 0, 42, 8);
    set_int(res, 0, 1, 1000, 8);
    set_int(res, 0, 2, 7, 8);
    set_text(res, 0, 3, "j");
    set_int(res, 0, 4, 2, 4);
    set_int(res, 0, 5, 4, 2);
    set_int(res, 0, 6, 0, 4);
    set_null(res, 0, 7);
    set_text(res, 0, 8, "");
    assert_true(PQsetvalue(res, 0, 9, &t, 1));
    back = cs_store_event_from_row(res, 0);
    assert_int_equal(back->seq, 42);
    assert_int_equal(back->attempt, 2);
    assert_int_equal(back->outcome_case, CSCHED__V1__EVENT__OUTCOME_EXIT_CODE);
    assert_int_equal(back->exit_code, 0);
    assert_string_equal(back->message, "");
    assert_true(back->recovered);
    protobuf_c_message_free_unpacked(&back->base, NULL);
    PQclear(res);
}

/* An audit row goes out as its eight columns, in the table's order (the
 * bulk insert's types say how each travels), and comes back whole. */
static void test_store_audit_params_round_trip(void **state)
{
    const enum col_type types[] = {COL_INT8, COL_INT8, COL_TEXT, COL_TEXT,
                                   COL_TEXT, COL_INT8, COL_INT4, COL_TEXT};
    Csched__V1__AuditEntry a = CSCHED__V1__AUDIT_ENTRY__INIT;
    struct cs_store_params p = {0};
    PGresult *res = make_result(types, 8);
    Csched__V1__AuditEntry *back;

    a.id = 12;
    a.at_unix_ms = 1700000000123;
    a.method = "TriggerJob";
    a.identity = "unix:uid=1000(alice)";
    a.job_name = "backup";
    a.run_id = 77;
    a.code = 5;
    a.message = "job backup does not exist";
    cs_store_audit_params(&a, &p);
    assert_int_equal(p.n, CS_STORE_AUDIT_COLS);
    assert_string_equal(p.values[0], "12");
    assert_string_equal(p.values[1], "1700000000123");
    assert_string_equal(p.values[2], "TriggerJob");
    assert_string_equal(p.values[3], "unix:uid=1000(alice)");
    assert_string_equal(p.values[4], "backup");
    assert_string_equal(p.values[5], "77");
    assert_string_equal(p.values[6], "5");
    assert_string_equal(p.values[7], "job backup does not exist");
    assert_int_equal(cs_store_audit_cols[0], CS_STORE_COL_INT);
    assert_int_equal(cs_store_audit_cols[2], CS_STORE_COL_TEXT);
    assert_int_equal(cs_store_audit_cols[6], CS_STORE_COL_INT);
    assert_int_equal(cs_store_audit_cols[7], CS_STORE_COL_TEXT);
    cs_store_params_clear(&p);

    set_int(res, 0, 0, 12, 8);
    set_int(res, 0, 1, 1700000000123, 8);
    set_text(res, 0, 2, "TriggerJob");
    set_text(res, 0, 3, "unix:uid=1000(alice)");
    set_text(res, 0, 4, "backup");
    set_int(res, 0, 5, 77, 8);
    set_int(res, 0, 6, 5, 4);
    set_text(res, 0, 7, "job backup does not exist");
    back = cs_store_audit_from_row(res, 0);
    assert_int_equal(back->id, 12);
    assert_int_equal(back->at_unix_ms, 1700000000123);
    assert_string_equal(back->method, "TriggerJob");
    assert_string_equal(back->identity, "unix:uid=1000(alice)");
    assert_string_equal(back->job_name, "backup");
    assert_int_equal(back->run_id, 77);
    assert_int_equal(back->code, 5);
    assert_string_equal(back->message, "job backup does not exist");
    protobuf_c_message_free_unpacked(&back->base, NULL);
    PQclear(res);
}

/* The filter's empty strings and zeros mean "no filter", in the order of
 * cs_store_sql_audit_list's parameters. */
static void test_store_audit_filter_params(void **state)
{
    struct cs_store_audit_filter f = {.method = "CreateJob", .until_unix_ms = 9, .limit = 0};
    struct cs_store_params p = {0};

    cs_store_audit_filter_params(&f, &p);
    assert_int_equal(p.n, 8);
    assert_string_equal(p.values[0], "");
    assert_string_equal(p.values[1], "CreateJob");
    assert_string_equal(p.values[2], "");
    assert_string_equal(p.values[3], "0");
    assert_string_equal(p.values[5], "9");
    assert_string_equal(p.values[7], "100");
    cs_store_params_clear(&p);
}

/* A replica's row comes back whole, its state a smallint and runs_held an
 * integer, with self left for the server to set; a state this binary does
 * not know is kept as its number. */
static void test_store_replica_from_row(void **state)
{
    const enum col_type types[] = {COL_TEXT, COL_INT8, COL_INT2, COL_TEXT, COL_TEXT, COL_INT8,
                                   COL_INT8, COL_INT8, COL_INT8, COL_INT8, COL_BOOL, COL_INT4};
    PGresult *res = make_result(types, 12);
    Csched__V1__Replica *r;
    char yes = 1, no = 0;

    for (int row = 0; row < 2; row++) {
        set_text(res, row, 0, row == 0 ? "replica-a" : "replica-b");
        set_int(res, row, 1, 4000000000LL + row, 8);
        set_int(res, row, 2, row == 0 ? CSCHED__V1__REPLICA_STATE__REPLICA_STATE_DRAINING : 9, 2);
        set_text(res, row, 3, "10.0.0.7:50051");
        set_text(res, row, 4, "1.4.0");
        set_int(res, row, 5, 1700000000001, 8);
        set_int(res, row, 6, 1700000000002, 8);
        set_int(res, row, 7, 1700000000003, 8);
        set_int(res, row, 8, 1700000000004, 8);
        set_int(res, row, 9, row == 0 ? 1500 : -3, 8);
        assert_true(PQsetvalue(res, row, 10, row == 0 ? &yes : &no, 1));
        set_int(res, row, 11, 70000, 4);
    }
    r = cs_store_replica_from_row(res, 0);
    assert_string_equal(r->id, "replica-a");
    assert_int_equal(r->epoch, 4000000000LL);
    assert_int_equal(r->state, CSCHED__V1__REPLICA_STATE__REPLICA_STATE_DRAINING);
    assert_string_equal(r->address, "10.0.0.7:50051");
    assert_string_equal(r->version, "1.4.0");
    assert_int_equal(r->joined_unix_ms, 1700000000001);
    assert_int_equal(r->renewed_unix_ms, 1700000000002);
    assert_int_equal(r->lease_until_unix_ms, 1700000000003);
    assert_int_equal(r->attempts_until_unix_ms, 1700000000004);
    assert_int_equal(r->lease_age_ms, 1500);
    assert_true(r->lease_expired);
    assert_int_equal(r->runs_held, 70000);
    assert_false(r->self);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    r = cs_store_replica_from_row(res, 1);
    assert_string_equal(r->id, "replica-b");
    assert_int_equal(r->state, 9);
    assert_int_equal(r->lease_age_ms, -3);
    assert_false(r->lease_expired);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    PQclear(res);
}

static void test_store_migrations_embedded_in_order(void **state)
{
    assert_true(cs_store_migrations_count >= 1);
    assert_int_equal(cs_store_migrations_check(cs_store_migrations, cs_store_migrations_count), 0);
    assert_int_equal(cs_store_migrations[0].version, 1);
    assert_string_equal(cs_store_migrations[0].name, "init");
    assert_non_null(strstr(cs_store_migrations[0].sql, "CREATE TABLE jobs"));
}

static void test_store_migrations_check_refuses_repeats(void **state)
{
    const struct cs_store_migration gap[] = {{1, "a", "SELECT 1"}, {3, "c", "SELECT 1"}};
    const struct cs_store_migration dup[] = {{1, "a", "SELECT 1"}, {1, "b", "SELECT 1"}};
    const struct cs_store_migration back[] = {{2, "b", "SELECT 1"}, {1, "a", "SELECT 1"}};

    /* A number taken by a migration not merged yet leaves a gap. */
    assert_int_equal(cs_store_migrations_check(gap, 2), 0);
    assert_int_equal(cs_store_migrations_check(dup, 2), -EINVAL);
    assert_int_equal(cs_store_migrations_check(back, 2), -EINVAL);
}

/* A database that applied the migrations after a gap is at the newest
 * known version, not newer. */
static void test_store_migrate_plan_after_a_gap(void **state)
{
    const struct cs_store_migration m[] = {{1, "a", "A"}, {3, "c", "C"}};
    const int all[] = {1, 3};
    const int newer[] = {1, 3, 4};
    size_t first = 99;

    assert_int_equal(cs_store_migrate_plan(m, 2, all, 2, &first), 0);
    assert_int_equal(first, 2);
    assert_int_equal(cs_store_migrate_plan(m, 2, newer, 3, &first), -EPROTO);
}

static void test_store_migrate_plan(void **state)
{
    const struct cs_store_migration m[] = {{1, "a", "A"}, {2, "b", "B"}, {3, "c", "C"}};
    const int none[] = {0};
    const int two[] = {1, 2};
    const int all[] = {1, 2, 3};
    const int newer[] = {1, 2, 3, 4};
    const int holed[] = {1, 3};
    size_t first = 99;

    assert_int_equal(cs_store_migrate_plan(m, 3, none, 0, &first), 0);
    assert_int_equal(first, 0);
    assert_int_equal(cs_store_migrate_plan(m, 3, two, 2, &first), 0);
    assert_int_equal(first, 2);
    assert_int_equal(cs_store_migrate_plan(m, 3, all, 3, &first), 0);
    assert_int_equal(first, 3);
    assert_int_equal(cs_store_migrate_plan(m, 3, newer, 4, &first), -EPROTO);
    assert_int_equal(cs_store_migrate_plan(m, 3, holed, 2, &first), -EINVAL);
}

static void test_store_migrate_sql_is_one_transaction(void **state)
{
    const struct cs_store_migration m[] = {{1, "a", "CREATE TABLE a ()"},
                                           {2, "b", "CREATE TABLE b ()"}};
    char *sql = cs_store_migrate_sql(m, 2, 1, 1234);

    assert_int_equal(strncmp(sql, "BEGIN;", 6), 0);
    assert_null(strstr(sql, "TABLE a"));
    assert_non_null(strstr(sql, "CREATE TABLE b ()"));
    assert_non_null(strstr(sql, "VALUES (2, 'b', 1234)"));
    assert_non_null(strstr(sql, "COMMIT;"));
    free(sql);
}

static void test_store_url_host(void **state)
{
    struct cs_store_err err;
    char host[64];

    assert_int_equal(cs_store_url_host("postgresql://db.example:5433/x", host, sizeof(host), &err),
                     0);
    assert_string_equal(host, "db.example");
    assert_int_equal(cs_store_url_host("host=pg user=u", host, sizeof(host), &err), 0);
    assert_string_equal(host, "pg");
    assert_int_equal(cs_store_url_host("host=/run/pg dbname=x", host, sizeof(host), &err), 0);
    assert_string_equal(host, "");
    assert_int_equal(cs_store_url_host("postgresql://127.0.0.1/x", host, sizeof(host), &err), 0);
    assert_string_equal(host, "");
    assert_int_equal(cs_store_url_host("host=::1", host, sizeof(host), &err), 0);
    assert_string_equal(host, "");
    assert_int_equal(cs_store_url_host("host=pg hostaddr=10.1.2.3", host, sizeof(host), &err), 0);
    assert_string_equal(host, "");
    assert_int_equal(cs_store_url_host("dbname=x", host, sizeof(host), &err), 0);
    assert_string_equal(host, "");
    assert_int_equal(cs_store_url_host("host=a,b", host, sizeof(host), &err), -ENOTSUP);
    assert_int_equal(err.code, -ENOTSUP);
    assert_non_null(strstr(err.msg, "a list of host names (a,b)"));
    assert_int_equal(cs_store_url_host("host=10.0.0.1,/run/pg", host, sizeof(host), &err), 0);
    assert_string_equal(host, "");
    assert_int_equal(cs_store_url_host("nonsense=1", host, sizeof(host), &err), -EINVAL);
    assert_non_null(strstr(err.msg, "database URL does not parse"));
    assert_null(strchr(err.msg, '\n'));
    assert_int_equal(cs_store_url_host("host=a-very-long-host-name-that-does-not-fit-in-the-buffer"
                                       "-given-to-it.example",
                                       host, sizeof(host), &err),
                     -ENAMETOOLONG);
}

static void test_store_addr_lists_one_name_per_address(void **state)
{
    struct sockaddr_in v4 = {.sin_family = AF_INET};
    struct sockaddr_in6 v6 = {.sin6_family = AF_INET6};
    struct addrinfo ai6 = {.ai_family = AF_INET6, .ai_addr = (struct sockaddr *)&v6};
    struct addrinfo ai4 = {.ai_family = AF_INET, .ai_addr = (struct sockaddr *)&v4};
    char addrs[128];
    char hosts[128];
    char small[12];

    inet_pton(AF_INET, "10.1.2.3", &v4.sin_addr);
    inet_pton(AF_INET6, "::1", &v6.sin6_addr);
    ai6.ai_next = &ai4;
    assert_int_equal(cs_store_addr_lists(&ai6, "db", addrs, sizeof(addrs), hosts, sizeof(hosts)),
                     2);
    assert_string_equal(addrs, "::1,10.1.2.3");
    assert_string_equal(hosts, "db,db");
    /* What does not fit is left out whole. */
    assert_int_equal(cs_store_addr_lists(&ai6, "db", addrs, sizeof(addrs), small, sizeof(small)),
                     2);
    assert_int_equal(
        cs_store_addr_lists(&ai4, "database", addrs, sizeof(addrs), small, sizeof(small)), 1);
    assert_string_equal(small, "database");
    assert_int_equal(cs_store_addr_lists(NULL, "db", addrs, sizeof(addrs), hosts, sizeof(hosts)),
                     0);
    assert_string_equal(addrs, "");
}

static void test_store_oneline_flattens_messages(void **state)
{
    char out[32];

    cs_store_oneline("ERROR:  bad\nDETAIL:  why\n", out, sizeof(out));
    assert_string_equal(out, "ERROR:  bad DETAIL:  why");
    cs_store_oneline("a very long message that does not fit", out, 8);
    assert_string_equal(out, "a very");
}

static void test_store_err_set_keeps_one_line(void **state)
{
    struct cs_store_err err;

    assert_int_equal(cs_store_err_set(&err, -ENOTCONN, "lost: %s", "FATAL:  gone\nHINT:  why\n"),
                     -ENOTCONN);
    assert_int_equal(err.code, -ENOTCONN);
    assert_string_equal(err.msg, "lost: FATAL:  gone HINT:  why");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_row_reads_each_int_width),
        cmocka_unit_test(test_store_params_int_text),
        cmocka_unit_test(test_store_array_binary_layout),
        cmocka_unit_test(test_store_job_params_round_trip),
        cmocka_unit_test(test_store_job_from_row_refuses_garbage),
        cmocka_unit_test(test_store_run_params_map_outcome_and_env),
        cmocka_unit_test(test_store_run_filter_picks_statement),
        cmocka_unit_test(test_store_runs_from_rows_groups_attempts),
        cmocka_unit_test(test_store_event_params_round_trip),
        cmocka_unit_test(test_store_audit_params_round_trip),
        cmocka_unit_test(test_store_audit_filter_params),
        cmocka_unit_test(test_store_replica_from_row),
        cmocka_unit_test(test_store_migrations_embedded_in_order),
        cmocka_unit_test(test_store_migrations_check_refuses_repeats),
        cmocka_unit_test(test_store_migrate_plan_after_a_gap),
        cmocka_unit_test(test_store_migrate_plan),
        cmocka_unit_test(test_store_migrate_sql_is_one_transaction),
        cmocka_unit_test(test_store_url_host),
        cmocka_unit_test(test_store_addr_lists_one_name_per_address),
        cmocka_unit_test(test_store_oneline_flattens_messages),
        cmocka_unit_test(test_store_err_set_keeps_one_line),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
