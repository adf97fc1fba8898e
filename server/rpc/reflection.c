/* reflection: questions answered by walking a FileDescriptorSet's bytes
 * (see reflection.h). Only the few fields that name things are read:
 * FileDescriptorSet.file (1); FileDescriptorProto name (1), package (2),
 * dependency (3), message_type (4), enum_type (5), service (6), extension
 * (7); DescriptorProto field (2), nested_type (3), enum_type (4); a
 * service's method (2); and the name (1) of each of those. */
#include "reflection.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "wire.h"

/* What a descriptor holds that has its own name in the symbol tree. */
enum kind { KIND_NONE, KIND_LEAF, KIND_MESSAGE, KIND_SERVICE, KIND_FILE };

struct field {
    uint32_t num;
    const uint8_t *data; /* a length-delimited field's bytes, else NULL */
    size_t len;
};

/* Reads the field at *p and moves past it: 1, 0 at the end, or -EBADMSG. */
static int next_field(const uint8_t **p, const uint8_t *end, struct field *f)
{
    uint64_t key, v;
    if (*p == end)
        return 0;
    if (cs_wire_read_varint(p, end, &key) != 0)
        return -EBADMSG;
    f->num = (uint32_t)(key >> 3);
    f->data = NULL;
    f->len = 0;
    switch (key & 7) {
    case CS_WIRE_VARINT:
        return cs_wire_read_varint(p, end, &v) == 0 ? 1 : -EBADMSG;
    case CS_WIRE_I64:
    case CS_WIRE_I32: {
        size_t n = (key & 7) == CS_WIRE_I64 ? 8 : 4;
        if ((size_t)(end - *p) < n)
            return -EBADMSG;
        *p += n;
        return 1;
    }
    case CS_WIRE_LEN:
        if (cs_wire_read_varint(p, end, &v) != 0 || v > (uint64_t)(end - *p))
            return -EBADMSG;
        f->data = *p;
        f->len = (size_t)v;
        *p += v;
        return 1;
    default:
        return -EBADMSG;
    }
}

/* The first length-delimited field num of d: 1 with *s and *n set, 0 when
 * it has none, or -EBADMSG. */
static int string_field(const uint8_t *d, size_t len, uint32_t num, const uint8_t **s, size_t *n)
{
    const uint8_t *p = d;
    struct field f;
    int rc;
    while ((rc = next_field(&p, d + len, &f)) > 0) {
        if (f.num == num && f.data != NULL) {
            *s = f.data;
            *n = f.len;
            return 1;
        }
    }
    return rc;
}

/* The kind of what field num of a descriptor of kind parent holds. */
static enum kind child_kind(enum kind parent, uint32_t num)
{
    switch (parent) {
    case KIND_FILE:
        return num == 4               ? KIND_MESSAGE
               : num == 6             ? KIND_SERVICE
               : num == 5 || num == 7 ? KIND_LEAF
                                      : KIND_NONE;
    case KIND_MESSAGE:
        return num == 3 ? KIND_MESSAGE : num == 2 || num == 4 ? KIND_LEAF : KIND_NONE;
    case KIND_SERVICE:
        return num == 2 ? KIND_LEAF : KIND_NONE;
    default:
        return KIND_NONE;
    }
}

static int names(const uint8_t *d, size_t len, enum kind kind, const char *sym, size_t n);

/* Whether sym (relative to d's scope) names something declared inside d:
 * 1, 0 or -EBADMSG. */
static int names_inside(const uint8_t *d, size_t len, enum kind kind, const char *sym, size_t n)
{
    const uint8_t *p = d;
    struct field f;
    int rc;
    while ((rc = next_field(&p, d + len, &f)) > 0) {
        enum kind child = child_kind(kind, f.num);
        if (child != KIND_NONE && f.data != NULL && (rc = names(f.data, f.len, child, sym, n)) != 0)
            return rc;
    }
    return rc;
}

/* Whether sym names the descriptor d, or something inside it: 1, 0 or
 * -EBADMSG. A file's scope is its package. */
static int names(const uint8_t *d, size_t len, enum kind kind, const char *sym, size_t n)
{
    const uint8_t *name = NULL;
    size_t nlen = 0;
    int rc = string_field(d, len, kind == KIND_FILE ? 2 : 1, &name, &nlen);
    if (rc < 0)
        return rc;
    if (kind == KIND_FILE && nlen == 0)
        return names_inside(d, len, kind, sym, n);
    if (nlen == 0 || nlen > n || memcmp(name, sym, nlen) != 0)
        return 0;
    if (nlen == n)
        return kind != KIND_FILE;
    if (sym[nlen] != '.' || kind == KIND_LEAF)
        return 0;
    return names_inside(d, len, kind, sym + nlen + 1, n - nlen - 1);
}

typedef int (*file_fn)(const struct cs_desc_file *file, void *ctx);

/* Calls fn with each file of the set until it returns non-zero: that
 * value, 0 after the last file, or -EBADMSG. */
static int each_file(const uint8_t *set, size_t len, file_fn fn, void *ctx)
{
    const uint8_t *p = set;
    struct field f;
    int rc;
    while ((rc = next_field(&p, set + len, &f)) > 0) {
        if (f.num != 1 || f.data == NULL)
            continue;
        struct cs_desc_file file = {f.data, f.len};
        if ((rc = fn(&file, ctx)) != 0)
            return rc;
    }
    return rc;
}

typedef int (*file_match_fn)(const struct cs_desc_file *file, const char *what);

struct find {
    file_match_fn match;
    const char *what;
    struct cs_desc_file *out;
};

static int find_cb(const struct cs_desc_file *file, void *ctx)
{
    struct find *find = ctx;
    int rc = find->match(file, find->what);
    if (rc > 0)
        *find->out = *file;
    return rc;
}

/* The first file of the set that match accepts: 0, -ENOENT or -EBADMSG. */
static int find_file(const uint8_t *set, size_t len, file_match_fn match, const char *what,
                     struct cs_desc_file *out)
{
    struct find find = {match, what, out};
    int rc = each_file(set, len, find_cb, &find);
    return rc > 0 ? 0 : rc < 0 ? rc : -ENOENT;
}

static int file_named(const struct cs_desc_file *file, const char *name)
{
    const uint8_t *s;
    size_t n;
    int rc = string_field(file->data, file->len, 1, &s, &n);
    return rc <= 0 ? rc : n == strlen(name) && memcmp(s, name, n) == 0;
}

static int file_defines(const struct cs_desc_file *file, const char *symbol)
{
    return names(file->data, file->len, KIND_FILE, symbol, strlen(symbol));
}

int cs_reflection_file_by_name(const uint8_t *set, size_t len, const char *name,
                               struct cs_desc_file *out)
{
    return find_file(set, len, file_named, name, out);
}

int cs_reflection_file_of_symbol(const uint8_t *set, size_t len, const char *symbol,
                                 struct cs_desc_file *out)
{
    if (symbol[0] == '\0')
        return -ENOENT;
    return find_file(set, len, file_defines, symbol, out);
}

/* Calls name_cb with each string field num of d, prefixed by prefix and a
 * dot when prefix is not empty. */
static int each_name(const uint8_t *d, size_t len, uint32_t num, bool of_child, const uint8_t *pre,
                     size_t pre_len, cs_reflection_name_cb name_cb, void *ctx)
{
    const uint8_t *p = d;
    struct field f;
    int rc;
    while ((rc = next_field(&p, d + len, &f)) > 0) {
        if (f.num != num || f.data == NULL)
            continue;
        const uint8_t *s = f.data;
        size_t n = f.len;
        if (of_child && (rc = string_field(f.data, f.len, 1, &s, &n)) <= 0) {
            if (rc < 0)
                return rc;
            continue;
        }
        char full[512];
        int w = snprintf(full, sizeof(full), "%.*s%s%.*s", (int)pre_len, (const char *)pre,
                         pre_len > 0 ? "." : "", (int)n, (const char *)s);
        if (w < 0 || (size_t)w >= sizeof(full))
            return -EBADMSG;
        name_cb(ctx, full, (size_t)w);
    }
    return rc;
}

int cs_reflection_each_dependency(const struct cs_desc_file *file, cs_reflection_name_cb name_cb,
                                  void *ctx)
{
    return each_name(file->data, file->len, 3, false, (const uint8_t *)"", 0, name_cb, ctx);
}

struct names_of {
    cs_reflection_name_cb name_cb;
    void *ctx;
};

/* Names the file's services, each prefixed by the file's package. */
static int services_cb(const struct cs_desc_file *file, void *ctx)
{
    struct names_of *to = ctx;
    const uint8_t *pkg = (const uint8_t *)"";
    size_t pkg_len = 0;
    int rc = string_field(file->data, file->len, 2, &pkg, &pkg_len);
    if (rc < 0)
        return rc;
    return each_name(file->data, file->len, 6, true, pkg, pkg_len, to->name_cb, to->ctx);
}

int cs_reflection_each_service(const uint8_t *set, size_t len, cs_reflection_name_cb name_cb,
                               void *ctx)
{
    struct names_of to = {name_cb, ctx};
    return each_file(set, len, services_cb, &to);
}
