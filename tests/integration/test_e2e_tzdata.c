/* The tz database a server's schedules read their zones from, end to end.
 * cschedd reads --zoneinfo, a copy of a few of the system's zone files made
 * here, whose Asia/Almaty is first that zone as ICU 72's copy (tz 2022e)
 * had it, at +06:00 all year (as Asia/Omsk is), then the system's, which
 * moved to +05:00 on 2024-03-01: a tzdata update. SIGHUP puts the new data
 * in force, and so does a restart: the next fire of a job `0 12 * * *` in
 * Almaty moves between 06:00 and 07:00 UTC, and GetStats and the metrics
 * name the version read. A zone whose file is missing at start leaves its
 * jobs without fires, with the reason logged, until a SIGHUP finds it.
 * The tests run in order on one server and one directory. */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "e2e.h"
#include "metrics_fixture.h"
#include "testfile.h"
#include "testlib.h"

#define SYSTEM_ZONES "/usr/share/zoneinfo"

static char zoneinfo[512];
static int metrics_port;

/* Copies src over dst through a temp file and a rename, as a package
 * update does, so the server never reads half a file. */
static void install(const char *src, const char *dst_name)
{
    char dst[600], tmp[700], buf[65536];
    ssize_t n;
    int in, out;

    snprintf(dst, sizeof(dst), "%s/%s", zoneinfo, dst_name);
    snprintf(tmp, sizeof(tmp), "%s.new", dst);
    in = open(src, O_RDONLY | O_CLOEXEC);
    out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_true(in >= 0 && out >= 0);
    while ((n = read(in, buf, sizeof(buf))) > 0)
        assert_int_equal(write(out, buf, (size_t)n), n);
    assert_int_equal(n, 0);
    assert_int_equal(close(in), 0);
    assert_int_equal(close(out), 0);
    assert_int_equal(rename(tmp, dst), 0);
}

static void set_version(const char *version)
{
    char path[600], text[64];
    snprintf(path, sizeof(path), "%s/tzdata.zi", zoneinfo);
    snprintf(text, sizeof(text), "# version %s\n", version);
    cs_test_write_text(path, text);
}

/* The tz data of ICU 72 for Almaty (+06), or the system's (+05). */
static void almaty_as_in(bool icu)
{
    install(icu ? SYSTEM_ZONES "/Asia/Omsk" : SYSTEM_ZONES "/Asia/Almaty", "Asia/Almaty");
    set_version(icu ? "2022e" : "2025b-test");
}

static int setup(void **state)
{
    char dir[600], port[32], listen[64];

    if (cs_test_mkdtemp(zoneinfo, sizeof(zoneinfo), "zoneinfo") != 0)
        return -1;
    snprintf(dir, sizeof(dir), "%s/Asia", zoneinfo);
    if (mkdir(dir, 0755) != 0)
        return -1;
    snprintf(dir, sizeof(dir), "%s/Europe", zoneinfo);
    if (mkdir(dir, 0755) != 0)
        return -1;
    almaty_as_in(true);
    install(SYSTEM_ZONES "/Europe/Berlin", "Europe/Berlin");
    metrics_port = cs_metrics_free_port();
    snprintf(port, sizeof(port), "%d", metrics_port);
    snprintf(listen, sizeof(listen), "127.0.0.1:%s", port);
    const char *const args[] = {"--zoneinfo", zoneinfo, "--metrics-listen", listen, NULL};
    return cs_e2e_start(state, args);
}

static int teardown(void **state)
{
    int rc = cs_e2e_teardown(state);
    if (cs_test_rmtree(zoneinfo) != 0)
        rc = -1;
    return rc;
}

/* Asserts that job's next fire is at utc_hour:00 UTC, local time as said. */
static void assert_next_fire(struct cs_e2e *e, const char *job, int utc_hour, const char *local)
{
    Csched__V1__Job *got = cs_e2e_get_job(e, job);
    assert_true(got->n_next_fires > 0);
    int64_t of_day = got->next_fires[0]->at_unix_ms / 1000 % 86400;
    if (of_day != utc_hour * 3600 || strstr(got->next_fires[0]->local_time, local) == NULL)
        fail_msg("%s: next fire at %lld s into the UTC day, local \"%s\"; expected %d:00 UTC, "
                 "\"%s\"",
                 job, (long long)of_day, got->next_fires[0]->local_time, utc_hour, local);
    csched__v1__job__free_unpacked(got, NULL);
}

/* Waits up to 10 s for GetStats to name version. */
static void wait_version(struct cs_e2e *e, const char *version)
{
    int64_t deadline = cs_test_now_ms() + 10000;
    for (;;) {
        Csched__V1__Stats *st = cs_e2e_get_stats(e);
        bool there = strcmp(st->tzdata_version, version) == 0;
        if (!there && cs_test_now_ms() > deadline)
            fail_msg("GetStats says tzdata %s, not %s", st->tzdata_version, version);
        csched__v1__stats__free_unpacked(st, NULL);
        if (there)
            return;
        cs_test_sleep_ms(50);
    }
}

/* Waits up to 10 s for the metrics to show csched_tzdata_info{version}. */
static void wait_metrics_version(const char *version)
{
    char series[128];
    int64_t deadline = cs_test_now_ms() + 10000;
    snprintf(series, sizeof(series), "csched_tzdata_info{version=\"%s\"}", version);
    for (;;) {
        int status;
        double v = 0;
        char *body = cs_metrics_http(metrics_port, "GET", "/metrics", &status);
        bool there = status == 200 && cs_metrics_value(body, series, &v) && v == 1;
        free(body);
        if (there)
            return;
        if (cs_test_now_ms() > deadline)
            fail_msg("the metrics never showed %s 1", series);
        cs_test_sleep_ms(100);
    }
}

/* Whether the server's log has said words within 5 s (its lines reach the
 * file from a thread of their own). */
static bool log_says(struct cs_e2e *e, const char *words)
{
    int64_t deadline = cs_test_now_ms() + 5000;
    char line[4096];
    bool found = false;

    while (!found && cs_test_now_ms() < deadline) {
        FILE *f = fopen(cs_testd_log_path(e->d), "r");
        assert_non_null(f);
        while (!found && fgets(line, sizeof(line), f) != NULL)
            found = strstr(line, words) != NULL;
        fclose(f);
        if (!found)
            cs_test_sleep_ms(50);
    }
    return found;
}

/* tzdata updated under a running server: SIGHUP, and the job fires at the
 * new data's 12:00. */
static void test_e2e_tzdata_sighup(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job *job = cs_e2e_scheduled_job("almaty", "0 12 * * *", "Asia/Almaty");

    csched__v1__job__free_unpacked(cs_e2e_create_job(e, job), NULL);
    csched__v1__job__free_unpacked(job, NULL);
    wait_version(e, "2022e");
    wait_metrics_version("2022e");
    assert_next_fire(e, "almaty", 6, " 12:00:00 +06:00");

    almaty_as_in(false);
    assert_int_equal(kill(cs_testd_pid(e->d), SIGHUP), 0);
    wait_version(e, "2025b-test");
    assert_next_fire(e, "almaty", 7, " 12:00:00 +05:00");
    assert_true(log_says(e, "time zone Asia/Almaty changed: the next fires of its 1 jobs are "
                            "computed again"));
    wait_metrics_version("2025b-test");
}

/* A restart reads the data afresh too (here, back to the old data). */
static void test_e2e_tzdata_restart(void **state)
{
    struct cs_e2e *e = *state;

    almaty_as_in(true);
    assert_int_equal(cs_testd_restart(e->d), 0);
    wait_version(e, "2022e");
    assert_next_fire(e, "almaty", 6, " 12:00:00 +06:00");
    almaty_as_in(false);
    assert_int_equal(cs_testd_restart(e->d), 0);
    assert_next_fire(e, "almaty", 7, " 12:00:00 +05:00");
}

/* A zone whose file is gone at start: its job is kept without fires, the
 * log says why, and a SIGHUP once the file is back makes it fire again. */
static void test_e2e_tzdata_zone_missing(void **state)
{
    struct cs_e2e *e = *state;
    Csched__V1__Job *job = cs_e2e_scheduled_job("berlin", "30 2 * * *", "Europe/Berlin"), *got;
    char path[600];

    csched__v1__job__free_unpacked(cs_e2e_create_job(e, job), NULL);
    csched__v1__job__free_unpacked(job, NULL);
    snprintf(path, sizeof(path), "%s/Europe/Berlin", zoneinfo);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(cs_testd_restart(e->d), 0);
    got = cs_e2e_get_job(e, "berlin");
    assert_int_equal(got->n_next_fires, 0);
    csched__v1__job__free_unpacked(got, NULL);
    assert_true(log_says(e, "the jobs in time zone Europe/Berlin do not fire: unknown time zone "
                            "\"Europe/Berlin\""));
    assert_next_fire(e, "almaty", 7, " 12:00:00 +05:00");

    install(SYSTEM_ZONES "/Europe/Berlin", "Europe/Berlin");
    assert_int_equal(kill(cs_testd_pid(e->d), SIGHUP), 0);
    int64_t deadline = cs_test_now_ms() + 10000;
    for (;;) {
        got = cs_e2e_get_job(e, "berlin");
        size_t n = got->n_next_fires;
        csched__v1__job__free_unpacked(got, NULL);
        if (n == 5)
            break;
        if (cs_test_now_ms() > deadline)
            fail_msg("the job in Europe/Berlin has %zu next fires after SIGHUP", n);
        cs_test_sleep_ms(50);
    }
    assert_true(log_says(e, "job berlin fires again: its time zone Europe/Berlin was read"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_tzdata_sighup),
        cmocka_unit_test(test_e2e_tzdata_restart),
        cmocka_unit_test(test_e2e_tzdata_zone_missing),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
