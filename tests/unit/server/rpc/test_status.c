/* Unit tests of status.c: the one table from our negative errno codes to
 * gRPC status codes, and INTERNAL for everything it does not name; the
 * field path cs_err_set finds in a message, and the bytes of the
 * google.rpc.Status that status_details.c sends with it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "status.h"
#include "status_details.h"
#include "util.h"

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
        {-EMFILE, GRPC_STATUS_RESOURCE_EXHAUSTED},
        {-ENFILE, GRPC_STATUS_RESOURCE_EXHAUSTED},
        {-ENOTCONN, GRPC_STATUS_UNAVAILABLE},
        {-EACCES, GRPC_STATUS_PERMISSION_DENIED},
        {-EPERM, GRPC_STATUS_UNAUTHENTICATED},
        {-ECANCELED, GRPC_STATUS_CANCELLED},
        {-ESTALE, GRPC_STATUS_ABORTED},
        {-ERANGE, GRPC_STATUS_OUT_OF_RANGE},
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

/* cs_err_set names the field a message begins with, and only a path. */
static void test_err_field_path(void **state)
{
    (void)state;
    static const struct {
        const char *msg, *field;
    } cases[] = {
        {"job.retry.multiplier: 0.5 is below 1", "job.retry.multiplier"},
        {"job.command[2] is 9000 bytes; the limit is 8192", "job.command[2]"},
        {"job.labels[\"a b\"] is longer than 256 bytes", "job.labels[\"a b\"]"},
        {"job.labels keys must be 1 to 63 bytes long", "job.labels"},
        {"job.shell", "job.shell"},
        {"job is required", ""},
        {"the request carried no message", ""},
        {"Job.name: upper case", ""},
        {"job.name\"x\" is bad", ""},
        {"job.command[2 is cut", ""},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cs_err err;
        assert_int_equal(cs_err_set(&err, -EINVAL, "%s", cases[i].msg), -EINVAL);
        assert_string_equal(err.field, cases[i].field);
        assert_string_equal(err.msg, cases[i].msg);
    }
}

/* The bytes of a google.rpc.Status, worked out by hand from the wire
 * format: code 3; message "m"; details [Any{type_url, BadRequest{
 * [FieldViolation{"a.b", "m"}]}}]. */
static void test_status_details_bytes(void **state)
{
    (void)state;
    static const char url[] = "type.googleapis.com/google.rpc.BadRequest";
    unsigned char want[128];
    size_t n = 0;
    const unsigned char head[] = {0x08, 0x03, 0x12, 0x01, 'm', 0x1a, 2 + 41 + 2 + 10, 0x0a, 41};
    memcpy(want + n, head, sizeof(head));
    n += sizeof(head);
    memcpy(want + n, url, 41);
    n += 41;
    const unsigned char tail[] = {0x12, 10, 0x0a, 8, 0x0a, 3, 'a', '.', 'b', 0x12, 0x01, 'm'};
    memcpy(want + n, tail, sizeof(tail));
    n += sizeof(tail);

    grpc_slice got = cs_status_details_pack(GRPC_STATUS_INVALID_ARGUMENT, "m", "a.b");
    assert_int_equal(GRPC_SLICE_LENGTH(got), n);
    assert_memory_equal(GRPC_SLICE_START_PTR(got), want, n);
    grpc_slice_unref(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_table),
        cmocka_unit_test(test_status_unknown_is_internal),
        cmocka_unit_test(test_status_positive_is_internal),
        cmocka_unit_test(test_err_field_path),
        cmocka_unit_test(test_status_details_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
