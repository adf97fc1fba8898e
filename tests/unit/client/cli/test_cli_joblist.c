/* Golden outputs of csched job list at a fixed clock (2026-12-06 12:00:00
 * UTC): the default table, -o wide, --absolute and each --sort-by, as a
 * person reads them: aligned, no line past 100 columns. Also the relative
 * times they are made of. No server: the rows are what the calls would
 * have read. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "cli.h"
#include "cli_fixture.h"

#define NOW_MS 1796558400000LL
#define MIN_MS 60000LL
#define HOUR_MS (60 * MIN_MS)

static void test_cli_format_ago(void **state)
{
    static const struct {
        int64_t at_ms;
        const char *want;
    } cases[] = {
        {NOW_MS + 4 * MIN_MS + 10000, "in 4m"},
        {NOW_MS - 12 * MIN_MS, "12m ago"},
        {NOW_MS - 45000, "45s ago"},
        {NOW_MS + 500, "in 0s"},
        {NOW_MS - 999, "0s ago"},
        {NOW_MS - 3 * HOUR_MS - 59 * MIN_MS, "3h ago"},
        {NOW_MS + 50 * HOUR_MS, "in 2d"},
        {0, "-"},
    };
    char buf[32];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cs_cli_format_ago(cases[i].at_ms, NOW_MS, buf, sizeof(buf));
        assert_string_equal(buf, cases[i].want);
    }
}

/* The jobs of the golden tables, and their last runs. */
struct fixture {
    Csched__V1__Job *jobs[5];
    Csched__V1__Run runs[3];
    struct cs_cli_job_row rows[5];
};

static Csched__V1__Job *job(const char *name, const char *schedule, const char *zone,
                            int64_t next_ms)
{
    Csched__V1__Job *j = cs_cli_job_new();

    cs_cli_set_string(&j->name, name);
    if (schedule != NULL) {
        assert_int_equal(cs_cli_schedule_set(j, "schedule", schedule, NULL), CS_CLI_FLAG_TAKEN);
        if (zone != NULL)
            cs_cli_set_string(&j->schedule->time_zone, zone);
        j->next_fires = cs_cli_xcalloc(1, sizeof(*j->next_fires));
        j->next_fires[0] = cs_cli_xcalloc(1, sizeof(*j->next_fires[0]));
        csched__v1__fire_time__init(j->next_fires[0]);
        j->next_fires[0]->at_unix_ms = next_ms;
        j->n_next_fires = 1;
    }
    return j;
}

static void run_ended(Csched__V1__Run *run, Csched__V1__RunState state, int64_t ended_ms)
{
    csched__v1__run__init(run);
    run->state = state;
    run->ended_unix_ms = ended_ms;
}

static void fixture_init(struct fixture *f)
{
    f->jobs[0] = job("backup", "30 2 * * *", "Europe/Berlin", NOW_MS + 14 * HOUR_MS + 30 * MIN_MS);
    cs_cli_job_add_command(f->jobs[0], "/usr/local/bin/backup");
    cs_cli_job_add_command(f->jobs[0], "--all");
    f->jobs[0]->max_running = 1;
    f->jobs[0]->timeout_seconds = 3600;
    f->jobs[1] = job("etl-hourly", "@every 1h", NULL, NOW_MS + 4 * MIN_MS);
    cs_cli_set_string(&f->jobs[1]->shell, "python3 -m etl.load --source s3://bucket/raw/ "
                                          "--target postgres://warehouse/etl --batch 5000");
    f->jobs[1]->max_attempts = 3;
    f->jobs[2] = job("weekday-report", "0 9 * * 1-5", NULL, NOW_MS + 2 * 24 * HOUR_MS);
    f->jobs[2]->paused = true;
    cs_cli_job_add_command(f->jobs[2], "report");
    f->jobs[3] = job("adhoc-cleanup", NULL, NULL, 0);
    cs_cli_set_string(&f->jobs[3]->shell, "rm -rf /var/tmp/scratch/*");
    f->jobs[4] = job("compaction", "0 3 * * *", NULL, NOW_MS + 15 * HOUR_MS);
    cs_cli_job_add_command(f->jobs[4], "compact");
    run_ended(&f->runs[0], CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED, NOW_MS - 9 * HOUR_MS);
    run_ended(&f->runs[1], CSCHED__V1__RUN_STATE__RUN_STATE_FAILED, NOW_MS - 56 * MIN_MS);
    run_ended(&f->runs[2], CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT, NOW_MS - 3 * 24 * HOUR_MS);
    f->rows[0] = (struct cs_cli_job_row){f->jobs[0], &f->runs[0], 0};
    f->rows[1] = (struct cs_cli_job_row){f->jobs[1], &f->runs[1], 1};
    f->rows[2] = (struct cs_cli_job_row){f->jobs[2], &f->runs[2], 0};
    f->rows[3] = (struct cs_cli_job_row){f->jobs[3], NULL, 0};
    f->rows[4] = (struct cs_cli_job_row){f->jobs[4], &f->runs[0], 2};
}

static void fixture_free(struct fixture *f)
{
    for (size_t i = 0; i < 5; i++)
        csched__v1__job__free_unpacked(f->jobs[i], NULL);
}

/* The table of the fixture's rows as v shows it, compared with want; no
 * line of it is wider than 100 columns. */
static void expect_table(struct cs_cli_job_view v, const char *want)
{
    struct cs_cli_table t;
    struct capture c;
    struct fixture f;
    const char *line;

    fixture_init(&f);
    v.now_ms = NOW_MS;
    capture_open(&c);
    cs_cli_job_table(&t, f.rows, 5, &v);
    cs_cli_table_print(&t, c.f, "");
    assert_string_equal(captured(&c), want);
    for (line = captured(&c); *line != '\0'; line = strchr(line, '\n') + 1)
        assert_true(strchr(line, '\n') - line <= 100);
    capture_close(&c);
    fixture_free(&f);
}

static void test_cli_job_list_default(void **state)
{
    expect_table((struct cs_cli_job_view){0},
                 "NAME            SCHEDULE     PAUSED  NEXT    LAST              RUNNING\n"
                 "adhoc-cleanup   -            no      -       -                 0\n"
                 "backup          30 2 * * *   no      in 14h  SUCCEEDED 9h ago  0\n"
                 "compaction      0 3 * * *    no      in 15h  SUCCEEDED 9h ago  2\n"
                 "etl-hourly      @every 1h    no      in 4m   FAILED 56m ago    1\n"
                 "weekday-report  0 9 * * 1-5  yes     -       TIMED_OUT 3d ago  0\n");
}

static void test_cli_job_list_wide(void **state)
{
    expect_table(
        (struct cs_cli_job_view){.wide = true},
        "NAME            SCHEDULE     PAUSED  NEXT    LAST              RUNNING  LIMITS        COMMAND\n"
        "adhoc-cleanup   -            no      -       -                 0        -             sh -c rm -r...\n"
        "backup          30 2 * * *   no      in 14h  SUCCEEDED 9h ago  0        1h00m, max 1  /usr/local/...\n"
        "compaction      0 3 * * *    no      in 15h  SUCCEEDED 9h ago  2        -             compact\n"
        "etl-hourly      @every 1h    no      in 4m   FAILED 56m ago    1        3x            sh -c pytho...\n"
        "weekday-report  0 9 * * 1-5  yes     -       TIMED_OUT 3d ago  0        -             report\n");
}

static void test_cli_job_list_absolute(void **state)
{
    setenv("TZ", "UTC", 1);
    tzset();
    expect_table(
        (struct cs_cli_job_view){.absolute = true},
        "NAME            SCHEDULE     PAUSED  NEXT              LAST                        RUNNING\n"
        "adhoc-cleanup   -            no      -                 -                           0\n"
        "backup          30 2 * * *   no      2026-12-07 02:30  SUCCEEDED 2026-12-06 03:00  0\n"
        "compaction      0 3 * * *    no      2026-12-07 03:00  SUCCEEDED 2026-12-06 03:00  2\n"
        "etl-hourly      @every 1h    no      2026-12-06 12:04  FAILED 2026-12-06 11:04     1\n"
        "weekday-report  0 9 * * 1-5  yes     -                 TIMED_OUT 2026-12-03 12:00  0\n");
    unsetenv("TZ");
    tzset();
}

/* --sort-by: the soonest next fire, the latest end, the most running
 * first; a job without one last, ties by name. */
static void test_cli_job_list_sort(void **state)
{
    enum cs_cli_job_sort key;

    expect_table((struct cs_cli_job_view){.sort = CS_CLI_JOB_SORT_NEXT},
                 "NAME            SCHEDULE     PAUSED  NEXT    LAST              RUNNING\n"
                 "etl-hourly      @every 1h    no      in 4m   FAILED 56m ago    1\n"
                 "backup          30 2 * * *   no      in 14h  SUCCEEDED 9h ago  0\n"
                 "compaction      0 3 * * *    no      in 15h  SUCCEEDED 9h ago  2\n"
                 "adhoc-cleanup   -            no      -       -                 0\n"
                 "weekday-report  0 9 * * 1-5  yes     -       TIMED_OUT 3d ago  0\n");
    expect_table((struct cs_cli_job_view){.sort = CS_CLI_JOB_SORT_LAST},
                 "NAME            SCHEDULE     PAUSED  NEXT    LAST              RUNNING\n"
                 "etl-hourly      @every 1h    no      in 4m   FAILED 56m ago    1\n"
                 "backup          30 2 * * *   no      in 14h  SUCCEEDED 9h ago  0\n"
                 "compaction      0 3 * * *    no      in 15h  SUCCEEDED 9h ago  2\n"
                 "weekday-report  0 9 * * 1-5  yes     -       TIMED_OUT 3d ago  0\n"
                 "adhoc-cleanup   -            no      -       -                 0\n");
    expect_table((struct cs_cli_job_view){.sort = CS_CLI_JOB_SORT_RUNNING},
                 "NAME            SCHEDULE     PAUSED  NEXT    LAST              RUNNING\n"
                 "compaction      0 3 * * *    no      in 15h  SUCCEEDED 9h ago  2\n"
                 "etl-hourly      @every 1h    no      in 4m   FAILED 56m ago    1\n"
                 "adhoc-cleanup   -            no      -       -                 0\n"
                 "backup          30 2 * * *   no      in 14h  SUCCEEDED 9h ago  0\n"
                 "weekday-report  0 9 * * 1-5  yes     -       TIMED_OUT 3d ago  0\n");
    assert_int_equal(cs_cli_parse_job_sort("running", &key), 0);
    assert_int_equal(key, CS_CLI_JOB_SORT_RUNNING);
    assert_int_equal(cs_cli_parse_job_sort("age", &key), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_format_ago),    cmocka_unit_test(test_cli_job_list_default),
        cmocka_unit_test(test_cli_job_list_wide), cmocka_unit_test(test_cli_job_list_absolute),
        cmocka_unit_test(test_cli_job_list_sort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
