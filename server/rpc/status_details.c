/* status_details: google.rpc.Status with a BadRequest, in protobuf's wire
 * format. Every field written is a varint (the code) or length-delimited
 * (strings and messages), so two writers cover them; the nested messages
 * are built inside out, each one's length known before its parent's. */
#include "status_details.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* google/rpc/status.proto, google/protobuf/any.proto and
 * google/rpc/error_details.proto. */
enum {
    STATUS_CODE = 1,    /* int32 */
    STATUS_MESSAGE = 2, /* string */
    STATUS_DETAILS = 3, /* repeated google.protobuf.Any */
    ANY_TYPE_URL = 1,
    ANY_VALUE = 2,
    BAD_REQUEST_FIELD_VIOLATIONS = 1,
    VIOLATION_FIELD = 1,
    VIOLATION_DESCRIPTION = 2,
};
#define BAD_REQUEST_TYPE_URL "type.googleapis.com/google.rpc.BadRequest"

struct buf {
    uint8_t *p;
    size_t len, cap;
};

static void put_bytes(struct buf *b, const void *data, size_t n)
{
    if (n == 0)
        return;
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2;
        b->p = cs_xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

static void put_varint(struct buf *b, uint64_t v)
{
    uint8_t out[10];
    size_t n = 0;
    do {
        out[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v != 0)
            out[n] |= 0x80;
        n++;
    } while (v != 0);
    put_bytes(b, out, n);
}

/* A length-delimited field (wire type 2): a string or a message. */
static void put_len_field(struct buf *b, unsigned field, const void *data, size_t n)
{
    put_varint(b, (uint64_t)field << 3 | 2);
    put_varint(b, n);
    put_bytes(b, data, n);
}

grpc_slice cs_status_details_pack(grpc_status_code code, const char *message, const char *field)
{
    struct buf violation = {0}, bad_request = {0}, any = {0}, status = {0};
    put_len_field(&violation, VIOLATION_FIELD, field, strlen(field));
    put_len_field(&violation, VIOLATION_DESCRIPTION, message, strlen(message));
    put_len_field(&bad_request, BAD_REQUEST_FIELD_VIOLATIONS, violation.p, violation.len);
    put_len_field(&any, ANY_TYPE_URL, BAD_REQUEST_TYPE_URL, strlen(BAD_REQUEST_TYPE_URL));
    put_len_field(&any, ANY_VALUE, bad_request.p, bad_request.len);
    put_varint(&status, (uint64_t)STATUS_CODE << 3 | 0);
    put_varint(&status, (uint64_t)(int64_t)code); /* int32: negative ones sign-extend */
    put_len_field(&status, STATUS_MESSAGE, message, strlen(message));
    put_len_field(&status, STATUS_DETAILS, any.p, any.len);
    grpc_slice out = grpc_slice_from_copied_buffer((const char *)status.p, status.len);
    free(violation.p);
    free(bad_request.p);
    free(any.p);
    free(status.p);
    return out;
}
