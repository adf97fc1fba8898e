/* Schema migrations: which embedded migrations a database still needs, and
 * the one transaction that applies them. Pure functions, run on the loop
 * thread; store_migrate.c sends the SQL. */
#include "migrate.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "store_util.h"

const char cs_store_migrate_list_sql[] =
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " version integer PRIMARY KEY, name text NOT NULL, applied_unix_ms bigint NOT NULL);"
    "SELECT version FROM schema_migrations ORDER BY version";

int cs_store_migrations_check(const struct cs_store_migration *migrations, size_t n)
{
    /* A gap is allowed: features made side by side keep the numbers they
     * were given. */
    for (size_t i = 0; i < n; i++) {
        if (migrations[i].version <= (i > 0 ? migrations[i - 1].version : 0) ||
            migrations[i].sql == NULL)
            return -EINVAL;
    }
    return 0;
}

int cs_store_migrate_plan(const struct cs_store_migration *migrations, size_t n, const int *applied,
                          size_t n_applied, size_t *first)
{
    for (size_t i = 0; i < n_applied; i++) {
        if (n == 0 || applied[i] > migrations[n - 1].version)
            return -EPROTO;
        if (i >= n || applied[i] != migrations[i].version)
            return -EINVAL;
    }
    *first = n_applied;
    return 0;
}

char *cs_store_migrate_sql(const struct cs_store_migration *migrations, size_t n, size_t first,
                           int64_t now_unix_ms)
{
    static const char begin[] = "BEGIN;\n";
    static const char commit[] = "COMMIT;\n";
    size_t cap = sizeof(begin) + sizeof(commit);
    char *sql;
    size_t len;

    for (size_t i = first; i < n; i++)
        cap += strlen(migrations[i].sql) + strlen(migrations[i].name) + 160;
    sql = cs_store_xmalloc(cap);
    len = (size_t)snprintf(sql, cap, "%s", begin);
    for (size_t i = first; i < n; i++) {
        /* The name comes from a file name checked by embed_sql.cmake to hold
         * only [A-Za-z0-9_], so it needs no quoting. */
        len += (size_t)snprintf(sql + len, cap - len,
                                "%s\n;\nINSERT INTO schema_migrations (version, name, "
                                "applied_unix_ms) VALUES (%d, '%s', %" PRId64 ");\n",
                                migrations[i].sql, migrations[i].version, migrations[i].name,
                                now_unix_ms);
    }
    snprintf(sql + len, cap - len, "%s", commit);
    return sql;
}
