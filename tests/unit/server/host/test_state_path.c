/* The state dir's path resolved link by link: every directory on the way
 * must be one no other user can change. Trees are made in a temp dir; the
 * cases that need another user's files (chown) run as root only. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "state_path.h"

/* nobody, on Debian */
#define OTHER_UID 65534

struct tree {
    char root[256]; /* resolved: the temp dir's own parents may be links */
};

static char *at(const struct tree *t, const char *rel)
{
    static char path[PATH_MAX];
    (void)snprintf(path, sizeof(path), "%s/%s", t->root, rel);
    return path;
}

static void make_dir(const struct tree *t, const char *rel, mode_t mode)
{
    assert_int_equal(mkdir(at(t, rel), mode), 0);
    assert_int_equal(chmod(at(t, rel), mode), 0); /* past the umask */
}

static void make_link(const struct tree *t, const char *target, const char *rel)
{
    char copy[PATH_MAX]; /* target may be at()'s own buffer */
    (void)snprintf(copy, sizeof(copy), "%s", target);
    assert_int_equal(symlink(copy, at(t, rel)), 0);
}

static int setup(void **state)
{
    struct tree *t = calloc(1, sizeof(*t));
    char tmpl[] = "/tmp/test_state_path.XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    char *real = realpath(tmpl, NULL);
    assert_non_null(real);
    assert_in_range(strlen(real), 1, sizeof(t->root) - 1);
    strcpy(t->root, real);
    free(real);
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    struct tree *t = *state;
    char cmd[sizeof(t->root) + 16];
    (void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->root);
    assert_int_equal(system(cmd), 0);
    free(t);
    return 0;
}

static int resolve(const struct tree *t, const char *rel, char *out, struct cs_err *err)
{
    char path[PATH_MAX];
    (void)snprintf(path, sizeof(path), "%s/%s", t->root, rel);
    return cs_state_path_resolve(path, out, PATH_MAX, err);
}

static void test_plain_dir_resolves_to_itself(void **state)
{
    struct tree *t = *state;
    char out[PATH_MAX];
    struct cs_err err = {0};
    make_dir(t, "a", 0755);
    make_dir(t, "a/state", 0700);
    assert_int_equal(resolve(t, "a/./state/", out, &err), 0);
    assert_string_equal(out, at(t, "a/state"));
}

static void test_links_and_dotdot_resolve_to_the_target(void **state)
{
    struct tree *t = *state;
    char out[PATH_MAX];
    struct cs_err err = {0};
    make_dir(t, "a", 0755);
    make_dir(t, "a/real", 0700);
    make_link(t, "real", "a/rel");
    make_link(t, at(t, "a/rel"), "abs");
    make_dir(t, "b", 0755);
    assert_int_equal(resolve(t, "abs", out, &err), 0);
    assert_string_equal(out, at(t, "a/real"));
    assert_int_equal(resolve(t, "b/../abs/../real", out, &err), 0);
    assert_string_equal(out, at(t, "a/real"));
}

static void test_world_writable_parent_is_refused(void **state)
{
    struct tree *t = *state;
    char out[PATH_MAX];
    struct cs_err err = {0};
    make_dir(t, "open", 0777);
    make_dir(t, "open/state", 0700);
    assert_int_equal(resolve(t, "open/state", out, &err), -EPERM);
    assert_non_null(strstr(err.msg, at(t, "open")));
    assert_non_null(strstr(err.msg, "others may write"));
}

static void test_sticky_parent_holds_only_trusted_entries(void **state)
{
    struct tree *t = *state;
    char out[PATH_MAX];
    struct cs_err err = {0};
    make_dir(t, "tmp", 01777);
    make_dir(t, "tmp/state", 0700);
    assert_int_equal(resolve(t, "tmp/state", out, &err), 0);
    if (geteuid() != 0) {
        print_message("not root: the entry of another user is not tried\n");
        return;
    }
    /* Another user's link in a sticky dir: they may swap it at will. */
    make_link(t, at(t, "tmp/state"), "tmp/theirs");
    assert_int_equal(lchown(at(t, "tmp/theirs"), OTHER_UID, OTHER_UID), 0);
    assert_int_equal(resolve(t, "tmp/theirs", out, &err), -EPERM);
    assert_non_null(strstr(err.msg, "not root's or cschedd's"));
}

static void test_parent_of_another_user_is_refused(void **state)
{
    struct tree *t = *state;
    char out[PATH_MAX];
    struct cs_err err = {0};
    if (geteuid() != 0) {
        print_message("not root: skipped\n");
        return;
    }
    /* The attack: the parent is theirs (not sticky, mode 0755), the state
     * dir and the link root's: they may rename either whenever they like. */
    make_dir(t, "d", 0755);
    make_dir(t, "d/real", 0700);
    make_link(t, "real", "d/state");
    assert_int_equal(chown(at(t, "d"), OTHER_UID, OTHER_UID), 0);
    assert_int_equal(resolve(t, "d/state", out, &err), -EPERM);
    assert_non_null(strstr(err.msg, at(t, "d")));
    assert_non_null(strstr(err.msg, "belongs to uid 65534"));
    /* Reached through a link elsewhere, it is refused all the same. */
    make_link(t, at(t, "d/real"), "via");
    assert_int_equal(resolve(t, "via", out, &err), -EPERM);
}

static void test_state_dir_of_another_user_is_refused(void **state)
{
    struct tree *t = *state;
    char out[PATH_MAX];
    struct cs_err err = {0};
    make_dir(t, "group", 0770);
    assert_int_equal(resolve(t, "group", out, &err), 0); /* our own group */
    make_dir(t, "open", 0703);
    assert_int_equal(resolve(t, "open", out, &err), -EPERM);
    assert_non_null(strstr(err.msg, "chmod go-w"));
    if (geteuid() != 0)
        return;
    make_dir(t, "theirs", 0700);
    assert_int_equal(chown(at(t, "theirs"), OTHER_UID, OTHER_UID), 0);
    assert_int_equal(resolve(t, "theirs", out, &err), -EPERM);
    assert_non_null(strstr(err.msg, "belongs to uid 65534"));
}

static void test_bad_paths(void **state)
{
    struct tree *t = *state;
    char out[PATH_MAX];
    struct cs_err err = {0};
    FILE *f = fopen(at(t, "file"), "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(resolve(t, "file/state", out, &err), -ENOTDIR);
    assert_int_equal(resolve(t, "missing", out, &err), -ENOENT);
    make_link(t, "loop", "loop");
    assert_int_equal(resolve(t, "loop", out, &err), -ELOOP);
    assert_int_equal(cs_state_path_resolve("relative/state", out, sizeof(out), &err), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_plain_dir_resolves_to_itself, setup, teardown),
        cmocka_unit_test_setup_teardown(test_links_and_dotdot_resolve_to_the_target, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_world_writable_parent_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sticky_parent_holds_only_trusted_entries, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_parent_of_another_user_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_dir_of_another_user_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_paths, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
