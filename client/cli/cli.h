/* The csched command-line tool: shared state, exit codes and the helpers
 * that every command uses (flag parsing, job building, output, errors).
 *
 * Single-threaded. Messages built here are heap trees laid out exactly as
 * protobuf-c's unpack lays them out, so one *__free_unpacked call frees
 * them whole.
 *
 * Calls only point down (unit_calls): util.c is the ground floor, message.c
 * and format.c stand on it, the flag parsers of connect.c, jobstop.c and
 * schedule.c on those, args.c and output.c higher, and the commands
 * (cmd_*.c) and main.c on top.
 */
#ifndef CS_CLI_H
#define CS_CLI_H

#include <csched/client.h>
#include <csched/scheduler.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json_codec.h"

/* Exit codes; docs/cli.md lists them for users. */
enum cs_cli_exit {
    CS_EXIT_OK = 0,
    /* health: the server answered, but is not serving. */
    CS_EXIT_NOT_SERVING = 1,
    CS_EXIT_USAGE = 64,
    /* A job file that is not valid YAML or not a valid job list. */
    CS_EXIT_DATAERR = 65,
    CS_EXIT_NOINPUT = 66,
    /* A local failure inside csched (out of memory, ...). */
    CS_EXIT_SOFTWARE = 70,
    /* The server (or gRPC) answered with status code N: exit 80 + N. */
    CS_EXIT_STATUS_BASE = 80,
    /* trigger --wait: the run ended without an exit code of its own. */
    CS_EXIT_RUN_TIMED_OUT = 124,
    CS_EXIT_RUN_CANCELLED = 125,
    CS_EXIT_RUN_LOST = 126,
    CS_EXIT_RUN_NOT_STARTED = 127,
};

enum cs_cli_format {
    CS_FORMAT_TABLE,
    CS_FORMAT_JSON,
    CS_FORMAT_YAML,
};

/* The security flags or their environment variables (connect.c); NULL
 * when not given. */
struct cs_cli_security {
    const char *ca, *cert, *key, *token_file, *token;
};

/* A context of the config file (config.c): a server and how to reach it.
 * NULL for what it does not set; heap strings owned by its config. */
struct cs_cli_context {
    char *name;
    char *server, *ca, *cert, *key, *token_file, *output;
};
/* The config file: its contexts and the current one's name (NULL: none). */
struct cs_cli_config {
    char *current;
    struct cs_cli_context *contexts;
    size_t n;
};

/* What one invocation works with. The client is owned here and freed by
 * main. */
struct cs_cli {
    const char *server;
    char default_server[128]; /* the local socket's address, when server is it */
    enum cs_cli_format format;
    /* -o wide: the table format, with more columns where a command has them. */
    bool wide;
    /* Per-call deadline; 0 = the library's default. */
    int64_t timeout_ms;
    bool wait_for_ready;
    struct cs_cli_security security;
    /* --context NAME; and whether --server and -o were given, which win over
     * a context. */
    const char *context;
    bool server_flag, format_flag;
    /* The config file's contents, once read: the context's strings that
     * server and security point at. */
    struct cs_cli_config config;
    struct cs_client *client;
    FILE *out;
    FILE *err;
};

/* --- util.c: the ground floor, which calls no other file --- */

/* Allocation for the CLI: a command-line tool may stop on exhaustion. */
void *cs_cli_xmalloc(size_t size);
void *cs_cli_xcalloc(size_t n, size_t size);
void *cs_cli_xrealloc(void *p, size_t size);
char *cs_cli_xstrdup(const char *s);
char *cs_cli_xstrndup(const char *s, size_t n);
/* A FILE writing into *text (open_memstream), and its close: the text is
 * whole after the close; exhaustion stops the tool. */
FILE *cs_cli_memstream(char **text, size_t *len);
void cs_cli_memstream_close(FILE *f);

/* What a flag parser did with argv[*i]. Every flag parser of the CLI
 * returns one of these, or a negative errno (-EINVAL: a bad or missing
 * value) with a message for a person in its struct cs_cli_err. */
enum cs_cli_flag_result {
    /* argv[*i] is none of the parser's flags: *i and err are untouched. */
    CS_CLI_FLAG_NOT_MINE = 0,
    /* Taken with its value: *i is on the flag's last word, which the flag
     * loop's i++ steps past. */
    CS_CLI_FLAG_TAKEN = 1,
};

/* An error for a person, as cschedd's struct cs_err (which the CLI does not
 * include): a negative errno and a message that names the flag and what it
 * takes. Filled by callees, owned by callers. */
struct cs_cli_err {
    int code;
    char msg[256];
};

/* Sets err and returns code, so that a parser can write
 * "return cs_cli_err_set(err, -EINVAL, ...)". */
int cs_cli_err_set(struct cs_cli_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* If argv[*i] is the flag name (as "--name VALUE" or "--name=VALUE"), stores
 * the value (NULL when missing), advances *i past it and returns true. The
 * matcher under every flag parser. */
bool cs_cli_flag(const char *name, int argc, char **argv, int *i, const char **value);

/* cs_cli_flag for a flag that needs a value: a cs_cli_flag_result, or
 * -EINVAL with "NAME needs WHAT" in err when the value is missing. */
int cs_cli_flag_value(const char *name, const char *what, int argc, char **argv, int *i,
                      const char **value, struct cs_cli_err *err);

/* Parses a decimal uint32 (no sign, no spaces). Returns 0 or -EINVAL. */
int cs_cli_parse_u32(const char *s, uint32_t *out);

/* Parses a positive decimal int64 id (run id). Returns 0 or -EINVAL. */
int cs_cli_parse_id(const char *s, int64_t *out);

/* Parses seconds ("30", "1.5") into milliseconds > 0. Returns 0 or -EINVAL. */
int cs_cli_parse_seconds(const char *s, int64_t *out_ms);

/* Parses a run state ("running" or "RUN_STATE_RUNNING", any case). Returns
 * 0 or -EINVAL. */
int cs_cli_parse_state(const char *s, Csched__V1__RunState *out);

/* --- message.c: heap messages --- */

/* Adds or replaces key in a protobuf-c map field (entries of entry_desc,
 * string key and value). entries and n point at the message's map field.
 * Copies key and value. */
void cs_cli_map_put(const ProtobufCMessageDescriptor *entry_desc, void ***entries, size_t *n,
                    const char *key, const char *value);

/* Sets job->secret_env[name] from ref, "file:/ABSOLUTE/PATH" or "env:VAR"
 * (a variable of cschedd's environment), replacing an earlier one of the
 * same name. 0, or -EINVAL for a ref of neither form. */
int cs_cli_secret_put(Csched__V1__Job *job, const char *name, const char *ref);

/* Splits "K=V" and puts it in the map. Returns 0 or -EINVAL (no '=', empty
 * key). */
int cs_cli_map_put_kv(const ProtobufCMessageDescriptor *entry_desc, void ***entries, size_t *n,
                      const char *kv);

/* A new heap Job with every field at its default; free with
 * csched__v1__job__free_unpacked. */
Csched__V1__Job *cs_cli_job_new(void);

/* Replaces a string field of a heap message with a copy of s. */
void cs_cli_set_string(char **field, const char *s);

/* Appends a copy of arg to the job's command. */
void cs_cli_job_add_command(Csched__V1__Job *job, const char *arg);
/* Appends a copy of s to a repeated string field (exits when out of memory). */
void cs_cli_strings_add(char ***list, size_t *n, const char *s);

/* --- format.c: one value as text --- */

/* "succeeded" for RUN_STATE_SUCCEEDED, "-" for unspecified. Static. */
const char *cs_cli_state_name(int state);

/* Whether a run in state has ended (succeeded, failed, timed out,
 * cancelled, lost). */
bool cs_cli_state_is_final(int state);

/* Formats a _unix_ms time as local "YYYY-MM-DD HH:MM:SS +HH:MM" (the zone's
 * offset), or "-" for 0. */
void cs_cli_format_time(int64_t unix_ms, char *buf, size_t len);

/* Formats a time relative to now_ms in its largest unit: "in 4m", "12m
 * ago", "3d ago", "0s ago"; "-" for 0. */
void cs_cli_format_ago(int64_t unix_ms, int64_t now_ms, char *buf, size_t len);

/* Formats a duration in ms as "1.234s", "2m03s", "1h02m"; "-" if negative. */
void cs_cli_format_duration(int64_t ms, char *buf, size_t len);

/* Formats a run or attempt outcome: "exit 3", "signal 9 (KILL)", or "-". */
void cs_cli_format_outcome(bool has_exit, int32_t exit_code, bool has_signal, int32_t sig,
                           char *buf, size_t len);

/* cs_cli_format_outcome for a run's outcome oneof. */
void cs_cli_format_run_outcome(const Csched__V1__Run *run, char *buf, size_t len);

/* --- connect.c: the connection --- */

/* Takes a security flag (--ca, --cert, --key, --token-file, --token) at
 * argv[*i]: a cs_cli_flag_result, or -EINVAL with err. */
int cs_cli_security_flag(struct cs_cli *cli, int argc, char **argv, int *i, struct cs_cli_err *err);
/* Makes cli->client from cli->server and the security settings (flags over
 * CSCHED_CA, CSCHED_CERT, CSCHED_KEY, CSCHED_TOKEN_FILE, CSCHED_TOKEN).
 * Returns CS_EXIT_OK, or the exit code after printing why. */
int cs_cli_connect(struct cs_cli *cli);

/* --- args.c: flags --- */

/* Fills cli with the defaults (server from CSCHED_SERVER, else the local
 * unix socket: cs_client_default_target), table output, stdout/stderr). */
void cs_cli_init(struct cs_cli *cli);

/* Takes a global flag (--server, -o/--output, --timeout, --wait-for-ready,
 * and the security flags) at argv[*i]: a cs_cli_flag_result, or -EINVAL
 * with err for a bad value. */
int cs_cli_global_flag(struct cs_cli *cli, int argc, char **argv, int *i, struct cs_cli_err *err);

/* cs_cli_global_flag for a command's own flag loop, which prints a bad
 * value as a usage error: a cs_cli_flag_result, or -EINVAL once the error
 * is printed (the command exits CS_EXIT_USAGE). */
int cs_cli_take_global_flag(struct cs_cli *cli, int argc, char **argv, int *i);

/* cs_cli_flag_value for a command's own flag loop, which prints "NAME needs
 * WHAT" as a usage error: a cs_cli_flag_result (*value set when taken), or
 * -EINVAL once the error is printed. */
int cs_cli_take_flag_value(struct cs_cli *cli, const char *name, const char *what, int argc,
                           char **argv, int *i, const char **value);

/* -l SELECTOR or --selector SELECTOR, a label selector the server applies
 * (key=value, key!=value, key in (a,b), key notin (a,b), key, !key): as
 * cs_cli_take_flag_value. */
int cs_cli_take_selector(struct cs_cli *cli, int argc, char **argv, int *i, const char **value);

/* The end of a command's flag loop: takes a global flag, or fails with
 * "NAME: unexpected 'ARG'; usage: USAGE". Returns 0 when taken (go on), or
 * the exit code for the command to return. */
int cs_cli_take_global_or_fail(struct cs_cli *cli, int argc, char **argv, int *i, const char *name,
                               const char *usage);

/* cs_cli_take_global_or_fail for a command that takes one word (a job name,
 * a run id): the first argument that is neither a flag nor a global flag is
 * stored in *word (which starts NULL); any other fails. */
int cs_cli_take_global_or_word(struct cs_cli *cli, int argc, char **argv, int *i, const char **word,
                               const char *name, const char *usage);

/* Parses the arguments of "job create/update": NAME, then flags, then
 * either "-- ARGV..." or "--shell STR". Stores a new heap job in *out.
 * Global flags among them go to cli. Returns 0 or -EINVAL with err. */
int cs_cli_parse_job_args(struct cs_cli *cli, int argc, char **argv, Csched__V1__Job **out,
                          struct cs_cli_err *err);

/* Takes exactly npos positional words (global flags may be among them) into
 * pos. Returns 0, or prints a usage error and returns CS_EXIT_USAGE. */
int cs_cli_positionals(struct cs_cli *cli, int argc, char **argv, const char **pos, int npos,
                       const char *usage);

/* --- jobfile.c: YAML job files --- */

/* Parses a job file's text: any number of YAML documents, each one job, a
 * list of jobs or {jobs: [...]}. On 0, *jobs is a heap array of n heap jobs
 * (free with cs_cli_jobs_free) and, if lines is not NULL, *lines a heap
 * array (free) of the line each job starts on. On -EINVAL, err says what
 * and on which line, prefixed with name. */
int cs_cli_jobfile_parse(const char *name, const char *text, size_t len, Csched__V1__Job ***jobs,
                         unsigned **lines, size_t *n, char *err, size_t errlen);

/* Reads path ("-" = stdin) and parses it. Returns 0, -EINVAL (bad content)
 * or a negative errno from reading (message in err either way). */
int cs_cli_jobfile_load(const char *path, Csched__V1__Job ***jobs, unsigned **lines, size_t *n,
                        char *err, size_t errlen);

void cs_cli_jobs_free(Csched__V1__Job **jobs, size_t n);

/* --- encode.c: -o json and -o yaml (json_codec.h writes the JSON) --- */

/* Writes msg as "PATH: VALUE" lines, one per set field (proto3 defaults
 * left out), PATH in proto names after prefix: "retry.multiplier",
 * "env.KEY", "command[0]"; values as JSON text. What apply compares. */
void cs_cli_flatten(FILE *f, const char *prefix, const ProtobufCMessage *msg);

/* Writes msg to cli->out as one document in cli->format (JSON: one line;
 * YAML: after "---"), and flushes, so a stream shows each as it comes. */
void cs_cli_print_message(struct cs_cli *cli, const ProtobufCMessage *msg);

/* A list command's output: one document that is the list response as the
 * proto maps it, {"jobs":[...],"nextPageToken":""}, built while the pages
 * come. Nothing is written in table format. */
struct cs_cli_list {
    struct cs_cli *cli;
    const char *field; /* the response's list field, proto name ("jobs") */
    size_t n;
};
void cs_cli_list_begin(struct cs_cli_list *list, struct cs_cli *cli, const char *field);
void cs_cli_list_add(struct cs_cli_list *list, const ProtobufCMessage *msg);
/* Ends the document; next_page_token is where the listing stopped ("" at
 * the end). */
void cs_cli_list_end(struct cs_cli_list *list, const char *next_page_token);

/* --- schedule.c: a job's schedule --- */

/* Sets the Schedule field named key (schedule, time_zone, misfire,
 * overlap, jitter_seconds, max_catchup, starting_deadline_seconds) from
 * its text, as a flag parser takes a flag: a cs_cli_flag_result
 * (CS_CLI_FLAG_NOT_MINE: key is none of them), or -EINVAL with err on a
 * bad value. */
int cs_cli_schedule_set(Csched__V1__Job *job, const char *key, const char *value,
                        struct cs_cli_err *err);
/* The same as the flags --schedule, --time-zone, ...: a
 * cs_cli_flag_result, or -EINVAL with err. */
int cs_cli_schedule_flag(Csched__V1__Job *job, int argc, char **argv, int *i,
                         struct cs_cli_err *err);
/* The schedule's lines of csched job get, nothing without one. */
void cs_cli_print_schedule(FILE *f, const Csched__V1__Job *job);
/* The first n of the job's next fire times, UTC and local. */
void cs_cli_print_next_fires(FILE *f, const Csched__V1__Job *job, size_t n);

/* --- jobstop.c: the retry policy, deadline and kill settings of a job, and
 * the times of a later run --- */

/* Takes one of --retry-initial-ms N, --retry-max-ms N, --retry-multiplier X,
 * --retry-jitter X, --retry-on ON, each setting job->retry (made on first
 * use): a cs_cli_flag_result, or -EINVAL with err on a bad value. */
int cs_cli_retry_flag(Csched__V1__Job *job, int argc, char **argv, int *i, struct cs_cli_err *err);
/* job->retry, made with every field 0 if the job has none. */
Csched__V1__RetryPolicy *cs_cli_job_retry(Csched__V1__Job *job);
/* "failure", "timeout" or "failure,timeout". Returns 0 or -EINVAL. */
int cs_cli_parse_retry_on(const char *s, Csched__V1__RetryOn *out);
/* The name cs_cli_parse_retry_on takes (static). */
const char *cs_cli_retry_on_name(Csched__V1__RetryOn on);
/* A finite decimal number. Returns 0 or -EINVAL. */
int cs_cli_parse_double(const char *s, double *out);
/* A duration of numbers with units ms, s, m, h, d ("90s", "1h30m", "1.5d")
 * into milliseconds > 0. Returns 0 or -EINVAL. */
int cs_cli_parse_duration(const char *s, int64_t *out_ms);
/* A time: "YYYY-MM-DD[T ]HH:MM[:SS]" followed by Z or +HH:MM/-HH:MM (else
 * local time), or "@UNIX_SECONDS", into unix milliseconds. 0 or -EINVAL. */
int cs_cli_parse_at(const char *s, int64_t *out_ms);
/* The job table's lines for the retry policy, deadline and kill settings. */
void cs_cli_print_job_stop(FILE *f, const Csched__V1__Job *job);

/* --- output.c: the human tables, which print what schedule.c and
 * jobstop.c print of a job --- */

/* Prints a job as "key: value" lines. */
void cs_cli_print_job(FILE *f, const Csched__V1__Job *job);

/* Prints a run with its attempts. */
void cs_cli_print_run(FILE *f, const Csched__V1__Run *run);

/* The -w of the list commands (list_watch.c): after the listing, each later
 * change of a run of job_name (NULL or "": any) in state (0: any) of a job
 * the label selector matches (NULL or "": any), from the Watch events after
 * after_seq, goes to row_cb, which prints its row (0, or the failure of a
 * call with st saying why). Runs until interrupted or the deadline: 0 or
 * the exit code of the printed failure. */
struct cs_cli_list_watch {
    const char *what; /* names the watch in errors: "watch runs" */
    const char *job_name;
    Csched__V1__RunState state;
    const char *selector;
    int (*row_cb)(struct cs_cli *cli, const Csched__V1__Event *ev, struct cs_status *st, void *arg);
    void *arg;
};
int cs_cli_list_watch(struct cs_cli *cli, const struct cs_cli_list_watch *w, int64_t after_seq);
/* The last event committed now, where a -w after a listing starts (what
 * names the call in errors). 0 or the exit code of the printed failure. */
int cs_cli_last_seq(struct cs_cli *cli, const char *what, int64_t *seq);

/* The table of a run listing (printed with cs_cli_table_print). */
struct cs_cli_table;
void cs_cli_run_table_init(struct cs_cli_table *t);
void cs_cli_run_table_row(struct cs_cli_table *t, const Csched__V1__Run *run);

/* Table header and row for events: fixed widths, as a stream cannot wait
 * for its widest row. */
void cs_cli_print_event_header(FILE *f);
void cs_cli_print_event_row(FILE *f, const Csched__V1__Event *ev);

/* --- errors.c --- */

/* Exit code for a library return value: 80 + status for rc > 0, 70 for a
 * local failure. */
int cs_cli_exit_for_rc(int rc);

/* Exit code that stands for a finished run: its exit code, 128 + signal,
 * or one of CS_EXIT_RUN_*. */
int cs_cli_exit_for_run(const Csched__V1__Run *run);

/* Prints "csched: WHAT: STATUS_NAME: message" and returns the exit code. */
int cs_cli_fail(struct cs_cli *cli, const char *what, int rc, const struct cs_status *status);

/* Prints "csched: message" and returns CS_EXIT_USAGE. */
int cs_cli_usage(struct cs_cli *cli, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The call options that the global flags ask for. */
struct cs_call_opts cs_cli_call_opts(const struct cs_cli *cli);

/* --- follow.c: a Watch stream through the server's restarts --- */

/* What a cs_cli_follow_cb returns once it has read a Watch stream. */
enum cs_cli_follow {
    /* What the command waited for has come. */
    CS_CLI_FOLLOW_DONE = 0,
    /* The stream ended (st says how); it may be resumed. */
    CS_CLI_FOLLOW_ENDED = 1,
    /* The stream ended, and resuming it could miss or repeat events. */
    CS_CLI_FOLLOW_STOP = 2,
};

/* Reads one open Watch stream (owned by the caller). Before it returns
 * CS_CLI_FOLLOW_ENDED it sets req to resume where the stream stopped.
 * Returns a cs_cli_follow value or a negative errno. */
typedef int (*cs_cli_follow_cb)(struct cs_cli *cli, struct cs_stream *stream,
                                Csched__V1__WatchRequest *req, struct cs_status *st, void *arg);

/* Opens req's Watch and hands it to follow_cb. While the stream ends because
 * the server is UNAVAILABLE, it says so on stderr and opens req again 1 s
 * later, waiting for the server to be ready, up to 30 times. Returns 0 (done,
 * or the last stream ended OK) or the exit code of the error it printed as
 * "csched: WHAT: ...". */
int cs_cli_watch_follow(struct cs_cli *cli, const char *what, Csched__V1__WatchRequest *req,
                        cs_cli_follow_cb follow_cb, void *arg);

/* --- table.c: aligned tables --- */

/* A table's cells (heap copies), the first row its header. */
struct cs_cli_table {
    size_t ncols, nrows, cap;
    char **cells;
};
/* A paged List call for cs_cli_list_pages: fetch_cb makes one call for
 * req with page_size and page_token (borrowed), items names the response's
 * repeated field, row_cb adds one item to the table, what names the call
 * for an error ("list runs"); at most limit items are shown. */
typedef int (*cs_cli_page_fetch_cb)(struct cs_cli *cli, void *req, uint32_t page_size,
                                    const char *page_token, ProtobufCMessage **resp,
                                    const struct cs_call_opts *opts, struct cs_status *st);
struct cs_cli_pages {
    const char *what;
    const char *items;
    void *req;
    uint32_t limit;
    cs_cli_page_fetch_cb fetch_cb;
    void (*row_cb)(struct cs_cli_table *t, const ProtobufCMessage *item);
    /* Optional: the table's column widths are kept here (as
     * cs_cli_table_print_keep), for rows printed after it. */
    size_t *widths;
};
/* Prints every page (the table t made by the caller, when the format is a
 * table): 0, or the exit code of cs_cli_fail. */
int cs_cli_list_pages(struct cs_cli *cli, const struct cs_cli_pages *p, struct cs_cli_table *t);

/* Characters in s (UTF-8 code points, not bytes): how wide it prints. */
size_t cs_cli_text_width(const char *s);
/* Starts a table of ncols columns with ncols header strings. */
void cs_cli_table_init(struct cs_cli_table *t, size_t ncols, ...);
/* Adds a row of ncols cells (copied). */
void cs_cli_table_row(struct cs_cli_table *t, const char *const *cells);
/* Writes the table, each line after indent, columns two spaces apart and as
 * wide as their widest cell; frees it. */
void cs_cli_table_print(struct cs_cli_table *t, FILE *f, const char *indent);
/* cs_cli_table_print (no indent) that keeps each column's width in widths
 * (ncols of them, 0 at first) and prints the header only if header: rows
 * printed later this way line up under the first ones. */
void cs_cli_table_print_keep(struct cs_cli_table *t, FILE *f, size_t *widths, bool header);
/* Frees the table unprinted. */
void cs_cli_table_free(struct cs_cli_table *t);

/* --- joblist.c: the table of csched job list --- */

/* One job of the list with what other calls said of it: its last finished
 * run (NULL: none among its latest) and how many of its runs are running.
 * Borrowed pointers. */
struct cs_cli_job_row {
    const Csched__V1__Job *job;
    const Csched__V1__Run *last;
    uint32_t running;
};
enum cs_cli_job_sort {
    CS_CLI_JOB_SORT_NAME,
    CS_CLI_JOB_SORT_NEXT,    /* soonest first */
    CS_CLI_JOB_SORT_LAST,    /* latest ended first */
    CS_CLI_JOB_SORT_RUNNING, /* most first */
};
/* How the table shows: -o wide, --absolute, --sort-by, and the clock the
 * relative times are read against. */
struct cs_cli_job_view {
    bool wide, absolute;
    enum cs_cli_job_sort sort;
    int64_t now_ms;
};
/* "name", "next", "last" or "running". Returns 0 or -EINVAL. */
int cs_cli_parse_job_sort(const char *s, enum cs_cli_job_sort *out);
/* Sorts rows as v says and makes the table of them in t (to print with
 * cs_cli_table_print): NAME SCHEDULE PAUSED NEXT LAST RUNNING, and when
 * wide LIMITS COMMAND, the command cut to keep lines within 100 columns. */
void cs_cli_job_table(struct cs_cli_table *t, struct cs_cli_job_row *rows, size_t n,
                      const struct cs_cli_job_view *v);

/* --- help.c --- */

/* The help of command (and, for job, its subcommand sub; may be NULL); ""
 * for a command it does not know; the global flags' lines for a NULL
 * command. Static. */
const char *cs_cli_help_text(const char *command, const char *sub);

/* The i-th command's name and one-line summary (static): 0, or -ENOENT
 * past the last. */
int cs_cli_command_summary(size_t i, const char **name, const char **summary);

/* Writes csched --help: each command with its summary, examples, the global
 * flags. */
void cs_cli_print_usage(FILE *f);

/* Writes the help of command (as cs_cli_help_text) to f. Returns 0, or
 * -ENOENT for a command it does not know. */
int cs_cli_help(FILE *f, const char *command, const char *sub);

/* --- suggest.c: did you mean --- */

/* The word of known[0..n) nearest to word, if near enough to be what was
 * meant, copied into buf; "" when none is. Returns buf. */
const char *cs_cli_suggest(const char *word, const char *const *known, size_t n, char *buf,
                           size_t len);

/* cs_cli_suggest among the flags of command ("trigger", "job next", as
 * cs_cli_take_global_or_word names it) and the global flags. */
const char *cs_cli_suggest_flag(const char *command, const char *word, char *buf, size_t len);

/* --- runref.c, logs.c: a run by id or by job, and its output --- */

/* The run word means: a run ID (digits), or JOB's latest run (with previous,
 * the one before it; ListRuns). Stores it in *id: 0, or the exit code of
 * the printed failure (a usage error, a failed call, NOT_FOUND's when the
 * job has no such run). */
int cs_cli_run_ref(struct cs_cli *cli, const char *word, bool previous, int64_t *id);

/* Prints req's ReadLogs stream as it comes (logs.c): 0, or the exit code of
 * the printed failure. */
int cs_cli_read_logs(struct cs_cli *cli, const Csched__V1__ReadLogsRequest *req);
/* The same, printing no failure: 0, a gRPC status code > 0 (st says why) or
 * a negative errno. */
int cs_cli_read_logs_status(struct cs_cli *cli, const Csched__V1__ReadLogsRequest *req,
                            struct cs_status *st);

/* --- config.c: the config file and its contexts --- */

/* The config file's path: $CSCHED_CONFIG, else $XDG_CONFIG_HOME/csched/
 * config.yaml, else $HOME/.config/csched/config.yaml. 0, -ENOENT when none
 * of them is set, -ENAMETOOLONG. */
int cs_cli_config_path(char *buf, size_t len);
/* Reads the file at path into cfg (free with cs_cli_config_free). 0, or a
 * negative errno (-ENOENT: no file; -EINVAL: not a config file) with the
 * message, naming the file and line, in err. */
int cs_cli_config_load(const char *path, struct cs_cli_config *cfg, char *err, size_t errlen);
/* Writes cfg to path whole or not at all (mode 0600, a temporary file
 * renamed over it), making missing directories 0700. 0 or a negative errno
 * with err. */
int cs_cli_config_save(const char *path, const struct cs_cli_config *cfg, char *err, size_t errlen);
void cs_cli_config_free(struct cs_cli_config *cfg);
/* The context named name, or NULL. */
struct cs_cli_context *cs_cli_config_find(struct cs_cli_config *cfg, const char *name);
/* The context named name, added empty if cfg has none. */
struct cs_cli_context *cs_cli_config_add(struct cs_cli_config *cfg, const char *name);
/* The field of ctx that a key of the file names ("server", "token-file",
 * ...), or NULL for another key. */
char **cs_cli_context_field(struct cs_cli_context *ctx, const char *key);
/* Applies the context (--context, else the file's current one, else none)
 * to what no flag set: the server, the security files, the output. A
 * --context wins over the CSCHED_* variables, the file's current context
 * does not. Returns CS_EXIT_OK, or the exit code after printing why (an
 * unknown --context, a file that cannot be read). */
int cs_cli_context_apply(struct cs_cli *cli);

/* --- commands: each takes the words after its verb --- */
int cs_cmd_job(struct cs_cli *cli, int argc, char **argv);
/* job list (cmd_job_list.c): the words after "list". */
int cs_cmd_job_list(struct cs_cli *cli, int argc, char **argv);
int cs_cmd_apply(struct cs_cli *cli, int argc, char **argv);
int cs_cmd_trigger(struct cs_cli *cli, int argc, char **argv);
int cs_cmd_runs(struct cs_cli *cli, int argc, char **argv);
int cs_cmd_run(struct cs_cli *cli, int argc, char **argv);
int cs_cmd_cancel(struct cs_cli *cli, int argc, char **argv);
int cs_cmd_logs(struct cs_cli *cli, int argc, char **argv);
int cs_cmd_watch(struct cs_cli *cli, int argc, char **argv);
int cs_cmd_stats(struct cs_cli *cli, int argc, char **argv);
int cs_cmd_health(struct cs_cli *cli, int argc, char **argv);
int cs_cmd_slots(struct cs_cli *cli, int argc, char **argv);
int cs_cmd_pause(struct cs_cli *cli, int argc, char **argv);
int cs_cmd_resume(struct cs_cli *cli, int argc, char **argv);
int cs_cmd_backfill(struct cs_cli *cli, int argc, char **argv);
int cs_cmd_audit(struct cs_cli *cli, int argc, char **argv);
int cs_cmd_replicas(struct cs_cli *cli, int argc, char **argv);
int cs_cmd_cluster(struct cs_cli *cli, int argc, char **argv);
/* The table csched replicas prints (cmd_replicas.c): one row per replica,
 * "(this)" after the id of the one that answered, "expired" after the age
 * of a lease that has run out. */
void cs_cli_print_replicas(FILE *f, const Csched__V1__ListReplicasResponse *resp);
/* hooks: a job's hook deliveries (ListHookDeliveries). */
int cs_cmd_hooks(struct cs_cli *cli, int argc, char **argv);
/* The table csched hooks prints (cmd_hooks.c): one row per delivery. */
void cs_cli_print_hook_deliveries(FILE *f, const Csched__V1__ListHookDeliveriesResponse *resp);
/* A hook event's word, as job files write it ("timed_out"; jobfile_hooks.c). */
const char *cs_cli_hook_event_name(Csched__V1__HookEvent event);
/* job graph and job causes (cmd_job_after.c; docs/dependencies.md). */
int cs_cmd_job_graph(struct cs_cli *cli, int argc, char **argv);
int cs_cmd_job_causes(struct cs_cli *cli, int argc, char **argv);
/* The table csched job causes prints: a line per cause, one per upstream. */
void cs_cli_print_dependency_causes(FILE *f, const Csched__V1__ListDependencyCausesResponse *resp);
/* An after entry's on as job files write it ("succeeded"; jobfile_after.c). */
const char *cs_cli_after_on_name(Csched__V1__DependencyOn on);
/* token new NAME ROLE: needs no connection (cli->client is NULL). */
int cs_cmd_token(struct cs_cli *cli, int argc, char **argv);
/* ui [--url URL]: prints the console's address; makes no call. */
int cs_cmd_ui(struct cs_cli *cli, int argc, char **argv);
/* version: csched's and, from ListReplicas, the answering replica's. */
int cs_cmd_version(struct cs_cli *cli, int argc, char **argv);
/* config use-context|get-contexts|set-context|current-context: needs no
 * connection. */
int cs_cmd_config(struct cs_cli *cli, int argc, char **argv);
/* completion bash|zsh|fish: needs no connection. */
int cs_cmd_completion(struct cs_cli *cli, int argc, char **argv);

#endif
