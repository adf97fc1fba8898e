/* A rolling upgrade (docs/operations.md, "A rolling upgrade of replicas"):
 * two replicas of the previous migration set (CS_PREVIOUS_COMMIT, built by
 * replicas_previous_build) on one database, a run in flight on the active
 * one. The standby is upgraded first: it migrates the database while the
 * old active replica runs, and the old one goes on (the run in flight,
 * runs triggered through it and through the new standby, which forwards
 * to it, all succeed). A replica of the previous version then refuses to
 * start against the newer schema, saying so. The active one is upgraded
 * last: it drains and comes back new, and runs go on through both. Every
 * run's command ran once. */
#include <errno.h>
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

#define N_RUNS 5

static int group_setup(void **state)
{
    return cs_rruns_setup_from(state, 2, "10s", CS_PREVIOUS_BIN_DIR);
}

static int schema_version(struct cs_rruns_suite *f)
{
    char buf[32];

    assert_int_equal(cs_replicas_sql(f->rs, "SELECT max(version) FROM schema_migrations", buf,
                                     sizeof(buf), false),
                     0);
    return atoi(buf);
}

/* A replica of the previous version, started on the upgraded database,
 * exits non-zero, naming the newer schema. */
static void assert_previous_refused(struct cs_rruns_suite *f)
{
    const char *args[] = {"--replica-id", "r-previous", "--heartbeat", "200ms", NULL};
    struct cs_testd_options o = {
        .database_url = cs_testpg_url(f->rs->pg),
        .extra_args = args,
        .bin_dir = CS_PREVIOUS_BIN_DIR,
    };
    char log[4096];
    int status = cs_testd_start_refused(&o, log, sizeof(log));

    if (status <= 0 || strstr(log, "newer than this build knows") == NULL)
        fail_msg("the previous cschedd on schema %d: status %d, log:\n%s", CS_SCHEMA_NEWEST, status,
                 log);
}

static void test_replicas_upgrade_rolling(void **state)
{
    struct cs_rruns_suite *f = *state;
    struct cs_rruns_run runs[N_RUNS] = {0};
    char job[64];
    unsigned a = cs_rruns_active(f, -1, NULL), s = 1 - a, n = 0;

    fprintf(stderr, "previous: %s, schema %d; this build: schema %d\n", CS_PREVIOUS_COMMIT,
            schema_version(f), CS_SCHEMA_NEWEST);
    assert_true(schema_version(f) < CS_SCHEMA_NEWEST);
    cs_rruns_job(f->rs, a, &f->oracle, "upgrade", "sleep 2", 2, 1, job, sizeof(job));
    cs_rruns_trigger(f->rs, a, job, 1, &runs[n++].id);
    cs_rruns_wait_started(&f->oracle, runs[0].id, CS_E2E_RUN_TIMEOUT_MS);

    /* The standby first: it migrates under the old active replica. */
    assert_int_equal(cs_replicas_upgrade(f->rs, s, NULL, CS_REPLICAS_WAIT_UP), 0);
    assert_int_equal(schema_version(f), CS_SCHEMA_NEWEST);
    assert_true(cs_replicas_log_count(f->rs, s, "applying migrations") >= 1);
    assert_int_equal(cs_replicas_active(f->rs), (int)a);
    cs_rruns_trigger(f->rs, a, job, 1, &runs[n++].id);
    cs_rruns_wait_forwarding(f->rs, s);
    cs_rruns_trigger(f->rs, s, job, 1, &runs[n++].id);
    cs_rruns_assert_outcomes(f, a, runs, n, NULL);

    assert_previous_refused(f);

    /* The active one last: it drains and leaves, and comes back new.
     * Which of the two is active then is a race between the standby's
     * next heartbeat (the previous version tells no one of its leave) and
     * the restart's join; either way both are new, and both answer. */
    assert_int_equal(cs_replicas_upgrade(f->rs, a, NULL, CS_REPLICAS_WAIT_UP), 0);
    unsigned b = cs_rruns_active(f, -1, NULL);
    cs_rruns_trigger(f->rs, b, job, 1, &runs[n++].id);
    cs_rruns_wait_forwarding(f->rs, 1 - b);
    cs_rruns_trigger(f->rs, 1 - b, job, 1, &runs[n++].id);
    cs_rruns_assert_outcomes(f, b, runs, n, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replicas_upgrade_rolling),
    };

    return cmocka_run_group_tests(tests, group_setup, cs_rruns_teardown);
}
