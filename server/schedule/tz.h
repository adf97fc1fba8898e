/* tz: an IANA time zone as an immutable table of its changes of UTC offset
 * and daylight saving time, made from the zone's TZif file (tzif.h): its
 * transitions, then its footer's POSIX TZ rule (tz_rule.h) carried on
 * year by year to CS_TZ_END_S, as RFC 8536 has a reader do. Reading the
 * file is tzdb.h's (blocking); everything here is pure, any thread, no
 * locks, no TZ environment: a table is never written after it is made, so
 * a lookup is a binary search. */
#ifndef CS_TZ_H
#define CS_TZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* The instants a schedule asks about: 1900-01-01 to 2400-01-01 UTC. */
#define CS_TZ_BEGIN_S (-2208988800LL)
#define CS_TZ_END_S 13569465600LL
/* The longest accepted zone name, in bytes (the tz database's longest is 32). */
#define CS_TZ_NAME_MAX 63

struct cs_tz;

/* The local time at an instant: its UTC offset and its DST flag. */
struct cs_tz_local {
    int32_t offset_s; /* local = UTC + offset_s */
    bool is_dst;
};

/* The stretch of time around an instant in which a zone's offset holds:
 * [start_s, end_s), INT64_MIN / INT64_MAX where no change bounds it. A
 * change of the DST flag alone (Moscow's 2011 switch to permanent
 * "standard" time at the summer offset) does not end a span. */
struct cs_tz_span {
    int64_t start_s, end_s;
    int32_t offset_s;        /* local = UTC + offset_s inside the span */
    int32_t offset_before_s; /* the offset before start_s (offset_s if none) */
    int32_t offset_after_s;  /* the offset from end_s (offset_s if none) */
};

/* Makes the zone named name from the len bytes of its TZif file at tzif,
 * in *out, owned by the caller (cs_tz_free). 0, or -EINVAL with err saying
 * what is wrong with the file (which names the zone). A file with leap
 * second records (the right/ zones) is refused: their times count leap
 * seconds, the system clock does not. name is copied (at most
 * CS_TZ_NAME_MAX bytes; longer is -EINVAL). */
int cs_tz_new(const char *name, const uint8_t *tzif, size_t len, struct cs_tz **out,
              struct cs_err *err);
void cs_tz_free(struct cs_tz *tz);

/* The zone's name as given to cs_tz_new; "UTC" for NULL. Borrowed from tz. */
const char *cs_tz_name(const struct cs_tz *tz);

/* The local time at instant at_s. NULL is UTC. O(log changes). */
struct cs_tz_local cs_tz_local_at(const struct cs_tz *tz, int64_t at_s);

/* The span holding instant at_s. NULL is UTC. Past CS_TZ_END_S the last
 * offset holds. O(log changes). */
void cs_tz_span(const struct cs_tz *tz, int64_t at_s, struct cs_tz_span *out);

/* Whether a and b tell the same local time at every instant (their names
 * aside): false when a tz database update changed the zone. */
bool cs_tz_same(const struct cs_tz *a, const struct cs_tz *b);

/* The instants at which tz's local time changes in [from_s, to_s), into
 * out[0..cap): how many there are (more than cap: only cap written). For
 * tests and tools. */
size_t cs_tz_changes(const struct cs_tz *tz, int64_t from_s, int64_t to_s, int64_t *out,
                     size_t cap);

#endif
