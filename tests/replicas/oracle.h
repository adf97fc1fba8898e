/* The oracles of the replicas tests: what the jobs' commands record of
 * themselves, read back by the test, so that a limit exceeded for an
 * instant or an attempt run twice is seen by the commands themselves and
 * not inferred from what the replicas report.
 *
 * cs_oracle_command wraps a payload in a shell prelude that, as the
 * command starts:
 *  - appends "start RUN ATTEMPT PID NS" to DIR/run-RUN.marks (RUN and
 *    ATTEMPT from CSCHED_RUN_ID and CSCHED_ATTEMPT, which cschedd gives
 *    every command; NS the wall clock in ns), and "end RUN ATTEMPT PID NS
 *    STATUS" when the payload ends (none when the command was killed);
 *  - takes DIR/run-RUN.lock with flock -n: another attempt of the same run
 *    still alive holds it, and the command appends "run:RUN ..." to
 *    DIR/excess;
 *  - takes one free lock of DIR/job-JOB-0.lock .. -(K-1).lock, K its job's
 *    max_running, and one of DIR/cluster-0.lock .. -(C-1).lock, C the
 *    cluster's limit; finding none free it appends "job:JOB ..." or
 *    "cluster ..." to DIR/excess.
 * Every lock is held by the command and its children until the last of
 * them dies, killed with SIGKILL included (the kernel drops a flock with
 * the last file descriptor), so the excess file names every moment a
 * limit was exceeded, however short, on whichever replica.
 *
 * DIR is a temp dir that the job user (nobody, under a root cschedd) may
 * enter and write; it needs flock(1) and date(1) from util-linux and
 * coreutils. Test's main thread; the functions return 0 or a negative errno. */
#ifndef CS_ORACLE_H
#define CS_ORACLE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cs_oracle {
    char dir[PATH_MAX];
    unsigned cluster_limit;
};

/* cs_oracle_init makes the dir and the cluster limit's lock files. */
int cs_oracle_init(struct cs_oracle *o, unsigned cluster_limit);

/* cs_oracle_close removes the dir (kept under CSCHED_TEST_KEEP). */
void cs_oracle_close(struct cs_oracle *o);

/* cs_oracle_command makes job's lock files (max_running of them) and
 * writes into buf (cap bytes) the shell text of a command of job that
 * runs payload in a subshell under the oracles; the command exits with
 * the payload's status. job: letters, digits, '.', '-', '_'. -EINVAL for
 * another name, -ENAMETOOLONG when buf is too small. */
int cs_oracle_command(const struct cs_oracle *o, const char *job, unsigned max_running,
                      const char *payload, char *buf, size_t cap);

/* cs_oracle_excess counts the lines of the excess file (0 without one)
 * and copies the first into first (cap bytes, "" without one). */
long cs_oracle_excess(const struct cs_oracle *o, char *first, size_t cap);

/* What the commands of one run recorded. */
struct cs_oracle_run {
    unsigned executions; /* start lines: commands that began */
    unsigned ended;      /* end lines: commands whose payload ended */
    uint32_t last_attempt;
    /* Two attempts of the run alive at once: their start-end intervals
     * crossed, or one found the run's lock taken. The first such found is
     * described in why. */
    bool overlap;
    char why[200];
};

/* cs_oracle_run reads run_id's marks and the excess file into *out. A run
 * with no marks has all zero. */
int cs_oracle_run(const struct cs_oracle *o, int64_t run_id, struct cs_oracle_run *out);

#endif
