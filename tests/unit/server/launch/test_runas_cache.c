/* Unit tests of the launch threads' user cache: a second start for the same
 * user asks nothing; a changed passwd or group file (rewritten in place or
 * replaced by a rename), a removed one, or an entry past its ttl is looked
 * up again; a failed lookup is never kept; keys differ by user, group and
 * default user. The files are temp files; the lookup is a counting
 * stand-in, so the test needs no particular user on the machine. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "runas_cache.h"
#include "testfile.h"

static char dir[64], passwd_path[128], group_path[128];
static int lookups, fail_next;
static uid_t next_uid = 1000;

/* The stand-in: each lookup gets a new uid, so a test can tell a cached
 * answer (the old uid) from a fresh one. */
static int fake_resolve(const char *user, const char *group, const char *default_user,
                        struct cs_runas *out, struct cs_err *err)
{
    (void)group;
    (void)default_user;
    lookups++;
    memset(out, 0, sizeof(*out));
    if (fail_next) {
        fail_next = 0;
        return cs_err_set(err, -EINVAL, "job.run_as_user \"%s\": no such user", user);
    }
    out->drop = true;
    out->uid = next_uid++;
    out->gid = 100;
    out->groups = cs_xmalloc(2 * sizeof(uint32_t));
    out->groups[0] = 100;
    out->groups[1] = 27;
    out->n_groups = 2;
    (void)snprintf(out->user, sizeof(out->user), "%s", user);
    (void)snprintf(out->home, sizeof(out->home), "/home/%s", user);
    return 0;
}

static int setup(void **state)
{
    (void)state;
    (void)snprintf(dir, sizeof(dir), "/tmp/test_runas_cache.XXXXXX");
    if (mkdtemp(dir) == NULL)
        return -1;
    (void)snprintf(passwd_path, sizeof(passwd_path), "%s/passwd", dir);
    (void)snprintf(group_path, sizeof(group_path), "%s/group", dir);
    cs_test_write_text(passwd_path, "alice:x:1000:100::/home/alice:/bin/sh\n");
    cs_test_write_text(group_path, "users:x:100:\n");
    lookups = 0;
    fail_next = 0;
    return 0;
}

static int teardown(void **state)
{
    char tmp[160];
    (void)state;
    (void)snprintf(tmp, sizeof(tmp), "%s/new", dir);
    (void)unlink(tmp);
    (void)unlink(passwd_path);
    (void)unlink(group_path);
    return rmdir(dir);
}

/* Resolves user with no group under c; returns the uid given. */
static uid_t uid_of(struct cs_runas_cache *c, const char *user, const char *group)
{
    struct cs_runas r;
    struct cs_err err;
    assert_int_equal(cs_runas_cache_resolve(c, user, group, NULL, &r, &err), 0);
    uid_t uid = r.uid;
    assert_int_equal(r.n_groups, 2);
    assert_int_equal(r.groups[1], 27);
    assert_int_equal(strcmp(r.user, user), 0);
    cs_runas_clear(&r);
    return uid;
}

static void test_hit_asks_once(void **state)
{
    (void)state;
    struct cs_runas_cache *c = cs_runas_cache_new(passwd_path, group_path, 60000, fake_resolve);
    uid_t first = uid_of(c, "alice", "");
    assert_int_equal(uid_of(c, "alice", ""), first);
    assert_int_equal(uid_of(c, "alice", ""), first);
    assert_int_equal(lookups, 1);
    /* Another key is its own entry; the first stays. */
    assert_int_not_equal(uid_of(c, "alice", "users"), first);
    assert_int_not_equal(uid_of(c, "bob", ""), first);
    assert_int_equal(uid_of(c, "alice", ""), first);
    assert_int_equal(lookups, 3);
    cs_runas_cache_free(c);
}

static void test_default_user_in_key(void **state)
{
    (void)state;
    struct cs_runas_cache *c = cs_runas_cache_new(passwd_path, group_path, 60000, fake_resolve);
    struct cs_runas r;
    struct cs_err err;
    assert_int_equal(cs_runas_cache_resolve(c, "", "", "nobody", &r, &err), 0);
    cs_runas_clear(&r);
    assert_int_equal(cs_runas_cache_resolve(c, "", "", "csched-job", &r, &err), 0);
    cs_runas_clear(&r);
    assert_int_equal(cs_runas_cache_resolve(c, "", "", "nobody", &r, &err), 0);
    cs_runas_clear(&r);
    assert_int_equal(lookups, 2);
    cs_runas_cache_free(c);
}

static void test_file_change_invalidates(void **state)
{
    (void)state;
    char tmp[160];
    struct cs_runas_cache *c = cs_runas_cache_new(passwd_path, group_path, 60000, fake_resolve);
    uid_t first = uid_of(c, "alice", "");
    /* Rewritten in place with a different size. */
    cs_test_write_text(passwd_path,
                       "alice:x:1001:100::/home/alice:/bin/sh\nbob:x:1002:100::/:/bin/sh\n");
    uid_t second = uid_of(c, "alice", "");
    assert_int_not_equal(second, first);
    assert_int_equal(uid_of(c, "alice", ""), second);
    assert_int_equal(lookups, 2);
    /* The group file replaced by a rename (a new inode, as vigr and
     * groupadd do), with the same size. */
    (void)snprintf(tmp, sizeof(tmp), "%s/new", dir);
    cs_test_write_text(tmp, "users:x:100:\n");
    assert_int_equal(rename(tmp, group_path), 0);
    uid_t third = uid_of(c, "alice", "");
    assert_int_not_equal(third, second);
    assert_int_equal(lookups, 3);
    /* A removed file is a change too, and so is its return. */
    assert_int_equal(unlink(group_path), 0);
    uid_t fourth = uid_of(c, "alice", "");
    assert_int_not_equal(fourth, third);
    assert_int_equal(uid_of(c, "alice", ""), fourth);
    cs_test_write_text(group_path, "users:x:100:\n");
    assert_int_not_equal(uid_of(c, "alice", ""), fourth);
    assert_int_equal(lookups, 5);
    cs_runas_cache_free(c);
}

static void test_ttl_expires(void **state)
{
    (void)state;
    struct cs_runas_cache *c = cs_runas_cache_new(passwd_path, group_path, 50, fake_resolve);
    uid_t first = uid_of(c, "alice", "");
    assert_int_equal(uid_of(c, "alice", ""), first);
    (void)usleep(80 * 1000);
    uid_t second = uid_of(c, "alice", "");
    assert_int_not_equal(second, first);
    assert_int_equal(lookups, 2);
    cs_runas_cache_free(c);
}

static void test_failure_not_kept(void **state)
{
    (void)state;
    struct cs_runas_cache *c = cs_runas_cache_new(passwd_path, group_path, 60000, fake_resolve);
    struct cs_runas r;
    struct cs_err err = {0};
    fail_next = 1;
    assert_int_equal(cs_runas_cache_resolve(c, "carol", "", NULL, &r, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "no such user"));
    /* The next start asks again, and now finds the user. */
    (void)uid_of(c, "carol", "");
    (void)uid_of(c, "carol", "");
    assert_int_equal(lookups, 2);
    cs_runas_cache_free(c);
}

/* More keys than slots: the oldest go, every answer stays right. */
static void test_many_users(void **state)
{
    (void)state;
    char name[32];
    struct cs_runas_cache *c = cs_runas_cache_new(passwd_path, group_path, 60000, fake_resolve);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 20; i++) {
            (void)snprintf(name, sizeof(name), "user%d", i);
            (void)uid_of(c, name, "");
        }
    }
    assert_int_equal(lookups, 40);
    (void)uid_of(c, "user19", "");
    assert_int_equal(lookups, 40);
    cs_runas_cache_free(c);
}

/* The shared cache answers as cs_runas_resolve does, for this process's
 * own user (which exists under any uid). */
static void test_shared_matches_resolve(void **state)
{
    (void)state;
    struct cs_runas a, b;
    struct cs_err err;
    char self[24];
    (void)snprintf(self, sizeof(self), "%u", (unsigned)geteuid());
    assert_int_equal(cs_runas_resolve(self, "", NULL, &a, &err), 0);
    assert_int_equal(cs_runas_cache_resolve(cs_runas_cache_shared(), self, "", NULL, &b, &err), 0);
    assert_int_equal(a.drop, b.drop);
    assert_int_equal(a.uid, b.uid);
    assert_int_equal(a.gid, b.gid);
    assert_int_equal(a.n_groups, b.n_groups);
    assert_int_equal(strcmp(a.home, b.home), 0);
    cs_runas_clear(&a);
    cs_runas_clear(&b);
    assert_int_equal(
        cs_runas_cache_resolve(cs_runas_cache_shared(), "no-such-user-here", "", NULL, &b, &err),
        -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_hit_asks_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_default_user_in_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_change_invalidates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ttl_expires, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failure_not_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_users, setup, teardown),
        cmocka_unit_test(test_shared_matches_resolve),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
