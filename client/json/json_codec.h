/* json_codec: proto3's canonical JSON mapping of protobuf-c messages, both
 * ways, from their descriptors alone, so every field of the API shows up
 * with no hand-kept list. The one codec of csched's JSON: the CLI's -o json
 * and cschedd's HTTP API (server/http) both link it.
 *
 * Written as protobuf's JsonFormat prints with default values included:
 * lowerCamelCase names, 64-bit integers as strings, bytes as base64, enums
 * by name, maps as objects, unset messages and oneof members left out.
 * Read with jansson: names in lowerCamelCase or as in the .proto, numbers
 * as numbers or strings, enums by name or number, null as the default; an
 * unknown field or a value of the wrong kind is refused, naming the field.
 *
 * No state: any thread.
 */
#ifndef CS_JSON_CODEC_H
#define CS_JSON_CODEC_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Writes s (len bytes) as a JSON string: quotes, escapes, valid UTF-8 kept,
 * each invalid byte as U+FFFD. */
void cs_json_write_string(FILE *f, const char *s, size_t len);
/* Writes len bytes at p as a JSON string of standard base64, padded with
 * '=' when pad is set (proto3's bytes are; Connect's error details are not). */
void cs_json_write_base64(FILE *f, const uint8_t *p, size_t len, bool pad);
/* Writes a proto field name in lowerCamelCase, as protoc makes its
 * json_name (no quotes). */
void cs_json_write_camel(FILE *f, const char *name);
/* Writes a scalar (not message) field's value at p as JSON text. */
void cs_json_write_scalar(FILE *f, const ProtobufCFieldDescriptor *fd, const void *p);
/* Writes a message as one JSON object in proto3's canonical mapping. */
void cs_json_write_message(FILE *f, const ProtobufCMessage *msg);

/* The walk over a message's fields that the writers (and the CLI's YAML)
 * share. Whether the field of the message at base shows: unset oneof
 * members, unset proto3 optionals and unset messages do not. */
bool cs_json_field_present(const ProtobufCFieldDescriptor *fd, const void *base);
/* Whether d is a map field's entry type (protobuf-c gives maps as repeated
 * messages named *Entry with the fields key and value). */
bool cs_json_is_map_entry(const ProtobufCMessageDescriptor *d);
/* The size of one value of fd's type in a repeated field's array. */
size_t cs_json_field_size(const ProtobufCFieldDescriptor *fd);
/* The repeated field's item i of the message at base. */
const void *cs_json_item_at(const ProtobufCFieldDescriptor *fd, const void *base, size_t i);
/* A map entry item's key (a string), its value's field and where it is. */
const char *cs_json_entry_key(const void *item, const ProtobufCFieldDescriptor **vfd,
                              const void **vp);

/* What refused a JSON text: the field's path in the .proto's names
 * ("job.retry.max_attempts", "" for the text as a whole) and why. */
struct cs_json_error {
    char field[128];
    char why[256];
};

/* Reads text (len bytes) as a message of type d into *out (the caller frees
 * it with protobuf_c_message_free_unpacked(*out, NULL)): 0; -EINVAL with err
 * naming the field and why when the text is not JSON, not an object, or has
 * an unknown field or a value of the wrong kind. */
int cs_json_read_message(const char *text, size_t len, const ProtobufCMessageDescriptor *d,
                         ProtobufCMessage **out, struct cs_json_error *err);

#endif
