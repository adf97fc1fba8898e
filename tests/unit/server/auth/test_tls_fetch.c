/* Unit tests of tls_fetch, the slot between the loop and gRPC's handshakes:
 * nothing offered is UNCHANGED; an offered config is taken once; a newer
 * offer replaces one not yet taken; destroy frees one left over (the
 * sanitizer build checks the frees). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "tls_fetch.h"

static grpc_ssl_server_certificate_config *config(const char *cert)
{
    grpc_ssl_pem_key_cert_pair pair = {.private_key = "key", .cert_chain = cert};

    return grpc_ssl_server_certificate_config_create(NULL, &pair, 1);
}

static void test_tls_fetch_take_once(void **state)
{
    struct cs_tls_fetch f;
    grpc_ssl_server_certificate_config *got = NULL;
    grpc_ssl_server_certificate_config *a = config("a");

    cs_tls_fetch_init(&f);
    assert_int_equal(cs_tls_fetch_cb(&f, &got), GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_UNCHANGED);
    assert_null(got);
    cs_tls_fetch_offer(&f, a);
    assert_int_equal(cs_tls_fetch_cb(&f, &got), GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_NEW);
    assert_ptr_equal(got, a);
    got = NULL;
    assert_int_equal(cs_tls_fetch_cb(&f, &got), GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_UNCHANGED);
    assert_null(got);
    grpc_ssl_server_certificate_config_destroy(a); /* gRPC's, once taken */
    cs_tls_fetch_destroy(&f);
}

static void test_tls_fetch_newer_offer_wins(void **state)
{
    struct cs_tls_fetch f;
    grpc_ssl_server_certificate_config *got = NULL;
    grpc_ssl_server_certificate_config *c = config("c");

    cs_tls_fetch_init(&f);
    cs_tls_fetch_offer(&f, config("b"));
    cs_tls_fetch_offer(&f, c);
    assert_int_equal(cs_tls_fetch_cb(&f, &got), GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_NEW);
    assert_ptr_equal(got, c);
    grpc_ssl_server_certificate_config_destroy(c);
    /* One offered and never taken is freed with the slot. */
    cs_tls_fetch_offer(&f, config("d"));
    cs_tls_fetch_destroy(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tls_fetch_take_once),
        cmocka_unit_test(test_tls_fetch_newer_offer_wins),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
