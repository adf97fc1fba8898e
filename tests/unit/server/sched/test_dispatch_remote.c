/* test_dispatch_remote: attempts the dispatcher places on another
 * replica's machine, through its fixture (fake store and launcher, real
 * loop) and a fake Worker whose calls the test answers in the order it
 * chooses: an end that comes back before its launch is answered is told
 * once the turn that answered the launch is over, never from inside it,
 * and only once. */
#include "csched/v1/worker.pb-c.h"
#include "dispatch_fixture.h"
#include "note.h"
#include "placement.h"

#define PEER "r2"

/* A call to the fake Worker, waiting for the test's answer. */
struct fake_call {
    char method[64];
    cs_remote_done_cb done_cb;
    void *arg;
    bool answered;
};

static struct fake_call calls[16];
static size_t n_calls;

static struct cs_unary *fake_call(void *ctx, const char *target, const char *method,
                                  const ProtobufCMessage *request, int64_t timeout_ms,
                                  cs_remote_done_cb done_cb, void *arg)
{
    (void)ctx;
    (void)target;
    (void)request;
    (void)timeout_ms;
    assert_true(n_calls < CS_ARRAY_LEN(calls));
    struct fake_call *c = &calls[n_calls++];
    (void)snprintf(c->method, sizeof(c->method), "%s", method);
    c->done_cb = done_cb;
    c->arg = arg;
    c->answered = false;
    return (struct cs_unary *)c;
}

static void fake_abandon(struct cs_unary *call)
{
    ((struct fake_call *)call)->answered = true;
}

/* The first call to method not answered yet. */
static struct fake_call *pending(const char *method)
{
    for (size_t i = 0; i < n_calls; i++)
        if (!calls[i].answered && strcmp(calls[i].method, method) == 0)
            return &calls[i];
    fail_msg("no %s call waits for its answer", method);
    return NULL;
}

static void answer(struct fake_call *c, const ProtobufCMessage *reply)
{
    size_t len = protobuf_c_message_get_packed_size(reply);
    uint8_t *bytes = malloc(len ? len : 1);
    assert_non_null(bytes);
    (void)protobuf_c_message_pack(reply, bytes);
    c->answered = true;
    c->done_cb(c->arg, 0, "", bytes, len);
    free(bytes);
}

/* A replica PEER with more room than this machine, so that starts go
 * there, and the fake Worker to reach it. */
static int setup_peer(void **state)
{
    assert_int_equal(setup(state), 0);
    n_calls = 0;
    struct cs_sched *s = &fx.s;
    s->lease_path = "/var/lib/csched/" CS_LEASE_FILE;
    s->remote_call_cb = fake_call;
    s->remote_abandon_cb = fake_abandon;
    Csched__V1__Replica peer = CSCHED__V1__REPLICA__INIT;
    peer.id = PEER;
    peer.state = CSCHED__V1__REPLICA_STATE__REPLICA_STATE_STANDBY;
    peer.address = "127.0.0.1:1";
    peer.max_running = 1000;
    Csched__V1__Replica *peers[] = {&peer};
    cs_placement_update(s, peers, 1);
    return 0;
}

/* Answers the Await c with the end of run_id's first attempt: its command
 * exited 0 after starting at started_ms. */
static void answer_end(struct fake_call *c, int64_t run_id, int64_t started_ms)
{
    Csched__V1__AttemptRef ref = {PROTOBUF_C_MESSAGE_INIT(&csched__v1__attempt_ref__descriptor),
                                  run_id, 1};
    struct cs_note note = {.outcome = CS_NOTE_EXITED, .started_unix_ms = started_ms};
    note.ended_unix_ms = started_ms + 1;
    char text[CS_NOTE_MAX_BYTES];
    int n = cs_note_format(&note, text, sizeof(text));
    assert_true(n > 0);
    Csched__V1__AttemptEnd end = CSCHED__V1__ATTEMPT_END__INIT;
    end.attempt = &ref;
    end.minder_pid = 4242;
    end.note.data = (uint8_t *)text;
    end.note.len = (size_t)n;
    Csched__V1__AttemptEnd *ends[] = {&end};
    Csched__V1__AwaitResponse resp = {
        PROTOBUF_C_MESSAGE_INIT(&csched__v1__await_response__descriptor), 1, ends};
    answer(c, &resp.base);
}

/* Answers the Launch c: run_id's first attempt started at started_ms. */
static void answer_start(struct fake_call *c, int64_t run_id, int64_t started_ms)
{
    Csched__V1__AttemptRef ref = {PROTOBUF_C_MESSAGE_INIT(&csched__v1__attempt_ref__descriptor),
                                  run_id, 1};
    Csched__V1__AttemptStart start = CSCHED__V1__ATTEMPT_START__INIT;
    start.attempt = &ref;
    start.minder_pid = 4242;
    start.started_unix_ms = started_ms;
    Csched__V1__AttemptStart *starts[] = {&start};
    Csched__V1__LaunchResponse resp = {
        PROTOBUF_C_MESSAGE_INIT(&csched__v1__launch_response__descriptor), 1, starts};
    answer(c, &resp.base);
}

static void test_remote_end_before_launch_answer(void **state)
{
    struct cs_job *job = add_job("a", 0, 1, 0);
    int64_t id = trigger(job);
    turn();
    commit(); /* the start, before the launch is sent */
    turn();
    assert_string_equal(run_of(id)->attempt->remote_replica, PEER);
    struct fake_call *launch = pending("/csched.v1.Worker/Launch");
    struct fake_call *await = pending("/csched.v1.Worker/Await");
    int64_t started_ms = cs_now_unix_ms();

    /* The end first: it waits for the launch's answer. */
    answer_end(await, id, started_ms);
    assert_int_equal(run_of(id)->msg->state, ST);

    /* The launch's answer: the attempt runs, and its end is not told from
     * inside that answer, where dispatch still holds the attempt. */
    answer_start(launch, id, started_ms);
    assert_int_equal(run_of(id)->msg->state, RU);

    wait_for(id, 1, OK);
    commit();
    turn();
    assert_string_equal(history(id), START_TO_RUNNING " a1:SUCCEEDED run:SUCCEEDED");
}

/* A Launch whose call failed (the replica was not reached in time, so
 * whether it started is not known) while the attempt's end had come back:
 * the attempt is taken as running, and that end ends it. */
static void test_remote_end_before_launch_failed(void **state)
{
    struct cs_job *job = add_job("a", 0, 1, 0);
    int64_t id = trigger(job);
    turn();
    commit();
    turn();
    struct fake_call *launch = pending("/csched.v1.Worker/Launch");
    answer_end(pending("/csched.v1.Worker/Await"), id, cs_now_unix_ms());
    launch->answered = true;
    launch->done_cb(launch->arg, 4 /* DEADLINE_EXCEEDED */, "deadline exceeded", NULL, 0);
    assert_int_equal(run_of(id)->msg->state, RU);
    wait_for(id, 1, OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_remote_end_before_launch_answer, setup_peer, teardown),
        cmocka_unit_test_setup_teardown(test_remote_end_before_launch_failed, setup_peer, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
