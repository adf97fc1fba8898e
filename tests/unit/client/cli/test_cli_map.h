/* Shared by the CLI's unit tests: reading back a map field (env, labels) of
 * a message that the CLI built with cs_cli_map_put. Test code only. */
#ifndef CS_TEST_CLI_MAP_H
#define CS_TEST_CLI_MAP_H

#include <string.h>

#include "cli.h"

/* The value of key among the n entries (string key and value), or NULL. */
static inline const char *cs_test_map_get(void **entries, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++) {
        const Csched__V1__Job__EnvEntry *e = entries[i];

        if (strcmp(e->key, key) == 0)
            return e->value;
    }
    return NULL;
}

#endif
