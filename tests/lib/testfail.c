/* Failing a test: the registry of live clusters and daemons, and
 * cs_test_fail, which reports, cleans every one of them up and aborts. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "testlib_int.h"

enum { REGISTRY_CAP = 32 };

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cs_testpg *live_pgs[REGISTRY_CAP];
static struct cs_testd *live_daemons[REGISTRY_CAP];

static void registry_add(void **slots, void *item)
{
    pthread_mutex_lock(&registry_lock);
    for (int i = 0; i < REGISTRY_CAP; i++) {
        if (slots[i] == NULL) {
            slots[i] = item;
            break;
        }
    }
    pthread_mutex_unlock(&registry_lock);
}

static void registry_remove(void **slots, void *item)
{
    pthread_mutex_lock(&registry_lock);
    for (int i = 0; i < REGISTRY_CAP; i++) {
        if (slots[i] == item)
            slots[i] = NULL;
    }
    pthread_mutex_unlock(&registry_lock);
}

void cs_test__register_pg(struct cs_testpg *pg)
{
    registry_add((void **)live_pgs, pg);
}

void cs_test__unregister_pg(struct cs_testpg *pg)
{
    registry_remove((void **)live_pgs, pg);
}

void cs_test__register_testd(struct cs_testd *d)
{
    registry_add((void **)live_daemons, d);
}

void cs_test__unregister_testd(struct cs_testd *d)
{
    registry_remove((void **)live_daemons, d);
}

void cs_test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;

    fflush(stdout);
    fprintf(stderr, "%s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    /* The lock is never released: any other thread that fails now waits
     * here, so the cleanup runs once, and the process aborts. */
    pthread_mutex_lock(&registry_lock);
    for (int i = 0; i < REGISTRY_CAP; i++) {
        if (live_daemons[i] != NULL)
            cs_test__testd_abandon(live_daemons[i]);
    }
    for (int i = 0; i < REGISTRY_CAP; i++) {
        if (live_pgs[i] != NULL)
            cs_test__testpg_abandon(live_pgs[i]);
    }
    fflush(stderr);
    abort();
}
