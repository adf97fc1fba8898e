/* csched's connection: the security flags (--ca, --cert, --key, --token-file,
 * --token) over their environment variables (CSCHED_CA, CSCHED_CERT,
 * CSCHED_KEY, CSCHED_TOKEN_FILE, CSCHED_TOKEN), the token file's reading,
 * and the client made from them. Single-threaded, as the rest of the CLI.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const struct {
    const char *flag;
    const char *env;
    size_t field; /* offset of the const char * in struct cs_cli_security */
} security_flags[] = {
    {"--ca", "CSCHED_CA", offsetof(struct cs_cli_security, ca)},
    {"--cert", "CSCHED_CERT", offsetof(struct cs_cli_security, cert)},
    {"--key", "CSCHED_KEY", offsetof(struct cs_cli_security, key)},
    {"--token-file", "CSCHED_TOKEN_FILE", offsetof(struct cs_cli_security, token_file)},
    {"--token", "CSCHED_TOKEN", offsetof(struct cs_cli_security, token)},
};

static const char **field_of(struct cs_cli_security *sec, size_t k)
{
    return (const char **)((char *)sec + security_flags[k].field);
}

int cs_cli_security_flag(struct cs_cli *cli, int argc, char **argv, int *i, struct cs_cli_err *err)
{
    const char *v;

    for (size_t k = 0; k < sizeof(security_flags) / sizeof(security_flags[0]); k++) {
        if (!cs_cli_flag(security_flags[k].flag, argc, argv, i, &v))
            continue;
        if (v == NULL || v[0] == '\0')
            return cs_cli_err_set(err, -EINVAL, "%s needs a value", security_flags[k].flag);
        *field_of(&cli->security, k) = v;
        return CS_CLI_FLAG_TAKEN;
    }
    return CS_CLI_FLAG_NOT_MINE;
}

/* The token file's first line, without its line end, into *out (the caller
 * frees it). 0, -ENODATA for an empty one, or a negative errno. */
static int read_token(const char *path, char **out)
{
    char line[4096];
    FILE *f = fopen(path, "re");
    size_t n;

    if (f == NULL)
        return -errno;
    if (fgets(line, sizeof(line), f) == NULL)
        line[0] = '\0';
    fclose(f);
    n = strcspn(line, "\r\n");
    line[n] = '\0';
    if (n == 0)
        return -ENODATA;
    *out = cs_cli_xstrdup(line);
    memset(line, 0, sizeof(line));
    return 0;
}

int cs_cli_connect(struct cs_cli *cli)
{
    struct cs_cli_security *sec = &cli->security;
    struct cs_client_opts opts;
    char *token = NULL;
    int rc;

    for (size_t k = 0; k < sizeof(security_flags) / sizeof(security_flags[0]); k++) {
        const char *env = getenv(security_flags[k].env);

        if (*field_of(sec, k) == NULL && env != NULL && env[0] != '\0')
            *field_of(sec, k) = env;
    }
    if (sec->token_file != NULL && sec->token == NULL) {
        rc = read_token(sec->token_file, &token);
        if (rc != 0) {
            fprintf(cli->err, "csched: token file %s: %s\n", sec->token_file,
                    rc == -ENODATA ? "empty" : strerror(-rc));
            return CS_EXIT_NOINPUT;
        }
    }
    if ((sec->cert == NULL) != (sec->key == NULL))
        return cs_cli_usage(cli, "--cert and --key go together");
    opts = (struct cs_client_opts){
        .ca_file = sec->ca,
        .cert_file = sec->cert,
        .key_file = sec->key,
        .token = token != NULL ? token : sec->token,
    };
    rc = cs_client_new_opts(cli->server, &opts, &cli->client);
    if (token != NULL) {
        memset(token, 0, strlen(token));
        free(token);
    }
    return rc != 0 ? cs_cli_fail(cli, "connect", rc, NULL) : CS_EXIT_OK;
}
