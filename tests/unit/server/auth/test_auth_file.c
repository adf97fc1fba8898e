/* Unit tests of auth_file: the tokens file (every error names its line and
 * why; comments and blank lines skipped; a failed parse leaves the set
 * empty), SHA-256 hashing, the lookup of a token by its hash, and the
 * client-roles file, with a whole subject winning over a common name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>
#include <errno.h>

#include "auth_file.h"

/* SHA-256 of "abc" as sha256sum prints it, and another well-formed hash. */
#define ABC_HEX "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define OTHER_HEX "930bbdc51b6aed5c2a5678fd6e28dee7a05e8a4b643cfc0b4427c3efb86c0d94"

static void test_sha256_hex(void **state)
{
    char hex[2 * CS_SHA256_BYTES + 1];

    cs_sha256_hex("abc", 3, hex);
    assert_string_equal(hex, ABC_HEX);
}

static void test_tokens_parse_and_find(void **state)
{
    char hex[2 * CS_SHA256_BYTES + 1], text[512];
    struct cs_tokens set = {0};
    struct cs_err err = {0};
    const struct cs_token *t;

    cs_sha256_hex("secret-token", 12, hex);
    snprintf(text, sizeof(text),
             "# deploy tokens\n"
             "\n"
             "  deploy-bot   operator  %s  \n"
             "reader\tviewer\t" ABC_HEX "\n"
             "ops@example.com admin %.64s",
             hex, "0000000000000000000000000000000000000000000000000000000000000000");
    assert_int_equal(cs_tokens_parse("tokens", text, &set, &err), 0);
    assert_int_equal(set.n, 3);
    t = cs_tokens_find(&set, "secret-token", 12);
    assert_non_null(t);
    assert_string_equal(t->name, "deploy-bot");
    assert_int_equal(t->role, CS_ROLE_OPERATOR);
    t = cs_tokens_find(&set, "abc", 3);
    assert_non_null(t);
    assert_string_equal(t->name, "reader");
    assert_int_equal(t->role, CS_ROLE_VIEWER);
    /* A prefix, a longer token, another case: none is the token. */
    assert_null(cs_tokens_find(&set, "secret-toke", 11));
    assert_null(cs_tokens_find(&set, "secret-token\n", 13));
    assert_null(cs_tokens_find(&set, "ABC", 3));
    /* By its hash (a browser's session): the whole 64 digits, any case. */
    t = cs_tokens_find_hash(&set, hex, strlen(hex));
    assert_non_null(t);
    assert_string_equal(t->name, "deploy-bot");
    assert_non_null(cs_tokens_find_hash(&set, ABC_HEX, 64));
    assert_null(cs_tokens_find_hash(&set, hex, 63));
    assert_null(cs_tokens_find_hash(&set, "secret-token", 12));
    hex[0] = hex[0] == '0' ? '1' : '0';
    assert_null(cs_tokens_find_hash(&set, hex, 64));
    /* Uppercase hex is the same hash. */
    cs_tokens_clear(&set);
    assert_int_equal(cs_tokens_parse("t",
                                     "x admin BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9"
                                     "CB410FF61F20015AD\n",
                                     &set, &err),
                     0);
    assert_non_null(cs_tokens_find(&set, "abc", 3));
    cs_tokens_clear(&set);
    assert_int_equal(set.n, 0);
}

/* text must fail to parse with a message that holds want. */
static void assert_tokens_error(const char *text, const char *want)
{
    struct cs_tokens set = {0};
    struct cs_err err = {0};

    assert_int_equal(cs_tokens_parse("/etc/csched/tokens", text, &set, &err), -EINVAL);
    assert_int_equal(set.n, 0);
    assert_null(set.v);
    if (strstr(err.msg, want) == NULL)
        fail_msg("message \"%s\" does not hold \"%s\"", err.msg, want);
}

static void test_tokens_errors(void **state)
{
    assert_tokens_error("a viewer\n", "/etc/csched/tokens:1: expected NAME ROLE SHA256");
    assert_tokens_error("# c\n\na viewer " ABC_HEX " extra\n", "tokens:3: expected NAME ROLE");
    assert_tokens_error("a boss " ABC_HEX "\n", "tokens:1: role \"boss\" must be viewer");
    assert_tokens_error("a none " ABC_HEX "\n", "tokens:1: role \"none\"");
    assert_tokens_error("a viewer abc\n", "tokens:1: the hash must be 64 hex digits");
    assert_tokens_error("a viewer "
                        "zz7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n",
                        "tokens:1: the hash must be 64 hex digits");
    assert_tokens_error("a/b viewer " ABC_HEX "\n", "tokens:1: name \"a/b\" must be");
    assert_tokens_error("a viewer " ABC_HEX "\na admin " OTHER_HEX "\n",
                        "tokens:2: the name a is listed twice");
    assert_tokens_error("a viewer " ABC_HEX "\nb admin " ABC_HEX "\n",
                        "tokens:2: b has the same token as a");
    char long_line[2000];
    memset(long_line, 'x', sizeof(long_line) - 1);
    long_line[sizeof(long_line) - 1] = '\0';
    assert_tokens_error(long_line, "tokens:1: longer than");
}

static void test_roles(void **state)
{
    enum cs_role r = CS_ROLE_NONE;

    assert_int_equal(cs_role_parse("operator", &r), 0);
    assert_int_equal(r, CS_ROLE_OPERATOR);
    assert_int_equal(cs_role_parse("Admin", &r), -EINVAL);
    assert_string_equal(cs_role_name(CS_ROLE_ADMIN), "admin");
    assert_string_equal(cs_role_name(CS_ROLE_NONE), "none");
}

static void test_cert_roles(void **state)
{
    struct cs_cert_roles set = {0};
    struct cs_err err = {0};

    assert_int_equal(cs_cert_roles_parse("roles",
                                         "# subject or CN, then the role\n"
                                         "CN=ops-bot viewer\n"
                                         "CN=ops-bot,O=Example Corp admin\n"
                                         "  CN=deploy   operator\n",
                                         &set, &err),
                     0);
    assert_int_equal(set.n, 3);
    /* The whole subject wins over the common name. */
    assert_int_equal(cs_cert_roles_find(&set, "CN=ops-bot,O=Example Corp", "ops-bot"),
                     CS_ROLE_ADMIN);
    assert_int_equal(cs_cert_roles_find(&set, "CN=ops-bot,O=Other", "ops-bot"), CS_ROLE_VIEWER);
    assert_int_equal(cs_cert_roles_find(&set, "CN=deploy", "deploy"), CS_ROLE_OPERATOR);
    assert_int_equal(cs_cert_roles_find(&set, "CN=stranger", "stranger"), CS_ROLE_NONE);
    assert_int_equal(cs_cert_roles_find(&set, NULL, NULL), CS_ROLE_NONE);
    cs_cert_roles_clear(&set);
}

static void assert_roles_error(const char *text, const char *want)
{
    struct cs_cert_roles set = {0};
    struct cs_err err = {0};

    assert_int_equal(cs_cert_roles_parse("roles", text, &set, &err), -EINVAL);
    assert_int_equal(set.n, 0);
    if (strstr(err.msg, want) == NULL)
        fail_msg("message \"%s\" does not hold \"%s\"", err.msg, want);
}

static void test_cert_roles_errors(void **state)
{
    assert_roles_error("admin\n", "roles:1: expected SUBJECT ROLE");
    assert_roles_error("\nCN=a root\n", "roles:2: role \"root\"");
    assert_roles_error("ops-bot admin\n", "roles:1: \"ops-bot\" is neither a subject nor CN=NAME");
    assert_roles_error("CN=a admin\nCN=a viewer\n", "roles:2: \"CN=a\" is listed twice");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_hex),    cmocka_unit_test(test_tokens_parse_and_find),
        cmocka_unit_test(test_tokens_errors), cmocka_unit_test(test_roles),
        cmocka_unit_test(test_cert_roles),    cmocka_unit_test(test_cert_roles_errors),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
