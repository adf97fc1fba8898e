/* csched completion bash|zsh|fish: the completion script for a shell. bash
 * gets csched.bash, the installed script, built in (completion_bash.h, made
 * by CMake from it); zsh the same through its bashcompinit; fish a script
 * made here from the commands' summaries and the flags their help names, so
 * that it follows help.c with no list of its own.
 */
#include <ctype.h>
#include <string.h>

#include "cli.h"
#include "completion_bash.h"

/* The next long flag that text names from p on ("--name" at the start of a
 * word), its length in *len; NULL when there is none. */
static const char *next_flag(const char *text, const char *p, size_t *len)
{
    while ((p = strstr(p, "--")) != NULL) {
        size_t n = 2;

        while (p[n] == '-' || isalnum((unsigned char)p[n]))
            n++;
        if (n > 2 && (p == text || isspace((unsigned char)p[-1]) || strchr("[(|,", p[-1]))) {
            *len = n;
            return p;
        }
        p += n;
    }
    return NULL;
}

/* Writes fish's "complete" lines for the long flags that text names, each
 * once, offered after command. */
static void fish_flags(FILE *f, const char *command, const char *text)
{
    size_t len, first_len;

    for (const char *p = text; (p = next_flag(text, p, &len)) != NULL; p += len) {
        const char *first = next_flag(text, text, &first_len);

        /* Said already if its first mention is before p. */
        while (first_len != len || memcmp(first, p, len) != 0)
            first = next_flag(text, first + first_len, &first_len);
        if (first == p)
            fprintf(f, "complete -c csched -n '__fish_seen_subcommand_from %s' -l %.*s\n", command,
                    (int)(len - 2), p + 2);
    }
}

static void print_fish(FILE *f)
{
    const char *name, *summary;

    fputs("# fish completion for csched (csched completion fish)\n"
          "function __csched_jobs\n"
          "    csched job list 2>/dev/null | tail -n +2 | string split -f1 ' '\n"
          "end\n"
          "complete -c csched -f\n"
          "complete -c csched -s o -l output -xa 'table wide json yaml'\n"
          "complete -c csched -l server -l context -l timeout -x\n"
          "complete -c csched -l ca -l cert -l key -l token-file -r -F\n"
          "complete -c csched -n '__fish_seen_subcommand_from completion' -xa 'bash zsh fish'\n"
          "complete -c csched -n '__fish_seen_subcommand_from trigger logs run slots pause resume "
          "backfill' -xa '(__csched_jobs)'\n",
          f);
    for (size_t i = 0; cs_cli_command_summary(i, &name, &summary) == 0; i++) {
        fprintf(f, "complete -c csched -n __fish_use_subcommand -a %s -d '%s'\n", name, summary);
        fish_flags(f, name, cs_cli_help_text(name, NULL));
    }
}

int cs_cmd_completion(struct cs_cli *cli, int argc, char **argv)
{
    const char *shell;
    int rc;

    rc = cs_cli_positionals(cli, argc, argv, &shell, 1, "csched completion bash|zsh|fish");
    if (rc != 0)
        return rc;
    if (strcmp(shell, "bash") == 0) {
        fputs(cs_cli_bash_completion, cli->out);
    } else if (strcmp(shell, "zsh") == 0) {
        fputs("#compdef csched\n"
              "autoload -U +X bashcompinit && bashcompinit\n",
              cli->out);
        fputs(cs_cli_bash_completion, cli->out);
    } else if (strcmp(shell, "fish") == 0) {
        print_fish(cli->out);
    } else {
        return cs_cli_usage(cli, "completion takes bash, zsh or fish, not '%s'", shell);
    }
    return 0;
}
