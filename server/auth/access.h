/* access: the role each method needs, in one table, and the check rpc makes
 * for every call before its request is unpacked. Plain functions over
 * constant data: any thread, no allocation.
 *
 * A method the table does not name needs admin (closed by default), so a
 * method added without a row is safe until it gets one. The health service
 * needs no role: anyone, identified or not, may ask whether cschedd serves. */
#ifndef CS_ACCESS_H
#define CS_ACCESS_H

#include <stdbool.h>
#include <stddef.h>

#include "identity.h"

/* The role path ("/csched.v1.Scheduler/ListJobs") needs; CS_ROLE_NONE:
 * open to every caller. */
enum cs_role cs_access_needed(const char *path);
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
