/* The fixture of the TLS tests: certificates made by make_certs.sh in a
 * fresh temp dir, the tokens and client-roles files beside them, one
 * throwaway PostgreSQL and one real cschedd serving TLS on loopback, and
 * libcsched clients with chosen certificates and tokens. Main thread only;
 * helpers assert with cmocka. */
#ifndef CS_TLS_FIXTURE_H
#define CS_TLS_FIXTURE_H

#include <csched/client.h>
#include <limits.h>

struct cs_tls_fixture {
    char dir[PATH_MAX];
    struct cs_testpg *pg;
    struct cs_testd *d;
    char health_ca[PATH_MAX], health_cert[PATH_MAX], health_key[PATH_MAX];
    struct cs_client_opts health; /* the daemon's start-up check: ca + admin */
};

/* Makes the certificates and starts the database: 0 or a negative errno. */
int cs_tls_fixture_setup(struct cs_tls_fixture *f);
/* Starts cschedd with --tls-cert/--tls-key of "server" and extra (NULL-
 * terminated): 0 or a negative errno. */
int cs_tls_fixture_start(struct cs_tls_fixture *f, const char *const *extra);
/* Starts a second cschedd, as cs_tls_fixture_start but with the certificate
 * server ("server2" for server2.pem), for a start that must be refused: its
 * exit status (non-zero) with the end of its log in log, as
 * cs_testd_start_refused. */
int cs_tls_fixture_refused(const struct cs_tls_fixture *f, const char *server,
                           const char *const *extra, char *log, size_t cap);
/* Stops the daemon (which must exit 0) and the database, removes the dir. */
int cs_tls_fixture_teardown(struct cs_tls_fixture *f);

/* The path of name ("ca.pem", "tokens") in the fixture's dir, into buf
 * (PATH_MAX bytes); returns buf. */
char *cs_tls_path(const struct cs_tls_fixture *f, const char *name, char *buf);
/* Writes text to the fixture's file name with mode. */
void cs_tls_write(const struct cs_tls_fixture *f, const char *name, const char *text, int mode);
/* Appends "NAME ROLE SHA256(token)" to buf (cap bytes). */
void cs_tls_token_line(char *buf, size_t cap, const char *name, const char *role,
                       const char *token);
/* A client of the daemon trusting ca ("ca" for ca.pem; NULL: plaintext),
 * with the certificate cert (NULL: none) and token (NULL: none). */
struct cs_client *cs_tls_client(const struct cs_tls_fixture *f, const char *ca, const char *cert,
                                const char *token);
/* ListJobs: 0 on OK, else the status code with st filled. */
int cs_tls_list_jobs(struct cs_client *c, struct cs_status *st);
/* CreateJob of a shell job name that runs "true": 0 or the status code. */
int cs_tls_create_job(struct cs_client *c, const char *name, struct cs_status *st);
/* TriggerJob of job: 0 (the run is freed) or the status code. */
int cs_tls_trigger(struct cs_client *c, const char *job, struct cs_status *st);

#endif
