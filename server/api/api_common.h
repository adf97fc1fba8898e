/* api_common: what the API's handlers share: the store's availability, a
 * reply held back until a commit, the failure of a store call, page sizes.
 * Loop thread only, but for cs_api_page_size. */
#ifndef CS_API_COMMON_H
#define CS_API_COMMON_H

#include <protobuf-c/protobuf-c.h>
#include <stdint.h>

#include "label_selector.h"
#include "rpc.h"
#include "sched_state.h"
#include "store.h"

/* 0 if the store takes writes; otherwise fails call with UNAVAILABLE and
 * returns -ENOTCONN. */
int cs_api_require_store(struct cs_call *call, struct cs_sched *sched);

/* A reply held back until a write has committed: pass cs_api_reply_cb with
 * it as the write's callback. msg (owned, freed after sending) may be set
 * after the write was queued, but before the loop turn ends. */
struct cs_reply_later {
    struct cs_call *call;
    ProtobufCMessage *msg;
};
struct cs_reply_later *cs_api_reply_later(struct cs_call *call, ProtobufCMessage *msg);
void cs_api_reply_cb(void *arg, int status);

/* The job named name (field names it in errors), or NULL once call has
 * been failed: INVALID_ARGUMENT for a bad name, NOT_FOUND. */
struct cs_job *cs_api_find_job(struct cs_call *call, struct cs_sched *sched, const char *name,
                               const char *field);

/* Streams one caller (identity) may hold open at once, of Watch and of
 * ReadLogs each: every one is visited or holds a buffer and files, and a
 * client that does not read keeps it. All callers together may hold
 * sched->max_streams (--max-streams). */
#define CS_API_STREAMS_PER_CALLER 64

/* 0, or -EAGAIN once call has been failed with RESOURCE_EXHAUSTED because
 * its caller holds mine (or all callers hold all) streams of method what
 * ("Watch"), as many as they may; hint says how to need fewer. */
int cs_api_stream_room(struct cs_call *call, const struct cs_sched *sched, size_t all, size_t mine,
                       const char *what, const char *hint);

/* Fails call for a store read or write that returned status: UNAVAILABLE
 * for an unreachable database, RESOURCE_EXHAUSTED for one out of disk
 * space, INTERNAL for any other error. */
void cs_api_fail_store(struct cs_call *call, int status, const char *what);

/* Pages: page_size 0 means CS_API_PAGE_SIZE_DEFAULT and more than
 * CS_API_PAGE_SIZE_MAX is read as the maximum (AIP-158). A page also ends
 * early, with a next_page_token, once it holds CS_API_PAGE_BYTES bytes. */
#define CS_API_PAGE_SIZE_DEFAULT 100
#define CS_API_PAGE_SIZE_MAX 1000
#define CS_API_PAGE_BYTES CS_STORE_RUN_LIST_BYTES

/* Replies a page of ListRuns or ListAudit, whose response (desc) holds the
 * items in field 1 and next_page_token in field 2: items (borrowed) and a
 * token naming last_id when more are left after it (0: none left). */
void cs_api_reply_id_page(struct cs_call *call, const ProtobufCMessageDescriptor *desc,
                          void **items, size_t n, int64_t last_id);
/* The id a page token of ListRuns or ListAudit names: digits only, as their
 * replies write the last id of a page, below next_id (the next one this
 * server hands out); 0 if the token is not one. Any thread. */
int64_t cs_api_token_id(const char *token, int64_t next_id);
/* Parses a request's label_selector into sel; 0, or -EINVAL once call has
 * been failed with the term that is not one (sel then needs no free). */
int cs_api_selector_parse(struct cs_call *call, const char *text, struct cs_label_selector *sel);

/* Fails call for a page token that is not one this server gave out. */
void cs_api_fail_token(struct cs_call *call);

/* The page size to use for a request. Any thread. */
uint32_t cs_api_page_size(uint32_t requested);

#endif
