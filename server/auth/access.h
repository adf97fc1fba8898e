/* access: the role each method needs and whether it changes jobs or runs,
 * in one table, and the check rpc makes for every call before its request
 * is unpacked. Plain functions over constant data: any thread, no
 * allocation.
 *
 * A method the table does not name needs admin (closed by default), so a
 * method added without a row is safe until it gets one. The health service
 * needs no role: anyone, identified or not, may ask whether cschedd serves.
 * docs/security.md shows the table row for row; unit_access checks that the
 * two agree and that every method the proto declares has a row. */
#ifndef CS_ACCESS_H
#define CS_ACCESS_H

#include <stdbool.h>
#include <stddef.h>

#include "identity.h"

/* One row of the table. */
struct cs_access_rule {
    const char *path;  /* "/csched.v1.Scheduler/ListJobs" */
    enum cs_role role; /* the least role that may call it */
    /* It changes jobs or runs: every call of it, made or refused, is
     * audited (audit.h). */
    bool changes;
};

/* The table (static), its length in *n. */
const struct cs_access_rule *cs_access_rules(size_t *n);
/* The role path ("/csched.v1.Scheduler/ListJobs") needs; CS_ROLE_NONE:
 * open to every caller. */
enum cs_role cs_access_needed(const char *path);
/* Whether path changes jobs or runs; false for a method without a row. */
bool cs_access_changes(const char *path);
/* "viewer", "operator", "admin", or "none". */
const char *cs_role_name(enum cs_role role);
/* The role named text ("viewer", "operator" or "admin"): 0 or -EINVAL. */
int cs_role_parse(const char *text, enum cs_role *out);
/* Whether who may call path. known is false when no identity source knew
 * the caller (who->name then names its peer). 0; -EPERM (UNAUTHENTICATED)
 * when the method needs a role and the caller is unknown; -EACCES
 * (PERMISSION_DENIED) when its role is too low; why then says which role
 * the method needs and what the caller has. */
int cs_access_check(const char *path, const struct cs_identity *who, bool known, char *why,
                    size_t cap);

#endif
