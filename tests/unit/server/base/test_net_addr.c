/* Unit tests of net_addr's peer addresses: gRPC's peer strings of TCP
 * callers, of each family and in each spelling, to one address without the
 * port; anything else refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

#include "net_addr.h"

static void test_net_addr_of_peer(void **state)
{
    static const struct {
        const char *peer, *addr;
    } cases[] = {
        {"ipv4:127.0.0.1:40000", "ipv4:127.0.0.1"},
        {"ipv4:10.1.2.3:1", "ipv4:10.1.2.3"},
        {"ipv6:[::1]:40000", "ipv6:[::1]"},
        {"ipv6:%5B::1%5D:40000", "ipv6:[::1]"},
        {"ipv6:%5b0:0:0:0:0:0:0:1%5d:5", "ipv6:[::1]"},
        {"ipv6:[2001:DB8::0:1]:443", "ipv6:[2001:db8::1]"},
        {"ipv6:[::ffff:192.0.2.7]:80", "ipv4:192.0.2.7"},
        {"ipv6:[fe80::1%25eth0]:80", "ipv6:[fe80::1]"},
        {"ipv6:[fe80::1%eth0]:80", "ipv6:[fe80::1]"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char out[CS_NET_PEER_ADDR_MAX] = "";
        int rc = cs_net_addr_of_peer(cases[i].peer, out, sizeof(out));
        if (rc != 0 || strcmp(out, cases[i].addr) != 0)
            fail_msg("%s: expected %s, got %d \"%s\"", cases[i].peer, cases[i].addr, rc, out);
    }
}

static void test_net_addr_of_peer_refuses(void **state)
{
    static const char *const bad[] = {
        "fd:7",
        "unix:/run/csched/csched.sock",
        "ipv4:127.0.0.1",
        "ipv4:1.2.3:4",
        "ipv4::40000",
        "ipv6:::1:40000",
        "ipv6:[]:1",
        "ipv6:[::1",
        "ipv6:[zz::]:1",
        "insecure-tcp:ipv4:1.2.3.4:5",
        "",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char out[CS_NET_PEER_ADDR_MAX];
        if (cs_net_addr_of_peer(bad[i], out, sizeof(out)) != -EINVAL)
            fail_msg("%s: expected -EINVAL, got \"%s\"", bad[i], out);
    }
    /* Too small a buffer is refused, not cut. */
    char small[8];
    assert_int_equal(cs_net_addr_of_peer("ipv4:127.0.0.1:1", small, sizeof(small)), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_net_addr_of_peer),
        cmocka_unit_test(test_net_addr_of_peer_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
