/* bench_peers: the reference lines of A and T (bench.h): what a user would
 * pick instead of csched. xargs -P runs the command the workload's number
 * of times at its limit (nothing supervised, nothing recorded);
 * apscheduler_burst.py is an in-process Python scheduler, APScheduler, with
 * a thread pool of the limit, one date trigger per run and each run a
 * subprocess.run (nothing durable). Each is spawned and reaped here: its CPU
 * is what wait4 reports of it and of every process it reaped. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

/* Debian's interpreter, which python3-apscheduler installs for: a python3
 * earlier on PATH (pyenv, a virtualenv) may not have it. */
#define PEER_PYTHON "/usr/bin/python3"

#ifndef CS_BENCH_APSCHEDULER
#error "CS_BENCH_APSCHEDULER must name apscheduler_burst.py"
#endif

const char *bench_peer_name(enum bench_peer peer)
{
    return peer == PEER_XARGS ? "xargs" : "apsched";
}

static double tv_ms(struct timeval tv)
{
    return (double)tv.tv_sec * 1e3 + (double)tv.tv_usec / 1e3;
}

/* run_peer spawns argv with stdin from in_path and stdout to out_path,
 * waits for it and fills m's wall and CPU from the spawn to the reap. */
static int run_peer(char *const *argv, const char *in_path, const char *out_path, struct measure *m)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    struct rusage ru;
    int wstatus;
    pid_t pid;

    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, in_path, O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out_path, O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    /* A session of its own at nice 0, as the floor has: with autogroup
     * scheduling the kernel shares the CPU between sessions first. */
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
    int64_t t0 = bench_now_ns();
    int rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        fprintf(stderr, "bench: posix_spawn(%s) failed: %s\n", argv[0], strerror(rc));
        return -rc;
    }
    if (wait4(pid, &wstatus, 0, &ru) != pid)
        return -1;
    m->wall_ms = (double)(bench_now_ns() - t0) / 1e6;
    m->cpu_ms = tv_ms(ru.ru_utime) + tv_ms(ru.ru_stime);
    return WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0 ? 0 : -ECHILD;
}

void bench_run_peer(const struct workload *w, enum bench_peer peer, struct measure *m)
{
    char dir[64], in_path[96], out_path[96], runs[16], limit[16];
    char *argv[32];
    size_t n = 0;

    memset(m, 0, sizeof(*m));
    CS_TEST_OK(cs_test_mkdtemp(dir, sizeof(dir), "cs-peer"));
    snprintf(in_path, sizeof(in_path), "%s/in", dir);
    snprintf(out_path, sizeof(out_path), "%s/out", dir);
    snprintf(runs, sizeof(runs), "%u", w->n_runs);
    snprintf(limit, sizeof(limit), "%u", w->limit);
    /* xargs runs the command once per line of input (-I without the
     * placeholder in the command adds no argument). */
    FILE *in = fopen(in_path, "w");
    CS_TEST_TRUE(in != NULL);
    for (unsigned i = 0; peer == PEER_XARGS && i < w->n_runs; i++)
        fputs("x\n", in);
    fclose(in);
    if (peer == PEER_XARGS) {
        char *head[] = {"xargs", "-P", limit, "-I", "{}"};
        for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
            argv[n++] = head[i];
    } else {
        char *head[] = {PEER_PYTHON, CS_BENCH_APSCHEDULER, runs, limit, "--"};
        for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
            argv[n++] = head[i];
    }
    for (size_t i = 0; w->command[i] != NULL; i++)
        argv[n++] = (char *)w->command[i];
    argv[n] = NULL;

    int rc = run_peer(argv, in_path, out_path, m);
    m->runs = w->n_runs;
    m->ok = rc == 0;
    if (peer == PEER_APSCHEDULER && rc == 0) {
        /* Its own span, past the interpreter's start and imports. */
        FILE *f = fopen(out_path, "r");
        unsigned failed = 0;
        m->ok = f != NULL &&
                fscanf(f, "runs=%u failed=%u wall_ms=%lf cpu_ms=%lf", &m->runs, &failed,
                       &m->wall_ms, &m->cpu_ms) == 4 &&
                failed == 0;
        m->failed = failed;
        if (f != NULL)
            fclose(f);
    }
    if (!m->ok)
        fprintf(stderr, "bench: %s failed on %s (is %s installed?)\n", bench_peer_name(peer),
                w->key, peer == PEER_XARGS ? "xargs" : "python3-apscheduler");
    cs_test_rmtree(dir);
}
