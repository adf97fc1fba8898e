/* What cschedd makes or opens in folders another local user may write to:
 * nothing planted there is followed, handed over or opened up. Each case
 * plants what such a user could (a link, a folder of theirs, a writable
 * folder), starts a real cschedd as root would, and checks that it refuses
 * with a reason and that the target of the plant is unchanged. The ready
 * file's case is test_ready_work's. */
#include <errno.h>
#include <pwd.h>
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

#include "e2e.h"
#include "testfile.h"
#include "testlib.h"

#define LOG_BYTES 8192

struct plant {
    char root[64];      /* a fresh folder, searchable by all */
    char victim[128];   /* a folder of root's, 0755: what a link points at */
    char victim_f[128]; /* a file of root's, 0600 */
};

static struct plant make_plant(void)
{
    struct plant p;
    snprintf(p.root, sizeof(p.root), "%s/csched-plant.XXXXXX", cs_test_tmp_base());
    assert_non_null(mkdtemp(p.root));
    assert_int_equal(chmod(p.root, 0755), 0);
    snprintf(p.victim, sizeof(p.victim), "%s/victim", p.root);
    assert_int_equal(mkdir(p.victim, 0755), 0);
    snprintf(p.victim_f, sizeof(p.victim_f), "%s/victim-file", p.root);
    cs_test_write_text(p.victim_f, "secret\n");
    assert_int_equal(chmod(p.victim_f, 0600), 0);
    return p;
}

static void assert_victims_intact(const struct plant *p)
{
    struct stat st;
    char buf[16] = {0};
    assert_int_equal(stat(p->victim, &st), 0);
    if ((st.st_mode & 07777) != 0755 || st.st_uid != 0)
        fail_msg("%s became mode %o uid %u", p->victim, (unsigned)(st.st_mode & 07777),
                 (unsigned)st.st_uid);
    assert_int_equal(stat(p->victim_f, &st), 0);
    if ((st.st_mode & 07777) != 0600 || st.st_uid != 0)
        fail_msg("%s became mode %o uid %u", p->victim_f, (unsigned)(st.st_mode & 07777),
                 (unsigned)st.st_uid);
    FILE *f = fopen(p->victim_f, "r");
    assert_non_null(f);
    assert_non_null(fgets(buf, sizeof(buf), f));
    fclose(f);
    assert_string_equal(buf, "secret\n");
}

static void remove_plant(const struct plant *p)
{
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", p->root);
    assert_int_equal(system(cmd), 0);
}

static uid_t nobody(void)
{
    struct passwd *pw = getpwnam("nobody");
    assert_non_null(pw);
    return pw->pw_uid;
}

static bool skip_unless_root(void)
{
    if (geteuid() == 0)
        return false;
    fprintf(stderr, "not root: another user's plants cannot be made here\n");
    return true;
}

static void expect_refusal(struct cs_e2e *e, const char *const *args, const char *state_dir,
                           const char *why)
{
    struct cs_testd_options opts = {
        .database_url = cs_testpg_url(e->pg), .extra_args = args, .state_dir = state_dir};
    char log[LOG_BYTES];

    int status = cs_testd_start_refused(&opts, log, sizeof(log));
    if (status == 0)
        fail_msg("cschedd started; expected it to refuse: %s", why);
    if (strstr(log, why) == NULL)
        fail_msg("the refusal does not say \"%s\": \"%s\"", why, log);
}

/* The two folders another user could have left: one anyone may write in
 * (not sticky), and one of theirs. */
enum folder_kind { FOLDER_OPEN, FOLDER_THEIRS };

static const char *const folder_refusal[] = {
    [FOLDER_OPEN] = "may be written by others (mode 777",
    [FOLDER_THEIRS] = "not to root or to cschedd",
};

static void plant_folder(const struct plant *p, enum folder_kind kind, char *dir, size_t cap)
{
    snprintf(dir, cap, "%s/%s", p->root, kind == FOLDER_OPEN ? "open" : "theirs");
    assert_int_equal(mkdir(dir, 0755), 0);
    if (kind == FOLDER_OPEN)
        assert_int_equal(chmod(dir, 0777), 0);
    else
        assert_int_equal(chown(dir, nobody(), (gid_t)-1), 0);
}

/* The socket's folder and the state dir, each as either kind of folder. */
static void test_e2e_localfiles_folders_of_others(void **state)
{
    struct cs_e2e *e = *state;
    if (skip_unless_root())
        skip();
    for (int kind = FOLDER_OPEN; kind <= FOLDER_THEIRS; kind++) {
        struct plant p = make_plant();
        char dir[160], sock[200];
        const char *args[] = {"--socket", sock, NULL};

        plant_folder(&p, (enum folder_kind)kind, dir, sizeof(dir));
        snprintf(sock, sizeof(sock), "%s/csched.sock", dir);
        expect_refusal(e, args, NULL, folder_refusal[kind]);
        expect_refusal(e, NULL, dir, folder_refusal[kind]);
        assert_victims_intact(&p);
        remove_plant(&p);
    }
}

/* The embedded PostgreSQL's socket folder in /tmp, for a state dir whose
 * path is too long for a socket: a link planted at its (predictable) name
 * is refused, not chowned to PostgreSQL's user. The name's hash is FNV-1a
 * of the cluster's folder, as storage/pg_embedded_work.c makes it. */
static void test_e2e_localfiles_embedded_socket_link(void **state)
{
    struct cs_e2e *e = *state;
    if (skip_unless_root())
        skip();
    struct plant p = make_plant();
    char state_dir[300], cluster[310], planted[64];
    uint64_t hash = 1469598103934665603ULL;
    const char *args[] = {NULL};

    snprintf(state_dir, sizeof(state_dir), "%s/%0100d", p.root, 0);
    assert_int_equal(mkdir(state_dir, 0755), 0);
    snprintf(cluster, sizeof(cluster), "%s/pg", state_dir);
    for (const char *c = cluster; *c != '\0'; c++)
        hash = (hash ^ (unsigned char)*c) * 1099511628211ULL;
    snprintf(planted, sizeof(planted), "/tmp/csched-pg-%016llx", (unsigned long long)hash);
    (void)unlink(planted);
    assert_int_equal(symlink(p.victim, planted), 0);

    struct cs_testd_options opts = {
        .database_url = NULL, .extra_args = args, .state_dir = state_dir};
    char log[LOG_BYTES];
    int status = cs_testd_start_refused(&opts, log, sizeof(log));
    (void)unlink(planted);
    if (status == 0)
        fail_msg("cschedd started on a planted socket folder");
    if (strstr(log, planted) == NULL || strstr(log, "a link or a file is there") == NULL)
        fail_msg("the refusal does not name %s and why: \"%s\"", planted, log);
    (void)e;
    assert_victims_intact(&p);
    remove_plant(&p);
}

/* A state dir reached through a folder another user could change: the
 * attack of a user who owns a parent (not sticky, so fs.protected_symlinks
 * does not cover it) and swaps the link after cschedd checked its target,
 * and the same user's link in a sticky folder. Both are refused at start;
 * the same dir reached through root's own link is taken, resolved. */
static void test_e2e_localfiles_state_dir_parents(void **state)
{
    struct cs_e2e *e = *state;
    if (skip_unless_root())
        skip();
    struct plant p = make_plant();
    char theirs[100], real[120], link[120], sticky[100], planted[120], why[64];

    snprintf(theirs, sizeof(theirs), "%s/theirs", p.root);
    snprintf(real, sizeof(real), "%s/real", theirs);
    snprintf(link, sizeof(link), "%s/state", theirs);
    assert_int_equal(mkdir(theirs, 0755), 0);
    assert_int_equal(mkdir(real, 0700), 0);
    assert_int_equal(symlink("real", link), 0);
    assert_int_equal(chown(theirs, nobody(), (gid_t)-1), 0);
    snprintf(why, sizeof(why), "belongs to uid %u", (unsigned)nobody());
    expect_refusal(e, NULL, link, why);
    expect_refusal(e, NULL, real, why);

    snprintf(sticky, sizeof(sticky), "%s/sticky", p.root);
    snprintf(planted, sizeof(planted), "%s/state", sticky);
    assert_int_equal(mkdir(sticky, 0755), 0);
    assert_int_equal(chmod(sticky, 01777), 0);
    assert_int_equal(symlink(p.victim, planted), 0);
    assert_int_equal(lchown(planted, nobody(), (gid_t)-1), 0);
    expect_refusal(e, NULL, planted, "the entry is not root's or cschedd's");
    assert_victims_intact(&p);

    /* Root's own link in root's folder: taken, and resolved to its target. */
    char ours[120], target[120];
    snprintf(target, sizeof(target), "%s/ours-real", p.root);
    snprintf(ours, sizeof(ours), "%s/ours", p.root);
    assert_int_equal(mkdir(target, 0700), 0);
    assert_int_equal(symlink(target, ours), 0);
    /* Its own embedded database: the fixture's cschedd holds the shared one. */
    struct cs_testd_options opts = {.database_url = NULL, .state_dir = ours};
    struct cs_testd *d = NULL;
    assert_int_equal(cs_testd_start(&opts, &d), 0);
    char attempts[160];
    snprintf(attempts, sizeof(attempts), "%s/attempts", target);
    assert_int_equal(access(attempts, F_OK), 0);
    assert_int_equal(cs_testd_stop(d), 0);
    remove_plant(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_localfiles_folders_of_others),
        cmocka_unit_test(test_e2e_localfiles_embedded_socket_link),
        cmocka_unit_test(test_e2e_localfiles_state_dir_parents),
    };
    return cmocka_run_group_tests(tests, cs_e2e_setup, cs_e2e_teardown);
}
