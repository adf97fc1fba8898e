/* How csched reports failure: one line on stderr in the form
 * "csched: <what failed>: <STATUS_NAME>: <server message>", and an exit code
 * that tells apart usage errors, bad files, each gRPC status and each way a
 * waited-for run can end (docs/cli.md lists them).
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "cli.h"

int cs_cli_exit_for_rc(int rc)
{
    if (rc == 0)
        return CS_EXIT_OK;
    if (rc > 0 && rc <= 16)
        return CS_EXIT_STATUS_BASE + rc;
    return CS_EXIT_SOFTWARE;
}

int cs_cli_exit_for_run(const Csched__V1__Run *run)
{
    bool has_exit = run->outcome_case == CSCHED__V1__RUN__OUTCOME_EXIT_CODE;
    bool has_signal = run->outcome_case == CSCHED__V1__RUN__OUTCOME_TERM_SIGNAL;

    switch (run->state) {
    case CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED:
        return CS_EXIT_OK;
    case CSCHED__V1__RUN_STATE__RUN_STATE_TIMED_OUT:
        return CS_EXIT_RUN_TIMED_OUT;
    case CSCHED__V1__RUN_STATE__RUN_STATE_CANCELLED:
        return CS_EXIT_RUN_CANCELLED;
    case CSCHED__V1__RUN_STATE__RUN_STATE_LOST:
        return CS_EXIT_RUN_LOST;
    case CSCHED__V1__RUN_STATE__RUN_STATE_FAILED:
        /* A failed run always exits non-zero, even if its code was 0 or
         * a multiple of 256. */
        if (has_exit)
            return (run->exit_code & 0xff) != 0 ? run->exit_code & 0xff : 1;
        if (has_signal)
            return 128 + (run->term_signal & 0x7f);
        return CS_EXIT_RUN_NOT_STARTED;
    default:
        /* Not finished: the caller waits for an end state first. */
        return CS_EXIT_SOFTWARE;
    }
}

int cs_cli_fail(struct cs_cli *cli, const char *what, int rc, const struct cs_status *status)
{
    if (rc > 0)
        fprintf(cli->err, "csched: %s: %s: %s\n", what, cs_status_code_name(rc),
                status != NULL && status->message[0] ? status->message : "(no message)");
    else
        fprintf(cli->err, "csched: %s: %s\n", what, strerror(-rc));
    return cs_cli_exit_for_rc(rc);
}

int cs_cli_usage(struct cs_cli *cli, const char *fmt, ...)
{
    va_list ap;

    fputs("csched: ", cli->err);
    va_start(ap, fmt);
    vfprintf(cli->err, fmt, ap);
    va_end(ap);
    fputs(" (see csched --help)\n", cli->err);
    return CS_EXIT_USAGE;
}

struct cs_call_opts cs_cli_call_opts(const struct cs_cli *cli)
{
    struct cs_call_opts opts = {
        .timeout_ms = cli->timeout_ms,
        .wait_for_ready = cli->wait_for_ready,
    };

    return opts;
}
