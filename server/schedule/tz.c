/* tz: a zone's table made from its TZif file (see tz.h).
 *
 * The table is the file's transitions, then the footer's rule expanded year
 * by year from the year of the last transition to CS_TZ_END_S: a few
 * hundred entries, a few KB to 20 KB a zone, made once when the zone is
 * read. A transition that changes neither the offset nor the DST flag is
 * left out; two at one instant (a rule whose daylight saving time never
 * ends) keep the later. Spans join the changes of the DST flag alone when
 * they are asked for. Pure, any thread; a table is never written after
 * cs_tz_new. */
#include "tz.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "civil.h"
#include "tz_rule.h"
#include "tzif.h"

/* The year of CS_TZ_END_S: the footer is expanded through it. */
#define END_YEAR 2400
/* zic's own bound of time (its "big bang" is -2^59): a file's transitions
 * beyond it in either direction are not kept, so that an instant plus an
 * offset never overflows. Those before it only set the local time that
 * holds from the start; those after it say the footer never applies. */
#define TIME_BOUND_S (1LL << 59)

struct cs_tz {
    char name[CS_TZ_NAME_MAX + 1];
    size_t n, cap;             /* changes; room for cap */
    int64_t *at_s;             /* at_s[i]: the instant of change i, ascending */
    struct cs_tz_local *local; /* n + 1: local[i] holds before at_s[i], local[n] after */
};

static bool same_local(struct cs_tz_local a, struct cs_tz_local b)
{
    return a.offset_s == b.offset_s && a.is_dst == b.is_dst;
}

/* Appends a change to local at at_s, which is not before the last. */
static void push(struct cs_tz *tz, int64_t at_s, struct cs_tz_local local)
{
    if (tz->n > 0 && at_s <= tz->at_s[tz->n - 1]) {
        /* A rule's change before the last cannot be (its times are read
         * per year, and a footer may be odd): it is left out. One at the
         * same instant replaces the last. */
        if (at_s < tz->at_s[tz->n - 1])
            return;
        tz->n--;
    }
    if (same_local(local, tz->local[tz->n]))
        return;
    CS_ASSERT(tz->n < tz->cap);
    tz->at_s[tz->n++] = at_s;
    tz->local[tz->n] = local;
}

/* The first year the footer's rule is expanded from: that of the last
 * transition, or of CS_TZ_BEGIN_S when that is earlier or there is none
 * (a file may open with a transition at -2^59, before the first stars). */
static int64_t rule_first_year(const struct cs_tzif *f)
{
    struct cs_civil c;
    int64_t last = f->timecnt > 0 ? cs_tzif_time(f, f->timecnt - 1) : INT64_MIN;

    cs_civil_split(last > CS_TZ_BEGIN_S ? last : CS_TZ_BEGIN_S, &c);
    return c.year - (last > CS_TZ_BEGIN_S ? 0 : 1);
}

/* The footer's changes after from_s, year by year from from_year. */
static void expand_rule(struct cs_tz *tz, const struct cs_tz_rule *rule, int64_t from_s,
                        int64_t from_year)
{
    struct cs_tz_local std = {rule->std_offset_s, false}, dst = {rule->dst_offset_s, true};

    for (int64_t year = from_year; year <= END_YEAR; year++) {
        int64_t start, end;
        cs_tz_rule_year(rule, year, &start, &end);
        /* North of the equator DST starts first in the year; south, it ends first. */
        bool north = start < end;
        int64_t first = north ? start : end, second = north ? end : start;
        /* A change from CS_TZ_END_S on would be the last for ever: a daylight
         * saving time all year long would end there. */
        if (first > from_s && first < CS_TZ_END_S)
            push(tz, first, north ? dst : std);
        if (second > from_s && second < CS_TZ_END_S)
            push(tz, second, north ? std : dst);
    }
}

/* The table of f, with the footer's rule when it has one. */
static void fill(struct cs_tz *tz, const struct cs_tzif *f, const struct cs_tz_rule *rule)
{
    int64_t from_year = rule_first_year(f);

    tz->local[0] = (struct cs_tz_local){cs_tzif_type(f, 0).utoff_s, cs_tzif_type(f, 0).is_dst};
    for (size_t i = 0; i < f->timecnt && cs_tzif_time(f, i) <= TIME_BOUND_S; i++) {
        struct cs_tzif_type t = cs_tzif_type_after(f, i);
        struct cs_tz_local local = {t.utoff_s, t.is_dst};
        if (cs_tzif_time(f, i) < -TIME_BOUND_S)
            tz->local[0] = local;
        else
            push(tz, cs_tzif_time(f, i), local);
    }
    if (rule == NULL)
        return;
    if (f->timecnt == 0) {
        /* RFC 8536: with no transitions the footer tells all of time, so
         * the table starts in the rule's state on the first January 1. */
        int64_t start = 0, end = 0;
        if (rule->has_dst)
            cs_tz_rule_year(rule, from_year, &start, &end);
        tz->local[0] = start > end ? (struct cs_tz_local){rule->dst_offset_s, true}
                                   : (struct cs_tz_local){rule->std_offset_s, false};
    }
    if (rule->has_dst)
        expand_rule(tz, rule, f->timecnt > 0 ? cs_tzif_time(f, f->timecnt - 1) : INT64_MIN,
                    from_year);
}

int cs_tz_new(const char *name, const uint8_t *tzif, size_t len, struct cs_tz **out,
              struct cs_err *err)
{
    size_t name_len = strnlen(name, CS_TZ_NAME_MAX + 1);
    struct cs_tz_rule rule;
    struct cs_tzif f;
    struct cs_err why;
    int rc;

    *out = NULL;
    if (name_len > CS_TZ_NAME_MAX)
        return cs_err_set(err, -EINVAL, "time zone name \"%.64s...\" is longer than %d bytes", name,
                          CS_TZ_NAME_MAX);
    if ((rc = cs_tzif_parse(tzif, len, &f, &why)) != 0)
        return cs_err_set(err, rc, "time zone \"%s\": its file is not valid TZif: %s", name,
                          why.msg);
    if (f.leapcnt > 0)
        return cs_err_set(err, -EINVAL,
                          "time zone \"%s\" counts leap seconds, which the system clock does not: "
                          "use the zone's name without right/",
                          name);
    if (f.footer[0] != '\0' && (rc = cs_tz_rule_parse(f.footer, &rule, &why)) != 0)
        return cs_err_set(err, rc, "time zone \"%s\": its file's footer: %s", name, why.msg);

    struct cs_tz *tz = cs_xcalloc(1, sizeof(*tz));
    memcpy(tz->name, name, name_len + 1);
    /* At most two changes a year from the rule. */
    int64_t rule_years = END_YEAR - rule_first_year(&f) + 1;
    tz->cap = f.timecnt + (rule_years > 0 ? (size_t)rule_years * 2 : 0);
    tz->at_s = cs_xmalloc(tz->cap * sizeof(*tz->at_s));
    tz->local = cs_xmalloc((tz->cap + 1) * sizeof(*tz->local));
    fill(tz, &f, f.footer[0] != '\0' ? &rule : NULL);
    *out = tz;
    return 0;
}

void cs_tz_free(struct cs_tz *tz)
{
    if (tz == NULL)
        return;
    free(tz->at_s);
    free(tz->local);
    free(tz);
}

const char *cs_tz_name(const struct cs_tz *tz)
{
    return tz != NULL ? tz->name : "UTC";
}

/* The number of changes at or before at_s. */
static size_t changes_until(const struct cs_tz *tz, int64_t at_s)
{
    size_t lo = 0, hi = tz->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tz->at_s[mid] <= at_s)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct cs_tz_local cs_tz_local_at(const struct cs_tz *tz, int64_t at_s)
{
    if (tz == NULL)
        return (struct cs_tz_local){0, false};
    return tz->local[changes_until(tz, at_s)];
}

void cs_tz_span(const struct cs_tz *tz, int64_t at_s, struct cs_tz_span *out)
{
    if (tz == NULL) {
        *out = (struct cs_tz_span){INT64_MIN, INT64_MAX, 0, 0, 0};
        return;
    }
    /* local[first..last] hold at_s's offset: changes first-1 and last
     * bound the span (none when first is 0 or last is n). */
    size_t first = changes_until(tz, at_s), last = first;
    int32_t offset = tz->local[first].offset_s;
    while (first > 0 && tz->local[first - 1].offset_s == offset)
        first--;
    while (last < tz->n && tz->local[last + 1].offset_s == offset)
        last++;
    out->offset_s = offset;
    out->start_s = first > 0 ? tz->at_s[first - 1] : INT64_MIN;
    out->offset_before_s = first > 0 ? tz->local[first - 1].offset_s : offset;
    out->end_s = last < tz->n ? tz->at_s[last] : INT64_MAX;
    out->offset_after_s = last < tz->n ? tz->local[last + 1].offset_s : offset;
}

bool cs_tz_same(const struct cs_tz *a, const struct cs_tz *b)
{
    if (a->n != b->n || memcmp(a->at_s, b->at_s, a->n * sizeof(*a->at_s)) != 0)
        return false;
    for (size_t i = 0; i <= a->n; i++)
        if (!same_local(a->local[i], b->local[i]))
            return false;
    return true;
}

size_t cs_tz_changes(const struct cs_tz *tz, int64_t from_s, int64_t to_s, int64_t *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = changes_until(tz, from_s - 1); i < tz->n && tz->at_s[i] < to_s; i++, n++)
        if (n < cap)
            out[n] = tz->at_s[i];
    return n;
}
