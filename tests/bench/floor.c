/* csched-floor: the benchmark's floor. It does what cschedd does for a burst
 * of runs with nothing else around it: no server, no database, no gRPC. It
 * keeps up to LIMIT csched-minder processes alive, one per run, each started
 * with posix_spawn on its own attempt directory, reaps them with waitpid and
 * starts the next, until RUNS have ended.
 *
 * Usage: csched-floor -m MINDER -d WORKDIR -n RUNS -j LIMIT -- ARGV...
 * Prints one line: runs=N failed=N wall_ms=X runs_per_s=X peak_alive=N
 * cpu_ms=X (its own CPU plus that of every process it reaped). */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct floor_opts {
    const char *minder;
    const char *workdir;
    unsigned runs;
    unsigned limit;
    char **argv;
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static _Noreturn void usage(const char *why)
{
    fprintf(stderr,
            "csched-floor: %s\nusage: csched-floor -m MINDER -d WORKDIR -n RUNS -j LIMIT "
            "-- ARGV...\n",
            why);
    exit(100);
}

static void parse_args(int argc, char **argv, struct floor_opts *o)
{
    int opt;

    while ((opt = getopt(argc, argv, "+m:d:n:j:")) != -1) {
        switch (opt) {
        case 'm':
            o->minder = optarg;
            break;
        case 'd':
            o->workdir = optarg;
            break;
        case 'n':
            o->runs = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'j':
            o->limit = (unsigned)strtoul(optarg, NULL, 10);
            break;
        default:
            usage("unknown option");
        }
    }
    if (o->minder == NULL || o->workdir == NULL || o->runs == 0 || o->limit == 0)
        usage("-m, -d, -n and -j are required");
    if (optind >= argc)
        usage("the command goes after --");
    o->argv = argv + optind;
}

/* start_one makes run i's attempt directory and spawns its minder. */
static int start_one(const struct floor_opts *o, unsigned i, char **margv, char *dir, size_t cap)
{
    pid_t pid;
    int rc;

    snprintf(dir, cap, "%s/%u-1", o->workdir, i + 1);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return -errno;
    rc = posix_spawn(&pid, o->minder, NULL, NULL, margv, environ);
    return rc == 0 ? 0 : -rc;
}

int main(int argc, char **argv)
{
    struct floor_opts o = {0};
    unsigned started = 0, ended = 0, alive = 0, peak = 0, failed = 0;
    char dir[4096];
    struct rusage self, children;

    parse_args(argc, argv, &o);
    size_t n_cmd = 0;
    while (o.argv[n_cmd] != NULL)
        n_cmd++;
    char **margv = calloc(n_cmd + 5, sizeof(*margv));
    if (margv == NULL)
        return 111;
    margv[0] = "csched-minder";
    margv[1] = "-d";
    margv[2] = dir;
    margv[3] = "--";
    memcpy(margv + 4, o.argv, n_cmd * sizeof(*margv));

    double t0 = now_ms();
    while (ended < o.runs) {
        while (started < o.runs && alive < o.limit) {
            int rc = start_one(&o, started, margv, dir, sizeof(dir));
            if (rc != 0) {
                fprintf(stderr, "csched-floor: cannot start run %u: %s\n", started + 1,
                        strerror(-rc));
                return 111;
            }
            started++;
            if (++alive > peak)
                peak = alive;
        }
        int wstatus;
        if (waitpid(-1, &wstatus, 0) < 0) {
            if (errno == EINTR)
                continue;
            perror("csched-floor: waitpid");
            return 111;
        }
        alive--;
        ended++;
        if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0)
            failed++;
    }
    double wall = now_ms() - t0;

    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    double cpu = (double)(self.ru_utime.tv_sec + self.ru_stime.tv_sec + children.ru_utime.tv_sec +
                          children.ru_stime.tv_sec) *
                     1e3 +
                 (double)(self.ru_utime.tv_usec + self.ru_stime.tv_usec +
                          children.ru_utime.tv_usec + children.ru_stime.tv_usec) /
                     1e3;
    printf("runs=%u failed=%u wall_ms=%.1f runs_per_s=%.1f peak_alive=%u cpu_ms=%.1f\n", ended,
           failed, wall, ended / (wall / 1e3), peak, cpu);
    free(margv);
    return failed == 0 ? 0 : 1;
}
