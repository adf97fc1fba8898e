/* testfile: see testfile.h. */
#include "testfile.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

void cs_test_write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        fail_msg("cannot make %s", path);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}
