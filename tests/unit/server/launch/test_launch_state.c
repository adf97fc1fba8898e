/* Unit tests of a launch's state machine (server/launch/launch_state.h):
 * every event in every state, each state reached from CS_LAUNCH_NEW by the
 * transitions listed here: those listed lead where the list says, every
 * other one is refused and leaves the state as it was. The list is the
 * launcher's life written out once more, so that a change of the table
 * shows here as a change of this list. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "launcher.h"

#define N_STATES CS_LAUNCH_NSTATES
#define N_EVENTS CS_LAUNCH_NEVENTS

static const char *const state_names[N_STATES] = {
    [CS_LAUNCH_NEW] = "NEW",
    [CS_LAUNCH_QUEUED] = "QUEUED",
    [CS_LAUNCH_TAKEN] = "TAKEN",
    [CS_LAUNCH_MADE] = "MADE",
    [CS_LAUNCH_SYNCED] = "SYNCED",
    [CS_LAUNCH_RESOLVED] = "RESOLVED",
    [CS_LAUNCH_REVOKING] = "REVOKING",
    [CS_LAUNCH_HELD] = "HELD",
    [CS_LAUNCH_HELD_UNRESOLVED] = "HELD_UNRESOLVED",
    [CS_LAUNCH_ARMED] = "ARMED",
    [CS_LAUNCH_RELEASED] = "RELEASED",
    [CS_LAUNCH_START_SYNC] = "START_SYNC",
    [CS_LAUNCH_START_USER] = "START_USER",
    [CS_LAUNCH_START_SECRETS] = "START_SECRETS",
    [CS_LAUNCH_START_MINDER] = "START_MINDER",
    [CS_LAUNCH_START_WATCH] = "START_WATCH",
    [CS_LAUNCH_STARTED] = "STARTED",
    [CS_LAUNCH_FAILED] = "FAILED",
    [CS_LAUNCH_TAKEN_BACK] = "TAKEN_BACK",
};

static const char *const event_names[N_EVENTS] = {
    [CS_LAUNCH_EV_SUBMIT] = "SUBMIT",
    [CS_LAUNCH_EV_TAKE] = "TAKE",
    [CS_LAUNCH_EV_DIR_MADE] = "DIR_MADE",
    [CS_LAUNCH_EV_DIR_SYNCED] = "DIR_SYNCED",
    [CS_LAUNCH_EV_USER_RESOLVED] = "USER_RESOLVED",
    [CS_LAUNCH_EV_HOLD] = "HOLD",
    [CS_LAUNCH_EV_ARM] = "ARM",
    [CS_LAUNCH_EV_RELEASE] = "RELEASE",
    [CS_LAUNCH_EV_GO] = "GO",
    [CS_LAUNCH_EV_SECRETS_SET] = "SECRETS_SET",
    [CS_LAUNCH_EV_MINDER_UP] = "MINDER_UP",
    [CS_LAUNCH_EV_WATCHED] = "WATCHED",
    [CS_LAUNCH_EV_FAIL] = "FAIL",
    [CS_LAUNCH_EV_REVOKE] = "REVOKE",
};

struct transition {
    enum cs_launch_state from;
    enum cs_launch_event event;
    enum cs_launch_state to;
};

#define T(from, event, to)                                                                         \
    {                                                                                              \
        CS_LAUNCH_##from, CS_LAUNCH_EV_##event, CS_LAUNCH_##to                                     \
    }

/* Every transition allowed; any other (state, event) is refused. */
static const struct transition allowed[] = {
    /* submitted, and taken by a thread or back */
    T(NEW, SUBMIT, QUEUED),
    T(QUEUED, TAKE, TAKEN),
    T(QUEUED, REVOKE, TAKEN_BACK),
    /* its directory made and synced, who it runs as resolved ahead */
    T(TAKEN, DIR_MADE, MADE),
    T(TAKEN, FAIL, FAILED),
    T(TAKEN, REVOKE, REVOKING),
    T(MADE, DIR_SYNCED, SYNCED),
    T(MADE, GO, START_SYNC),
    T(MADE, FAIL, FAILED),
    T(MADE, REVOKE, REVOKING),
    T(SYNCED, USER_RESOLVED, RESOLVED),
    T(SYNCED, HOLD, HELD_UNRESOLVED),
    T(SYNCED, GO, START_USER),
    T(SYNCED, FAIL, FAILED),
    T(SYNCED, REVOKE, REVOKING),
    T(RESOLVED, HOLD, HELD),
    T(RESOLVED, GO, START_SECRETS),
    T(RESOLVED, REVOKE, REVOKING),
    /* taken back while a thread has it */
    T(REVOKING, DIR_MADE, REVOKING),
    T(REVOKING, DIR_SYNCED, REVOKING),
    T(REVOKING, USER_RESOLVED, REVOKING),
    T(REVOKING, FAIL, FAILED),
    T(REVOKING, REVOKE, REVOKING),
    /* held, armed, released */
    T(HELD, ARM, ARMED),
    T(HELD, GO, START_SECRETS),
    T(HELD, REVOKE, TAKEN_BACK),
    T(HELD_UNRESOLVED, GO, START_USER),
    T(HELD_UNRESOLVED, REVOKE, TAKEN_BACK),
    T(ARMED, RELEASE, RELEASED),
    T(ARMED, REVOKE, TAKEN_BACK),
    T(RELEASED, GO, START_SECRETS),
    /* started step by step */
    T(START_SYNC, DIR_SYNCED, SYNCED),
    T(START_SYNC, FAIL, FAILED),
    T(START_USER, USER_RESOLVED, START_SECRETS),
    T(START_USER, FAIL, FAILED),
    T(START_SECRETS, SECRETS_SET, START_MINDER),
    T(START_SECRETS, FAIL, FAILED),
    T(START_MINDER, MINDER_UP, START_WATCH),
    T(START_MINDER, FAIL, FAILED),
    T(START_WATCH, WATCHED, STARTED),
    T(START_WATCH, FAIL, FAILED),
};

#define N_ALLOWED (sizeof(allowed) / sizeof(allowed[0]))

/* Where event leads from state by the list; -1: refused. */
static int expected(enum cs_launch_state state, enum cs_launch_event event)
{
    for (size_t i = 0; i < N_ALLOWED; i++)
        if (allowed[i].from == state && allowed[i].event == event)
            return (int)allowed[i].to;
    return -1;
}

/* For each state, the transition of the list that first reaches it from
 * CS_LAUNCH_NEW (breadth first): its way there, walked backwards. */
static int reached_by[N_STATES];

static void find_ways(void)
{
    enum cs_launch_state todo[N_STATES];
    size_t head = 0, tail = 0;
    for (int s = 0; s < N_STATES; s++)
        reached_by[s] = -1;
    reached_by[CS_LAUNCH_NEW] = (int)N_ALLOWED; /* the start: no transition */
    todo[tail++] = CS_LAUNCH_NEW;
    while (head < tail) {
        enum cs_launch_state from = todo[head++];
        for (size_t i = 0; i < N_ALLOWED; i++) {
            if (allowed[i].from != from || reached_by[allowed[i].to] >= 0)
                continue;
            reached_by[allowed[i].to] = (int)i;
            todo[tail++] = allowed[i].to;
        }
    }
}

/* A launch as the loop builds it (CS_LAUNCH_NEW), brought to state by the
 * transitions of its way, each checked. */
static struct cs_launch *launch_in(enum cs_launch_state state)
{
    enum cs_launch_event way[N_STATES];
    size_t n = 0;
    for (enum cs_launch_state s = state; s != CS_LAUNCH_NEW; s = allowed[reached_by[s]].from)
        way[n++] = allowed[reached_by[s]].event;
    struct cs_launch *launch = calloc(1, sizeof(*launch));
    assert_non_null(launch);
    while (n > 0) {
        enum cs_launch_event event = way[--n];
        enum cs_launch_state from = cs_launch_state(launch);
        assert_int_equal(cs_launch_apply(launch, event), 0);
        assert_int_equal(cs_launch_state(launch), expected(from, event));
    }
    assert_int_equal(cs_launch_state(launch), state);
    return launch;
}

static void test_launch_state_every_state_reached(void **state)
{
    (void)state;
    find_ways();
    for (int s = 0; s < N_STATES; s++)
        if (reached_by[s] < 0)
            fail_msg("state %s cannot be reached from NEW", state_names[s]);
}

static void test_launch_state_every_transition(void **state)
{
    (void)state;
    find_ways();
    for (int s = 0; s < N_STATES; s++) {
        for (int e = 0; e < N_EVENTS; e++) {
            struct cs_launch *launch = launch_in((enum cs_launch_state)s);
            int want = expected((enum cs_launch_state)s, (enum cs_launch_event)e);
            int rc = cs_launch_apply(launch, (enum cs_launch_event)e);
            int got = (int)cs_launch_state(launch);
            if (want >= 0 && (rc != 0 || got != want))
                fail_msg("%s in %s: want %s, got rc %d and %s", event_names[e], state_names[s],
                         state_names[want], rc, state_names[got]);
            if (want < 0 && (rc != -EPERM || got != s))
                fail_msg("%s in %s: want it refused, got rc %d and %s", event_names[e],
                         state_names[s], rc, state_names[got]);
            free(launch);
        }
    }
}

/* A failure keeps its reason, the only writer of the launch's results. */
static void test_launch_state_fail_keeps_reason(void **state)
{
    (void)state;
    find_ways();
    struct cs_launch *launch = launch_in(CS_LAUNCH_START_MINDER);
    cs_launch_fail(launch, -ENOENT, "posix_spawn(%s) failed: %s", "/nowhere", strerror(ENOENT));
    assert_int_equal(cs_launch_state(launch), CS_LAUNCH_FAILED);
    assert_int_equal(launch->err, -ENOENT);
    assert_string_equal(launch->message, "posix_spawn(/nowhere) failed: No such file or directory");
    free(launch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_launch_state_every_state_reached),
        cmocka_unit_test(test_launch_state_every_transition),
        cmocka_unit_test(test_launch_state_fail_keeps_reason),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
