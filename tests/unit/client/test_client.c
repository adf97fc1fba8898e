/* Unit tests of libcsched's core where it has logic of its own: status
 * names and records, deadlines, message packing, argument checks, security
 * options. No server: a client connects only when a call is made. */
#include <ctype.h>
#include <errno.h>
#include <grpc/support/time.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "call.h"
#include "csched/scheduler.h"

static void test_client_status_names(void **state)
{
    assert_string_equal(cs_status_code_name(0), "OK");
    assert_string_equal(cs_status_code_name(5), "NOT_FOUND");
    assert_string_equal(cs_status_code_name(6), "ALREADY_EXISTS");
    assert_string_equal(cs_status_code_name(14), "UNAVAILABLE");
    assert_string_equal(cs_status_code_name(16), "UNAUTHENTICATED");
    assert_string_equal(cs_status_code_name(17), "UNKNOWN_CODE");
    assert_string_equal(cs_status_code_name(-1), "UNKNOWN_CODE");
}

/* Every value of the proto's RunState has its short name. */
static void test_client_run_state_names(void **state)
{
    const ProtobufCEnumDescriptor *d = &csched__v1__run_state__descriptor;

    for (unsigned i = 0; i < d->n_values; i++) {
        char want[64];
        size_t j;

        for (j = 0; d->values[i].name[j + 10] != '\0' && j < sizeof(want) - 1; j++)
            want[j] = (char)tolower((unsigned char)d->values[i].name[j + 10]);
        want[j] = '\0';
        assert_string_equal(cs_run_state_name(d->values[i].value), want);
    }
    assert_string_equal(cs_run_state_name(4), "succeeded");
    assert_string_equal(cs_run_state_name(99), "unknown");
    assert_string_equal(cs_run_state_name(-1), "unknown");
}

static void test_client_status_records(void **state)
{
    struct cs_status st;
    char big[1000];

    memset(big, 'x', sizeof(big));
    cs__status_from_grpc(&st, GRPC_STATUS_NOT_FOUND, grpc_slice_from_static_buffer(big, 1000),
                         NULL);
    assert_int_equal(st.code, 5);
    assert_int_equal(strlen(st.message), sizeof(st.message) - 1);

    cs__status_from_grpc(&st, GRPC_STATUS_UNAVAILABLE, grpc_empty_slice(), "connect failed");
    assert_string_equal(st.message, "connect failed");
    cs__status_from_grpc(&st, GRPC_STATUS_OK, grpc_empty_slice(), "ignored on OK");
    assert_string_equal(st.message, "");
    cs__status_from_grpc(NULL, GRPC_STATUS_OK, grpc_empty_slice(), NULL);

    assert_int_equal(cs__status_local(&st, -ENOMEM, "request"), -ENOMEM);
    assert_int_equal(st.code, GRPC_STATUS_RESOURCE_EXHAUSTED);
    assert_int_equal(cs__status_local(&st, -EINVAL, "request"), -EINVAL);
    assert_int_equal(st.code, GRPC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(st.message, "request"));
}

static void test_client_deadlines(void **state)
{
    struct cs_call_opts opts = {0};
    gpr_timespec now, d;

    assert_int_equal(cs__call_deadline(NULL, 0, &d), 0);
    assert_int_equal(gpr_time_cmp(d, gpr_inf_future(d.clock_type)), 0);
    now = gpr_now(GPR_CLOCK_MONOTONIC);
    assert_int_equal(cs__call_deadline(NULL, 30000, &d), 0);
    assert_true(gpr_time_to_millis(gpr_time_sub(d, now)) >= 29000);
    assert_true(gpr_time_to_millis(gpr_time_sub(d, now)) <= 31000);
    opts.timeout_ms = 250;
    assert_int_equal(cs__call_deadline(&opts, 30000, &d), 0);
    assert_true(gpr_time_to_millis(gpr_time_sub(d, now)) <= 1250);
    opts.timeout_ms = -1;
    assert_int_equal(cs__call_deadline(&opts, 30000, &d), -EINVAL);

    assert_int_equal(cs__call_md_flags(NULL), 0);
    opts.wait_for_ready = true;
    assert_true(cs__call_md_flags(&opts) & GRPC_INITIAL_METADATA_WAIT_FOR_READY);
}

static void test_client_pack_unpack(void **state)
{
    Csched__V1__GetJobRequest req = CSCHED__V1__GET_JOB_REQUEST__INIT;
    Csched__V1__GetRunRequest other = CSCHED__V1__GET_RUN_REQUEST__INIT;
    Csched__V1__GetJobRequest *back;
    grpc_byte_buffer *buf;

    req.name = "nightly";
    assert_int_equal(cs__message_pack(&csched__v1__get_job_request__descriptor, &req.base, &buf),
                     0);
    assert_int_equal(cs__message_unpack(&csched__v1__get_job_request__descriptor, buf,
                                        (ProtobufCMessage **)&back),
                     0);
    assert_string_equal(back->name, "nightly");
    csched__v1__get_job_request__free_unpacked(back, NULL);
    grpc_byte_buffer_destroy(buf);

    /* NULL is the empty message. */
    assert_int_equal(cs__message_pack(&csched__v1__get_stats_request__descriptor, NULL, &buf), 0);
    assert_int_equal(grpc_byte_buffer_length(buf), 0);
    grpc_byte_buffer_destroy(buf);

    /* A message of another type is refused. */
    assert_int_equal(cs__message_pack(&csched__v1__get_job_request__descriptor, &other.base, &buf),
                     -EINVAL);
}

static void test_client_unpack_garbage(void **state)
{
    /* Field 1 as a length-delimited string that claims more bytes than follow. */
    static const char bad[] = "\x0a\x7f"
                              "abc";
    grpc_slice slice = grpc_slice_from_static_buffer(bad, 5);
    grpc_byte_buffer *buf = grpc_raw_byte_buffer_create(&slice, 1);
    ProtobufCMessage *msg = (void *)1;

    assert_int_equal(cs__message_unpack(&csched__v1__get_job_request__descriptor, buf, &msg),
                     -EPROTO);
    assert_null(msg);
    grpc_byte_buffer_destroy(buf);
}

static void test_client_argument_checks(void **state)
{
    Csched__V1__GetRunRequest wrong = CSCHED__V1__GET_RUN_REQUEST__INIT;
    struct cs_call_opts opts = {.timeout_ms = -5};
    struct cs_call_opts wait = {.wait_for_ready = true};
    struct cs_client *client = (void *)1;
    Csched__V1__WatchResponse *ev = (void *)1;
    Csched__V1__Job *job = (void *)1;
    struct cs_stream *stream;
    struct cs_status st;

    assert_int_equal(cs_client_new(NULL, &client), -EINVAL);
    assert_null(client);
    assert_int_equal(cs_client_new("", &client), -EINVAL);
    assert_int_equal(cs_client_new("127.0.0.1:1", NULL), -EINVAL);
    assert_int_equal(cs_client_new("127.0.0.1:1", &client), 0);

    assert_int_equal(cs_scheduler_get_job(client, (void *)&wrong, &job, NULL, &st), -EINVAL);
    assert_null(job);
    assert_int_equal(st.code, GRPC_STATUS_INVALID_ARGUMENT);
    assert_int_equal(cs_scheduler_get_job(client, NULL, &job, &opts, &st), -EINVAL);
    assert_int_equal(cs_scheduler_get_job(client, NULL, NULL, NULL, NULL), -EINVAL);
    assert_int_equal(cs_scheduler_get_job(NULL, NULL, &job, NULL, NULL), -EINVAL);
    assert_int_equal(cs_scheduler_watch(client, NULL, &stream, &opts, &st), -EINVAL);
    assert_int_equal(cs_scheduler_watch_next(NULL, &ev, &st), -EINVAL);
    assert_null(ev);

    /* A stream read as another method's stream is refused; freeing an
     * open stream that never read anything cancels it. Waiting for ready
     * keeps the unreachable address from ending the call first. */
    assert_int_equal(cs_scheduler_watch(client, NULL, &stream, &wait, &st), 0);
    assert_int_equal(cs_scheduler_read_logs_next(stream, (Csched__V1__LogChunk **)(void *)&ev, &st),
                     -EINVAL);
    cs_stream_cancel(stream);
    assert_int_equal(cs_scheduler_watch_next(stream, &ev, &st), 0);
    assert_int_equal(st.code, GRPC_STATUS_CANCELLED);
    cs_stream_free(stream);
    assert_int_equal(cs_scheduler_watch(client, NULL, &stream, NULL, &st), 0);
    cs_stream_free(stream);
    cs_stream_free(NULL);
    cs_client_free(client);
    cs_client_free(NULL);
}

/* cs_client_new_opts: what it refuses before any connection, and TLS
 * clients made from files it can read. */
static void test_client_security_opts(void **state)
{
    char path[] = "/tmp/cs-client-pem-XXXXXX";
    struct cs_client *c = (struct cs_client *)1;
    struct cs_client_opts opts = {0};
    int fd = mkstemp(path);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, "not PEM, found at the first call\n", 33), 33);
    close(fd);
    /* All NULL: plaintext, as cs_client_new. */
    assert_int_equal(cs_client_new_opts("127.0.0.1:1", &opts, &c), 0);
    cs_client_free(c);
    opts.cert_file = path;
    assert_int_equal(cs_client_new_opts("127.0.0.1:1", &opts, &c), -EINVAL);
    assert_null(c);
    opts = (struct cs_client_opts){.token = ""};
    assert_int_equal(cs_client_new_opts("127.0.0.1:1", &opts, &c), -EINVAL);
    opts = (struct cs_client_opts){.ca_file = "/nonexistent/ca.pem"};
    assert_int_equal(cs_client_new_opts("127.0.0.1:1", &opts, &c), -ENOENT);
    opts =
        (struct cs_client_opts){.ca_file = path, .cert_file = path, .key_file = path, .token = "t"};
    assert_int_equal(cs_client_new_opts("127.0.0.1:1", &opts, &c), 0);
    cs_client_free(c);
    /* The token alone: TLS with the system's roots. */
    opts = (struct cs_client_opts){.token = "t"};
    assert_int_equal(cs_client_new_opts("127.0.0.1:1", &opts, &c), 0);
    cs_client_free(c);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_client_run_state_names), cmocka_unit_test(test_client_status_names),
        cmocka_unit_test(test_client_status_records),  cmocka_unit_test(test_client_deadlines),
        cmocka_unit_test(test_client_pack_unpack),     cmocka_unit_test(test_client_unpack_garbage),
        cmocka_unit_test(test_client_argument_checks), cmocka_unit_test(test_client_security_opts),
    };
    int rc;

    /* The record and packing helpers use gRPC slices without a client. */
    grpc_init();
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    grpc_shutdown_blocking();
    return rc;
}
