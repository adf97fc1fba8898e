/* runas: the loop's half of the run-as check at CreateJob and UpdateJob: a
 * probe handed to libuv's pool (runas_work.c does the lookups) and its
 * result handed back. Loop thread only. */
#include "runas.h"

#include <errno.h>
#include <stdlib.h>

static void checked_cb(uv_work_t *work, int status)
{
    struct cs_runas_probe *p = work->data;
    if (status != 0) /* uv_cancel: never called on these */
        (void)cs_err_set(&p->err, -ECANCELED, "the run-as check was cancelled");
    p->done_cb(p->arg, &p->err);
    free(p->user);
    free(p->group);
    free(p);
}

void cs_runas_check(uv_loop_t *loop, const char *user, const char *group, const char *default_user,
                    cs_runas_checked_cb done_cb, void *arg)
{
    CS_ASSERT_LOOP();
    struct cs_runas_probe *p = cs_xcalloc(1, sizeof(*p));
    p->work.data = p;
    p->user = cs_xstrdup(user);
    p->group = cs_xstrdup(group);
    p->default_user = default_user;
    p->done_cb = done_cb;
    p->arg = arg;
    /* Only an invalid argument fails. */
    CS_ASSERT(uv_queue_work(loop, &p->work, cs_runas_check_work, checked_cb) == 0);
}
