/* utf8: making text that may hold a cut or foreign byte sequence safe for
 * PostgreSQL's text columns and gRPC status messages, both of which want
 * UTF-8. A message formatted with "%.64s" of a client's string, or cut at
 * its buffer's end, may end inside a character. Any thread. */
#ifndef CS_UTF8_H
#define CS_UTF8_H

#include <stddef.h>

/* Replaces in place, with '?', every byte of s that is not part of a
 * well-formed UTF-8 character (RFC 3629: no overlong forms, no surrogates,
 * nothing past U+10FFFF). Keeps s's length. */
void cs_utf8_scrub(char *s);
/* Cuts s (UTF-8) to at most max_bytes bytes, never inside a character. */
void cs_utf8_clip(char *s, size_t max_bytes);

#endif
