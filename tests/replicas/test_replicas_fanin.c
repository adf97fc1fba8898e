/* A standby takes over a half-done fan-in (docs/dependencies.md): fan runs
 * after up1, up2 and up3, each after src, so a run of src is the cause
 * they join on. up1 ends before a kill -9 of the active replica; up2 and
 * up3 fail their first attempt before it and wait out their retry's
 * backoff through it, so they end on the standby, after its takeover. The
 * standby takes the waiting cause back from the database (the restart's
 * reload) and runs fan once for it; a second run of src, after the
 * takeover, makes one more. The killed replica, restarted, runs nothing
 * again. Every wait is on a condition in the database. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "replicas_runs.h"

/* An upstream's first attempt fails, its retry comes this long after. */
#define UP2_BACKOFF_MS 4000
#define UP3_BACKOFF_MS 5000
#define FAIL_FIRST "if [ \"$CSCHED_ATTEMPT\" = 1 ]; then exit 1; fi"

static void create(struct cs_replicas *rs, unsigned i, const char *name, const char *shell,
                   uint32_t backoff_ms, const char *const *ups, size_t n_ups)
{
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__Dependency deps[3], *ptrs[3];

    assert_true(n_ups <= 3);
    for (size_t k = 0; k < n_ups; k++) {
        csched__v1__dependency__init(&deps[k]);
        deps[k].job = (char *)ups[k];
        ptrs[k] = &deps[k];
    }
    job.name = (char *)name;
    job.shell = (char *)shell;
    job.max_attempts = backoff_ms > 0 ? 2 : 1;
    job.retry_backoff_ms = backoff_ms;
    job.after = ptrs;
    job.n_after = n_ups;
    csched__v1__job__free_unpacked(cs_e2e_create_job(cs_replicas_e2e(rs, i), &job), NULL);
}

static void wait_sql(struct cs_replicas *rs, const char *sql, const char *want)
{
    if (cs_replicas_wait_sql(rs, sql, want, CS_RRUNS_END_MS) != 0)
        fail_msg("%s: want %s", sql, want);
}

static void sql_is(struct cs_replicas *rs, const char *sql, const char *want)
{
    char got[64];

    assert_int_equal(cs_replicas_sql(rs, sql, got, sizeof(got), false), 0);
    if (strcmp(got, want) != 0)
        fail_msg("%s: %s, want %s", sql, got, want);
}

/* fan's cause of src's run src_id: its outcome and how many runs it made. */
static void cause_sql(char *buf, size_t cap, const char *what, int64_t src_id)
{
    (void)snprintf(buf, cap,
                   "SELECT %s FROM dependency_causes WHERE job_name = 'fan'"
                   " AND cause = 'run:%lld'",
                   what, (long long)src_id);
}

static void test_replicas_fanin_takeover(void **state)
{
    struct cs_rruns_suite *f = *state;
    static const char *const src[] = {"src"};
    static const char *const ups[] = {"up1", "up2", "up3"};
    unsigned a = cs_rruns_active(f, -1, NULL);
    char q[400];

    create(f->rs, a, "src", "true", 0, NULL, 0);
    create(f->rs, a, "up1", "true", 0, src, 1);
    create(f->rs, a, "up2", FAIL_FIRST, UP2_BACKOFF_MS, src, 1);
    create(f->rs, a, "up3", FAIL_FIRST, UP3_BACKOFF_MS, src, 1);
    create(f->rs, a, "fan", "true", 0, ups, 3);

    int64_t first = cs_e2e_trigger(cs_replicas_e2e(f->rs, a), "src");
    /* Half done: up1's end recorded in the waiting cause, up2's and up3's
     * first attempts ended, their retries not yet due. */
    cause_sql(q, sizeof(q), "outcome", first);
    wait_sql(f->rs, q, "1");
    (void)snprintf(q, sizeof(q),
                   "SELECT count(*) FROM dependency_upstreams WHERE job_name = 'fan'"
                   " AND cause = 'run:%lld' AND upstream_job = 'up1'",
                   (long long)first);
    wait_sql(f->rs, q, "1");
    wait_sql(f->rs,
             "SELECT count(*) FROM attempts t JOIN runs r ON r.id = t.run_id"
             " WHERE r.job_name IN ('up2', 'up3') AND t.ended_unix_ms > 0",
             "2");
    sql_is(f->rs,
           "SELECT count(*) FROM runs WHERE job_name IN ('up2', 'up3') AND ended_unix_ms > 0", "0");

    assert_int_equal(cs_replicas_kill9(f->rs, a), 0);
    unsigned b = cs_rruns_active(f, (int)a, NULL);

    /* up2 and up3 end on b, which decides the cause it took back. */
    cause_sql(q, sizeof(q), "outcome", first);
    wait_sql(f->rs, q, "2");
    wait_sql(f->rs, "SELECT count(*) FROM runs WHERE job_name = 'fan' AND ended_unix_ms > 0", "1");
    sql_is(f->rs,
           "SELECT count(*) FROM runs WHERE job_name IN ('up2', 'up3') AND state = 4"
           " AND ended_unix_ms > 0",
           "2");

    /* A second cause, wholly after the takeover. */
    int64_t second = cs_e2e_trigger(cs_replicas_e2e(f->rs, b), "src");
    cause_sql(q, sizeof(q), "outcome", second);
    wait_sql(f->rs, q, "2");

    /* The killed one back as a standby: nothing runs again. */
    assert_int_equal(cs_replicas_restart(f->rs, a, CS_REPLICAS_WAIT_UP), 0);
    wait_sql(f->rs, "SELECT count(*) FROM runs WHERE job_name = 'fan' AND ended_unix_ms > 0", "2");
    sql_is(f->rs, "SELECT count(*) FROM runs WHERE job_name = 'fan'", "2");
    (void)snprintf(q, sizeof(q),
                   "SELECT count(DISTINCT run_id) FROM dependency_causes WHERE job_name = 'fan'"
                   " AND outcome = 2 AND cause IN ('run:%lld', 'run:%lld')",
                   (long long)first, (long long)second);
    sql_is(f->rs, q, "2");
    assert_int_equal(cs_replicas_active(f->rs), (int)b);
}

static int setup(void **state)
{
    return cs_rruns_setup(state, 2, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replicas_fanin_takeover),
    };

    return cmocka_run_group_tests(tests, setup, cs_rruns_teardown);
}
