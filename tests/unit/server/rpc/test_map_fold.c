/* map_fold: keys sent twice keep their last value, once, in the order of
 * their last occurrence; maps inside a held message (a Job inside its
 * request) are folded too; messages without a map, or with a key only
 * once, are left as they are. Run under the sanitizers, the entries
 * dropped are freed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "csched/v1/scheduler.pb-c.h"
#include "grpc/reflection/v1/reflection.pb-c.h"
#include "map_fold.h"

/* A message packed as a client would send it, with the entries as given
 * (duplicates included), unpacked as cschedd does. */
static ProtobufCMessage *round_trip(const ProtobufCMessage *m)
{
    size_t len = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = malloc(len);
    assert_non_null(buf);
    protobuf_c_message_pack(m, buf);
    ProtobufCMessage *out = protobuf_c_message_unpack(m->descriptor, NULL, len, buf);
    free(buf);
    assert_non_null(out);
    return out;
}

static void test_job_env_and_labels_last_wins(void **state)
{
    (void)state;
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__Job__EnvEntry e[4] = {
        CSCHED__V1__JOB__ENV_ENTRY__INIT, CSCHED__V1__JOB__ENV_ENTRY__INIT,
        CSCHED__V1__JOB__ENV_ENTRY__INIT, CSCHED__V1__JOB__ENV_ENTRY__INIT};
    Csched__V1__Job__EnvEntry *ep[4] = {&e[0], &e[1], &e[2], &e[3]};
    Csched__V1__Job__LabelsEntry l[2] = {CSCHED__V1__JOB__LABELS_ENTRY__INIT,
                                         CSCHED__V1__JOB__LABELS_ENTRY__INIT};
    Csched__V1__Job__LabelsEntry *lp[2] = {&l[0], &l[1]};
    Csched__V1__CreateJobRequest req = CSCHED__V1__CREATE_JOB_REQUEST__INIT;

    e[0].key = "A", e[0].value = "first";
    e[1].key = "B", e[1].value = "b";
    e[2].key = "A", e[2].value = "last";
    e[3].key = "C", e[3].value = "c";
    l[0].key = "team", l[0].value = "x";
    l[1].key = "team", l[1].value = "y";
    job.name = "j";
    job.n_env = 4, job.env = ep;
    job.n_labels = 2, job.labels = lp;
    req.job = &job;

    Csched__V1__CreateJobRequest *got = (Csched__V1__CreateJobRequest *)round_trip(&req.base);
    assert_int_equal(got->job->n_env, 4);
    cs_map_fold(&got->base);
    assert_int_equal(got->job->n_env, 3);
    assert_string_equal(got->job->env[0]->key, "B");
    assert_string_equal(got->job->env[1]->key, "A");
    assert_string_equal(got->job->env[1]->value, "last");
    assert_string_equal(got->job->env[2]->key, "C");
    assert_int_equal(got->job->n_labels, 1);
    assert_string_equal(got->job->labels[0]->value, "y");
    protobuf_c_message_free_unpacked(&got->base, NULL);
}

static void test_trigger_env_and_no_duplicates(void **state)
{
    (void)state;
    Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    Csched__V1__TriggerJobRequest__EnvEntry e[3] = {
        CSCHED__V1__TRIGGER_JOB_REQUEST__ENV_ENTRY__INIT,
        CSCHED__V1__TRIGGER_JOB_REQUEST__ENV_ENTRY__INIT,
        CSCHED__V1__TRIGGER_JOB_REQUEST__ENV_ENTRY__INIT};
    Csched__V1__TriggerJobRequest__EnvEntry *ep[3] = {&e[0], &e[1], &e[2]};

    e[0].key = "X", e[0].value = "1";
    e[1].key = "Y", e[1].value = "2";
    e[2].key = "Z", e[2].value = "3";
    req.job_name = "j";
    req.n_env = 3, req.env = ep;
    Csched__V1__TriggerJobRequest *got = (Csched__V1__TriggerJobRequest *)round_trip(&req.base);
    cs_map_fold(&got->base);
    assert_int_equal(got->n_env, 3);
    assert_string_equal(got->env[0]->key, "X");
    assert_string_equal(got->env[2]->value, "3");
    /* Every entry the same key: one is left, the last. */
    e[0].key = e[1].key = e[2].key = "X";
    protobuf_c_message_free_unpacked(&got->base, NULL);
    got = (Csched__V1__TriggerJobRequest *)round_trip(&req.base);
    cs_map_fold(&got->base);
    assert_int_equal(got->n_env, 1);
    assert_string_equal(got->env[0]->value, "3");
    protobuf_c_message_free_unpacked(&got->base, NULL);
}

/* A oneof's members share one place: a string member set there is not
 * taken for the message member beside it, and a message member set is
 * walked. */
static void test_oneof_members_share_a_place(void **state)
{
    (void)state;
    Grpc__Reflection__V1__ServerReflectionRequest req =
        GRPC__REFLECTION__V1__SERVER_REFLECTION_REQUEST__INIT;
    req.message_request_case =
        GRPC__REFLECTION__V1__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_BY_FILENAME;
    req.file_by_filename = "csched/v1/scheduler.proto";
    ProtobufCMessage *got = round_trip(&req.base);
    cs_map_fold(got);
    assert_string_equal(((Grpc__Reflection__V1__ServerReflectionRequest *)got)->file_by_filename,
                        "csched/v1/scheduler.proto");
    protobuf_c_message_free_unpacked(got, NULL);

    Grpc__Reflection__V1__ExtensionRequest ext = GRPC__REFLECTION__V1__EXTENSION_REQUEST__INIT;
    ext.containing_type = "csched.v1.Job";
    ext.extension_number = 7;
    req.message_request_case =
        GRPC__REFLECTION__V1__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_EXTENSION;
    req.file_containing_extension = &ext;
    got = round_trip(&req.base);
    cs_map_fold(got);
    assert_int_equal(((Grpc__Reflection__V1__ServerReflectionRequest *)got)
                         ->file_containing_extension->extension_number,
                     7);
    protobuf_c_message_free_unpacked(got, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_job_env_and_labels_last_wins),
        cmocka_unit_test(test_trigger_env_and_no_duplicates),
        cmocka_unit_test(test_oneof_members_share_a_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
