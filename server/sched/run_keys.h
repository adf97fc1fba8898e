/* run_keys: the active runs that carry an idempotency key, found by job name
 * and key in constant time, so that a TriggerJob with a key never scans every
 * active run. A hash table chained through the runs themselves
 * (cs_run.key_next); runs without a key are not in it. Loop thread only. */
#ifndef CS_RUN_KEYS_H
#define CS_RUN_KEYS_H

#include <stddef.h>

struct cs_run;

struct cs_run_keys {
    struct cs_run **buckets; /* cap of them, a power of two; NULL while empty */
    size_t cap, count;
};

void cs_run_keys_init(struct cs_run_keys *keys);
void cs_run_keys_close(struct cs_run_keys *keys);
/* Adds run if it has a key; a run is added once. */
void cs_run_keys_add(struct cs_run_keys *keys, struct cs_run *run);
/* Removes run if it has a key; it must have been added. */
void cs_run_keys_remove(struct cs_run_keys *keys, struct cs_run *run);
/* The run of job_name with key (not empty), or NULL. */
struct cs_run *cs_run_keys_find(const struct cs_run_keys *keys, const char *job_name,
                                const char *key);

#endif
