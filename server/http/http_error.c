/* http_error: gRPC statuses as Connect's errors (see http_error.h). */
#include "http_error.h"

#include <errno.h>
#include <string.h>

#include "json_codec.h"
#include "util.h"
#include "wire.h"

#define ANY_PREFIX "type.googleapis.com/"

static const struct {
    const char *name;
    unsigned http;
} codes[] = {
    /* The Connect protocol's table (connectrpc.com/docs/protocol, "Error
     * Codes", as revised in 2024: canceled 499, deadline_exceeded 504,
     * failed_precondition 400, unimplemented 501). */
    [GRPC_STATUS_OK] = {"ok", 200},
    [GRPC_STATUS_CANCELLED] = {"canceled", 499},
    [GRPC_STATUS_UNKNOWN] = {"unknown", 500},
    [GRPC_STATUS_INVALID_ARGUMENT] = {"invalid_argument", 400},
    [GRPC_STATUS_DEADLINE_EXCEEDED] = {"deadline_exceeded", 504},
    [GRPC_STATUS_NOT_FOUND] = {"not_found", 404},
    [GRPC_STATUS_ALREADY_EXISTS] = {"already_exists", 409},
    [GRPC_STATUS_PERMISSION_DENIED] = {"permission_denied", 403},
    [GRPC_STATUS_RESOURCE_EXHAUSTED] = {"resource_exhausted", 429},
    [GRPC_STATUS_FAILED_PRECONDITION] = {"failed_precondition", 400},
    [GRPC_STATUS_ABORTED] = {"aborted", 409},
    [GRPC_STATUS_OUT_OF_RANGE] = {"out_of_range", 400},
    [GRPC_STATUS_UNIMPLEMENTED] = {"unimplemented", 501},
    [GRPC_STATUS_INTERNAL] = {"internal", 500},
    [GRPC_STATUS_UNAVAILABLE] = {"unavailable", 503},
    [GRPC_STATUS_DATA_LOSS] = {"data_loss", 500},
    [GRPC_STATUS_UNAUTHENTICATED] = {"unauthenticated", 401},
};

const char *cs_http_error_code_name(grpc_status_code code)
{
    return (unsigned)code < CS_ARRAY_LEN(codes) ? codes[code].name : "unknown";
}

unsigned cs_http_error_status(grpc_status_code code)
{
    return (unsigned)code < CS_ARRAY_LEN(codes) ? codes[code].http : 500;
}

/* The next field of the protobuf message in [*p, end): 1 with its number
 * and, for a length-delimited one, its bytes; 0 at the end; -EINVAL when
 * the bytes are not a message this reader knows (varints and lengths only). */
static int next_field(const uint8_t **p, const uint8_t *end, unsigned *field, const uint8_t **val,
                      size_t *len)
{
    uint64_t key, v;
    if (*p >= end)
        return 0;
    if (cs_wire_read_varint(p, end, &key) != 0 || cs_wire_read_varint(p, end, &v) != 0)
        return -EINVAL;
    *field = (unsigned)(key >> 3);
    *val = NULL;
    *len = 0;
    if ((key & 7) == 0)
        return 1;
    if ((key & 7) != 2 || v > (uint64_t)(end - *p))
        return -EINVAL;
    *val = *p;
    *len = (size_t)v;
    *p += v;
    return 1;
}

/* A google.rpc.BadRequest's field violations, as JSON. */
static void write_violations(FILE *f, const uint8_t *p, const uint8_t *end)
{
    unsigned field, sub;
    const uint8_t *val, *sv;
    size_t len, slen;
    bool first = true;
    fputs("{\"fieldViolations\":[", f);
    while (next_field(&p, end, &field, &val, &len) == 1) {
        if (field != 1 || val == NULL)
            continue;
        fputs(first ? "{" : ",{", f);
        first = false;
        const uint8_t *q = val, *qend = val + len;
        bool inner_first = true;
        while (next_field(&q, qend, &sub, &sv, &slen) == 1) {
            if ((sub != 1 && sub != 2) || sv == NULL)
                continue;
            fputs(inner_first ? "" : ",", f);
            inner_first = false;
            fputs(sub == 1 ? "\"field\":" : "\"description\":", f);
            cs_json_write_string(f, (const char *)sv, slen);
        }
        fputc('}', f);
    }
    fputs("]}", f);
}

/* One google.protobuf.Any detail as Connect's {"type", "value"}. */
static void write_detail(FILE *f, const uint8_t *p, const uint8_t *end)
{
    unsigned field;
    const uint8_t *val, *type = NULL, *value = NULL;
    size_t len, type_len = 0, value_len = 0;
    while (next_field(&p, end, &field, &val, &len) == 1) {
        if (field == 1)
            type = val, type_len = len;
        else if (field == 2)
            value = val, value_len = len;
    }
    if (type != NULL && type_len >= strlen(ANY_PREFIX) &&
        memcmp(type, ANY_PREFIX, strlen(ANY_PREFIX)) == 0) {
        type += strlen(ANY_PREFIX);
        type_len -= strlen(ANY_PREFIX);
    }
    fputs("{\"type\":", f);
    cs_json_write_string(f, type != NULL ? (const char *)type : "", type_len);
    fputs(",\"value\":", f);
    cs_json_write_base64(f, value != NULL ? value : (const uint8_t *)"", value_len, false);
    if (type_len == strlen("google.rpc.BadRequest") &&
        memcmp(type, "google.rpc.BadRequest", type_len) == 0) {
        fputs(",\"debug\":", f);
        write_violations(f, value, value + value_len);
    }
    fputc('}', f);
}

void cs_http_error_write(FILE *f, grpc_status_code code, const char *message,
                         const uint8_t *details, size_t details_len)
{
    fputs("{\"code\":", f);
    cs_json_write_string(f, cs_http_error_code_name(code), strlen(cs_http_error_code_name(code)));
    fputs(",\"message\":", f);
    cs_json_write_string(f, message, strlen(message));
    fputs(",\"details\":[", f);
    const uint8_t *p = details, *end = details + details_len, *val;
    unsigned field;
    size_t len;
    bool first = true;
    while (details != NULL && next_field(&p, end, &field, &val, &len) == 1) {
        if (field != 3 || val == NULL)
            continue;
        if (!first)
            fputc(',', f);
        first = false;
        write_detail(f, val, val + len);
    }
    fputs("]}", f);
}
