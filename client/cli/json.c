/* JSON text of single values for csched's outputs: strings (escaped, kept
 * valid UTF-8) and the scalar fields of protobuf-c messages in proto3's
 * canonical JSON mapping. encode.c walks the messages.
 *
 * Single-threaded.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "cli.h"

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if it is not one. */
static size_t utf8_seq(const unsigned char *s, size_t len)
{
    size_t need;
    uint32_t cp;

    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        need = 2;
        cp = s[0] & 0x1f;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        need = 3;
        cp = s[0] & 0x0f;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        need = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (len < need)
        return 0;
    for (size_t i = 1; i < need; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    /* Overlong forms, UTF-16 surrogates and code points past U+10FFFF. */
    if ((need == 3 && cp < 0x800) || (need == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return need;
}

void cs_cli_json_string(FILE *f, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;

    fputc('"', f);
    for (size_t i = 0; i < len;) {
        unsigned char c = p[i];
        size_t n;

        switch (c) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        case '\b':
            fputs("\\b", f);
            break;
        case '\f':
            fputs("\\f", f);
            break;
        default:
            if (c < 0x20 || c == 0x7f) {
                fprintf(f, "\\u%04x", c);
                break;
            }
            n = utf8_seq(p + i, len - i);
            if (n == 0) {
                fputs("\\ufffd", f);
                break;
            }
            fwrite(p + i, 1, n, f);
            i += n;
            continue;
        }
        i++;
    }
    fputc('"', f);
}

static void base64(FILE *f, const uint8_t *p, size_t len)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

    fputc('"', f);
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        size_t left = len - i;

        if (left > 1)
            v |= (uint32_t)p[i + 1] << 8;
        if (left > 2)
            v |= p[i + 2];
        fputc(abc[v >> 18 & 63], f);
        fputc(abc[v >> 12 & 63], f);
        fputc(left > 1 ? abc[v >> 6 & 63] : '=', f);
        fputc(left > 2 ? abc[v & 63] : '=', f);
    }
    fputc('"', f);
}

void cs_cli_json_scalar(FILE *f, const ProtobufCFieldDescriptor *fd, const void *p)
{
    switch (fd->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        fprintf(f, "%" PRId32, *(const int32_t *)p);
        break;
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        fprintf(f, "%" PRIu32, *(const uint32_t *)p);
        break;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        fprintf(f, "\"%" PRId64 "\"", *(const int64_t *)p);
        break;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        fprintf(f, "\"%" PRIu64 "\"", *(const uint64_t *)p);
        break;
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_DOUBLE: {
        double d = fd->type == PROTOBUF_C_TYPE_FLOAT ? *(const float *)p : *(const double *)p;

        if (isfinite(d))
            fprintf(f, "%.17g", d);
        else
            fputs(isnan(d) ? "\"NaN\"" : d > 0 ? "\"Infinity\"" : "\"-Infinity\"", f);
        break;
    }
    case PROTOBUF_C_TYPE_BOOL:
        fputs(*(const protobuf_c_boolean *)p ? "true" : "false", f);
        break;
    case PROTOBUF_C_TYPE_ENUM: {
        int v = *(const int *)p;
        const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(fd->descriptor, v);

        if (ev != NULL)
            cs_cli_json_string(f, ev->name, strlen(ev->name));
        else
            fprintf(f, "%d", v);
        break;
    }
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(char *const *)p;

        cs_cli_json_string(f, s ? s : "", s ? strlen(s) : 0);
        break;
    }
    case PROTOBUF_C_TYPE_BYTES: {
        const ProtobufCBinaryData *b = p;

        base64(f, b->data, b->len);
        break;
    }
    case PROTOBUF_C_TYPE_MESSAGE:
        break;
    }
}
