/* grpc_locks: after cs_grpc_locks_unchecked, two gRPC mutexes taken in
 * both orders (a cycle in abseil's lock-order graph, though one thread can
 * never deadlock on it) do not end the process; before it, an abseil that
 * checks lock orders ends it, which shows the switch is what keeps it alive. */
#include <grpc/support/sync.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "grpc_locks.h"

/* A then B, then B then A. */
static void lock_both_orders(void)
{
    gpr_mu a, b;

    gpr_mu_init(&a);
    gpr_mu_init(&b);
    gpr_mu_lock(&a);
    gpr_mu_lock(&b);
    gpr_mu_unlock(&b);
    gpr_mu_unlock(&a);
    gpr_mu_lock(&b);
    gpr_mu_lock(&a);
    gpr_mu_unlock(&a);
    gpr_mu_unlock(&b);
    gpr_mu_destroy(&a);
    gpr_mu_destroy(&b);
}

/* How a child that locks both ways ends, with or without the switch. */
static int child_status(int unchecked)
{
    int status;
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (pid == 0) {
        /* The abort's report would only clutter the test's output. */
        if (freopen("/dev/null", "w", stderr) == NULL)
            _exit(3);
        if (unchecked)
            cs_grpc_locks_unchecked();
        lock_both_orders();
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

static void test_cycle_survives_when_unchecked(void **state)
{
    (void)state;
    int status = child_status(1);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_cycle_ends_a_checking_abseil(void **state)
{
    (void)state;
    int status = child_status(0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        fprintf(stderr, "this abseil does not check lock orders (built with NDEBUG): "
                        "nothing to switch off\n");
        skip();
    }
    assert_true(WIFSIGNALED(status));
}

static void test_twice_is_harmless(void **state)
{
    (void)state;
    cs_grpc_locks_unchecked();
    cs_grpc_locks_unchecked();
    lock_both_orders();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cycle_survives_when_unchecked),
        cmocka_unit_test(test_cycle_ends_a_checking_abseil),
        cmocka_unit_test(test_twice_is_harmless),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
