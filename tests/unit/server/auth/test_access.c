/* Unit tests of access: the table against docs/security.md's (row for row,
 * both ways) and against the methods the proto declares, a method the table
 * does not know, and the messages a refused caller reads. */
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

#include "access.h"
#include "csched/v1/scheduler.pb-c.h"
#include "csched/v1/worker.pb-c.h"
#include "grpc/health/v1/health.pb-c.h"

#define SCHED(m) "/csched.v1.Scheduler/" m
#define DOC CS_SOURCE_DIR "/docs/security.md"
#define DOC_MARK "<!-- access table:"
#define DOC_ROWS_MAX 64

/* One row of the documented table. */
struct doc_row {
    char path[200];
    enum cs_role role;
    bool changes;
    unsigned line;
};

/* The cell after *p (which points at a '|'), trimmed, into out; moves *p to
 * the '|' that ends it. false at the line's end. */
static bool next_cell(const char **p, char *out, size_t cap)
{
    if (**p != '|')
        return false;
    const char *start = *p + 1, *end = strchr(start, '|');
    if (end == NULL)
        return false;
    while (start < end && *start == ' ')
        start++;
    const char *last = end;
    while (last > start && last[-1] == ' ')
        last--;
    (void)snprintf(out, cap, "%.*s", (int)(last - start), start);
    *p = end;
    return true;
}

/* Parses one row, "| `PATH` ... | ROLE | yes/no |", failing the test on
 * anything else: a row the check cannot read must not pass unread. */
static void parse_row(const char *text, unsigned line, struct doc_row *row)
{
    char method[256], role[32], changes[32];
    const char *p = text;
    if (!next_cell(&p, method, sizeof(method)) || !next_cell(&p, role, sizeof(role)) ||
        !next_cell(&p, changes, sizeof(changes)))
        fail_msg("%s:%u: not a row of three cells: %s", DOC, line, text);
    const char *open = strchr(method, '`'), *close = open != NULL ? strchr(open + 1, '`') : NULL;
    if (close == NULL)
        fail_msg("%s:%u: the method is not in backquotes: %s", DOC, line, method);
    (void)snprintf(row->path, sizeof(row->path), "%.*s", (int)(close - open - 1), open + 1);
    if (strcmp(role, "none") == 0)
        row->role = CS_ROLE_NONE;
    else if (strcmp(role, "replica") == 0)
        row->role = CS_ROLE_REPLICA;
    else if (cs_role_parse(role, &row->role) != 0)
        fail_msg("%s:%u: role \"%s\" is not none, viewer, operator, admin or replica", DOC, line,
                 role);
    if (strcmp(changes, "yes") != 0 && strcmp(changes, "no") != 0)
        fail_msg("%s:%u: changes \"%s\" is not yes or no", DOC, line, changes);
    row->changes = strcmp(changes, "yes") == 0;
    row->line = line;
}

/* The rows of the table that follows DOC_MARK in docs/security.md: how many. */
static size_t read_doc_table(struct doc_row *rows, size_t cap)
{
    FILE *f = fopen(DOC, "r");
    if (f == NULL)
        fail_msg("cannot open %s", DOC);
    char text[1024];
    unsigned line = 0, after_mark = 0;
    size_t n = 0;
    while (fgets(text, sizeof(text), f) != NULL) {
        line++;
        text[strcspn(text, "\n")] = '\0';
        if (after_mark == 0) {
            after_mark = strncmp(text, DOC_MARK, strlen(DOC_MARK)) == 0;
            continue;
        }
        if (text[0] != '|')
            break;
        /* The header and the line under it. */
        if (after_mark++ <= 2)
            continue;
        assert_true(n < cap);
        parse_row(text, line, &rows[n++]);
    }
    (void)fclose(f);
    if (after_mark == 0)
        fail_msg("%s has no line starting \"%s\" before the table of roles", DOC, DOC_MARK);
    return n;
}

/* The documented table and the code's hold the same rows: a method given a
 * role or a changes mark in one and not the other fails here. */
static void test_access_matches_the_docs(void **state)
{
    struct doc_row doc[DOC_ROWS_MAX];
    size_t n_doc = read_doc_table(doc, DOC_ROWS_MAX), n_code;
    const struct cs_access_rule *code = cs_access_rules(&n_code);

    for (size_t i = 0; i < n_doc; i++) {
        size_t k = 0;
        while (k < n_code && strcmp(code[k].path, doc[i].path) != 0)
            k++;
        if (k == n_code)
            fail_msg("%s:%u: %s is not in server/access.c's table", DOC, doc[i].line, doc[i].path);
        if (code[k].role != doc[i].role || code[k].changes != doc[i].changes)
            fail_msg("%s:%u: %s is documented as %s, changes %s; server/access.c has %s, "
                     "changes %s",
                     DOC, doc[i].line, doc[i].path, cs_role_name(doc[i].role),
                     doc[i].changes ? "yes" : "no", cs_role_name(code[k].role),
                     code[k].changes ? "yes" : "no");
    }
    for (size_t k = 0; k < n_code; k++) {
        size_t i = 0;
        while (i < n_doc && strcmp(code[k].path, doc[i].path) != 0)
            i++;
        if (i == n_doc)
            fail_msg("%s (server/access.c) has no row in %s's table of roles", code[k].path, DOC);
    }
}

static bool has_rule(const char *path)
{
    size_t n;
    const struct cs_access_rule *rules = cs_access_rules(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(rules[i].path, path) == 0)
            return true;
    return false;
}

/* Every method the proto declares has a row: a method added to a service
 * must be given its role and say whether it changes jobs or runs (and so
 * is audited), in server/access.c and docs/security.md. */
static void test_access_covers_the_proto(void **state)
{
    const ProtobufCServiceDescriptor *services[] = {&csched__v1__scheduler__descriptor,
                                                    &csched__v1__worker__descriptor,
                                                    &grpc__health__v1__health__descriptor};
    for (size_t s = 0; s < sizeof(services) / sizeof(services[0]); s++) {
        for (unsigned m = 0; m < services[s]->n_methods; m++) {
            char path[200];
            (void)snprintf(path, sizeof(path), "/%s/%s", services[s]->name,
                           services[s]->methods[m].name);
            if (!has_rule(path))
                fail_msg("%s has no row in server/access.c's table: give it its role and say "
                         "whether it changes jobs or runs",
                         path);
        }
    }
    /* And the other way: no row for a Scheduler method that is gone. */
    size_t n;
    const struct cs_access_rule *rules = cs_access_rules(&n);
    for (size_t i = 0; i < n; i++) {
        if (strncmp(rules[i].path, SCHED(""), strlen(SCHED(""))) != 0)
            continue;
        const char *name = rules[i].path + strlen(SCHED(""));
        if (protobuf_c_service_descriptor_get_method_by_name(&csched__v1__scheduler__descriptor,
                                                             name) == NULL)
            fail_msg("server/access.c names %s, which the proto does not declare", rules[i].path);
    }
}

/* What changes jobs or runs, and what only reads. */
static void test_access_changes(void **state)
{
    assert_true(cs_access_changes(SCHED("BackfillJob")));
    assert_true(cs_access_changes(SCHED("CreateJob")));
    assert_false(cs_access_changes(SCHED("ListSlots")));
    assert_false(cs_access_changes(SCHED("Frobnicate")));
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
    size_t n;
    const struct cs_access_rule *rules = cs_access_rules(&n);
    for (size_t i = 0; i < n; i++) {
        for (enum cs_role role = CS_ROLE_NONE; role <= CS_ROLE_REPLICA; role++) {
            struct cs_identity who = {.role = role, .name = "unix:uid=1000(alice)"};
            int rc = cs_access_check(rules[i].path, &who, true, why, sizeof(why));
            int expected = role >= rules[i].role ? 0 : -EACCES;
            if (rc != expected)
                fail_msg("%s as %s: expected %d, got %d (%s)", rules[i].path, cs_role_name(role),
                         expected, rc, why);
        }
        struct cs_identity anon = {.role = CS_ROLE_NONE, .name = "ipv4:10.0.0.1"};
        int rc = cs_access_check(rules[i].path, &anon, false, why, sizeof(why));
        assert_int_equal(rc, rules[i].role == CS_ROLE_NONE ? 0 : -EPERM);
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
    assert_string_equal(cs_role_name(CS_ROLE_REPLICA), "replica");
}

/* No credential of a person grants the replicas' role: a tokens file or a
 * certificate's role naming it is refused, and an admin cannot place
 * attempts. */
static void test_access_replica_role_is_no_persons(void **state)
{
    enum cs_role role = CS_ROLE_NONE;
    assert_int_equal(cs_role_parse("replica", &role), -EINVAL);
    assert_int_equal(cs_role_parse("admin", &role), 0);
    char why[512];
    struct cs_identity admin = {.role = CS_ROLE_ADMIN, .name = "unix:uid=0(root)"};
    assert_int_equal(cs_access_check("/csched.v1.Worker/Launch", &admin, true, why, sizeof(why)),
                     -EACCES);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_access_matches_the_docs),
        cmocka_unit_test(test_access_covers_the_proto),
        cmocka_unit_test(test_access_changes),
        cmocka_unit_test(test_access_unknown_method_needs_admin),
        cmocka_unit_test(test_access_roles_nest),
        cmocka_unit_test(test_access_messages),
        cmocka_unit_test(test_access_role_names),
        cmocka_unit_test(test_access_replica_role_is_no_persons),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
