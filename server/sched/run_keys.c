/* run_keys: active runs by job name and idempotency key (see run_keys.h). */
#include "run_keys.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sched_state.h"
#include "util.h"

#define FIRST_CAP 64

static const char *key_of(const struct cs_run *run)
{
    const char *key = run->msg->idempotency_key;
    return key != NULL ? key : "";
}

/* FNV-1a over the job name, a NUL, and the key. */
static uint64_t hash_of(const char *job_name, const char *key)
{
    uint64_t h = 14695981039346656037ULL;
    for (const char *p = job_name;; p++) {
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
        if (*p == '\0')
            break;
    }
    for (const char *p = key; *p != '\0'; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    return h;
}

static struct cs_run **bucket_of(const struct cs_run_keys *keys, const char *job_name,
                                 const char *key)
{
    return &keys->buckets[hash_of(job_name, key) & (keys->cap - 1)];
}

static void link_run(struct cs_run_keys *keys, struct cs_run *run)
{
    struct cs_run **bucket = bucket_of(keys, run->msg->job_name, key_of(run));
    run->key_next = *bucket;
    *bucket = run;
}

/* Doubles the table (or makes the first) and moves every run over. */
static void grow(struct cs_run_keys *keys)
{
    struct cs_run **old = keys->buckets;
    size_t old_cap = keys->cap;
    keys->cap = old_cap == 0 ? FIRST_CAP : old_cap * 2;
    keys->buckets = cs_xcalloc(keys->cap, sizeof(*keys->buckets));
    for (size_t i = 0; i < old_cap; i++) {
        struct cs_run *next;
        for (struct cs_run *run = old[i]; run != NULL; run = next) {
            next = run->key_next;
            link_run(keys, run);
        }
    }
    free(old);
}

void cs_run_keys_init(struct cs_run_keys *keys)
{
    CS_ASSERT_LOOP();
    memset(keys, 0, sizeof(*keys));
}

void cs_run_keys_close(struct cs_run_keys *keys)
{
    CS_ASSERT_LOOP();
    free(keys->buckets);
    memset(keys, 0, sizeof(*keys));
}

void cs_run_keys_add(struct cs_run_keys *keys, struct cs_run *run)
{
    CS_ASSERT_LOOP();
    if (key_of(run)[0] == '\0')
        return;
    if (keys->count >= keys->cap)
        grow(keys);
    link_run(keys, run);
    keys->count++;
}

void cs_run_keys_remove(struct cs_run_keys *keys, struct cs_run *run)
{
    CS_ASSERT_LOOP();
    if (key_of(run)[0] == '\0')
        return;
    struct cs_run **link = bucket_of(keys, run->msg->job_name, key_of(run));
    while (*link != run) {
        CS_ASSERT(*link != NULL);
        link = &(*link)->key_next;
    }
    *link = run->key_next;
    run->key_next = NULL;
    keys->count--;
}

struct cs_run *cs_run_keys_find(const struct cs_run_keys *keys, const char *job_name,
                                const char *key)
{
    CS_ASSERT_LOOP();
    if (keys->count == 0)
        return NULL;
    for (struct cs_run *run = *bucket_of(keys, job_name, key); run != NULL; run = run->key_next)
        if (strcmp(key_of(run), key) == 0 && strcmp(run->msg->job_name, job_name) == 0)
            return run;
    return NULL;
}
