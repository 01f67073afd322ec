/* The one number parser: durations (units and compounds), sizes (k, M, G
 * as powers of 1024), rates (k = x1000), counts and plain numbers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/util.h"

static uint64_t dur(const char *s)
{
    uint64_t ns = 12345;
    assert_int_equal(yb_parse_duration(s, &ns), 0);
    return ns;
}

static void test_duration(void **st)
{
    (void)st;
    assert_int_equal(dur("10"), 10000000000ull);
    assert_int_equal(dur("1.5"), 1500000000ull);
    assert_int_equal(dur("250ms"), 250000000ull);
    assert_int_equal(dur("100us"), 100000ull);
    assert_int_equal(dur("100\xc2\xb5s"), 100000ull);
    assert_int_equal(dur("7ns"), 7ull);
    assert_int_equal(dur("2h"), 7200000000000ull);
    assert_int_equal(dur("1m30s"), 90000000000ull);
    assert_int_equal(dur("1h2m3s"), 3723000000000ull);
    assert_int_equal(dur("1s500ms"), 1500000000ull);
    assert_int_equal(dur("0.5m"), 30000000000ull);
    assert_int_equal(dur("0"), 0ull);
    uint64_t ns = 42;
    static const char *const BAD[] = {"", "s", "-1s", "+1s", " 1s", "1s ", "1x", "1m30",
                                      "1e3s", "0x10s", "inf", "nan", "1..5s", "1.s.", "ms",
                                      "1S", "99999999999h", "1 s"};
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        assert_int_equal(yb_parse_duration(BAD[i], &ns), -1);
        assert_int_equal(ns, 42);
    }
}

static void test_size(void **st)
{
    (void)st;
    uint64_t v = 0;
    assert_int_equal(yb_parse_size("123", 0, UINT64_MAX, &v), 0);
    assert_int_equal(v, 123);
    assert_int_equal(yb_parse_size("64k", 0, UINT64_MAX, &v), 0);
    assert_int_equal(v, 65536);
    assert_int_equal(yb_parse_size("64K", 0, UINT64_MAX, &v), 0);
    assert_int_equal(v, 65536);
    assert_int_equal(yb_parse_size("16M", 0, UINT64_MAX, &v), 0);
    assert_int_equal(v, 16ull << 20);
    assert_int_equal(yb_parse_size("4G", 0, 1ull << 32, &v), 0);
    assert_int_equal(v, 1ull << 32);
    assert_int_equal(yb_parse_size("5G", 0, 1ull << 32, &v), -1);
    assert_int_equal(yb_parse_size("3k", 4096, UINT64_MAX, &v), -1);
    assert_int_equal(yb_parse_size("", 0, UINT64_MAX, &v), -1);
    assert_int_equal(yb_parse_size("k", 0, UINT64_MAX, &v), -1);
    assert_int_equal(yb_parse_size("1.5M", 0, UINT64_MAX, &v), -1);
    assert_int_equal(yb_parse_size("-1", 0, UINT64_MAX, &v), -1);
    assert_int_equal(yb_parse_size("1T", 0, UINT64_MAX, &v), -1);
    assert_int_equal(yb_parse_size("99999999999999999999G", 0, UINT64_MAX, &v), -1);
}

static void test_rate(void **st)
{
    (void)st;
    double r = 0;
    assert_int_equal(yb_parse_rate("500", &r), 0);
    assert_true(r == 500);
    assert_int_equal(yb_parse_rate("2k", &r), 0);
    assert_true(r == 2000);
    assert_int_equal(yb_parse_rate("1.5K", &r), 0);
    assert_true(r == 1500);
    assert_int_equal(yb_parse_rate("0.5", &r), 0);
    assert_true(r == 0.5);
    static const char *const BAD[] = {"", "k", "2kk", "2M", "-1", "1e3", "inf", "1e9", "200000k"};
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++)
        assert_int_equal(yb_parse_rate(BAD[i], &r), -1);
    assert_int_equal(yb_parse_rate_n("3k/10s", 2, &r), 0);
    assert_true(r == 3000);
}

static void test_double_and_u64(void **st)
{
    (void)st;
    double d;
    assert_int_equal(yb_parse_double("2.5", &d), 0);
    assert_true(d == 2.5);
    assert_int_equal(yb_parse_double("1e3", &d), -1);
    assert_int_equal(yb_parse_double("0x1p3", &d), -1);
    assert_int_equal(yb_parse_double("-1", &d), -1);
    uint64_t v;
    assert_int_equal(yb_parse_u64("10", 1, 10, &v), 0);
    assert_int_equal(yb_parse_u64("11", 1, 10, &v), -1);
    assert_int_equal(yb_parse_u64(" 1", 0, 10, &v), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duration),
        cmocka_unit_test(test_size),
        cmocka_unit_test(test_rate),
        cmocka_unit_test(test_double_and_u64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
