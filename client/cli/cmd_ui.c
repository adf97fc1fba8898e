/* csched ui [--url URL]: prints the address of the web console that cschedd
 * serves with --http-listen, and how to log in to it. Makes no call: the
 * gRPC server does not know where its HTTP side listens, so the URL comes
 * from --url, then CSCHED_CONSOLE_URL, then, for the local socket, the
 * loopback address deploy/quickstart.sh serves the console on.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define UI_USAGE "csched ui [--url URL]"
#define UI_LOOPBACK_URL "http://127.0.0.1:8080/"

/* The console's URL for cli->server, or NULL when it cannot be told. */
static const char *console_url(const struct cs_cli *cli, const char *flag)
{
    const char *env = getenv("CSCHED_CONSOLE_URL");

    if (flag != NULL)
        return flag;
    if (env != NULL && env[0] != '\0')
        return env;
    if (strncmp(cli->server, "unix:", 5) == 0)
        return UI_LOOPBACK_URL;
    return NULL;
}

int cs_cmd_ui(struct cs_cli *cli, int argc, char **argv)
{
    const char *flag = NULL, *url;
    int rc;

    for (int i = 0; i < argc; i++) {
        rc = cs_cli_take_flag_value(cli, "--url", "URL", argc, argv, &i, &flag);
        if (rc == CS_CLI_FLAG_TAKEN)
            continue;
        if (rc < 0)
            return CS_EXIT_USAGE;
        rc = cs_cli_take_global_or_fail(cli, argc, argv, &i, "ui", UI_USAGE);
        if (rc != 0)
            return rc;
    }
    url = console_url(cli, flag);
    if (url == NULL)
        return cs_cli_usage(cli,
                            "ui: where cschedd's console listens is not known for --server %s: "
                            "give --url https://HOST:PORT/ (cschedd's --http-listen) or set "
                            "CSCHED_CONSOLE_URL",
                            cli->server);
    fprintf(cli->out,
            "%s\n"
            "# cschedd serves it with --http-listen ADDR:PORT. Log in with a bearer token\n"
            "# listed in its --tokens-file; make one (viewer, operator or admin) with:\n"
            "#   csched token new NAME viewer\n",
            url);
    return CS_EXIT_OK;
}
