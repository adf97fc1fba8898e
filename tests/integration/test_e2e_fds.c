/* End-to-end test of a cschedd out of file descriptors: a real RLIMIT_NOFILE
 * of 1024 set on the running server (prlimit), exhausted by idle client
 * connections, while runs are triggered. No run may fail or leave its
 * command running unseen: each command runs exactly once, every run ends
 * SUCCEEDED once the connections are gone, and no process of the job is
 * left. Across a shutdown while they are exhausted, nothing runs unseen or
 * twice either. And commands that end while they are exhausted are not
 * taken for LOST because their notes cannot be opened then, not even when
 * the runs themselves hold the fds: more commands at once than the limit
 * leaves room for. A restart with fewer fds than minders to adopt adopts
 * them all. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "e2e.h"
#include "testlib.h"

/* The server's limit, as in the report this test comes from. */
#define SERVER_NOFILE 1024
/* Connections past the limit, waiting in the listen backlog. */
#define EXTRA_CONNECTIONS 40
#define MAX_CONNECTIONS (SERVER_NOFILE + EXTRA_CONNECTIONS)
#define RUNS 8
/* How long the runs' commands take, and how long the fds stay exhausted. */
#define COMMAND_SECONDS "3"
#define EXHAUSTED_MS 1500

static int count_fds(pid_t pid)
{
    char path[64];
    struct dirent *ent;
    int n = 0;
    DIR *d;

    (void)snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
    d = opendir(path);
    assert_non_null(d);
    while ((ent = readdir(d)) != NULL)
        n += ent->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Counts the processes whose command line mentions marker. */
static int count_processes_with(const char *marker)
{
    struct dirent *ent;
    int n = 0;
    DIR *d = opendir("/proc");

    assert_non_null(d);
    while ((ent = readdir(d)) != NULL) {
        char path[300], cmdline[4096];
        ssize_t len;
        int fd;

        if (ent->d_name[0] < '0' || ent->d_name[0] > '9')
            continue;
        (void)snprintf(path, sizeof(path), "/proc/%s/cmdline", ent->d_name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue; /* gone meanwhile */
        len = read(fd, cmdline, sizeof(cmdline) - 1);
        close(fd);
        if (len <= 0)
            continue;
        for (ssize_t i = 0; i < len; i++)
            if (cmdline[i] == '\0')
                cmdline[i] = ' ';
        cmdline[len] = '\0';
        n += strstr(cmdline, marker) != NULL;
    }
    closedir(d);
    return n;
}

/* Counts the lines of the server's log (beside its state dir) that hold
 * what; for the record of which way the launches went. */
static int count_log_lines(struct cs_e2e *e, const char *what)
{
    char path[PATH_MAX + 16], line[1024];
    const char *state_dir = cs_testd_state_dir(e->d);
    const char *slash = strrchr(state_dir, '/');
    int n = 0;
    FILE *f;

    assert_non_null(slash);
    (void)snprintf(path, sizeof(path), "%.*s/cschedd.log", (int)(slash - state_dir), state_dir);
    f = fopen(path, "r");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL)
        n += strstr(line, what) != NULL;
    fclose(f);
    return n;
}

/* A raw connection to the server's unix socket (target "unix:PATH"). */
static int connect_to(const char *target)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    assert_true(fd >= 0);
    assert_int_equal(strncmp(target, "unix:", 5), 0);
    assert_true(strlen(target + 5) < sizeof(addr.sun_path));
    memcpy(addr.sun_path, target + 5, strlen(target + 5) + 1);
    assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
    return fd;
}

/* Makes a job of the test's marker command, taking seconds, in a fresh dir
 * (into dir, name). */
static void make_job(struct cs_e2e *e, const char *seconds, char *dir, char *name, size_t name_size)
{
    char shell[2 * PATH_MAX + 128];

    cs_e2e_tmpdir(dir);
    /* The directory in the command line marks the job's processes. */
    (void)snprintf(shell, sizeof(shell), "echo ran >> %s/exec.$CSCHED_RUN_ID; sleep %s; : %s", dir,
                   seconds, dir);
    cs_e2e_name(name, name_size, "fds");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, shell), NULL);
}

/* Sets the server's RLIMIT_NOFILE to SERVER_NOFILE and opens connections
 * (into conns) until it holds all the fds it may, and a few more wait in
 * its backlog. Returns how many are open. (gRPC core's own listener would
 * not accept again after EMFILE, grpc/grpc#20418; cschedd's accept thread on
 * the unix socket retries every 100 ms.) */
static int exhaust_fds(struct cs_e2e *e, int *conns)
{
    pid_t server = cs_testd_pid(e->d);
    struct rlimit lim = {SERVER_NOFILE, SERVER_NOFILE}, mine;
    int64_t give_up;
    int n = 0;

    /* The test's own side of the connections needs more than the server's. */
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &mine), 0);
    if (mine.rlim_max != RLIM_INFINITY && mine.rlim_max < MAX_CONNECTIONS + 256)
        skip();
    mine.rlim_cur = mine.rlim_max;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &mine), 0);

    assert_true(count_fds(server) < SERVER_NOFILE - 64);
    assert_int_equal(prlimit(server, RLIMIT_NOFILE, &lim, NULL), 0);
    give_up = cs_test_now_ms() + CS_E2E_CALL_TIMEOUT_MS;
    while (count_fds(server) < SERVER_NOFILE) {
        for (int i = 0; i < 32 && n < MAX_CONNECTIONS; i++)
            conns[n++] = connect_to(cs_testd_target(e->d));
        cs_test_sleep_ms(20);
        if (cs_test_now_ms() > give_up)
            fail_msg("the server holds %d fds of %d after %d connections", count_fds(server),
                     SERVER_NOFILE, n);
    }
    while (n < MAX_CONNECTIONS)
        conns[n++] = connect_to(cs_testd_target(e->d));
    print_message("server at %d fds of %d, %d connections open\n", count_fds(server), SERVER_NOFILE,
                  n);
    return n;
}

/* Waits for run id to end, which must be SUCCEEDED; returns it (caller frees). */
static Csched__V1__Run *wait_succeeded(struct cs_e2e *e, int64_t id)
{
    Csched__V1__Run *run = cs_e2e_wait_end(e, id);
    if (run->state != CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED)
        fail_msg("run %lld ended %s: %s", (long long)id, cs_test_run_state_name(run->state),
                 run->message);
    return run;
}

/* A server stopped while launches still wait for fds gives each a last try
 * (its connections are closing by then): one that gets them is adopted by
 * the next server as usual; one that does not has its minder stopped and
 * fails, saying why. Nothing runs on unseen or twice. First of the two, as
 * it restarts the server (see exhaust_fds). */
static void test_e2e_fds_shutdown_while_exhausted(void **state)
{
    struct cs_e2e *e = *state;
    char dir[PATH_MAX], name[64], path[PATH_MAX + 32];
    static int conns[MAX_CONNECTIONS];
    int64_t ids[RUNS];
    int n;

    make_job(e, COMMAND_SECONDS, dir, name, sizeof(name));
    n = exhaust_fds(e, conns);
    for (int i = 0; i < RUNS; i++)
        ids[i] = cs_e2e_trigger(e, name);
    cs_test_sleep_ms(500);
    assert_int_equal(cs_testd_restart(e->d), 0);
    for (int i = 0; i < n; i++)
        close(conns[i]);
    for (int i = 0; i < RUNS; i++) {
        Csched__V1__Run *run = cs_e2e_wait_end(e, ids[i]);

        print_message("run %lld: %s \"%s\"\n", (long long)ids[i],
                      cs_test_run_state_name(run->state), run->message);
        if (run->state != CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED &&
            (run->state != CSCHED__V1__RUN_STATE__RUN_STATE_FAILED ||
             strstr(run->message, "out of file descriptors") == NULL))
            fail_msg("run %lld ended %s: %s", (long long)ids[i], cs_test_run_state_name(run->state),
                     run->message);
        assert_int_equal(run->n_attempts, 1);
        (void)snprintf(path, sizeof(path), "%s/exec.%lld", dir, (long long)ids[i]);
        assert_in_range(cs_e2e_count_lines(path), 0, 1);
        csched__v1__run__free_unpacked(run, NULL);
    }
    assert_int_equal(count_processes_with(dir), 0);
    cs_test_rmtree(dir);
}

static void test_e2e_fds_exhausted(void **state)
{
    struct cs_e2e *e = *state;
    char dir[PATH_MAX], name[64], path[PATH_MAX + 32];
    static int conns[MAX_CONNECTIONS];
    int64_t ids[RUNS];
    int n, waited;

    make_job(e, COMMAND_SECONDS, dir, name, sizeof(name));
    waited = count_log_lines(e, "out of file descriptors");
    n = exhaust_fds(e, conns);
    for (int i = 0; i < RUNS; i++)
        ids[i] = cs_e2e_trigger(e, name);
    cs_test_sleep_ms(EXHAUSTED_MS);
    /* Nothing has failed while the fds were exhausted. */
    for (int i = 0; i < RUNS; i++) {
        Csched__V1__Run *run = cs_e2e_get_run(e, ids[i]);

        if (run->state != CSCHED__V1__RUN_STATE__RUN_STATE_STARTING &&
            run->state != CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING)
            fail_msg("run %lld is %s while out of fds: %s", (long long)ids[i],
                     cs_test_run_state_name(run->state), run->message);
        csched__v1__run__free_unpacked(run, NULL);
    }
    for (int i = 0; i < n; i++)
        close(conns[i]);

    for (int i = 0; i < RUNS; i++) {
        Csched__V1__Run *run = wait_succeeded(e, ids[i]);
        assert_int_equal(run->n_attempts, 1);
        csched__v1__run__free_unpacked(run, NULL);
        (void)snprintf(path, sizeof(path), "%s/exec.%lld", dir, (long long)ids[i]);
        assert_int_equal(cs_e2e_count_lines(path), 1);
    }
    assert_int_equal(count_processes_with(dir), 0);
    /* The reserve covers the first launches; the others waited for fds. */
    print_message("%d of %d launches waited for file descriptors\n",
                  count_log_lines(e, "out of file descriptors") - waited, RUNS);
    cs_test_rmtree(dir);
}

/* Commands shorter than the exhaustion: the launches the reserve covers
 * end while no fd is free to open their notes with. */
static void test_e2e_fds_ends_while_exhausted(void **state)
{
    struct cs_e2e *e = *state;
    char dir[PATH_MAX], name[64];
    static int conns[MAX_CONNECTIONS];
    int64_t ids[RUNS];
    int n;

    make_job(e, "0.1", dir, name, sizeof(name));
    n = exhaust_fds(e, conns);
    for (int i = 0; i < RUNS; i++)
        ids[i] = cs_e2e_trigger(e, name);
    cs_test_sleep_ms(EXHAUSTED_MS);
    for (int i = 0; i < n; i++)
        close(conns[i]);
    for (int i = 0; i < RUNS; i++)
        csched__v1__run__free_unpacked(wait_succeeded(e, ids[i]), NULL);
    cs_test_rmtree(dir);
}

/* Lowers the server's RLIMIT_NOFILE to headroom fds above those it holds,
 * or leaves it if it is lower (a raise could need CAP_SYS_RESOURCE: these
 * tests come last); returns it. */
static int limit_fds(struct cs_e2e *e, int headroom)
{
    pid_t server = cs_testd_pid(e->d);
    struct rlimit was, lim;

    assert_int_equal(prlimit(server, RLIMIT_NOFILE, NULL, &was), 0);
    lim.rlim_cur = lim.rlim_max = (rlim_t)(count_fds(server) + headroom);
    if (lim.rlim_max > was.rlim_max)
        lim = was;
    assert_int_equal(prlimit(server, RLIMIT_NOFILE, &lim, NULL), 0);
    return (int)lim.rlim_cur;
}

/* Waits for each run of ids to end SUCCEEDED in one attempt, its command
 * run once (the lines of dir/exec.ID). */
static void wait_all_succeeded_once(struct cs_e2e *e, const int64_t *ids, int n, const char *dir)
{
    char path[PATH_MAX + 32];

    for (int i = 0; i < n; i++) {
        Csched__V1__Run *run = wait_succeeded(e, ids[i]);
        assert_int_equal(run->n_attempts, 1);
        csched__v1__run__free_unpacked(run, NULL);
        (void)snprintf(path, sizeof(path), "%s/exec.%lld", dir, (long long)ids[i]);
        assert_int_equal(cs_e2e_count_lines(path), 1);
    }
}

/* Waits for each run of ids to be RUNNING. */
static void wait_all_running(struct cs_e2e *e, const int64_t *ids, int n)
{
    for (int i = 0; i < n; i++) {
        Csched__V1__Run *run = cs_e2e_wait_state(
            e, ids[i], CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, CS_E2E_CALL_TIMEOUT_MS);
        assert_int_equal(run->state, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING);
        csched__v1__run__free_unpacked(run, NULL);
    }
}

/* Commands that end while connections hold every fd the running attempts
 * leave, and more wait in the backlog to take any fd freed: each end frees
 * its minder's pidfd, which its note's read takes at once, so the runs end
 * SUCCEEDED while the connections stay open. */
#define HELD_RUNS 8
#define HELD_BACKLOG 16
static void test_e2e_fds_ends_while_held(void **state)
{
    struct cs_e2e *e = *state;
    char dir[PATH_MAX], name[64];
    static int conns[64 + HELD_BACKLOG];
    int64_t ids[HELD_RUNS];
    pid_t server = cs_testd_pid(e->d);
    int n = 0, limit;
    int64_t give_up;

    make_job(e, "1", dir, name, sizeof(name));
    limit = limit_fds(e, HELD_RUNS + 16);
    for (int i = 0; i < HELD_RUNS; i++)
        ids[i] = cs_e2e_trigger(e, name);
    wait_all_running(e, ids, HELD_RUNS);
    /* One at a time, so that none waits in the backlog for a freed fd. */
    while (count_fds(server) < limit && n < 64) {
        conns[n++] = connect_to(cs_testd_target(e->d));
        cs_test_sleep_ms(20);
    }
    assert_int_equal(count_fds(server), limit);
    for (int i = 0; i < HELD_BACKLOG; i++)
        conns[n++] = connect_to(cs_testd_target(e->d));
    print_message("server at %d fds of %d with %d runs and %d connections\n", count_fds(server),
                  limit, HELD_RUNS, n);
    wait_all_succeeded_once(e, ids, HELD_RUNS, dir);
    for (int i = 0; i < n; i++)
        close(conns[i]);
    /* The server closes its ends as it sees ours go. */
    give_up = cs_test_now_ms() + CS_E2E_CALL_TIMEOUT_MS;
    while (count_fds(server) > limit - 16 && cs_test_now_ms() < give_up)
        cs_test_sleep_ms(20);
    assert_true(count_fds(server) <= limit - 16);
    cs_test_rmtree(dir);
}

/* More runs at once than the server has fds for (each running attempt
 * holds its minder's pidfd): the launches wait for fds, the runs that end
 * free them, and every run ends SUCCEEDED, its command run once. */
#define MANY_RUNS 120
static void test_e2e_fds_runs_hold_them(void **state)
{
    struct cs_e2e *e = *state;
    char dir[PATH_MAX], name[64];
    static int64_t ids[MANY_RUNS];
    int limit, free_before;

    make_job(e, "0.3", dir, name, sizeof(name));
    limit = limit_fds(e, 24);
    free_before = limit - count_fds(cs_testd_pid(e->d));
    assert_true(free_before >= 8);
    for (int i = 0; i < MANY_RUNS; i++)
        ids[i] = cs_e2e_trigger(e, name);
    wait_all_succeeded_once(e, ids, MANY_RUNS, dir);
    print_message("%d runs at a limit of %d fds (%d free before): all succeeded\n", MANY_RUNS,
                  limit, free_before);
    cs_test_rmtree(dir);
}

/* A server killed while runs are going, restarted with fewer fds than
 * there are minders to adopt: a minder it cannot look at yet (no fd for its
 * note, pid file, pidfd or /proc entry) is looked at again, never taken for
 * gone (which would stop its command): every run ends SUCCEEDED. */
#define ADOPT_RUNS CS_E2E_MAX_RUNNING
#define ADOPT_NOFILE 34
static void test_e2e_fds_adopted_short(void **state)
{
    struct cs_e2e *e = *state;
    char dir[PATH_MAX], name[64];
    int64_t ids[ADOPT_RUNS];
    struct rlimit mine, low;

    make_job(e, "4", dir, name, sizeof(name));
    for (int i = 0; i < ADOPT_RUNS; i++)
        ids[i] = cs_e2e_trigger(e, name);
    wait_all_running(e, ids, ADOPT_RUNS);
    assert_int_equal(cs_testd_kill(e->d), 0);
    /* The new server inherits the soft limit; this process takes its back. */
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &mine), 0);
    low = mine;
    low.rlim_cur = ADOPT_NOFILE;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    int rc = cs_testd_restart(e->d);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &mine), 0);
    assert_int_equal(rc, 0);
    print_message("restarted at %d fds of %d with %d minders to adopt\n",
                  count_fds(cs_testd_pid(e->d)), ADOPT_NOFILE, ADOPT_RUNS);
    wait_all_succeeded_once(e, ids, ADOPT_RUNS, dir);
    print_message("%d of them waited for fds to be looked at\n",
                  count_log_lines(e, "to tell whether its minder still runs"));
    assert_int_equal(count_processes_with(dir), 0);
    cs_test_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_fds_shutdown_while_exhausted),
        cmocka_unit_test(test_e2e_fds_exhausted),
        cmocka_unit_test(test_e2e_fds_ends_while_exhausted),
        cmocka_unit_test(test_e2e_fds_ends_while_held),
        cmocka_unit_test(test_e2e_fds_runs_hold_them),
        cmocka_unit_test(test_e2e_fds_adopted_short),
    };

    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
