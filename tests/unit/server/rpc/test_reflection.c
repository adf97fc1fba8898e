/* Unit tests of reflection over the descriptor set embedded in cschedd:
 * files by name, the file of each kind of symbol (service, method, message,
 * nested message and enum, field, top-level enum) and of names that are
 * not symbols, the services listed, a file's dependencies, and sets that
 * do not decode. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "reflection.h"

/* The value of string field 1 (a FileDescriptorProto's name), for checks. */
static void file_name(const struct cs_desc_file *file, char *out, size_t cap)
{
    assert_true(file->len >= 2 && file->data[0] == 0x0a && file->data[1] < cap);
    memcpy(out, file->data + 2, file->data[1]);
    out[file->data[1]] = '\0';
}

static void assert_symbol_in(const char *symbol, const char *want)
{
    struct cs_desc_file file;
    char name[128];
    int rc = cs_reflection_file_of_symbol(cs_descriptor_set, cs_descriptor_set_len, symbol, &file);
    if (rc != 0)
        fail_msg("%s: %d", symbol, rc);
    file_name(&file, name, sizeof(name));
    assert_string_equal(name, want);
}

static void test_file_by_name(void **state)
{
    (void)state;
    struct cs_desc_file file;
    char name[128];
    const char *files[] = {"csched/v1/scheduler.proto", "grpc/health/v1/health.proto",
                           "grpc/reflection/v1/reflection.proto",
                           "grpc/reflection/v1alpha/reflection.proto"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        assert_int_equal(
            cs_reflection_file_by_name(cs_descriptor_set, cs_descriptor_set_len, files[i], &file),
            0);
        file_name(&file, name, sizeof(name));
        assert_string_equal(name, files[i]);
    }
    assert_int_equal(
        cs_reflection_file_by_name(cs_descriptor_set, cs_descriptor_set_len, "csched/v1", &file),
        -ENOENT);
}

static void test_symbols(void **state)
{
    (void)state;
    assert_symbol_in("csched.v1.Scheduler", "csched/v1/scheduler.proto");
    assert_symbol_in("csched.v1.Scheduler.CreateJob", "csched/v1/scheduler.proto");
    assert_symbol_in("csched.v1.Job", "csched/v1/scheduler.proto");
    assert_symbol_in("csched.v1.Job.name", "csched/v1/scheduler.proto");
    assert_symbol_in("csched.v1.RunState", "csched/v1/scheduler.proto");
    assert_symbol_in("grpc.health.v1.HealthCheckResponse.ServingStatus",
                     "grpc/health/v1/health.proto");
    assert_symbol_in("grpc.reflection.v1.ServerReflection.ServerReflectionInfo",
                     "grpc/reflection/v1/reflection.proto");
    assert_symbol_in("grpc.reflection.v1alpha.ServerReflectionRequest",
                     "grpc/reflection/v1alpha/reflection.proto");
}

static void test_not_symbols(void **state)
{
    (void)state;
    const char *names[] = {"",
                           "csched",
                           "csched.v1",
                           "csched.v1.",
                           "csched.v1.Jo",
                           "csched.v1.Jobs",
                           "csched.v1.Scheduler.NoSuch",
                           "csched.v1.Job.name.more",
                           "csched.v2.Job",
                           "Job"};
    struct cs_desc_file file;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        int rc =
            cs_reflection_file_of_symbol(cs_descriptor_set, cs_descriptor_set_len, names[i], &file);
        if (rc != -ENOENT)
            fail_msg("%s: %d, want -ENOENT", names[i], rc);
    }
}

struct names {
    char all[512];
    int n;
};

static void collect_cb(void *ctx, const char *name, size_t len)
{
    struct names *n = ctx;
    assert_int_equal(strlen(name), len);
    size_t used = strlen(n->all);
    (void)snprintf(n->all + used, sizeof(n->all) - used, "%s;", name);
    n->n++;
}

static void test_services_and_dependencies(void **state)
{
    (void)state;
    struct names services = {.n = 0};
    assert_int_equal(
        cs_reflection_each_service(cs_descriptor_set, cs_descriptor_set_len, collect_cb, &services),
        0);
    assert_string_equal(services.all, "csched.v1.Scheduler;grpc.health.v1.Health;"
                                      "grpc.reflection.v1.ServerReflection;"
                                      "grpc.reflection.v1alpha.ServerReflection;");
    struct cs_desc_file file;
    assert_int_equal(cs_reflection_file_by_name(cs_descriptor_set, cs_descriptor_set_len,
                                                "csched/v1/scheduler.proto", &file),
                     0);
    struct names deps = {.n = 0};
    assert_int_equal(cs_reflection_each_dependency(&file, collect_cb, &deps), 0);
    assert_int_equal(deps.n, 0);
}

static void test_bad_sets(void **state)
{
    (void)state;
    struct cs_desc_file file;
    /* Field 1 claims 10 bytes and has 2; a key with wire type 7; a varint
     * that never ends. */
    static const uint8_t truncated[] = {0x0a, 0x0a, 0x0a, 0x00};
    static const uint8_t bad_type[] = {0x0f};
    static const uint8_t endless[] = {0x08, 0xff, 0xff};
    assert_int_equal(cs_reflection_file_by_name(truncated, sizeof(truncated), "a", &file),
                     -EBADMSG);
    assert_int_equal(cs_reflection_file_of_symbol(bad_type, sizeof(bad_type), "a", &file),
                     -EBADMSG);
    assert_int_equal(cs_reflection_file_of_symbol(endless, sizeof(endless), "a", &file), -EBADMSG);
    /* A file whose message_type (4) does not decode. */
    static const uint8_t bad_file[] = {0x0a, 0x05, 0x12, 0x01, 'p', 0x22, 0x05};
    assert_int_equal(cs_reflection_file_of_symbol(bad_file, sizeof(bad_file), "p.M", &file),
                     -EBADMSG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file_by_name), cmocka_unit_test(test_symbols),
        cmocka_unit_test(test_not_symbols),  cmocka_unit_test(test_services_and_dependencies),
        cmocka_unit_test(test_bad_sets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
