/* zone_load: the zones the jobs' schedules use, read from the tz database
 * off the loop (zone_work.h) into sched->zones: at start those the stored
 * jobs name, before their schedules are parsed; for a CreateJob or
 * UpdateJob a zone no job uses yet; and on SIGHUP every zone again, with
 * the data's version, so that a tzdata update applies without a restart.
 * A reread zone whose table changed takes the old table's place, and each
 * job in it has its next fire computed on the new data. Loop thread. */
#ifndef CS_ZONE_LOAD_H
#define CS_ZONE_LOAD_H

#include <stdbool.h>
#include <uv.h>

#include "sched_state.h"

/* A load's end: status 0 when the zones are in sched->zones; otherwise
 * err says why (status -ECANCELED: cschedd is stopping). */
typedef void (*cs_zone_load_cb)(void *arg, int status, const struct cs_err *err);

/* At start: reads the zones the jobs of specs (borrowed until cb) name, and
 * the data's version, into sched->zones; then cb(arg, 0, NULL), or
 * -ECANCELED. A zone that cannot be read is logged with the reason; its
 * jobs then do not fire (cs_api_jobs_restore logs them) until a SIGHUP
 * finds it. */
void cs_zone_load_start(struct cs_sched *sched, Csched__V1__Job *const *specs, size_t n,
                        cs_zone_load_cb cb, void *arg);

/* Reads the zone called name into sched->zones; then cb(arg, 0, NULL), or
 * cb(arg, rc, err) when it cannot be read (`unknown time zone "Mars/Base"`). */
void cs_zone_load_one(struct cs_sched *sched, const char *name, cs_zone_load_cb cb, void *arg);

/* The SIGHUP watch. Owned by cschedd's main, which outlives any reread. */
struct cs_zone_reload {
    struct cs_sched *sched;
    uv_signal_t sighup;
    bool watching; /* sighup is open */
    bool reading;  /* a reread is on the pool */
    bool again;    /* a SIGHUP came during it: read once more */
};

/* Watches SIGHUP: each rereads every zone in sched->zones, and those of
 * jobs that do not fire for want of theirs. 0, or a negative errno
 * (libuv's). */
int cs_zone_reload_start(struct cs_zone_reload *r, struct cs_sched *sched);
/* Stops watching; a reread on the pool ends without changing anything. */
void cs_zone_reload_stop(struct cs_zone_reload *r);

#endif
