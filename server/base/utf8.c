/* utf8: scrubbing and clipping UTF-8 text (see utf8.h). */
#include "utf8.h"

#include <string.h>

/* The length of the well-formed character at s (1 to 4), or 0. */
static size_t char_len(const unsigned char *s)
{
    unsigned char c = s[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF; /* the range of the second byte */
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0)
            lo = 0xA0; /* overlong below */
        else if (c == 0xED)
            hi = 0x9F; /* surrogates above */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F; /* past U+10FFFF above */
    } else {
        return 0;
    }
    if (s[1] < lo || s[1] > hi)
        return 0;
    /* A NUL ends the string before a continuation byte can be missed. */
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

void cs_utf8_scrub(char *s)
{
    unsigned char *p = (unsigned char *)s;
    while (*p != '\0') {
        size_t n = char_len(p);
        if (n == 0)
            *p++ = '?';
        else
            p += n;
    }
}

void cs_utf8_clip(char *s, size_t max_bytes)
{
    size_t len = strlen(s);
    if (len <= max_bytes)
        return;
    size_t cut = max_bytes;
    /* Back over continuation bytes to the start of the character cut. */
    while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
        cut--;
    s[cut] = '\0';
}
