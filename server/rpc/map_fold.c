/* map_fold: see map_fold.h. A map's entries are told by their shape, as
 * protoc-c makes them: a message named ...Entry with exactly the fields
 * key (1, a string) and value (2). */
#include "map_fold.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

struct keyed {
    const char *key;
    size_t index;
};

static bool is_map_entry(const ProtobufCMessageDescriptor *d)
{
    size_t len = strlen(d->name);
    return d->n_fields == 2 && len > 5 && strcmp(d->name + len - 5, "Entry") == 0 &&
           d->fields[0].id == 1 && d->fields[0].type == PROTOBUF_C_TYPE_STRING &&
           strcmp(d->fields[0].name, "key") == 0 && d->fields[1].id == 2 &&
           strcmp(d->fields[1].name, "value") == 0;
}

static const char *entry_key(const ProtobufCMessage *entry)
{
    const char *key = *(char *const *)((const char *)entry + entry->descriptor->fields[0].offset);
    return key != NULL ? key : "";
}

/* By key, then the later entry first. */
static int by_key_last_first(const void *x, const void *y)
{
    const struct keyed *a = x, *b = y;
    int c = strcmp(a->key, b->key);
    return c != 0 ? c : (a->index < b->index) - (a->index > b->index);
}

static void fold(ProtobufCMessage **entries, size_t *n)
{
    if (*n < 2)
        return;
    struct keyed *k = cs_xmalloc(*n * sizeof(*k));
    bool *drop = calloc(*n, sizeof(*drop));
    CS_ASSERT(drop != NULL);
    for (size_t i = 0; i < *n; i++)
        k[i] = (struct keyed){entry_key(entries[i]), i};
    qsort(k, *n, sizeof(*k), by_key_last_first);
    for (size_t i = 1; i < *n; i++)
        if (strcmp(k[i].key, k[i - 1].key) == 0)
            drop[k[i].index] = true;
    size_t kept = 0;
    for (size_t i = 0; i < *n; i++) {
        if (drop[i])
            protobuf_c_message_free_unpacked(entries[i], NULL);
        else
            entries[kept++] = entries[i];
    }
    *n = kept;
    free(drop);
    free(k);
}

/* A oneof's members share one place: it holds this field only when the
 * oneof's case names it, and may hold a string of another member. */
static bool field_is_set(const ProtobufCMessage *msg, const ProtobufCFieldDescriptor *fd)
{
    if ((fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) == 0)
        return true;
    return *(const uint32_t *)((const char *)msg + fd->quantifier_offset) == fd->id;
}

void cs_map_fold(ProtobufCMessage *msg)
{
    const ProtobufCMessageDescriptor *d = msg->descriptor;

    for (unsigned f = 0; f < d->n_fields; f++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[f];
        if (fd->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        if (!field_is_set(msg, fd))
            continue;
        void *at = (char *)msg + fd->offset;
        if (fd->label != PROTOBUF_C_LABEL_REPEATED) {
            if (*(ProtobufCMessage **)at != NULL)
                cs_map_fold(*(ProtobufCMessage **)at);
            continue;
        }
        ProtobufCMessage **items = *(ProtobufCMessage ***)at;
        size_t *n = (size_t *)((char *)msg + fd->quantifier_offset);
        if (is_map_entry(fd->descriptor))
            fold(items, n);
        for (size_t i = 0; i < *n; i++)
            cs_map_fold(items[i]);
    }
}
