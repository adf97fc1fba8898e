/* Output for csched: the human tables of jobs, runs and events (encode.c
 * writes JSON and YAML). A job's table takes its schedule's lines from
 * schedule.c and its retry's from jobstop.c; values come as text from
 * format.c.
 *
 * Single-threaded.
 */
#include <inttypes.h>
#include <string.h>

#include "cli.h"

static void print_map(FILE *f, const char *title, void **entries, size_t n)
{
    if (n == 0)
        return;
    fprintf(f, "%s:\n", title);
    for (size_t i = 0; i < n; i++) {
        const Csched__V1__Job__EnvEntry *e = entries[i];

        fprintf(f, "  %s=%s\n", e->key, e->value);
    }
}

/* The limits a job sets, one line, or none without any. */
static void print_resources(FILE *f, const Csched__V1__ResourceLimits *r)
{
    const struct {
        const char *name;
        uint64_t value;
    } limits[] = {
        {"memory_bytes", r != NULL ? r->memory_bytes : 0},
        {"cpu_seconds", r != NULL ? r->cpu_seconds : 0},
        {"pids", r != NULL ? r->pids : 0},
        {"open_files", r != NULL ? r->open_files : 0},
        {"file_size", r != NULL ? r->file_size : 0},
        {"cpu_millis", r != NULL ? r->cpu_millis : 0},
    };
    bool any = false;

    for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
        if (limits[i].value == 0)
            continue;
        fprintf(f, "%s%s=%" PRIu64, any ? " " : "resources:        ", limits[i].name,
                limits[i].value);
        any = true;
    }
    if (any)
        fputc('\n', f);
}

void cs_cli_print_job(FILE *f, const Csched__V1__Job *job)
{
    char t[32];

    fprintf(f, "name:             %s\n", job->name);
    if (job->n_command > 0) {
        fprintf(f, "command:         ");
        for (size_t i = 0; i < job->n_command; i++)
            fprintf(f, " %s", job->command[i]);
        fputc('\n', f);
    } else {
        fprintf(f, "shell:            %s\n", job->shell);
    }
    fprintf(f, "working_dir:      %s\n", job->working_dir[0] ? job->working_dir : "-");
    fprintf(f, "run_as_user:      %s\n", job->run_as_user[0] ? job->run_as_user : "-");
    fprintf(f, "run_as_group:     %s\n", job->run_as_group[0] ? job->run_as_group : "-");
    fprintf(f, "max_running:      %" PRIu32 "\n", job->max_running);
    fprintf(f, "timeout_seconds:  %" PRIu32 "\n", job->timeout_seconds);
    fprintf(f, "max_attempts:     %" PRIu32 "\n", job->max_attempts);
    fprintf(f, "retry_backoff_ms: %" PRIu32 "\n", job->retry_backoff_ms);
    cs_cli_print_job_stop(f, job);
    print_resources(f, job->resources);
    for (size_t i = 0; i < job->n_after; i++)
        fprintf(f, "%s%s (on %s)%s", i == 0 ? "after:            " : ", ", job->after[i]->job,
                cs_cli_after_on_name(job->after[i]->on), i + 1 == job->n_after ? "\n" : "");
    fprintf(f, "version:          %" PRIu64 "\n", job->version);
    cs_cli_format_time(job->created_unix_ms, t, sizeof(t));
    fprintf(f, "created:          %s\n", t);
    cs_cli_format_time(job->updated_unix_ms, t, sizeof(t));
    fprintf(f, "updated:          %s\n", t);
    fprintf(f, "created_by:       %s\n", job->created_by[0] ? job->created_by : "-");
    fprintf(f, "updated_by:       %s\n", job->updated_by[0] ? job->updated_by : "-");
    print_map(f, "env", (void **)job->env, job->n_env);
    if (job->n_secret_env > 0) {
        fprintf(f, "secret_env:\n");
        for (size_t i = 0; i < job->n_secret_env; i++) {
            const Csched__V1__SecretRef *r = job->secret_env[i]->value;
            bool file = r != NULL && r->source_case == CSCHED__V1__SECRET_REF__SOURCE_FILE;
            bool env = r != NULL && r->source_case == CSCHED__V1__SECRET_REF__SOURCE_SERVER_ENV;

            fprintf(f, "  %s=%s%s\n", job->secret_env[i]->key,
                    file  ? "file:"
                    : env ? "env:"
                          : "?",
                    file  ? r->file
                    : env ? r->server_env
                          : "");
        }
    }
    print_map(f, "labels", (void **)job->labels, job->n_labels);
    cs_cli_print_schedule(f, job);
}

/* What the job's limits did to attempt a: the one that ended it, its peak
 * memory, the ones this host did not enforce; nothing when none applies. */
static void print_limits(FILE *f, const Csched__V1__Attempt *a)
{
    static const char *const hits[] = {"", "OOM-killed at memory_bytes",
                                       "killed at cpu_seconds (SIGXCPU)",
                                       "killed at file_size (SIGXFSZ)", "forks refused at pids"};

    if (a->limit_hit > 0 && (size_t)a->limit_hit < sizeof(hits) / sizeof(hits[0]))
        fprintf(f, "  attempt %" PRIu32 ": limit hit: %s\n", a->number, hits[a->limit_hit]);
    if (a->peak_memory_bytes > 0)
        fprintf(f, "  attempt %" PRIu32 ": peak memory: %" PRId64 " bytes\n", a->number,
                a->peak_memory_bytes);
    for (size_t i = 0; i < a->n_unenforced_limits; i++)
        fprintf(f, "  attempt %" PRIu32 ": not enforced on this host: %s\n", a->number,
                a->unenforced_limits[i]);
}

static int64_t span_ms(int64_t start, int64_t end)
{
    return start > 0 && end >= start ? end - start : -1;
}

/* One line per stream of a whose log kept less than the command wrote. */
static void print_cut_logs(FILE *f, const Csched__V1__Attempt *a)
{
    const char *names[] = {"stdout", "stderr"};
    const int64_t kept[] = {a->stdout_kept_bytes, a->stderr_kept_bytes};
    const int64_t written[] = {a->stdout_written_bytes, a->stderr_written_bytes};
    for (size_t i = 0; i < 2; i++)
        if (kept[i] < written[i])
            fprintf(f, "  attempt %u: %s cut: its log kept %lld of %lld bytes written\n",
                    (unsigned)a->number, names[i], (long long)kept[i], (long long)written[i]);
}

void cs_cli_print_run(FILE *f, const Csched__V1__Run *run)
{
    char t1[40], t2[40], t3[40], dur[32], delay[32], out[48];
    struct cs_cli_table t;

    cs_cli_format_time(run->created_unix_ms, t1, sizeof(t1));
    cs_cli_format_time(run->started_unix_ms, t2, sizeof(t2));
    cs_cli_format_time(run->ended_unix_ms, t3, sizeof(t3));
    cs_cli_format_run_outcome(run, out, sizeof(out));
    fprintf(f, "run:      %" PRId64 "\n", run->id);
    fprintf(f, "job:      %s\n", run->job_name);
    fprintf(f, "state:    %s%s\n", cs_cli_state_name(run->state),
            run->cancel_requested && run->state < CSCHED__V1__RUN_STATE__RUN_STATE_SUCCEEDED
                ? " (cancel requested)"
                : "");
    fprintf(f, "outcome:  %s\n", out);
    fprintf(f, "created:  %s\n", t1);
    if (run->not_before_unix_ms > 0) {
        cs_cli_format_time(run->not_before_unix_ms, t2, sizeof(t2));
        fprintf(f, "not_before: %s\n", t2);
        cs_cli_format_time(run->started_unix_ms, t2, sizeof(t2));
    }
    fprintf(f, "started:  %s\n", t2);
    fprintf(f, "ended:    %s\n", t3);
    if (run->message[0])
        fprintf(f, "message:  %s\n", run->message);
    if (run->idempotency_key[0])
        fprintf(f, "key:      %s\n", run->idempotency_key);
    if (run->triggered_by[0])
        fprintf(f, "by:       %s\n", run->triggered_by);
    print_map(f, "env", (void **)run->env, run->n_env);
    if (run->n_attempts == 0)
        return;
    fprintf(f, "attempts:\n");
    cs_cli_table_init(&t, 9, "#", "STATE", "OUTCOME", "DURATION", "CPU_MS", "RSS_KB", "LEFTOVER",
                      "DELAY", "MESSAGE");
    for (size_t i = 0; i < run->n_attempts; i++) {
        const Csched__V1__Attempt *a = run->attempts[i];
        char num[16], cpu[24], rss[24], left[16];

        cs_cli_format_outcome(a->outcome_case == CSCHED__V1__ATTEMPT__OUTCOME_EXIT_CODE,
                              a->exit_code,
                              a->outcome_case == CSCHED__V1__ATTEMPT__OUTCOME_TERM_SIGNAL,
                              a->term_signal, out, sizeof(out));
        cs_cli_format_duration(span_ms(a->started_unix_ms, a->ended_unix_ms), dur, sizeof(dur));
        cs_cli_format_duration(a->retry_delay_ms, delay, sizeof(delay));
        snprintf(num, sizeof(num), "%" PRIu32, a->number);
        snprintf(cpu, sizeof(cpu), "%" PRId64, a->user_cpu_ms + a->system_cpu_ms);
        snprintf(rss, sizeof(rss), "%" PRId64, a->max_rss_kb);
        snprintf(left, sizeof(left), "%" PRId32, a->leftover_processes);
        cs_cli_table_row(&t, (const char *const[]){num, cs_cli_state_name(a->state), out, dur, cpu,
                                                   rss, left, delay, a->message});
    }
    cs_cli_table_print(&t, f, "  ");
    for (size_t i = 0; i < run->n_attempts; i++) {
        print_cut_logs(f, run->attempts[i]);
        print_limits(f, run->attempts[i]);
    }
}

void cs_cli_run_table_init(struct cs_cli_table *t)
{
    cs_cli_table_init(t, 6, "ID", "JOB", "STATE", "OUTCOME", "CREATED", "DURATION");
}

void cs_cli_run_table_row(struct cs_cli_table *t, const Csched__V1__Run *run)
{
    char id[24], at[40], dur[32], out[48];

    snprintf(id, sizeof(id), "%" PRId64, run->id);
    cs_cli_format_time(run->created_unix_ms, at, sizeof(at));
    cs_cli_format_duration(span_ms(run->started_unix_ms, run->ended_unix_ms), dur, sizeof(dur));
    cs_cli_format_run_outcome(run, out, sizeof(out));
    cs_cli_table_row(
        t, (const char *const[]){id, run->job_name, cs_cli_state_name(run->state), out, at, dur});
}

void cs_cli_print_event_header(FILE *f)
{
    fprintf(f, "%-8s %-25s %-8s %-24s %-3s %-10s %-20s %s\n", "SEQ", "AT", "RUN", "JOB", "ATT",
            "STATE", "OUTCOME", "MESSAGE");
}

void cs_cli_print_event_row(FILE *f, const Csched__V1__Event *ev)
{
    char t[40], out[48];

    cs_cli_format_time(ev->at_unix_ms, t, sizeof(t));
    cs_cli_format_outcome(ev->outcome_case == CSCHED__V1__EVENT__OUTCOME_EXIT_CODE, ev->exit_code,
                          ev->outcome_case == CSCHED__V1__EVENT__OUTCOME_TERM_SIGNAL,
                          ev->term_signal, out, sizeof(out));
    /* A recovered event says so: its time is the attempt's, not its seq's. */
    fprintf(f, "%-8" PRId64 " %-25s %-8" PRId64 " %-24s %-3" PRIu32 " %-10s %-20s %s%s\n", ev->seq,
            t, ev->run_id, ev->job_name, ev->attempt, cs_cli_state_name(ev->state), out,
            ev->recovered ? "(recovered) " : "", ev->message);
    fflush(f);
}
