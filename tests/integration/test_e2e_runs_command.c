/* End-to-end tests of what a run's command gets, through libcsched against
 * a real cschedd and real minders: an argv command without a shell, the
 * job's env with the trigger's overrides, and its working directory. One
 * server serves every test of this file. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "e2e.h"
#include "runs_fixture.h"
#include "testlib.h"

/* The run's captured stdout is exactly want. */
static void assert_stdout(struct cs_e2e *e, int64_t run_id, const char *want)
{
    size_t len;
    char *out = cs_e2e_read_logs(e, run_id, 0, CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT, &len);

    assert_string_equal(out, want);
    free(out);
}

/* An argv command runs without a shell, argv[0] found in PATH. */
static void test_e2e_runs_argv_command(void **state)
{
    struct cs_e2e *e = *state;
    char *argv[] = {"printf", "%s|%s", "a b", "$HOME"};
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__Run *run;
    char name[64];

    cs_e2e_name(name, sizeof(name), "argv");
    job.name = name;
    job.n_command = 4;
    job.command = argv;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    run = cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_stdout(e, run->id, "a b|$HOME");
    csched__v1__run__free_unpacked(run, NULL);
}

/* The job's env and the trigger's overrides both reach the command, the
 * trigger winning where both set a name. */
static void test_e2e_runs_env_and_overrides(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job__EnvEntry jx = CSCHED__V1__JOB__ENV_ENTRY__INIT;
    Csched__V1__Job__EnvEntry jy = CSCHED__V1__JOB__ENV_ENTRY__INIT;
    Csched__V1__Job__EnvEntry *jenv[] = {&jx, &jy};
    Csched__V1__TriggerJobRequest__EnvEntry ty = CSCHED__V1__TRIGGER_JOB_REQUEST__ENV_ENTRY__INIT;
    Csched__V1__TriggerJobRequest__EnvEntry tz = CSCHED__V1__TRIGGER_JOB_REQUEST__ENV_ENTRY__INIT;
    Csched__V1__TriggerJobRequest__EnvEntry *tenv[] = {&ty, &tz};
    Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__Run *run = NULL, *plain;
    struct cs_status st = {0};
    char name[64];

    cs_e2e_name(name, sizeof(name), "env");
    jx.key = "X";
    jx.value = "from job";
    jy.key = "Y";
    jy.value = "job y";
    job.name = name;
    job.shell = "echo \"$X|$Y|$Z\"";
    job.n_env = 2;
    job.env = jenv;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);

    ty.key = "Y";
    ty.value = "trigger y";
    tz.key = "Z";
    tz.value = "trigger z";
    req.job_name = name;
    req.n_env = 2;
    req.env = tenv;
    if (cs_scheduler_trigger_job(e->client, &req, &run, cs_e2e_opts(), &st) != 0)
        fail_msg("TriggerJob with env: %s \"%s\"", cs_status_code_name(st.code), st.message);
    plain = cs_e2e_wait_end(e, run->id);
    assert_run_state(plain, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    assert_stdout(e, run->id, "from job|trigger y|trigger z\n");
    csched__v1__run__free_unpacked(plain, NULL);
    csched__v1__run__free_unpacked(run, NULL);

    /* The overrides were for that run only. */
    plain = cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
    assert_stdout(e, plain->id, "from job|job y|\n");
    csched__v1__run__free_unpacked(plain, NULL);
}

/* working_dir is where the command starts; empty means the attempt's own
 * directory, STATE_DIR/attempts/<run_id>-<attempt>, or under a root
 * cschedd (whose commands run as the job user) its work/ folder, the job
 * user's. */
static void test_e2e_runs_working_dir(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    char dir[PATH_MAX], want[PATH_MAX + 64], real[PATH_MAX], name[64];
    Csched__V1__Run *run;
    size_t len;
    char *out;

    cs_e2e_tmpdir(dir);
    cs_e2e_name(name, sizeof(name), "wd");
    job.name = name;
    job.shell = "pwd -P";
    job.working_dir = dir;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, &job), NULL);
    run = cs_e2e_wait_end(e, cs_e2e_trigger(e, name));
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    out = cs_e2e_read_logs(e, run->id, 0, CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT, &len);
    assert_non_null(realpath(dir, real));
    snprintf(want, sizeof(want), "%s\n", real);
    assert_string_equal(out, want);
    free(out);
    csched__v1__run__free_unpacked(run, NULL);
    assert_int_equal(cs_test_rmtree(dir), 0);

    run = run_shell(e, "wddefault", "pwd -P");
    assert_run_state(run, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    out = cs_e2e_read_logs(e, run->id, 0, CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT, &len);
    assert_non_null(realpath(cs_testd_state_dir(e->d), real));
    snprintf(want, sizeof(want), "%s/attempts/%lld-1%s\n", real, (long long)run->id,
             geteuid() == 0 ? "/work" : "");
    assert_string_equal(out, want);
    free(out);
    csched__v1__run__free_unpacked(run, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_runs_argv_command),
        cmocka_unit_test(test_e2e_runs_env_and_overrides),
        cmocka_unit_test(test_e2e_runs_working_dir),
    };

    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
