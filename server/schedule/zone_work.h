/* zone_work: time zones read from the tz database on libuv's pool, since
 * reading a zone's file may wait for the disk. The loop fills a record
 * (cs_zone_read_new), queues it with cs_zone_read_work and takes the
 * zones out in the after callback; the record is the pool's from
 * uv_queue_work to that callback, the loop's outside. */
#ifndef CS_ZONE_WORK_H
#define CS_ZONE_WORK_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "tzdb.h"
#include "util.h"

struct cs_zone_read {
    uv_work_t work;                         /* work.data: this record */
    const char *dir;                        /* in: the tz database's directory, borrowed */
    bool version;                           /* in: read the data's version too */
    size_t n;                               /* in: how many zones */
    char (*names)[CS_TZ_NAME_MAX + 1];      /* in: their names */
    struct cs_tz **tz;                      /* out: tz[i] read for names[i], or NULL */
    struct cs_err *err;                     /* out: why tz[i] is NULL */
    char data_version[CS_TZDB_VERSION_MAX]; /* out, with version */
    void *arg;                              /* the loop's, never touched by the pool */
};

/* A record for n zones read from dir, names to be filled in; owned by the
 * caller (cs_zone_read_free). Loop thread. */
struct cs_zone_read *cs_zone_read_new(const char *dir, size_t n, bool version);
/* Frees r and the zones in it not taken out (set tz[i] to NULL to take one). */
void cs_zone_read_free(struct cs_zone_read *r);

/* The pool's side: cs_tzdb_open for each name, and the version when asked. */
void cs_zone_read_work(uv_work_t *work);

#endif
