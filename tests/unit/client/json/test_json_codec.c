/* json_codec: proto3 JSON read back into the messages it was written from,
 * both names of a field, numbers as strings or numbers, enums by name or
 * number; and every refusal naming its field. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "csched/v1/scheduler.pb-c.h"
#include "json_codec.h"

static ProtobufCMessage *read_ok(const char *text, const ProtobufCMessageDescriptor *d)
{
    ProtobufCMessage *m = NULL;
    struct cs_json_error err = {0};
    int rc = cs_json_read_message(text, strlen(text), d, &m, &err);
    if (rc != 0)
        fail_msg("%s: %s %s", text, err.field, err.why);
    return m;
}

static void read_fails(const char *text, const ProtobufCMessageDescriptor *d, const char *field)
{
    ProtobufCMessage *m = (ProtobufCMessage *)1;
    struct cs_json_error err = {0};
    assert_int_equal(cs_json_read_message(text, strlen(text), d, &m, &err), -EINVAL);
    assert_null(m);
    assert_string_equal(err.field, field);
    assert_true(err.why[0] != '\0');
}

static char *write_json(const ProtobufCMessage *m)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cs_json_write_message(f, m);
    fclose(f);
    return text;
}

static void test_json_codec_round_trip(void **state)
{
    const char *in = "{\"name\":\"nightly\",\"command\":[\"/bin/echo\",\"hi\"],"
                     "\"env\":{\"A\":\"1\",\"B\":\"2\"},\"maxRunning\":3,"
                     "\"schedule\":{\"text\":\"0 3 * * *\",\"misfire\":\"MISFIRE_RUN_ALL\"},"
                     "\"secretEnv\":{\"K\":{\"serverEnv\":\"HOME\"}},\"version\":\"7\"}";
    ProtobufCMessage *m = read_ok(in, &csched__v1__job__descriptor);
    char *once = write_json(m);
    ProtobufCMessage *again = read_ok(once, &csched__v1__job__descriptor);
    char *twice = write_json(again);
    assert_string_equal(once, twice);
    Csched__V1__Job *job = (Csched__V1__Job *)again;
    assert_string_equal(job->name, "nightly");
    assert_int_equal(job->n_command, 2);
    assert_int_equal(job->n_env, 2);
    assert_int_equal(job->max_running, 3);
    assert_int_equal(job->version, 7);
    assert_int_equal(job->schedule->misfire, CSCHED__V1__MISFIRE__MISFIRE_RUN_ALL);
    assert_int_equal(job->secret_env[0]->value->source_case,
                     CSCHED__V1__SECRET_REF__SOURCE_SERVER_ENV);
    assert_non_null(strstr(once, "\"version\":\"7\""));
    free(once);
    free(twice);
    protobuf_c_message_free_unpacked(m, NULL);
    protobuf_c_message_free_unpacked(again, NULL);
}

static void test_json_codec_both_names_and_number_forms(void **state)
{
    const char *forms[] = {
        "{\"run_id\":\"42\"}",
        "{\"runId\":42}",
        "{\"runId\":42.0,\"attempt\":null}",
    };
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        Csched__V1__ReadLogsRequest *r = (Csched__V1__ReadLogsRequest *)read_ok(
            forms[i], &csched__v1__read_logs_request__descriptor);
        assert_int_equal(r->run_id, 42);
        protobuf_c_message_free_unpacked(&r->base, NULL);
    }
    Csched__V1__ReadLogsRequest *r = (Csched__V1__ReadLogsRequest *)read_ok(
        "{\"stream\":2}", &csched__v1__read_logs_request__descriptor);
    assert_int_equal(r->stream, CSCHED__V1__LOG_STREAM__LOG_STREAM_STDERR);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    Csched__V1__WatchRequest *w = (Csched__V1__WatchRequest *)read_ok(
        "{\"afterSeq\":\"0\"}", &csched__v1__watch_request__descriptor);
    assert_int_equal(w->start_case, CSCHED__V1__WATCH_REQUEST__START_AFTER_SEQ);
    protobuf_c_message_free_unpacked(&w->base, NULL);
}

static void test_json_codec_refusals_name_the_field(void **state)
{
    static const struct {
        const char *text, *field;
    } refused[] = {
        {"{\"name\":", ""},
        {"[1]", ""},
        {"{\"name\":\"a\",\"name\":\"b\"}", ""},
        {"{\"bogus\":1}", "bogus"},
        {"{\"schedule\":{\"cron\":\"x\"}}", "schedule.cron"},
        {"{\"maxRunning\":\"many\"}", "max_running"},
        {"{\"maxRunning\":-1}", "max_running"},
        {"{\"maxRunning\":4294967296}", "max_running"},
        {"{\"command\":[\"a\",7]}", "command[1]"},
        {"{\"env\":{\"A\":1}}", "env.A"},
        {"{\"paused\":\"yes\"}", "paused"},
        {"{\"schedule\":{\"misfire\":\"MISFIRE_NEVER\"}}", "schedule.misfire"},
        {"{\"max_running\":1,\"maxRunning\":2}", "max_running"},
        {"{\"secretEnv\":{\"K\":{\"file\":\"/a\",\"serverEnv\":\"B\"}}}",
         "secret_env.K.server_env"},
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
        read_fails(refused[i].text, &csched__v1__job__descriptor, refused[i].field);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_codec_round_trip),
        cmocka_unit_test(test_json_codec_both_names_and_number_forms),
        cmocka_unit_test(test_json_codec_refusals_name_the_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
