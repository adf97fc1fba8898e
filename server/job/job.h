/* job: the rules a job spec and a trigger request must keep, and copies of
 * API messages. Pure code, any thread. */
#ifndef CS_JOB_H
#define CS_JOB_H

#include "csched/v1/scheduler.pb-c.h"
#include "util.h"

#define CS_JOB_NAME_MAX 128
/* The most runs at once of a job (max_running) and of the server
 * (--max-running). */
#define CS_MAX_RUNNING_LIMIT 100000
#define CS_JOB_ARGS_MAX 4096
/* The kernel refuses a single argument over 128 KiB (MAX_ARG_STRLEN) and an
 * exec whose argv and environment pass ARG_MAX (2 MiB): a job beyond these
 * could never start. */
#define CS_JOB_ARG_BYTES_MAX (128 * 1024 - 1)
#define CS_JOB_EXEC_BYTES_MAX (1024 * 1024)
/* Variables in a job's env and in a run's: 1024 is ten times what a real
 * environment holds, and keeps the merge at an attempt's start (n log n, on
 * the loop) well under a millisecond. */
#define CS_ENV_ENTRIES_MAX 1024
#define CS_ENV_KEY_BYTES_MAX 256
/* The most names a job's trigger_env may list. */
#define CS_TRIGGER_ENV_MAX 64
#define CS_JOB_LABELS_MAX 64
/* A run's definition: TriggerJobRequest encoded (job_name, env overrides,
 * idempotency_key). Every run is stored, held while active and listed by
 * ListRuns, so it is kept small: overrides, not a second job. */
#define CS_RUN_REQUEST_BYTES_MAX (64 * 1024)
#define CS_JOB_MAX_ATTEMPTS 100
/* The bounds of a job's History. */
#define CS_HISTORY_KEEP_MAX 1000000
#define CS_HISTORY_TTL_MAX_S (100U * 366 * 24 * 3600)
#define CS_JOB_TIMEOUT_MAX_S (7 * 24 * 3600)
#define CS_RETRY_BACKOFF_MAX_MS (10 * 60 * 1000)
#define CS_RETRY_MAX_BACKOFF_LIMIT_MS (24 * 3600 * 1000)
#define CS_JOB_RUN_DEADLINE_MAX_S (30 * 24 * 3600)
#define CS_JOB_KILL_GRACE_MAX_S 3600
/* TriggerJob's not_before_unix_ms: at most this far ahead (a year). */
#define CS_RUN_NOT_BEFORE_MAX_MS (366LL * 24 * 3600 * 1000)
/* TriggerJob's array_size: the runs of one array, all made in one loop
 * turn (about 15 ms of it for 1000 on a loaded 2-core VM) and one
 * transaction, and held in memory while active. */
#define CS_RUN_ARRAY_SIZE_MAX 1000

/* Checks a job as a client sent it; fills err with the field and the rule. */
int cs_job_validate(const Csched__V1__Job *spec, struct cs_err *err);
/* The signal a job's attempts get first on a timeout or a cancel (its
 * kill_signal, validated; SIGTERM when unset). */
int cs_job_kill_signal(const Csched__V1__Job *spec);
/* The time between that signal and KILL (kill_grace_seconds, or the
 * minder's default CS_MINDER_KILL_GRACE_MS when unset). */
uint64_t cs_job_kill_grace_ms(const Csched__V1__Job *spec);
/* Checks a TriggerJob request's job name, env, not_before (at most a year
 * ahead), array and size; not whether the job exists. */
int cs_run_request_validate(const Csched__V1__TriggerJobRequest *req, struct cs_err *err);
/* Checks a name alone (for GetJob, TriggerJob, ...). */
int cs_job_name_validate(const char *name, const char *field, struct cs_err *err);
/* The layout protoc-c gives every map<string, string> entry, whatever the
 * message it belongs to: map fields of any message can be read through it. */
struct cs_kv {
    ProtobufCMessage base;
    char *key;
    char *value;
};

/* Checks map entries used as environment variables: at most
 * CS_ENV_ENTRIES_MAX of them, keys non-empty, at most CS_ENV_KEY_BYTES_MAX
 * bytes, without '=', each KEY=VALUE at most CS_JOB_ARG_BYTES_MAX bytes.
 * Linear in the entries' size. */
int cs_env_validate(struct cs_kv *const *env, size_t n, const char *field, struct cs_err *err);

/* The first variable of req's env that spec's trigger_env does not name (what
 * an operator may not set), or NULL. */
const char *cs_job_trigger_env_refused(const Csched__V1__Job *spec,
                                       const Csched__V1__TriggerJobRequest *req);

/* Deep copy of a message through pack + unpack (the copy is owned by the
 * caller and freed with protobuf_c_message_free_unpacked). */
ProtobufCMessage *cs_message_copy(const ProtobufCMessage *msg);
/* Sets a string field of an unpacked message to a copy of value, freeing
 * the old one (protobuf-c's shared empty string excepted). */
void cs_message_set_str(char **field, const char *value);

#endif
