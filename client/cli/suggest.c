/* "Did you mean": the known word nearest to a mistyped command or flag, by
 * edit distance (a swap of two neighbours counts as one edit, the commonest
 * slip). A command's flags are read from its help text (help.c), so that a
 * flag added there is suggested with no list of its own to keep.
 *
 * Single-threaded.
 */
#include <ctype.h>
#include <string.h>

#include "cli.h"

/* Words longer than this are never near a known one. */
#define WORD_MAX 48

/* The optimal string alignment distance of a and b (both < WORD_MAX). */
static size_t distance(const char *a, size_t na, const char *b, size_t nb)
{
    size_t d[WORD_MAX + 1][WORD_MAX + 1];

    for (size_t i = 0; i <= na; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= nb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= na; i++) {
        for (size_t j = 1; j <= nb; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[na][nb];
}

/* A suggestion's search: the word and the best candidate so far. */
struct nearest {
    const char *word;
    size_t len;
    const char *best;
    size_t best_len, best_distance;
};

static void consider(struct nearest *n, const char *cand, size_t len)
{
    size_t d;

    if (len == 0 || len >= WORD_MAX || n->len >= WORD_MAX)
        return;
    d = distance(n->word, n->len, cand, len);
    if (d < n->best_distance) {
        n->best = cand;
        n->best_len = len;
        n->best_distance = d;
    }
}

/* Starts a search for word: only a candidate at most a third of its length
 * away (not counting a flag's dashes; at least 1, at most 3 edits) is near
 * enough to be worth saying: "--bogus" is not "--logs". */
static void nearest_init(struct nearest *n, const char *word)
{
    size_t len = strlen(word);
    size_t limit = (len - strspn(word, "-")) / 3;

    n->word = word;
    n->len = len;
    n->best = NULL;
    n->best_len = 0;
    n->best_distance = (limit < 1 ? 1 : limit > 3 ? 3 : limit) + 1;
}

/* Copies the best candidate into buf (empty when none was near). */
static const char *nearest_end(const struct nearest *n, char *buf, size_t len)
{
    size_t take = n->best_len < len - 1 ? n->best_len : len - 1;

    if (n->best == NULL || n->best_distance == 0)
        take = 0;
    memcpy(buf, n->best != NULL ? n->best : "", take);
    buf[take] = '\0';
    return buf;
}

const char *cs_cli_suggest(const char *word, const char *const *known, size_t n, char *buf,
                           size_t len)
{
    struct nearest near;

    nearest_init(&near, word);
    for (size_t i = 0; i < n; i++)
        consider(&near, known[i], strlen(known[i]));
    return nearest_end(&near, buf, len);
}

/* Offers every flag ("-x", "--name") that text names to n. */
static void consider_flags(struct nearest *n, const char *text)
{
    for (const char *p = text; (p = strchr(p, '-')) != NULL;) {
        size_t len = 0;

        if (p > text && !isspace((unsigned char)p[-1]) && p[-1] != '[' && p[-1] != '(' &&
            p[-1] != '|') {
            p++;
            continue;
        }
        while (p[len] == '-' || isalnum((unsigned char)p[len]))
            len++;
        if (len > 1 && p[1] != ' ')
            consider(n, p, len);
        p += len ? len : 1;
    }
}

const char *cs_cli_suggest_flag(const char *command, const char *word, char *buf, size_t len)
{
    char cmd[64];
    const char *sub = NULL, *space = strchr(command, ' ');
    struct nearest near;

    /* "job next" is the command job with its subcommand next. */
    snprintf(cmd, sizeof(cmd), "%.*s", space ? (int)(space - command) : (int)strlen(command),
             command);
    if (space != NULL)
        sub = space + 1;
    nearest_init(&near, word);
    consider_flags(&near, cs_cli_help_text(cmd, sub));
    consider_flags(&near, cs_cli_help_text(NULL, NULL));
    return nearest_end(&near, buf, len);
}
