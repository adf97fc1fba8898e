/* tz: an IANA time zone as an immutable table of its UTC offset changes.
 *
 * Opening a zone asks ICU (ucal_*, its own copy of the tz database) for every
 * change of the zone's total UTC offset from 1900 to CS_TZ_END_S and keeps
 * them in two sorted arrays: slow (ICU loads its data; about a thousand
 * calls), so a caller opens each zone once, off the loop's hot path, and
 * shares it. After that, looking an instant up is a binary search: pure,
 * any thread, no ICU, no locks, no TZ environment. */
#ifndef CS_TZ_H
#define CS_TZ_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* The instants a table covers: 1900-01-01 to 2400-01-01 UTC. */
#define CS_TZ_BEGIN_S (-2208988800LL)
#define CS_TZ_END_S 13569465600LL
/* The longest accepted zone name, in bytes. */
#define CS_TZ_NAME_MAX 63

struct cs_tz;

/* The stretch of time around an instant in which a zone's offset holds:
 * [start_s, end_s), INT64_MIN / INT64_MAX where no change bounds it. */
struct cs_tz_span {
    int64_t start_s, end_s;
    int32_t offset_s;        /* local = UTC + offset_s inside the span */
    int32_t offset_before_s; /* the offset before start_s (offset_s if none) */
    int32_t offset_after_s;  /* the offset from end_s (offset_s if none) */
};

/* Opens the zone named name ("Europe/Berlin", "UTC"), in *out, owned by the
 * caller (cs_tz_free). 0, -EINVAL with err saying `unknown time zone
 * "Europe/Berln"`, or -ENOMEM. Slow (ICU): once per zone, never per fire. */
int cs_tz_open(const char *name, struct cs_tz **out, struct cs_err *err);
void cs_tz_free(struct cs_tz *tz);

/* The zone's name as given to cs_tz_open; "UTC" for NULL. Borrowed from tz. */
const char *cs_tz_name(const struct cs_tz *tz);

/* The span holding instant at_s. NULL is UTC. Past CS_TZ_END_S the last
 * offset holds. O(log changes). */
void cs_tz_span(const struct cs_tz *tz, int64_t at_s, struct cs_tz_span *out);

#endif
