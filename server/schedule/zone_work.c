/* zone_work: zones read on libuv's pool (see zone_work.h). */
#include "zone_work.h"

#include <stdlib.h>

struct cs_zone_read *cs_zone_read_new(const char *dir, size_t n, bool version)
{
    struct cs_zone_read *r = cs_xcalloc(1, sizeof(*r));
    r->work.data = r;
    r->dir = dir;
    r->version = version;
    r->n = n;
    r->names = cs_xcalloc(n > 0 ? n : 1, sizeof(*r->names));
    r->tz = cs_xcalloc(n > 0 ? n : 1, sizeof(*r->tz));
    r->err = cs_xcalloc(n > 0 ? n : 1, sizeof(*r->err));
    return r;
}

void cs_zone_read_free(struct cs_zone_read *r)
{
    for (size_t i = 0; i < r->n; i++)
        cs_tz_free(r->tz[i]);
    free(r->names);
    free(r->tz);
    free(r->err);
    free(r);
}

void cs_zone_read_work(uv_work_t *work)
{
    struct cs_zone_read *r = work->data;
    for (size_t i = 0; i < r->n; i++)
        (void)cs_tzdb_open(r->dir, r->names[i], &r->tz[i], &r->err[i]); /* err says why */
    if (r->version)
        cs_tzdb_version(r->dir, r->data_version, sizeof(r->data_version));
}
