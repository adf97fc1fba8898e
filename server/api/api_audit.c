/* api_audit: ListAudit, the audit trail read from the store newest first,
 * paged by id like ListRuns. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "util.h"

static void audit_listed_cb(void *arg, int status, Csched__V1__AuditEntry **entries, size_t n,
                            bool more)
{
    struct cs_call *call = arg;
    if (status != 0) {
        cs_api_fail_store(call, status, "listing the audit trail");
        return;
    }
    cs_api_reply_id_page(call, &csched__v1__list_audit_response__descriptor, (void **)entries, n,
                         more && n > 0 ? entries[n - 1]->id : 0);
    cs_store_audit_free(entries, n);
}

void cs_api_list_audit(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    const Csched__V1__ListAuditRequest *req = (const Csched__V1__ListAuditRequest *)request;
    struct cs_sched *s = ctx;
    struct cs_store_audit_filter filter = {
        .identity = req->identity,
        .method = req->method,
        .job_name = req->job_name,
        .run_id = req->run_id,
        .since_unix_ms = req->since_unix_ms,
        .until_unix_ms = req->until_unix_ms,
        .limit = cs_api_page_size(req->page_size),
    };
    if (req->run_id < 0 || req->since_unix_ms < 0 || req->until_unix_ms < 0) {
        const char *field = req->run_id < 0          ? "run_id"
                            : req->since_unix_ms < 0 ? "since_unix_ms"
                                                     : "until_unix_ms";
        cs_call_fail_field(call, -EINVAL, field,
                           "run_id, since_unix_ms and until_unix_ms may not be negative");
        return;
    }
    if (req->until_unix_ms != 0 && req->until_unix_ms <= req->since_unix_ms) {
        cs_call_fail_field(call, -EINVAL, "until_unix_ms",
                           "until_unix_ms %lld is not after since_unix_ms %lld",
                           (long long)req->until_unix_ms, (long long)req->since_unix_ms);
        return;
    }
    if (req->page_token[0] != '\0') {
        filter.before_id = cs_api_token_id(req->page_token, s->next_audit_id);
        if (filter.before_id == 0) {
            cs_api_fail_token(call);
            return;
        }
    }
    cs_store_audit_list(s->store, &filter, audit_listed_cb, call);
}
