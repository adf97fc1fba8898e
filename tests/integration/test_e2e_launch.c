/* Several launch threads against a real cschedd (--launch-threads 4) and a
 * real PostgreSQL: the server runs that many "csched-launch" threads, and a
 * burst of triggers larger than the global limit runs every command exactly
 * once, all succeeding, with never more commands alive at once than the
 * limit. Each command counts itself in and out of a shared file under
 * flock, so the count it sees is how many commands really run. */
#include <dirent.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "e2e.h"
#include "testlib.h"

#define LAUNCH_THREADS 4
#define LIMIT 6
#define BURST 48
#define TEXT(x) #x
#define NUMBER(x) TEXT(x)

static int setup(void **state)
{
    static const char *const args[] = {"--launch-threads", NUMBER(LAUNCH_THREADS), "--max-running",
                                       NUMBER(LIMIT), NULL};
    return cs_e2e_start(state, args);
}

/* How many of pid's threads are named name (/proc/PID/task/TID/comm). */
static int count_threads(pid_t pid, const char *name)
{
    char path[PATH_MAX], comm[64];
    int n = 0;

    (void)snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *dir = opendir(path);
    assert_non_null(dir);
    for (struct dirent *de; (de = readdir(dir)) != NULL;) {
        if (de->d_name[0] == '.')
            continue;
        (void)snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", (int)pid, de->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue; /* the thread just ended */
        if (fgets(comm, sizeof(comm), f) != NULL) {
            comm[strcspn(comm, "\n")] = '\0';
            n += strcmp(comm, name) == 0;
        }
        (void)fclose(f);
    }
    (void)closedir(dir);
    return n;
}

/* The largest number in the file at path (one per line), 0 without one. */
static long max_line(const char *path)
{
    FILE *f = fopen(path, "r");
    long max = 0, v;

    if (f == NULL)
        return 0;
    while (fscanf(f, "%ld", &v) == 1)
        max = v > max ? v : max;
    (void)fclose(f);
    return max;
}

static void test_e2e_launch_threads_named(void **state)
{
    struct cs_e2e *e = *state;
    assert_int_equal(count_threads(cs_testd_pid(e->d), "csched-launch"), LAUNCH_THREADS);
}

/* BURST runs of one job, triggered together over a limit of LIMIT: each
 * command runs once and succeeds, never more than LIMIT alive at once, and
 * more than one at a time (the threads do start them side by side). */
static void test_e2e_launch_burst_within_limit(void **state)
{
    struct cs_e2e *e = *state;
    char dir[PATH_MAX], name[64], shell[4 * PATH_MAX + 512], peaks[PATH_MAX + 16];
    int64_t ids[BURST];

    cs_e2e_tmpdir(dir);
    cs_e2e_name(name, sizeof(name), "burst");
    int n = snprintf(shell, sizeof(shell),
                     "cd %s && echo x >> $CSCHED_RUN_ID && "
                     "flock lock -c 'n=$(($(cat n 2>/dev/null || echo 0) + 1)); "
                     "echo $n > n; echo $n >> peaks' && sleep 0.1 && "
                     "flock lock -c 'echo $(($(cat n) - 1)) > n'",
                     dir);
    assert_true(n > 0 && (size_t)n < sizeof(shell));
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, shell), NULL);

    for (int i = 0; i < BURST; i++)
        ids[i] = cs_e2e_trigger(e, name);
    for (int i = 0; i < BURST; i++) {
        Csched__V1__Run *run = cs_e2e_wait_end(e, ids[i]);
        if (run->state != CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED)
            fail_msg("run %lld ended %s", (long long)ids[i], cs_test_run_state_name(run->state));
        csched__v1__run__free_unpacked(run, NULL);
    }
    for (int i = 0; i < BURST; i++) {
        int runs = cs_e2e_executions(dir, ids[i]);
        if (runs != 1)
            fail_msg("run %lld's command ran %d times", (long long)ids[i], runs);
    }
    (void)snprintf(peaks, sizeof(peaks), "%s/peaks", dir);
    assert_int_equal(cs_e2e_count_lines(peaks), BURST);
    long peak = max_line(peaks);
    if (peak > LIMIT)
        fail_msg("%ld commands alive at once under --max-running %d", peak, LIMIT);
    if (peak < 2)
        fail_msg("the burst never ran two commands at once (peak %ld)", peak);
    cs_test_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_launch_threads_named),
        cmocka_unit_test(test_e2e_launch_burst_within_limit),
    };
    return cmocka_run_group_tests(tests, setup, cs_e2e_teardown);
}
