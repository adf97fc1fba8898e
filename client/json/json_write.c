/* json_write: messages to proto3's canonical JSON (see json_codec.h):
 * strings escaped and kept valid UTF-8, scalars, and the walk over a
 * message's fields that the CLI's YAML shares.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "json_codec.h"

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

void cs_json_write_string(FILE *f, const char *s, size_t len)
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

void cs_json_write_base64(FILE *f, const uint8_t *p, size_t len, bool pad)
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
        if (left > 1)
            fputc(abc[v >> 6 & 63], f);
        else if (pad)
            fputc('=', f);
        if (left > 2)
            fputc(abc[v & 63], f);
        else if (pad)
            fputc('=', f);
    }
    fputc('"', f);
}

void cs_json_write_scalar(FILE *f, const ProtobufCFieldDescriptor *fd, const void *p)
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
            cs_json_write_string(f, ev->name, strlen(ev->name));
        else
            fprintf(f, "%d", v);
        break;
    }
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(char *const *)p;

        cs_json_write_string(f, s ? s : "", s ? strlen(s) : 0);
        break;
    }
    case PROTOBUF_C_TYPE_BYTES: {
        const ProtobufCBinaryData *b = p;

        cs_json_write_base64(f, b->data, b->len, true);
        break;
    }
    case PROTOBUF_C_TYPE_MESSAGE:
        break;
    }
}

bool cs_json_is_map_entry(const ProtobufCMessageDescriptor *d)
{
    size_t len = strlen(d->name);

    return d->n_fields == 2 && len > 5 && strcmp(d->name + len - 5, "Entry") == 0 &&
           strcmp(d->fields[0].name, "key") == 0 && strcmp(d->fields[1].name, "value") == 0;
}

size_t cs_json_field_size(const ProtobufCFieldDescriptor *fd)
{
    switch (fd->type) {
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return 8;
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_MESSAGE:
        return sizeof(void *);
    case PROTOBUF_C_TYPE_BYTES:
        return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_BOOL:
        return sizeof(protobuf_c_boolean);
    default:
        return 4;
    }
}

void cs_json_write_camel(FILE *f, const char *name)
{
    bool upper = false;

    for (const char *p = name; *p != '\0'; p++) {
        if (*p == '_') {
            upper = true;
            continue;
        }
        fputc(upper && *p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p, f);
        upper = false;
    }
}

static void json_name(FILE *f, const char *name)
{
    fputc('"', f);
    cs_json_write_camel(f, name);
    fputc('"', f);
}

bool cs_json_field_present(const ProtobufCFieldDescriptor *fd, const void *msg)
{
    const char *base = msg;

    if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
        return *(const uint32_t *)(base + fd->quantifier_offset) == fd->id;
    if (fd->label == PROTOBUF_C_LABEL_REPEATED)
        return true;
    if (fd->type == PROTOBUF_C_TYPE_MESSAGE)
        return *(void *const *)(base + fd->offset) != NULL;
    if (fd->label == PROTOBUF_C_LABEL_OPTIONAL && fd->quantifier_offset != 0 &&
        fd->type != PROTOBUF_C_TYPE_STRING)
        return *(const protobuf_c_boolean *)(base + fd->quantifier_offset);
    return true;
}

static void json_value(FILE *f, const ProtobufCFieldDescriptor *fd, const void *p)
{
    if (fd->type == PROTOBUF_C_TYPE_MESSAGE)
        cs_json_write_message(f, *(ProtobufCMessage *const *)p);
    else
        cs_json_write_scalar(f, fd, p);
}

const void *cs_json_item_at(const ProtobufCFieldDescriptor *fd, const void *msg, size_t i)
{
    return *(char *const *)((const char *)msg + fd->offset) + i * cs_json_field_size(fd);
}

const char *cs_json_entry_key(const void *item, const ProtobufCFieldDescriptor **vfd,
                              const void **vp)
{
    const ProtobufCMessage *e = *(ProtobufCMessage *const *)item;
    const ProtobufCMessageDescriptor *ed = e->descriptor;

    *vfd = &ed->fields[1];
    *vp = (const char *)e + ed->fields[1].offset;
    return *(char *const *)((const char *)e + ed->fields[0].offset);
}

static void json_repeated(FILE *f, const ProtobufCFieldDescriptor *fd, const char *base)
{
    size_t n = *(const size_t *)(base + fd->quantifier_offset);
    bool map = fd->type == PROTOBUF_C_TYPE_MESSAGE && cs_json_is_map_entry(fd->descriptor);

    fputc(map ? '{' : '[', f);
    for (size_t i = 0; i < n; i++) {
        const ProtobufCFieldDescriptor *vfd;
        const void *item = cs_json_item_at(fd, base, i), *vp;

        if (i > 0)
            fputc(',', f);
        if (map) {
            const char *k = cs_json_entry_key(item, &vfd, &vp);

            cs_json_write_string(f, k, strlen(k));
            fputc(':', f);
            json_value(f, vfd, vp);
        } else {
            json_value(f, fd, item);
        }
    }
    fputc(map ? '}' : ']', f);
}

void cs_json_write_message(FILE *f, const ProtobufCMessage *msg)
{
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    const char *base = (const char *)msg;
    bool first = true;

    fputc('{', f);
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[i];

        if (!cs_json_field_present(fd, base))
            continue;
        if (!first)
            fputc(',', f);
        first = false;
        json_name(f, fd->name);
        fputc(':', f);
        if (fd->label == PROTOBUF_C_LABEL_REPEATED)
            json_repeated(f, fd, base);
        else
            json_value(f, fd, base + fd->offset);
    }
    fputc('}', f);
}
