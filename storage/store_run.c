/* The runs and attempts tables: their SQL and the mapping of runs and
 * attempts to and from rows. A run is read together with its attempts in
 * one statement (runs LEFT JOIN attempts), grouped back into messages here.
 * Loop thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

static const struct cs_store_outcome_cases run_outcome = {
    CSCHED__V1__RUN__OUTCOME_EXIT_CODE,
    CSCHED__V1__RUN__OUTCOME_TERM_SIGNAL,
};

static const struct cs_store_outcome_cases attempt_outcome = {
    CSCHED__V1__ATTEMPT__OUTCOME_EXIT_CODE,
    CSCHED__V1__ATTEMPT__OUTCOME_TERM_SIGNAL,
};

/* Many rows per statement, one array per column: see store_bulk.c. The rows
 * of one statement have distinct ids, since ON CONFLICT DO UPDATE may not
 * touch a row twice. */
const char cs_store_sql_run_put[] =
    "INSERT INTO runs (id, job_name, state, env, idempotency_key, created_unix_ms,"
    " started_unix_ms, ended_unix_ms, exit_code, term_signal, message, cancel_requested,"
    " triggered_by, not_before_unix_ms, array_id)"
    " SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bytea[], $5::text[],"
    " $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], $11::text[],"
    " $12::boolean[], $13::text[], $14::bigint[], $15::bigint[])"
    " ON CONFLICT (id) DO UPDATE SET job_name = EXCLUDED.job_name, state = EXCLUDED.state,"
    " env = EXCLUDED.env, idempotency_key = EXCLUDED.idempotency_key,"
    " created_unix_ms = EXCLUDED.created_unix_ms, started_unix_ms = EXCLUDED.started_unix_ms,"
    " ended_unix_ms = EXCLUDED.ended_unix_ms, exit_code = EXCLUDED.exit_code,"
    " term_signal = EXCLUDED.term_signal, message = EXCLUDED.message,"
    " cancel_requested = EXCLUDED.cancel_requested, triggered_by = EXCLUDED.triggered_by,"
    " not_before_unix_ms = EXCLUDED.not_before_unix_ms";

const enum cs_store_col_type cs_store_run_cols[CS_STORE_RUN_COLS] = {
    CS_STORE_COL_INT,  CS_STORE_COL_TEXT, CS_STORE_COL_INT,  CS_STORE_COL_BYTEA, CS_STORE_COL_TEXT,
    CS_STORE_COL_INT,  CS_STORE_COL_INT,  CS_STORE_COL_INT,  CS_STORE_COL_INT,   CS_STORE_COL_INT,
    CS_STORE_COL_TEXT, CS_STORE_COL_BOOL, CS_STORE_COL_TEXT, CS_STORE_COL_INT,   CS_STORE_COL_INT,
};

/* An update without a directory keeps the one recorded before. Rows have
 * distinct (run_id, number), as for runs. */
const char cs_store_sql_attempt_put[] =
    "INSERT INTO attempts (run_id, number, state, exit_code, term_signal, started_unix_ms,"
    " ended_unix_ms, minder_pid, user_cpu_ms, system_cpu_ms, max_rss_kb, message, attempt_dir,"
    " leftover_processes, retry_delay_ms, retry_jitter_ms, stdout_written_bytes,"
    " stdout_kept_bytes, stderr_written_bytes, stderr_kept_bytes, limit_hit, peak_memory_bytes,"
    " unenforced_limits, replica)"
    " SELECT c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, c17, c18,"
    " c19, c20, c21, c22, c23,"
    " CASE WHEN c24 = '' THEN coalesce(current_setting('csched.replica', true), '') ELSE c24 END"
    " FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[],"
    " $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[],"
    " $11::bigint[], $12::text[], $13::text[], $14::bigint[], $15::bigint[], $16::bigint[],"
    " $17::bigint[], $18::bigint[], $19::bigint[], $20::bigint[], $21::bigint[],"
    " $22::bigint[], $23::text[], $24::text[])"
    " AS u(c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, c17, c18,"
    " c19, c20, c21, c22, c23, c24)"
    " ON CONFLICT (run_id, number) DO UPDATE SET state = EXCLUDED.state,"
    " exit_code = EXCLUDED.exit_code, term_signal = EXCLUDED.term_signal,"
    " started_unix_ms = EXCLUDED.started_unix_ms, ended_unix_ms = EXCLUDED.ended_unix_ms,"
    " minder_pid = EXCLUDED.minder_pid, user_cpu_ms = EXCLUDED.user_cpu_ms,"
    " system_cpu_ms = EXCLUDED.system_cpu_ms, max_rss_kb = EXCLUDED.max_rss_kb,"
    " message = EXCLUDED.message, attempt_dir = CASE WHEN EXCLUDED.attempt_dir = ''"
    " THEN attempts.attempt_dir ELSE EXCLUDED.attempt_dir END,"
    " leftover_processes = EXCLUDED.leftover_processes,"
    " retry_delay_ms = EXCLUDED.retry_delay_ms, retry_jitter_ms = EXCLUDED.retry_jitter_ms,"
    " stdout_written_bytes = EXCLUDED.stdout_written_bytes,"
    " stdout_kept_bytes = EXCLUDED.stdout_kept_bytes,"
    " stderr_written_bytes = EXCLUDED.stderr_written_bytes,"
    " stderr_kept_bytes = EXCLUDED.stderr_kept_bytes, limit_hit = EXCLUDED.limit_hit,"
    " peak_memory_bytes = EXCLUDED.peak_memory_bytes,"
    " unenforced_limits = EXCLUDED.unenforced_limits";

const enum cs_store_col_type cs_store_attempt_cols[CS_STORE_ATTEMPT_COLS] = {
    CS_STORE_COL_INT, CS_STORE_COL_INT,  CS_STORE_COL_INT,  CS_STORE_COL_INT,  CS_STORE_COL_INT,
    CS_STORE_COL_INT, CS_STORE_COL_INT,  CS_STORE_COL_INT,  CS_STORE_COL_INT,  CS_STORE_COL_INT,
    CS_STORE_COL_INT, CS_STORE_COL_TEXT, CS_STORE_COL_TEXT, CS_STORE_COL_INT,  CS_STORE_COL_INT,
    CS_STORE_COL_INT, CS_STORE_COL_INT,  CS_STORE_COL_INT,  CS_STORE_COL_INT,  CS_STORE_COL_INT,
    CS_STORE_COL_INT, CS_STORE_COL_INT,  CS_STORE_COL_TEXT, CS_STORE_COL_TEXT,
};

/* Column order read by run_from_row and attempt_from_row. */
#define RUN_COLUMNS                                                                                \
    " r.id, r.job_name, r.state, r.env, r.idempotency_key, r.created_unix_ms,"                     \
    " r.started_unix_ms, r.ended_unix_ms, r.exit_code, r.term_signal, r.message,"                  \
    " r.cancel_requested, r.triggered_by, r.not_before_unix_ms, a.number, a.state, a.exit_code,"   \
    " a.term_signal, a.started_unix_ms, a.ended_unix_ms, a.minder_pid, a.user_cpu_ms,"             \
    " a.system_cpu_ms, a.max_rss_kb, a.message, a.attempt_dir, a.leftover_processes,"              \
    " a.retry_delay_ms, a.retry_jitter_ms, a.stdout_written_bytes, a.stdout_kept_bytes,"           \
    " a.stderr_written_bytes, a.stderr_kept_bytes, a.limit_hit, a.peak_memory_bytes,"              \
    " a.unenforced_limits, a.replica"

/* Where the attempt's columns start, and how many there are. */
enum { COL_ATTEMPT = 14, N_ATTEMPT_COLS = 23 };

const char cs_store_sql_run_get[] =
    "SELECT" RUN_COLUMNS " FROM runs r LEFT JOIN attempts a ON a.run_id = r.id"
    " WHERE r.id = $1 ORDER BY a.number";

/* The literal idempotency_key <> '' lets the planner use the partial
 * index. A run made before the job of that name was (last) created belongs
 * to another job: no job, no run. */
const char cs_store_sql_run_by_key[] =
    "SELECT" RUN_COLUMNS " FROM runs r LEFT JOIN attempts a ON a.run_id = r.id"
    " WHERE r.job_name = $1 AND r.idempotency_key = $2 AND r.idempotency_key <> ''"
    " AND r.id >= (SELECT j.first_run_id FROM jobs j WHERE j.name = $1)"
    " ORDER BY r.id, a.number";

/* Two statements rather than one with "$1 = '' OR job_name = $1", so that a
 * cached generic plan can still use the (job_name, id) index. s reads one run
 * past the limit, to tell whether more are left; k keeps those within the
 * limit that start under the byte budget (octet_length of a bytea reads its
 * size without detoasting it). The last column counts what was read but not
 * kept. */
#define STR_(x) #x
#define STR(x) STR_(x)
#define RUN_LIST_BYTES STR(CS_STORE_RUN_LIST_BYTES)
/* The newest run made before $4 (since): runs are made in id order, so the
 * scan back from the newest stops there, never reading older history. The
 * CASE leaves the subquery unrun without a since. */
#define SINCE_ID                                                                                   \
    "CASE WHEN $4::bigint = 0 THEN 0 ELSE coalesce((SELECT o.id FROM runs o"                       \
    " WHERE o.created_unix_ms < $4::bigint ORDER BY o.id DESC LIMIT 1), 0) END"
#define RUN_PAGE(where)                                                                            \
    "WITH s AS (SELECT id, coalesce(octet_length(env), 0) + octet_length(job_name)"                \
    " + octet_length(idempotency_key) + octet_length(message) + octet_length(triggered_by)"        \
    " + 64 AS sz FROM runs"                                                                        \
    " WHERE " where " AND ($1::smallint = 0 OR state = $1::smallint)"                              \
    " AND ($2::bigint = 0 OR id < $2::bigint) AND id > " SINCE_ID " ORDER BY id DESC"              \
    " LIMIT $3::bigint + 1),"                                                                      \
    " p AS (SELECT id, row_number() OVER w AS n, sum(sz) OVER w - sz AS offset_bytes FROM s"       \
    " WINDOW w AS (ORDER BY id DESC)),"                                                            \
    " k AS (SELECT id FROM p WHERE n <= $3::bigint AND offset_bytes < " RUN_LIST_BYTES ")"         \
    " SELECT" RUN_COLUMNS ", (SELECT count(*) FROM p) - (SELECT count(*) FROM k)"                  \
    " FROM runs r JOIN k ON k.id = r.id LEFT JOIN attempts a ON a.run_id = r.id"                   \
    " ORDER BY r.id DESC, a.number"

const char cs_store_sql_run_list[] = RUN_PAGE("true");
const char cs_store_sql_run_list_job[] = RUN_PAGE("job_name = $5::text");
const char cs_store_sql_run_list_jobs[] = RUN_PAGE("job_name = ANY($5::text[])");
const char cs_store_sql_run_list_not_jobs[] = RUN_PAGE("job_name <> ALL($5::text[])");
const char cs_store_sql_run_list_array[] = RUN_PAGE("array_id = $5::bigint");

/* The column cs_store_sql_run_list adds after RUN_COLUMNS. */
enum { COL_LEFT_OUT = COL_ATTEMPT + N_ATTEMPT_COLS };

bool cs_store_run_list_more(const PGresult *res)
{
    return PQntuples(res) > 0 && cs_store_row_int(res, 0, COL_LEFT_OUT) > 0;
}

/* A run's ended_unix_ms is 0 until it ends: the condition lets the scan
 * use runs_unended (0006), which keeps state out of every index so that a
 * run's updates before its end are HOT. */
const char cs_store_sql_run_active[] =
    "SELECT" RUN_COLUMNS " FROM runs r LEFT JOIN attempts a ON a.run_id = r.id"
    " WHERE r.ended_unix_ms = 0 AND r.state IN (1, 2, 3) ORDER BY r.id, a.number";

/* The running attempts of unended runs recorded by another replica ($1 is
 * this one's id; $2 true: every replica's, this id having been another
 * state directory's), and how long until that replica's commands stop. */
const char cs_store_sql_remote_attempts[] =
    "SELECT a.run_id, a.number, a.replica,"
    " coalesce(greatest(0, extract(epoch FROM rp.attempts_until - now()) * 1000), 0)::bigint"
    " FROM runs r JOIN attempts a ON a.run_id = r.id LEFT JOIN replicas rp ON rp.id = a.replica"
    " WHERE r.ended_unix_ms = 0 AND a.state IN (2, 3) AND a.replica <> ''"
    " AND (a.replica <> $1 OR $2::boolean) ORDER BY a.run_id, a.number";

const char cs_store_sql_max_ids[] = "SELECT (SELECT coalesce(max(id), 0) FROM runs),"
                                    " (SELECT coalesce(max(seq), 0) FROM events),"
                                    " (SELECT coalesce(max(id), 0) FROM audit),"
                                    " (SELECT coalesce(min(seq), 1) - 1 FROM events),"
                                    " (SELECT max_running FROM cluster_limits)";

/* The run's env map travels as a csched.v1.Run holding only the map, the
 * schedule's slot it was made for (the slots table has the same link as
 * run_id, for SQL), its place in an array (array_id also has a column of
 * its own, for ListRuns) and, for a run made by its job's after list, the
 * upstream runs that caused it and their cause (migration 0017's table has
 * the same link, for SQL). */
static void env_params(const Csched__V1__Run *run, struct cs_store_params *p)
{
    Csched__V1__Run env_only = CSCHED__V1__RUN__INIT;
    size_t len;
    uint8_t *buf;

    if (run->n_env == 0 && run->slot_unix_ms == 0 && run->array_id == 0 &&
        run->n_caused_by_run_ids == 0) {
        cs_store_params_null(p);
        return;
    }
    env_only.n_env = run->n_env;
    env_only.env = run->env;
    env_only.slot_unix_ms = run->slot_unix_ms;
    env_only.array_id = run->array_id;
    env_only.array_index = run->array_index;
    env_only.array_max_running = run->array_max_running;
    env_only.n_caused_by_run_ids = run->n_caused_by_run_ids;
    env_only.caused_by_run_ids = run->caused_by_run_ids;
    env_only.cause = run->cause;
    len = csched__v1__run__get_packed_size(&env_only);
    buf = cs_store_xmalloc(len);
    csched__v1__run__pack(&env_only, buf);
    cs_store_params_bytes(p, buf, len);
}

void cs_store_run_params(const Csched__V1__Run *run, struct cs_store_params *p)
{
    cs_store_params_int(p, run->id);
    cs_store_params_text(p, run->job_name);
    cs_store_params_int(p, run->state);
    env_params(run, p);
    cs_store_params_text(p, run->idempotency_key);
    cs_store_params_int(p, run->created_unix_ms);
    cs_store_params_int(p, run->started_unix_ms);
    cs_store_params_int(p, run->ended_unix_ms);
    cs_store_params_outcome(p, &run_outcome, run->outcome_case, run->exit_code, run->term_signal);
    cs_store_params_text(p, run->message);
    cs_store_params_bool(p, run->cancel_requested);
    cs_store_params_text(p, run->triggered_by);
    cs_store_params_int(p, run->not_before_unix_ms);
    cs_store_params_int(p, run->array_id);
}

/* A list of names as one text column, comma-separated. */
static void params_names(struct cs_store_params *p, char *const *names, size_t n)
{
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(names[i]) + 1;
    char *text = cs_store_xmalloc(len);
    text[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            strcat(text, ",");
        strcat(text, names[i]);
    }
    cs_store_params_text(p, text);
    free(text);
}

void cs_store_attempt_params(int64_t run_id, const Csched__V1__Attempt *attempt,
                             const char *attempt_dir, struct cs_store_params *p)
{
    cs_store_params_int(p, run_id);
    cs_store_params_int(p, attempt->number);
    cs_store_params_int(p, attempt->state);
    cs_store_params_outcome(p, &attempt_outcome, attempt->outcome_case, attempt->exit_code,
                            attempt->term_signal);
    cs_store_params_int(p, attempt->started_unix_ms);
    cs_store_params_int(p, attempt->ended_unix_ms);
    cs_store_params_int(p, attempt->minder_pid);
    cs_store_params_int(p, attempt->user_cpu_ms);
    cs_store_params_int(p, attempt->system_cpu_ms);
    cs_store_params_int(p, attempt->max_rss_kb);
    cs_store_params_text(p, attempt->message);
    cs_store_params_text(p, attempt_dir != NULL ? attempt_dir : "");
    cs_store_params_int(p, attempt->leftover_processes);
    cs_store_params_int(p, attempt->retry_delay_ms);
    cs_store_params_int(p, attempt->retry_jitter_ms);
    cs_store_params_int(p, attempt->stdout_written_bytes);
    cs_store_params_int(p, attempt->stdout_kept_bytes);
    cs_store_params_int(p, attempt->stderr_written_bytes);
    cs_store_params_int(p, attempt->stderr_kept_bytes);
    cs_store_params_int(p, attempt->limit_hit);
    cs_store_params_int(p, attempt->peak_memory_bytes);
    params_names(p, attempt->unenforced_limits, attempt->n_unenforced_limits);
    cs_store_params_text(p, attempt->replica);
}

/* Appends names as a text[] literal, each quoted: a job named NULL is one. Job
 * names hold neither quotes nor backslashes. */
static void text_array_param(struct cs_store_params *p, const char *const *names, size_t n)
{
    size_t len = 3;
    for (size_t i = 0; i < n; i++)
        len += strlen(names[i]) + 3;
    char *buf = cs_store_xmalloc(len), *w = buf;
    *w++ = '{';
    for (size_t i = 0; i < n; i++)
        w += sprintf(w, "%s\"%s\"", i > 0 ? "," : "", names[i]);
    strcpy(w, "}");
    cs_store_params_text(p, buf);
    free(buf);
}

enum cs_store_stmt cs_store_run_filter_params(const struct cs_store_run_filter *filter,
                                              struct cs_store_params *p)
{
    bool by_job = filter->job_name != NULL && filter->job_name[0] != '\0';

    cs_store_params_int(p, filter->state);
    cs_store_params_int(p, filter->before_id);
    cs_store_params_int(p, filter->limit > 0 ? filter->limit : 100);
    cs_store_params_int(p, filter->since_unix_ms);
    if (filter->array_id != 0) {
        cs_store_params_int(p, filter->array_id);
        return CS_STORE_STMT_RUN_LIST_ARRAY;
    }
    if (by_job) {
        cs_store_params_text(p, filter->job_name);
        return CS_STORE_STMT_RUN_LIST_JOB;
    }
    if (filter->n_job_names == 0 && !filter->job_names_exclude)
        return CS_STORE_STMT_RUN_LIST;
    text_array_param(p, filter->job_names, filter->n_job_names);
    return filter->job_names_exclude ? CS_STORE_STMT_RUN_LIST_NOT_JOBS
                                     : CS_STORE_STMT_RUN_LIST_JOBS;
}

static void env_from_row(const struct cs_store_logger *log, Csched__V1__Run *run,
                         const PGresult *res, int row)
{
    size_t len;
    const uint8_t *buf = cs_store_row_bytes(res, row, 3, &len);
    Csched__V1__Run *env_only;

    if (buf == NULL)
        return;
    env_only = csched__v1__run__unpack(NULL, len, buf);
    if (env_only == NULL) {
        cs_store_log(log, CS_STORE_LOG_ERROR, "run %lld: stored env does not unpack (%zu bytes)",
                     (long long)run->id, len);
        return;
    }
    run->n_env = env_only->n_env;
    run->env = env_only->env;
    run->slot_unix_ms = env_only->slot_unix_ms;
    run->array_id = env_only->array_id;
    run->array_index = env_only->array_index;
    run->array_max_running = env_only->array_max_running;
    run->n_caused_by_run_ids = env_only->n_caused_by_run_ids;
    run->caused_by_run_ids = env_only->caused_by_run_ids;
    run->cause = env_only->cause;
    env_only->n_env = 0;
    env_only->env = NULL;
    env_only->n_caused_by_run_ids = 0;
    env_only->caused_by_run_ids = NULL;
    env_only->cause = NULL;
    csched__v1__run__free_unpacked(env_only, NULL);
}

static Csched__V1__Run *run_from_row(const struct cs_store_logger *log, const PGresult *res,
                                     int row)
{
    Csched__V1__Run *run = cs_store_xmalloc(sizeof(*run));

    csched__v1__run__init(run);
    run->id = cs_store_row_int(res, row, 0);
    run->job_name = cs_store_row_strdup(res, row, 1);
    run->state = (Csched__V1__RunState)cs_store_row_int(res, row, 2);
    env_from_row(log, run, res, row);
    run->idempotency_key = cs_store_row_strdup(res, row, 4);
    run->created_unix_ms = cs_store_row_int(res, row, 5);
    run->started_unix_ms = cs_store_row_int(res, row, 6);
    run->ended_unix_ms = cs_store_row_int(res, row, 7);
    run->outcome_case = (Csched__V1__Run__OutcomeCase)cs_store_row_outcome(
        res, row, 8, &run_outcome, &run->exit_code, &run->term_signal);
    run->message = cs_store_row_strdup(res, row, 10);
    run->cancel_requested = cs_store_row_bool(res, row, 11);
    run->triggered_by = cs_store_row_strdup(res, row, 12);
    run->not_before_unix_ms = cs_store_row_int(res, row, 13);
    return run;
}

/* The names of a comma-separated text column, as a malloc'd array of
 * malloc'd strings (NULL for none), as protobuf-c frees them. */
static char **row_names(const PGresult *res, int row, int col, size_t *n)
{
    char *text = cs_store_row_strdup(res, row, col);
    char **names = NULL;

    *n = 0;
    for (char *save = NULL, *name = strtok_r(text, ",", &save); name != NULL;
         name = strtok_r(NULL, ",", &save)) {
        names = cs_store_xrealloc(names, (*n + 1) * sizeof(*names));
        names[(*n)++] = cs_store_xstrdup(name);
    }
    free(text);
    return names;
}

static Csched__V1__Attempt *attempt_from_row(const PGresult *res, int row)
{
    Csched__V1__Attempt *a = cs_store_xmalloc(sizeof(*a));
    int c = COL_ATTEMPT;

    csched__v1__attempt__init(a);
    a->number = (uint32_t)cs_store_row_int(res, row, c);
    a->state = (Csched__V1__RunState)cs_store_row_int(res, row, c + 1);
    a->outcome_case = (Csched__V1__Attempt__OutcomeCase)cs_store_row_outcome(
        res, row, c + 2, &attempt_outcome, &a->exit_code, &a->term_signal);
    a->started_unix_ms = cs_store_row_int(res, row, c + 4);
    a->ended_unix_ms = cs_store_row_int(res, row, c + 5);
    a->minder_pid = (int32_t)cs_store_row_int(res, row, c + 6);
    a->user_cpu_ms = cs_store_row_int(res, row, c + 7);
    a->system_cpu_ms = cs_store_row_int(res, row, c + 8);
    a->max_rss_kb = cs_store_row_int(res, row, c + 9);
    a->message = cs_store_row_strdup(res, row, c + 10);
    /* c + 11 is the attempt's directory, read by the caller. */
    a->leftover_processes = (int32_t)cs_store_row_int(res, row, c + 12);
    a->retry_delay_ms = cs_store_row_int(res, row, c + 13);
    a->retry_jitter_ms = cs_store_row_int(res, row, c + 14);
    a->stdout_written_bytes = cs_store_row_int(res, row, c + 15);
    a->stdout_kept_bytes = cs_store_row_int(res, row, c + 16);
    a->stderr_written_bytes = cs_store_row_int(res, row, c + 17);
    a->stderr_kept_bytes = cs_store_row_int(res, row, c + 18);
    a->limit_hit = (Csched__V1__LimitHit)cs_store_row_int(res, row, c + 19);
    a->peak_memory_bytes = cs_store_row_int(res, row, c + 20);
    a->unenforced_limits = row_names(res, row, c + 21, &a->n_unenforced_limits);
    a->replica = cs_store_row_strdup(res, row, c + 22);
    return a;
}

size_t cs_store_runs_from_rows(const struct cs_store_logger *log, const PGresult *res,
                               Csched__V1__Run ***runs, char ***dirs)
{
    int rows = PQntuples(res);
    Csched__V1__Run **out = NULL;
    char **out_dirs = NULL;
    size_t n = 0;

    for (int row = 0; row < rows; row++) {
        Csched__V1__Run *run;

        if (n == 0 || out[n - 1]->id != cs_store_row_int(res, row, 0)) {
            out = cs_store_xrealloc(out, (n + 1) * sizeof(*out));
            out[n] = run_from_row(log, res, row);
            if (dirs != NULL) {
                out_dirs = cs_store_xrealloc(out_dirs, (n + 1) * sizeof(*out_dirs));
                out_dirs[n] = NULL;
            }
            n++;
        }
        if (cs_store_row_is_null(res, row, COL_ATTEMPT))
            continue;
        run = out[n - 1];
        run->attempts =
            cs_store_xrealloc(run->attempts, (run->n_attempts + 1) * sizeof(*run->attempts));
        run->attempts[run->n_attempts++] = attempt_from_row(res, row);
        if (dirs != NULL) {
            /* Rows come in attempt order, so the last one seen is the last
             * attempt's. */
            free(out_dirs[n - 1]);
            out_dirs[n - 1] = NULL;
            if (PQgetlength(res, row, COL_ATTEMPT + 11) > 0)
                out_dirs[n - 1] = cs_store_row_strdup(res, row, COL_ATTEMPT + 11);
        }
    }
    *runs = out;
    if (dirs != NULL)
        *dirs = out_dirs;
    return n;
}

void cs_store_runs_free(Csched__V1__Run **runs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        protobuf_c_message_free_unpacked(&runs[i]->base, NULL);
    free(runs);
}
