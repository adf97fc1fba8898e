/* The TLS tests' fixture (see tls_fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "e2e.h"
#include "testlib.h"
#include "tls_fixture.h"

int cs_tls_fixture_setup(struct cs_tls_fixture *f)
{
    char cmd[PATH_MAX + 64];
    int rc;

    memset(f, 0, sizeof(*f));
    cs_e2e_tmpdir(f->dir);
    snprintf(cmd, sizeof(cmd), "sh %s %s", CS_MAKE_CERTS, f->dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "%s failed\n", cmd);
        return -EIO;
    }
    f->health = (struct cs_client_opts){
        .ca_file = cs_tls_path(f, "ca.pem", f->health_ca),
        .cert_file = cs_tls_path(f, "admin.pem", f->health_cert),
        .key_file = cs_tls_path(f, "admin.key", f->health_key),
    };
    rc = cs_testpg_start(&f->pg);
    if (rc != 0)
        fprintf(stderr, "cs_testpg_start failed: %s\n", strerror(-rc));
    return rc;
}

/* The flags of a daemon serving TLS with server.pem/server.key (server:
 * "server" or "server2") and extra, on 127.0.0.1:0, into args (16 entries). */
static void tls_args(const struct cs_tls_fixture *f, const char *server, const char *const *extra,
                     const char **args, char *cert, char *key)
{
    char name[64];
    size_t n = 0;

    args[n++] = "--listen";
    args[n++] = "127.0.0.1:0";
    args[n++] = "--tls-cert";
    snprintf(name, sizeof(name), "%s.pem", server);
    args[n++] = cs_tls_path(f, name, cert);
    args[n++] = "--tls-key";
    snprintf(name, sizeof(name), "%s.key", server);
    args[n++] = cs_tls_path(f, name, key);
    for (size_t i = 0; extra != NULL && extra[i] != NULL; i++) {
        assert_true(n < 15);
        args[n++] = extra[i];
    }
    args[n] = NULL;
}

int cs_tls_fixture_start(struct cs_tls_fixture *f, const char *const *extra)
{
    char cert[PATH_MAX], key[PATH_MAX];
    const char *args[16];
    struct cs_testd_options opts = {
        .database_url = cs_testpg_url(f->pg),
        .extra_args = args,
        .client = &f->health,
    };

    tls_args(f, "server", extra, args, cert, key);
    return cs_testd_start(&opts, &f->d);
}

int cs_tls_fixture_refused(const struct cs_tls_fixture *f, const char *server,
                           const char *const *extra, char *log, size_t cap)
{
    char cert[PATH_MAX], key[PATH_MAX];
    const char *args[16];
    struct cs_testd_options opts = {.database_url = cs_testpg_url(f->pg), .extra_args = args};

    tls_args(f, server, extra, args, cert, key);
    return cs_testd_start_refused(&opts, log, cap);
}

int cs_tls_fixture_teardown(struct cs_tls_fixture *f)
{
    int rc = f->d != NULL ? cs_testd_stop(f->d) : 0;

    cs_testpg_stop(f->pg);
    cs_test_rmtree(f->dir);
    return rc;
}

char *cs_tls_path(const struct cs_tls_fixture *f, const char *name, char *buf)
{
    int n = snprintf(buf, PATH_MAX, "%s/%s", f->dir, name);

    assert_true(n > 0 && n < PATH_MAX);
    return buf;
}

void cs_tls_write(const struct cs_tls_fixture *f, const char *name, const char *text, int mode)
{
    char path[PATH_MAX], tmp[PATH_MAX + 8];
    int fd;

    cs_tls_path(f, name, path);
    /* Whole or not at all: the server may reread it at any time. */
    snprintf(tmp, sizeof(tmp), "%s.new", path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, mode);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(fchmod(fd, (mode_t)mode), 0);
    assert_int_equal(close(fd), 0);
    assert_int_equal(rename(tmp, path), 0);
}

void cs_tls_token_line(char *buf, size_t cap, const char *name, const char *role, const char *token)
{
    unsigned char md[SHA256_DIGEST_LENGTH];
    size_t len = strlen(buf);

    SHA256((const unsigned char *)token, strlen(token), md);
    len += (size_t)snprintf(buf + len, cap - len, "%s %s ", name, role);
    for (size_t i = 0; i < sizeof(md); i++)
        len += (size_t)snprintf(buf + len, cap - len, "%02x", md[i]);
    snprintf(buf + len, cap - len, "\n");
}

struct cs_client *cs_tls_client(const struct cs_tls_fixture *f, const char *ca, const char *cert,
                                const char *token)
{
    char ca_path[PATH_MAX], cert_path[PATH_MAX], key_path[PATH_MAX], name[64];
    struct cs_client_opts opts = {.token = token};
    struct cs_client *c = NULL;

    if (ca != NULL) {
        snprintf(name, sizeof(name), "%s.pem", ca);
        opts.ca_file = cs_tls_path(f, name, ca_path);
    }
    if (cert != NULL) {
        snprintf(name, sizeof(name), "%s.pem", cert);
        opts.cert_file = cs_tls_path(f, name, cert_path);
        snprintf(name, sizeof(name), "%s.key", cert);
        opts.key_file = cs_tls_path(f, name, key_path);
    }
    assert_int_equal(cs_client_new_opts(cs_testd_target(f->d),
                                        ca != NULL || cert != NULL || token != NULL ? &opts : NULL,
                                        &c),
                     0);
    return c;
}

/* Without wait-for-ready, so that a failed handshake ends the call. */
static const struct cs_call_opts call_opts = {.timeout_ms = CS_E2E_CALL_TIMEOUT_MS};

int cs_tls_list_jobs(struct cs_client *c, struct cs_status *st)
{
    Csched__V1__ListJobsRequest req = CSCHED__V1__LIST_JOBS_REQUEST__INIT;
    Csched__V1__ListJobsResponse *resp = NULL;
    int rc = cs_scheduler_list_jobs(c, &req, &resp, &call_opts, st);

    if (rc == 0)
        csched__v1__list_jobs_response__free_unpacked(resp, NULL);
    return rc;
}

int cs_tls_create_job(struct cs_client *c, const char *name, struct cs_status *st)
{
    char *argv[] = {"/bin/sh", "-c", "true"};
    Csched__V1__Job job = CSCHED__V1__JOB__INIT;
    Csched__V1__CreateJobRequest req = CSCHED__V1__CREATE_JOB_REQUEST__INIT;
    Csched__V1__Job *resp = NULL;
    int rc;

    job.name = (char *)name;
    job.n_command = 3;
    job.command = argv;
    req.job = &job;
    rc = cs_scheduler_create_job(c, &req, &resp, &call_opts, st);
    if (rc == 0)
        csched__v1__job__free_unpacked(resp, NULL);
    return rc;
}

int cs_tls_trigger(struct cs_client *c, const char *job, struct cs_status *st)
{
    Csched__V1__TriggerJobRequest req = CSCHED__V1__TRIGGER_JOB_REQUEST__INIT;
    Csched__V1__Run *resp = NULL;
    int rc;

    req.job_name = (char *)job;
    rc = cs_scheduler_trigger_job(c, &req, &resp, &call_opts, st);
    if (rc == 0)
        csched__v1__run__free_unpacked(resp, NULL);
    return rc;
}
