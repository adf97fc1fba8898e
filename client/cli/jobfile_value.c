/* The values of a YAML job file, shared by jobfile.c (a job),
 * jobfile_hooks.c (its hooks) and jobfile_docs.c (the documents): strict
 * scalars and numbers, the error naming file and line, duplicate keys.
 * Calls nothing of the other jobfile files. Single-threaded. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "jobfile.h"

int jf_error(struct jf *jf, const yaml_node_t *node, const char *fmt, ...)
{
    char msg[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(jf->err, jf->errlen, "%s:%lu: %s", jf->name, (unsigned long)node->start_mark.line + 1,
             msg);
    return -EINVAL;
}

const char *jf_scalar(const yaml_node_t *node)
{
    return (const char *)node->data.scalar.value;
}

int jf_want_scalar(struct jf *jf, const yaml_node_t *node, const char *key)
{
    if (node->type != YAML_SCALAR_NODE)
        return jf_error(jf, node, "%s: must be a single value", key);
    return 0;
}

/* A key of a mapping and its place in it, sorted by text then place. */
struct key_at {
    const yaml_node_t *node;
    size_t at;
};

static int key_at_cmp(const void *a, const void *b)
{
    const struct key_at *x = a, *y = b;
    int c = strcmp(jf_scalar(x->node), jf_scalar(y->node));

    return c != 0 ? c : (x->at > y->at) - (x->at < y->at);
}

/* A number must be written as one: "60" or '60' is a string, as YAML and
 * the proto types say, and is refused rather than read as 60. */
int jf_want_number(struct jf *jf, const yaml_node_t *node, const char *key)
{
    if (jf_want_scalar(jf, node, key) != 0)
        return -EINVAL;
    if (node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return jf_error(jf, node, "%s: must be a number, not the string \"%s\" (drop the quotes)",
                        key, jf_scalar(node));
    return 0;
}

int jf_u32(struct jf *jf, const yaml_node_t *node, const char *key, uint32_t *out)
{
    if (jf_want_number(jf, node, key) != 0)
        return -EINVAL;
    if (cs_cli_parse_u32(jf_scalar(node), out) != 0)
        return jf_error(jf, node, "%s: must be a whole number from 0 to 4294967295, not '%s'", key,
                        jf_scalar(node));
    return 0;
}

int jf_u64(struct jf *jf, const yaml_node_t *node, const char *key, uint64_t *out)
{
    const char *text;
    char *end;

    if (jf_want_number(jf, node, key) != 0)
        return -EINVAL;
    text = jf_scalar(node);
    errno = 0;
    *out = strtoull(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || *end != '\0' || errno != 0)
        return jf_error(jf, node, "%s: must be a whole number from 0 to 2^64-1, not '%s'", key,
                        text);
    return 0;
}

int jf_string(struct jf *jf, const yaml_node_t *node, const char *key, char **out)
{
    if (jf_want_scalar(jf, node, key) != 0)
        return -EINVAL;
    cs_cli_set_string(out, jf_scalar(node));
    return 0;
}

int jf_unique_keys(struct jf *jf, const yaml_node_t *node)
{
    size_t n = 0, pairs = (size_t)(node->data.mapping.pairs.top - node->data.mapping.pairs.start);
    struct key_at *keys = cs_cli_xmalloc((pairs ? pairs : 1) * sizeof(*keys));
    const struct key_at *dup = NULL;

    /* Sorted, a repeated key sits next to its first place: the one to name
     * is the repeat that comes first in the file. */
    for (size_t i = 0; i < pairs; i++) {
        yaml_node_t *k = yaml_document_get_node(jf->doc, node->data.mapping.pairs.start[i].key);

        if (k->type == YAML_SCALAR_NODE)
            keys[n++] = (struct key_at){k, i};
    }
    qsort(keys, n, sizeof(*keys), key_at_cmp);
    for (size_t i = 1; i < n; i++)
        if (strcmp(jf_scalar(keys[i].node), jf_scalar(keys[i - 1].node)) == 0 &&
            (dup == NULL || keys[i].at < dup->at))
            dup = &keys[i];
    int rc =
        dup != NULL ? jf_error(jf, dup->node, "key '%s' appears twice", jf_scalar(dup->node)) : 0;
    free(keys);
    return rc;
}

int jf_strings(struct jf *jf, const yaml_node_t *node, const char *key, const char *hint,
               char ***list, size_t *n)
{
    yaml_node_item_t *item;

    if (node->type != YAML_SEQUENCE_NODE)
        return jf_error(jf, node, "%s: must be a list of strings%s", key, hint);
    for (item = node->data.sequence.items.start; item < node->data.sequence.items.top; item++) {
        yaml_node_t *arg = yaml_document_get_node(jf->doc, *item);

        if (arg->type != YAML_SCALAR_NODE)
            return jf_error(jf, arg, "%s: each item must be a string", key);
        cs_cli_strings_add(list, n, jf_scalar(arg));
    }
    return 0;
}
