/* status: errno-style domain outcomes mapped to gRPC codes in one place. */
#include "status.h"

#include <errno.h>
#include <stddef.h>

#include "util.h"

static const struct {
    int err;
    grpc_status_code code;
} table[] = {
    {0, GRPC_STATUS_OK},
    {ENOENT, GRPC_STATUS_NOT_FOUND},
    {EEXIST, GRPC_STATUS_ALREADY_EXISTS},
    {EINVAL, GRPC_STATUS_INVALID_ARGUMENT},
    {EBUSY, GRPC_STATUS_FAILED_PRECONDITION},
    {EAGAIN, GRPC_STATUS_RESOURCE_EXHAUSTED},
    /* cschedd out of file descriptors: worth a retry, not a bug. */
    {EMFILE, GRPC_STATUS_RESOURCE_EXHAUSTED},
    {ENFILE, GRPC_STATUS_RESOURCE_EXHAUSTED},
    {ENOTCONN, GRPC_STATUS_UNAVAILABLE},
    {EACCES, GRPC_STATUS_PERMISSION_DENIED},
    {EPERM, GRPC_STATUS_UNAUTHENTICATED},
    {ECANCELED, GRPC_STATUS_CANCELLED},
    {ESTALE, GRPC_STATUS_ABORTED},
    {ERANGE, GRPC_STATUS_OUT_OF_RANGE},
};

grpc_status_code cs_status_from_errno(int code)
{
    for (size_t i = 0; i < CS_ARRAY_LEN(table); i++)
        if (table[i].err == -code)
            return table[i].code;
    return GRPC_STATUS_INTERNAL;
}
