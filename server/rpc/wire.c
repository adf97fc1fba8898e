/* wire: varints and length-delimited field prefixes (see wire.h). */
#include "wire.h"

#include <errno.h>

#include "util.h"

int cs_wire_read_varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64 && *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
            *out = v;
            return 0;
        }
    }
    return -EINVAL;
}

size_t cs_wire_put_len_prefix(uint8_t *out, unsigned field, size_t len)
{
    CS_ASSERT(field >= 1 && field <= 15);
    size_t n = 0;
    out[n++] = (uint8_t)((field << 3) | CS_WIRE_LEN);
    for (size_t v = len; n == 1 || v != 0; v >>= 7)
        out[n++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
    return n;
}
