/* Unit tests of the store's pure logic. */
#include <cmocka.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

static void test_store_placeholder(void **state)
{
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_placeholder),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
