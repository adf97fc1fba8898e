/* csched-bench-hooks [RUNS [JOBS]]: webhooks to a fast local HTTPS
 * endpoint (tests/integration/hook_receiver.py), in two phases
 * (tests/bench/README.md, "Hooks"):
 *
 * - lateness: RUNS/10 runs triggered 20 a second, each delivery's lateness
 *   from its run's end (ended_unix_ms) to the endpoint's receipt, p50, p99;
 * - throughput: RUNS runs (default 1000) triggered while the endpoint holds every request
 *   (its hold file), so that a backlog builds up behind each job's head;
 *   once every run has ended the hold goes, and the backlog's drain is
 *   deliveries per second.
 *
 * JOBS jobs (default 20) each run `true` with one hook on succeeded; runs
 * go to them round-robin. A job's deliveries go one at a time, so JOBS
 * bounds how many are in flight. Starts its own PostgreSQL, cschedd and
 * endpoint. */
#include <csched/client.h>
#include <csched/scheduler.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

static void die(const char *what)
{
    fprintf(stderr, "csched-bench-hooks: %s\n", what);
    exit(1);
}

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0)
        die("no free port");
    close(fd);
    return ntohs(a.sin_port);
}

static pid_t receiver_start(const char *dir, int port)
{
    char port_s[16], secret[PATH_MAX + 16], ready[PATH_MAX + 16];
    snprintf(port_s, sizeof(port_s), "%d", port);
    snprintf(secret, sizeof(secret), "%s/secret", dir);
    snprintf(ready, sizeof(ready), "%s/ready", dir);
    pid_t pid = fork();
    if (pid == 0) {
        /* A test that fails half way leaves no endpoint behind. */
        (void)prctl(PR_SET_PDEATHSIG, SIGTERM);
        execlp("python3", "python3", CS_HOOK_RECEIVER, dir, port_s, secret, (char *)NULL);
        _exit(127);
    }
    for (int64_t until = cs_test_now_ms() + 10000; access(ready, F_OK) != 0;) {
        if (cs_test_now_ms() > until)
            die("the endpoint did not start");
        cs_test_sleep_ms(20);
    }
    return pid;
}

static void create_job(struct cs_client *c, const char *name, const char *url, const char *dir)
{
    char secret[PATH_MAX + 16], ca[PATH_MAX + 16];
    Csched__V1__HookEvent event = CSCHED__V1__HOOK_EVENT__HOOK_EVENT_SUCCEEDED;
    Csched__V1__SecretRef ref = CSCHED__V1__SECRET_REF__INIT;
    Csched__V1__Hook hook = CSCHED__V1__HOOK__INIT, *hooks[] = {&hook};
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__CreateJobRequest req = CSCHED__V1__CREATE_JOB_REQUEST__INIT;
    Csched__V1__Job *got = NULL;
    struct cs_status st;

    snprintf(secret, sizeof(secret), "%s/secret", dir);
    snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
    ref.source_case = CSCHED__V1__SECRET_REF__SOURCE_FILE;
    ref.file = secret;
    hook.events = &event;
    hook.n_events = 1;
    hook.url = (char *)url;
    hook.secret = &ref;
    hook.ca_file = ca;
    hook.timeout_ms = 60000; /* longer than the backlog is held */
    job.name = (char *)name;
    job.shell = "true";
    job.hooks = hooks;
    job.n_hooks = 1;
    req.job = &job;
    if (cs_scheduler_create_job(c, &req, &got, NULL, &st) != 0)
        die(st.message);
    protobuf_c_message_free_unpacked(&got->base, NULL);
}

static long count_lines(const char *path);

static void wait_lines(const char *path, long n)
{
    for (int64_t until = cs_test_now_ms() + 600000; count_lines(path) < n;) {
        if (cs_test_now_ms() > until)
            die("not every delivery arrived within 10 minutes");
        cs_test_sleep_ms(20);
    }
}

/* Reads n records after the first skip: each one's lateness into late,
 * the latest receipt into *last. Returns how many it read. */
static long read_received(const char *path, long skip, long n, int64_t *late, int64_t *last)
{
    FILE *f = fopen(path, "r");
    char line[8192];
    long i = 0, k = 0;
    while (f != NULL && k < n && fgets(line, sizeof(line), f) != NULL) {
        if (i++ < skip)
            continue;
        json_t *rec = json_loads(line, 0, NULL);
        json_t *run = json_object_get(json_object_get(rec, "body"), "run");
        int64_t got = json_integer_value(json_object_get(rec, "received_unix_ms"));
        late[k++] = got - json_integer_value(json_object_get(run, "ended_unix_ms"));
        if (last != NULL && got > *last)
            *last = got;
        json_decref(rec);
    }
    if (f != NULL)
        fclose(f);
    return k;
}

static int by_value(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void trigger(struct cs_client *c, long job)
{
    char name[32];
    Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    Csched__V1__Run *run = NULL;
    struct cs_status st;
    snprintf(name, sizeof(name), "hooked-%ld", job);
    req.job_name = name;
    if (cs_scheduler_trigger_job(c, &req, &run, NULL, &st) != 0)
        die(st.message);
    protobuf_c_message_free_unpacked(&run->base, NULL);
}

/* Waits until no run is queued, starting or running. */
static void wait_idle(struct cs_client *c)
{
    for (;;) {
        Csched__V1__Stats *stats = NULL;
        struct cs_status st;
        if (cs_scheduler_get_stats(c, NULL, &stats, NULL, &st) != 0)
            die(st.message);
        bool idle = stats->running + stats->queued + stats->starting == 0;
        protobuf_c_message_free_unpacked(&stats->base, NULL);
        if (idle)
            return;
        cs_test_sleep_ms(100);
    }
}

/* Lines of the endpoint's record so far. */
static long count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    long n = 0;
    int ch;
    if (f == NULL)
        return 0;
    while ((ch = fgetc(f)) != EOF)
        n += ch == '\n';
    fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    long runs = argc > 1 ? atol(argv[1]) : 1000, jobs = argc > 2 ? atol(argv[2]) : 20;
    char dir[PATH_MAX] = "/tmp/csched-bench-hooks-XXXXXX", cmd[PATH_MAX * 2], url[64];
    char path[PATH_MAX + 16], hold[PATH_MAX + 16];
    struct cs_testpg *pg;
    struct cs_testd *d;
    struct cs_client *c;

    if (runs <= 0 || jobs <= 0 || mkdtemp(dir) == NULL)
        die("usage: csched-bench-hooks [RUNS [JOBS]]");
    snprintf(cmd, sizeof(cmd), "sh %s %s >/dev/null && printf bench-secret > %s/secret",
             CS_MAKE_CERTS, dir, dir);
    if (system(cmd) != 0)
        die("make_certs.sh failed");
    int port = free_port();
    snprintf(url, sizeof(url), "https://127.0.0.1:%d/hook", port);
    pid_t receiver = receiver_start(dir, port);
    const char *const args[] = {"--max-running", "64", NULL};
    if (cs_testpg_start(&pg) != 0)
        die("PostgreSQL did not start");
    struct cs_testd_options opts = {.database_url = cs_testpg_url(pg), .extra_args = args};
    if (cs_testd_start(&opts, &d) != 0 || cs_client_new(cs_testd_target(d), &c) != 0)
        die("cschedd did not start");
    for (long j = 0; j < jobs; j++) {
        char name[32];
        snprintf(name, sizeof(name), "hooked-%ld", j);
        create_job(c, name, url, dir);
    }
    snprintf(path, sizeof(path), "%s/received", dir);
    /* Lateness, at a pace the runs keep up with. */
    long paced = runs / 10 > 0 ? runs / 10 : 1;
    for (long i = 0; i < paced; i++) {
        trigger(c, i % jobs);
        cs_test_sleep_ms(50);
    }
    wait_lines(path, paced);
    int64_t *late = calloc((size_t)runs, sizeof(*late));
    long n = read_received(path, 0, paced, late, NULL);
    qsort(late, (size_t)n, sizeof(*late), by_value);
    printf("hooks lateness: %ld deliveries, one run each 50 ms over %ld jobs: from run end to "
           "receipt p50 %lld ms, p99 %lld ms, max %lld ms\n",
           n, jobs, (long long)late[n / 2], (long long)late[(n * 99) / 100],
           (long long)late[n - 1]);
    /* Throughput: a backlog held at the endpoint, then let go. */
    snprintf(hold, sizeof(hold), "%s/hold", dir);
    FILE *hf = fopen(hold, "w");
    if (hf == NULL)
        die("cannot make the hold file");
    fclose(hf);
    for (long i = 0; i < runs; i++)
        trigger(c, i % jobs);
    wait_idle(c);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now); /* the receipts' clock */
    int64_t go = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
    unlink(hold);
    wait_lines(path, paced + runs);
    int64_t last = 0;
    n = read_received(path, paced, runs, late, &last);
    double seconds = (double)(last - go) / 1000.0;
    printf("hooks throughput: %ld deliveries held behind %ld jobs' heads, drained in %.2f s: "
           "%.0f deliveries/s\n",
           n, jobs, seconds, seconds > 0 ? (double)n / seconds : 0.0);
    free(late);
    cs_client_free(c);
    (void)cs_testd_stop(d);
    cs_testpg_stop(pg);
    kill(receiver, SIGTERM);
    waitpid(receiver, NULL, 0);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}
