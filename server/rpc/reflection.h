/* reflection: what server reflection knows, read straight from a
 * FileDescriptorSet (protoc's, embedded at build time) by hand decoding,
 * with no index: each question walks the set once, a few tens of KiB, so a
 * request costs microseconds and the module keeps no state. Pure functions
 * over borrowed bytes: any thread, no allocation. */
#ifndef CS_REFLECTION_H
#define CS_REFLECTION_H

#include <stddef.h>
#include <stdint.h>

/* The FileDescriptorSet of every .proto cschedd serves (proto/CMakeLists.txt). */
extern const uint8_t cs_descriptor_set[];
extern const size_t cs_descriptor_set_len;

/* A serialized FileDescriptorProto inside a set (borrowed from it). */
struct cs_desc_file {
    const uint8_t *data;
    size_t len;
};

/* The file named name ("csched/v1/scheduler.proto"): 0, -ENOENT, or
 * -EBADMSG when the set does not decode. */
int cs_reflection_file_by_name(const uint8_t *set, size_t len, const char *name,
                               struct cs_desc_file *out);
/* The file that defines symbol, a fully qualified name of a service, a
 * method, a message, a field, an enum or a nested message or enum
 * ("csched.v1.Scheduler.CreateJob"): 0, -ENOENT or -EBADMSG. */
int cs_reflection_file_of_symbol(const uint8_t *set, size_t len, const char *symbol,
                                 struct cs_desc_file *out);

typedef void (*cs_reflection_name_cb)(void *ctx, const char *name, size_t len);
/* Calls name_cb with the file's direct dependencies, in order: 0 or -EBADMSG. */
int cs_reflection_each_dependency(const struct cs_desc_file *file, cs_reflection_name_cb name_cb,
                                  void *ctx);
/* Calls name_cb with every service of the set, fully qualified: 0 or -EBADMSG.
 * name is valid during the call only. */
int cs_reflection_each_service(const uint8_t *set, size_t len, cs_reflection_name_cb name_cb,
                               void *ctx);

#endif
