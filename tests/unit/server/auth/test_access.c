/* Unit tests of access: the role every method needs (each method of the
 * Scheduler service, of health and of reflection, by name, and every
 * method the proto declares), a method the table does not know, and the
 * messages a refused caller reads. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "access.h"
#include "csched/v1/scheduler.pb-c.h"

#define SCHED(m) "/csched.v1.Scheduler/" m

static const struct {
    const char *path;
    enum cs_role role;
} want[] = {
    {SCHED("GetJob"), CS_ROLE_VIEWER},
    {SCHED("ListJobs"), CS_ROLE_VIEWER},
    {SCHED("GetRun"), CS_ROLE_VIEWER},
    {SCHED("ListRuns"), CS_ROLE_VIEWER},
    {SCHED("Watch"), CS_ROLE_VIEWER},
    {SCHED("ReadLogs"), CS_ROLE_VIEWER},
    {SCHED("GetStats"), CS_ROLE_VIEWER},
    {SCHED("ListSlots"), CS_ROLE_VIEWER},
    {SCHED("TriggerJob"), CS_ROLE_OPERATOR},
    {SCHED("CancelRun"), CS_ROLE_OPERATOR},
    {SCHED("PauseJob"), CS_ROLE_OPERATOR},
    {SCHED("ResumeJob"), CS_ROLE_OPERATOR},
    {SCHED("BackfillJob"), CS_ROLE_OPERATOR},
    {SCHED("CreateJob"), CS_ROLE_ADMIN},
    {SCHED("UpdateJob"), CS_ROLE_ADMIN},
    {SCHED("DeleteJob"), CS_ROLE_ADMIN},
    {SCHED("ListAudit"), CS_ROLE_ADMIN},
    {"/grpc.health.v1.Health/Check", CS_ROLE_NONE},
    {"/grpc.health.v1.Health/Watch", CS_ROLE_NONE},
    {"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", CS_ROLE_NONE},
    {"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", CS_ROLE_NONE},
};

static void test_access_every_method(void **state)
{
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        enum cs_role got = cs_access_needed(want[i].path);
        if (got != want[i].role)
            fail_msg("%s: expected role %s, got %s", want[i].path, cs_role_name(want[i].role),
                     cs_role_name(got));
    }
}

/* Every method the proto declares has its row above: a method added to the
 * service must be given its role here and in access.c. */
static void test_access_covers_the_proto(void **state)
{
    const ProtobufCServiceDescriptor *svc = &csched__v1__scheduler__descriptor;
    for (unsigned m = 0; m < svc->n_methods; m++) {
        char path[200];
        bool found = false;
        (void)snprintf(path, sizeof(path), SCHED("%s"), svc->methods[m].name);
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]) && !found; i++)
            found = strcmp(want[i].path, path) == 0;
        if (!found)
            fail_msg("%s has no role in the test's table (and so in access.c?)", path);
    }
}

/* A method without a row needs admin: a new method is closed until it gets one. */
static void test_access_unknown_method_needs_admin(void **state)
{
    assert_int_equal(cs_access_needed(SCHED("Frobnicate")), CS_ROLE_ADMIN);
    assert_int_equal(cs_access_needed(""), CS_ROLE_ADMIN);
}

/* Roles nest: each role may call what it and the roles below it may, and
 * nothing above; no role and no identity may call only health. */
static void test_access_roles_nest(void **state)
{
    char why[512];
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        for (enum cs_role role = CS_ROLE_NONE; role <= CS_ROLE_ADMIN; role++) {
            struct cs_identity who = {.role = role, .name = "unix:uid=1000(alice)"};
            int rc = cs_access_check(want[i].path, &who, true, why, sizeof(why));
            int expected = role >= want[i].role ? 0 : -EACCES;
            if (rc != expected)
                fail_msg("%s as %s: expected %d, got %d (%s)", want[i].path, cs_role_name(role),
                         expected, rc, why);
        }
        struct cs_identity anon = {.role = CS_ROLE_NONE, .name = "ipv4:10.0.0.1:4000"};
        int rc = cs_access_check(want[i].path, &anon, false, why, sizeof(why));
        assert_int_equal(rc, want[i].role == CS_ROLE_NONE ? 0 : -EPERM);
    }
}

static void test_access_messages(void **state)
{
    char why[512];
    struct cs_identity nobody = {.role = CS_ROLE_NONE, .name = "unix:uid=65534"};
    assert_int_equal(cs_access_check(SCHED("ListJobs"), &nobody, true, why, sizeof(why)), -EACCES);
    assert_string_equal(why, "ListJobs needs role viewer; unix:uid=65534 has none (roles of local "
                             "users: --admin-group, --operator-group, --viewer-group)");

    struct cs_identity op = {.role = CS_ROLE_OPERATOR, .name = "unix:uid=1000(alice)"};
    assert_int_equal(cs_access_check(SCHED("DeleteJob"), &op, true, why, sizeof(why)), -EACCES);
    assert_string_equal(why, "DeleteJob needs role admin; unix:uid=1000(alice) has operator (roles "
                             "of local users: --admin-group, --operator-group, --viewer-group)");

    struct cs_identity cert = {.role = CS_ROLE_NONE, .name = "x509:CN=bot"};
    assert_int_equal(cs_access_check(SCHED("GetRun"), &cert, true, why, sizeof(why)), -EACCES);
    assert_string_equal(why, "GetRun needs role viewer; x509:CN=bot has none (roles of client "
                             "certificates: --tls-client-roles)");

    struct cs_identity anon = {.role = CS_ROLE_NONE, .name = "fd:12"};
    assert_int_equal(cs_access_check(SCHED("TriggerJob"), &anon, false, why, sizeof(why)), -EPERM);
    assert_string_equal(why,
                        "TriggerJob needs role operator; the caller at fd:12 is not identified");
}

static void test_access_role_names(void **state)
{
    assert_string_equal(cs_role_name(CS_ROLE_NONE), "none");
    assert_string_equal(cs_role_name(CS_ROLE_VIEWER), "viewer");
    assert_string_equal(cs_role_name(CS_ROLE_OPERATOR), "operator");
    assert_string_equal(cs_role_name(CS_ROLE_ADMIN), "admin");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_access_every_method),
        cmocka_unit_test(test_access_covers_the_proto),
        cmocka_unit_test(test_access_unknown_method_needs_admin),
        cmocka_unit_test(test_access_roles_nest),
        cmocka_unit_test(test_access_messages),
        cmocka_unit_test(test_access_role_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
