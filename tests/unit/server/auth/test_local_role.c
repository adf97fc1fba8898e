/* Unit tests of local_role and local_peers: a unix peer's credentials
 * mapped to its role (uid 0 and cschedd's own uid, primary and
 * supplementary groups, the highest role winning, no role), group flags
 * resolved by name or number, and the table of connections by fd. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "local_peers.h"
#include "local_role.h"

/* admin 500, operator 501, viewer 502; cschedd runs as uid 900. */
static struct cs_local_roles roles(void)
{
    struct cs_local_roles r = {.self_uid = 900};
    r.gid[CS_ROLE_ADMIN] = 500;
    r.gid[CS_ROLE_OPERATOR] = 501;
    r.gid[CS_ROLE_VIEWER] = 502;
    r.has_gid[CS_ROLE_ADMIN] = r.has_gid[CS_ROLE_OPERATOR] = r.has_gid[CS_ROLE_VIEWER] = true;
    return r;
}

static void test_local_role_root_and_self_are_admin(void **state)
{
    struct cs_local_roles r = roles();
    assert_int_equal(cs_local_role(&r, 0, 0, NULL, 0), CS_ROLE_ADMIN);
    assert_int_equal(cs_local_role(&r, 900, 77, NULL, 0), CS_ROLE_ADMIN);
    r.has_gid[CS_ROLE_ADMIN] = false;
    assert_int_equal(cs_local_role(&r, 0, 12345, NULL, 0), CS_ROLE_ADMIN);
}

static void test_local_role_groups(void **state)
{
    struct cs_local_roles r = roles();
    const gid_t viewer[] = {100, 502};
    const gid_t viewer_and_operator[] = {502, 7, 501};
    const gid_t all[] = {502, 500, 501};
    const gid_t none[] = {100, 101, 503};

    assert_int_equal(cs_local_role(&r, 1000, 1000, viewer, 2), CS_ROLE_VIEWER);
    assert_int_equal(cs_local_role(&r, 1000, 1000, viewer_and_operator, 3), CS_ROLE_OPERATOR);
    assert_int_equal(cs_local_role(&r, 1000, 1000, all, 3), CS_ROLE_ADMIN);
    assert_int_equal(cs_local_role(&r, 1000, 1000, none, 3), CS_ROLE_NONE);
    assert_int_equal(cs_local_role(&r, 65534, 65534, NULL, 0), CS_ROLE_NONE);
    /* The primary group counts as much as a supplementary one. */
    assert_int_equal(cs_local_role(&r, 1000, 501, none, 3), CS_ROLE_OPERATOR);
    /* A role without a group is held by no one through groups. */
    r.has_gid[CS_ROLE_OPERATOR] = false;
    assert_int_equal(cs_local_role(&r, 1000, 501, viewer_and_operator, 3), CS_ROLE_VIEWER);
}

static void test_local_roles_init(void **state)
{
    struct cs_local_roles r;
    struct cs_err err = {0};

    assert_int_equal(cs_local_roles_init(&r, "root", "4242", NULL, &err), 0);
    assert_int_equal(r.self_uid, geteuid());
    assert_true(r.has_gid[CS_ROLE_ADMIN]);
    assert_int_equal(r.gid[CS_ROLE_ADMIN], 0);
    assert_true(r.has_gid[CS_ROLE_OPERATOR]);
    assert_int_equal(r.gid[CS_ROLE_OPERATOR], 4242);
    assert_false(r.has_gid[CS_ROLE_VIEWER]);

    /* An empty admin group means none, not the default. */
    assert_int_equal(cs_local_roles_init(&r, "", NULL, NULL, &err), 0);
    assert_false(r.has_gid[CS_ROLE_ADMIN]);

    assert_int_equal(cs_local_roles_init(&r, NULL, NULL, "no-such-group-cs", &err), -ENOENT);
    assert_string_equal(err.msg, "--viewer-group \"no-such-group-cs\": no such group");
}

static void test_local_peers_table(void **state)
{
    struct cs_local_peers t;
    struct cs_local_peer a = {.ino = 11,
                              .who = {.role = CS_ROLE_ADMIN, .name = "unix:uid=0(root)"}};
    struct cs_local_peer b = {.ino = 12, .who = {.role = CS_ROLE_NONE, .name = "unix:uid=65534"}};
    struct cs_local_peer got;

    cs_local_peers_init(&t);
    assert_false(cs_local_peers_lookup(&t, 5, &got));
    cs_local_peers_record(&t, 5, &a);
    cs_local_peers_record(&t, 1000, &b);
    assert_true(cs_local_peers_lookup(&t, 5, &got));
    assert_int_equal(got.ino, 11);
    assert_string_equal(got.who.name, "unix:uid=0(root)");
    assert_true(cs_local_peers_lookup(&t, 1000, &got));
    assert_int_equal(got.who.role, CS_ROLE_NONE);
    assert_false(cs_local_peers_lookup(&t, 6, &got));
    assert_false(cs_local_peers_lookup(&t, -1, &got));
    /* A new connection on a reused fd replaces the old one's entry. */
    cs_local_peers_record(&t, 5, &b);
    assert_true(cs_local_peers_lookup(&t, 5, &got));
    assert_int_equal(got.ino, 12);
    cs_local_peers_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_local_role_root_and_self_are_admin),
        cmocka_unit_test(test_local_role_groups),
        cmocka_unit_test(test_local_roles_init),
        cmocka_unit_test(test_local_peers_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
