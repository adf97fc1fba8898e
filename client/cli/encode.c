/* JSON and YAML for csched's -o json and -o yaml. JSON is the shared
 * codec's (client/json/json_codec.h); YAML is the same tree in block style,
 * walked the same way, each scalar written as its JSON text (valid YAML
 * flow).
 *
 * Single-threaded.
 */
#include <string.h>

#include "cli.h"
#include "json_codec.h"

/* Whether a proto3 field without presence holds its default (0, "", no
 * bytes), which the flat form leaves out. */
static bool is_default(const ProtobufCFieldDescriptor *fd, const void *p)
{
    static const char zero[8];

    if (fd->label != PROTOBUF_C_LABEL_NONE || fd->type == PROTOBUF_C_TYPE_MESSAGE)
        return false;
    if (fd->type == PROTOBUF_C_TYPE_STRING)
        return *(char *const *)p == NULL || **(char *const *)p == '\0';
    if (fd->type == PROTOBUF_C_TYPE_BYTES)
        return ((const ProtobufCBinaryData *)p)->len == 0;
    return memcmp(p, zero, cs_json_field_size(fd)) == 0;
}

static void flat_value(FILE *f, const char *path, const ProtobufCFieldDescriptor *fd, const void *p)
{
    char sub[512];

    if (fd->type == PROTOBUF_C_TYPE_MESSAGE) {
        /* Paths are short; one too long to fit is cut, never overrun. */
        snprintf(sub, sizeof(sub), "%.*s.", (int)sizeof(sub) - 2, path);
        cs_cli_flatten(f, sub, *(ProtobufCMessage *const *)p);
    } else if (!is_default(fd, p)) {
        fprintf(f, "%s: ", path);
        cs_json_write_scalar(f, fd, p);
        fputc('\n', f);
    }
}

void cs_cli_flatten(FILE *f, const char *prefix, const ProtobufCMessage *msg)
{
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    const char *base = (const char *)msg;
    char path[512];

    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[i];
        size_t n;

        if (!cs_json_field_present(fd, base))
            continue;
        snprintf(path, sizeof(path), "%s%s", prefix, fd->name);
        if (fd->label != PROTOBUF_C_LABEL_REPEATED) {
            flat_value(f, path, fd, base + fd->offset);
            continue;
        }
        n = *(const size_t *)(base + fd->quantifier_offset);
        for (size_t j = 0; j < n; j++) {
            const ProtobufCFieldDescriptor *vfd = fd;
            const void *vp = cs_json_item_at(fd, base, j);
            char sub[600];

            if (fd->type == PROTOBUF_C_TYPE_MESSAGE && cs_json_is_map_entry(fd->descriptor))
                snprintf(sub, sizeof(sub), "%s.%s", path, cs_json_entry_key(vp, &vfd, &vp));
            else
                snprintf(sub, sizeof(sub), "%s[%zu]", path, j);
            flat_value(f, sub, vfd, vp);
        }
    }
}

static void yaml_message(FILE *f, const ProtobufCMessage *msg, int indent, bool inline_first);

/* A value after "key:" or "- ": a scalar on the same line, a message on
 * the lines below (or {} when it has no fields to show). */
static void yaml_value(FILE *f, const ProtobufCFieldDescriptor *fd, const void *p, int indent,
                       bool in_list)
{
    if (fd->type != PROTOBUF_C_TYPE_MESSAGE) {
        fputc(' ', f);
        cs_json_write_scalar(f, fd, p);
        fputc('\n', f);
        return;
    }
    yaml_message(f, *(ProtobufCMessage *const *)p, indent, in_list);
}

static void yaml_repeated(FILE *f, const ProtobufCFieldDescriptor *fd, const char *base, int indent)
{
    size_t n = *(const size_t *)(base + fd->quantifier_offset);
    bool map = fd->type == PROTOBUF_C_TYPE_MESSAGE && cs_json_is_map_entry(fd->descriptor);

    if (n == 0) {
        fputs(map ? " {}\n" : " []\n", f);
        return;
    }
    fputc('\n', f);
    for (size_t i = 0; i < n; i++) {
        const ProtobufCFieldDescriptor *vfd;
        const void *item = cs_json_item_at(fd, base, i), *vp;

        if (map) {
            const char *k = cs_json_entry_key(item, &vfd, &vp);

            fprintf(f, "%*s", indent, "");
            cs_json_write_string(f, k, strlen(k));
            fputc(':', f);
            yaml_value(f, vfd, vp, indent + 2, false);
        } else {
            fprintf(f, "%*s-", indent, "");
            yaml_value(f, fd, item, indent + 2, true);
        }
    }
}

/* The fields of msg at indent; with inline_first the first one goes on the
 * current line (after "- "). */
static void yaml_message(FILE *f, const ProtobufCMessage *msg, int indent, bool inline_first)
{
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    const char *base = (const char *)msg;
    bool first = true;

    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *fd = &d->fields[i];

        if (!cs_json_field_present(fd, base))
            continue;
        if (first)
            fputs(inline_first ? " " : "\n", f);
        if (!first || !inline_first)
            fprintf(f, "%*s", indent, "");
        first = false;
        cs_json_write_camel(f, fd->name);
        fputc(':', f);
        if (fd->label == PROTOBUF_C_LABEL_REPEATED)
            yaml_repeated(f, fd, base, indent + 2);
        else
            yaml_value(f, fd, base + fd->offset, indent + 2, false);
    }
    if (first)
        fputs(" {}\n", f);
}

void cs_cli_print_message(struct cs_cli *cli, const ProtobufCMessage *msg)
{
    if (cli->format == CS_FORMAT_YAML) {
        fputs("---", cli->out);
        yaml_message(cli->out, msg, 0, false);
    } else {
        cs_json_write_message(cli->out, msg);
        fputc('\n', cli->out);
    }
    fflush(cli->out);
}

void cs_cli_list_begin(struct cs_cli_list *list, struct cs_cli *cli, const char *field)
{
    list->cli = cli;
    list->field = field;
    list->n = 0;
    if (cli->format == CS_FORMAT_JSON) {
        fputc('{', cli->out);
        fputc('"', cli->out);
        cs_json_write_camel(cli->out, field);
        fputs("\":[", cli->out);
    } else if (cli->format == CS_FORMAT_YAML) {
        fputs("---\n", cli->out);
    }
}

void cs_cli_list_add(struct cs_cli_list *list, const ProtobufCMessage *msg)
{
    FILE *f = list->cli->out;

    if (list->cli->format == CS_FORMAT_JSON) {
        if (list->n > 0)
            fputc(',', f);
        cs_json_write_message(f, msg);
    } else if (list->cli->format == CS_FORMAT_YAML) {
        if (list->n == 0) {
            cs_json_write_camel(f, list->field);
            fputs(":\n", f);
        }
        fputc('-', f);
        yaml_message(f, msg, 2, true);
    }
    list->n++;
}

void cs_cli_list_end(struct cs_cli_list *list, const char *next_page_token)
{
    FILE *f = list->cli->out;
    size_t len = strlen(next_page_token);

    if (list->cli->format == CS_FORMAT_JSON) {
        fputs("],\"nextPageToken\":", f);
        cs_json_write_string(f, next_page_token, len);
        fputs("}\n", f);
    } else if (list->cli->format == CS_FORMAT_YAML) {
        if (list->n == 0) {
            cs_json_write_camel(f, list->field);
            fputs(": []\n", f);
        }
        fputs("nextPageToken: ", f);
        cs_json_write_string(f, next_page_token, len);
        fputc('\n', f);
    }
    fflush(f);
}
