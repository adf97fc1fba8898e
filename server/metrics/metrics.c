/* metrics: the loop's own copy of the counters and histograms, and the
 * snapshot it publishes for the HTTP thread (see metrics.h). The hooks and
 * the timer run on the loop thread; cs_metrics_snapshot_read on any. */
#include "metrics.h"

#include <pthread.h>
#include <string.h>

#include "util.h"

#define PUBLISH_INTERVAL_MS 1000

static const double seconds_lag[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                     0.025,  0.05,    0.1,    0.25,  0.5,    1};
static const double seconds_run[] = {0.01, 0.05, 0.1, 0.25, 0.5, 1,    2.5, 5,
                                     10,   30,   60,  300,  900, 1800, 3600};
static const double seconds_spawn[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                       0.05,   0.1,   0.25,   0.5,   1,    2.5};
static const double seconds_late[] = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60, 300, 3600};

const struct cs_hist_bounds cs_metrics_bounds[CS_METRIC_HIST_COUNT] = {
    [CS_METRIC_LOOP_LAG] = {seconds_lag, CS_ARRAY_LEN(seconds_lag)},
    [CS_METRIC_ATTEMPT_DURATION] = {seconds_run, CS_ARRAY_LEN(seconds_run)},
    [CS_METRIC_QUEUE_WAIT] = {seconds_run, CS_ARRAY_LEN(seconds_run)},
    [CS_METRIC_SPAWN] = {seconds_spawn, CS_ARRAY_LEN(seconds_spawn)},
    [CS_METRIC_SLOT_LATENESS] = {seconds_late, CS_ARRAY_LEN(seconds_late)},
};

static struct {
    struct cs_metrics_snapshot live; /* the loop's */
    uv_timer_t timer;
    bool started;
    cs_metrics_gauges_cb gauges_cb;
    void *ctx;
} loop_side;

static struct {
    pthread_mutex_t mu;
    struct cs_metrics_snapshot snap;
} shared = {.mu = PTHREAD_MUTEX_INITIALIZER};

void cs_metrics_observe(enum cs_metric_hist h, double value)
{
    CS_ASSERT_LOOP();
    cs_hist_observe(&loop_side.live.hist[h], &cs_metrics_bounds[h], value);
}

void cs_metrics_count_start(uint32_t attempt)
{
    CS_ASSERT_LOOP();
    loop_side.live.attempts_started++;
    if (attempt == 1)
        loop_side.live.runs_started++;
}

void cs_metrics_count_note_read(bool on_loop)
{
    CS_ASSERT_LOOP();
    if (on_loop)
        loop_side.live.notes_read_loop++;
    else
        loop_side.live.notes_read_pool++;
}

void cs_metrics_count_output_cut(bool stdout_cut, bool stderr_cut)
{
    CS_ASSERT_LOOP();
    loop_side.live.stdout_cut += stdout_cut;
    loop_side.live.stderr_cut += stderr_cut;
}

void cs_metrics_count_end(uint32_t attempt, Csched__V1__RunState state)
{
    CS_ASSERT_LOOP();
    if ((unsigned)state >= CS_METRIC_RUN_STATES)
        return;
    if (attempt == 0)
        loop_side.live.runs_finished[state]++;
    else
        loop_side.live.attempts_finished[state]++;
}

void cs_metrics_count_slot(Csched__V1__SlotOutcome outcome, Csched__V1__SkipReason reason,
                           double lateness_s)
{
    CS_ASSERT_LOOP();
    if ((unsigned)outcome < CS_METRIC_SLOT_OUTCOMES && (unsigned)reason < CS_METRIC_SKIP_REASONS)
        loop_side.live.slots[outcome][reason]++;
    if (lateness_s >= 0)
        cs_metrics_observe(CS_METRIC_SLOT_LATENESS, lateness_s);
}

/* The method's row: found by its path's address first (a method table's
 * strings), so a call costs a few pointer compares; a new path takes the
 * next row, and past the table's end shares the last. */
static struct cs_metrics_grpc *grpc_row(const char *path)
{
    struct cs_metrics_snapshot *m = &loop_side.live;
    for (uint32_t i = 0; i < m->n_grpc; i++)
        if (m->grpc[i].path == path)
            return &m->grpc[i];
    for (uint32_t i = 0; i < m->n_grpc; i++)
        if (strcmp(m->grpc[i].path, path) == 0)
            return &m->grpc[i];
    if (m->n_grpc == CS_METRIC_GRPC_METHODS)
        return &m->grpc[CS_METRIC_GRPC_METHODS - 1];
    m->grpc[m->n_grpc].path = path;
    return &m->grpc[m->n_grpc++];
}

void cs_metrics_count_grpc(const char *path, int code, double seconds)
{
    CS_ASSERT_LOOP();
    if (path[0] == '\0' || code < 0 || code >= CS_METRIC_GRPC_CODES)
        return; /* an unknown method: its path is the client's to choose */
    struct cs_metrics_grpc *row = grpc_row(path);
    row->handled[code]++;
    cs_hist_observe(&row->seconds, &cs_store_latency_bounds, seconds);
}

static void publish(void)
{
    struct cs_metrics_snapshot *m = &loop_side.live;
    memset(&m->gauges, 0, sizeof(m->gauges));
    if (loop_side.gauges_cb != NULL)
        loop_side.gauges_cb(loop_side.ctx, &m->gauges);
    m->published_unix_ms = cs_now_unix_ms();
    CS_ASSERT(pthread_mutex_lock(&shared.mu) == 0);
    shared.snap = *m;
    CS_ASSERT(pthread_mutex_unlock(&shared.mu) == 0);
}

static void publish_cb(uv_timer_t *timer)
{
    publish();
}

int cs_metrics_start(uv_loop_t *loop, cs_metrics_gauges_cb gauges_cb, void *ctx)
{
    CS_ASSERT_LOOP();
    loop_side.gauges_cb = gauges_cb;
    loop_side.ctx = ctx;
    int rc = uv_timer_init(loop, &loop_side.timer);
    if (rc != 0)
        return rc;
    uv_unref((uv_handle_t *)&loop_side.timer);
    loop_side.started = true;
    publish();
    return uv_timer_start(&loop_side.timer, publish_cb, PUBLISH_INTERVAL_MS, PUBLISH_INTERVAL_MS);
}

void cs_metrics_stop(void)
{
    CS_ASSERT_LOOP();
    if (!loop_side.started)
        return;
    loop_side.started = false;
    uv_close((uv_handle_t *)&loop_side.timer, NULL);
}

void cs_metrics_snapshot_read(struct cs_metrics_snapshot *out)
{
    CS_ASSERT(pthread_mutex_lock(&shared.mu) == 0);
    *out = shared.snap;
    CS_ASSERT(pthread_mutex_unlock(&shared.mu) == 0);
}
