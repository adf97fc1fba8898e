/* The table of csched job list: what an operator scans for in a line per
 * job (schedule, paused, the next fire, how the last run went and when,
 * what runs now), built from rows the command has read, at a clock given
 * by the caller so that a test can fix it. Sorting and fitting the wide
 * table's command into 100 columns are here too; no call is made here.
 *
 * Single-threaded.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* The column a wide table's COMMAND is cut to fit in, and the least it is
 * cut to whatever the other columns take. */
#define LINE_MAX_COLS 100
#define COMMAND_MIN_COLS 12

int cs_cli_parse_job_sort(const char *s, enum cs_cli_job_sort *out)
{
    static const char *const names[] = {"name", "next", "last", "running"};

    for (size_t i = 0; s != NULL && i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcmp(s, names[i]) == 0) {
            *out = (enum cs_cli_job_sort)i;
            return 0;
        }
    }
    return -EINVAL;
}

static int64_t next_fire_ms(const struct cs_cli_job_row *r)
{
    return r->job->n_next_fires > 0 && !r->job->paused ? r->job->next_fires[0]->at_unix_ms : 0;
}

static int64_t last_end_ms(const struct cs_cli_job_row *r)
{
    return r->last != NULL ? r->last->ended_unix_ms : 0;
}

static int compare_i64(int64_t a, int64_t b, bool ascending)
{
    if (a == b)
        return 0;
    if (a == 0 || b == 0)
        return a == 0 ? 1 : -1;
    return (a < b) == ascending ? -1 : 1;
}

/* Orders by the key asked for (a qsort_r comparator, arg the key), then by
 * name; a job without the key (no next fire, no last run) goes after those
 * with it. */
static int compare_rows(const void *pa, const void *pb, void *arg)
{
    const struct cs_cli_job_row *a = pa, *b = pb;
    enum cs_cli_job_sort sort_key = *(const enum cs_cli_job_sort *)arg;
    int c = 0;

    if (sort_key == CS_CLI_JOB_SORT_NEXT)
        c = compare_i64(next_fire_ms(a), next_fire_ms(b), true);
    else if (sort_key == CS_CLI_JOB_SORT_LAST)
        c = compare_i64(last_end_ms(a), last_end_ms(b), false);
    else if (sort_key == CS_CLI_JOB_SORT_RUNNING)
        c = compare_i64(a->running, b->running, false);
    return c != 0 ? c : strcmp(a->job->name, b->job->name);
}

/* A time as the view wants it: "in 4m" / "12m ago", or with --absolute the
 * local time to the minute, "2026-12-06 14:30", short enough for two such
 * columns in 100 (job get has the seconds and the zone's offset). */
static void format_when(const struct cs_cli_job_view *v, int64_t unix_ms, char *buf, size_t len)
{
    time_t t = (time_t)(unix_ms / 1000);
    struct tm tm;

    if (!v->absolute)
        cs_cli_format_ago(unix_ms, v->now_ms, buf, len);
    else if (unix_ms <= 0 || localtime_r(&t, &tm) == NULL ||
             strftime(buf, len, "%Y-%m-%d %H:%M", &tm) == 0)
        snprintf(buf, len, "-");
}

/* The schedule's text; its zone is in job get (NEXT, relative, needs none). */
static void schedule_cell(const Csched__V1__Job *job, char *buf, size_t len)
{
    const Csched__V1__Schedule *s = job->schedule;

    snprintf(buf, len, "%s", s != NULL && s->text[0] != '\0' ? s->text : "-");
}

/* "1h00m, 3x, max 2": the attempt's timeout, the attempts, the runs at
 * once; "-" when the job sets none of them. */
static void limits_cell(const Csched__V1__Job *job, char *buf, size_t len)
{
    size_t n = 0;

    buf[0] = '\0';
    if (job->timeout_seconds > 0) {
        cs_cli_format_duration((int64_t)job->timeout_seconds * 1000, buf, len);
        n = strlen(buf);
    }
    if (job->max_attempts > 1 && n < len)
        n += (size_t)snprintf(buf + n, len - n, "%s%" PRIu32 "x", n ? ", " : "", job->max_attempts);
    if (job->max_running > 0 && n < len)
        n += (size_t)snprintf(buf + n, len - n, "%smax %" PRIu32, n ? ", " : "", job->max_running);
    if (n == 0)
        snprintf(buf, len, "-");
}

/* "SUCCEEDED 12m ago", the last finished run's state and when it ended. */
static void last_cell(const struct cs_cli_job_view *v, const Csched__V1__Run *run, char *buf,
                      size_t len)
{
    size_t n;

    if (run == NULL) {
        snprintf(buf, len, "-");
        return;
    }
    snprintf(buf, len, "%s ", cs_cli_state_name(run->state));
    for (n = 0; buf[n] != ' '; n++)
        buf[n] = (char)toupper((unsigned char)buf[n]);
    format_when(v, run->ended_unix_ms, buf + n + 1, len - n - 1);
}

static void command_cell(const Csched__V1__Job *job, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    if (job->n_command == 0)
        snprintf(buf, len, "sh -c %s", job->shell);
    for (size_t i = 0; i < job->n_command && used < len - 1; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "", job->command[i]);
}

static void add_row(struct cs_cli_table *t, const struct cs_cli_job_view *v,
                    const struct cs_cli_job_row *r)
{
    const Csched__V1__Job *job = r->job;
    char sched[160], next[48], last[64], running[16], limits[64], cmd[512];

    schedule_cell(job, sched, sizeof(sched));
    if (next_fire_ms(r) > 0)
        format_when(v, next_fire_ms(r), next, sizeof(next));
    else
        snprintf(next, sizeof(next), "-");
    last_cell(v, r->last, last, sizeof(last));
    snprintf(running, sizeof(running), "%" PRIu32, r->running);
    if (!v->wide) {
        cs_cli_table_row(t, (const char *const[]){job->name, sched, job->paused ? "yes" : "no",
                                                  next, last, running});
        return;
    }
    limits_cell(job, limits, sizeof(limits));
    command_cell(job, cmd, sizeof(cmd));
    cs_cli_table_row(t, (const char *const[]){job->name, sched, job->paused ? "yes" : "no", next,
                                              last, running, limits, cmd});
}

/* Cuts the last column's cells, ending them with "...", so that no line is
 * wider than LINE_MAX_COLS (the command is what a person can spare). */
static void fit_last_column(struct cs_cli_table *t)
{
    size_t before = 0, last = t->ncols - 1, room;

    for (size_t c = 0; c < last; c++) {
        size_t w = 0;

        for (size_t r = 0; r < t->nrows; r++) {
            size_t cw = cs_cli_text_width(t->cells[r * t->ncols + c]);
            w = cw > w ? cw : w;
        }
        before += w + 2;
    }
    room = before + COMMAND_MIN_COLS < LINE_MAX_COLS ? LINE_MAX_COLS - before : COMMAND_MIN_COLS;
    for (size_t r = 1; r < t->nrows; r++) {
        char *cell = t->cells[r * t->ncols + last];
        size_t chars = 0, i;

        if (cs_cli_text_width(cell) <= room)
            continue;
        /* Keep room - 3 characters, never half of one. */
        for (i = 0; cell[i] != '\0'; i++) {
            if (((unsigned char)cell[i] & 0xc0) != 0x80 && chars++ == room - 3)
                break;
        }
        memcpy(cell + i, "...", 4);
    }
}

void cs_cli_job_table(struct cs_cli_table *t, struct cs_cli_job_row *rows, size_t n,
                      const struct cs_cli_job_view *v)
{
    enum cs_cli_job_sort key = v->sort;

    qsort_r(rows, n, sizeof(*rows), compare_rows, &key);
    if (v->wide)
        cs_cli_table_init(t, 8, "NAME", "SCHEDULE", "PAUSED", "NEXT", "LAST", "RUNNING", "LIMITS",
                          "COMMAND");
    else
        cs_cli_table_init(t, 6, "NAME", "SCHEDULE", "PAUSED", "NEXT", "LAST", "RUNNING");
    for (size_t i = 0; i < n; i++)
        add_row(t, v, &rows[i]);
    if (v->wide)
        fit_last_column(t);
}
