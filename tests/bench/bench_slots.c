/* csched-bench-slots: the schedules at scale, run by hand (README.md,
 * "Schedules at scale"):
 *   csched-bench-slots [JOBS [SECONDS [LAUNCH_THREADS]]]
 * JOBS jobs (default 10000) on `@every 60s` schedules staggered over the
 * 60 seconds of a minute, running `true`, watched for SECONDS (default 75):
 * fire lateness (scheduled time -> the attempt's start, its minder spawned;
 * -> the run's start, its slot taken; -> the slot's decision) p50/p99/max
 * from ListSlots and GetRun, slots started against slots due (none missed,
 * none doubled), the loop-lag probe; beside it two floors of such a burst:
 * as many minders as fire in one second, each on its own new directory,
 * spawned back to back by this small process, with the directories made
 * in the burst, and made before it (as cschedd makes those of runs that
 * start within seconds, server/ahead_dir.h). Then the same jobs with
 * nothing due for a minute (each moved to a yearly schedule): cschedd's CPU
 * and RSS from /proc. Results on stdout, progress on stderr. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Prints v's p50, p99 and max; returns the p99 (-1 without samples). */
static int64_t print_spread(const char *what, int64_t *v, size_t n)
{
    if (n == 0) {
        printf("%-34s no samples\n", what);
        return -1;
    }
    qsort(v, n, sizeof(*v), cmp_i64);
    printf("%-34s p50 %6" PRId64 " ms  p99 %6" PRId64 " ms  max %6" PRId64 " ms  (%zu)\n", what,
           v[n / 2], v[n * 99 / 100], v[n - 1], n);
    return v[n * 99 / 100];
}

extern char **environ;

/* The floor of one second's burst: n minders running true, each on a new
 * directory under a fresh one (synced once, as a launch thread syncs a
 * group), spawned one after the other: when each spawn returned, from the
 * first mkdir on (or, dirs_ahead, from the first spawn, the directories
 * made and synced before), and then all of them reaped. */
static int64_t burst_floor(unsigned n, bool dirs_ahead)
{
    char root[64], dir[96], minder[1200];
    char *argv[] = {"csched-minder", "-d", dir, "--", "true", NULL};
    int64_t *at = calloc(n, sizeof(*at));
    pid_t *pids = calloc(n, sizeof(*pids));
    int64_t t0;
    int fd;

    snprintf(minder, sizeof(minder), "%s/csched-minder", cs_test_bin_dir());
    if (at == NULL || pids == NULL || cs_test_mkdtemp(root, sizeof(root), "cs-burst") != 0) {
        perror("bench-slots: burst floor");
        exit(1);
    }
    t0 = wall_ms();
    for (unsigned i = 0; i < n; i++) {
        snprintf(dir, sizeof(dir), "%s/%u-1", root, i + 1);
        if (mkdir(dir, 0700) != 0) {
            perror("bench-slots: burst floor: mkdir");
            exit(1);
        }
    }
    fd = open(root, O_RDONLY | O_DIRECTORY);
    if (fd < 0 || fsync(fd) != 0) {
        perror("bench-slots: burst floor: fsync");
        exit(1);
    }
    close(fd);
    if (dirs_ahead)
        t0 = wall_ms();
    for (unsigned i = 0; i < n; i++) {
        snprintf(dir, sizeof(dir), "%s/%u-1", root, i + 1);
        if (posix_spawn(&pids[i], minder, NULL, NULL, argv, environ) != 0) {
            perror("bench-slots: burst floor: posix_spawn");
            exit(1);
        }
        at[i] = wall_ms() - t0;
    }
    for (unsigned i = 0; i < n; i++)
        (void)waitpid(pids[i], NULL, 0);
    printf("burst floor: %u minders on new directories made %s, spawned back to back\n", n,
           dirs_ahead ? "before the burst" : "in the burst");
    int64_t p99 = print_spread(dirs_ahead ? "floor, dirs ahead: start -> spawned"
                                          : "floor: burst start -> spawned",
                               at, n);
    cs_test_discard_dir("burst floor", root);
    free(at);
    free(pids);
    return p99;
}

/* utime + stime of pid in clock ticks, and its RSS in kB. */
static void proc_usage(pid_t pid, long long *ticks, long long *rss_kb)
{
    char path[64], buf[4096];
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    f = fopen(path, "r");
    *ticks = 0;
    if (f != NULL && fgets(buf, sizeof(buf), f) != NULL) {
        const char *p = strrchr(buf, ')');
        unsigned long long ut = 0, st = 0;
        /* Fields 14 and 15 (utime, stime), counted after the command. */
        if (p != NULL &&
            sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) == 2)
            *ticks = (long long)(ut + st);
    }
    if (f != NULL)
        fclose(f);
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    f = fopen(path, "r");
    *rss_kb = 0;
    while (f != NULL && fgets(buf, sizeof(buf), f) != NULL)
        if (sscanf(buf, "VmRSS: %lld kB", rss_kb) == 1)
            break;
    if (f != NULL)
        fclose(f);
}

static void put_job(struct cs_client *c, unsigned i, const char *text, bool update)
{
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__Schedule sc = CSCHED__V1__SCHEDULE__INIT;
    char name[32], *argv[] = {"true"};
    struct cs_status st = {0};
    Csched__V1__Job *resp = NULL;
    int rc;

    snprintf(name, sizeof(name), "sched-%05u", i);
    job.name = name;
    job.command = argv;
    job.n_command = 1;
    sc.text = (char *)text;
    job.schedule = &sc;
    if (update) {
        Csched__V1__UpdateJobRequest req = CSCHED__V1__UPDATE_JOB_REQUEST__INIT;
        req.job = &job;
        rc = cs_scheduler_update_job(c, &req, &resp, NULL, &st);
    } else {
        Csched__V1__CreateJobRequest req = CSCHED__V1__CREATE_JOB_REQUEST__INIT;
        req.job = &job;
        rc = cs_scheduler_create_job(c, &req, &resp, NULL, &st);
    }
    if (rc != 0) {
        fprintf(stderr, "bench-slots: %s %s: %s\n", update ? "update" : "create", name, st.message);
        exit(1);
    }
    csched__v1__job__free_unpacked(resp, NULL);
}

/* Due -> attempt started over this is a late start, counted by second. */
enum { LATE_MS = 10, LATE_SECONDS_SHOWN = 8 };

struct late_second {
    int64_t second;
    unsigned late, max_ms;
};

struct tally {
    int64_t *start_late, *decide_late, *dequeue_late;
    size_t n_start, n_decide, n_dequeue;
    unsigned started, skipped, due;
    /* Indexed by due second - the window's first second. */
    struct late_second *by_second;
    size_t n_seconds;
};

static void count_late(struct tally *t, int64_t from_ms, int64_t due_ms, int64_t late_ms)
{
    size_t k = (size_t)((due_ms - from_ms) / 1000);

    if (late_ms <= LATE_MS || k >= t->n_seconds)
        return;
    t->by_second[k].second = due_ms / 1000;
    t->by_second[k].late++;
    if (late_ms > (int64_t)t->by_second[k].max_ms)
        t->by_second[k].max_ms = (unsigned)late_ms;
}

/* Which seconds of the window the late starts fall in: a tail spread over
 * every second is the machine's; one in a few seconds has a cause there. */
static void print_late_seconds(const struct tally *t, int64_t from_ms)
{
    unsigned seconds = 0, shown = 0;

    for (size_t k = 0; k < t->n_seconds; k++)
        seconds += t->by_second[k].late > 0;
    printf("%-34s %u of %zu seconds had starts over %d ms\n", "late seconds", seconds, t->n_seconds,
           LATE_MS);
    for (size_t k = 0; k < t->n_seconds && shown < LATE_SECONDS_SHOWN; k++) {
        const struct late_second *ls = &t->by_second[k];
        if (ls->late == 0)
            continue;
        time_t at = (time_t)ls->second;
        struct tm tm;
        char clock[16];
        strftime(clock, sizeof(clock), "%H:%M:%S", gmtime_r(&at, &tm));
        printf("%-34s +%2lld s (%s UTC): %u late, max %u ms\n", "",
               (long long)(ls->second - from_ms / 1000), clock, ls->late, ls->max_ms);
        shown++;
    }
}

/* When run id's first attempt started (its minder spawned); the run's own
 * start, which ListSlots' lateness counts from, is its taking a slot. */
static int64_t run_started_ms(struct cs_client *c, int64_t id)
{
    Csched__V1__GetRunRequest req = CSCHED__V1__GET_RUN_REQUEST__INIT;
    Csched__V1__Run *run = NULL;
    struct cs_status st = {0};
    int64_t started;

    req.run_id = id;
    if (cs_scheduler_get_run(c, &req, &run, NULL, &st) != 0) {
        fprintf(stderr, "bench-slots: GetRun %lld: %s\n", (long long)id, st.message);
        exit(1);
    }
    started = run->n_attempts > 0 ? run->attempts[0]->started_unix_ms : 0;
    csched__v1__run__free_unpacked(run, NULL);
    return started;
}

/* The slots of job i in [from_ms, to_ms]: what became of each. */
static void read_slots(struct cs_client *c, unsigned i, int64_t from_ms, int64_t to_ms,
                       struct tally *t)
{
    Csched__V1__ListSlotsRequest req = CSCHED__V1__LIST_SLOTS_REQUEST__INIT;
    Csched__V1__ListSlotsResponse *resp = NULL;
    struct cs_status st = {0};
    char name[32];

    snprintf(name, sizeof(name), "sched-%05u", i);
    req.job_name = name;
    req.from_unix_ms = from_ms;
    req.to_unix_ms = to_ms;
    if (cs_scheduler_list_slots(c, &req, &resp, NULL, &st) != 0) {
        fprintf(stderr, "bench-slots: ListSlots %s: %s\n", name, st.message);
        exit(1);
    }
    for (size_t k = 0; k < resp->n_slots; k++) {
        const Csched__V1__Slot *s = resp->slots[k];
        if (s->outcome == CSCHED__V1__SLOT_OUTCOME__SLOT_OUTCOME_STARTED)
            t->started++;
        else
            t->skipped++;
        t->decide_late[t->n_decide++] = s->decided_unix_ms - s->due_unix_ms;
        if (s->lateness_ms >= 0)
            t->start_late[t->n_start++] = s->lateness_ms;
        if (s->run_id > 0) {
            int64_t late = run_started_ms(c, s->run_id) - s->due_unix_ms;
            t->dequeue_late[t->n_dequeue++] = late;
            count_late(t, from_ms, s->due_unix_ms, late);
        }
    }
    csched__v1__list_slots_response__free_unpacked(resp, NULL);
}

/* The firing phase: creates the jobs, watches them for seconds, reports
 * beside the burst floors' p99 (directories made in the burst, and ahead). */
static void bench_firing(struct cs_client *c, unsigned n_jobs, int seconds, int64_t floor_p99,
                         int64_t ahead_floor_p99)
{
    struct tally t = {0};
    char text[96];
    int64_t t0 = wall_ms(), t1, from_ms, to_ms;

    for (unsigned i = 0; i < n_jobs; i++) {
        /* Staggered over the minute: job i fires at second i % 60. */
        snprintf(text, sizeof(text), "@every 60s from 2026-01-01T00:00:%02uZ", i % 60);
        put_job(c, i, text, false);
    }
    t1 = wall_ms();
    fprintf(stderr, "bench-slots: %u jobs created in %.1f s; watching for %d s\n", n_jobs,
            (t1 - t0) / 1000.0, seconds);
    /* Every slot from the last creation on is the schedule's own. */
    from_ms = (t1 / 1000 + 1) * 1000;
    cs_test_sleep_ms((int64_t)seconds * 1000);
    /* Slots due up to 5 s ago have surely been decided. */
    to_ms = (wall_ms() / 1000 - 5) * 1000;

    Csched__V1__Stats *stats = cs_test_get_stats(c);
    t.start_late = calloc((size_t)n_jobs * (size_t)(seconds / 60 + 2), sizeof(int64_t));
    t.decide_late = calloc((size_t)n_jobs * (size_t)(seconds / 60 + 2), sizeof(int64_t));
    t.dequeue_late = calloc((size_t)n_jobs * (size_t)(seconds / 60 + 2), sizeof(int64_t));
    t.n_seconds = (size_t)((to_ms - from_ms) / 1000 + 1);
    t.by_second = calloc(t.n_seconds, sizeof(*t.by_second));
    for (unsigned i = 0; i < n_jobs; i++) {
        read_slots(c, i, from_ms, to_ms, &t);
        /* Slots of job i (second i % 60 of each minute) in [from, to]. */
        for (int64_t s = from_ms / 1000; s <= to_ms / 1000; s++)
            t.due += (unsigned)(s % 60 == (int64_t)(i % 60));
    }
    printf("schedules: %u jobs, @every 60s staggered over the minute, running true\n", n_jobs);
    printf("%-34s %u due, %u started, %u skipped\n", "slots in the window", t.due, t.started,
           t.skipped);
    int64_t p99 = print_spread("lateness: due -> attempt started", t.dequeue_late, t.n_dequeue);
    if (p99 >= 0 && floor_p99 > 0)
        printf("%-34s %.2fx the burst floor's p99\n", "", (double)p99 / (double)floor_p99);
    if (p99 >= 0 && ahead_floor_p99 > 0)
        printf("%-34s %.2fx the floor's p99 with directories made ahead\n", "",
               (double)p99 / (double)ahead_floor_p99);
    print_late_seconds(&t, from_ms);
    print_spread("lateness: scheduled -> run start", t.start_late, t.n_start);
    print_spread("lateness: due -> slot decided", t.decide_late, t.n_decide);
    printf("%-34s p99 %6.1f ms  max %6.1f ms (last minute)\n", "probe",
           stats->lag_last_minute->p99_us / 1000.0, stats->lag_last_minute->max_us / 1000.0);
    csched__v1__stats__free_unpacked(stats, NULL);
    free(t.start_late);
    free(t.decide_late);
    free(t.dequeue_late);
    free(t.by_second);
}

/* The idle phase: every job moved to a yearly schedule, then cschedd's
 * CPU and RSS over a minute with nothing due. */
static void bench_idle(struct cs_client *c, pid_t pid, unsigned n_jobs)
{
    long long ticks0, ticks1, rss0, rss1;

    for (unsigned i = 0; i < n_jobs; i++)
        put_job(c, i, "0 0 1 1 *", true);
    fprintf(stderr, "bench-slots: jobs moved to a yearly schedule; idle for 60 s\n");
    cs_test_sleep_ms(5000);
    proc_usage(pid, &ticks0, &rss0);
    cs_test_sleep_ms(60000);
    proc_usage(pid, &ticks1, &rss1);
    printf("%-34s cpu %.2f %% of one core over 60 s, rss %lld kB\n", "idle (nothing due)",
           (double)(ticks1 - ticks0) * 100.0 / (double)sysconf(_SC_CLK_TCK) / 60.0, rss1);
}

int main(int argc, char **argv)
{
    unsigned n_jobs = argc > 1 ? (unsigned)atoi(argv[1]) : 10000;
    int seconds = argc > 2 ? atoi(argv[2]) : 75;
    const char *threads_args[] = {"--launch-threads", argc > 3 ? argv[3] : "2", NULL};
    struct cs_testd_options dopts = {.max_running = 512, .extra_args = threads_args};
    struct cs_testpg *pg;
    struct cs_testd *d;
    struct cs_client *c;

    /* The floor's files removed only at the end: freed inodes would slow
     * the creations after them (tests/bench/README.md, ext4 without a
     * journal). */
    cs_test_defer_discards(true);
    if (cs_testpg_start(&pg) != 0)
        return 1;
    dopts.database_url = cs_testpg_url(pg);
    if (cs_testd_start(&dopts, &d) != 0)
        return 1;
    c = cs_test_client_new(cs_testd_target(d));
    unsigned burst = n_jobs / 60 > 0 ? n_jobs / 60 : 1;
    int64_t floor_p99 = burst_floor(burst, false);
    bench_firing(c, n_jobs, seconds, floor_p99, burst_floor(burst, true));
    bench_idle(c, cs_testd_pid(d), n_jobs);
    cs_client_free(c);
    cs_testd_stop(d);
    cs_testpg_stop(pg);
    cs_test_defer_discards(false);
    return 0;
}
