/* tz: IANA zones read through ICU's calendar API into offset tables.
 *
 * Only the total offset (raw + DST) matters to a scheduler, so a change of
 * a zone's name or DST flag that keeps the offset (Moscow's 2011 switch to
 * permanent "standard" time at the summer offset, say) is not a change
 * here. ICU runs only inside cs_tz_open; lookups read the table. Any
 * thread; a table is never written after open. */
#include "tz.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/ucal.h>
#include <unicode/ustring.h>

struct cs_tz {
    char name[CS_TZ_NAME_MAX + 1];
    size_t n;          /* changes */
    int64_t *at_s;     /* at_s[i]: the instant of change i, ascending */
    int32_t *offset_s; /* n + 1 offsets: offset_s[i] holds before at_s[i], offset_s[n] after */
};

static bool name_is_plain(const char *name, size_t len)
{
    if (len == 0 || len > CS_TZ_NAME_MAX)
        return false;
    for (size_t i = 0; i < len; i++) {
        char ch = name[i];
        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
              ch == '/' || ch == '_' || ch == '-' || ch == '+'))
            return false;
    }
    return true;
}

static int32_t offset_at(UCalendar *cal, double at_ms, UErrorCode *status)
{
    ucal_setMillis(cal, at_ms, status);
    int32_t ms = ucal_get(cal, UCAL_ZONE_OFFSET, status) + ucal_get(cal, UCAL_DST_OFFSET, status);
    return ms / 1000;
}

/* Appends every offset change in the table's range. */
static int fill(struct cs_tz *tz, UCalendar *cal)
{
    size_t cap = 64;
    UErrorCode status = U_ZERO_ERROR;
    UDate at_ms = (double)CS_TZ_BEGIN_S * 1000.0;
    int32_t offset = offset_at(cal, at_ms, &status);

    tz->at_s = malloc(cap * sizeof(*tz->at_s));
    tz->offset_s = malloc((cap + 1) * sizeof(*tz->offset_s));
    if (tz->at_s == NULL || tz->offset_s == NULL)
        return -ENOMEM;
    tz->offset_s[0] = offset;
    while (U_SUCCESS(status) &&
           ucal_getTimeZoneTransitionDate(cal, UCAL_TZ_TRANSITION_NEXT, &at_ms, &status) &&
           at_ms < (double)CS_TZ_END_S * 1000.0) {
        int32_t next = offset_at(cal, at_ms, &status);
        if (next == offset)
            continue;
        if (tz->n == cap) {
            cap *= 2;
            int64_t *at = realloc(tz->at_s, cap * sizeof(*at));
            if (at == NULL)
                return -ENOMEM;
            tz->at_s = at;
            int32_t *off = realloc(tz->offset_s, (cap + 1) * sizeof(*off));
            if (off == NULL)
                return -ENOMEM;
            tz->offset_s = off;
        }
        tz->at_s[tz->n++] = (int64_t)(at_ms / 1000.0);
        tz->offset_s[tz->n] = offset = next;
    }
    return U_SUCCESS(status) ? 0 : -EIO;
}

int cs_tz_open(const char *name, struct cs_tz **out, struct cs_err *err)
{
    size_t len = strnlen(name, CS_TZ_NAME_MAX + 1);
    UChar id[CS_TZ_NAME_MAX + 1], canonical[128];
    UErrorCode status = U_ZERO_ERROR;
    UBool is_system = false;
    UCalendar *cal;
    struct cs_tz *tz;
    int rc;

    /* ICU maps a name it does not know to "Etc/Unknown" (GMT) in silence,
     * and accepts custom ids ("GMT+3"): only a system zone is a zone here. */
    if (!name_is_plain(name, len))
        goto err_unknown;
    u_uastrncpy(id, name, (int32_t)CS_ARRAY_LEN(id));
    (void)ucal_getCanonicalTimeZoneID(id, -1, canonical, (int32_t)CS_ARRAY_LEN(canonical),
                                      &is_system, &status);
    if (U_FAILURE(status) || !is_system)
        goto err_unknown;
    tz = calloc(1, sizeof(*tz));
    if (tz == NULL)
        return -ENOMEM;
    memcpy(tz->name, name, len + 1);
    cal = ucal_open(id, -1, "en_US_POSIX", UCAL_GREGORIAN, &status);
    if (U_FAILURE(status)) {
        rc = cs_err_set(err, -EIO, "time zone \"%s\": ICU: %s", name, u_errorName(status));
        goto err_free_tz;
    }
    rc = fill(tz, cal);
    ucal_close(cal);
    if (rc != 0) {
        rc = cs_err_set(err, rc, "time zone \"%s\": cannot read its offsets", name);
        goto err_free_tz;
    }
    *out = tz;
    return 0;

err_free_tz:
    cs_tz_free(tz);
    return rc;
err_unknown:
    return cs_err_set(err, -EINVAL, "unknown time zone \"%.*s\"", (int)(len > 64 ? 64 : len), name);
}

void cs_tz_free(struct cs_tz *tz)
{
    if (tz == NULL)
        return;
    free(tz->at_s);
    free(tz->offset_s);
    free(tz);
}

const char *cs_tz_name(const struct cs_tz *tz)
{
    return tz != NULL ? tz->name : "UTC";
}

void cs_tz_span(const struct cs_tz *tz, int64_t at_s, struct cs_tz_span *out)
{
    size_t lo = 0, hi = tz != NULL ? tz->n : 0;

    if (tz == NULL || tz->n == 0) {
        int32_t offset = tz != NULL ? tz->offset_s[0] : 0;
        *out = (struct cs_tz_span){INT64_MIN, INT64_MAX, offset, offset, offset};
        return;
    }
    /* lo becomes the number of changes at or before at_s. */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tz->at_s[mid] <= at_s)
            lo = mid + 1;
        else
            hi = mid;
    }
    out->offset_s = tz->offset_s[lo];
    out->start_s = lo > 0 ? tz->at_s[lo - 1] : INT64_MIN;
    out->offset_before_s = lo > 0 ? tz->offset_s[lo - 1] : out->offset_s;
    out->end_s = lo < tz->n ? tz->at_s[lo] : INT64_MAX;
    out->offset_after_s = lo < tz->n ? tz->offset_s[lo + 1] : out->offset_s;
}
