/* fuzz_tzif: any bytes as a zone's TZif file (cs_tz_new: the format, the
 * footer's POSIX TZ rule carried on to 2400, the table). A file is refused
 * with a message, or its table answers: at each instant looked at, the
 * span holds the instant, its offsets lie in RFC 8536's range, the local
 * time agrees with the span, and the changes come in order. The instants
 * are fixed ones and eight the input's last bytes choose. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* RFC 8536 3.2: -24:59:59 .. 25:59:59. */
#define OFFSET_MIN (-89999)
#define OFFSET_MAX 93599

static void check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_tzif: %s\n", what);
        abort();
    }
}

static void check_at(const struct cs_tz *tz, int64_t at)
{
    struct cs_tz_span sp;
    cs_tz_span(tz, at, &sp);
    check(sp.start_s <= at && at < sp.end_s, "a span that does not hold its instant");
    check(sp.offset_s >= OFFSET_MIN && sp.offset_s <= OFFSET_MAX &&
              sp.offset_before_s >= OFFSET_MIN && sp.offset_before_s <= OFFSET_MAX &&
              sp.offset_after_s >= OFFSET_MIN && sp.offset_after_s <= OFFSET_MAX,
          "an offset out of range");
    check(cs_tz_local_at(tz, at).offset_s == sp.offset_s, "local time and span disagree");
    /* What schedule.c adds to a span's bounds must not overflow. */
    check(sp.start_s == INT64_MIN || sp.start_s >= -(1LL << 60), "a change too far back");
    check(sp.end_s == INT64_MAX || sp.end_s <= (1LL << 60), "a change too far ahead");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int64_t changes[4096];
    struct cs_tz *tz = NULL;
    struct cs_err err = {0};

    int rc = cs_tz_new("Fuzz/Zone", data, size, &tz, &err);
    if (rc != 0) {
        check(rc == -EINVAL && err.msg[0] != '\0' && tz == NULL, "a refusal without its message");
        return 0;
    }
    const int64_t fixed[] = {INT64_MIN,   CS_TZ_BEGIN_S, -1,           0,
                             1,           2147483647LL,  4102444800LL, CS_TZ_END_S - 1,
                             CS_TZ_END_S, INT64_MAX - 1};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        check_at(tz, fixed[i]);
    for (size_t i = 0; i < 8 && size >= 8 * (i + 1); i++) {
        uint64_t raw;
        memcpy(&raw, data + size - 8 * (i + 1), sizeof(raw));
        check_at(tz, CS_TZ_BEGIN_S + (int64_t)(raw % (uint64_t)(CS_TZ_END_S - CS_TZ_BEGIN_S)));
    }
    size_t n = cs_tz_changes(tz, CS_TZ_BEGIN_S, CS_TZ_END_S, changes,
                             sizeof(changes) / sizeof(changes[0]));
    for (size_t i = 1; i < n && i < sizeof(changes) / sizeof(changes[0]); i++)
        check(changes[i - 1] < changes[i], "changes out of order");
    cs_tz_free(tz);
    return 0;
}
