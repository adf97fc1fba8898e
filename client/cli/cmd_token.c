/* csched token new NAME ROLE: makes a bearer token (32 random bytes from
 * getrandom, as hex) and prints it once, with the line that lists it in
 * cschedd's --tokens-file (NAME ROLE SHA-256). Needs no server: it runs
 * before any connection is made, and the token is kept nowhere.
 */
#include <ctype.h>
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <string.h>
#include <sys/random.h>

#include "cli.h"

#define TOKEN_BYTES 32
#define NAME_MAX_CHARS 64

static void to_hex(const unsigned char *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";

    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

/* The rules cschedd's tokens file holds names to. */
static bool name_ok(const char *name)
{
    size_t n = strlen(name);

    if (n == 0 || n > NAME_MAX_CHARS)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!isalnum((unsigned char)name[i]) && strchr("._-@", name[i]) == NULL)
            return false;
    }
    return true;
}

static int token_new(struct cs_cli *cli, const char *name, const char *role)
{
    unsigned char raw[TOKEN_BYTES], md[SHA256_DIGEST_LENGTH];
    char token[2 * TOKEN_BYTES + 1], hash[2 * SHA256_DIGEST_LENGTH + 1];

    if (!name_ok(name))
        return cs_cli_usage(cli,
                            "token name '%s' must be 1 to %d letters, digits, '.', '_', "
                            "'-' or '@'",
                            name, NAME_MAX_CHARS);
    if (strcmp(role, "viewer") != 0 && strcmp(role, "operator") != 0 && strcmp(role, "admin") != 0)
        return cs_cli_usage(cli, "role '%s' must be viewer, operator or admin", role);
    if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
        fprintf(cli->err, "csched: token new: getrandom: %s\n", strerror(errno));
        return CS_EXIT_SOFTWARE;
    }
    to_hex(raw, sizeof(raw), token);
    SHA256((const unsigned char *)token, strlen(token), md);
    to_hex(md, sizeof(md), hash);
    fprintf(cli->out,
            "# the token, shown this once: give it to the client (csched --token-file)\n"
            "%s\n"
            "# the line for cschedd's --tokens-file (then SIGHUP cschedd)\n"
            "%s %s %s\n",
            token, name, role, hash);
    OPENSSL_cleanse(raw, sizeof(raw));
    OPENSSL_cleanse(token, sizeof(token));
    return CS_EXIT_OK;
}

int cs_cmd_token(struct cs_cli *cli, int argc, char **argv)
{
    const char *pos[3];
    int rc = cs_cli_positionals(cli, argc, argv, pos, 3, "csched token new NAME ROLE");

    if (rc != 0)
        return rc;
    if (strcmp(pos[0], "new") != 0)
        return cs_cli_usage(cli, "unknown token command '%s'; see --help", pos[0]);
    return token_new(cli, pos[1], pos[2]);
}
