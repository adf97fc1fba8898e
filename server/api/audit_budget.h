/* audit_budget: which refusals the audit trail records one by one, a
 * minute at a time, and what it says of the rest. A caller is recorded at
 * most CS_AUDIT_BUDGET_PER_CALLER times a minute. Callers no identity
 * source knew are named by their address ("ipv4:ADDR", "ipv6:[ADDR]"), so
 * that a new connection (a new port) is the same caller; and all of them
 * together are recorded at most CS_AUDIT_BUDGET_UNKNOWN times a minute,
 * their summaries included, so that no number of connections or addresses
 * grows the table faster. What is left out is counted, and summarised when
 * its minute ends: one row per caller, and one for all unknown callers.
 *
 * Plain data and functions with the time given by the caller (the loop's
 * for audit.c, a test's): one thread, no allocation. Minutes are whole
 * minutes of that clock, the same for every caller. */
#ifndef CS_AUDIT_BUDGET_H
#define CS_AUDIT_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#include "identity.h"

#define CS_AUDIT_BUDGET_MINUTE_MS 60000
#define CS_AUDIT_BUDGET_PER_CALLER 60
#define CS_AUDIT_BUDGET_UNKNOWN 120
/* Callers followed at once, of the known and of the unknown each; one more
 * takes the place of the one refused longest ago. */
#define CS_AUDIT_BUDGET_CALLERS 64
/* The identity of the summary of all unknown callers: no caller's
 * (they all have a colon). */
#define CS_AUDIT_BUDGET_ALL_UNKNOWN "unidentified"
#define CS_AUDIT_BUDGET_METHOD_MAX 32

/* One refusal; strings borrowed. */
struct cs_audit_refusal {
    const char *identity;
    bool known;         /* an identity source knew the caller (identity.h) */
    const char *method; /* short name: "TriggerJob" */
    int code;           /* its gRPC status */
};

/* What a summary row says: left_out refusals of identity, the last of
 * method with code, were not recorded. identity is
 * CS_AUDIT_BUDGET_ALL_UNKNOWN for the summary of all unknown callers, and
 * last_unknown then names the last of them. Strings borrowed for the
 * callback. */
struct cs_audit_summary {
    const char *identity;
    const char *method;
    int code;
    uint64_t left_out;
    const char *last_unknown; /* NULL but for the summary of all unknown */
};
typedef void (*cs_audit_summary_cb)(void *arg, const struct cs_audit_summary *summary);

struct cs_audit_tally {
    char identity[CS_IDENTITY_NAME_MAX]; /* "" for a free place */
    char method[CS_AUDIT_BUDGET_METHOD_MAX];
    int code;
    uint64_t last_ms; /* its last refusal */
    uint32_t recorded;
    uint64_t left_out;
};

struct cs_audit_budget {
    uint64_t minute; /* the minute counted: ms / CS_AUDIT_BUDGET_MINUTE_MS */
    bool left_out;   /* of some caller in it */
    struct cs_audit_tally known[CS_AUDIT_BUDGET_CALLERS];
    struct cs_audit_tally unknown[CS_AUDIT_BUDGET_CALLERS];
    /* All unknown callers: identity holds the last left out. */
    struct cs_audit_tally all_unknown;
};

/* Starts counting in the minute of now_ms. */
void cs_audit_budget_init(struct cs_audit_budget *b, uint64_t now_ms);
/* Counts r at now_ms: true when it is to be recorded, false when it is
 * only counted. A minute that ended before is ended first, as
 * cs_audit_budget_roll; a caller who loses its place loses it with its
 * summary (one of its own if known, else in that of all unknown). */
bool cs_audit_budget_take(struct cs_audit_budget *b, const struct cs_audit_refusal *r,
                          uint64_t now_ms, cs_audit_summary_cb cb, void *arg);
/* Ends the minute counted if now_ms is past it (cs_audit_budget_end). */
void cs_audit_budget_roll(struct cs_audit_budget *b, uint64_t now_ms, cs_audit_summary_cb cb,
                          void *arg);
/* Ends the minute counted now: cb for each caller with refusals left out
 * in it, unknown ones within their budget (those past it go into the
 * summary of all unknown), then for all unknown; counting starts again
 * from zero. */
void cs_audit_budget_end(struct cs_audit_budget *b, cs_audit_summary_cb cb, void *arg);
/* When the minute counted ends, if a summary waits for it; else 0. */
uint64_t cs_audit_budget_due_ms(const struct cs_audit_budget *b);

#endif
