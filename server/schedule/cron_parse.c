/* cron_parse: the text of a cron expression into struct cs_cron.
 *
 * A field is a comma-separated list of items; an item is `*`, a value, a
 * range, any of those with a step, or one of the day fields' own forms
 * (L, L-n, nW, LW; nL, d#n). Every error names the field by its position in
 * the text and its name, and says what is wrong. Pure, any thread. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cron.h"

enum { F_SEC, F_MIN, F_HOUR, F_MDAY, F_MONTH, F_WDAY, F_COUNT };

static const char *const month_names[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                          "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
static const char *const wday_names[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

struct field_def {
    const char *name;
    int lo, hi;               /* values accepted; 7 in the day of week is Sunday */
    int star_hi;              /* where `*` ends */
    const char *const *names; /* names of lo, lo+1, ... or NULL */
    int names_n;
    const char *what; /* "a number", "a number or a month name", ... */
};

static const struct field_def fields[F_COUNT] = {
    [F_SEC] = {"second", 0, 59, 59, NULL, 0, "a number"},
    [F_MIN] = {"minute", 0, 59, 59, NULL, 0, "a number"},
    [F_HOUR] = {"hour", 0, 23, 23, NULL, 0, "a number"},
    [F_MDAY] = {"day of month", 1, 31, 31, NULL, 0, "a number"},
    [F_MONTH] = {"month", 1, 12, 12, month_names, 12, "a number or a month name"},
    [F_WDAY] = {"day of week", 0, 7, 6, wday_names, 7, "a number or a day name"},
};

/* Where the field being parsed sits, for its error messages. */
struct cursor {
    int kind;     /* F_* */
    int position; /* 1-based, in the text */
    struct cs_err *err;
};

static int field_err(const struct cursor *cur, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int field_err(const struct cursor *cur, const char *fmt, ...)
{
    char what[200];
    va_list ap;

    va_start(ap, fmt);
    (void)vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    return cs_err_set(cur->err, -EINVAL, "field %d (%s): %s", cur->position, fields[cur->kind].name,
                      what);
}

/* A number or a name of the field, spanning all of [s, end). A number of
 * more than 6 digits is out of range before it can overflow. */
static int parse_value(const struct cursor *cur, const char *s, const char *end, int *out)
{
    const struct field_def *fd = &fields[cur->kind];
    size_t len = (size_t)(end - s);
    int value = 0;

    if (len > 0 && isdigit((unsigned char)s[0])) {
        for (const char *p = s; p < end; p++) {
            if (!isdigit((unsigned char)*p))
                goto err_not_value;
            value = value * 10 + (*p - '0');
            if (p - s == 6)
                return field_err(cur, "%.*s is out of range %d-%d", (int)(len > 20 ? 20 : len), s,
                                 fd->lo, fd->hi);
        }
        if (value < fd->lo || value > fd->hi)
            return field_err(cur, "%d is out of range %d-%d", value, fd->lo, fd->hi);
        *out = value;
        return 0;
    }
    for (int i = 0; i < fd->names_n && len == 3; i++) {
        if (strncasecmp(s, fd->names[i], 3) == 0) {
            *out = fd->lo + i;
            return 0;
        }
    }
err_not_value:
    return field_err(cur, "\"%.*s\" is not %s", (int)(len > 20 ? 20 : len), s, fd->what);
}

static void set_range(struct cs_cron *c, int kind, int lo, int hi, int step)
{
    uint64_t mask = 0;

    for (int v = lo; v <= hi; v += step)
        mask |= 1ull << (kind == F_WDAY ? v % 7 : v);
    if (kind == F_SEC)
        c->sec |= mask;
    else if (kind == F_MIN)
        c->min |= mask;
    else if (kind == F_HOUR)
        c->hour |= (uint32_t)mask;
    else if (kind == F_MDAY)
        c->mday |= (uint32_t)mask;
    else if (kind == F_MONTH)
        c->month |= (uint16_t)mask;
    else
        c->wday |= (uint8_t)mask;
}

/* `*`, `a`, `a-b`, each optionally followed by `/step`. */
static int parse_range(const struct cursor *cur, const char *s, const char *end, struct cs_cron *c)
{
    const struct field_def *fd = &fields[cur->kind];
    const char *slash = memchr(s, '/', (size_t)(end - s));
    const char *base_end = slash != NULL ? slash : end;
    int lo, hi, step = 1;
    int rc;

    if (slash != NULL) {
        int span = fd->star_hi - fd->lo + 1;
        step = 0;
        for (const char *p = slash + 1; p < end; p++) {
            if (!isdigit((unsigned char)*p) || p - slash > 6)
                return field_err(cur, "step \"%.*s\" is not a number 1-%d",
                                 (int)(end - slash - 1 > 20 ? 20 : end - slash - 1), slash + 1,
                                 span);
            step = step * 10 + (*p - '0');
        }
        if (step < 1 || step > span)
            return field_err(cur, "step %d is out of range 1-%d", step, span);
    }
    if (base_end - s == 1 &&
        (*s == '*' || (*s == '?' && (cur->kind == F_MDAY || cur->kind == F_WDAY)))) {
        set_range(c, cur->kind, fd->lo, fd->star_hi, step);
        return 0;
    }
    /* A dash past the first character: a range (names never hold one). */
    const char *dash = base_end - s > 1 ? memchr(s + 1, '-', (size_t)(base_end - s - 1)) : NULL;
    rc = parse_value(cur, s, dash != NULL ? dash : base_end, &lo);
    if (rc != 0)
        return rc;
    /* `a/n` runs to the field's end; `7/n` in the day of week is Sunday alone. */
    hi = slash != NULL && lo < fd->star_hi ? fd->star_hi : lo;
    if (dash != NULL) {
        rc = parse_value(cur, dash + 1, base_end, &hi);
        if (rc != 0)
            return rc;
        if (hi < lo)
            return field_err(cur, "range %d-%d runs backwards", lo, hi);
    }
    set_range(c, cur->kind, lo, hi, step);
    return 0;
}

/* L, L-n, LW and nW. Returns 1 when the item is none of them. */
static int parse_mday_special(const struct cursor *cur, const char *s, const char *end,
                              struct cs_cron *c)
{
    size_t len = (size_t)(end - s);
    int day;

    if (len == 1 && toupper((unsigned char)s[0]) == 'L') {
        c->mday_last |= 1u;
        return 0;
    }
    if (len == 2 && strncasecmp(s, "LW", 2) == 0) {
        c->mday_near |= 1u;
        return 0;
    }
    if (len > 2 && toupper((unsigned char)s[0]) == 'L' && s[1] == '-') {
        int n = 0;
        for (const char *p = s + 2; p < end; p++) {
            if (!isdigit((unsigned char)*p) || p - s > 6)
                return field_err(cur, "\"%.*s\" is not L-n with n a number 0-30",
                                 (int)(len > 20 ? 20 : len), s);
            n = n * 10 + (*p - '0');
        }
        if (n > 30)
            return field_err(cur, "L-%d is out of range L-0 to L-30", n);
        c->mday_last |= 1u << n;
        return 0;
    }
    if (len > 1 && toupper((unsigned char)end[-1]) == 'W') {
        int rc = parse_value(cur, s, end - 1, &day);
        if (rc == 0)
            c->mday_near |= 1u << day;
        return rc;
    }
    return 1;
}

/* nL and d#n. Returns 1 when the item is neither. */
static int parse_wday_special(const struct cursor *cur, const char *s, const char *end,
                              struct cs_cron *c)
{
    size_t len = (size_t)(end - s);
    const char *hash = memchr(s, '#', len);
    int day, rc;

    if (len == 1 && toupper((unsigned char)s[0]) == 'L')
        return field_err(cur, "L needs a day before it, as in 5L (the last Friday)");
    if (len > 1 && toupper((unsigned char)end[-1]) == 'L') {
        rc = parse_value(cur, s, end - 1, &day);
        if (rc == 0)
            c->wday_last |= (uint8_t)(1u << (day % 7));
        return rc;
    }
    if (hash == NULL)
        return 1;
    rc = parse_value(cur, s, hash, &day);
    if (rc != 0)
        return rc;
    if (end - hash != 2 || hash[1] < '1' || hash[1] > '5')
        return field_err(cur, "#%.*s is out of range #1-#5",
                         (int)(end - hash - 1 > 20 ? 20 : end - hash - 1), hash + 1);
    c->wday_nth |= 1ull << (7 * (hash[1] - '1') + day % 7);
    return 0;
}

static int parse_field(const struct cursor *cur, const char *s, const char *end, struct cs_cron *c)
{
    int rc;

    for (;;) {
        const char *comma = memchr(s, ',', (size_t)(end - s));
        const char *item_end = comma != NULL ? comma : end;

        if (item_end == s)
            return field_err(cur, "empty list item");
        rc = 1;
        if (cur->kind == F_MDAY)
            rc = parse_mday_special(cur, s, item_end, c);
        else if (cur->kind == F_WDAY)
            rc = parse_wday_special(cur, s, item_end, c);
        if (rc == 1)
            rc = parse_range(cur, s, item_end, c);
        if (rc != 0)
            return rc;
        if (comma == NULL)
            return 0;
        s = comma + 1;
    }
}

static const struct {
    const char *name;
    const char *expansion;
} macros[] = {
    {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
    {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
    {"@hourly", "0 * * * *"},
};

static int parse_fields(const char *text, struct cs_cron *out, struct cs_err *err)
{
    const char *start[F_COUNT + 1], *end[F_COUNT + 1];
    int n = 0, first;
    const char *p = text;

    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0')
            break;
        if (n == F_COUNT)
            return cs_err_set(err, -EINVAL, "expected 5 or 6 fields, got more than 6");
        start[n] = p;
        while (*p != '\0' && *p != ' ' && *p != '\t')
            p++;
        end[n++] = p;
    }
    if (n == 0)
        return cs_err_set(err, -EINVAL, "the expression is empty");
    if (n < 5)
        return cs_err_set(err, -EINVAL, "expected 5 or 6 fields, got %d", n);
    memset(out, 0, sizeof(*out));
    first = n == 6 ? F_SEC : F_MIN;
    if (n == 5)
        out->sec = 1;
    for (int i = 0; i < n; i++) {
        struct cursor cur = {first + i, i + 1, err};
        int rc = parse_field(&cur, start[i], end[i], out);
        if (rc != 0)
            return rc;
        if (*start[i] == '*' && (cur.kind == F_MIN || cur.kind == F_HOUR))
            out->flags |= CS_CRON_WILD;
        if ((*start[i] == '*' || *start[i] == '?') && cur.kind == F_MDAY)
            out->flags |= CS_CRON_DOM_STAR;
        if ((*start[i] == '*' || *start[i] == '?') && cur.kind == F_WDAY)
            out->flags |= CS_CRON_DOW_STAR;
    }
    /* The calendar repeats every 400 years: no match in one search from
     * anywhere is no match ever. */
    int64_t any;
    if (cs_cron_next(out, 0, &any) == -ENOENT)
        out->flags |= CS_CRON_NEVER;
    return 0;
}

int cs_cron_parse(const char *text, struct cs_cron *out, struct cs_err *err)
{
    size_t len = strnlen(text, CS_CRON_TEXT_MAX + 1);

    if (len > CS_CRON_TEXT_MAX)
        return cs_err_set(err, -EINVAL, "longer than %d bytes", CS_CRON_TEXT_MAX);
    while (*text == ' ' || *text == '\t')
        text++;
    if (*text != '@')
        return parse_fields(text, out, err);
    size_t name_len = strcspn(text, " \t");
    const char *rest = text + name_len + strspn(text + name_len, " \t");
    for (size_t i = 0; i < CS_ARRAY_LEN(macros); i++) {
        if (strlen(macros[i].name) != name_len || strncasecmp(text, macros[i].name, name_len) != 0)
            continue;
        if (*rest != '\0')
            return cs_err_set(err, -EINVAL, "nothing may follow %s", macros[i].name);
        return parse_fields(macros[i].expansion, out, err);
    }
    return cs_err_set(err, -EINVAL,
                      "unknown macro \"%.*s\" (expected @yearly, @annually, @monthly, @weekly, "
                      "@daily, @midnight, @hourly or @every)",
                      (int)(name_len > 20 ? 20 : name_len), text);
}
