/* The human tables of csched: rows are kept until the listing is whole, then
 * each column is as wide as its widest cell, so columns line up whatever
 * the names, identities and messages are. Widths count characters (UTF-8
 * code points), not bytes.
 *
 * Single-threaded.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cs_cli_table_init(struct cs_cli_table *t, size_t ncols, ...)
{
    va_list ap;

    t->ncols = ncols;
    t->cap = 16;
    t->cells = cs_cli_xcalloc(t->cap * ncols, sizeof(*t->cells));
    va_start(ap, ncols);
    for (size_t i = 0; i < ncols; i++)
        t->cells[i] = cs_cli_xstrdup(va_arg(ap, const char *));
    va_end(ap);
    t->nrows = 1;
}

void cs_cli_table_row(struct cs_cli_table *t, const char *const *cells)
{
    if (t->nrows == t->cap) {
        char **grown = cs_cli_xcalloc(t->cap * 2 * t->ncols, sizeof(*grown));

        memcpy(grown, t->cells, t->cap * t->ncols * sizeof(*grown));
        free(t->cells);
        t->cells = grown;
        t->cap *= 2;
    }
    for (size_t i = 0; i < t->ncols; i++)
        t->cells[t->nrows * t->ncols + i] = cs_cli_xstrdup(cells[i]);
    t->nrows++;
}

size_t cs_cli_text_width(const char *s)
{
    size_t n = 0;

    for (; *s != '\0'; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* Widens widths to t's cells, then writes t's rows from row first on, each
 * line after indent, columns two spaces apart; frees t. */
static void print_rows(struct cs_cli_table *t, FILE *f, const char *indent, size_t *widths,
                       size_t first)
{
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            size_t w = cs_cli_text_width(t->cells[r * t->ncols + c]);

            widths[c] = w > widths[c] ? w : widths[c];
        }
    }
    for (size_t r = first; r < t->nrows; r++) {
        fputs(indent, f);
        for (size_t c = 0; c < t->ncols; c++) {
            const char *cell = t->cells[r * t->ncols + c];

            fputs(cell, f);
            /* No spaces after the last column. */
            if (c + 1 < t->ncols)
                fprintf(f, "%*s", (int)(widths[c] - cs_cli_text_width(cell) + 2), "");
        }
        fputc('\n', f);
    }
    cs_cli_table_free(t);
}

void cs_cli_table_print(struct cs_cli_table *t, FILE *f, const char *indent)
{
    size_t *widths = cs_cli_xcalloc(t->ncols, sizeof(*widths));

    print_rows(t, f, indent, widths, 0);
    free(widths);
}

void cs_cli_table_print_keep(struct cs_cli_table *t, FILE *f, size_t *widths, bool header)
{
    print_rows(t, f, "", widths, header ? 0 : 1);
}

void cs_cli_table_free(struct cs_cli_table *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    t->cells = NULL;
}
