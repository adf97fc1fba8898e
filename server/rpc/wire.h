/* wire: the two pieces of the protobuf wire format that cschedd handles by
 * hand, the varint and the key and length in front of a length-delimited
 * field. wire_check reads them to look into a request before it is
 * unpacked; a stream writes them to merge items into one message. Pure
 * functions: any thread, no allocation. */
#ifndef CS_WIRE_H
#define CS_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* The wire types a key carries in its low three bits. */
enum cs_wire_type {
    CS_WIRE_VARINT = 0,
    CS_WIRE_I64 = 1,
    CS_WIRE_LEN = 2,
    CS_WIRE_I32 = 5,
};

/* A key of a field number below 2^4 takes one byte, a length ten at most. */
#define CS_WIRE_LEN_PREFIX_MAX 11

/* Reads a varint at *p (not past end) and moves *p past it: 0, or -EINVAL
 * when the input ends first or the varint runs over 64 bits. */
int cs_wire_read_varint(const uint8_t **p, const uint8_t *end, uint64_t *out);

/* Writes the key of field (1 to 15, length-delimited) and len into out, which
 * holds CS_WIRE_LEN_PREFIX_MAX bytes; returns the bytes written. */
size_t cs_wire_put_len_prefix(uint8_t *out, unsigned field, size_t len);

#endif
