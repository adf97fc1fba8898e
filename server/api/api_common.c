/* api_common: what every handler shares (see api_common.h). */
#include "api_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "job_table.h"
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

int cs_api_stream_room(struct cs_call *call, const struct cs_sched *sched, size_t all, size_t mine,
                       const char *what, const char *hint)
{
    CS_ASSERT_LOOP();
    const char *who = cs_call_identity(call)->name;
    if (mine >= CS_API_STREAMS_PER_CALLER) {
        cs_call_fail(call, -EAGAIN, "%s has %zu %s streams open, the most one caller may; %s", who,
                     mine, what, hint);
        return -EAGAIN;
    }
    if (all >= sched->max_streams) {
        cs_call_fail(call, -EAGAIN,
                     "%zu %s streams are open, the most cschedd keeps (--max-streams); close one, "
                     "or retry later",
                     all, what);
        return -EAGAIN;
    }
    return 0;
}

void cs_api_fail_store(struct cs_call *call, int status, const char *what)
{
    CS_ASSERT_LOOP();
    if (status == -ENOTCONN)
        cs_call_fail(call, -ENOTCONN, "the database is unreachable (%s); retry in a few seconds",
                     what);
    else if (status == -ENOSPC)
        cs_call_fail(call, -EAGAIN,
                     "the database is out of disk space (%s failed); free space on the disk that "
                     "holds its data, then retry",
                     what);
    else
        cs_call_fail(call, -EIO, "the database failed while %s; the server log has the details",
                     what);
}

void cs_api_reply_id_page(struct cs_call *call, const ProtobufCMessageDescriptor *desc,
                          void **items, size_t n, int64_t last_id)
{
    CS_ASSERT_LOOP();
    const ProtobufCFieldDescriptor *items_f = protobuf_c_message_descriptor_get_field(desc, 1);
    const ProtobufCFieldDescriptor *token_f = protobuf_c_message_descriptor_get_field(desc, 2);
    CS_ASSERT(items_f != NULL && items_f->label == PROTOBUF_C_LABEL_REPEATED && token_f != NULL &&
              token_f->type == PROTOBUF_C_TYPE_STRING);
    ProtobufCMessage *resp = cs_xmalloc(desc->sizeof_message);
    protobuf_c_message_init(desc, resp);
    char *base = (char *)resp;
    char token[24] = "";
    if (last_id > 0)
        (void)snprintf(token, sizeof(token), "%lld", (long long)last_id);
    *(size_t *)(base + items_f->quantifier_offset) = n;
    *(void ***)(base + items_f->offset) = items;
    *(char **)(base + token_f->offset) = token;
    cs_call_reply(call, resp);
    free(resp);
}

int64_t cs_api_token_id(const char *token, int64_t next_id)
{
    size_t len = strspn(token, "0123456789");
    if (len == 0 || token[len] != '\0' || token[0] == '0' || len > 19)
        return 0;
    errno = 0;
    long long id = strtoll(token, NULL, 10);
    return errno == 0 && id < next_id ? id : 0;
}

void cs_api_fail_token(struct cs_call *call)
{
    CS_ASSERT_LOOP();
    cs_call_fail_field(call, -EINVAL, "page_token",
                       "page_token is not one this server gave out: pass next_page_token from the "
                       "previous response, or nothing for the first page");
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
        cs_call_fail_err(call, &err);
        return NULL;
    }
    struct cs_job *job = cs_job_find(s, name);
    if (job == NULL)
        cs_call_fail(call, -ENOENT, "job %s does not exist", name);
    return job;
}

int cs_api_selector_parse(struct cs_call *call, const char *text, struct cs_label_selector *sel)
{
    struct cs_err err;
    int rc = cs_label_selector_parse(sel, text, "label_selector", &err);
    if (rc != 0) {
        cs_label_selector_free(sel);
        cs_call_fail_err(call, &err);
    }
    return rc;
}
