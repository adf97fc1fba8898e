/* label_selector: parses a selector into terms over a copy of its text,
 * whose words get NULs in place; a term that does not parse is named whole
 * in the error, as the client wrote it. */
#include "label_selector.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LABEL_KEY_BYTES_MAX 63
#define LABEL_VALUE_BYTES_MAX 256

/* Words are keys and values: anything but blanks and the selector's own
 * punctuation, so that any label a job may have can be selected. */
static bool is_word_char(char c)
{
    return c != '\0' && strchr(" \t,()=!", c) == NULL;
}

static char *skip_blanks(char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

static char *word_end(char *p)
{
    while (is_word_char(*p))
        p++;
    return p;
}

/* Whether p starts the keyword kw, followed by a blank or '('. */
static bool is_keyword(const char *p, const char *kw)
{
    size_t n = strlen(kw);
    return strncmp(p, kw, n) == 0 && (p[n] == ' ' || p[n] == '\t' || p[n] == '(');
}

/* Reads a value at *p (may be empty), NUL-terminates it later through
 * *end; NULL for one that is too long. */
static const char *take_value(char **p, char **end)
{
    char *v = *p;
    *end = word_end(v);
    *p = *end;
    return *end - v <= LABEL_VALUE_BYTES_MAX ? v : NULL;
}

/* Parses "(a, b, c)" at *p into t's values. NULL, or why it is not a set. */
static const char *parse_set(char **p, struct cs_selector_term *t)
{
    char *s = skip_blanks(*p);
    if (*s != '(')
        return "'(' must follow in and notin";
    size_t max = 1;
    for (const char *c = s; *c != '\0' && *c != ')'; c++)
        max += *c == ',';
    t->values = calloc(max, sizeof(*t->values));
    if (t->values == NULL)
        return "out of memory";
    s++;
    for (;;) {
        char *end;
        s = skip_blanks(s);
        const char *v = take_value(&s, &end);
        if (v == NULL)
            return "a value is at most 256 bytes";
        if (v == end)
            return "a set's values may not be empty";
        t->values[t->n_values++] = v;
        s = skip_blanks(s);
        char sep = *s;
        *end = '\0';
        if (sep == ')')
            break;
        if (sep != ',')
            return "a set is values between '(' and ')', separated by commas";
        s++;
    }
    *p = s + 1;
    return NULL;
}

/* Parses one term (NUL-terminated, blanks around it allowed) into t. NULL,
 * or why it is not a term. */
static const char *parse_term(char *p, struct cs_selector_term *t)
{
    p = skip_blanks(p);
    if (*p == '\0')
        return "it is empty";
    bool negated = *p == '!';
    if (negated)
        p = skip_blanks(p + 1);
    char *key = p, *key_end = word_end(p), *value_end = NULL;
    if (key_end == key)
        return "it does not start with a label key";
    if (key_end - key > LABEL_KEY_BYTES_MAX)
        return "a label key is at most 63 bytes";
    p = skip_blanks(key_end);
    t->key = key;
    if (negated || *p == '\0') {
        t->op = negated ? CS_SELECTOR_HAS_NOT : CS_SELECTOR_HAS;
    } else if (*p == '=' || (p[0] == '!' && p[1] == '=')) {
        t->op = *p == '=' ? CS_SELECTOR_EQ : CS_SELECTOR_NE;
        p += p[0] == '!' || p[1] == '=' ? 2 : 1;
        p = skip_blanks(p);
        const char *v = take_value(&p, &value_end);
        if (v == NULL)
            return "a value is at most 256 bytes";
        t->values = calloc(1, sizeof(*t->values));
        if (t->values == NULL)
            return "out of memory";
        t->values[t->n_values++] = v;
        p = skip_blanks(p);
    } else if (is_keyword(p, "in") || is_keyword(p, "notin")) {
        t->op = p[0] == 'i' ? CS_SELECTOR_IN : CS_SELECTOR_NOTIN;
        p += t->op == CS_SELECTOR_IN ? 2 : 5;
        const char *why = parse_set(&p, t);
        if (why != NULL)
            return why;
        p = skip_blanks(p);
    } else {
        return "=, ==, !=, in or notin must follow the key";
    }
    if (*p != '\0')
        return negated ? "nothing may follow !key" : "something follows its end";
    /* Only now: a NUL written earlier could hide what follows a word. */
    *key_end = '\0';
    if (value_end != NULL)
        *value_end = '\0';
    return NULL;
}

/* Where the term at p ends: its comma, outside any parentheses, or the
 * selector's end. */
static char *term_end(char *p)
{
    int depth = 0;
    for (; *p != '\0'; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')' && depth > 0)
            depth--;
        else if (*p == ',' && depth == 0)
            break;
    }
    return p;
}

int cs_label_selector_parse(struct cs_label_selector *sel, const char *text, const char *field,
                            struct cs_err *err)
{
    size_t len = strlen(text);

    *sel = (struct cs_label_selector){0};
    if (len > CS_LABEL_SELECTOR_BYTES_MAX)
        return cs_err_field(err, -EINVAL, field, "%s is %zu bytes long; the limit is %d", field,
                            len, CS_LABEL_SELECTOR_BYTES_MAX);
    if (*skip_blanks((char *)text) == '\0')
        return 0;
    sel->text = strdup(text);
    size_t max = 1;
    for (const char *c = text; *c != '\0'; c++)
        max += *c == ',';
    sel->terms = calloc(max, sizeof(*sel->terms));
    if (sel->text == NULL || sel->terms == NULL)
        return cs_err_field(err, -ENOMEM, field, "out of memory parsing %s", field);
    for (char *p = sel->text;;) {
        char *end = term_end(p);
        char sep = *end;
        *end = '\0';
        const char *why = parse_term(p, &sel->terms[sel->n_terms++]);
        int shown = end - p < 64 ? (int)(end - p) : 64;
        if (why != NULL)
            return cs_err_field(err, -EINVAL, field,
                                "%s: '%.*s' is not a selector term: %s (terms are key=value, "
                                "key!=value, key in (a,b), key notin (a,b), key and !key, joined "
                                "by commas)",
                                field, shown, text + (p - sel->text), why);
        if (sep == '\0')
            return 0;
        p = end + 1;
    }
}

static const char *label_value(struct cs_kv *const *labels, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(labels[i]->key, key) == 0)
            return labels[i]->value;
    return NULL;
}

static bool in_values(const struct cs_selector_term *t, const char *value)
{
    for (size_t i = 0; i < t->n_values; i++)
        if (strcmp(t->values[i], value) == 0)
            return true;
    return false;
}

static bool term_holds(const struct cs_selector_term *t, struct cs_kv *const *labels, size_t n)
{
    const char *value = label_value(labels, n, t->key);
    switch (t->op) {
    case CS_SELECTOR_EQ:
    case CS_SELECTOR_IN:
        return value != NULL && in_values(t, value);
    case CS_SELECTOR_NE:
    case CS_SELECTOR_NOTIN:
        return value == NULL || !in_values(t, value);
    case CS_SELECTOR_HAS:
        return value != NULL;
    case CS_SELECTOR_HAS_NOT:
        return value == NULL;
    }
    return false;
}

bool cs_label_selector_matches(const struct cs_label_selector *sel, struct cs_kv *const *labels,
                               size_t n)
{
    for (size_t i = 0; i < sel->n_terms; i++)
        if (!term_holds(&sel->terms[i], labels, n))
            return false;
    return true;
}

bool cs_label_selector_matches_job(const struct cs_label_selector *sel, const Csched__V1__Job *spec)
{
    return cs_label_selector_matches(sel, (struct cs_kv *const *)spec->labels, spec->n_labels);
}

void cs_label_selector_free(struct cs_label_selector *sel)
{
    for (size_t i = 0; sel->terms != NULL && i < sel->n_terms; i++)
        free(sel->terms[i].values);
    free(sel->terms);
    free(sel->text);
    *sel = (struct cs_label_selector){0};
}
