/* Unit tests of status.c: the one table from our negative errno codes to
 * gRPC status codes, and INTERNAL for everything it does not name. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "status.h"

static void test_status_table(void **state)
{
    static const struct {
        int code;
        grpc_status_code want;
    } cases[] = {
        {0, GRPC_STATUS_OK},
        {-ENOENT, GRPC_STATUS_NOT_FOUND},
        {-EEXIST, GRPC_STATUS_ALREADY_EXISTS},
        {-EINVAL, GRPC_STATUS_INVALID_ARGUMENT},
        {-EBUSY, GRPC_STATUS_FAILED_PRECONDITION},
        {-EAGAIN, GRPC_STATUS_RESOURCE_EXHAUSTED},
        {-ENOTCONN, GRPC_STATUS_UNAVAILABLE},
        {-EACCES, GRPC_STATUS_PERMISSION_DENIED},
        {-EPERM, GRPC_STATUS_UNAUTHENTICATED},
        {-ECANCELED, GRPC_STATUS_CANCELLED},
        {-ESTALE, GRPC_STATUS_ABORTED},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        grpc_status_code got = cs_status_from_errno(cases[i].code);
        if (got != cases[i].want)
            fail_msg("cs_status_from_errno(%d): expected %d, got %d", cases[i].code,
                     (int)cases[i].want, (int)got);
    }
}

static void test_status_unknown_is_internal(void **state)
{
    static const int others[] = {-EIO, -ENOMEM, -ENOSPC, -ETIMEDOUT, -ECONNREFUSED, -4095};

    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
        assert_int_equal(cs_status_from_errno(others[i]), GRPC_STATUS_INTERNAL);
}

/* The codes are negative; a positive errno is a caller's mistake and must not
 * pass for the outcome it names. */
static void test_status_positive_is_internal(void **state)
{
    assert_int_equal(cs_status_from_errno(ENOENT), GRPC_STATUS_INTERNAL);
    assert_int_equal(cs_status_from_errno(EINVAL), GRPC_STATUS_INTERNAL);
    assert_int_equal(cs_status_from_errno(EAGAIN), GRPC_STATUS_INTERNAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_table),
        cmocka_unit_test(test_status_unknown_is_internal),
        cmocka_unit_test(test_status_positive_is_internal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
