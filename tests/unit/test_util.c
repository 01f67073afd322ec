/* The one number parser: durations (units and compounds), sizes (k, M, G
 * as powers of 1024), rates (k = x1000), counts and plain numbers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "util/errors.h"
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
    assert_int_equal(yb_parse_u64("\t1", 0, 10, &v), -1);
    assert_int_equal(yb_parse_u64("\f3", 0, 10, &v), -1);
    assert_int_equal(yb_parse_u64("\n1", 0, 10, &v), -1);
}

/* Reasons: printable, bounded, UTF-8 kept whole, grpc-message decoded. */
static void test_reasons(void **st)
{
    char b[YB_REASON_MAX], small[8], d[32];
    (void)st;
    yb_reason_fmt(b, sizeof b, "http %d", 409);
    assert_string_equal(b, "http 409");
    /* control characters: whitespace as a space, others as '?' */
    yb_reason_fmt(b, sizeof b, "a\tb\nc\x1b[31md\x7f");
    assert_string_equal(b, "a b c?[31md?");
    /* invalid UTF-8 byte -> '?'; a valid character kept */
    yb_reason_fmt(b, sizeof b, "x\xff\xc3\xa9y");
    assert_string_equal(b, "x?\xc3\xa9y");
    /* cut to fit, never inside a character */
    yb_reason_fmt(small, sizeof small, "abcdef\xc3\xa9");
    assert_string_equal(small, "abcdef");
    yb_reason_fmt(small, sizeof small, "abcdefghijk");
    assert_string_equal(small, "abcdefg");
    /* a long text is capped at YB_REASON_MAX - 1 */
    char big[400];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = 0;
    yb_reason_fmt(b, sizeof b, "%s", big);
    assert_int_equal(strlen(b), YB_REASON_MAX - 1);
    /* percent-decoding (grpc-message), with a malformed escape kept */
    b[0] = 0;
    const char *m = "bad%20value%3A%0A%C3%A9 100%";
    yb_reason_append_pct(b, sizeof b, (const uint8_t *)m, strlen(m));
    assert_string_equal(b, "bad value: \xc3\xa9 100%");
    snprintf(b, sizeof b, "grpc 3: ");
    yb_reason_append(b, sizeof b, (const uint8_t *)"x\0y", 3);
    assert_string_equal(b, "grpc 3: x");
    assert_string_equal(yb_reason_duration(d, sizeof d, 30 * 1000000000ull), "30s");
    assert_string_equal(yb_reason_duration(d, sizeof d, 1500000000ull), "1.5s");
    assert_string_equal(yb_reason_duration(d, sizeof d, 250000000ull), "250ms");
    assert_string_equal(yb_reason_duration(d, sizeof d, 150 * 1000000000ull), "2m30s");
    assert_string_equal(yb_reason_duration(d, sizeof d, 12000), "12us");
    assert_string_equal(yb_grpc_name(3), "INVALID_ARGUMENT");
    assert_null(yb_grpc_name(17));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duration),
        cmocka_unit_test(test_size),
        cmocka_unit_test(test_rate),
        cmocka_unit_test(test_double_and_u64),
        cmocka_unit_test(test_reasons),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
