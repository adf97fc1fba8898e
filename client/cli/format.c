/* One value as text, for the CLI's tables and lines: a run state, a time,
 * a duration, how a command ended. Calls no other file of the CLI, so the
 * printers of jobs, runs and schedules all stand on it.
 *
 * Single-threaded, as the rest of the CLI.
 */
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "cli.h"

const char *cs_cli_state_name(int state)
{
    const char *name = cs_run_state_name(state);

    if (state == 0)
        return "-";
    return strcmp(name, "unknown") == 0 ? "?" : name;
}

bool cs_cli_state_is_final(int state)
{
    return state >= CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED;
}

void cs_cli_format_time(int64_t unix_ms, char *buf, size_t len)
{
    time_t t = (time_t)(unix_ms / 1000);
    struct tm tm;
    size_t n;

    /* strftime's %z is +HHMM; written +HH:MM, as ISO 8601 and the schedule
     * lines have it. */
    if (unix_ms <= 0 || localtime_r(&t, &tm) == NULL ||
        (n = strftime(buf, len, "%Y-%m-%d %H:%M:%S %z", &tm)) == 0 || n + 2 > len) {
        snprintf(buf, len, "-");
        return;
    }
    memmove(buf + n - 1, buf + n - 2, 3);
    buf[n - 2] = ':';
}

void cs_cli_format_duration(int64_t ms, char *buf, size_t len)
{
    if (ms < 0)
        snprintf(buf, len, "-");
    else if (ms < 60000)
        snprintf(buf, len, "%" PRId64 ".%03" PRId64 "s", ms / 1000, ms % 1000);
    else if (ms < 3600000)
        snprintf(buf, len, "%" PRId64 "m%02" PRId64 "s", ms / 60000, ms / 1000 % 60);
    else
        snprintf(buf, len, "%" PRId64 "h%02" PRId64 "m", ms / 3600000, ms / 60000 % 60);
}

void cs_cli_format_outcome(bool has_exit, int32_t exit_code, bool has_signal, int32_t sig,
                           char *buf, size_t len)
{
    const char *name = has_signal ? sigabbrev_np(sig) : NULL;

    if (has_exit)
        snprintf(buf, len, "exit %" PRId32, exit_code);
    else if (has_signal && name != NULL)
        snprintf(buf, len, "signal %" PRId32 " (%s)", sig, name);
    else if (has_signal)
        snprintf(buf, len, "signal %" PRId32, sig);
    else
        snprintf(buf, len, "-");
}

void cs_cli_format_run_outcome(const Csched__V1__Run *run, char *buf, size_t len)
{
    cs_cli_format_outcome(run->outcome_case == CSCHED__V1__RUN__OUTCOME_EXIT_CODE, run->exit_code,
                          run->outcome_case == CSCHED__V1__RUN__OUTCOME_TERM_SIGNAL,
                          run->term_signal, buf, len);
}

void cs_cli_format_ago(int64_t unix_ms, int64_t now_ms, char *buf, size_t len)
{
    int64_t d = unix_ms - now_ms, a = d < 0 ? -d : d;
    static const struct {
        int64_t ms;
        char unit;
    } units[] = {{86400000, 'd'}, {3600000, 'h'}, {60000, 'm'}, {1000, 's'}};
    size_t u = 0;

    if (unix_ms <= 0) {
        snprintf(buf, len, "-");
        return;
    }
    /* The largest unit that fits, so that the text stays short: "3h", not
     * "3h12m"; a person reading a list wants the order of magnitude. Under
     * a second is "0s ago" (or "in 0s"). */
    while (u + 1 < sizeof(units) / sizeof(units[0]) && a < units[u].ms)
        u++;
    snprintf(buf, len, d > 0 ? "in %" PRId64 "%c" : "%" PRId64 "%c ago", a / units[u].ms,
             units[u].unit);
}
