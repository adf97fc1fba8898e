/* fuzz_request: a request as cschedd takes it off the wire, for every
 * method it serves: the first byte is the method's index in scheduler.proto,
 * or past the Scheduler service's methods one of the others (health,
 * reflection) in the order of cs_api_methods; the rest is its encoded
 * request. The bytes go through cs_request_decode, as every call's do
 * (wire_check, protobuf-c's unpack, the maps folded), and on to the checks
 * the method's handler makes before it looks at any state (job.h,
 * api_common.h) and what a handler derives from a request it accepts: a copy
 * (pack and unpack), the environment of a run. No files, no state. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "env.h"
#include "job.h"
#include "request_decode.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ListJobs' page tokens are "after:" and a job name (api_job.c). */
#define JOB_TOKEN_PREFIX "after:"

/* The environment a run of these variables gets, built and freed. */
static void build_env(void *const *entries, size_t n)
{
    static char *const no_env[] = {NULL};
    const struct cs_env_source source = {(struct cs_kv *const *)entries, n};
    cs_env_free(cs_env_build(no_env, &source, 1));
}

/* CreateJob and UpdateJob: the environment of a valid job's runs. */
static void check_job(const Csched__V1__Job *job)
{
    struct cs_err err;
    if (job != NULL && cs_job_validate(job, &err) == 0)
        build_env((void *const *)job->env, job->n_env);
}

static void check_create_job(const ProtobufCMessage *msg)
{
    check_job(((const Csched__V1__CreateJobRequest *)msg)->job);
}

static void check_update_job(const ProtobufCMessage *msg)
{
    check_job(((const Csched__V1__UpdateJobRequest *)msg)->job);
}

static void check_get_job(const ProtobufCMessage *msg)
{
    struct cs_err err;
    (void)cs_job_name_validate(((const Csched__V1__GetJobRequest *)msg)->name, "name", &err);
}

static void check_delete_job(const ProtobufCMessage *msg)
{
    struct cs_err err;
    (void)cs_job_name_validate(((const Csched__V1__DeleteJobRequest *)msg)->name, "name", &err);
}

static void check_list_jobs(const ProtobufCMessage *msg)
{
    const Csched__V1__ListJobsRequest *req = (const Csched__V1__ListJobsRequest *)msg;
    (void)cs_api_page_size(req->page_size);
    if (strncmp(req->page_token, JOB_TOKEN_PREFIX, strlen(JOB_TOKEN_PREFIX)) == 0)
        (void)cs_job_name_validate(req->page_token + strlen(JOB_TOKEN_PREFIX), "page_token", NULL);
}

static void check_trigger_job(const ProtobufCMessage *msg)
{
    const Csched__V1__TriggerJobRequest *req = (const Csched__V1__TriggerJobRequest *)msg;
    struct cs_err err;
    if (cs_run_request_validate(req, &err) == 0)
        build_env((void *const *)req->env, req->n_env);
}

static void check_list_runs(const ProtobufCMessage *msg)
{
    (void)cs_api_page_size(((const Csched__V1__ListRunsRequest *)msg)->page_size);
}

static void check_list_audit(const ProtobufCMessage *msg)
{
    const Csched__V1__ListAuditRequest *req = (const Csched__V1__ListAuditRequest *)msg;
    (void)cs_api_page_size(req->page_size);
    (void)cs_api_token_id(req->page_token, INT64_MAX);
}

static void check_watch(const ProtobufCMessage *msg)
{
    const Csched__V1__WatchRequest *req = (const Csched__V1__WatchRequest *)msg;
    struct cs_err err;
    if (req->job_name[0] != '\0')
        (void)cs_job_name_validate(req->job_name, "job_name", &err);
}

/* The handlers' checks that can be called without a server. The others
 * (run ids, enum ranges, ListRuns' page token) are written inline in the
 * handlers, and the unpack above is as far as this target takes them. A
 * job's secret_env is checked with the rest of it (cs_job_validate). */
static const struct {
    const ProtobufCMessageDescriptor *input;
    void (*check)(const ProtobufCMessage *msg);
} checks[] = {
    {&csched__v1__create_job_request__descriptor, check_create_job},
    {&csched__v1__update_job_request__descriptor, check_update_job},
    {&csched__v1__get_job_request__descriptor, check_get_job},
    {&csched__v1__delete_job_request__descriptor, check_delete_job},
    {&csched__v1__list_jobs_request__descriptor, check_list_jobs},
    {&csched__v1__trigger_job_request__descriptor, check_trigger_job},
    {&csched__v1__list_runs_request__descriptor, check_list_runs},
    {&csched__v1__watch_request__descriptor, check_watch},
    {&csched__v1__list_audit_request__descriptor, check_list_audit},
};

/* The request of every method served: the Scheduler service's in its order,
 * then the others' (one per message). */
static const ProtobufCMessageDescriptor *inputs[64];
static size_t n_inputs;

static void add_input(const ProtobufCMessageDescriptor *input)
{
    for (size_t i = 0; i < n_inputs; i++)
        if (inputs[i] == input)
            return;
    if (n_inputs == CS_ARRAY_LEN(inputs))
        abort();
    inputs[n_inputs++] = input;
}

/* The server must take each method's request as the service declares it:
 * every method in its table (server/api.c), with the same message. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    const ProtobufCServiceDescriptor *service = &csched__v1__scheduler__descriptor;
    for (unsigned i = 0; i < service->n_methods; i++) {
        char path[128];
        bool found = false;
        (void)snprintf(path, sizeof(path), "/%s/%s", service->name, service->methods[i].name);
        for (size_t m = 0; m < cs_api_n_methods; m++)
            found |= strcmp(cs_api_methods[m].path, path) == 0 &&
                     cs_api_methods[m].input == service->methods[i].input;
        if (!found) {
            fprintf(stderr, "fuzz_request: %s is not in cs_api_methods\n", path);
            abort();
        }
        inputs[n_inputs++] = service->methods[i].input;
    }
    for (size_t m = 0; m < cs_api_n_methods; m++)
        add_input(cs_api_methods[m].input);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || data[0] >= n_inputs)
        return 0;
    const ProtobufCMessageDescriptor *input = inputs[data[0]];
    char why[300];
    ProtobufCMessage *req = cs_request_decode(input, data + 1, size - 1, why, sizeof(why));
    if (req == NULL)
        return 0;
    /* Whatever the server takes it must be able to copy, as it stores jobs
     * and runs packed: cs_message_copy asserts that it unpacks again. */
    protobuf_c_message_free_unpacked(cs_message_copy(req), NULL);
    for (size_t i = 0; i < CS_ARRAY_LEN(checks); i++)
        if (checks[i].input == input)
            checks[i].check(req);
    protobuf_c_message_free_unpacked(req, NULL);
    return 0;
}
