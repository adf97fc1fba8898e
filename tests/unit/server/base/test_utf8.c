/* Unit tests of utf8: scrubbing what is not well-formed UTF-8 (a character
 * cut short, stray continuation bytes, overlong forms, surrogates, past
 * U+10FFFF) and clipping to a byte count without cutting a character. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "utf8.h"

static void assert_scrubbed(const char *in, const char *want)
{
    char buf[64];
    strcpy(buf, in);
    cs_utf8_scrub(buf);
    assert_string_equal(buf, want);
}

static void test_utf8_scrub_keeps_well_formed_text(void **state)
{
    assert_scrubbed("", "");
    assert_scrubbed("plain ascii", "plain ascii");
    assert_scrubbed("caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x8e\x89 \xf4\x8f\xbf\xbf",
                    "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x8e\x89 \xf4\x8f\xbf\xbf");
}

static void test_utf8_scrub_replaces_malformed_bytes(void **state)
{
    assert_scrubbed("a\xc3\"b", "a?\"b");             /* cut by "%.Ns" before a quote */
    assert_scrubbed("end\xe6\x97", "end??");          /* cut at the buffer's end */
    assert_scrubbed("\x80\xbf", "??");                /* continuation bytes alone */
    assert_scrubbed("\xc0\xaf\xe0\x80\xaf", "?????"); /* overlong '/' */
    assert_scrubbed("\xed\xa0\x80", "???");           /* a surrogate */
    assert_scrubbed("\xf4\x90\x80\x80\xff", "?????"); /* past U+10FFFF, and 0xff */
}

static void test_utf8_clip_never_cuts_a_character(void **state)
{
    char buf[32];
    strcpy(buf, "ab\xc3\xa9");
    cs_utf8_clip(buf, 3);
    assert_string_equal(buf, "ab");
    strcpy(buf, "ab\xc3\xa9");
    cs_utf8_clip(buf, 4);
    assert_string_equal(buf, "ab\xc3\xa9");
    strcpy(buf, "\xf0\x9f\x8e\x89x");
    cs_utf8_clip(buf, 3);
    assert_string_equal(buf, "");
    strcpy(buf, "abcdef");
    cs_utf8_clip(buf, 2);
    assert_string_equal(buf, "ab");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_utf8_scrub_keeps_well_formed_text),
        cmocka_unit_test(test_utf8_scrub_replaces_malformed_bytes),
        cmocka_unit_test(test_utf8_clip_never_cuts_a_character),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
