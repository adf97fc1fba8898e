/* auth_file: the two files that give TCP callers their roles, parsed from
 * their text. The tokens file (--tokens-file) holds one "NAME ROLE SHA256"
 * line per bearer token, the token itself never; the client-roles file
 * (--tls-client-roles) one "MATCH ROLE" line per client certificate, MATCH
 * being a whole subject ("CN=ops-bot,O=Example") or a common name
 * ("CN=ops-bot"). '#' starts a comment; blank lines are allowed. Plain data:
 * any thread, a set being read by one thread at a time.
 *
 * A token is looked up by its SHA-256, compared with every entry's in
 * constant time, so neither the time nor the order says which one matched. */
#ifndef CS_AUTH_FILE_H
#define CS_AUTH_FILE_H

#include <stddef.h>

#include "access.h"
#include "identity.h"
#include "util.h"

#define CS_TOKEN_NAME_MAX 64
#define CS_SHA256_BYTES 32

struct cs_token {
    char name[CS_TOKEN_NAME_MAX + 1];
    enum cs_role role;
    unsigned char sha256[CS_SHA256_BYTES];
};

struct cs_tokens {
    struct cs_token *v;
    size_t n;
};

struct cs_cert_role {
    char *match; /* "CN=ops-bot" or a whole subject */
    enum cs_role role;
};

struct cs_cert_roles {
    struct cs_cert_role *v;
    size_t n;
};

/* Parses the tokens file's text into *out (emptied first); path only names
 * the file in messages. 0, or -EINVAL with err saying "path:line: why" and
 * *out left empty. Names and hashes must each be unique. */
int cs_tokens_parse(const char *path, const char *text, struct cs_tokens *out, struct cs_err *err);
/* The entry whose hash is SHA-256(token[0..len)), or NULL. */
const struct cs_token *cs_tokens_find(const struct cs_tokens *set, const char *token, size_t len);
/* The entry whose hash is hex[0..len) (64 hex digits), or NULL. */
const struct cs_token *cs_tokens_find_hash(const struct cs_tokens *set, const char *hex,
                                           size_t len);
void cs_tokens_clear(struct cs_tokens *set);

/* The client-roles file's text into *out, as cs_tokens_parse. */
int cs_cert_roles_parse(const char *path, const char *text, struct cs_cert_roles *out,
                        struct cs_err *err);
/* The role of a certificate: an entry naming its whole subject wins over
 * one naming its common name ("CN=" + cn); CS_ROLE_NONE if neither is
 * listed. subject and cn may be NULL. */
enum cs_role cs_cert_roles_find(const struct cs_cert_roles *set, const char *subject,
                                const char *cn);
void cs_cert_roles_clear(struct cs_cert_roles *set);

/* SHA-256 of data as 64 lowercase hex digits and a NUL into hex. */
void cs_sha256_hex(const void *data, size_t len, char hex[2 * CS_SHA256_BYTES + 1]);

#endif
