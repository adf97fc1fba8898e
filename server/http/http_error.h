/* http_error: a gRPC status as the Connect protocol's error: its code's name
 * and HTTP status (Connect's table, one row per gRPC code), and its error
 * JSON {"code", "message", "details"}, where each google.rpc.Any detail of
 * the status (gRPC's grpc-status-details-bin) becomes {"type", "value"} and
 * a google.rpc.BadRequest also shows its field violations readably under
 * "debug". Pure: any thread. */
#ifndef CS_HTTP_ERROR_H
#define CS_HTTP_ERROR_H

#include <grpc/status.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Connect's name of code ("invalid_argument"). */
const char *cs_http_error_code_name(grpc_status_code code);
/* The HTTP status Connect gives code (400 for invalid_argument). */
unsigned cs_http_error_status(grpc_status_code code);
/* Writes the error JSON of code and message with details (a serialized
 * google.rpc.Status, details_len bytes; NULL for none) to f. */
void cs_http_error_write(FILE *f, grpc_status_code code, const char *message,
                         const uint8_t *details, size_t details_len);

#endif
