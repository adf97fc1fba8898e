/* End-to-end tests of webhooks (docs/hooks.md) against a real HTTPS
 * endpoint on loopback (hook_receiver.py, its certificate from
 * make_certs.sh): the body arrives signed and the signature verifies; a
 * 500 and a closed port are retried until delivered; a job's deliveries
 * arrive in order; "changed" tells a run of failures once; a delivery
 * queued before a kill -9 of cschedd is made after its restart; the
 * secret's value is in no reply a viewer gets; bad hooks are refused; the
 * server's default hooks (--default-hooks) are told of every job's runs. */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "e2e.h"
#include "testlib.h"

#define WAIT_MS 20000
#define CONSOLE_URL "https://console.example/ui"

/* The endpoint: its dir (certificates, secret, what it received), port and
 * process; one per test, so what it received is that test's alone. */
struct receiver {
    char dir[PATH_MAX];
    char secret_path[PATH_MAX + 16];
    char ca_path[PATH_MAX + 16];
    char url[64];
    char secret[64];
    int port;
    pid_t pid;
};

static char certs_dir[PATH_MAX];
/* The endpoint of the server's default hook (--default-hooks), told of
 * every job's cancelled runs; up for the whole group. */
static struct receiver defaults_receiver;

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);

    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Makes the receiver's dir and secret; the endpoint is not started. */
static void receiver_init(struct receiver *r)
{
    char cmd[PATH_MAX * 4];

    memset(r, 0, sizeof(*r));
    cs_e2e_tmpdir(r->dir);
    snprintf(cmd, sizeof(cmd), "cp %s/server.pem %s/server.key %s/", certs_dir, certs_dir, r->dir);
    assert_int_equal(system(cmd), 0);
    snprintf(r->ca_path, sizeof(r->ca_path), "%s/ca.pem", certs_dir);
    snprintf(r->secret_path, sizeof(r->secret_path), "%s/secret", r->dir);
    snprintf(r->secret, sizeof(r->secret), "hook-secret-%d-%ld", (int)getpid(), random());
    write_file(r->dir, "secret", r->secret);
    r->port = free_port();
    snprintf(r->url, sizeof(r->url), "https://127.0.0.1:%d/hook", r->port);
}

static void receiver_start(struct receiver *r)
{
    char port[16], ready[PATH_MAX + 16];
    snprintf(port, sizeof(port), "%d", r->port);
    snprintf(ready, sizeof(ready), "%s/ready", r->dir);
    r->pid = fork();
    assert_true(r->pid >= 0);
    if (r->pid == 0) {
        /* A test that fails half way leaves no endpoint behind. */
        (void)prctl(PR_SET_PDEATHSIG, SIGTERM);
        execlp("python3", "python3", CS_HOOK_RECEIVER, r->dir, port, r->secret_path, (char *)NULL);
        _exit(127);
    }
    for (int64_t until = cs_test_now_ms() + 10000; access(ready, F_OK) != 0;) {
        if (cs_test_now_ms() > until)
            fail_msg("the hook receiver did not start");
        cs_test_sleep_ms(20);
    }
}

static void receiver_stop(struct receiver *r)
{
    if (r->pid > 0) {
        kill(r->pid, SIGTERM);
        waitpid(r->pid, NULL, 0);
        r->pid = 0;
    }
}

/* What the endpoint received, as a JSON array of its records. */
static json_t *received(const struct receiver *r)
{
    char path[PATH_MAX + 16], line[65536];
    json_t *all = json_array();
    snprintf(path, sizeof(path), "%s/received", r->dir);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return all;
    while (fgets(line, sizeof(line), f) != NULL) {
        json_t *rec = json_loads(line, 0, NULL);
        assert_non_null(rec);
        json_array_append_new(all, rec);
    }
    fclose(f);
    return all;
}

/* Waits until the endpoint answered n requests 200; returns all it got. */
static json_t *wait_delivered(const struct receiver *r, size_t n)
{
    for (int64_t until = cs_test_now_ms() + WAIT_MS;; cs_test_sleep_ms(50)) {
        json_t *all = received(r);
        size_t ok = 0, i;
        json_t *rec;
        json_array_foreach(all, i, rec)
        {
            if (json_integer_value(json_object_get(rec, "code")) == 200)
                ok++;
        }
        if (ok >= n)
            return all;
        json_decref(all);
        if (cs_test_now_ms() > until)
            fail_msg("the endpoint got %zu deliveries answered 200, not %zu", ok, n);
    }
}

static Csched__V1__SecretRef *secret_ref(const struct receiver *r)
{
    Csched__V1__SecretRef *ref = calloc(1, sizeof(*ref));
    csched__v1__secret_ref__init(ref);
    ref->source_case = CSCHED__V1__SECRET_REF__SOURCE_FILE;
    ref->file = (char *)r->secret_path;
    return ref;
}

/* A shell job with one hook to r on the given events. */
static Csched__V1__Job *hook_job(const char *name, const char *shell, const struct receiver *r,
                                 const Csched__V1__HookEvent *events, size_t n_events,
                                 Csched__V1__HookWhen when)
{
    Csched__V1__Job *job = cs_e2e_hook_job(name, shell, "receiver", events, n_events);
    Csched__V1__Hook *hook = job->hooks[0];
    hook->when = when;
    hook->url = strdup(r->url);
    hook->ca_file = strdup(r->ca_path);
    hook->secret = secret_ref(r);
    hook->secret->file = strdup(r->secret_path);
    hook->timeout_ms = 2000;
    return job;
}

/* Runs job to its end once; returns the run id. */
static int64_t run_once(struct cs_e2e *e, const char *job)
{
    int64_t id = cs_e2e_trigger(e, job);
    Csched__V1__Run *run = cs_e2e_wait_end(e, id);
    protobuf_c_message_free_unpacked(&run->base, NULL);
    return id;
}

static const Csched__V1__HookEvent ended[] = {
    CSCHED__V1__HOOK_EVENT__HOOK_EVENT_SUCCEEDED,
    CSCHED__V1__HOOK_EVENT__HOOK_EVENT_FAILED,
};

/* A failed run is POSTed once, signed, with the documented body, and
 * ListHookDeliveries shows it delivered. */
static void test_e2e_hooks_signed_delivery(void **state)
{
    struct cs_e2e *e = *state;
    struct receiver r;
    char name[64];

    receiver_init(&r);
    receiver_start(&r);
    cs_e2e_name(name, sizeof(name), "hooked");
    Csched__V1__Job *job =
        hook_job(name, "exit 3", &r, ended, 2, CSCHED__V1__HOOK_WHEN__HOOK_WHEN_ALWAYS);
    Csched__V1__Job *got = cs_e2e_create_job(e, job);
    int64_t id = run_once(e, name);

    json_t *all = wait_delivered(&r, 1);
    assert_int_equal(json_array_size(all), 1);
    json_t *rec = json_array_get(all, 0);
    assert_true(json_is_true(json_object_get(rec, "signature_ok")));
    json_t *body = json_object_get(rec, "body");
    assert_string_equal(json_string_value(json_object_get(body, "event")), "failed");
    assert_string_equal(json_string_value(json_object_get(body, "job")), name);
    assert_string_equal(json_string_value(json_object_get(body, "hook")), "receiver");
    json_t *run = json_object_get(body, "run");
    assert_int_equal(json_integer_value(json_object_get(run, "id")), id);
    assert_string_equal(json_string_value(json_object_get(run, "state")), "FAILED");
    assert_int_equal(json_integer_value(json_object_get(run, "exit_code")), 3);
    assert_true(json_integer_value(json_object_get(run, "ended_unix_ms")) > 0);
    char link[128];
    snprintf(link, sizeof(link), "%s/runs/%lld", CONSOLE_URL, (long long)id);
    assert_string_equal(json_string_value(json_object_get(body, "console_url")), link);
    json_decref(all);

    /* The result is recorded once the endpoint has answered. */
    Csched__V1__ListHookDeliveriesResponse *resp = NULL;
    for (int64_t until = cs_test_now_ms() + WAIT_MS;; cs_test_sleep_ms(50)) {
        resp = cs_e2e_hook_deliveries(e, name);
        if (resp->n_deliveries == 1 &&
            resp->deliveries[0]->status ==
                CSCHED__V1__HOOK_DELIVERY_STATUS__HOOK_DELIVERY_STATUS_DELIVERED)
            break;
        assert_true(cs_test_now_ms() < until);
        protobuf_c_message_free_unpacked(&resp->base, NULL);
    }
    assert_int_equal(resp->deliveries[0]->response_code, 200);
    assert_int_equal(resp->deliveries[0]->attempts, 1);
    assert_int_equal(resp->deliveries[0]->run_id, id);
    assert_int_equal(resp->deliveries[0]->event, CSCHED__V1__HOOK_EVENT__HOOK_EVENT_FAILED);
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    receiver_stop(&r);
    protobuf_c_message_free_unpacked(&got->base, NULL);
    protobuf_c_message_free_unpacked(&job->base, NULL);
}

/* Waits until job's deliveries are all DELIVERED (n of them); returns them. */
static Csched__V1__ListHookDeliveriesResponse *wait_recorded(struct cs_e2e *e, const char *job,
                                                             size_t n)
{
    for (int64_t until = cs_test_now_ms() + WAIT_MS;; cs_test_sleep_ms(50)) {
        Csched__V1__ListHookDeliveriesResponse *resp = cs_e2e_hook_deliveries(e, job);
        size_t done = 0;
        for (size_t i = 0; i < resp->n_deliveries; i++)
            done += resp->deliveries[i]->status ==
                    CSCHED__V1__HOOK_DELIVERY_STATUS__HOOK_DELIVERY_STATUS_DELIVERED;
        if (done == n && resp->n_deliveries == n)
            return resp;
        if (cs_test_now_ms() > until)
            fail_msg("%zu of %zu deliveries of %s recorded delivered (%zu rows)", done, n, job,
                     resp->n_deliveries);
        protobuf_c_message_free_unpacked(&resp->base, NULL);
    }
}

/* An endpoint that answers 500 twice gets the delivery a third time, and
 * the attempts and the last answer are recorded. */
static void test_e2e_hooks_retry_on_500(void **state)
{
    struct cs_e2e *e = *state;
    struct receiver r;
    char name[64];

    receiver_init(&r);
    write_file(r.dir, "fail", "2");
    receiver_start(&r);
    cs_e2e_name(name, sizeof(name), "retry500");
    Csched__V1__Job *job =
        hook_job(name, "true", &r, ended, 2, CSCHED__V1__HOOK_WHEN__HOOK_WHEN_ALWAYS);
    Csched__V1__Job *got = cs_e2e_create_job(e, job);
    (void)run_once(e, name);

    json_t *all = wait_delivered(&r, 1);
    assert_int_equal(json_array_size(all), 3);
    for (size_t i = 0; i < 3; i++) {
        json_t *rec = json_array_get(all, i);
        assert_int_equal(json_integer_value(json_object_get(rec, "code")), i < 2 ? 500 : 200);
        assert_true(json_is_true(json_object_get(rec, "signature_ok")));
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(rec, "body"), "delivery")),
            json_string_value(
                json_object_get(json_object_get(json_array_get(all, 0), "body"), "delivery")));
    }
    json_decref(all);
    Csched__V1__ListHookDeliveriesResponse *resp = wait_recorded(e, name, 1);
    assert_int_equal(resp->deliveries[0]->attempts, 3);
    assert_int_equal(resp->deliveries[0]->response_code, 200);
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    receiver_stop(&r);
    protobuf_c_message_free_unpacked(&got->base, NULL);
    protobuf_c_message_free_unpacked(&job->base, NULL);
}

/* Nothing listens on the port: the delivery waits, retried, with the
 * error recorded; once the endpoint is up it is delivered. */
static void test_e2e_hooks_retry_on_closed_port(void **state)
{
    struct cs_e2e *e = *state;
    struct receiver r;
    char name[64];

    receiver_init(&r);
    cs_e2e_name(name, sizeof(name), "closed");
    Csched__V1__Job *job =
        hook_job(name, "true", &r, ended, 2, CSCHED__V1__HOOK_WHEN__HOOK_WHEN_ALWAYS);
    Csched__V1__Job *got = cs_e2e_create_job(e, job);
    (void)run_once(e, name);
    for (int64_t until = cs_test_now_ms() + WAIT_MS;; cs_test_sleep_ms(50)) {
        Csched__V1__ListHookDeliveriesResponse *resp = cs_e2e_hook_deliveries(e, name);
        bool tried = resp->n_deliveries == 1 && resp->deliveries[0]->attempts >= 2;
        if (tried) {
            const Csched__V1__HookDelivery *d = resp->deliveries[0];
            assert_int_equal(d->status,
                             CSCHED__V1__HOOK_DELIVERY_STATUS__HOOK_DELIVERY_STATUS_PENDING);
            assert_int_equal(d->response_code, 0);
            assert_true(d->last_error[0] != '\0');
            assert_true(d->next_unix_ms > 0);
        }
        protobuf_c_message_free_unpacked(&resp->base, NULL);
        if (tried)
            break;
        assert_true(cs_test_now_ms() < until);
    }
    receiver_start(&r);
    json_decref(wait_delivered(&r, 1));
    protobuf_c_message_free_unpacked(&wait_recorded(e, name, 1)->base, NULL);
    receiver_stop(&r);
    protobuf_c_message_free_unpacked(&got->base, NULL);
    protobuf_c_message_free_unpacked(&job->base, NULL);
}

/* Five runs, each told started and ended, with the endpoint failing now
 * and then: what it accepted is in the order the deliveries were made. */
static void test_e2e_hooks_in_order_per_job(void **state)
{
    struct cs_e2e *e = *state;
    struct receiver r;
    char name[64];
    static const Csched__V1__HookEvent events[] = {
        CSCHED__V1__HOOK_EVENT__HOOK_EVENT_STARTED,
        CSCHED__V1__HOOK_EVENT__HOOK_EVENT_SUCCEEDED,
    };

    receiver_init(&r);
    write_file(r.dir, "fail", "3");
    receiver_start(&r);
    cs_e2e_name(name, sizeof(name), "ordered");
    Csched__V1__Job *job =
        hook_job(name, "true", &r, events, 2, CSCHED__V1__HOOK_WHEN__HOOK_WHEN_ALWAYS);
    Csched__V1__Job *got = cs_e2e_create_job(e, job);
    int64_t ids[5];
    for (size_t i = 0; i < 5; i++)
        ids[i] = cs_e2e_trigger(e, name);
    for (size_t i = 0; i < 5; i++) {
        Csched__V1__Run *run = cs_e2e_wait_end(e, ids[i]);
        protobuf_c_message_free_unpacked(&run->base, NULL);
    }
    json_t *all = wait_delivered(&r, 10);
    long long last_id = 0;
    size_t i, n = 0;
    json_t *rec;
    json_array_foreach(all, i, rec)
    {
        if (json_integer_value(json_object_get(rec, "code")) != 200)
            continue;
        long long id = atoll(json_string_value(json_object_get(rec, "delivery_id")));
        assert_true(id > last_id);
        json_t *run = json_object_get(json_object_get(rec, "body"), "run");
        const char *event =
            json_string_value(json_object_get(json_object_get(rec, "body"), "event"));
        assert_int_equal(json_integer_value(json_object_get(run, "id")), ids[n / 2]);
        assert_string_equal(event, n % 2 == 0 ? "started" : "succeeded");
        last_id = id;
        n++;
    }
    assert_int_equal(n, 10);
    json_decref(all);
    receiver_stop(&r);
    protobuf_c_message_free_unpacked(&got->base, NULL);
    protobuf_c_message_free_unpacked(&job->base, NULL);
}

/* "changed": fail, fail, fail, succeed, succeed, fail is told three
 * times: the first failure, the success, the last failure. */
static void test_e2e_hooks_changed_only(void **state)
{
    struct cs_e2e *e = *state;
    struct receiver r;
    char name[64], flag[PATH_MAX + 16], shell[PATH_MAX + 64];

    receiver_init(&r);
    receiver_start(&r);
    cs_e2e_name(name, sizeof(name), "flapping");
    snprintf(flag, sizeof(flag), "%s/ok", r.dir);
    snprintf(shell, sizeof(shell), "test -e %s", flag);
    Csched__V1__Job *job =
        hook_job(name, shell, &r, ended, 2, CSCHED__V1__HOOK_WHEN__HOOK_WHEN_CHANGED);
    Csched__V1__Job *got = cs_e2e_create_job(e, job);
    static const bool ok[] = {false, false, false, true, true, false};
    for (size_t i = 0; i < CS_E2E_ARRAY_LEN(ok); i++) {
        if (ok[i])
            write_file(r.dir, "ok", "");
        else
            unlink(flag);
        (void)run_once(e, name);
    }
    Csched__V1__ListHookDeliveriesResponse *resp = wait_recorded(e, name, 3);
    /* Newest first. */
    assert_int_equal(resp->deliveries[0]->event, CSCHED__V1__HOOK_EVENT__HOOK_EVENT_FAILED);
    assert_int_equal(resp->deliveries[1]->event, CSCHED__V1__HOOK_EVENT__HOOK_EVENT_SUCCEEDED);
    assert_int_equal(resp->deliveries[2]->event, CSCHED__V1__HOOK_EVENT__HOOK_EVENT_FAILED);
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    receiver_stop(&r);
    protobuf_c_message_free_unpacked(&got->base, NULL);
    protobuf_c_message_free_unpacked(&job->base, NULL);
}

/* The run's end commits with its delivery: cschedd killed (SIGKILL) while
 * the endpoint is down sends it after its restart. */
static void test_e2e_hooks_survive_kill9(void **state)
{
    struct cs_e2e *e = *state;
    struct receiver r;
    char name[64];

    receiver_init(&r);
    cs_e2e_name(name, sizeof(name), "killed");
    Csched__V1__Job *job =
        hook_job(name, "true", &r, ended, 2, CSCHED__V1__HOOK_WHEN__HOOK_WHEN_ALWAYS);
    Csched__V1__Job *got = cs_e2e_create_job(e, job);
    int64_t id = run_once(e, name);
    assert_int_equal(cs_testd_kill(e->d), 0);
    receiver_start(&r);
    assert_int_equal(cs_testd_restart(e->d), 0);
    json_t *all = wait_delivered(&r, 1);
    json_t *run = json_object_get(json_object_get(json_array_get(all, 0), "body"), "run");
    assert_int_equal(json_integer_value(json_object_get(run, "id")), id);
    json_decref(all);
    protobuf_c_message_free_unpacked(&wait_recorded(e, name, 1)->base, NULL);
    receiver_stop(&r);
    protobuf_c_message_free_unpacked(&got->base, NULL);
    protobuf_c_message_free_unpacked(&job->base, NULL);
}

static bool packed_has(const ProtobufCMessage *m, const char *needle)
{
    size_t len = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = malloc(len + 1);
    protobuf_c_message_pack(m, buf);
    bool found = memmem(buf, len, needle, strlen(needle)) != NULL;
    free(buf);
    return found;
}

/* The secret's value is in no reply: GetJob, ListJobs, ListAudit,
 * ListHookDeliveries (whose rows do not even carry its reference). */
static void test_e2e_hooks_secret_never_shown(void **state)
{
    struct cs_e2e *e = *state;
    struct receiver r;
    char name[64];
    struct cs_status st = {0};

    receiver_init(&r);
    receiver_start(&r);
    cs_e2e_name(name, sizeof(name), "secretive");
    Csched__V1__Job *job =
        hook_job(name, "true", &r, ended, 2, CSCHED__V1__HOOK_WHEN__HOOK_WHEN_ALWAYS);
    Csched__V1__Job *got = cs_e2e_create_job(e, job);
    (void)run_once(e, name);
    json_decref(wait_delivered(&r, 1));

    Csched__V1__Job *read = cs_e2e_get_job(e, name);
    assert_int_equal(read->n_hooks, 1);
    assert_string_equal(read->hooks[0]->secret->file, r.secret_path);
    assert_false(packed_has(&read->base, r.secret));
    protobuf_c_message_free_unpacked(&read->base, NULL);

    Csched__V1__ListJobsRequest lreq = CSCHED__V1__LIST_JOBS_REQUEST__INIT;
    Csched__V1__ListJobsResponse *jobs = NULL;
    assert_int_equal(cs_scheduler_list_jobs(e->client, &lreq, &jobs, cs_e2e_opts(), &st), 0);
    assert_false(packed_has(&jobs->base, r.secret));
    protobuf_c_message_free_unpacked(&jobs->base, NULL);

    Csched__V1__ListAuditRequest areq = CSCHED__V1__LIST_AUDIT_REQUEST__INIT;
    Csched__V1__ListAuditResponse *audit = NULL;
    areq.job_name = name;
    assert_int_equal(cs_scheduler_list_audit(e->client, &areq, &audit, cs_e2e_opts(), &st), 0);
    assert_true(audit->n_entries > 0);
    assert_false(packed_has(&audit->base, r.secret));
    protobuf_c_message_free_unpacked(&audit->base, NULL);

    Csched__V1__ListHookDeliveriesResponse *resp = wait_recorded(e, name, 1);
    assert_false(packed_has(&resp->base, r.secret));
    assert_false(packed_has(&resp->base, r.secret_path));
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    receiver_stop(&r);
    protobuf_c_message_free_unpacked(&got->base, NULL);
    protobuf_c_message_free_unpacked(&job->base, NULL);
}

/* A secret file that cannot be read fails the attempt, before any
 * request, with an error naming the reference and never a value; the
 * delivery waits for its retry. */
static void test_e2e_hooks_unreadable_secret(void **state)
{
    struct cs_e2e *e = *state;
    struct receiver r;
    char name[64], missing[PATH_MAX + 16];

    receiver_init(&r);
    receiver_start(&r);
    cs_e2e_name(name, sizeof(name), "nosecret");
    Csched__V1__Job *job =
        hook_job(name, "true", &r, ended, 2, CSCHED__V1__HOOK_WHEN__HOOK_WHEN_ALWAYS);
    snprintf(missing, sizeof(missing), "%s/missing", r.dir);
    free(job->hooks[0]->secret->file);
    job->hooks[0]->secret->file = strdup(missing);
    Csched__V1__Job *got = cs_e2e_create_job(e, job);
    (void)run_once(e, name);
    for (int64_t until = cs_test_now_ms() + WAIT_MS;; cs_test_sleep_ms(50)) {
        Csched__V1__ListHookDeliveriesResponse *resp = cs_e2e_hook_deliveries(e, name);
        bool tried = resp->n_deliveries == 1 && resp->deliveries[0]->attempts >= 1;
        if (tried) {
            assert_int_equal(resp->deliveries[0]->response_code, 0);
            assert_non_null(strstr(resp->deliveries[0]->last_error, "hook.secret (file:"));
            assert_non_null(strstr(resp->deliveries[0]->last_error, "No such file"));
        }
        protobuf_c_message_free_unpacked(&resp->base, NULL);
        if (tried)
            break;
        assert_true(cs_test_now_ms() < until);
    }
    json_t *all = received(&r);
    assert_int_equal(json_array_size(all), 0);
    json_decref(all);
    receiver_stop(&r);
    protobuf_c_message_free_unpacked(&got->base, NULL);
    protobuf_c_message_free_unpacked(&job->base, NULL);
}

/* A hook to a plain http:// host, or without a secret, is refused. */
static void test_e2e_hooks_refused(void **state)
{
    struct cs_e2e *e = *state;
    struct receiver r;
    struct cs_status st = {0};

    receiver_init(&r);
    Csched__V1__Job *job =
        hook_job("hook-refused", "true", &r, ended, 2, CSCHED__V1__HOOK_WHEN__HOOK_WHEN_ALWAYS);
    free(job->hooks[0]->url);
    job->hooks[0]->url = strdup("http://example.com/hook");
    cs_e2e_assert_status(cs_e2e_try_create_job(e, job, &st), &st, GRPC_STATUS_INVALID_ARGUMENT,
                         "https");
    free(job->hooks[0]->url);
    job->hooks[0]->url = strdup(r.url);
    protobuf_c_message_free_unpacked(&job->hooks[0]->secret->base, NULL);
    job->hooks[0]->secret = NULL;
    cs_e2e_assert_status(cs_e2e_try_create_job(e, job, &st), &st, GRPC_STATUS_INVALID_ARGUMENT,
                         "secret");
    protobuf_c_message_free_unpacked(&job->base, NULL);
}

/* A job without hooks of its own is told to the server's default hook:
 * named apart, signed with its own secret. */
static void test_e2e_hooks_server_defaults(void **state)
{
    struct cs_e2e *e = *state;
    struct receiver *r = &defaults_receiver;
    char name[64];
    struct cs_status st = {0};

    cs_e2e_name(name, sizeof(name), "plain");
    Csched__V1__Job *job = cs_e2e_create_shell_job(e, name, "sleep 30");
    int64_t id = cs_e2e_trigger(e, name);
    Csched__V1__Run *run =
        cs_e2e_wait_state(e, id, CSCHED__V1__RUN_STATE__RUN_STATE_RUNNING, CS_E2E_RUN_TIMEOUT_MS);
    protobuf_c_message_free_unpacked(&run->base, NULL);
    Csched__V1__CancelRunRequest req = CSCHED__V1__CANCEL_RUN_REQUEST__INIT;
    req.run_id = id;
    assert_int_equal(cs_scheduler_cancel_run(e->client, &req, &run, cs_e2e_opts(), &st), 0);
    protobuf_c_message_free_unpacked(&run->base, NULL);
    run = cs_e2e_wait_end(e, id);
    protobuf_c_message_free_unpacked(&run->base, NULL);

    json_t *all = wait_delivered(r, 1);
    json_t *rec = json_array_get(all, 0);
    assert_true(json_is_true(json_object_get(rec, "signature_ok")));
    json_t *body = json_object_get(rec, "body");
    assert_string_equal(json_string_value(json_object_get(body, "hook")), "default.audit");
    assert_string_equal(json_string_value(json_object_get(body, "event")), "cancelled");
    assert_string_equal(json_string_value(json_object_get(body, "job")), name);
    json_decref(all);
    Csched__V1__ListHookDeliveriesResponse *resp = wait_recorded(e, name, 1);
    assert_string_equal(resp->deliveries[0]->hook_name, "default.audit");
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    protobuf_c_message_free_unpacked(&job->base, NULL);
}

static int setup(void **state)
{
    char cmd[PATH_MAX * 2], defaults[PATH_MAX * 2 + 256];
    static char path[PATH_MAX + 32];
    static const char *args[] = {
        "--hook-retry-base-ms", "100", "--console-url", CONSOLE_URL, "--default-hooks", path, NULL};

    cs_e2e_tmpdir(certs_dir);
    snprintf(cmd, sizeof(cmd), "sh %s %s >/dev/null", CS_MAKE_CERTS, certs_dir);
    if (system(cmd) != 0)
        return -1;
    receiver_init(&defaults_receiver);
    receiver_start(&defaults_receiver);
    snprintf(defaults, sizeof(defaults),
             "{\"hooks\": [{\"name\": \"audit\", \"events\": [\"HOOK_EVENT_CANCELLED\"],"
             " \"url\": \"%s\", \"secret\": {\"file\": \"%s\"}, \"caFile\": \"%s\"}]}",
             defaults_receiver.url, defaults_receiver.secret_path, defaults_receiver.ca_path);
    snprintf(path, sizeof(path), "%s/defaults.json", defaults_receiver.dir);
    write_file(defaults_receiver.dir, "defaults.json", defaults);
    return cs_e2e_start(state, args);
}

static int teardown(void **state)
{
    receiver_stop(&defaults_receiver);
    return cs_e2e_teardown(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e2e_hooks_signed_delivery),
        cmocka_unit_test(test_e2e_hooks_retry_on_500),
        cmocka_unit_test(test_e2e_hooks_retry_on_closed_port),
        cmocka_unit_test(test_e2e_hooks_in_order_per_job),
        cmocka_unit_test(test_e2e_hooks_changed_only),
        cmocka_unit_test(test_e2e_hooks_secret_never_shown),
        cmocka_unit_test(test_e2e_hooks_unreadable_secret),
        cmocka_unit_test(test_e2e_hooks_refused),
        cmocka_unit_test(test_e2e_hooks_server_defaults),
        cmocka_unit_test(test_e2e_hooks_survive_kill9),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
