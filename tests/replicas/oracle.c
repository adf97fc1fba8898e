/* The oracles of the replicas tests (see oracle.h): the shell prelude the
 * jobs' commands run under, and the reading of what they recorded. */
#include "oracle.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

/* One command of a run, from its start line and its end line if any. */
struct execution {
    long pid;
    uint32_t attempt;
    long long start_ns, end_ns; /* end_ns 0: no end line */
};

enum { MAX_EXECUTIONS = 256 };

/* make_locks creates DIR/<prefix>-0.lock .. -(n-1).lock, readable by all:
 * the commands open them read-only, which is all flock needs. */
static int make_locks(const struct cs_oracle *o, const char *prefix, unsigned n)
{
    char path[PATH_MAX + 64];

    for (unsigned i = 0; i < n; i++) {
        if (snprintf(path, sizeof(path), "%s/%s-%u.lock", o->dir, prefix, i) >= (int)sizeof(path))
            return -ENAMETOOLONG;
        int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0)
            return -errno;
        (void)close(fd); /* empty, nothing written */
    }
    return 0;
}

int cs_oracle_init(struct cs_oracle *o, unsigned cluster_limit)
{
    int rc = cs_test_mkdtemp_shared(o->dir, sizeof(o->dir), "cs-oracle");

    if (rc != 0)
        return rc;
    o->cluster_limit = cluster_limit;
    /* The commands, run as the job user, add their marks here. */
    if (chmod(o->dir, 0777) != 0)
        rc = -errno;
    if (rc == 0)
        rc = make_locks(o, "cluster", cluster_limit);
    if (rc != 0)
        cs_test_rmtree(o->dir);
    return rc;
}

void cs_oracle_close(struct cs_oracle *o)
{
    cs_test_discard_dir("oracle", o->dir);
}

static bool name_ok(const char *name)
{
    if (name[0] == '\0')
        return false;
    for (const char *c = name; *c != '\0'; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              strchr(".-_", *c) != NULL))
            return false;
    return true;
}

/* The prelude: one flock -n per lock set on its own fd (7 the run's, 8 the
 * job's, 9 the cluster's), tried in order until one is free. The payload
 * runs in a subshell, which inherits the fds, so the locks are held until
 * its last process is gone. */
static const char prelude_fmt[] =
    "d='%s' r=$CSCHED_RUN_ID a=$CSCHED_ATTEMPT\n"
    "t() { date +%%s%%N; }\n"
    "echo \"start $r $a $$ $(t)\" >>\"$d/run-$r.marks\"\n"
    "exec 7>>\"$d/run-$r.lock\"\n"
    "flock -n 7 || echo \"run:$r $a $$ $(t)\" >>\"$d/excess\"\n"
    "i=0; while [ $i -lt %u ]; do exec 8<\"$d/job-%s-$i.lock\"; flock -n 8 && break; "
    "i=$((i+1)); done\n"
    "[ $i -lt %u ] || { exec 8<&-; echo \"job:%s $r $a $$ $(t)\" >>\"$d/excess\"; }\n"
    "i=0; while [ $i -lt %u ]; do exec 9<\"$d/cluster-$i.lock\"; flock -n 9 && break; "
    "i=$((i+1)); done\n"
    "[ $i -lt %u ] || { exec 9<&-; echo \"cluster $r $a $$ $(t)\" >>\"$d/excess\"; }\n"
    "(\n%s\n)\n"
    "s=$?; echo \"end $r $a $$ $(t) $s\" >>\"$d/run-$r.marks\"; exit $s\n";

int cs_oracle_command(const struct cs_oracle *o, const char *job, unsigned max_running,
                      const char *payload, char *buf, size_t cap)
{
    char prefix[128];
    int rc;

    if (!name_ok(job) || max_running == 0)
        return -EINVAL;
    if (snprintf(prefix, sizeof(prefix), "job-%s", job) >= (int)sizeof(prefix))
        return -ENAMETOOLONG;
    if ((rc = make_locks(o, prefix, max_running)) != 0)
        return rc;
    int n = snprintf(buf, cap, prelude_fmt, o->dir, max_running, job, max_running, job,
                     o->cluster_limit, o->cluster_limit, payload);
    return n > 0 && (size_t)n < cap ? 0 : -ENAMETOOLONG;
}

long cs_oracle_excess(const struct cs_oracle *o, char *first, size_t cap)
{
    char path[PATH_MAX + 16], line[256];
    long n = 0;
    FILE *f;

    first[0] = '\0';
    snprintf(path, sizeof(path), "%s/excess", o->dir);
    f = fopen(path, "r");
    if (f == NULL)
        return 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        if (n++ == 0)
            snprintf(first, cap, "%s", line);
    }
    (void)fclose(f); /* read only */
    return n;
}

/* read_marks parses run_id's marks into ex (at most MAX_EXECUTIONS);
 * returns how many, or a negative errno. */
static int read_marks(const struct cs_oracle *o, int64_t run_id, struct execution *ex,
                      struct cs_oracle_run *out)
{
    char path[PATH_MAX + 32], line[256], kind[8];
    long long run, ns;
    long pid;
    unsigned attempt;
    int n = 0;
    FILE *f;

    snprintf(path, sizeof(path), "%s/run-%lld.marks", o->dir, (long long)run_id);
    f = fopen(path, "r");
    if (f == NULL)
        return errno == ENOENT ? 0 : -errno;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, "%7s %lld %u %ld %lld", kind, &run, &attempt, &pid, &ns) != 5 ||
            run != run_id)
            continue;
        if (strcmp(kind, "start") == 0 && n < MAX_EXECUTIONS) {
            ex[n++] = (struct execution){.pid = pid, .attempt = attempt, .start_ns = ns};
            out->executions++;
            if (attempt > out->last_attempt)
                out->last_attempt = attempt;
        } else if (strcmp(kind, "end") == 0) {
            out->ended++;
            for (int i = 0; i < n; i++)
                if (ex[i].pid == pid && ex[i].end_ns == 0)
                    ex[i].end_ns = ns;
        }
    }
    (void)fclose(f); /* read only */
    return n;
}

/* find_crossing looks for two ended executions whose intervals cross. */
static void find_crossing(const struct execution *ex, int n, struct cs_oracle_run *out)
{
    for (int i = 0; i < n && !out->overlap; i++) {
        for (int j = i + 1; j < n && !out->overlap; j++) {
            const struct execution *a = &ex[i], *b = &ex[j];
            if (a->end_ns == 0 || b->end_ns == 0)
                continue; /* killed: the run's lock saw it if it crossed */
            if (a->start_ns < b->end_ns && b->start_ns < a->end_ns) {
                out->overlap = true;
                snprintf(out->why, sizeof(out->why),
                         "attempt %u (pid %ld) and attempt %u (pid %ld) ran at once", a->attempt,
                         a->pid, b->attempt, b->pid);
            }
        }
    }
}

/* find_locked looks in the excess file for a command of run_id that found
 * the run's lock taken. */
static void find_locked(const struct cs_oracle *o, int64_t run_id, struct cs_oracle_run *out)
{
    char path[PATH_MAX + 16], line[256], want[40];
    size_t want_len;
    FILE *f;

    snprintf(path, sizeof(path), "%s/excess", o->dir);
    want_len = (size_t)snprintf(want, sizeof(want), "run:%lld ", (long long)run_id);
    f = fopen(path, "r");
    if (f == NULL)
        return;
    while (!out->overlap && fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, want, want_len) != 0)
            continue;
        line[strcspn(line, "\n")] = '\0';
        out->overlap = true;
        snprintf(out->why, sizeof(out->why), "a command found its run's lock taken: %.120s", line);
    }
    (void)fclose(f); /* read only */
}

int cs_oracle_run(const struct cs_oracle *o, int64_t run_id, struct cs_oracle_run *out)
{
    struct execution *ex = calloc(MAX_EXECUTIONS, sizeof(*ex));
    int n;

    if (ex == NULL)
        return -ENOMEM;
    memset(out, 0, sizeof(*out));
    n = read_marks(o, run_id, ex, out);
    if (n > 0) {
        find_locked(o, run_id, out);
        find_crossing(ex, n, out);
    }
    free(ex);
    return n < 0 ? n : 0;
}
