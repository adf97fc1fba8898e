/* Unit tests of csched's config file: where it is looked for, a round trip
 * through the file (written 0600 in directories made 0700, read back the
 * same, names and values that need quoting included), and the errors a
 * person gets for a file that is not a config. No server. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "cli.h"

/* A fresh directory under TMPDIR for one test. */
static void temp_dir(char *buf, size_t len)
{
    const char *tmp = getenv("TMPDIR");

    snprintf(buf, len, "%s/cs-config-XXXXXX", tmp != NULL ? tmp : "/tmp");
    assert_non_null(mkdtemp(buf));
}

static void test_cli_config_path(void **state)
{
    char path[256];

    setenv("CSCHED_CONFIG", "/etc/csched.yaml", 1);
    assert_int_equal(cs_cli_config_path(path, sizeof(path)), 0);
    assert_string_equal(path, "/etc/csched.yaml");
    unsetenv("CSCHED_CONFIG");
    setenv("XDG_CONFIG_HOME", "/x", 1);
    assert_int_equal(cs_cli_config_path(path, sizeof(path)), 0);
    assert_string_equal(path, "/x/csched/config.yaml");
    /* A relative XDG_CONFIG_HOME is ignored, as the spec says. */
    setenv("XDG_CONFIG_HOME", "rel", 1);
    setenv("HOME", "/home/ops", 1);
    assert_int_equal(cs_cli_config_path(path, sizeof(path)), 0);
    assert_string_equal(path, "/home/ops/.config/csched/config.yaml");
    unsetenv("XDG_CONFIG_HOME");
}

static void test_cli_config_round_trip(void **state)
{
    struct cs_cli_config cfg = {0}, back;
    struct cs_cli_context *ctx;
    char dir[256], path[300], err[512];
    struct stat st;

    temp_dir(dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/a/b/config.yaml", dir);
    ctx = cs_cli_config_add(&cfg, "prod: \"eu\"");
    ctx->server = cs_cli_xstrdup("cschedd.example:50051");
    ctx->token_file = cs_cli_xstrdup("/home/ops/token # not a comment");
    ctx = cs_cli_config_add(&cfg, "local");
    ctx->output = cs_cli_xstrdup("wide");
    cfg.current = cs_cli_xstrdup("local");
    assert_int_equal(cs_cli_config_save(path, &cfg, err, sizeof(err)), 0);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    snprintf(path, sizeof(path), "%s/a", dir);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    snprintf(path, sizeof(path), "%s/a/b/config.yaml", dir);
    assert_int_equal(cs_cli_config_load(path, &back, err, sizeof(err)), 0);
    assert_string_equal(back.current, "local");
    assert_int_equal(back.n, 2);
    ctx = cs_cli_config_find(&back, "prod: \"eu\"");
    assert_non_null(ctx);
    assert_string_equal(ctx->server, "cschedd.example:50051");
    assert_string_equal(ctx->token_file, "/home/ops/token # not a comment");
    assert_null(ctx->ca);
    assert_string_equal(cs_cli_config_find(&back, "local")->output, "wide");
    cs_cli_config_free(&back);
    cs_cli_config_free(&cfg);
}

/* Writes text to a file of dir and loads it: the rc, err filled. */
static int load_text(const char *dir, const char *text, char *err, size_t errlen)
{
    struct cs_cli_config cfg;
    char path[300];
    FILE *f;
    int rc;

    snprintf(path, sizeof(path), "%s/c.yaml", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    rc = cs_cli_config_load(path, &cfg, err, errlen);
    if (rc == 0)
        cs_cli_config_free(&cfg);
    return rc;
}

static void test_cli_config_errors(void **state)
{
    char dir[256], err[512], path[300];
    struct cs_cli_config cfg;

    temp_dir(dir, sizeof(dir));
    assert_int_equal(
        load_text(dir, "contexts:\n  p:\n    server: x\n    tokn: y\n", err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "c.yaml:4: unknown key"));
    assert_int_equal(load_text(dir, "contexts: [a]\n", err, sizeof(err)), -EINVAL);
    assert_int_equal(load_text(dir, "contexts:\n  p: {server: [1]}\n", err, sizeof(err)), -EINVAL);
    assert_int_equal(load_text(dir, "current-context: p\ncontexts: {}\n", err, sizeof(err)), 0);
    snprintf(path, sizeof(path), "%s/none.yaml", dir);
    assert_int_equal(cs_cli_config_load(path, &cfg, err, sizeof(err)), -ENOENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_config_path),
        cmocka_unit_test(test_cli_config_round_trip),
        cmocka_unit_test(test_cli_config_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
