/* The Prometheus endpoint of a real cschedd on loopback (--metrics-listen
 * 127.0.0.1:PORT, plain HTTP): a scrape after real runs passes promtool's
 * check and lint, and its counters moved by what was done (runs succeeded
 * and failed, the gRPC calls made, a schedule's slots, a reconnect to the
 * database); other paths and methods get 404 and 405;
 * 200 scrapes in a row leave the loop's lag within the usual bounds; and a
 * real Prometheus scraping every second answers its HTTP API with the
 * expected series. One server serves every test of this file, in order. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e.h"
#include "metrics_fixture.h"
#include "testlib.h"

#define PROMETHEUS "/usr/bin/prometheus"
#define SCRAPE_WAIT_MS 5000
#define PROMETHEUS_WAIT_MS 25000
#define RAPID_SCRAPES 200

#define HANDLED(method, code)                                                                      \
    "csched_grpc_server_handled_total{grpc_service=\"csched.v1.Scheduler\",grpc_method=\"" method  \
    "\",grpc_code=\"" code "\"}"
#define SUCCEEDED "csched_runs_finished_total{state=\"succeeded\"}"

static int metrics_port;

static int group_setup(void **state)
{
    char listen[64];
    metrics_port = cs_metrics_free_port();
    (void)snprintf(listen, sizeof(listen), "127.0.0.1:%d", metrics_port);
    const char *extra[] = {"--metrics-listen", listen, NULL};
    return cs_e2e_start(state, extra);
}

static char *scrape(void)
{
    int status;
    char *body = cs_metrics_http(metrics_port, "GET", "/metrics", &status);
    assert_int_equal(status, 200);
    return body;
}

/* Scrapes until series reaches want (the loop publishes once a second). */
static char *scrape_until(const char *series, double want)
{
    for (int64_t waited = 0;; waited += 100) {
        char *body = scrape();
        double v = -1;
        if (cs_metrics_value(body, series, &v) && v >= want)
            return body;
        if (waited >= SCRAPE_WAIT_MS)
            fail_msg("%s is %g after %d ms, want %g", series, v, SCRAPE_WAIT_MS, want);
        free(body);
        cs_test_sleep_ms(100);
    }
}

static void assert_value(const char *text, const char *series, double want)
{
    double v;
    if (!cs_metrics_value(text, series, &v))
        fail_msg("no sample %s in the scrape", series);
    if (v != want)
        fail_msg("%s is %g, want %g", series, v, want);
}

static void run_job(struct cs_e2e *e, const char *prefix, const char *shell, int runs)
{
    char name[64];
    cs_e2e_name(name, sizeof(name), prefix);
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, shell), NULL);
    for (int i = 0; i < runs; i++)
        csched__v1__run__free_unpacked(cs_e2e_wait_end(e, cs_e2e_trigger(e, name)), NULL);
}

static void test_scrape_after_runs(void **state)
{
    struct cs_e2e *e = *state;
    run_job(e, "ok", "echo hi", 3);
    run_job(e, "bad", "exit 3", 1);
    /* The failed run ended last: once it shows, so does all before it. */
    char *text = scrape_until("csched_runs_finished_total{state=\"failed\"}", 1);
    cs_metrics_promtool_ok(text);
    assert_value(text, SUCCEEDED, 3);
    assert_value(text, "csched_runs_finished_total{state=\"failed\"}", 1);
    assert_value(text, "csched_runs_started_total", 4);
    assert_value(text, "csched_attempt_duration_seconds_count", 4);
    assert_value(text, "csched_spawn_latency_seconds_count", 4);
    /* Each note read once; a note just written is in the caches and read
     * on the loop, except on a tmpfs (no RWF_NOWAIT there). */
    double loop_reads, pool_reads;
    assert_true(
        cs_metrics_value(text, "csched_status_notes_read_total{where=\"loop\"}", &loop_reads));
    assert_true(
        cs_metrics_value(text, "csched_status_notes_read_total{where=\"pool\"}", &pool_reads));
    assert_int_equal((int)(loop_reads + pool_reads), 4);
    struct statfs fs;
    assert_int_equal(statfs(cs_test_tmp_base(), &fs), 0);
    if (fs.f_type != TMPFS_MAGIC)
        assert_true(loop_reads >= 1);
    else
        printf("metrics: %s is a tmpfs, where every note is read on the pool\n",
               cs_test_tmp_base());
    assert_value(text, "csched_jobs", 2);
    assert_value(text, "csched_slots_limit", CS_E2E_MAX_RUNNING);
    assert_value(text, HANDLED("CreateJob", "OK"), 2);
    assert_value(text, HANDLED("TriggerJob", "OK"), 4);
    assert_value(text, "csched_db_up", 1);
    double v;
    assert_true(cs_metrics_value(text, "csched_db_commit_seconds_count", &v) && v > 0);
    assert_true(cs_metrics_value(text, "process_resident_memory_bytes", &v) && v > 0);
    assert_true(cs_metrics_value(text, "process_open_fds", &v) && v > 0);
    assert_true(cs_metrics_value(text, "csched_loop_lag_seconds_count", &v) && v > 0);
    free(text);

    /* A refused call is counted under its code. */
    Csched__V1__GetJobRequest req = CSCHED__V1__GET_JOB_REQUEST__INIT;
    req.name = "no-such-job";
    Csched__V1__Job *job = NULL;
    struct cs_status st = {0};
    assert_int_equal(cs_scheduler_get_job(e->client, &req, &job, cs_e2e_opts(), &st),
                     GRPC_STATUS_NOT_FOUND);
    free(scrape_until(HANDLED("GetJob", "NOT_FOUND"), 1));
}

/* An attempt whose log of stderr was cut at the cap (16 MiB) is counted
 * under that stream, and only there. */
static void test_output_truncated_counted(void **state)
{
    struct cs_e2e *e = *state;
    run_job(e, "cut", "head -c 17000000 /dev/zero >&2; echo ok", 1);
    char *text = scrape_until("csched_output_truncated_total{stream=\"stderr\"}", 1);
    assert_value(text, "csched_output_truncated_total{stream=\"stderr\"}", 1);
    assert_value(text, "csched_output_truncated_total{stream=\"stdout\"}", 0);
    free(text);
}

static void test_other_paths_refused(void **state)
{
    int status;
    char *body = cs_metrics_http(metrics_port, "GET", "/", &status);
    assert_int_equal(status, 404);
    assert_non_null(strstr(body, "/metrics"));
    free(body);
    body = cs_metrics_http(metrics_port, "POST", "/metrics", &status);
    assert_int_equal(status, 405);
    free(body);
    body = cs_metrics_http(metrics_port, "HEAD", "/metrics", &status);
    assert_int_equal(status, 200);
    free(body);
}

/* Scrapes format on the HTTP thread from a copy: the loop never waits. */
static void test_rapid_scrapes_leave_loop_free(void **state)
{
    struct cs_e2e *e = *state;
    char name[64];
    cs_e2e_name(name, sizeof(name), "busy");
    csched__v1__job__free_unpacked(cs_e2e_create_shell_job(e, name, "true"), NULL);
    int64_t last = 0;
    for (int i = 0; i < RAPID_SCRAPES; i++) {
        if (i % 20 == 0)
            last = cs_e2e_trigger(e, name);
        free(scrape());
    }
    csched__v1__run__free_unpacked(cs_e2e_wait_end(e, last), NULL);
    cs_testd_assert_lag_ok(e->d);
}

/* A schedule's slots are counted by outcome, and their lateness observed. */
static void test_schedule_slots_counted(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job *job = calloc(1, sizeof(*job));
    Csched__V1__Schedule *sc = calloc(1, sizeof(*sc));
    assert_true(job != NULL && sc != NULL);
    csched__v1__job__init(job);
    csched__v1__schedule__init(sc);
    job->name = strdup("every-second");
    job->shell = strdup("true");
    sc->text = strdup("@every 1s");
    sc->time_zone = strdup("");
    job->schedule = sc;
    csched__v1__job__free_unpacked(cs_e2e_create_job(e, job), NULL);
    csched__v1__job__free_unpacked(job, NULL);
    free(scrape_until("csched_schedule_slots_total{outcome=\"started\"}", 2));
    free(scrape_until("csched_schedule_fire_lateness_seconds_count", 2));
    Csched__V1__DeleteJobRequest req = CSCHED__V1__DELETE_JOB_REQUEST__INIT;
    req.name = "every-second";
    Csched__V1__DeleteJobResponse *resp = NULL;
    struct cs_status st = {0};
    int64_t deadline = cs_test_now_ms() + 10000;
    int rc;
    /* Refused (FAILED_PRECONDITION) while a slot's run is in flight, which on
     * a loaded machine may be when the scrapes above end. */
    while ((rc = cs_scheduler_delete_job(e->client, &req, &resp, cs_e2e_opts(), &st)) ==
               GRPC_STATUS_FAILED_PRECONDITION &&
           cs_test_now_ms() < deadline)
        cs_test_sleep_ms(50);
    assert_int_equal(rc, 0);
    csched__v1__delete_job_response__free_unpacked(resp, NULL);
}

/* A connection the database drops is counted when cschedd makes it again. */
static void test_db_reconnect_counted(void **state)
{
    struct cs_e2e *e = *state;
    PGconn *conn = PQconnectdb(cs_testpg_url(e->pg));
    assert_int_equal(PQstatus(conn), CONNECTION_OK);
    PGresult *res = PQexec(conn, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                 "WHERE application_name LIKE 'cschedd%'");
    if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) < 1)
        fail_msg("terminating cschedd's session: %s", PQerrorMessage(conn));
    PQclear(res);
    PQfinish(conn);
    free(scrape_until("csched_db_reconnects_total", 1));
    free(scrape_until("csched_db_up", 1));
    run_job(e, "after-reconnect", "true", 1);
}

/* Prometheus's own HTTP API: the body of GET /api/v1/query?query=q. */
static char *prometheus_query(int port, const char *q)
{
    char path[512];
    int status;
    (void)snprintf(path, sizeof(path), "/api/v1/query?query=%s", q);
    char *body = cs_metrics_http(port, "GET", path, &status);
    return body;
}

static pid_t prometheus_start(const char *dir, int port)
{
    char config[PATH_MAX], data[PATH_MAX], log[PATH_MAX], web[64], cflag[PATH_MAX + 20],
        dflag[PATH_MAX + 30];
    (void)snprintf(config, sizeof(config), "%s/prometheus.yml", dir);
    (void)snprintf(data, sizeof(data), "%s/data", dir);
    (void)snprintf(log, sizeof(log), "%s/prometheus.log", dir);
    FILE *f = fopen(config, "w");
    assert_non_null(f);
    fprintf(f,
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            "scrape_configs:\n  - job_name: csched\n    static_configs:\n"
            "      - targets: ['127.0.0.1:%d']\n",
            metrics_port);
    assert_int_equal(fclose(f), 0);
    (void)snprintf(web, sizeof(web), "--web.listen-address=127.0.0.1:%d", port);
    (void)snprintf(cflag, sizeof(cflag), "--config.file=%s", config);
    (void)snprintf(dflag, sizeof(dflag), "--storage.tsdb.path=%s", data);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execl(PROMETHEUS, PROMETHEUS, cflag, dflag, web, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static void test_prometheus_scrapes(void **state)
{
    if (access(PROMETHEUS, X_OK) != 0) {
        fprintf(stderr, "skipped: %s is not installed (Debian's prometheus package)\n", PROMETHEUS);
        skip();
    }
    char dir[] = "/tmp/cs-prometheus-XXXXXX";
    assert_non_null(mkdtemp(dir));
    int port = cs_metrics_free_port();
    pid_t pid = prometheus_start(dir, port);
    const char *queries[] = {"up%7Bjob%3D%22csched%22%7D", "csched_runs_finished_total",
                             "csched_build_info"};
    const char *wants[] = {"\"value\":[", "\"state\":\"succeeded\"", "\"version\":\""};
    bool found = false;
    char *body = NULL;
    for (int64_t waited = 0; !found && waited < PROMETHEUS_WAIT_MS; waited += 250) {
        cs_test_sleep_ms(250);
        found = true;
        for (size_t i = 0; i < CS_E2E_ARRAY_LEN(queries) && found; i++) {
            free(body);
            body = prometheus_query(port, queries[i]);
            found = strstr(body, wants[i]) != NULL && strstr(body, "\"job\":\"csched\"") != NULL;
        }
    }
    /* The up series says whether Prometheus's last scrape worked. */
    bool up = body != NULL && found;
    free(body);
    body = prometheus_query(port, "up%7Bjob%3D%22csched%22%7D");
    bool scraped = strstr(body, "\"1\"]") != NULL;
    assert_int_equal(kill(pid, SIGTERM), 0);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    if (!up || !scraped)
        fail_msg("Prometheus did not show cschedd's series in %d ms (see %s/prometheus.log): %s",
                 PROMETHEUS_WAIT_MS, dir, body);
    free(body);
    cs_test_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scrape_after_runs),
        cmocka_unit_test(test_output_truncated_counted),
        cmocka_unit_test(test_other_paths_refused),
        cmocka_unit_test(test_rapid_scrapes_leave_loop_free),
        cmocka_unit_test(test_schedule_slots_counted),
        cmocka_unit_test(test_db_reconnect_counted),
        cmocka_unit_test(test_prometheus_scrapes),
    };
    return cmocka_run_group_tests(tests, group_setup, cs_e2e_teardown);
}
