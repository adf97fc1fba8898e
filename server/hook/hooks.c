/* hooks: queueing deliveries and sending them in order (see hooks.h).
 * Loop thread only. */
#define CS_LOG_COMPONENT "hooks"
#include "hooks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "hook_body.h"
#include "hook_command.h"
#include "hook_runner.h"
#include "hook_sender.h"
#include "hook_spec.h"
#include "log.h"
#include "minder_contract.h"
#include "util.h"

/* Without news, the queue is looked at this often: rows another replica
 * queued before a takeover, a write that failed. */
#define LOOK_MS 5000
/* Heads read at most per look. */
#define READ_LIMIT 256

static void look(struct cs_hooks *h);

/* --- queueing ------------------------------------------------------------ */

static Csched__V1__HookEvent event_of(Csched__V1__RunState state, bool slot_skipped)
{
    if (slot_skipped)
        return CSCHED__V1__HOOK_EVENT__HOOK_EVENT_SLOT_SKIPPED;
    switch (state) {
    case CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING:
        return CSCHED__V1__HOOK_EVENT__HOOK_EVENT_STARTED;
    case CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED:
        return CSCHED__V1__HOOK_EVENT__HOOK_EVENT_SUCCEEDED;
    case CSCHED__V1__RUN_STATE__RUN_STATE_FAILED:
        return CSCHED__V1__HOOK_EVENT__HOOK_EVENT_FAILED;
    case CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT:
        return CSCHED__V1__HOOK_EVENT__HOOK_EVENT_TIMED_OUT;
    case CSCHED__V1__RUN_STATE__RUN_STATE_LOST:
        return CSCHED__V1__HOOK_EVENT__HOOK_EVENT_LOST;
    case CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED:
        return CSCHED__V1__HOOK_EVENT__HOOK_EVENT_CANCELLED;
    default:
        return CSCHED__V1__HOOK_EVENT__HOOK_EVENT_UNSPECIFIED;
    }
}

static bool is_outcome(Csched__V1__HookEvent e)
{
    return e >= CSCHED__V1__HOOK_EVENT__HOOK_EVENT_SUCCEEDED &&
           e <= CSCHED__V1__HOOK_EVENT__HOOK_EVENT_CANCELLED;
}

/* A delivery row has committed: the queue has news. */
static void queued_cb(void *arg, int status)
{
    struct cs_hooks *h = arg;
    if (status == 0 && h->started && !h->stopped)
        look(h);
}

static void queue_one(struct cs_hooks *h, const Csched__V1__Job *spec, const Csched__V1__Hook *hook,
                      const char *name, const Csched__V1__Run *run, Csched__V1__RunState state,
                      Csched__V1__HookEvent event)
{
    char key[256];
    /* One delivery per run, event and hook, whatever repeats it (a run
     * that starts again for a retry, a state a restart records again). */
    (void)snprintf(key, sizeof(key), "r%lld/%s/%s", (long long)run->id, cs_hook_event_name(event),
                   name);
    int64_t now = cs_now_unix_ms();
    struct cs_hook_body b = {key, name, event, run, now, h->config.console_url};
    char *body = cs_hook_body_new(&b);
    char *command = cs_hook_is_command(hook) ? cs_hook_command_new(spec, hook, &b) : NULL;
    /* A command hook has none. */
    static const Csched__V1__SecretRef no_secret = CSCHED__V1__SECRET_REF__INIT;
    const Csched__V1__SecretRef *s = hook->secret != NULL ? hook->secret : &no_secret;
    struct cs_store_hook_new d = {
        .dedup_key = key,
        .job_name = run->job_name,
        .hook_name = name,
        .event = event,
        .run_id = run->id,
        .url = hook->url,
        .secret_file = s->source_case == CSCHED__V1__SECRET_REF__SOURCE_FILE ? s->file : "",
        .secret_env =
            s->source_case == CSCHED__V1__SECRET_REF__SOURCE_SERVER_ENV ? s->server_env : "",
        .ca_file = hook->ca_file,
        .timeout_ms = cs_hook_timeout_ms(hook),
        .max_attempts = cs_hook_max_attempts(hook),
        .body = body,
        .created_unix_ms = now,
        .changed_only = hook->when == CSCHED__V1__HOOK_WHEN__HOOK_WHEN_CHANGED && is_outcome(event),
        .outcome_state = state,
        .command = command,
    };
    cs_store_hook_put(h->store, &d, queued_cb, h);
    free(body);
    free(command);
}

void cs_hooks_run_cb(void *ctx, const Csched__V1__Job *spec, const Csched__V1__Run *run,
                     Csched__V1__RunState state, bool slot_skipped)
{
    struct cs_hooks *h = ctx;
    CS_ASSERT_LOOP();
    Csched__V1__HookEvent event = event_of(state, slot_skipped);
    if (event == CSCHED__V1__HOOK_EVENT__HOOK_EVENT_UNSPECIFIED)
        return;
    char name[CS_HOOK_NAME_MAX + 16], buf[32];
    for (size_t i = 0; i < spec->n_hooks; i++)
        if (cs_hook_wants(spec->hooks[i], event))
            queue_one(h, spec, spec->hooks[i], cs_hook_name(spec->hooks[i], i, buf, sizeof(buf)),
                      run, state, event);
    /* The server's own hooks, named apart from the job's ("default.NAME"). */
    const Csched__V1__Job *defaults = h->config.defaults;
    for (size_t i = 0; defaults != NULL && i < defaults->n_hooks; i++) {
        if (!cs_hook_wants(defaults->hooks[i], event))
            continue;
        (void)snprintf(name, sizeof(name), "default.%s",
                       cs_hook_name(defaults->hooks[i], i, buf, sizeof(buf)));
        queue_one(h, spec, defaults->hooks[i], name, run, state, event);
    }
}

/* --- sending ------------------------------------------------------------- */

static bool inflight_has(const struct cs_hooks *h, int64_t id)
{
    for (size_t i = 0; i < h->n_inflight; i++)
        if (h->inflight[i] == id)
            return true;
    return false;
}

static void inflight_drop(struct cs_hooks *h, int64_t id)
{
    for (size_t i = 0; i < h->n_inflight; i++)
        if (h->inflight[i] == id) {
            h->inflight[i] = h->inflight[--h->n_inflight];
            return;
        }
}

static void timer_cb(uv_timer_t *timer)
{
    look(timer->data);
}

static void arm(struct cs_hooks *h, int64_t wait_ms)
{
    if (wait_ms < 0)
        wait_ms = 0;
    CS_ASSERT(uv_timer_start(&h->timer, timer_cb, (uint64_t)wait_ms, 0) == 0);
}

static void record(struct cs_hooks *h, struct cs_hook_post *post);

/* Hands post to its thread: the sender, or for a command hook the runner
 * with its minder's launch; a launch that cannot be built is a failed
 * attempt, recorded at once. */
static void submit(struct cs_hooks *h, struct cs_hook_post *post, int64_t now)
{
    if (post->due.command[0] == '\0') {
        cs_hook_sender_submit(h->sender, post);
        return;
    }
    struct cs_err err = {0};
    if (cs_hook_command_launch(&h->config.command, &post->due, now, &post->launch, &err) == 0) {
        cs_hook_runner_submit(h->runner, post);
        return;
    }
    (void)snprintf(post->error, sizeof(post->error), "%s", err.msg);
    record(h, post);
    cs_hook_post_free(post);
}

static void due_cb(void *arg, int status, struct cs_store_hook_due *due, size_t n)
{
    struct cs_hooks *h = arg;
    h->reading = false;
    if (h->stopped) {
        cs_store_hook_due_free(due, n);
        return;
    }
    int64_t now = cs_now_unix_ms(), wait_ms = LOOK_MS;
    for (size_t i = 0; status == 0 && i < n; i++) {
        if (inflight_has(h, due[i].id))
            continue;
        if (due[i].next_unix_ms > now) {
            if (due[i].next_unix_ms - now < wait_ms)
                wait_ms = due[i].next_unix_ms - now;
            continue;
        }
        if (h->n_inflight == CS_HOOKS_INFLIGHT_MAX)
            break; /* a result coming back looks again */
        struct cs_hook_post *post = cs_xcalloc(1, sizeof(*post));
        post->due = due[i];
        memset(&due[i], 0, sizeof(due[i])); /* moved */
        h->inflight[h->n_inflight++] = post->due.id;
        submit(h, post, now);
    }
    cs_store_hook_due_free(due, n);
    if (h->read_again) {
        h->read_again = false;
        look(h);
        return;
    }
    arm(h, wait_ms);
}

/* Reads the heads of the jobs' queues; one read at a time, and one more
 * after it when news came meanwhile. */
static void look(struct cs_hooks *h)
{
    if (h->stopped || !h->started)
        return;
    if (h->reading) {
        h->read_again = true;
        return;
    }
    if (!cs_store_is_active(h->store)) {
        arm(h, LOOK_MS);
        return;
    }
    h->reading = true;
    cs_store_hook_due_list(h->store, READ_LIMIT, due_cb, h);
}

static uint32_t draw_random(void)
{
    uint32_t value;
    if (getrandom(&value, sizeof(value), GRND_NONBLOCK) == (ssize_t)sizeof(value))
        return value;
    return (uint32_t)uv_hrtime() * 2654435761u;
}

/* The wait before attempt attempts + 1: base doubling, capped, less a
 * random part of up to half of it, so that the deliveries of many jobs to
 * one endpoint that was down do not all come back at once. */
static int64_t backoff_ms(const struct cs_hooks *h, uint32_t attempts)
{
    int64_t d = h->config.retry_base_ms;
    for (uint32_t i = 1; i < attempts && d < CS_HOOK_RETRY_MAX_MS; i++)
        d *= 2;
    if (d > CS_HOOK_RETRY_MAX_MS)
        d = CS_HOOK_RETRY_MAX_MS;
    return d - (int64_t)((double)(d / 2) * ((double)draw_random() / 4294967296.0));
}

struct recorded {
    struct cs_hooks *hooks;
    int64_t id;
};

/* A result is in the database: the job's next delivery may go. */
static void recorded_cb(void *arg, int status)
{
    struct recorded *r = arg;
    struct cs_hooks *h = r->hooks;
    if (!h->stopped) {
        inflight_drop(h, r->id);
        look(h);
    }
    free(r);
}

static void record(struct cs_hooks *h, struct cs_hook_post *post)
{
    const struct cs_store_hook_due *d = &post->due;
    int64_t now = cs_now_unix_ms();
    struct cs_store_hook_result r = {
        .id = d->id,
        .attempts = d->attempts + 1,
        .response_code = (int32_t)post->response_code,
        .last_error = post->error,
        .last_unix_ms = now,
        .exit_code = post->exit_code,
        .term_signal = post->term_signal,
        .stdout_tail = post->stdout_tail,
        .stderr_tail = post->stderr_tail,
    };
    /* A command is delivered when it exited 0 (no error), a webhook on a
     * 2xx answer. */
    bool ok = d->command[0] != '\0' ? post->ran && post->error[0] == '\0'
                                    : post->response_code >= 200 && post->response_code <= 299;
    if (ok) {
        r.status = CSCHED__V1__HOOK_DELIVERY_STATUS__HOOK_DELIVERY_STATUS_DELIVERED;
    } else if (r.attempts >= d->max_attempts) {
        r.status = CSCHED__V1__HOOK_DELIVERY_STATUS__HOOK_DELIVERY_STATUS_FAILED;
        cs_log_warn("hook %s of job %s: delivery %lld given up after %u attempts: %s", d->hook_name,
                    d->job_name, (long long)d->id, r.attempts, post->error);
    } else {
        r.status = CSCHED__V1__HOOK_DELIVERY_STATUS__HOOK_DELIVERY_STATUS_PENDING;
        r.next_unix_ms = now + backoff_ms(h, r.attempts);
    }
    struct recorded *rec = cs_xmalloc(sizeof(*rec));
    *rec = (struct recorded){h, d->id};
    cs_store_hook_update(h->store, &r, recorded_cb, rec);
}

static void results_cb(struct cs_mailbox *box, struct cs_queue *mails)
{
    struct cs_hooks *h = box->data;
    struct cs_qlink *link;
    while ((link = cs_queue_pop(mails)) != NULL) {
        struct cs_hook_post *post = CS_CONTAINER_OF(link, struct cs_hook_post, mail.link);
        if (!h->stopped)
            record(h, post);
        cs_hook_post_free(post);
    }
}

int cs_hooks_init(struct cs_hooks *h, uv_loop_t *loop, struct cs_store *store,
                  const struct cs_hooks_config *config, char *const *server_env)
{
    CS_ASSERT_LOOP();
    memset(h, 0, sizeof(*h));
    h->loop = loop;
    h->store = store;
    h->config = *config;
    if (h->config.retry_base_ms == 0)
        h->config.retry_base_ms = 1000;
    h->server_env = server_env;
    if (h->config.command.state_dir != NULL) {
        size_t cap = strlen(h->config.command.state_dir) + sizeof(CS_HOOKS_DIR) + 1;
        h->hooks_dir = cs_xmalloc(cap);
        (void)snprintf(h->hooks_dir, cap, "%s/%s", h->config.command.state_dir, CS_HOOKS_DIR);
    }
    int rc = cs_mailbox_init(loop, &h->results, results_cb, h);
    if (rc != 0)
        return rc;
    CS_ASSERT(uv_timer_init(loop, &h->timer) == 0);
    h->timer.data = h;
    return 0;
}

int cs_hooks_start(struct cs_hooks *h)
{
    CS_ASSERT_LOOP();
    int rc = cs_hook_sender_start(&h->sender, &h->results, h->server_env, h->config.user_agent);
    if (rc != 0)
        return rc;
    rc = cs_hook_runner_start(&h->runner, &h->results, h->config.command.minder_path, h->hooks_dir);
    if (rc != 0) {
        cs_hook_sender_stop(h->sender);
        h->sender = NULL;
        return rc;
    }
    h->started = true;
    look(h);
    return 0;
}

void cs_hooks_stop(struct cs_hooks *h)
{
    CS_ASSERT_LOOP();
    if (h->loop == NULL || h->stopped)
        return;
    h->stopped = true;
    cs_hook_sender_stop(h->sender);
    h->sender = NULL;
    cs_hook_runner_stop(h->runner);
    h->runner = NULL;
    free(h->hooks_dir);
    h->hooks_dir = NULL;
    cs_mailbox_drain(&h->results);
    cs_mailbox_close(&h->results, NULL);
    uv_close((uv_handle_t *)&h->timer, NULL);
}
