/* Unit tests of the mailbox: items posted from several threads at once all
 * reach the loop thread exactly once and in each thread's posting order; a
 * drain hands over what waits without the loop; only a post to an empty
 * queue wakes the loop, and a burst past the time slice wakes it again by
 * itself; close calls back; a loop-side function called off the loop
 * thread aborts. A real loop and
 * real threads, no sleeps. */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "mailbox.h"
#include "util.h"

enum { THREADS = 4, PER_THREAD = 5000 };

struct item {
    struct cs_mail mail;
    int thread;
    int seq;
    int seen;
};

struct tally {
    struct item *items; /* THREADS * PER_THREAD */
    int next_seq[THREADS];
    int received;
    int batches;
    int errors;
    char first_error[160];
    pthread_t loop_thread;
    bool wrong_thread;
};

static void note_error(struct tally *t, const char *what, int thread, int want, int got)
{
    if (t->errors++ == 0)
        snprintf(t->first_error, sizeof(t->first_error), "%s (thread %d): expected %d, got %d",
                 what, thread, want, got);
}

/* Loop thread: checks each item against its thread's next sequence number.
 * Errors are counted, not asserted, so the loop is never left by longjmp. */
static void on_mail(struct cs_mailbox *box, struct cs_queue *mails)
{
    struct tally *t = box->data;

    if (!pthread_equal(pthread_self(), t->loop_thread))
        t->wrong_thread = true;
    t->batches++;
    for (struct cs_qlink *m; (m = cs_queue_pop(mails)) != NULL;) {
        struct item *it = CS_CONTAINER_OF(m, struct item, mail.link);
        if (it->thread < 0 || it->thread >= THREADS) {
            note_error(t, "thread index", it->thread, 0, it->thread);
            continue;
        }
        if (it->seq != t->next_seq[it->thread])
            note_error(t, "sequence", it->thread, t->next_seq[it->thread], it->seq);
        t->next_seq[it->thread] = it->seq + 1;
        if (it->seen++ != 0)
            note_error(t, "times seen", it->thread, 1, it->seen);
        t->received++;
    }
}

struct poster {
    struct cs_mailbox *box;
    struct item *items; /* this thread's PER_THREAD items */
};

static void *post_all(void *arg)
{
    struct poster *p = arg;

    for (int i = 0; i < PER_THREAD; i++)
        cs_mailbox_post(p->box, &p->items[i].mail);
    return NULL;
}

static int closed;

static void on_closed(uv_handle_t *handle)
{
    closed++;
}

static void test_mailbox_threads_in_order_once(void **state)
{
    uv_loop_t loop;
    struct cs_mailbox box;
    struct tally t;
    pthread_t threads[THREADS];
    struct poster posters[THREADS];

    memset(&t, 0, sizeof(t));
    t.items = calloc(THREADS * PER_THREAD, sizeof(*t.items));
    assert_non_null(t.items);
    t.loop_thread = pthread_self();
    for (int th = 0; th < THREADS; th++)
        for (int i = 0; i < PER_THREAD; i++) {
            t.items[th * PER_THREAD + i].thread = th;
            t.items[th * PER_THREAD + i].seq = i;
        }

    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(cs_mailbox_init(&loop, &box, on_mail, &t), 0);
    assert_ptr_equal(box.data, &t);
    for (int th = 0; th < THREADS; th++) {
        posters[th].box = &box;
        posters[th].items = &t.items[th * PER_THREAD];
        assert_int_equal(pthread_create(&threads[th], NULL, post_all, &posters[th]), 0);
    }
    /* The poll handle keeps the loop waiting until the last item is in. */
    while (t.received < THREADS * PER_THREAD && t.errors == 0)
        (void)uv_run(&loop, UV_RUN_ONCE);
    for (int th = 0; th < THREADS; th++)
        assert_int_equal(pthread_join(threads[th], NULL), 0);
    /* Anything left (there should be nothing) comes out now. */
    cs_mailbox_drain(&box);

    closed = 0;
    cs_mailbox_close(&box, on_closed);
    assert_ptr_equal(CS_MAILBOX_OF((uv_handle_t *)&box.poll), &box);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(closed, 1);
    assert_int_equal(uv_loop_close(&loop), 0);

    if (t.errors != 0)
        fail_msg("%d errors, the first: %s", t.errors, t.first_error);
    assert_false(t.wrong_thread);
    assert_int_equal(t.received, THREADS * PER_THREAD);
    for (int th = 0; th < THREADS; th++)
        assert_int_equal(t.next_seq[th], PER_THREAD);
    for (int i = 0; i < THREADS * PER_THREAD; i++)
        if (t.items[i].seen != 1)
            fail_msg("item %d of thread %d: expected to be seen once, seen %d times",
                     t.items[i].seq, t.items[i].thread, t.items[i].seen);
    /* Sends coalesce: fewer callbacks than items (at least one). */
    assert_true(t.batches >= 1 && t.batches <= THREADS * PER_THREAD);
    free(t.items);
}

/* A loop and a mailbox on it whose callback is cb, tallying into t. */
static void open_box(uv_loop_t *loop, struct cs_mailbox *box, cs_mailbox_cb cb, struct tally *t)
{
    memset(t, 0, sizeof(*t));
    t->loop_thread = pthread_self();
    assert_int_equal(uv_loop_init(loop), 0);
    assert_int_equal(cs_mailbox_init(loop, box, cb, t), 0);
}

/* Fails on what the callback counted wrong, then closes box and loop. */
static void close_box(uv_loop_t *loop, struct cs_mailbox *box, const struct tally *t)
{
    if (t->errors != 0)
        fail_msg("%d errors, the first: %s", t->errors, t->first_error);
    cs_mailbox_close(box, NULL);
    assert_int_equal(uv_run(loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(loop), 0);
}

/* Posts n items numbered from 0, each with a stale next pointer, which must
 * not leak into the list. */
static void post_numbered(struct cs_mailbox *box, struct item *items, int n)
{
    for (int i = 0; i < n; i++) {
        items[i].seq = i;
        items[i].mail.link.next = &items[0].mail.link;
        cs_mailbox_post(box, &items[i].mail);
    }
}

/* Posts from the loop thread itself, drained before the loop runs: one wake
 * for them all, one batch in posting order, and the loop turn after finds
 * nothing more. */
static void test_mailbox_drain_in_order(void **state)
{
    uv_loop_t loop;
    struct cs_mailbox box;
    struct tally t;
    struct item items[10];

    memset(items, 0, sizeof(items));
    open_box(&loop, &box, on_mail, &t);

    /* Nothing waiting: no callback. */
    cs_mailbox_drain(&box);
    assert_int_equal(t.batches, 0);

    post_numbered(&box, items, 10);
    /* Only the post to the empty queue woke the loop: one wake for ten
     * (read, then put back). */
    uint64_t wakes = 0;
    assert_int_equal(read(box.wake_fd, &wakes, sizeof(wakes)), sizeof(wakes));
    assert_int_equal(wakes, 1);
    assert_int_equal(write(box.wake_fd, &wakes, sizeof(wakes)), sizeof(wakes));
    cs_mailbox_drain(&box);
    assert_int_equal(t.batches, 1);
    assert_int_equal(t.received, 10);
    assert_int_equal(t.next_seq[0], 10);
    assert_null(items[9].mail.link.next);

    /* The wake is still pending: its callback finds an empty list. */
    (void)uv_run(&loop, UV_RUN_NOWAIT);
    assert_int_equal(t.batches, 1);

    /* Posting again after a drain starts a fresh list. */
    items[0].seq = 10;
    items[0].seen = 0;
    cs_mailbox_post(&box, &items[0].mail);
    (void)uv_run(&loop, UV_RUN_NOWAIT);
    assert_int_equal(t.batches, 2);
    assert_int_equal(t.received, 11);
    assert_int_equal(t.next_seq[0], 11);

    close_box(&loop, &box, &t);
}

/* Takes one chunk and then holds the loop past the slice. */
static void on_mail_slowly(struct cs_mailbox *box, struct cs_queue *mails)
{
    on_mail(box, mails);
    int64_t until_ns = cs_now_mono_ns() + CS_MAILBOX_SLICE_NS + 1000;
    while (cs_now_mono_ns() < until_ns)
        ;
}

/* A callback that uses up the slice leaves the rest for later turns, which
 * come without another post: the mailbox wakes itself. */
static void test_mailbox_burst_past_the_slice_continues(void **state)
{
    uv_loop_t loop;
    struct cs_mailbox box;
    struct tally t;
    struct item items[3 * CS_MAILBOX_CHUNK];

    memset(items, 0, sizeof(items));
    open_box(&loop, &box, on_mail_slowly, &t);
    post_numbered(&box, items, 3 * CS_MAILBOX_CHUNK);
    for (int turn = 1; turn <= 3; turn++) {
        (void)uv_run(&loop, UV_RUN_NOWAIT);
        assert_int_equal(t.batches, turn);
        assert_int_equal(t.received, turn * CS_MAILBOX_CHUNK);
    }
    /* Nothing is left, and nothing wakes the loop for it. */
    uint64_t wakes = 0;
    assert_int_equal(read(box.wake_fd, &wakes, sizeof(wakes)), -1);
    close_box(&loop, &box, &t);
}

static void *drain_off_the_loop(void *arg)
{
    cs_mailbox_drain(arg);
    return NULL;
}

/* The thread rule holds in every build: a drain from a thread other than
 * the loop's aborts. In a child process, so that only the child ends. */
static void test_mailbox_drain_off_the_loop_thread_aborts(void **state)
{
    uv_loop_t loop;
    struct cs_mailbox box;
    struct tally t;

    memset(&t, 0, sizeof(t));
    assert_int_equal(uv_loop_init(&loop), 0);
    assert_int_equal(cs_mailbox_init(&loop, &box, on_mail, &t), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* The child's report of the broken rule is expected: keep it out of
         * the test's output. No cmocka assertion here, in the child. */
        int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (null >= 0)
            (void)dup2(null, STDERR_FILENO);
        pthread_t other;
        if (pthread_create(&other, NULL, drain_off_the_loop, &box) == 0)
            (void)pthread_join(other, NULL);
        _exit(0); /* reached only if the assertion did not fire */
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
    assert_int_equal(t.batches, 0);

    cs_mailbox_close(&box, NULL);
    assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* The mailbox's loop-side functions assert that they run on the loop thread:
 * the tests drive the loop on this one. */
static int mark_loop_thread(void **state)
{
    cs_loop_thread_mark();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mailbox_threads_in_order_once),
        cmocka_unit_test(test_mailbox_drain_in_order),
        cmocka_unit_test(test_mailbox_burst_past_the_slice_continues),
        cmocka_unit_test(test_mailbox_drain_off_the_loop_thread_aborts),
    };
    return cmocka_run_group_tests(tests, mark_loop_thread, NULL);
}
