/* api_common: what every handler shares (see api_common.h). */
#include "api_common.h"

#include <errno.h>
#include <stdlib.h>

#include "job.h"
#include "store.h"
#include "util.h"

int cs_api_require_store(struct cs_call *call, struct cs_sched *sched)
{
    CS_ASSERT_LOOP();
    if (cs_store_is_accepting(sched->store))
        return 0;
    cs_call_fail(
        call, -ENOTCONN,
        "the database does not answer, is unreachable or is behind on writes; retry in a few "
        "seconds");
    return -ENOTCONN;
}

struct cs_reply_later *cs_api_reply_later(struct cs_call *call, ProtobufCMessage *msg)
{
    CS_ASSERT_LOOP();
    struct cs_reply_later *r = cs_xmalloc(sizeof(*r));
    r->call = call;
    r->msg = msg;
    return r;
}

void cs_api_reply_cb(void *arg, int status)
{
    CS_ASSERT_LOOP();
    struct cs_reply_later *r = arg;
    if (status == 0)
        cs_call_reply(r->call, r->msg);
    else
        cs_api_fail_store(r->call, status, "committing the change");
    protobuf_c_message_free_unpacked(r->msg, NULL);
    free(r);
}

void cs_api_fail_store(struct cs_call *call, int status, const char *what)
{
    CS_ASSERT_LOOP();
    if (status == -ENOTCONN)
        cs_call_fail(call, -ENOTCONN, "the database is unreachable (%s); retry in a few seconds",
                     what);
    else
        cs_call_fail(call, -EIO, "the database failed while %s; the server log has the details",
                     what);
}

uint32_t cs_api_page_size(uint32_t requested)
{
    if (requested == 0)
        return CS_API_PAGE_SIZE_DEFAULT;
    return requested < CS_API_PAGE_SIZE_MAX ? requested : CS_API_PAGE_SIZE_MAX;
}

struct cs_job *cs_api_find_job(struct cs_call *call, struct cs_sched *s, const char *name,
                               const char *field)
{
    CS_ASSERT_LOOP();
    struct cs_err err;
    if (cs_job_name_validate(name, field, &err) != 0) {
        cs_call_fail(call, err.code, "%s", err.msg);
        return NULL;
    }
    struct cs_job *job = cs_job_find(s, name);
    if (job == NULL)
        cs_call_fail(call, -ENOENT, "job %s does not exist", name);
    return job;
}
