/* job_schedule: a job's Schedule message checked and parsed into the
 * struct cs_schedule the loop keeps with the job, the time zones those
 * borrow (read once per zone name, off the loop, and shared by every job),
 * and the next fire times GetJob shows. Loop thread; parsing and next fires
 * cost microseconds. */
#ifndef CS_JOB_SCHEDULE_H
#define CS_JOB_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "csched/v1/scheduler.pb-c.h"
#include "heap.h"
#include "next_turn.h"
#include "schedule.h"
#include "tzdb.h"
#include "util.h"

/* Limits on a Schedule's numbers. */
#define CS_SCHEDULE_JITTER_MAX_S 3600
#define CS_SCHEDULE_CATCHUP_MAX 1000
#define CS_SCHEDULE_CATCHUP_DEFAULT 10
#define CS_SCHEDULE_DEADLINE_MAX_S (7 * 24 * 3600)
/* How many next fire times GetJob shows, unless asked for up to the most. */
#define CS_JOB_NEXT_FIRES 5
#define CS_JOB_NEXT_FIRES_MAX 20

/* The zones read so far from the tz database in dir, sorted by name (a few
 * hundred names at most). A zone is kept until cs_zones_free, or until a
 * reread of the database swaps in its new table (zone_load.h). */
struct cs_zones {
    struct cs_tz **tz;
    size_t n, cap;
    const char *dir;                   /* the tz database's directory, borrowed (config) */
    char version[CS_TZDB_VERSION_MAX]; /* of the data last read: GetStats, the metrics */
};

/* Where a job's schedule stands (slots.c): every slot up to after_s has
 * been decided; next_s is the next one, due at due_ms (jitter added), while
 * the job sits in the due heap, to be looked at from look_ms on (due_ms,
 * or CS_SLOT_LEAD_MS before it when its run may be made ahead). */
struct cs_slot_state {
    int64_t after_s;
    int64_t next_s;
    int64_t due_ms;
    int64_t look_ms;
    size_t heap_index; /* in cs_slots.due, or CS_NOT_IN_HEAP */
};

/* The slot engine's state (slots.c): one timer for the earliest due slot of
 * every job, whatever their number. */
struct cs_slots {
    struct cs_heap due; /* of struct cs_job, by slot.look_ms */
    uv_timer_t timer;
    struct cs_next_turn more; /* more were due than one turn decides */
    bool on;                  /* the newest slots are read back: slots are decided */
    int64_t start_ms;         /* this server's start: slots due before were missed */
};

/* Frees every zone: no schedule may borrow one after this. */
void cs_zones_free(struct cs_zones *zones);

/* Checks spec->schedule and parses it into *out (malloc'd, the caller's,
 * freed with free(); its zone borrowed from zones), or NULL when the job
 * has no schedule (absent, or an empty text with no other field set). 0,
 * or -EINVAL / -ENOMEM with err naming the field ("job.schedule.text:
 * field 3 (day of month): ..."), or -EAGAIN when its zone is not in zones:
 * read it off the loop (zone_load.h) and parse again. */
int cs_job_schedule_parse(const struct cs_zones *zones, const Csched__V1__Job *spec,
                          struct cs_schedule **out, struct cs_err *err);

/* The zone called name in zones, or NULL. */
const struct cs_tz *cs_zones_find(const struct cs_zones *zones, const char *name);
/* Adds tz (taking ownership) to zones; one of the same name already there
 * stays, and tz is freed. */
void cs_zones_add(struct cs_zones *zones, struct cs_tz *tz);
/* Puts tz (taking ownership) in zones in place of the zone of its name,
 * and returns that one (NULL when there was none): the caller's, to free
 * once no schedule borrows it. */
struct cs_tz *cs_zones_swap(struct cs_zones *zones, struct cs_tz *tz);

/* The fire times after after_s of s as FireTime messages: fills out[0..n)
 * (each local_time pointing into text[i]) and returns how many. */
size_t cs_job_next_fires(const struct cs_schedule *s, int64_t after_s, Csched__V1__FireTime *out,
                         char (*text)[40], size_t n);

#endif
