/* hooks: the loop's side of hooks on run outcomes (docs/hooks.md,
 * docs/design/0032-hooks.md). Two halves:
 *
 * - queueing: a run's state change (the sched's run hook) becomes one
 *   delivery row per hook that wants it, written in the same loop turn,
 *   and so the same transaction, as the change itself;
 * - sending, on the active replica only: the head of each job's queue
 *   (its oldest pending delivery) is read when due and handed to the
 *   sender thread (hook_sender.h), or for a command hook to the runner
 *   thread (hook_runner.h) with its minder's launch built here
 *   (hook_command.h); its result comes back through a mailbox
 *   and is written through the store's batch, fenced as every write is.
 *   A job's next delivery is read only once that write has committed:
 *   deliveries go out in order per job, at least once (a restart sends
 *   again what was not recorded delivered).
 *
 * Loop thread only. */
#ifndef CS_HOOKS_H
#define CS_HOOKS_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "csched/v1/scheduler.pb-c.h"
#include "hook_command.h"
#include "mailbox.h"
#include "store.h"

struct cs_hook_sender;
struct cs_hook_runner;

struct cs_hooks_config {
    /* The web console's address, for each body's "console_url"; NULL: none. */
    const char *console_url;
    /* The first retry's wait; each further one doubles it, up to
     * CS_HOOK_RETRY_MAX_MS, less a random part of up to half (jitter). */
    uint32_t retry_base_ms;
    const char *user_agent;
    /* --default-hooks: the hooks every job's runs are told to besides the
     * job's own (hook_defaults.h), borrowed for the hooks' life; NULL:
     * none. */
    const Csched__V1__Job *defaults;
    /* What command hooks' minders are started with (hook_command.h). */
    struct cs_hook_command_config command;
};

#define CS_HOOK_RETRY_MAX_MS (10 * 60 * 1000)
/* Deliveries in flight at most, all jobs together. */
#define CS_HOOKS_INFLIGHT_MAX 256

struct cs_hooks {
    uv_loop_t *loop;
    struct cs_store *store;
    struct cs_hooks_config config;
    char *const *server_env;       /* borrowed, for the sender */
    struct cs_hook_sender *sender; /* NULL until started */
    struct cs_hook_runner *runner; /* command hooks'; NULL until started */
    char *hooks_dir;               /* STATE_DIR/hooks, owned */
    struct cs_mailbox results;
    uv_timer_t timer; /* the next due delivery, or the next look at the queue */
    bool reading;     /* a read of the heads is in flight */
    bool read_again;  /* and something changed since it was sent */
    bool started, stopped;
    int64_t inflight[CS_HOOKS_INFLIGHT_MAX]; /* ids sent or being recorded */
    size_t n_inflight;
};

/* Sets hooks up (not sending yet): 0 or a negative errno. */
int cs_hooks_init(struct cs_hooks *h, uv_loop_t *loop, struct cs_store *store,
                  const struct cs_hooks_config *config, char *const *server_env);
/* Starts sending, once this replica is the active one with its state
 * loaded: 0 or a negative errno (logged). */
int cs_hooks_start(struct cs_hooks *h);
/* Stops sending (requests in flight are dropped; their deliveries stay
 * pending) and closes the handles. Safe if never started. */
void cs_hooks_stop(struct cs_hooks *h);

/* The sched's run hook (sched_state.h): run of spec went to state, or,
 * with slot_skipped, its slot was skipped. Queues the deliveries of the
 * hooks that want it. Borrowed for the call. */
void cs_hooks_run_cb(void *ctx, const Csched__V1__Job *spec, const Csched__V1__Run *run,
                     Csched__V1__RunState state, bool slot_skipped);

#endif
