/* request_decode: a request's bytes, as they came off the wire, to the
 * message a handler gets: its strings and numbers checked (wire_check.h),
 * unpacked, its maps folded (map_fold.h). The one way every request is
 * taken, so that the fuzz target takes them the same way. Any thread. */
#ifndef CS_REQUEST_DECODE_H
#define CS_REQUEST_DECODE_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

/* The message (free with protobuf_c_message_free_unpacked), or NULL with a
 * sentence for the caller in why (at most cap bytes). */
ProtobufCMessage *cs_request_decode(const ProtobufCMessageDescriptor *desc, const uint8_t *data,
                                    size_t len, char *why, size_t cap);

#endif
