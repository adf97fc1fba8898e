/* wire_check: checks the string fields of an encoded protobuf message before
 * it is unpacked. protobuf-c hands strings to C as NUL-terminated, so a
 * string with a NUL byte inside would be cut short without a word; proto3
 * also requires strings to be valid UTF-8. Keys of field number 0, 32-bit
 * numbers given more than 32 bits and repeated fields of absurd length are
 * refused too (see wire_check.c). Walks the wire format with
 * the message's descriptor, nested messages and map entries included. */
#ifndef CS_WIRE_CHECK_H
#define CS_WIRE_CHECK_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

/* 0, or -EINVAL with the dotted path of the offending field in field_out
 * (at most cap bytes), or -EBADMSG for a key of field number 0, which
 * protobuf-c would take (field_out: the message holding it, "" for the top),
 * or -ERANGE for a 32-bit number field given a larger value, or -E2BIG for
 * a repeated or map field of more than CS_WIRE_REPEATED_MAX entries in one
 * message (field_out: its path).
 * Other malformed encodings are left for the unpacker. */
/* The largest repeated field a request may hold: job.command's 4096. */
#define CS_WIRE_REPEATED_MAX 4096

int cs_wire_check_strings(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len,
                          char *field_out, size_t cap);

#endif
