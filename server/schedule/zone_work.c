/* zone_work: cs_tz_open on libuv's pool (see zone_work.h). */
#include "zone_work.h"

void cs_zone_open_work(uv_work_t *work)
{
    struct cs_zone_open *z = work->data;
    z->rc = cs_tz_open(z->name, &z->tz, &z->err);
}
