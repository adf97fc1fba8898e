/* csched-bench-failover [KILLS] [HEARTBEAT]: the failover benchmark of the
 * replicas (tests/bench/README.md, "Replicas"). Two replicas on one
 * PostgreSQL, heartbeat HEARTBEAT (default 200ms); KILLS times (default
 * 20): kill -9 of the active replica, then the time until the standby's row
 * says active (the schedules and queue taken over) and until it serves
 * (its snapshot loaded), then the killed one restarted as a standby. Prints
 * each kill and the median and maximum against the configured lease. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replicas_fixture.h"
#include "testlib.h"

#define MAX_KILLS 200
#define WAIT_MS 60000

static int cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void summary(const char *what, int64_t *v, unsigned n)
{
    qsort(v, n, sizeof(v[0]), cmp);
    printf("%-34s median %5lld ms, max %5lld ms (%u kills)\n", what, (long long)v[n / 2],
           (long long)v[n - 1], n);
}

int main(int argc, char **argv)
{
    unsigned kills = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 20;
    const char *heartbeat = argc > 2 ? argv[2] : "200ms";
    static int64_t row_ms[MAX_KILLS], serving_ms[MAX_KILLS];
    struct cs_replicas_options o = {
        .n = 2, .heartbeat = heartbeat, .attempt_lease = "3s", .wait = CS_REPLICAS_WAIT_UP};
    struct cs_replicas *rs = NULL;

    if (kills == 0 || kills > MAX_KILLS) {
        fprintf(stderr, "usage: %s [KILLS 1-%d] [HEARTBEAT]\n", argv[0], MAX_KILLS);
        return 2;
    }
    if (cs_replicas_start(&o, &rs) != 0)
        return 1;
    int a = cs_replicas_wait_active(rs, -1, WAIT_MS, NULL);
    for (unsigned k = 0; k < kills && a >= 0; k++) {
        int64_t t0 = cs_test_now_ms();
        if (cs_replicas_kill9(rs, (unsigned)a) != 0)
            break;
        int b = cs_replicas_wait_active(rs, a, WAIT_MS, &row_ms[k]);
        serving_ms[k] = cs_test_now_ms() - t0;
        if (b < 0 || cs_replicas_restart(rs, (unsigned)a, CS_REPLICAS_WAIT_UP) != 0) {
            fprintf(stderr, "kill %u: no takeover or no restart\n", k + 1);
            cs_replicas_stop(rs);
            return 1;
        }
        printf("kill %2u of %s: %s active by its row after %lld ms, serving after %lld ms\n", k + 1,
               rs->r[a].id, rs->r[b].id, (long long)row_ms[k], (long long)serving_ms[k]);
        fflush(stdout);
        a = b;
    }
    printf("heartbeat %s: the lease is 2 heartbeats, and a standby watches it stand still "
           "for a lease\n",
           heartbeat);
    summary("takeover (the row active):", row_ms, kills);
    summary("serving (the snapshot loaded):", serving_ms, kills);
    return cs_replicas_stop(rs) != 0;
}
