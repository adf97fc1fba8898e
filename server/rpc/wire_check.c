/* wire_check: a small protobuf wire-format walker that validates strings. */
#include "wire_check.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util.h"
#include "wire.h"

#define MAX_DEPTH 32

/* Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF. */
static bool valid_utf8(const uint8_t *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        uint8_t c = s[i];
        size_t n;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xe0) == 0xc0) {
            n = 1, cp = c & 0x1f;
        } else if ((c & 0xf0) == 0xe0) {
            n = 2, cp = c & 0x0f;
        } else if ((c & 0xf8) == 0xf0) {
            n = 3, cp = c & 0x07;
        } else {
            return false;
        }
        for (size_t k = 1; k <= n; k++) {
            if (i + k >= len || (s[i + k] & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (s[i + k] & 0x3f);
        }
        /* The smallest code point each length may encode (no overlong forms). */
        static const uint32_t min_cp[] = {0, 0x80, 0x800, 0x10000};
        if (cp < min_cp[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += n + 1;
    }
    return true;
}

/* protobuf-c keeps the low 32 bits of a larger varint for a 32-bit field,
 * as the spec allows: page_size 2^40 would read as 0, the default page. */
static bool fits_32_bits(ProtobufCType type, uint64_t n)
{
    switch (type) {
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_SINT32:
        return n <= UINT32_MAX;
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_ENUM:
        return (int64_t)n >= INT32_MIN && (int64_t)n <= INT32_MAX;
    default:
        return true;
    }
}

/* Appends the name of field to the dotted path. */
static void path_push(char *path, size_t cap, const ProtobufCFieldDescriptor *field)
{
    size_t used = strlen(path);
    (void)snprintf(path + used, cap - used, "%s%s", used ? "." : "", field->name);
}

static int walk(const ProtobufCMessageDescriptor *desc, const uint8_t *p, const uint8_t *end,
                char *path, size_t cap, int depth)
{
    /* Entries seen of each repeated field, by its index in desc. */
    uint32_t entries[64] = {0};
    if (depth > MAX_DEPTH)
        return 0; /* the unpacker refuses absurd nesting itself */
    while (p < end) {
        uint64_t key, n;
        if (cs_wire_read_varint(&p, end, &key) != 0)
            return 0;
        /* protobuf-c takes field number 0 in a key of two bytes or more
         * (0x80 0x00), keeps it as an unknown field, then refuses the
         * message it packs from it: a job stored so could not be copied or
         * read back, and cschedd stopped on the copy's assertion. */
        if (key >> 3 == 0)
            return -EBADMSG;
        unsigned wire = (unsigned)(key & 7);
        const ProtobufCFieldDescriptor *field =
            protobuf_c_message_descriptor_get_field(desc, (unsigned)(key >> 3));
        /* Unpacking costs a few allocations per entry, on the loop (what a
         * large map cost: docs/configuration.md, "Limits on requests").
         * Count before anything is made. */
        if (field != NULL && field->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t i = (size_t)(field - desc->fields);
            if (i < CS_ARRAY_LEN(entries) && ++entries[i] > CS_WIRE_REPEATED_MAX) {
                path_push(path, cap, field);
                return -E2BIG;
            }
        }
        switch (wire) {
        case CS_WIRE_VARINT:
            if (cs_wire_read_varint(&p, end, &n) != 0)
                return 0;
            if (field != NULL && !fits_32_bits(field->type, n)) {
                path_push(path, cap, field);
                return -ERANGE;
            }
            continue;
        case CS_WIRE_I64:
            p += 8;
            continue;
        case CS_WIRE_I32:
            p += 4;
            continue;
        case CS_WIRE_LEN:
            break;
        default:
            return 0;
        }
        if (cs_wire_read_varint(&p, end, &n) != 0 || n > (uint64_t)(end - p))
            return 0;
        const uint8_t *value = p;
        p += n;
        if (field == NULL)
            continue;
        size_t used = strlen(path);
        path_push(path, cap, field);
        if (field->type == PROTOBUF_C_TYPE_STRING &&
            (memchr(value, '\0', n) != NULL || !valid_utf8(value, n)))
            return -EINVAL;
        int rc;
        if (field->type == PROTOBUF_C_TYPE_MESSAGE &&
            (rc = walk(field->descriptor, value, value + n, path, cap, depth + 1)) != 0)
            return rc;
        path[used] = '\0';
    }
    return 0;
}

int cs_wire_check_strings(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len,
                          char *field_out, size_t cap)
{
    field_out[0] = '\0';
    return walk(desc, data, data + len, field_out, cap, 0);
}
