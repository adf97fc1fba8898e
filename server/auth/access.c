/* access: the method -> role table and the check against a caller's role. */
#include "access.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

#define SCHED(m) "/csched.v1.Scheduler/" m

/* Roles nest (identity.h), so each row names the least role that may call.
 * A method that changes jobs or runs (makes, edits or removes a job, makes
 * or cancels runs, pauses a schedule) says so: the audit trail records
 * each of its calls. */
static const struct cs_access_rule table[] = {
    {SCHED("GetJob"), CS_ROLE_VIEWER, false},
    {SCHED("ListJobs"), CS_ROLE_VIEWER, false},
    {SCHED("GetRun"), CS_ROLE_VIEWER, false},
    {SCHED("ListRuns"), CS_ROLE_VIEWER, false},
    {SCHED("Watch"), CS_ROLE_VIEWER, false},
    {SCHED("ReadLogs"), CS_ROLE_VIEWER, false},
    {SCHED("GetStats"), CS_ROLE_VIEWER, false},
    {SCHED("ListSlots"), CS_ROLE_VIEWER, false},
    {SCHED("ListReplicas"), CS_ROLE_VIEWER, false},
    {SCHED("ListHookDeliveries"), CS_ROLE_VIEWER, false},
    {SCHED("ListFires"), CS_ROLE_VIEWER, false},
    {SCHED("ListDependencyCauses"), CS_ROLE_VIEWER, false},
    {SCHED("TriggerJob"), CS_ROLE_OPERATOR, true},
    {SCHED("CancelRun"), CS_ROLE_OPERATOR, true},
    {SCHED("PauseJob"), CS_ROLE_OPERATOR, true},
    {SCHED("ResumeJob"), CS_ROLE_OPERATOR, true},
    {SCHED("BackfillJob"), CS_ROLE_OPERATOR, true},
    {SCHED("CreateJob"), CS_ROLE_ADMIN, true},
    {SCHED("UpdateJob"), CS_ROLE_ADMIN, true},
    {SCHED("DeleteJob"), CS_ROLE_ADMIN, true},
    {SCHED("ListAudit"), CS_ROLE_ADMIN, false},
    {SCHED("SetClusterLimits"), CS_ROLE_ADMIN, true},
    /* The active replica's calls to the others (docs/design/0036). */
    {"/csched.v1.Worker/Launch", CS_ROLE_REPLICA, false},
    {"/csched.v1.Worker/Await", CS_ROLE_REPLICA, false},
    {"/csched.v1.Worker/Cancel", CS_ROLE_REPLICA, false},
    {"/csched.v1.Worker/ReadLogs", CS_ROLE_REPLICA, false},
    {"/grpc.health.v1.Health/Check", CS_ROLE_NONE, false},
    {"/grpc.health.v1.Health/Watch", CS_ROLE_NONE, false},
    /* The API's schema, public in proto/, and nothing about jobs: open, so
     * that grpcurl and grpcui discover the methods before any credentials
     * are set up (docs/security.md). */
    {"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", CS_ROLE_NONE, false},
    {"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", CS_ROLE_NONE, false},
    /* Not a gRPC method: the metrics endpoint's one path (metrics_http.h),
     * as read as GetStats. */
    {"/metrics", CS_ROLE_VIEWER, false},
};

const struct cs_access_rule *cs_access_rules(size_t *n)
{
    *n = CS_ARRAY_LEN(table);
    return table;
}

static const struct cs_access_rule *rule_of(const char *path)
{
    for (size_t i = 0; i < CS_ARRAY_LEN(table); i++)
        if (strcmp(table[i].path, path) == 0)
            return &table[i];
    return NULL;
}

enum cs_role cs_access_needed(const char *path)
{
    const struct cs_access_rule *rule = rule_of(path);
    return rule != NULL ? rule->role : CS_ROLE_ADMIN;
}

bool cs_access_changes(const char *path)
{
    const struct cs_access_rule *rule = rule_of(path);
    return rule != NULL && rule->changes;
}

static const char *const role_names[] = {
    [CS_ROLE_NONE] = "none",   [CS_ROLE_VIEWER] = "viewer",   [CS_ROLE_OPERATOR] = "operator",
    [CS_ROLE_ADMIN] = "admin", [CS_ROLE_REPLICA] = "replica",
};

const char *cs_role_name(enum cs_role role)
{
    return (size_t)role < CS_ARRAY_LEN(role_names) ? role_names[role] : "none";
}

int cs_role_parse(const char *text, enum cs_role *out)
{
    /* A person's role: never a replica's. */
    for (size_t i = CS_ROLE_VIEWER; i <= CS_ROLE_ADMIN; i++) {
        if (strcmp(text, role_names[i]) == 0) {
            *out = (enum cs_role)i;
            return 0;
        }
    }
    return -EINVAL;
}

/* The setting that gives the caller its role, for the refusal's message. */
static const char *where_roles_come_from(const struct cs_identity *who)
{
    if (strncmp(who->name, "unix:", 5) == 0)
        return " (roles of local users: --admin-group, --operator-group, --viewer-group)";
    if (strncmp(who->name, "x509:", 5) == 0)
        return " (roles of client certificates: --tls-client-roles)";
    if (strncmp(who->name, "token:", 6) == 0)
        return " (roles of tokens: --tokens-file)";
    return "";
}

int cs_access_check(const char *path, const struct cs_identity *who, bool known, char *why,
                    size_t cap)
{
    enum cs_role needed = cs_access_needed(path);
    if (needed == CS_ROLE_NONE || (known && who->role >= needed))
        return 0;
    const char *slash = strrchr(path, '/');
    const char *method = slash != NULL ? slash + 1 : path;
    if (!known) {
        (void)snprintf(why, cap, "%s needs role %s; the caller at %s is not identified", method,
                       cs_role_name(needed), who->name);
        return -EPERM;
    }
    (void)snprintf(why, cap, "%s needs role %s; %s has %s%s", method, cs_role_name(needed),
                   who->name, cs_role_name(who->role), where_roles_come_from(who));
    return -EACCES;
}
