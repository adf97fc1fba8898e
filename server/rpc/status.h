/* status: the one table from our negative errno codes to gRPC status codes. */
#ifndef CS_STATUS_H
#define CS_STATUS_H

#include <grpc/status.h>

/* -ENOENT -> NOT_FOUND, -EEXIST -> ALREADY_EXISTS, -EINVAL -> INVALID_ARGUMENT,
 * -EBUSY -> FAILED_PRECONDITION, -EAGAIN -> RESOURCE_EXHAUSTED, -ENOTCONN ->
 * UNAVAILABLE, -EACCES -> PERMISSION_DENIED, -EPERM -> UNAUTHENTICATED,
 * -ECANCELED -> CANCELLED, -ESTALE -> ABORTED; anything else -> INTERNAL. */
grpc_status_code cs_status_from_errno(int code);

#endif
