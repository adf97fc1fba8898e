/* dir_check: the loop's side of checking that the state dir can be written:
 * the timer, one probe at a time handed to the pool (dir_check_work.c), and
 * what a result that changed says in the log. Loop thread only. */
#define CS_LOG_COMPONENT "dir_check"
#include "dir_check.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "minder_contract.h"
#include "util.h"

static void timer_cb(uv_timer_t *timer);

static void report(struct cs_dir_check *c, const struct cs_dir_probe *p)
{
    if (p->status == c->status)
        return;
    if (p->status != 0)
        cs_log_error("the state dir cannot be written (%s %s: %s): health is NOT_SERVING "
                     "until it can",
                     p->step, p->path, strerror(-p->status));
    else
        cs_log_info("the state dir %s can be written again", c->dir);
    c->status = p->status;
    c->changed_cb(c->arg, c->status);
}

static void probe_done_cb(uv_work_t *work, int status)
{
    struct cs_dir_probe *p = work->data;
    struct cs_dir_check *c = p->owner;
    if (c != NULL) {
        c->probe = NULL;
        if (status == 0 && cs_dir_probe_conclusive(p))
            report(c, p);
        CS_ASSERT(uv_timer_start(&c->timer, timer_cb, CS_DIR_CHECK_EVERY_MS, 0) == 0);
    }
    free(p);
}

static void timer_cb(uv_timer_t *timer)
{
    struct cs_dir_check *c = timer->data;
    struct cs_dir_probe *p = cs_xcalloc(1, sizeof(*p));
    p->owner = c;
    (void)snprintf(p->path, sizeof(p->path), "%s/%s", c->dir, CS_DIR_CHECK_FILE);
    p->work.data = p;
    c->probe = p;
    /* Only an invalid argument fails. */
    CS_ASSERT(uv_queue_work(timer->loop, &p->work, cs_dir_check_work, probe_done_cb) == 0);
}

int cs_dir_check_start(struct cs_dir_check *c, uv_loop_t *loop, const char *state_dir,
                       cs_dir_check_cb changed_cb, void *arg)
{
    CS_ASSERT_LOOP();
    memset(c, 0, sizeof(*c));
    int n = snprintf(c->dir, sizeof(c->dir), "%s/%s", state_dir, CS_ATTEMPTS_DIR);
    if (n < 0 || (size_t)n >= sizeof(c->dir))
        return -ENAMETOOLONG;
    c->changed_cb = changed_cb;
    c->arg = arg;
    int rc = uv_timer_init(loop, &c->timer);
    if (rc != 0)
        return rc;
    c->timer.data = c;
    /* Fails only for a closing handle or a NULL callback. */
    CS_ASSERT(uv_timer_start(&c->timer, timer_cb, 0, 0) == 0);
    return 0;
}

void cs_dir_check_stop(struct cs_dir_check *c)
{
    CS_ASSERT_LOOP();
    if (c->changed_cb == NULL)
        return;
    if (c->probe != NULL)
        c->probe->owner = NULL;
    c->probe = NULL;
    c->changed_cb = NULL;
    uv_close((uv_handle_t *)&c->timer, NULL);
}
