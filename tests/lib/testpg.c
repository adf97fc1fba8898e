/* A throwaway PostgreSQL for one test program: initdb into a temp dir, then
 * the postgres server run directly as a child of the test (so a test that
 * dies takes its cluster with it, through the parent-death signal), unix
 * socket only. As root, both run as the postgres user.
 *
 * It does not use the store's cs_pg_embedded_start: that one daemonizes
 * PostgreSQL through pg_ctl, which is right for cschedd, but a test's cluster
 * must go away with the test even when ctest kills it at its TIMEOUT. */
#include <errno.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testlib_int.h"

#ifndef CS_TEST_PG_BIN
#define CS_TEST_PG_BIN "/usr/lib/postgresql/15/bin"
#endif

enum {
    INITDB_TIMEOUT_MS = 120000,
    READY_TIMEOUT_MS = 60000,
    STOP_TIMEOUT_MS = 30000,
};

struct cs_testpg {
    char dir[64];
    char url[256];
    pid_t pid;
    bool fsync;
};

static const char *pg_bin(void)
{
    const char *v = getenv("CSCHED_PG_BIN");
    return v != NULL && v[0] != '\0' ? v : CS_TEST_PG_BIN;
}

/* pg_user fills the spawn's user fields: the postgres user when root. */
static int pg_user(struct cs_test__spawn *s)
{
    if (geteuid() != 0)
        return 0;
    struct passwd *pw = getpwnam("postgres");
    if (pw == NULL) {
        fprintf(stderr, "testlib: running as root needs a postgres user\n");
        return -ENOENT;
    }
    s->set_user = true;
    s->uid = pw->pw_uid;
    s->gid = pw->pw_gid;
    return 0;
}

static int run_initdb(struct cs_testpg *pg, const struct cs_test__spawn *user)
{
    char initdb[256], data[128], log[128];
    struct cs_test__spawn s = *user;
    int rc;

    snprintf(initdb, sizeof(initdb), "%s/initdb", pg_bin());
    snprintf(data, sizeof(data), "%s/data", pg->dir);
    snprintf(log, sizeof(log), "%s/initdb.log", pg->dir);
    const char *argv[] = {initdb,
                          "-D",
                          data,
                          "-A",
                          "trust",
                          "-U",
                          "postgres",
                          "-E",
                          "UTF8",
                          "--no-sync",
                          "--no-instructions",
                          NULL};
    s.argv = argv;
    s.log_path = log;
    rc = cs_test__run(&s, INITDB_TIMEOUT_MS);
    if (rc != 0) {
        cs_test__print_tail("initdb log", log, 4096);
        return rc < 0 ? rc : -EIO;
    }
    return 0;
}

static int start_postgres(struct cs_testpg *pg, const struct cs_test__spawn *user, bool fsync)
{
    char postgres[256], data[128], log[128];
    struct cs_test__spawn s = *user;

    snprintf(postgres, sizeof(postgres), "%s/postgres", pg_bin());
    snprintf(data, sizeof(data), "%s/data", pg->dir);
    snprintf(log, sizeof(log), "%s/postgres.log", pg->dir);
    const char *argv[] = {postgres,
                          "-D",
                          data,
                          "-k",
                          pg->dir,
                          "-c",
                          "listen_addresses=",
                          "-c",
                          fsync ? "fsync=on" : "fsync=off",
                          "-c",
                          fsync ? "synchronous_commit=on" : "synchronous_commit=off",
                          "-c",
                          fsync ? "full_page_writes=on" : "full_page_writes=off",
                          "-c",
                          "max_connections=100",
                          NULL};
    s.argv = argv;
    s.log_path = log;
    /* SIGQUIT is PostgreSQL's immediate shutdown. */
    s.pdeath_signal = SIGQUIT;
    return cs_test__spawn(&s, &pg->pid);
}

static int wait_ready(struct cs_testpg *pg)
{
    int64_t deadline = cs_test_now_ms() + READY_TIMEOUT_MS;
    int wstatus;

    while (cs_test_now_ms() < deadline) {
        /* PQping only probes the socket; it is fine to block here. */
        if (PQping(pg->url) == PQPING_OK)
            return 0;
        if (cs_test__wait(pg->pid, 0, &wstatus) == 0) {
            pg->pid = 0;
            return -ECHILD;
        }
        cs_test_sleep_ms(20);
    }
    return -ETIMEDOUT;
}

static void kill_postgres(struct cs_testpg *pg, int sig)
{
    int wstatus;

    if (pg->pid <= 0)
        return;
    kill(pg->pid, sig);
    if (cs_test__wait(pg->pid, STOP_TIMEOUT_MS, &wstatus) == -ETIMEDOUT) {
        fprintf(stderr, "testlib: postgres %d did not stop; killing it\n", (int)pg->pid);
        kill(pg->pid, SIGKILL);
        cs_test__wait(pg->pid, STOP_TIMEOUT_MS, &wstatus);
    }
    pg->pid = 0;
}

int cs_testpg_start(struct cs_testpg **out)
{
    return cs_testpg_start_opts(NULL, out);
}

int cs_testpg_start_opts(const struct cs_testpg_options *opts, struct cs_testpg **out)
{
    struct cs_test__spawn user = {0};
    struct cs_testpg *pg = calloc(1, sizeof(*pg));
    int rc;

    if (pg == NULL)
        return -ENOMEM;
    if ((rc = cs_test_mkdtemp(pg->dir, sizeof(pg->dir), "cs-testpg")) != 0)
        goto err_free;
    snprintf(pg->url, sizeof(pg->url), "host=%s port=5432 user=postgres dbname=postgres", pg->dir);
    rc = pg_user(&user);
    if (rc != 0)
        goto err_rmdir;
    if (user.set_user && chown(pg->dir, user.uid, user.gid) != 0) {
        rc = -errno;
        goto err_rmdir;
    }
    rc = run_initdb(pg, &user);
    if (rc != 0)
        goto err_rmdir;
    pg->fsync = opts != NULL && opts->fsync;
    rc = start_postgres(pg, &user, pg->fsync);
    if (rc != 0)
        goto err_rmdir;
    cs_test__register_pg(pg);
    rc = wait_ready(pg);
    if (rc != 0)
        goto err_stop;
    *out = pg;
    return 0;

err_stop:
    fprintf(stderr, "testlib: PostgreSQL in %s did not get ready: %s\n", pg->dir, strerror(-rc));
    cs_test__unregister_pg(pg);
    kill_postgres(pg, SIGQUIT);
    {
        char log[128];
        snprintf(log, sizeof(log), "%s/postgres.log", pg->dir);
        cs_test__print_tail("postgres log", log, 4096);
    }
err_rmdir:
    cs_test_rmtree(pg->dir);
err_free:
    free(pg);
    return rc;
}

const char *cs_testpg_url(const struct cs_testpg *pg)
{
    return pg->url;
}

void cs_testpg_stop(struct cs_testpg *pg)
{
    if (pg == NULL)
        return;
    cs_test__unregister_pg(pg);
    /* SIGINT is PostgreSQL's fast shutdown: clients are disconnected. */
    kill_postgres(pg, SIGINT);
    cs_test_discard_dir("PostgreSQL", pg->dir);
    free(pg);
}

void cs_testpg_halt(struct cs_testpg *pg)
{
    kill_postgres(pg, SIGINT);
}

int cs_testpg_resume(struct cs_testpg *pg)
{
    struct cs_test__spawn user = {0};
    int rc = pg_user(&user);

    if (rc == 0 && pg->pid <= 0)
        rc = start_postgres(pg, &user, pg->fsync);
    return rc != 0 ? rc : wait_ready(pg);
}

void cs_test__testpg_abandon(struct cs_testpg *pg)
{
    kill_postgres(pg, SIGQUIT);
    cs_test_discard_dir("PostgreSQL", pg->dir);
}

pid_t cs_testpg_pid(const struct cs_testpg *pg)
{
    return pg->pid;
}
