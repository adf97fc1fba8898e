/* hook_sender: the thread that makes hook deliveries' HTTP requests, with
 * libcurl's multi interface, so that many endpoints are waited on at once
 * and a slow or dead one holds up nothing but its own request (the loop
 * sends a job's next delivery only after the one before it is done).
 *
 * The loop hands it posts (cs_hook_sender_submit) and gets each back,
 * with its result filled in, through the mailbox given at start. The
 * secret is read on this thread, at each attempt, as cschedd's own user;
 * it lives only in the thread's stack and the HMAC. Never touches the
 * database or loop-owned memory. */
#ifndef CS_HOOK_SENDER_H
#define CS_HOOK_SENDER_H

#include <stdbool.h>
#include <stdint.h>

#include "launcher.h"
#include "mailbox.h"
#include "store.h"

/* What ListHookDeliveries keeps of each stream of a command hook. */
#define CS_HOOK_TAIL_BYTES 2048

/* One attempt of one delivery: owned by the loop, then by the sender
 * from submit until it is posted back. */
struct cs_hook_post {
    struct cs_mail mail;
    struct cs_hook_post *next; /* the sender's queue */
    struct cs_store_hook_due due;
    /* The result: the HTTP status (0: no answer) and, when it is not
     * 2xx, why, for a person (never the secret). */
    long response_code;
    char error[256];
    /* A command hook's (hook_runner.h): the minder's launch, built on the
     * loop (NULL for a webhook), and how the command ended: ran is set
     * once it exited or was killed, with the code or the signal, and the
     * last CS_HOOK_TAIL_BYTES of each stream. */
    struct cs_launch *launch;
    bool ran;
    int exit_code, term_signal;
    char stdout_tail[CS_HOOK_TAIL_BYTES + 1], stderr_tail[CS_HOOK_TAIL_BYTES + 1];
};

struct cs_hook_sender;

/* Starts the thread (loop thread, once at start): results go to results;
 * server_env is cschedd's environment at start (secret references by
 * variable), borrowed until stop; user_agent is copied. 0 or a negative
 * errno. */
int cs_hook_sender_start(struct cs_hook_sender **out, struct cs_mailbox *results,
                         char *const *server_env, const char *user_agent);
/* Any thread: takes post and wakes the thread. */
void cs_hook_sender_submit(struct cs_hook_sender *sender, struct cs_hook_post *post);
/* Loop thread: stops the thread (requests in flight are dropped: their
 * deliveries stay pending in the database) and frees it; NULL is a no-op. */
void cs_hook_sender_stop(struct cs_hook_sender *sender);
void cs_hook_post_free(struct cs_hook_post *post);

#endif
