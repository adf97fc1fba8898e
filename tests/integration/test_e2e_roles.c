/* End-to-end tests of roles on the unix socket: every method with every role
 * and with none, called by real peers of other uids. Each peer is this test
 * binary run again ("peer" mode) in a child that has dropped to an unused
 * uid with chosen groups (setgroups, setgid, setuid) before exec, so the
 * server reads its credentials from the kernel. The server gets numeric
 * gids for --admin-group, --operator-group and --viewer-group, so no group
 * needs to exist. Also: health is open to anyone, a peer without a role
 * changes nothing, and many short connections of two uids interleaved each
 * get their own role (an fd number reused by the server must never carry
 * one connection's role to another's call); and a trigger's env, which an
 * operator may set only for the variables the job's trigger_env names.
 * Needs root to change uid. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "e2e.h"
#include "testlib.h"

#define GID_ADMIN 61101
#define GID_OPERATOR 61102
#define GID_VIEWER 61103
#define BASE_JOB "roles-base"
/* Connections each peer makes in the fd-reuse test. */
#define REUSE_CONNECTIONS 25

enum role { NONE, VIEWER, OPERATOR, ADMIN };

/* A local user: uid, primary gid, supplementary groups. */
struct peer {
    const char *name;
    enum role role;
    uid_t uid;
    gid_t gid;
    gid_t groups[2];
    size_t n_groups;
};

static const struct peer peers[] = {
    {"admin", ADMIN, 61001, 61001, {GID_ADMIN}, 1},
    {"operator", OPERATOR, 61002, 61002, {5, GID_OPERATOR}, 2},
    {"viewer", VIEWER, 61003, GID_VIEWER, {0}, 0}, /* the role by its primary group */
    {"none", NONE, 61004, 61004, {61100}, 1},
};

static const char *const role_names[] = {"none", "viewer", "operator", "admin"};

/* Every method of the Scheduler service and the role it needs. */
static const struct {
    const char *method;
    enum role needs;
} methods[] = {
    {"GetJob", VIEWER},          {"ListJobs", VIEWER},      {"GetRun", VIEWER},
    {"ListRuns", VIEWER},        {"Watch", VIEWER},         {"ReadLogs", VIEWER},
    {"GetStats", VIEWER},        {"TriggerJob", OPERATOR},  {"CancelRun", OPERATOR},
    {"CreateJob", ADMIN},        {"UpdateJob", ADMIN},      {"DeleteJob", ADMIN},
    {"ListAudit", ADMIN},        {"ListSlots", VIEWER},     {"PauseJob", OPERATOR},
    {"ResumeJob", OPERATOR},     {"BackfillJob", OPERATOR}, {"ListReplicas", VIEWER},
    {"SetClusterLimits", ADMIN},
};

static int64_t base_run_id;

/* --- peer mode: one call, its status printed as "CODE MESSAGE" --------- */

static int call_stream_first(struct cs_client *c, const char *method, int64_t run_id,
                             struct cs_status *st)
{
    const struct cs_call_opts opts = {.timeout_ms = 5000};
    struct cs_stream *stream = NULL;
    int rc;
    if (strcmp(method, "Watch") == 0) {
        Csched__V1__WatchRequest req = CSCHED__V1__WATCH_REQUEST__INIT;
        Csched__V1__WatchResponse *msg = NULL;
        rc = cs_scheduler_watch(c, &req, &stream, &opts, st);
        if (rc == 0 && (rc = cs_scheduler_watch_next(stream, &msg, st)) == 1) {
            csched__v1__watch_response__free_unpacked(msg, NULL);
            st->code = 0;
        }
    } else {
        Csched__V1__ReadLogsRequest req = CSCHED__V1__READ_LOGS_REQUEST__INIT;
        Csched__V1__LogChunk *msg = NULL;
        req.run_id = run_id;
        req.attempt = 1;
        req.stream = CSCHED__V1__LOG_STREAM__LOG_STREAM_STDOUT;
        rc = cs_scheduler_read_logs(c, &req, &stream, &opts, st);
        while (rc == 0 && cs_scheduler_read_logs_next(stream, &msg, st) == 1)
            csched__v1__log_chunk__free_unpacked(msg, NULL);
    }
    cs_stream_free(stream);
    return rc < 0 ? rc : st->code;
}

/* Calls method with arg (a job name or a run id): the gRPC status code. */
static int call_method(struct cs_client *c, const char *method, const char *arg,
                       struct cs_status *st)
{
    const struct cs_call_opts opts = {.timeout_ms = 5000};
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    ProtobufCMessage *reply = NULL;
    int64_t id = strtoll(arg, NULL, 10);
    int rc;
    job.name = (char *)arg;
    job.shell = "true";
    memset(st, 0, sizeof(*st));
    if (strcmp(method, "GetJob") == 0) {
        Csched__V1__GetJobRequest req = CSCHED__V1__GET_JOB_REQUEST__INIT;
        req.name = (char *)arg;
        rc = cs_scheduler_get_job(c, &req, (Csched__V1__Job **)&reply, &opts, st);
    } else if (strcmp(method, "ListJobs") == 0) {
        Csched__V1__ListJobsRequest req = CSCHED__V1__LIST_JOBS_REQUEST__INIT;
        rc = cs_scheduler_list_jobs(c, &req, (Csched__V1__ListJobsResponse **)&reply, &opts, st);
    } else if (strcmp(method, "GetRun") == 0) {
        Csched__V1__GetRunRequest req = CSCHED__V1__GET_RUN_REQUEST__INIT;
        req.run_id = id;
        rc = cs_scheduler_get_run(c, &req, (Csched__V1__Run **)&reply, &opts, st);
    } else if (strcmp(method, "ListRuns") == 0) {
        Csched__V1__ListRunsRequest req = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
        rc = cs_scheduler_list_runs(c, &req, (Csched__V1__ListRunsResponse **)&reply, &opts, st);
    } else if (strcmp(method, "Watch") == 0 || strcmp(method, "ReadLogs") == 0) {
        return call_stream_first(c, method, id, st);
    } else if (strcmp(method, "GetStats") == 0) {
        Csched__V1__GetStatsRequest req = CSCHED__V1__GET_STATS_REQUEST__INIT;
        rc = cs_scheduler_get_stats(c, &req, (Csched__V1__Stats **)&reply, &opts, st);
    } else if (strcmp(method, "TriggerJob") == 0) {
        /* "JOB" or "JOB:NAME=VALUE", a variable of the run's env. */
        Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
        Csched__V1__TriggerJobRequest__EnvEntry var =
            CSCHED__V1__TRIGGER_JOB_REQUEST__ENV_ENTRY__INIT;
        Csched__V1__TriggerJobRequest__EnvEntry *vars[] = {&var};
        char name[64], *colon = strchr(arg, ':'), *eq = colon != NULL ? strchr(colon, '=') : NULL;
        (void)snprintf(name, sizeof(name), "%.*s", colon != NULL ? (int)(colon - arg) : 63, arg);
        req.job_name = name;
        if (eq != NULL) {
            *eq = '\0';
            var.key = colon + 1;
            var.value = eq + 1;
            req.env = vars;
            req.n_env = 1;
        }
        rc = cs_scheduler_trigger_job(c, &req, (Csched__V1__Run **)&reply, &opts, st);
    } else if (strcmp(method, "CancelRun") == 0) {
        Csched__V1__CancelRunRequest req = CSCHED__V1__CANCEL_RUN_REQUEST__INIT;
        req.run_id = id;
        rc = cs_scheduler_cancel_run(c, &req, (Csched__V1__Run **)&reply, &opts, st);
    } else if (strcmp(method, "CreateJob") == 0) {
        Csched__V1__CreateJobRequest req = CSCHED__V1__CREATE_JOB_REQUEST__INIT;
        req.job = &job;
        rc = cs_scheduler_create_job(c, &req, (Csched__V1__Job **)&reply, &opts, st);
    } else if (strcmp(method, "UpdateJob") == 0) {
        Csched__V1__UpdateJobRequest req = CSCHED__V1__UPDATE_JOB_REQUEST__INIT;
        req.job = &job;
        rc = cs_scheduler_update_job(c, &req, (Csched__V1__Job **)&reply, &opts, st);
    } else if (strcmp(method, "DeleteJob") == 0) {
        Csched__V1__DeleteJobRequest req = CSCHED__V1__DELETE_JOB_REQUEST__INIT;
        req.name = (char *)arg;
        rc = cs_scheduler_delete_job(c, &req, (Csched__V1__DeleteJobResponse **)&reply, &opts, st);
    } else if (strcmp(method, "ListSlots") == 0) {
        Csched__V1__ListSlotsRequest req = CSCHED__V1__LIST_SLOTS_REQUEST__INIT;
        req.job_name = (char *)arg;
        rc = cs_scheduler_list_slots(c, &req, (Csched__V1__ListSlotsResponse **)&reply, &opts, st);
    } else if (strcmp(method, "PauseJob") == 0) {
        Csched__V1__PauseJobRequest req = CSCHED__V1__PAUSE_JOB_REQUEST__INIT;
        req.name = (char *)arg;
        rc = cs_scheduler_pause_job(c, &req, (Csched__V1__Job **)&reply, &opts, st);
    } else if (strcmp(method, "ResumeJob") == 0) {
        Csched__V1__ResumeJobRequest req = CSCHED__V1__RESUME_JOB_REQUEST__INIT;
        req.name = (char *)arg;
        rc = cs_scheduler_resume_job(c, &req, (Csched__V1__Job **)&reply, &opts, st);
    } else if (strcmp(method, "BackfillJob") == 0) {
        Csched__V1__BackfillJobRequest req = CSCHED__V1__BACKFILL_JOB_REQUEST__INIT;
        req.name = (char *)arg;
        req.from_unix_ms = 1;
        req.to_unix_ms = 2;
        rc = cs_scheduler_backfill_job(c, &req, (Csched__V1__BackfillJobResponse **)&reply, &opts,
                                       st);
    } else if (strcmp(method, "ListReplicas") == 0) {
        rc = cs_scheduler_list_replicas(c, NULL, (Csched__V1__ListReplicasResponse **)&reply, &opts,
                                        st);
    } else if (strcmp(method, "SetClusterLimits") == 0) {
        Csched__V1__SetClusterLimitsRequest req = CSCHED__V1__SET_CLUSTER_LIMITS_REQUEST__INIT;
        rc = cs_scheduler_set_cluster_limits(c, &req, (Csched__V1__ClusterLimits **)&reply, &opts,
                                             st);
    } else if (strcmp(method, "ListAudit") == 0) {
        Csched__V1__ListAuditRequest req = CSCHED__V1__LIST_AUDIT_REQUEST__INIT;
        rc = cs_scheduler_list_audit(c, &req, (Csched__V1__ListAuditResponse **)&reply, &opts, st);
    } else {
        Grpc__Health__V1__HealthCheckRequest req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
        rc = cs_health_check(c, &req, (Grpc__Health__V1__HealthCheckResponse **)&reply, &opts, st);
    }
    if (reply != NULL)
        protobuf_c_message_free_unpacked(reply, NULL);
    return rc;
}

/* peer TARGET METHOD ARG [N]: makes the call N times (default 1), each on a
 * fresh connection, and prints one "CODE MESSAGE" line per call. */
static int peer_main(int argc, char **argv)
{
    int n = argc > 5 ? atoi(argv[5]) : 1;
    for (int i = 0; i < n; i++) {
        struct cs_client *c = NULL;
        struct cs_status st;
        if (cs_client_new(argv[2], &c) != 0)
            return 1;
        int rc = call_method(c, argv[3], argv[4], &st);
        printf("%d %s\n", rc, st.message);
        cs_client_free(c);
    }
    return 0;
}

/* --- the test's side ----------------------------------------------------- */

struct child {
    pid_t pid;
    FILE *out;
};

/* Starts this binary in peer mode as p, its stdout readable from c->out. */
static void spawn_peer(struct cs_e2e *e, const struct peer *p, const char *method, const char *arg,
                       int n, struct child *c)
{
    char count[16];
    int fds[2];
    (void)snprintf(count, sizeof(count), "%d", n);
    const char *argv[] = {
        "test_e2e_roles", "peer", cs_testd_target(e->d), method, arg, count, NULL};
    /* Run from an fd opened here, as root: the peer's uid may have no way
     * to this binary's path (a build tree under /root). */
    int self = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    assert_true(self >= 0);
    assert_int_equal(pipe(fds), 0);
    c->pid = fork();
    assert_true(c->pid >= 0);
    if (c->pid == 0) {
        /* Groups first, then the gid, then the uid: after setuid the others
         * can no longer be changed. Each is checked, or the peer would call
         * as root. */
        if (dup2(fds[1], STDOUT_FILENO) < 0 || setgroups(p->n_groups, p->groups) != 0 ||
            setgid(p->gid) != 0 || setuid(p->uid) != 0 || setuid(0) == 0)
            _exit(111);
        fexecve(self, (char *const *)argv, environ);
        _exit(112);
    }
    close(self);
    close(fds[1]);
    c->out = fdopen(fds[0], "r");
    assert_non_null(c->out);
}

/* Reads the child's next line: its status code and message; -1 at the end. */
static int next_status(struct child *c, char *msg, size_t cap)
{
    char line[700];
    if (fgets(line, sizeof(line), c->out) == NULL)
        return -1;
    line[strcspn(line, "\n")] = '\0';
    char *space = strchr(line, ' ');
    (void)snprintf(msg, cap, "%s", space != NULL ? space + 1 : "");
    return atoi(line);
}

static void reap(struct child *c)
{
    int wstatus;
    fclose(c->out);
    assert_int_equal(waitpid(c->pid, &wstatus, 0), c->pid);
    if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0)
        fail_msg("peer exited with status %d", wstatus);
}

/* One call as p: its status code, its message in msg. */
static int call_as(struct cs_e2e *e, const struct peer *p, const char *method, const char *arg,
                   char *msg, size_t cap)
{
    struct child c;
    spawn_peer(e, p, method, arg, 1, &c);
    int code = next_status(&c, msg, cap);
    reap(&c);
    return code;
}

/* The argument each method is called with by p. */
static void method_arg(const char *method, const struct peer *p, char *arg, size_t cap)
{
    if (strcmp(method, "CreateJob") == 0)
        (void)snprintf(arg, cap, "roles-new-%s", p->name);
    else if (strcmp(method, "DeleteJob") == 0)
        (void)snprintf(arg, cap, "roles-del-%s", p->name);
    else if (strcmp(method, "GetRun") == 0 || strcmp(method, "ReadLogs") == 0 ||
             strcmp(method, "CancelRun") == 0)
        (void)snprintf(arg, cap, "%" PRId64, base_run_id);
    else
        (void)snprintf(arg, cap, BASE_JOB);
}

static int setup(void **state)
{
    static const char *const args[] = {
        "--admin-group", "61101", "--operator-group", "61102", "--viewer-group", "61103", NULL};
    if (geteuid() != 0)
        return 0; /* each test skips */
    int rc = cs_e2e_start(state, args);
    if (rc != 0)
        return rc;
    struct cs_e2e *e = *state;
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, BASE_JOB, "echo base"), NULL);
    base_run_id = cs_e2e_trigger(e, BASE_JOB);
    csched__v1__run__free_unpacked(cs_e2e_wait_end(e, base_run_id), NULL);
    for (size_t i = 0; i < CS_E2E_ARRAY_LEN(peers); i++) {
        char name[64];
        (void)snprintf(name, sizeof(name), "roles-del-%s", peers[i].name);
        csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);
    }
    return 0;
}

static int teardown(void **state)
{
    return geteuid() == 0 ? cs_e2e_teardown(state) : 0;
}

/* What a peer without a role could have changed: the jobs, their versions,
 * and the runs. */
static void snapshot(struct cs_e2e *e, char *buf, size_t cap)
{
    Csched__V1__ListJobsRequest jreq = CSCHED__V1__LIST_JOBS_REQUEST__INIT;
    Csched__V1__ListRunsRequest rreq = CSCHED__V1__LIST_RUNS_REQUEST__INIT;
    Csched__V1__ListJobsResponse *jobs = NULL;
    Csched__V1__ListRunsResponse *runs = NULL;
    size_t n = 0;
    assert_int_equal(cs_scheduler_list_jobs(e->client, &jreq, &jobs, cs_e2e_opts(), NULL), 0);
    assert_int_equal(cs_scheduler_list_runs(e->client, &rreq, &runs, cs_e2e_opts(), NULL), 0);
    for (size_t i = 0; i < jobs->n_jobs && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s@%" PRIu64 " ", jobs->jobs[i]->name,
                              jobs->jobs[i]->version);
    for (size_t i = 0; i < runs->n_runs && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "run%" PRId64 ":%d ", runs->runs[i]->id,
                              (int)runs->runs[i]->state);
    csched__v1__list_jobs_response__free_unpacked(jobs, NULL);
    csched__v1__list_runs_response__free_unpacked(runs, NULL);
}

/* A refused change leaves its audit row: who tried, and PERMISSION_DENIED. */
static void assert_denial_audited(struct cs_e2e *e, const struct peer *p, const char *method)
{
    Csched__V1__ListAuditRequest req = CSCHED__V1__LIST_AUDIT_REQUEST__INIT;
    Csched__V1__ListAuditResponse *resp = NULL;
    struct cs_status st = {0};
    char who[64];
    (void)snprintf(who, sizeof(who), "unix:uid=%u", (unsigned)p->uid);
    req.identity = who;
    req.method = (char *)method;
    assert_int_equal(cs_scheduler_list_audit(e->client, &req, &resp, cs_e2e_opts(), &st), 0);
    assert_true(resp->n_entries >= 1);
    assert_int_equal(resp->entries[0]->code, GRPC_STATUS_PERMISSION_DENIED);
    csched__v1__list_audit_response__free_unpacked(resp, NULL);
}

/* Every method as every role, and as none: allowed calls pass the check,
 * refused ones get PERMISSION_DENIED naming the method, the caller and the
 * role needed. The peer without a role goes first and changes nothing. */
static void test_e2e_roles_every_method(void **state)
{
    if (geteuid() != 0)
        skip(); /* changing uid needs root */
    struct cs_e2e *e = *state;
    char before[8192], after[8192];
    snapshot(e, before, sizeof(before));
    for (size_t k = CS_E2E_ARRAY_LEN(peers); k-- > 0;) {
        const struct peer *p = &peers[k];
        for (size_t i = 0; i < CS_E2E_ARRAY_LEN(methods); i++) {
            char arg[64], msg[600], want[200];
            method_arg(methods[i].method, p, arg, sizeof(arg));
            int code = call_as(e, p, methods[i].method, arg, msg, sizeof(msg));
            if (p->role >= methods[i].needs) {
                if (code == GRPC_STATUS_PERMISSION_DENIED || code == GRPC_STATUS_UNAUTHENTICATED ||
                    code < 0)
                    fail_msg("%s as %s: allowed, got %d \"%s\"", methods[i].method, p->name, code,
                             msg);
                continue;
            }
            (void)snprintf(want, sizeof(want),
                           "%s needs role %s; unix:uid=%u has %s (roles of local users: "
                           "--admin-group, --operator-group, --viewer-group)",
                           methods[i].method, role_names[methods[i].needs], (unsigned)p->uid,
                           role_names[p->role]);
            if (code != GRPC_STATUS_PERMISSION_DENIED || strcmp(msg, want) != 0)
                fail_msg("%s as %s: expected PERMISSION_DENIED \"%s\", got %d \"%s\"",
                         methods[i].method, p->name, want, code, msg);
        }
        if (p->role == NONE) {
            snapshot(e, after, sizeof(after));
            assert_string_equal(after, before);
        }
    }
    printf("roles: %zu methods x %zu peers checked\n", CS_E2E_ARRAY_LEN(methods),
           CS_E2E_ARRAY_LEN(peers));
    assert_denial_audited(e, &peers[CS_E2E_ARRAY_LEN(peers) - 1], "CreateJob");
}

/* A trigger's env: an operator may set the variables the job's trigger_env
 * names and no other (PERMISSION_DENIED, no run made); an admin any. */
static void test_e2e_roles_trigger_env(void **state)
{
    if (geteuid() != 0)
        skip();
    struct cs_e2e *e = *state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    char *allowed[] = {"REPORT_DATE"}, msg[600], want[400], before[8192], after[8192];
    const struct peer *op = NULL, *admin = NULL;
    for (size_t k = 0; k < CS_E2E_ARRAY_LEN(peers); k++) {
        op = peers[k].role == OPERATOR ? &peers[k] : op;
        admin = peers[k].role == ADMIN ? &peers[k] : admin;
    }
    job.name = "roles-env";
    job.shell = "true";
    job.trigger_env = allowed;
    job.n_trigger_env = 1;
    Csched__V1__Job *stored = cs_e2e_create_job(e, &job);
    assert_int_equal(stored->n_trigger_env, 1);
    assert_string_equal(stored->trigger_env[0], "REPORT_DATE");
    csched__v1__job__free_unpacked(stored, NULL);

    snapshot(e, before, sizeof(before));
    int code = call_as(e, op, "TriggerJob", "roles-env:LD_PRELOAD=/tmp/x.so", msg, sizeof(msg));
    (void)snprintf(want, sizeof(want),
                   "setting env LD_PRELOAD on a trigger of roles-env needs role admin, or the "
                   "job's trigger_env naming it; unix:uid=%u has operator",
                   (unsigned)op->uid);
    if (code != GRPC_STATUS_PERMISSION_DENIED || strcmp(msg, want) != 0)
        fail_msg("LD_PRELOAD as operator: expected PERMISSION_DENIED \"%s\", got %d \"%s\"", want,
                 code, msg);
    snapshot(e, after, sizeof(after));
    assert_string_equal(after, before);

    code = call_as(e, op, "TriggerJob", "roles-env:REPORT_DATE=2026-12-01", msg, sizeof(msg));
    if (code != 0)
        fail_msg("REPORT_DATE as operator: got %d \"%s\"", code, msg);
    code = call_as(e, admin, "TriggerJob", "roles-env:LD_PRELOAD=/tmp/x.so", msg, sizeof(msg));
    if (code != 0)
        fail_msg("LD_PRELOAD as admin: got %d \"%s\"", code, msg);
}

/* The health service answers anyone, with or without a role. */
static void test_e2e_roles_health_open(void **state)
{
    if (geteuid() != 0)
        skip();
    struct cs_e2e *e = *state;
    for (size_t k = 0; k < CS_E2E_ARRAY_LEN(peers); k++) {
        char msg[600];
        int code = call_as(e, &peers[k], "Health", "-", msg, sizeof(msg));
        if (code != 0)
            fail_msg("health as %s: got %d \"%s\"", peers[k].name, code, msg);
    }
}

/* Many short connections of a viewer and of a peer without a role, at
 * once: the server reuses fd numbers all along, and each call must still
 * get its own connection's role. */
static void test_e2e_roles_fd_reuse(void **state)
{
    if (geteuid() != 0)
        skip();
    struct cs_e2e *e = *state;
    const struct peer *who[] = {&peers[2], &peers[3], &peers[2], &peers[3]};
    struct child c[CS_E2E_ARRAY_LEN(who)];
    int seen = 0;
    for (size_t i = 0; i < CS_E2E_ARRAY_LEN(who); i++)
        spawn_peer(e, who[i], "ListJobs", "-", REUSE_CONNECTIONS, &c[i]);
    for (size_t i = 0; i < CS_E2E_ARRAY_LEN(who); i++) {
        int want = who[i]->role == VIEWER ? 0 : GRPC_STATUS_PERMISSION_DENIED;
        char msg[600];
        int code;
        while ((code = next_status(&c[i], msg, sizeof(msg))) != -1) {
            if (code != want)
                fail_msg("ListJobs as %s: expected %d, got %d \"%s\"", who[i]->name, want, code,
                         msg);
            seen++;
        }
        reap(&c[i]);
    }
    assert_int_equal(seen, (int)CS_E2E_ARRAY_LEN(who) * REUSE_CONNECTIONS);
    printf("roles: %d interleaved connections each got their own role\n", seen);
}

int main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "peer") == 0)
        return peer_main(argc, argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_roles_every_method),
        cmocka_unit_test(test_e2e_roles_health_open),
        cmocka_unit_test(test_e2e_roles_trigger_env),
        cmocka_unit_test(test_e2e_roles_fd_reuse),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
