/* Unit tests of secret_env: every rule of cs_secret_env_validate (the code
 * and a message naming the entry), and cs_secrets_resolve on real files
 * (a trailing newline dropped, a variable replaced, what cannot be read
 * named by its reference and never by a value). */
#include <errno.h>
#include <fcntl.h>
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

#include "env.h"
#include "secret.h"
#include "secret_thread.h"

struct secret_buf {
    Csched__V1__Job job;
    Csched__V1__Job__EnvEntry env, *env_ptr;
    Csched__V1__Job__SecretEnvEntry entries[3], *entry_ptrs[3];
    Csched__V1__SecretRef refs[3];
};

static void buf_init(struct secret_buf *b)
{
    memset(b, 0, sizeof(*b));
    csched__v1__job__init(&b->job);
    b->job.name = "j";
    b->job.shell = "true";
    csched__v1__job__env_entry__init(&b->env);
    b->env.key = "PLAIN";
    b->env.value = "x";
    b->env_ptr = &b->env;
    b->job.env = &b->env_ptr;
    b->job.n_env = 1;
    for (int i = 0; i < 3; i++) {
        csched__v1__job__secret_env_entry__init(&b->entries[i]);
        csched__v1__secret_ref__init(&b->refs[i]);
        b->entries[i].value = &b->refs[i];
        b->entry_ptrs[i] = &b->entries[i];
    }
    b->job.secret_env = b->entry_ptrs;
}

static void set(struct secret_buf *b, int i, const char *name, bool file, const char *ref)
{
    b->entries[i].key = (char *)name;
    b->refs[i].source_case =
        file ? CSCHED__V1__SECRET_REF__SOURCE_FILE : CSCHED__V1__SECRET_REF__SOURCE_SERVER_ENV;
    if (file)
        b->refs[i].file = (char *)ref;
    else
        b->refs[i].server_env = (char *)ref;
    if ((size_t)i + 1 > b->job.n_secret_env)
        b->job.n_secret_env = (size_t)i + 1;
}

static void check_invalid(const struct secret_buf *b, const char *needle)
{
    struct cs_err err = {0};
    int rc = cs_secret_env_validate(&b->job, &err);

    if (rc != -EINVAL || err.code != -EINVAL)
        fail_msg("expected -EINVAL for \"%s\", got %d \"%s\"", needle, rc, err.msg);
    if (strstr(err.msg, needle) == NULL)
        fail_msg("expected \"%s\" in the message, got \"%s\"", needle, err.msg);
}

static void test_secret_valid(void **state)
{
    struct secret_buf b;
    struct cs_err err = {0};

    buf_init(&b);
    assert_int_equal(cs_secret_env_validate(&b.job, &err), 0);
    set(&b, 0, "TOKEN", true, "/run/secrets/token");
    set(&b, 1, "API_KEY", false, "API_KEY_FOR_JOBS");
    assert_int_equal(cs_secret_env_validate(&b.job, &err), 0);
}

static void test_secret_rules(void **state)
{
    struct secret_buf b;

    buf_init(&b);
    set(&b, 0, "T", true, "relative/token");
    check_invalid(&b, "must be an absolute path");
    set(&b, 0, "", true, "/x");
    check_invalid(&b, "empty variable name");
    set(&b, 0, "A=B", true, "/x");
    check_invalid(&b, "contains '='");
    set(&b, 0, "CSCHED_RUN_ID", true, "/x");
    check_invalid(&b, "CSCHED_");
    set(&b, 0, "PLAIN", true, "/x");
    check_invalid(&b, "also in job.env");
    set(&b, 0, "T", false, "9LIVES");
    check_invalid(&b, "is not a variable name");
    set(&b, 0, "T", false, "");
    check_invalid(&b, "is not a variable name");
    set(&b, 0, "T", false, "PGPASSWORD");
    check_invalid(&b, "database credentials");
    set(&b, 0, "T", false, "CSCHED_DATABASE_URL");
    check_invalid(&b, "database credentials");
    set(&b, 0, "T", false, "OK");
    set(&b, 1, "T", true, "/x");
    check_invalid(&b, "variable T twice");
    b.job.n_secret_env = 1;
    b.refs[0].source_case = CSCHED__V1__SECRET_REF__SOURCE__NOT_SET;
    check_invalid(&b, "names no source");
    b.entries[0].value = NULL;
    check_invalid(&b, "names no source");
    b.job.n_secret_env = CS_SECRET_ENV_MAX + 1;
    check_invalid(&b, "the limit is 64");
}

static char **env_of(const char *const *entries)
{
    return cs_env_copy((char *const *)entries);
}

static const char *lookup(char **env, const char *name)
{
    size_t len = strlen(name);
    for (; *env != NULL; env++)
        if (strncmp(*env, name, len) == 0 && (*env)[len] == '=')
            return *env + len + 1;
    return NULL;
}

static void test_secret_resolve(void **state)
{
    char path[] = "/tmp/test_secret.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "s3cret\n", 7), 7);
    close(fd);
    const char *base[] = {"HOME=/root", "TOKEN=old", NULL};
    const char *server[] = {"FROM_SERVER=v2", NULL};
    char **envp = env_of(base);
    char *const *server_env = env_of(server);
    struct cs_secret secrets[] = {
        {.name = "TOKEN", .is_file = true, .ref = path},
        {.name = "OTHER", .is_file = false, .ref = "FROM_SERVER"},
    };
    char msg[256] = "";

    assert_int_equal(cs_secrets_resolve(&envp, secrets, 2, server_env, msg, sizeof(msg)), 0);
    assert_string_equal(lookup(envp, "TOKEN"), "s3cret");
    assert_string_equal(lookup(envp, "OTHER"), "v2");
    assert_string_equal(lookup(envp, "HOME"), "/root");
    size_t n = 0;
    while (envp[n] != NULL)
        n++;
    assert_int_equal(n, 3);

    /* Not there: the message names the variable and the reference. */
    struct cs_secret missing[] = {
        {.name = "GONE", .is_file = true, .ref = "/nonexistent/x"},
        {.name = "NOVAR", .is_file = false, .ref = "NOT_SET_ANYWHERE"},
    };
    assert_int_equal(cs_secrets_resolve(&envp, &missing[0], 1, server_env, msg, sizeof(msg)),
                     -ENOENT);
    assert_non_null(strstr(msg, "GONE (file:/nonexistent/x)"));
    assert_int_equal(cs_secrets_resolve(&envp, &missing[1], 1, server_env, msg, sizeof(msg)),
                     -ENOENT);
    assert_non_null(strstr(msg, "NOVAR (env:NOT_SET_ANYWHERE)"));

    /* A NUL byte cannot go in an environment; the value is not shown. */
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "zqv\0xw", 6), 6);
    close(fd);
    assert_int_equal(cs_secrets_resolve(&envp, secrets, 1, server_env, msg, sizeof(msg)), -EINVAL);
    assert_non_null(strstr(msg, "NUL"));
    assert_null(strstr(msg, "zqv"));
    /* A directory is not a secret. */
    secrets[0].ref = "/tmp";
    assert_int_equal(cs_secrets_resolve(&envp, secrets, 1, server_env, msg, sizeof(msg)), -EINVAL);
    assert_non_null(strstr(msg, "not a regular file"));
    unlink(path);
    cs_env_free(envp);
    cs_env_free((char **)server_env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_secret_valid),
        cmocka_unit_test(test_secret_rules),
        cmocka_unit_test(test_secret_resolve),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
