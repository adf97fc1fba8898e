/* api_reflection: grpc.reflection.v1 and v1alpha ServerReflectionInfo, a
 * bidirectional stream answering each request with one response, from the
 * descriptor set embedded at build time (reflection.h). v1alpha's messages
 * have v1's wire format, so v1's C messages serve both. Loop thread; a
 * request walks the set once (tens of KiB) and keeps no state. */
#include <errno.h>
#include <grpc/status.h>
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "grpc/reflection/v1/reflection.pb-c.h"
#include "reflection.h"
#include "util.h"

typedef Grpc__Reflection__V1__ServerReflectionRequest Request;
typedef Grpc__Reflection__V1__ServerReflectionResponse Response;

/* The set holds five files and four services; room to spare for growth. */
#define FILES_MAX 32
#define SERVICES_MAX 16

/* A file and every file it depends on, each once, the file first. */
struct closure {
    struct cs_desc_file files[FILES_MAX];
    size_t n;
};

static void add_dependency_cb(void *ctx, const char *name, size_t len)
{
    (void)len;
    struct closure *c = ctx;
    struct cs_desc_file dep;
    if (c->n == FILES_MAX ||
        cs_reflection_file_by_name(cs_descriptor_set, cs_descriptor_set_len, name, &dep) != 0)
        return;
    for (size_t i = 0; i < c->n; i++)
        if (c->files[i].data == dep.data)
            return;
    c->files[c->n++] = dep;
}

/* Sends file with its dependencies. */
static void push_files(struct cs_call *call, Response *resp, const struct cs_desc_file *file)
{
    struct closure c = {.files = {*file}, .n = 1};
    for (size_t i = 0; i < c.n; i++)
        (void)cs_reflection_each_dependency(&c.files[i], add_dependency_cb, &c);
    ProtobufCBinaryData protos[FILES_MAX];
    for (size_t i = 0; i < c.n; i++)
        protos[i] = (ProtobufCBinaryData){c.files[i].len, (uint8_t *)c.files[i].data};
    Grpc__Reflection__V1__FileDescriptorResponse fdr =
        GRPC__REFLECTION__V1__FILE_DESCRIPTOR_RESPONSE__INIT;
    fdr.n_file_descriptor_proto = c.n;
    fdr.file_descriptor_proto = protos;
    resp->message_response_case =
        GRPC__REFLECTION__V1__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_FILE_DESCRIPTOR_RESPONSE;
    resp->file_descriptor_response = &fdr;
    cs_call_push(call, &resp->base);
}

static void push_error(struct cs_call *call, Response *resp, grpc_status_code code,
                       const char *message)
{
    Grpc__Reflection__V1__ErrorResponse err = GRPC__REFLECTION__V1__ERROR_RESPONSE__INIT;
    err.error_code = (int32_t)code;
    err.error_message = (char *)message;
    resp->message_response_case =
        GRPC__REFLECTION__V1__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_ERROR_RESPONSE;
    resp->error_response = &err;
    cs_call_push(call, &resp->base);
}

/* A file found (rc 0) or the error saying why not. */
static void push_lookup(struct cs_call *call, Response *resp, int rc,
                        const struct cs_desc_file *file, const char *what, const char *name)
{
    char message[300];
    if (rc == 0) {
        push_files(call, resp, file);
        return;
    }
    (void)snprintf(message, sizeof(message), "%s %.200s is not in cschedd's API", what, name);
    push_error(call, resp, rc == -ENOENT ? GRPC_STATUS_NOT_FOUND : GRPC_STATUS_INTERNAL, message);
}

struct services {
    Grpc__Reflection__V1__ServiceResponse items[SERVICES_MAX];
    Grpc__Reflection__V1__ServiceResponse *ptrs[SERVICES_MAX];
    char names[SERVICES_MAX][128];
    size_t n;
};

static void add_service_cb(void *ctx, const char *name, size_t len)
{
    struct services *s = ctx;
    if (s->n == SERVICES_MAX || len >= sizeof(s->names[0]))
        return;
    memcpy(s->names[s->n], name, len + 1);
    s->items[s->n] =
        (Grpc__Reflection__V1__ServiceResponse)GRPC__REFLECTION__V1__SERVICE_RESPONSE__INIT;
    s->items[s->n].name = s->names[s->n];
    s->ptrs[s->n] = &s->items[s->n];
    s->n++;
}

static void push_services(struct cs_call *call, Response *resp)
{
    struct services s = {.n = 0};
    (void)cs_reflection_each_service(cs_descriptor_set, cs_descriptor_set_len, add_service_cb, &s);
    Grpc__Reflection__V1__ListServiceResponse list =
        GRPC__REFLECTION__V1__LIST_SERVICE_RESPONSE__INIT;
    list.n_service = s.n;
    list.service = s.ptrs;
    resp->message_response_case =
        GRPC__REFLECTION__V1__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_LIST_SERVICES_RESPONSE;
    resp->list_services_response = &list;
    cs_call_push(call, &resp->base);
}

void cs_api_reflection_info(struct cs_call *call, const ProtobufCMessage *request, void *ctx)
{
    CS_ASSERT_LOOP();
    (void)ctx;
    const Request *req = (const Request *)request;
    Response resp = GRPC__REFLECTION__V1__SERVER_REFLECTION_RESPONSE__INIT;
    resp.valid_host = req->host;
    resp.original_request = (Request *)req;
    struct cs_desc_file file;
    int rc;
    switch (req->message_request_case) {
    case GRPC__REFLECTION__V1__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_LIST_SERVICES:
        push_services(call, &resp);
        break;
    case GRPC__REFLECTION__V1__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_BY_FILENAME:
        rc = cs_reflection_file_by_name(cs_descriptor_set, cs_descriptor_set_len,
                                        req->file_by_filename, &file);
        push_lookup(call, &resp, rc, &file, "file", req->file_by_filename);
        break;
    case GRPC__REFLECTION__V1__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_SYMBOL:
        rc = cs_reflection_file_of_symbol(cs_descriptor_set, cs_descriptor_set_len,
                                          req->file_containing_symbol, &file);
        push_lookup(call, &resp, rc, &file, "symbol", req->file_containing_symbol);
        break;
    case GRPC__REFLECTION__V1__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_EXTENSION:
    case GRPC__REFLECTION__V1__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_ALL_EXTENSION_NUMBERS_OF_TYPE:
        push_error(call, &resp, GRPC_STATUS_NOT_FOUND, "cschedd's API declares no extensions");
        break;
    default:
        push_error(call, &resp, GRPC_STATUS_INVALID_ARGUMENT,
                   "the request names no question (list_services, file_by_filename, ...)");
        break;
    }
}
