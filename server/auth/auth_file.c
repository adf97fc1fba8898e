/* auth_file: parsing the tokens and client-roles files, and looking callers
 * up in them (see auth_file.h). Any thread; no state of its own. Both files
 * share one line reader: a line is trimmed, skipped when blank or a comment,
 * and handed to the file's own parser with "path:line" for its messages. */
#include "auth_file.h"

#include <ctype.h>
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_BYTES 1024

void cs_sha256_hex(const void *data, size_t len, char hex[2 * CS_SHA256_BYTES + 1])
{
    unsigned char md[CS_SHA256_BYTES];
    (void)SHA256(data, len, md);
    for (size_t i = 0; i < sizeof(md); i++)
        (void)snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

/* A file's own parser: one trimmed line that is neither blank nor a comment;
 * where is "path:line". 0 or -EINVAL with err set. */
typedef int (*line_cb)(void *set, char *line, const char *where, struct cs_err *err);

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

static int each_line(const char *path, const char *text, line_cb parse_cb, void *set,
                     struct cs_err *err)
{
    unsigned no = 0;
    for (const char *p = text; *p != '\0';) {
        const char *nl = strchr(p, '\n');
        size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
        char where[300];
        (void)snprintf(where, sizeof(where), "%s:%u", path, ++no);
        if (len >= LINE_MAX_BYTES)
            return cs_err_set(err, -EINVAL, "%s: longer than %d bytes", where, LINE_MAX_BYTES);
        char buf[LINE_MAX_BYTES];
        memcpy(buf, p, len);
        buf[len] = '\0';
        char *line = trim(buf);
        if (line[0] != '\0' && line[0] != '#') {
            int rc = parse_cb(set, line, where, err);
            if (rc != 0)
                return rc;
        }
        p += len + (nl != NULL);
    }
    return 0;
}

static int parse_role(const char *text, const char *where, enum cs_role *out, struct cs_err *err)
{
    if (cs_role_parse(text, out) != 0)
        return cs_err_set(err, -EINVAL, "%s: role \"%.40s\" must be viewer, operator or admin",
                          where, text);
    return 0;
}

/* --- tokens ------------------------------------------------------------ */

static bool name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > CS_TOKEN_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)name[i]) && strchr("._-@", name[i]) == NULL)
            return false;
    return true;
}

static int parse_hash(const char *hex, unsigned char out[CS_SHA256_BYTES])
{
    if (strlen(hex) != 2 * CS_SHA256_BYTES)
        return -EINVAL;
    for (size_t i = 0; i < CS_SHA256_BYTES; i++) {
        unsigned v = 0;
        for (size_t k = 0; k < 2; k++) {
            char c = (char)tolower((unsigned char)hex[2 * i + k]);
            if (!isxdigit((unsigned char)c))
                return -EINVAL;
            v = v * 16 + (unsigned)(isdigit((unsigned char)c) ? c - '0' : c - 'a' + 10);
        }
        out[i] = (unsigned char)v;
    }
    return 0;
}

static int token_line_cb(void *arg, char *line, const char *where, struct cs_err *err)
{
    struct cs_tokens *set = arg;
    char *save = NULL;
    char *field[4];
    size_t n = 0;
    for (char *f = strtok_r(line, " \t", &save); f != NULL && n < 4;
         f = strtok_r(NULL, " \t", &save))
        field[n++] = f;
    if (n != 3)
        return cs_err_set(err, -EINVAL, "%s: expected NAME ROLE SHA256, three words", where);
    struct cs_token t = {.role = CS_ROLE_NONE};
    if (!name_ok(field[0]))
        return cs_err_set(
            err, -EINVAL,
            "%s: name \"%.40s\" must be 1 to %d letters, digits, '.', '_', '-' or '@'", where,
            field[0], CS_TOKEN_NAME_MAX);
    (void)snprintf(t.name, sizeof(t.name), "%s", field[0]);
    if (parse_role(field[1], where, &t.role, err) != 0)
        return -EINVAL;
    if (parse_hash(field[2], t.sha256) != 0)
        return cs_err_set(err, -EINVAL,
                          "%s: the hash must be 64 hex digits, the token's SHA-256 "
                          "(printf %%s TOKEN | sha256sum)",
                          where);
    for (size_t i = 0; i < set->n; i++) {
        if (strcmp(set->v[i].name, t.name) == 0)
            return cs_err_set(err, -EINVAL, "%s: the name %s is listed twice", where, t.name);
        if (memcmp(set->v[i].sha256, t.sha256, CS_SHA256_BYTES) == 0)
            return cs_err_set(err, -EINVAL, "%s: %s has the same token as %s", where, t.name,
                              set->v[i].name);
    }
    set->v = cs_xrealloc(set->v, (set->n + 1) * sizeof(*set->v));
    set->v[set->n++] = t;
    return 0;
}

int cs_tokens_parse(const char *path, const char *text, struct cs_tokens *out, struct cs_err *err)
{
    cs_tokens_clear(out);
    int rc = each_line(path, text, token_line_cb, out, err);
    if (rc != 0)
        cs_tokens_clear(out);
    return rc;
}

const struct cs_token *cs_tokens_find(const struct cs_tokens *set, const char *token, size_t len)
{
    unsigned char md[CS_SHA256_BYTES];
    (void)SHA256((const unsigned char *)token, len, md);
    const struct cs_token *found = NULL;
    /* Every entry is compared, with no early exit. */
    for (size_t i = 0; i < set->n; i++)
        if (CRYPTO_memcmp(set->v[i].sha256, md, sizeof(md)) == 0)
            found = &set->v[i];
    OPENSSL_cleanse(md, sizeof(md));
    return found;
}

const struct cs_token *cs_tokens_find_hash(const struct cs_tokens *set, const char *hex, size_t len)
{
    unsigned char md[CS_SHA256_BYTES];
    char text[2 * CS_SHA256_BYTES + 1];
    if (len != 2 * CS_SHA256_BYTES)
        return NULL;
    memcpy(text, hex, len);
    text[len] = '\0';
    if (parse_hash(text, md) != 0)
        return NULL;
    const struct cs_token *found = NULL;
    for (size_t i = 0; i < set->n; i++)
        if (CRYPTO_memcmp(set->v[i].sha256, md, sizeof(md)) == 0)
            found = &set->v[i];
    return found;
}

void cs_tokens_clear(struct cs_tokens *set)
{
    free(set->v);
    set->v = NULL;
    set->n = 0;
}

/* --- client certificates ------------------------------------------------ */

static int cert_line_cb(void *arg, char *line, const char *where, struct cs_err *err)
{
    struct cs_cert_roles *set = arg;
    char *last = line + strlen(line);
    while (last > line && !isspace((unsigned char)last[-1]))
        last--;
    if (last == line)
        return cs_err_set(err, -EINVAL, "%s: expected SUBJECT ROLE or CN=NAME ROLE", where);
    struct cs_cert_role r = {.role = CS_ROLE_NONE};
    if (parse_role(last, where, &r.role, err) != 0)
        return -EINVAL;
    last[0] = '\0';
    char *match = trim(line);
    if (strchr(match, '=') == NULL)
        return cs_err_set(err, -EINVAL, "%s: \"%.60s\" is neither a subject nor CN=NAME", where,
                          match);
    for (size_t i = 0; i < set->n; i++)
        if (strcmp(set->v[i].match, match) == 0)
            return cs_err_set(err, -EINVAL, "%s: \"%.60s\" is listed twice", where, match);
    r.match = cs_xstrdup(match);
    set->v = cs_xrealloc(set->v, (set->n + 1) * sizeof(*set->v));
    set->v[set->n++] = r;
    return 0;
}

int cs_cert_roles_parse(const char *path, const char *text, struct cs_cert_roles *out,
                        struct cs_err *err)
{
    cs_cert_roles_clear(out);
    int rc = each_line(path, text, cert_line_cb, out, err);
    if (rc != 0)
        cs_cert_roles_clear(out);
    return rc;
}

enum cs_role cs_cert_roles_find(const struct cs_cert_roles *set, const char *subject,
                                const char *cn)
{
    enum cs_role by_cn = CS_ROLE_NONE;
    for (size_t i = 0; i < set->n; i++) {
        const char *m = set->v[i].match;
        if (subject != NULL && strcmp(m, subject) == 0)
            return set->v[i].role;
        if (cn != NULL && strncmp(m, "CN=", 3) == 0 && strcmp(m + 3, cn) == 0)
            by_cn = set->v[i].role;
    }
    return by_cn;
}

void cs_cert_roles_clear(struct cs_cert_roles *set)
{
    for (size_t i = 0; i < set->n; i++)
        free(set->v[i].match);
    free(set->v);
    set->v = NULL;
    set->n = 0;
}
