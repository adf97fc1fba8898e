/* zone_work: a time zone opened on libuv's pool. ICU reads its data when a
 * zone is first opened, too long for the loop on a CreateJob
 * (docs/design/0026-time-zones-opened-off-the-loop.md): the loop hands the
 * name over, the pool opens it, and the after callback (on the loop) adds
 * it to the zone cache. The record is the
 * pool's from uv_queue_work to the after callback, the loop's outside. */
#ifndef CS_ZONE_WORK_H
#define CS_ZONE_WORK_H

#include <uv.h>

#include "tz.h"
#include "util.h"

struct cs_zone_open {
    uv_work_t work;                /* work.data: this record */
    char name[CS_TZ_NAME_MAX + 1]; /* in: the zone's name */
    struct cs_tz *tz;              /* out: the zone, or NULL */
    int rc;                        /* out: 0, or -errno with err */
    struct cs_err err;
};

/* The pool's side: cs_tz_open(name). */
void cs_zone_open_work(uv_work_t *work);

#endif
