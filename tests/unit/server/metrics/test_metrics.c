/* Unit tests of the metrics module and its text format: label values
 * escaped, histogram buckets cumulative up to +Inf with _sum and _count,
 * HELP and TYPE before each family, the loop's hooks landing in the
 * published snapshot, and the listen address's loopback rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <arpa/inet.h>
#include <cmocka.h>
#include <grpc/status.h>
#include <netinet/in.h>

#include "metrics.h"
#include "metrics_format.h"
#include "net_addr.h"
#include "util.h"

static void test_metrics_label_escaped(void **state)
{
    struct cs_text t = {0};
    cs_prom_label(&t, "job", "a\\b\"c\nd");
    cs_prom_label(&t, "state", "ok");
    assert_string_equal(t.buf, "job=\"a\\\\b\\\"c\\nd\",state=\"ok\"");
    cs_text_free(&t);
}

static void test_metrics_histogram_cumulative(void **state)
{
    static const double bounds_v[] = {0.1, 1, 10};
    const struct cs_hist_bounds bounds = {bounds_v, 3};
    struct cs_hist h = {0};
    const double values[] = {0.05, 0.1, 0.5, 2, 20, 30};
    for (size_t i = 0; i < CS_ARRAY_LEN(values); i++)
        cs_hist_observe(&h, &bounds, values[i]);
    struct cs_text t = {0};
    cs_prom_hist(&t, "x_seconds", "m=\"a\"", &h, &bounds);
    assert_string_equal(t.buf, "x_seconds_bucket{m=\"a\",le=\"0.1\"} 2\n"
                               "x_seconds_bucket{m=\"a\",le=\"1\"} 3\n"
                               "x_seconds_bucket{m=\"a\",le=\"10\"} 4\n"
                               "x_seconds_bucket{m=\"a\",le=\"+Inf\"} 6\n"
                               "x_seconds_sum{m=\"a\"} 52.65\n"
                               "x_seconds_count{m=\"a\"} 6\n");
    cs_text_free(&t);
    cs_prom_hist(&t, "y", "", &(struct cs_hist){0}, &bounds);
    assert_non_null(strstr(t.buf, "y_bucket{le=\"+Inf\"} 0\ny_sum 0\ny_count 0\n"));
    cs_text_free(&t);
}

/* Every family has HELP then TYPE, and no name has two TYPE lines. */
static void test_metrics_families_typed(void **state)
{
    struct cs_metrics_snapshot *snap = calloc(1, sizeof(*snap));
    assert_non_null(snap);
    struct cs_proc_facts proc = {.ok = true, .threads = 3};
    struct cs_scrape_counts counts = {0};
    struct cs_text t = {0};
    cs_metrics_format(&t, snap, &proc, &counts);
    for (const char *p = strstr(t.buf, "# TYPE "); p != NULL; p = strstr(p + 1, "# TYPE ")) {
        char name[128];
        assert_int_equal(sscanf(p, "# TYPE %127s", name), 1);
        char help[160];
        (void)snprintf(help, sizeof(help), "# HELP %s ", name);
        const char *h = strstr(t.buf, help);
        assert_non_null(h);
        assert_true(h < p);
        char again[160];
        (void)snprintf(again, sizeof(again), "# TYPE %s ", name);
        assert_ptr_equal(strstr(t.buf, again), p);
    }
    assert_non_null(strstr(t.buf, "\nprocess_threads 3\n"));
    assert_non_null(strstr(t.buf, "\ncsched_build_info{version=\""));
    cs_text_free(&t);
    free(snap);
}

/* The hooks record into the loop's copy; a publish makes them readable. */
static void test_metrics_hooks_published(void **state)
{
    cs_loop_thread_mark();
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    cs_metrics_count_start(1);
    cs_metrics_count_start(2);
    cs_metrics_count_end(0, CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED);
    cs_metrics_count_grpc("/csched.v1.Scheduler/GetJob", GRPC_STATUS_NOT_FOUND, 0.002);
    cs_metrics_count_grpc("/csched.v1.Scheduler/GetJob", GRPC_STATUS_NOT_FOUND, 0.003);
    cs_metrics_count_grpc("", GRPC_STATUS_UNIMPLEMENTED, 0.001);
    cs_metrics_observe(CS_METRIC_LOOP_LAG, 0.0002);
    struct cs_metrics_snapshot *snap = calloc(1, sizeof(*snap));
    assert_non_null(snap);
    cs_metrics_snapshot_read(snap);
    assert_int_equal(snap->runs_started, 0); /* nothing published yet */
    assert_int_equal(cs_metrics_start(&loop, NULL, NULL), 0);
    cs_metrics_snapshot_read(snap);
    assert_int_equal(snap->runs_started, 1);
    assert_int_equal(snap->attempts_started, 2);
    assert_int_equal(snap->runs_finished[CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED], 1);
    assert_int_equal(snap->n_grpc, 1);
    assert_int_equal(snap->grpc[0].handled[GRPC_STATUS_NOT_FOUND], 2);
    assert_int_equal(snap->hist[CS_METRIC_LOOP_LAG].count, 1);
    struct cs_text t = {0};
    cs_metrics_format(&t, snap, &(struct cs_proc_facts){0}, &(struct cs_scrape_counts){0});
    assert_non_null(strstr(t.buf,
                           "csched_grpc_server_handled_total{grpc_service=\"csched.v1."
                           "Scheduler\",grpc_method=\"GetJob\",grpc_code=\"NOT_FOUND\"} 2\n"));
    assert_non_null(strstr(t.buf, "csched_runs_finished_total{state=\"succeeded\"} 1\n"));
    assert_null(strstr(t.buf, "process_threads"));
    cs_text_free(&t);
    free(snap);
    cs_metrics_stop();
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static bool loopback(const char *text)
{
    struct sockaddr_storage a;
    struct cs_err err = {0};
    assert_int_equal(cs_net_addr_parse("--metrics-listen", text, &a, &err), 0);
    return cs_net_addr_is_loopback(&a);
}

static void test_metrics_addr_loopback_rule(void **state)
{
    assert_true(loopback("127.0.0.1:9464"));
    assert_true(loopback("127.3.2.1:0"));
    assert_true(loopback("localhost:9464"));
    assert_true(loopback("[::1]:9464"));
    assert_true(loopback("[::ffff:127.0.0.1]:9464"));
    assert_false(loopback("0.0.0.0:9464"));
    assert_false(loopback("10.1.2.3:9464"));
    assert_false(loopback("[::]:9464"));
    assert_false(loopback("128.0.0.1:1"));
    const char *bad[] = {"9464",           ":9464",    "127.0.0.1:",  "127.0.0.1:65536",
                         "example.com:80", "::1:9464", "127.0.0.1:9x"};
    for (size_t i = 0; i < CS_ARRAY_LEN(bad); i++) {
        struct sockaddr_storage a;
        struct cs_err err = {0};
        assert_int_equal(cs_net_addr_parse("--metrics-listen", bad[i], &a, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "--metrics-listen"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metrics_label_escaped),
        cmocka_unit_test(test_metrics_histogram_cumulative),
        cmocka_unit_test(test_metrics_families_typed),
        cmocka_unit_test(test_metrics_hooks_published),
        cmocka_unit_test(test_metrics_addr_loopback_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
