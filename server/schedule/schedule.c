/* schedule: the next fire time of a cron expression in a zone, with
 * cronie's DST rule, or of an interval; and the text form of both.
 *
 * The zone's table cuts time into spans of one offset. Inside a span local
 * time is UTC plus a constant, so the cron search runs on local time there;
 * at a span's start the rule decides what the local times the change
 * skipped or repeated do. The cron search's answer is reused while it still
 * holds, and spans far before it are jumped over, so a next() costs one or
 * two searches and a few span lookups. Pure, any thread. */
#include "schedule.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>

/* A zone's offset lies within -12h..+14h, and a change skips at most a day
 * (Pacific/Apia, 2011-12-30): a span that ends this long before the UTC
 * reading of a local time cannot hold it, so the walk jumps over it. */
#define REACH_S (40 * 3600)
/* More span steps than any zone needs for one fire: a walk that gets here
 * answers "never" rather than loop. */
#define MAX_STEPS 64

static int cron_next(const struct cs_schedule *s, int64_t after_s, struct cs_fire *out)
{
    bool wild = cs_cron_is_wild(&s->cron);
    int64_t u = after_s + 1, local = INT64_MIN, searched = INT64_MAX;

    for (int step = 0; step < MAX_STEPS; step++) {
        struct cs_tz_span sp;
        cs_tz_span(s->tz, u, &sp);
        int64_t from = u + sp.offset_s;
        /* The local time at which the span before this one ended. */
        int64_t resumed = sp.start_s == INT64_MIN ? from : sp.start_s + sp.offset_before_s;
        bool skipped = sp.offset_s > sp.offset_before_s,
             repeated = sp.offset_s < sp.offset_before_s;

        if (!wild && skipped && u == sp.start_s)
            from = resumed; /* the local times the jump skipped fire at the jump */
        if (!wild && repeated && from < resumed)
            from = resumed; /* the repeated local times fired at their first pass */
        /* The last answer stands for any from between where that search
         * began and what it found; a jump back moves from below it. */
        if (from < searched || from > local) {
            int rc = cs_cron_next(&s->cron, from, &local);
            if (rc != 0)
                return rc;
            searched = from;
        }
        if (sp.end_s == INT64_MAX || local < sp.end_s + sp.offset_s) {
            *out = (struct cs_fire){local - sp.offset_s, local, sp.offset_s, 0};
            if (local < u + sp.offset_s) {
                out->at_s = sp.start_s;
                out->flags = CS_FIRE_DST_SKIPPED;
            } else if (repeated && local < resumed) {
                out->flags = CS_FIRE_DST_REPEAT;
            } else if (!wild && sp.offset_after_s < sp.offset_s &&
                       local >= sp.end_s + sp.offset_after_s) {
                out->flags = CS_FIRE_DST_ONCE;
            }
            return out->at_s < CS_TZ_END_S ? 0 : -ENOENT;
        }
        u = local - REACH_S > sp.end_s ? local - REACH_S : sp.end_s;
    }
    return -ENOENT;
}

static int interval_next(const struct cs_schedule *s, int64_t after_s, struct cs_fire *out)
{
    const struct cs_interval *iv = &s->interval;
    int64_t since = after_s - iv->anchor_s;
    int64_t k = since / iv->period_s;
    struct cs_tz_span sp;

    /* The first k with anchor + k * period > after, rounding toward minus
     * infinity first. */
    if (since % iv->period_s != 0 && since < 0)
        k--;
    out->at_s = iv->anchor_s + (k + 1) * iv->period_s;
    if (out->at_s >= CS_TZ_END_S)
        return -ENOENT;
    cs_tz_span(s->tz, out->at_s, &sp);
    out->offset_s = sp.offset_s;
    out->local_s = out->at_s + sp.offset_s;
    out->flags = 0;
    return 0;
}

int cs_schedule_next(const struct cs_schedule *s, int64_t after_s, struct cs_fire *out)
{
    if (after_s < CS_TZ_BEGIN_S || after_s >= CS_TZ_END_S)
        return -ERANGE;
    return s->kind == CS_SCHEDULE_CRON ? cron_next(s, after_s, out)
                                       : interval_next(s, after_s, out);
}

size_t cs_schedule_next_n(const struct cs_schedule *s, int64_t after_s, struct cs_fire *out,
                          size_t n)
{
    size_t found = 0;

    while (found < n && cs_schedule_next(s, after_s, &out[found]) == 0)
        after_s = out[found++].at_s;
    return found;
}

/* splitmix64's finaliser: every bit of x reaches every bit of the result. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

int64_t cs_schedule_jitter_s(uint64_t seed, int64_t slot_s, int64_t max_s)
{
    if (max_s <= 0)
        return 0;
    return (int64_t)(mix(seed ^ mix((uint64_t)slot_s)) % (uint64_t)(max_s + 1));
}

int cs_duration_parse(const char *text, int64_t *out_s, struct cs_err *err)
{
    static const struct {
        char unit;
        int64_t seconds;
    } units[] = {{'d', CS_DAY_S}, {'h', 3600}, {'m', 60}, {'s', 1}};
    const char *p = text;
    int64_t total = 0;
    size_t last_unit = 0;

    if (*p == '\0')
        goto err_syntax;
    while (*p != '\0') {
        int64_t n = 0;
        size_t u;
        if (!isdigit((unsigned char)*p))
            goto err_syntax;
        for (; isdigit((unsigned char)*p); p++) {
            if (n > CS_INTERVAL_MAX_S)
                goto err_range;
            n = n * 10 + (*p - '0');
        }
        for (u = last_unit; u < CS_ARRAY_LEN(units) && units[u].unit != tolower(*p); u++)
            ;
        if (u == CS_ARRAY_LEN(units))
            goto err_syntax;
        /* "500ms" would read as 500 minutes and an "s" too many. */
        if (units[u].unit == 'm' && tolower(p[1]) == 's')
            return cs_err_set(err, -EINVAL, "\"%.32s\": durations are whole seconds", text);
        total += n * units[u].seconds;
        if (total > CS_INTERVAL_MAX_S)
            goto err_range;
        last_unit = u + 1;
        p++;
    }
    if (total < 1)
        goto err_range;
    *out_s = total;
    return 0;

err_range:
    return cs_err_set(err, -EINVAL, "duration \"%.32s\" is out of range 1s-366d", text);
err_syntax:
    return cs_err_set(err, -EINVAL,
                      "\"%.32s\" is not a duration (numbers with units d h m s, largest first, "
                      "as in 90s or 1h30m)",
                      text);
}

/* Reads exactly n digits into *out. */
static bool read_digits(const char **p, int n, int *out)
{
    *out = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (!isdigit((unsigned char)**p))
            return false;
        *out = *out * 10 + (**p - '0');
    }
    return true;
}

/* ":MM[:SS]" (in the hour), "HH:MM[:SS]" (in the day) or
 * "YYYY-MM-DDTHH:MM:SSZ", all UTC. */
static int parse_anchor(const char *text, int64_t *out_s, struct cs_err *err)
{
    const char *p = text;
    int year, month, mday, hour = 0, min, sec = 0;

    if (strlen(text) == 20 && read_digits(&p, 4, &year) && *p++ == '-' &&
        read_digits(&p, 2, &month) && *p++ == '-' && read_digits(&p, 2, &mday) &&
        toupper(*p++) == 'T' && read_digits(&p, 2, &hour) && *p++ == ':' &&
        read_digits(&p, 2, &min) && *p++ == ':' && read_digits(&p, 2, &sec) && toupper(*p) == 'Z') {
        if (month < 1 || month > 12 || mday < 1 || mday > cs_civil_month_days(year, month) ||
            hour > 23 || min > 59 || sec > 59 || year < 1900 || year >= 2400)
            goto err_anchor;
        *out_s = cs_civil_join(year, month, mday, hour, min, sec);
        return 0;
    }
    p = text;
    if (*p != ':' && (!read_digits(&p, 2, &hour) || *p != ':'))
        goto err_anchor;
    p++;
    if (!read_digits(&p, 2, &min) || (*p == ':' && (p++, !read_digits(&p, 2, &sec))) ||
        *p != '\0' || hour > 23 || min > 59 || sec > 59)
        goto err_anchor;
    *out_s = hour * 3600 + min * 60 + sec;
    return 0;

err_anchor:
    return cs_err_set(err, -EINVAL,
                      "anchor \"%.32s\" is not :MM, :MM:SS, HH:MM, HH:MM:SS or "
                      "YYYY-MM-DDTHH:MM:SSZ (UTC)",
                      text);
}

/* "@every DURATION [from ANCHOR]", the words split out by the caller. */
static int parse_every(char *words[], int n, struct cs_interval *out, struct cs_err *err)
{
    int rc;

    if (n != 2 && !(n == 4 && strcasecmp(words[2], "from") == 0))
        return cs_err_set(err, -EINVAL,
                          "expected \"@every DURATION\" or \"@every DURATION "
                          "from ANCHOR\"");
    rc = cs_duration_parse(words[1], &out->period_s, err);
    if (rc != 0)
        return rc;
    out->anchor_s = 0;
    return n == 4 ? parse_anchor(words[3], &out->anchor_s, err) : 0;
}

/* Puts the form the text was read as before err's words ("cron field 3
 * (day of month): ...", "cron: expected 5 or 6 fields ...", "@every: ..."),
 * so that an error says which grammar it is about. Returns rc. */
static int name_form(int rc, const char *form, struct cs_err *err)
{
    char why[sizeof(err->msg)];

    if (rc == 0 || err == NULL)
        return rc;
    memcpy(why, err->msg, sizeof(why));
    return cs_err_set(err, rc, "%s%s%s", form, strncmp(why, "field ", 6) == 0 ? " " : ": ", why);
}

int cs_schedule_parse(const char *text, const struct cs_tz *tz, struct cs_schedule *out,
                      struct cs_err *err)
{
    char copy[CS_CRON_TEXT_MAX + 1], *words[5], *save = NULL;
    int n = 0;

    memset(out, 0, sizeof(*out));
    out->tz = tz;
    if (strnlen(text, sizeof(copy)) == sizeof(copy))
        return cs_err_set(err, -EINVAL, "longer than %d bytes", CS_CRON_TEXT_MAX);
    memcpy(copy, text, strlen(text) + 1);
    for (char *w = strtok_r(copy, " \t", &save); w != NULL && n < 5;
         w = strtok_r(NULL, " \t", &save))
        words[n++] = w;
    if (n > 0 && strcasecmp(words[0], "@every") == 0) {
        out->kind = CS_SCHEDULE_INTERVAL;
        return name_form(parse_every(words, n, &out->interval, err), "@every", err);
    }
    out->kind = CS_SCHEDULE_CRON;
    return name_form(cs_cron_parse(text, &out->cron, err), "cron", err);
}
