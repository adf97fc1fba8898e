/* status_details: the standard rich error of gRPC, a google.rpc.Status
 * (code, message, details) sent in the grpc-status-details-bin trailer,
 * here with one google.rpc.BadRequest field violation as its detail. The
 * three messages are encoded by hand from their published field numbers:
 * they are small, and a copy of googleapis' .proto files in proto/ would
 * clash in clients with googleapis-common-protos' own. Pure: any thread. */
#ifndef CS_STATUS_DETAILS_H
#define CS_STATUS_DETAILS_H

#include <grpc/slice.h>
#include <grpc/status.h>

#define CS_STATUS_DETAILS_KEY "grpc-status-details-bin"

/* The serialized google.rpc.Status{code, message, details: [Any{BadRequest{
 * field_violations: [{field, description: message}]}}]} (a new slice, the
 * caller unrefs it). */
grpc_slice cs_status_details_pack(grpc_status_code code, const char *message, const char *field);

#endif
