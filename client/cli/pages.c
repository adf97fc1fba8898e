/* pages: the walk over a paged List call that the list commands share:
 * pages of up to 1000 until limit items or the last page, each item added
 * to the -o json/yaml list or to the table, and on a failure the rows read
 * so far, then why the rest is missing. The response's items and its
 * next_page_token are found through its descriptor. */
#include <stdlib.h>

#include "cli.h"

#define PAGE_MAX 1000

/* The items of resp's repeated message field named field. */
static size_t page_items(const ProtobufCMessage *resp, const char *field,
                         ProtobufCMessage *const **items)
{
    const ProtobufCFieldDescriptor *fd =
        protobuf_c_message_descriptor_get_field_by_name(resp->descriptor, field);
    *items = *(ProtobufCMessage *const *const *)((const char *)resp + fd->offset);
    return *(const size_t *)((const char *)resp + fd->quantifier_offset);
}

static const char *next_token(const ProtobufCMessage *resp)
{
    const ProtobufCFieldDescriptor *fd =
        protobuf_c_message_descriptor_get_field_by_name(resp->descriptor, "next_page_token");
    return *(char *const *)((const char *)resp + fd->offset);
}

int cs_cli_list_pages(struct cs_cli *cli, const struct cs_cli_pages *p, struct cs_cli_table *t)
{
    struct cs_call_opts opts = cs_cli_call_opts(cli);
    struct cs_cli_list list;
    char *token = NULL;
    uint32_t shown = 0;
    bool table = cli->format == CS_FORMAT_TABLE;

    cs_cli_list_begin(&list, cli, p->items);
    do {
        ProtobufCMessage *resp = NULL, *const * items;
        struct cs_status st;
        uint32_t left = p->limit - shown;
        int rc = p->fetch_cb(cli, p->req, left < PAGE_MAX ? left : PAGE_MAX,
                             token != NULL ? token : "", &resp, &opts, &st);
        free(token);
        token = NULL;
        if (rc != 0) {
            /* The rows read so far, if any: a bare header would read as
             * an empty list. */
            if (table && shown > 0)
                cs_cli_table_print(t, cli->out, "");
            else if (table)
                cs_cli_table_free(t);
            return cs_cli_fail(cli, p->what, rc, &st);
        }
        size_t n = page_items(resp, p->items, &items);
        for (size_t i = 0; i < n && shown < p->limit; i++) {
            if (table)
                p->row_cb(t, items[i]);
            else
                cs_cli_list_add(&list, items[i]);
            shown++;
        }
        if (next_token(resp)[0] != '\0' && shown < p->limit)
            token = cs_cli_xstrdup(next_token(resp));
        protobuf_c_message_free_unpacked(resp, NULL);
    } while (token != NULL);
    cs_cli_list_end(&list, "");
    if (table && p->widths != NULL)
        cs_cli_table_print_keep(t, cli->out, p->widths, true);
    else if (table)
        cs_cli_table_print(t, cli->out, "");
    return 0;
}
