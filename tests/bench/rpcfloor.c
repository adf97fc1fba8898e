/* csched-bench-rpcfloor: the floor of line API, the RPC layer with nothing
 * behind it. It serves one unary method, /csched.v1.Scheduler/GetRun, on a
 * unix socket through the same gRPC C core as cschedd, registered the same
 * way (the request read with the call), and answers each call with an empty
 * Run from the one thread that drives its one completion queue: no bridge to
 * a loop, no handler, no store. The benchmark calls it with libcsched's
 * cs_scheduler_get_run, as it calls cschedd. Like cschedd it leads its
 * session (the benchmark spawns it so) and sets that session to nice -20,
 * cschedd's default --nice, so that both sides have the same share of the
 * CPU against the client threads.
 *
 * Usage: csched-bench-rpcfloor unix:PATH
 * Runs until it is killed, or its parent exits. */
#include <fcntl.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "grpc_locks.h"

/* Calls requested at once: more than the benchmark's client threads. */
enum { SLOTS = 64 };

struct slot {
    grpc_call *call;
    gpr_timespec deadline;
    grpc_metadata_array metadata;
    grpc_byte_buffer *payload;
    int cancelled;
    int answering; /* 0: waiting for a call; 1: the answer is on its way */
};

static grpc_server *server;
static grpc_completion_queue *cq;
static void *method;
static grpc_byte_buffer *empty_reply;

static void request_call(struct slot *s)
{
    s->answering = 0;
    s->call = NULL;
    s->payload = NULL;
    grpc_metadata_array_init(&s->metadata);
    if (grpc_server_request_registered_call(server, method, &s->call, &s->deadline, &s->metadata,
                                            &s->payload, cq, cq, s) != GRPC_CALL_OK) {
        fprintf(stderr, "csched-bench-rpcfloor: cannot request a call\n");
        exit(1);
    }
}

/* answer sends the empty Run and OK in one batch, and waits for the close. */
static void answer(struct slot *s)
{
    grpc_op ops[4] = {0};

    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = empty_reply;
    ops[2].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[2].data.send_status_from_server.status = GRPC_STATUS_OK;
    ops[3].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    ops[3].data.recv_close_on_server.cancelled = &s->cancelled;
    s->answering = 1;
    if (grpc_call_start_batch(s->call, ops, 4, s, NULL) != GRPC_CALL_OK) {
        fprintf(stderr, "csched-bench-rpcfloor: cannot answer a call\n");
        exit(1);
    }
}

/* done releases the slot's call (if any) and requests the next one. */
static void done(struct slot *s)
{
    if (s->call != NULL)
        grpc_call_unref(s->call);
    if (s->payload != NULL)
        grpc_byte_buffer_destroy(s->payload);
    grpc_metadata_array_destroy(&s->metadata);
    request_call(s);
}

/* The session's nice value, as cschedd's priority.c sets its own. */
static void set_session_nice(void)
{
    int fd = open("/proc/self/autogroup", O_WRONLY | O_CLOEXEC);

    if (fd < 0 || write(fd, "-20", 3) != 3)
        fprintf(stderr, "csched-bench-rpcfloor: cannot set the session to nice -20\n");
    if (fd >= 0)
        close(fd);
}

int main(int argc, char **argv)
{
    static struct slot slots[SLOTS];

    if (argc != 2) {
        fprintf(stderr, "usage: csched-bench-rpcfloor unix:PATH\n");
        return 2;
    }
    /* Gone with the benchmark, even when it fails. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() == 1)
        return 1;
    set_session_nice();
    /* gRPC's locks as cschedd has them, so that the floor is the same core. */
    cs_grpc_locks_unchecked();
    grpc_init();
    grpc_slice none = grpc_empty_slice();
    empty_reply = grpc_raw_byte_buffer_create(&none, 1);
    cq = grpc_completion_queue_create_for_next(NULL);
    server = grpc_server_create(NULL, NULL);
    grpc_server_register_completion_queue(server, cq, NULL);
    method = grpc_server_register_method(server, "/csched.v1.Scheduler/GetRun", NULL,
                                         GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
    grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
    int port = grpc_server_add_http2_port(server, argv[1], creds);
    grpc_server_credentials_release(creds);
    if (port == 0) {
        fprintf(stderr, "csched-bench-rpcfloor: cannot listen on %s\n", argv[1]);
        return 1;
    }
    grpc_server_start(server);
    for (int i = 0; i < SLOTS; i++)
        request_call(&slots[i]);
    for (;;) {
        grpc_event ev = grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
        if (ev.type != GRPC_OP_COMPLETE)
            break;
        struct slot *s = ev.tag;
        /* A call answered, or one that failed before its answer: next. */
        if (s->answering || !ev.success)
            done(s);
        else
            answer(s);
    }
    return 0;
}
