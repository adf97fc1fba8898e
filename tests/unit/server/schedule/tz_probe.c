/* tz_probe: the time zone module asked from the command line, for
 * tz_oracle.py to hold against Python's zoneinfo. Reads lines from stdin,
 * writes one answer per line to stdout:
 *
 *   tz_probe DIR changes FROM TO   NAME           -> NAME T    (each change in [FROM, TO))
 *   tz_probe DIR lookup            NAME T         -> NAME T OFFSET ISDST
 *
 * A zone that does not open answers "NAME ! why" once. Exit 0, or 100 on
 * bad usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tz.h"
#include "tzdb.h"

/* The zone the lines name, read once while they name it in a row. */
static struct cs_tz *open_tz;
static char last[CS_TZ_NAME_MAX + 2];
static int failed;

static const struct cs_tz *zone(const char *dir, const char *name)
{
    struct cs_err err = {0};

    if (strcmp(name, last) == 0)
        return failed ? NULL : open_tz;
    cs_tz_free(open_tz);
    open_tz = NULL;
    (void)snprintf(last, sizeof(last), "%s", name);
    failed = cs_tzdb_open(dir, name, &open_tz, &err) != 0;
    if (failed)
        printf("%s ! %s\n", name, err.msg);
    return open_tz;
}

static void changes(const char *dir, long long from, long long to)
{
    char name[256];
    static int64_t at[100000];

    while (scanf("%255s", name) == 1) {
        const struct cs_tz *tz = zone(dir, name);
        if (tz == NULL)
            continue;
        size_t n = cs_tz_changes(tz, from, to, at, sizeof(at) / sizeof(at[0]));
        for (size_t i = 0; i < n && i < sizeof(at) / sizeof(at[0]); i++)
            printf("%s %lld\n", name, (long long)at[i]);
    }
}

static void lookup(const char *dir)
{
    char name[256];
    long long t;

    while (scanf("%255s %lld", name, &t) == 2) {
        const struct cs_tz *tz = zone(dir, name);
        if (tz == NULL)
            continue;
        struct cs_tz_local l = cs_tz_local_at(tz, t);
        printf("%s %lld %d %d\n", name, t, l.offset_s, l.is_dst);
    }
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[2], "changes") == 0) {
        changes(argv[1], atoll(argv[3]), atoll(argv[4]));
    } else if (argc == 3 && strcmp(argv[2], "lookup") == 0) {
        lookup(argv[1]);
    } else {
        fprintf(stderr, "usage: tz_probe DIR changes FROM TO < names\n"
                        "       tz_probe DIR lookup < 'name instant' lines\n");
        return 100;
    }
    cs_tz_free(open_tz);
    return 0;
}
