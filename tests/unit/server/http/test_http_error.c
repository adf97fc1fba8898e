/* Unit tests of http_error.c: Connect's name and HTTP status for every
 * gRPC code, and the error JSON of a status whose details are the
 * google.rpc.BadRequest gRPC sends (status_details.c), read back with
 * jansson. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>
#include <jansson.h>

#include "http_error.h"
#include "status_details.h"

static void test_http_error_connect_table(void **state)
{
    static const struct {
        grpc_status_code code;
        const char *name;
        unsigned http;
    } rows[] = {
        {GRPC_STATUS_CANCELLED, "canceled", 499},
        {GRPC_STATUS_UNKNOWN, "unknown", 500},
        {GRPC_STATUS_INVALID_ARGUMENT, "invalid_argument", 400},
        {GRPC_STATUS_DEADLINE_EXCEEDED, "deadline_exceeded", 504},
        {GRPC_STATUS_NOT_FOUND, "not_found", 404},
        {GRPC_STATUS_ALREADY_EXISTS, "already_exists", 409},
        {GRPC_STATUS_PERMISSION_DENIED, "permission_denied", 403},
        {GRPC_STATUS_RESOURCE_EXHAUSTED, "resource_exhausted", 429},
        {GRPC_STATUS_FAILED_PRECONDITION, "failed_precondition", 400},
        {GRPC_STATUS_ABORTED, "aborted", 409},
        {GRPC_STATUS_OUT_OF_RANGE, "out_of_range", 400},
        {GRPC_STATUS_UNIMPLEMENTED, "unimplemented", 501},
        {GRPC_STATUS_INTERNAL, "internal", 500},
        {GRPC_STATUS_UNAVAILABLE, "unavailable", 503},
        {GRPC_STATUS_DATA_LOSS, "data_loss", 500},
        {GRPC_STATUS_UNAUTHENTICATED, "unauthenticated", 401},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        assert_string_equal(cs_http_error_code_name(rows[i].code), rows[i].name);
        assert_int_equal(cs_http_error_status(rows[i].code), rows[i].http);
    }
    assert_string_equal(cs_http_error_code_name((grpc_status_code)99), "unknown");
    assert_int_equal(cs_http_error_status((grpc_status_code)99), 500);
}

static json_t *error_json(grpc_status_code code, const char *message, const grpc_slice *details)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cs_http_error_write(f, code, message, details ? GRPC_SLICE_START_PTR(*details) : NULL,
                        details ? GRPC_SLICE_LENGTH(*details) : 0);
    fclose(f);
    json_t *j = json_loads(text, 0, NULL);
    assert_non_null(j);
    free(text);
    return j;
}

static void test_http_error_bad_request_detail(void **state)
{
    grpc_slice d = cs_status_details_pack(GRPC_STATUS_INVALID_ARGUMENT,
                                          "job.name is empty \"quoted\"", "job.name");
    json_t *j = error_json(GRPC_STATUS_INVALID_ARGUMENT, "job.name is empty \"quoted\"", &d);
    assert_string_equal(json_string_value(json_object_get(j, "code")), "invalid_argument");
    assert_string_equal(json_string_value(json_object_get(j, "message")),
                        "job.name is empty \"quoted\"");
    json_t *detail = json_array_get(json_object_get(j, "details"), 0);
    assert_string_equal(json_string_value(json_object_get(detail, "type")),
                        "google.rpc.BadRequest");
    const char *value = json_string_value(json_object_get(detail, "value"));
    assert_non_null(value);
    assert_null(strchr(value, '=')); /* Connect's base64 is unpadded */
    json_t *v =
        json_array_get(json_object_get(json_object_get(detail, "debug"), "fieldViolations"), 0);
    assert_string_equal(json_string_value(json_object_get(v, "field")), "job.name");
    json_decref(j);
    grpc_slice_unref(d);
}

static void test_http_error_without_details(void **state)
{
    json_t *j = error_json(GRPC_STATUS_NOT_FOUND, "job x does not exist", NULL);
    assert_int_equal(json_array_size(json_object_get(j, "details")), 0);
    json_decref(j);
    /* Bytes that are not a google.rpc.Status give no detail, not a crash. */
    grpc_slice junk = grpc_slice_from_static_string("\x1a\xff\xff\xff");
    j = error_json(GRPC_STATUS_INTERNAL, "x", &junk);
    assert_int_equal(json_array_size(json_object_get(j, "details")), 0);
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http_error_connect_table),
        cmocka_unit_test(test_http_error_bad_request_detail),
        cmocka_unit_test(test_http_error_without_details),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
