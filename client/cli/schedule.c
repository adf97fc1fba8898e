/* The schedule of a job in the CLI: one setter shared by the job create and
 * update flags (--time-zone) and the YAML keys of apply -f (time_zone), and
 * the schedule's lines of csched job get. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const char *const misfire_names[] = {"skip", "run_once", "run_all"};
static const char *const overlap_names[] = {"allow", "forbid", "replace", "queue_one"};

/* The index of value in names (any case, '-' for '_'), or -EINVAL. */
static int name_index(const char *const *names, size_t n, const char *value)
{
    for (size_t i = 0; i < n; i++) {
        const char *a = names[i], *b = value;
        while (*a != '\0' && (*b == *a || (*a == '_' && *b == '-') ||
                              (*a >= 'a' && *a <= 'z' && *b == *a - 'a' + 'A'))) {
            a++;
            b++;
        }
        if (*a == '\0' && *b == '\0')
            return (int)i;
    }
    return -EINVAL;
}

static Csched__V1__Schedule *schedule_of(Csched__V1__Job *job)
{
    if (job->schedule == NULL) {
        job->schedule = cs_cli_xmalloc(sizeof(*job->schedule));
        csched__v1__schedule__init(job->schedule);
    }
    return job->schedule;
}

int cs_cli_schedule_set(Csched__V1__Job *job, const char *key, const char *value,
                        struct cs_cli_err *err)
{
    static const struct {
        const char *key;
        size_t offset;
    } nums[] = {
        {"jitter_seconds", offsetof(Csched__V1__Schedule, jitter_seconds)},
        {"max_catchup", offsetof(Csched__V1__Schedule, max_catchup)},
        {"starting_deadline_seconds", offsetof(Csched__V1__Schedule, starting_deadline_seconds)},
    };
    int v;

    if (strcmp(key, "schedule") == 0) {
        cs_cli_set_string(&schedule_of(job)->text, value);
        return CS_CLI_FLAG_TAKEN;
    }
    if (strcmp(key, "time_zone") == 0) {
        cs_cli_set_string(&schedule_of(job)->time_zone, value);
        return CS_CLI_FLAG_TAKEN;
    }
    if (strcmp(key, "misfire") == 0) {
        if ((v = name_index(misfire_names, ARRAY_LEN(misfire_names), value)) < 0)
            goto err_enum;
        schedule_of(job)->misfire = (Csched__V1__Misfire)v;
        return CS_CLI_FLAG_TAKEN;
    }
    if (strcmp(key, "overlap") == 0) {
        if ((v = name_index(overlap_names, ARRAY_LEN(overlap_names), value)) < 0)
            goto err_enum;
        schedule_of(job)->overlap = (Csched__V1__Overlap)v;
        return CS_CLI_FLAG_TAKEN;
    }
    for (size_t k = 0; k < ARRAY_LEN(nums); k++) {
        if (strcmp(key, nums[k].key) == 0) {
            if (cs_cli_parse_u32(value, (uint32_t *)((char *)schedule_of(job) + nums[k].offset)))
                goto err_number;
            return CS_CLI_FLAG_TAKEN;
        }
    }
    return CS_CLI_FLAG_NOT_MINE;

err_enum:
    return cs_cli_err_set(err, -EINVAL, "%s takes %s, not '%s'", key,
                          strcmp(key, "misfire") == 0 ? "skip, run_once or run_all"
                                                      : "allow, forbid, replace or queue_one",
                          value);
err_number:
    return cs_cli_err_set(err, -EINVAL, "%s takes a whole number >= 0, not '%s'", key, value);
}

int cs_cli_schedule_flag(Csched__V1__Job *job, int argc, char **argv, int *i,
                         struct cs_cli_err *err)
{
    static const char *const flags[] = {"--schedule",
                                        "--time-zone",
                                        "--misfire",
                                        "--overlap",
                                        "--jitter-seconds",
                                        "--max-catchup",
                                        "--starting-deadline-seconds"};
    char key[40];
    const char *v;

    for (size_t k = 0; k < ARRAY_LEN(flags); k++) {
        int rc = cs_cli_flag_value(flags[k], "a value", argc, argv, i, &v, err);

        if (rc == CS_CLI_FLAG_NOT_MINE)
            continue;
        if (rc < 0)
            return rc;
        /* "--time-zone" is the key "time_zone". */
        snprintf(key, sizeof(key), "%s", flags[k] + 2);
        for (char *p = key; *p != '\0'; p++)
            if (*p == '-')
                *p = '_';
        return cs_cli_schedule_set(job, key, v, err);
    }
    return CS_CLI_FLAG_NOT_MINE;
}

void cs_cli_print_schedule(FILE *f, const Csched__V1__Job *job)
{
    const Csched__V1__Schedule *s = job->schedule;
    char t[32];

    if (s == NULL || s->text[0] == '\0')
        return;
    fprintf(f, "schedule:         %s\n", s->text);
    fprintf(f, "time_zone:        %s\n", s->time_zone[0] ? s->time_zone : "UTC");
    fprintf(f, "misfire:          %s\n",
            (size_t)s->misfire < ARRAY_LEN(misfire_names) ? misfire_names[s->misfire] : "?");
    fprintf(f, "overlap:          %s\n",
            (size_t)s->overlap < ARRAY_LEN(overlap_names) ? overlap_names[s->overlap] : "?");
    fprintf(f, "jitter_seconds:   %" PRIu32 "\n", s->jitter_seconds);
    fprintf(f, "max_catchup:      %" PRIu32 "\n", s->max_catchup);
    fprintf(f, "starting_deadline_seconds: %" PRIu32 "\n", s->starting_deadline_seconds);
    if (job->paused) {
        cs_cli_format_time(job->paused_unix_ms, t, sizeof(t));
        fprintf(f, "paused:           since %s%s%s\n", t, job->pause_reason[0] ? ": " : "",
                job->pause_reason);
    }
    cs_cli_print_next_fires(f, job, job->n_next_fires);
}

void cs_cli_print_next_fires(FILE *f, const Csched__V1__Job *job, size_t n)
{
    char t[32];

    if (n > job->n_next_fires)
        n = job->n_next_fires;
    if (n > 0)
        fprintf(f, "next fires:\n");
    for (size_t i = 0; i < n; i++) {
        const Csched__V1__FireTime *ft = job->next_fires[i];

        cs_cli_format_time(ft->at_unix_ms, t, sizeof(t));
        fprintf(f, "  %s  %s%s\n", t, ft->local_time, ft->dst_shifted ? "  (shifted by DST)" : "");
    }
}
