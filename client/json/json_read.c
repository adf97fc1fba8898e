/* json_read: proto3's canonical JSON to a protobuf-c message (see
 * json_codec.h), parsed by jansson. Everything the message holds is
 * malloc'd, as protobuf-c's default allocator does, and hung on the message
 * as soon as it is made, so protobuf_c_message_free_unpacked frees a message
 * read halfway as well as a whole one. The recursion follows the messages'
 * own nesting (the API has no recursive message), and jansson bounds the
 * text's.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json_codec.h"

__attribute__((format(printf, 3, 4))) static int fail(struct cs_json_error *err, const char *path,
                                                      const char *fmt, ...)
{
    va_list ap;
    (void)snprintf(err->field, sizeof(err->field), "%s", path);
    va_start(ap, fmt);
    (void)vsnprintf(err->why, sizeof(err->why), fmt, ap);
    va_end(ap);
    return -EINVAL;
}

/* A field's path below path (cut to fit: it only names the field in a
 * message). */
__attribute__((format(printf, 2, 3))) static void sub_path(char *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(out, sizeof(((struct cs_json_error *)0)->field), fmt, ap);
    va_end(ap);
}

/* Whether key names fd: its .proto name or its lowerCamelCase json_name. */
static bool names_field(const char *key, const ProtobufCFieldDescriptor *fd)
{
    if (strcmp(key, fd->name) == 0)
        return true;
    bool upper = false;
    const char *k = key;
    for (const char *p = fd->name; *p != '\0'; p++) {
        if (*p == '_') {
            upper = true;
            continue;
        }
        char want = upper && *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p;
        if (*k++ != want)
            return false;
        upper = false;
    }
    return *k == '\0';
}

static int read_int(const json_t *v, int64_t lo, int64_t hi, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
    } else if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d != trunc(d) || d < -9.2e18 || d > 9.2e18)
            return -EINVAL;
        *out = (int64_t)d;
    } else if (json_is_string(v)) {
        const char *s = json_string_value(v);
        char *end;
        errno = 0;
        *out = strtoll(s, &end, 10);
        if (errno != 0 || end == s || *end != '\0')
            return -EINVAL;
    } else {
        return -EINVAL;
    }
    return *out < lo || *out > hi ? -EINVAL : 0;
}

static int read_uint(const json_t *v, uint64_t hi, uint64_t *out)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        char *end;
        errno = 0;
        *out = strtoull(s, &end, 10);
        if (errno != 0 || end == s || *end != '\0' || s[0] == '-')
            return -EINVAL;
    } else {
        int64_t i;
        if (read_int(v, 0, INT64_MAX, &i) != 0)
            return -EINVAL;
        *out = (uint64_t)i;
    }
    return *out > hi ? -EINVAL : 0;
}

static int read_double(const json_t *v, double *out)
{
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return 0;
    }
    if (!json_is_string(v))
        return -EINVAL;
    const char *s = json_string_value(v);
    if (strcmp(s, "NaN") == 0)
        *out = NAN;
    else if (strcmp(s, "Infinity") == 0)
        *out = INFINITY;
    else if (strcmp(s, "-Infinity") == 0)
        *out = -INFINITY;
    else
        return -EINVAL;
    return 0;
}

enum { NOT_BASE64 = -1 };

/* The value of one base64 digit, standard or URL-safe; NOT_BASE64 for none. */
static int b64_digit(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return NOT_BASE64;
}

/* proto3 takes bytes as base64, standard or URL-safe, padded or not. */
static int read_bytes(const json_t *v, ProtobufCBinaryData *out)
{
    if (!json_is_string(v))
        return -EINVAL;
    const char *s = json_string_value(v);
    size_t len = json_string_length(v);
    while (len > 0 && s[len - 1] == '=')
        len--;
    if (len % 4 == 1)
        return -EINVAL;
    out->data = malloc(len * 3 / 4 + 1);
    if (out->data == NULL)
        return -ENOMEM;
    uint32_t acc = 0;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        int d = b64_digit(s[i]);
        if (d == NOT_BASE64)
            return -EINVAL;
        acc = acc << 6 | (uint32_t)d;
        if (i % 4 == 3) {
            out->data[n++] = (uint8_t)(acc >> 16);
            out->data[n++] = (uint8_t)(acc >> 8);
            out->data[n++] = (uint8_t)acc;
            acc = 0;
        }
    }
    if (len % 4 == 2) {
        out->data[n++] = (uint8_t)(acc >> 4);
    } else if (len % 4 == 3) {
        out->data[n++] = (uint8_t)(acc >> 10);
        out->data[n++] = (uint8_t)(acc >> 2);
    }
    out->len = n;
    return 0;
}

static int read_enum(const ProtobufCFieldDescriptor *fd, const json_t *v, int *out)
{
    const ProtobufCEnumValue *ev = NULL;
    int64_t i;
    if (json_is_string(v))
        ev = protobuf_c_enum_descriptor_get_value_by_name(fd->descriptor, json_string_value(v));
    else if (read_int(v, INT32_MIN, INT32_MAX, &i) == 0)
        ev = protobuf_c_enum_descriptor_get_value(fd->descriptor, (int)i);
    if (ev == NULL)
        return -EINVAL;
    *out = ev->value;
    return 0;
}

/* The kind a field wants, for the message that refuses a value. */
static const char *wanted(const ProtobufCFieldDescriptor *fd)
{
    switch (fd->type) {
    case PROTOBUF_C_TYPE_BOOL:
        return "true or false";
    case PROTOBUF_C_TYPE_ENUM:
        return "one of the enum's names";
    case PROTOBUF_C_TYPE_STRING:
        return "a string";
    case PROTOBUF_C_TYPE_BYTES:
        return "base64 text";
    case PROTOBUF_C_TYPE_MESSAGE:
        return "an object";
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_DOUBLE:
        return "a number";
    default:
        return "an integer in range (a number or a decimal string)";
    }
}

static int read_message(const json_t *obj, const ProtobufCMessageDescriptor *d,
                        ProtobufCMessage **slot, const char *path, struct cs_json_error *err);

/* One value of fd (a single field's, or one item of a repeated one) into p. */
static int read_value(const ProtobufCFieldDescriptor *fd, const json_t *v, void *p,
                      const char *path, struct cs_json_error *err)
{
    int64_t i = 0;
    uint64_t u = 0;
    double dbl = 0;
    int rc = -EINVAL;
    switch (fd->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        if ((rc = read_int(v, INT32_MIN, INT32_MAX, &i)) == 0)
            *(int32_t *)p = (int32_t)i;
        break;
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        if ((rc = read_uint(v, UINT32_MAX, &u)) == 0)
            *(uint32_t *)p = (uint32_t)u;
        break;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        rc = read_int(v, INT64_MIN, INT64_MAX, (int64_t *)p);
        break;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        rc = read_uint(v, UINT64_MAX, (uint64_t *)p);
        break;
    case PROTOBUF_C_TYPE_FLOAT:
        if ((rc = read_double(v, &dbl)) == 0)
            *(float *)p = (float)dbl;
        break;
    case PROTOBUF_C_TYPE_DOUBLE:
        rc = read_double(v, (double *)p);
        break;
    case PROTOBUF_C_TYPE_BOOL:
        if (json_is_boolean(v)) {
            *(protobuf_c_boolean *)p = json_is_true(v);
            rc = 0;
        }
        break;
    case PROTOBUF_C_TYPE_ENUM:
        rc = read_enum(fd, v, (int *)p);
        break;
    case PROTOBUF_C_TYPE_STRING:
        if (json_is_string(v)) {
            char *s = strdup(json_string_value(v));
            if (s == NULL)
                return fail(err, path, "out of memory");
            *(char **)p = s;
            rc = 0;
        }
        break;
    case PROTOBUF_C_TYPE_BYTES:
        rc = read_bytes(v, (ProtobufCBinaryData *)p);
        break;
    case PROTOBUF_C_TYPE_MESSAGE:
        if (json_is_object(v))
            return read_message(v, fd->descriptor, (ProtobufCMessage **)p, path, err);
        break;
    }
    return rc == 0 ? 0 : fail(err, path, "must be %s", wanted(fd));
}

/* A map: an object whose keys are the entries' string keys. */
static int read_map(const ProtobufCFieldDescriptor *fd, const json_t *v, char *base,
                    const char *path, struct cs_json_error *err)
{
    const ProtobufCMessageDescriptor *ed = fd->descriptor;
    if (!json_is_object(v) || ed->fields[0].type != PROTOBUF_C_TYPE_STRING)
        return fail(err, path, "must be an object of string keys");
    size_t n = json_object_size(v);
    ProtobufCMessage **entries = calloc(n ? n : 1, sizeof(*entries));
    if (entries == NULL)
        return fail(err, path, "out of memory");
    *(ProtobufCMessage ***)(base + fd->offset) = entries;
    *(size_t *)(base + fd->quantifier_offset) = n;
    const char *key;
    const json_t *val;
    size_t i = 0;
    json_object_foreach((json_t *)v, key, val)
    {
        char sub[sizeof(err->field)];
        sub_path(sub, "%s.%s", path, key);
        if ((entries[i] = malloc(ed->sizeof_message)) == NULL)
            return fail(err, sub, "out of memory");
        ed->message_init(entries[i]);
        char *e = (char *)entries[i++];
        if ((*(char **)(e + ed->fields[0].offset) = strdup(key)) == NULL)
            return fail(err, sub, "out of memory");
        if (json_is_null(val))
            return fail(err, sub, "a map's value cannot be null");
        int rc = read_value(&ed->fields[1], val, e + ed->fields[1].offset, sub, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int read_repeated(const ProtobufCFieldDescriptor *fd, const json_t *v, char *base,
                         const char *path, struct cs_json_error *err)
{
    if (fd->type == PROTOBUF_C_TYPE_MESSAGE && cs_json_is_map_entry(fd->descriptor))
        return read_map(fd, v, base, path, err);
    if (!json_is_array(v))
        return fail(err, path, "must be an array");
    size_t n = json_array_size(v);
    char *items = calloc(n ? n : 1, cs_json_field_size(fd));
    if (items == NULL)
        return fail(err, path, "out of memory");
    *(char **)(base + fd->offset) = items;
    *(size_t *)(base + fd->quantifier_offset) = n;
    for (size_t i = 0; i < n; i++) {
        char sub[sizeof(err->field)];
        sub_path(sub, "%s[%zu]", path, i);
        const json_t *item = json_array_get(v, i);
        if (json_is_null(item))
            return fail(err, sub, "an array's item cannot be null");
        int rc = read_value(fd, item, items + i * cs_json_field_size(fd), sub, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Marks fd set where the message keeps its presence: the oneof's case, or
 * the has_ flag of an optional scalar. -EEXIST when another member of its
 * oneof was set already. */
static int mark_present(const ProtobufCFieldDescriptor *fd, char *base)
{
    if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
        uint32_t *which = (uint32_t *)(base + fd->quantifier_offset);
        if (*which != 0)
            return -EEXIST;
        *which = fd->id;
    } else if (fd->label == PROTOBUF_C_LABEL_OPTIONAL && fd->quantifier_offset != 0 &&
               fd->type != PROTOBUF_C_TYPE_STRING && fd->type != PROTOBUF_C_TYPE_MESSAGE) {
        *(protobuf_c_boolean *)(base + fd->quantifier_offset) = 1;
    }
    return 0;
}

static int read_field(const ProtobufCFieldDescriptor *fd, const json_t *v, char *base,
                      const char *path, struct cs_json_error *err)
{
    if (fd->label == PROTOBUF_C_LABEL_REPEATED)
        return read_repeated(fd, v, base, path, err);
    if (mark_present(fd, base) != 0)
        return fail(err, path, "is a member of a oneof whose other member is set");
    /* A string field still holds its default, shared and never freed, so
     * the fresh copy replaces it. */
    return read_value(fd, v, base + fd->offset, path, err);
}

static int read_message(const json_t *obj, const ProtobufCMessageDescriptor *d,
                        ProtobufCMessage **slot, const char *path, struct cs_json_error *err)
{
    ProtobufCMessage *msg = malloc(d->sizeof_message);
    if (msg == NULL)
        return fail(err, path, "out of memory");
    d->message_init(msg);
    *slot = msg;
    unsigned char seen[256] = {0};
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        char sub[sizeof(err->field)];
        unsigned i = 0;
        while (i < d->n_fields && !names_field(key, &d->fields[i]))
            i++;
        const ProtobufCFieldDescriptor *fd = &d->fields[i < d->n_fields ? i : 0];
        sub_path(sub, "%s%s%s", path, path[0] ? "." : "", i < d->n_fields ? fd->name : key);
        if (i == d->n_fields)
            return fail(err, sub, "is not a field of %s", d->name);
        if (i < sizeof(seen) && seen[i]++)
            return fail(err, sub, "is given twice (once by each of its names)");
        if (json_is_null(v))
            continue; /* proto3: null is the field's default */
        int rc = read_field(fd, v, (char *)msg, sub, err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int cs_json_read_message(const char *text, size_t len, const ProtobufCMessageDescriptor *d,
                         ProtobufCMessage **out, struct cs_json_error *err)
{
    json_error_t jerr;
    *out = NULL;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL)
        return fail(err, "", "not JSON: %s at line %d column %d", jerr.text, jerr.line,
                    jerr.column);
    int rc = json_is_object(root) ? read_message(root, d, out, "", err)
                                  : fail(err, "", "must be a JSON object");
    json_decref(root);
    if (rc != 0 && *out != NULL) {
        protobuf_c_message_free_unpacked(*out, NULL);
        *out = NULL;
    }
    return rc;
}
