/* Routing by recorded authority: which target a record's host[:port]
 * names (name, alias, URL address; default ports by scheme; case), and
 * an address claimed by two targets refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "engine/route.h"

static char err[1024];

static void load(const char *text, yb_inventory *inv)
{
    if (yb_inventory_parse("inv.yaml", (const uint8_t *)text, strlen(text), inv, err,
                           sizeof err) < 0)
        fail_msg("inventory refused: %s", err);
}

static const char *const FLEET = "targets:\n"
                                 "  - name: sw1\n"
                                 "    restconf: https://192.0.2.1\n"
                                 "    gnmi: grpcs://192.0.2.1:9339\n"
                                 "  - name: sw2\n"
                                 "    restconf: http://[2001:db8::2]:8443\n"
                                 "    aliases: [Leaf2.Lab, \"10.0.0.2:830\"]\n"
                                 "  - name: sw3\n"
                                 "    gnmi: grpc://192.0.2.3\n";

static void test_find(void **st)
{
    (void)st;
    yb_inventory inv;
    load(FLEET, &inv);
    yb_authmap *m = yb_authmap_new(&inv, "inv.yaml", err, sizeof err);
    assert_non_null(m);
    /* URL addresses, the default port from the record's scheme */
    assert_int_equal(yb_authmap_find(m, "https", "192.0.2.1:443"), 0);
    assert_int_equal(yb_authmap_find(m, "https", "192.0.2.1"), 0);
    assert_int_equal(yb_authmap_find(m, "http", "192.0.2.1:9339"), 0);
    assert_int_equal(yb_authmap_find(m, "http", "192.0.2.1"), -1); /* port 80: none */
    assert_int_equal(yb_authmap_find(m, "http", "[2001:DB8::2]:8443"), 1);
    assert_int_equal(yb_authmap_find(m, "http", "192.0.2.3:8080"), 2);
    /* names and host-only aliases on any port, in any case */
    assert_int_equal(yb_authmap_find(m, "https", "SW3"), 2);
    assert_int_equal(yb_authmap_find(m, "https", "leaf2.lab:8443"), 1);
    assert_int_equal(yb_authmap_find(m, "http", "leaf2.lab"), 1);
    /* an alias with a port names that port only */
    assert_int_equal(yb_authmap_find(m, "http", "10.0.0.2:830"), 1);
    assert_int_equal(yb_authmap_find(m, "http", "10.0.0.2:831"), -1);
    assert_int_equal(yb_authmap_find(m, "http", "10.0.0.2"), -1);
    /* not an authority */
    assert_int_equal(yb_authmap_find(m, "http", ""), -1);
    assert_int_equal(yb_authmap_find(m, "http", "sw1:"), -1);
    assert_int_equal(yb_authmap_find(m, "http", "sw1:99999"), -1);
    assert_int_equal(yb_authmap_find(m, "http", "[::1"), -1);
    yb_authmap_free(m);
    yb_inventory_free(&inv);
}

static void test_claimed_twice(void **st)
{
    (void)st;
    yb_inventory inv;
    load("targets:\n"
         "  - name: sw1\n"
         "    restconf: http://192.0.2.1:8080\n"
         "  - name: sw2\n"
         "    gnmi: grpc://192.0.2.1\n",
         &inv);
    assert_null(yb_authmap_new(&inv, "inv.yaml", err, sizeof err));
    assert_string_equal(err, "inv.yaml:4: target 'sw2': '192.0.2.1:8080' also names target "
                             "'sw1' (line 2): --route authority needs each name, alias and "
                             "URL address to name one target");
    yb_inventory_free(&inv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_claimed_twice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
