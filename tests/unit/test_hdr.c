/* HDR histogram: values, percentiles, .hgrm text and the V2 encoding,
 * checked against hand-computed numbers and against histograms encoded
 * by HdrHistogram's own Java and C implementations. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "stats/hdr.h"
#include "util/util.h"

/* ---- values and percentiles ------------------------------------------------ */

static void test_bad_args(void **st)
{
    (void)st;
    assert_null(yb_hdr_new(0, 1000, 3));
    assert_null(yb_hdr_new(1, 1000, 0));
    assert_null(yb_hdr_new(1, 1000, 6));
    assert_null(yb_hdr_new(10, 15, 3)); /* highest < 2 * lowest */
    assert_null(yb_hdr_new(1, INT64_MAX, 3));
}

static void test_empty(void **st)
{
    yb_hdr *h = yb_hdr_new_default();

    (void)st;
    assert_non_null(h);
    assert_int_equal(yb_hdr_count(h), 0);
    assert_int_equal(yb_hdr_min(h), 0);
    assert_int_equal(yb_hdr_max(h), 0);
    assert_int_equal(yb_hdr_percentile(h, 50.0), 0);
    assert_true(yb_hdr_mean(h) == 0.0);
    assert_true(yb_hdr_stddev(h) == 0.0);
    yb_hdr_free(h);
}

/* 1..1000 once each: below 2048 the default layout has one slot per
 * integer, so every statistic is exact and easy to compute by hand. */
static yb_hdr *one_to_thousand(void)
{
    yb_hdr *h = yb_hdr_new_default();

    assert_non_null(h);
    for (int64_t v = 1; v <= 1000; v++)
        yb_hdr_record(h, v);
    return h;
}

static void test_exact_range(void **st)
{
    yb_hdr *h = one_to_thousand();

    (void)st;
    assert_int_equal(yb_hdr_count(h), 1000);
    assert_int_equal(yb_hdr_min(h), 1);
    assert_int_equal(yb_hdr_max(h), 1000);
    /* ceil(p/100 * 1000)-th value */
    assert_int_equal(yb_hdr_percentile(h, 50.0), 500);
    assert_int_equal(yb_hdr_percentile(h, 90.0), 900);
    assert_int_equal(yb_hdr_percentile(h, 99.0), 990);
    /* 99.9% of 1000 is 999.0000000000001 in doubles: still the 999th */
    assert_int_equal(yb_hdr_percentile(h, 99.9), 999);
    assert_int_equal(yb_hdr_percentile(h, 100.0), 1000);
    assert_int_equal(yb_hdr_percentile(h, 0.0), 1);
    assert_int_equal(yb_hdr_percentile(h, 0.05), 1);
    assert_int_equal(yb_hdr_percentile(h, 0.15), 2);
    assert_int_equal(yb_hdr_percentile(h, 150.0), 1000); /* clamped to 100 */
    assert_true(fabs(yb_hdr_mean(h) - 500.5) < 1e-9);
    /* population stddev of 1..n = sqrt((n^2 - 1) / 12) */
    assert_true(fabs(yb_hdr_stddev(h) - sqrt((1000.0 * 1000.0 - 1.0) / 12.0)) < 1e-6);
    yb_hdr_free(h);
}

static void test_equivalent_ranges(void **st)
{
    yb_hdr *h = yb_hdr_new_default();

    (void)st;
    /* 10000 lies in bucket 3 (slots 8 wide): [10000, 10007]. */
    yb_hdr_record(h, 10000);
    assert_int_equal(yb_hdr_lowest_equivalent(h, 10003), 10000);
    assert_int_equal(yb_hdr_highest_equivalent(h, 10003), 10007);
    assert_int_equal(yb_hdr_min(h), 10000);
    assert_int_equal(yb_hdr_max(h), 10007);
    assert_int_equal(yb_hdr_percentile(h, 50.0), 10007);
    assert_int_equal(yb_hdr_percentile(h, 0.0), 10000);
    assert_true(yb_hdr_mean(h) == 10004.0); /* middle of the slot */
    /* 2047 is still exact, 2048 starts 2-wide slots. */
    assert_int_equal(yb_hdr_highest_equivalent(h, 2047), 2047);
    assert_int_equal(yb_hdr_highest_equivalent(h, 2048), 2049);
    yb_hdr_free(h);
}

/* HdrHistogram's own classic case: 10,000 x 1 ms and one 100 s outlier. */
static void test_classic_outlier(void **st)
{
    yb_hdr *h = yb_hdr_new_default();

    (void)st;
    yb_hdr_record_n(h, 1000, 10000);
    yb_hdr_record(h, 100000000);
    assert_int_equal(yb_hdr_count(h), 10001);
    assert_int_equal(yb_hdr_percentile(h, 30.0), 1000);
    assert_int_equal(yb_hdr_percentile(h, 99.0), 1000);
    assert_int_equal(yb_hdr_percentile(h, 99.99), 1000);
    /* 1e8 sits in bucket 16: slot [99942400, 100007935] */
    assert_int_equal(yb_hdr_percentile(h, 99.999), 100007935);
    assert_int_equal(yb_hdr_percentile(h, 100.0), 100007935);
    assert_int_equal(yb_hdr_max(h), 100007935);
    assert_int_equal(yb_hdr_min(h), 1000);
    yb_hdr_free(h);
}

/* The guarantee: any value comes back within 10^-digits of itself. */
static void test_precision_guarantee(void **st)
{
    uint64_t x = 88172645463325252u;

    (void)st;
    for (int digits = 1; digits <= 5; digits++) {
        yb_hdr *h = yb_hdr_new(1, INT64_C(3600000000), digits);
        double tol = pow(10.0, -digits);

        assert_non_null(h);
        for (int i = 0; i < 20000; i++) {
            int64_t v, lo, hi;

            x ^= x << 13; /* xorshift64: deterministic spread over the range */
            x ^= x >> 7;
            x ^= x << 17;
            v = (int64_t)(x % 3600000000u) + 1;
            v >>= (x >> 59); /* also small values */
            if (v < 1)
                v = 1;
            lo = yb_hdr_lowest_equivalent(h, v);
            hi = yb_hdr_highest_equivalent(h, v);
            assert_true(lo <= v && v <= hi);
            assert_true((double)(hi - lo) <= tol * (double)v + 1e-9 || hi == lo);
            /* A few through recording too (resetting a 5-digit histogram
             * clears megabytes, so not for all 20,000). */
            if (i < 50 && digits <= 4) {
                yb_hdr_reset(h);
                yb_hdr_record(h, v);
                assert_int_equal(yb_hdr_percentile(h, 50.0), hi);
                assert_true(fabs((double)yb_hdr_percentile(h, 50.0) - (double)v) <=
                            tol * (double)v);
            }
        }
        yb_hdr_free(h);
    }
}

static void test_clamping(void **st)
{
    yb_hdr *h = yb_hdr_new_default();

    (void)st;
    yb_hdr_record(h, 0);
    yb_hdr_record(h, -5);
    yb_hdr_record_n(h, INT64_C(5000000000), 3);
    yb_hdr_record(h, 42);
    yb_hdr_record_n(h, 42, 0);  /* no-op */
    yb_hdr_record_n(h, 42, -1); /* no-op */
    assert_int_equal(yb_hdr_count(h), 6);
    assert_int_equal(yb_hdr_clamped(h), 5);
    assert_int_equal(yb_hdr_min(h), 1);
    assert_int_equal(yb_hdr_max(h), yb_hdr_highest_equivalent(h, INT64_C(3600000000)));
    assert_int_equal(yb_hdr_percentile(h, 30.0), 1);
    assert_int_equal(yb_hdr_percentile(h, 50.0), 42);
    yb_hdr_reset(h);
    assert_int_equal(yb_hdr_count(h), 0);
    assert_int_equal(yb_hdr_clamped(h), 0);
    yb_hdr_free(h);
}

static void test_merge(void **st)
{
    yb_hdr *a = yb_hdr_new_default(), *b = yb_hdr_new_default();
    yb_hdr *other = yb_hdr_new(1, 1000000, 2);

    (void)st;
    for (int64_t v = 1; v <= 500; v++)
        yb_hdr_record(a, v);
    for (int64_t v = 501; v <= 1000; v++)
        yb_hdr_record(b, v);
    yb_hdr_record(b, 0); /* clamp travels with the merge */
    assert_int_equal(yb_hdr_add(a, b), 0);
    assert_int_equal(yb_hdr_count(a), 1001);
    assert_int_equal(yb_hdr_clamped(a), 1);
    assert_int_equal(yb_hdr_min(a), 1);
    assert_int_equal(yb_hdr_max(a), 1000);
    assert_int_equal(yb_hdr_percentile(a, 50.0), 500);
    assert_int_equal(yb_hdr_count(b), 501); /* src untouched */

    /* A different layout merges value by value. */
    yb_hdr_record_n(other, 77, 9);
    assert_int_equal(yb_hdr_add(a, other), 0);
    assert_int_equal(yb_hdr_count(a), 1010);
    assert_int_equal(yb_hdr_add(NULL, a), -1);

    /* Only the slots from src's least to its greatest value are added:
     * values at both ends of the range (and a clamp) still count. */
    yb_hdr *c = yb_hdr_new_default(), *d = yb_hdr_new_default();
    yb_hdr_record(c, 1);
    yb_hdr_record(c, INT64_C(3600000000));
    yb_hdr_record(c, INT64_C(9000000000)); /* clamped to the highest */
    yb_hdr_record(d, 5000);
    assert_int_equal(yb_hdr_add(d, c), 0);
    assert_int_equal(yb_hdr_count(d), 4);
    assert_int_equal(yb_hdr_clamped(d), 1);
    assert_int_equal(yb_hdr_min(d), 1);
    assert_true(yb_hdr_max(d) >= INT64_C(3600000000));
    assert_int_equal(yb_hdr_percentile(d, 25.0), 1);
    assert_true(yb_hdr_percentile(d, 50.0) >= 4990 && yb_hdr_percentile(d, 50.0) <= 5010);
    assert_true(yb_hdr_percentile(d, 100.0) >= INT64_C(3600000000));
    yb_hdr_free(c);
    yb_hdr_free(d);
    yb_hdr_free(a);
    yb_hdr_free(b);
    yb_hdr_free(other);
}

/* ---- .hgrm ---------------------------------------------------------------- */

static char *hgrm_text(const yb_hdr *h, double scale)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    assert_int_equal(yb_hdr_write_hgrm(h, f, scale), 0);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static void test_hgrm_parse_back(void **st)
{
    yb_hdr *h = one_to_thousand();
    char *text = hgrm_text(h, 1.0), *line, *save = NULL;
    double expect_level[] = {0, 10, 20, 30, 40, 50, 55, 60, 65, 70, 75};
    double prev_pct = -1.0, mean = 0, sd = 0, max = 0;
    long long total = -1, buckets = 0, subs = 0;
    int row = 0, saw_last = 0;

    (void)st;
    assert_non_null(text);
    assert_memory_equal(text,
                        "       Value     Percentile TotalCount 1/(1-Percentile)\n\n", 57);
    for (line = strtok_r(text + 57, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        double v, pct, inv;
        long long cnt;

        if (line[0] == '#') {
            if (sscanf(line, "#[Mean    = %lf, StdDeviation   = %lf]", &mean, &sd) == 2)
                continue;
            if (sscanf(line, "#[Max     = %lf, Total count    = %lld]", &max, &total) == 2)
                continue;
            assert_int_equal(sscanf(line, "#[Buckets = %lld, SubBuckets     = %lld]", &buckets, &subs),
                             2);
            continue;
        }
        assert_false(saw_last);
        if (sscanf(line, "%lf %lf %lld %lf", &v, &pct, &cnt, &inv) == 4) {
            assert_true(pct > prev_pct);
            assert_true(fabs(inv - 1.0 / (1.0 - pct)) < 0.01);
            if ((size_t)row < sizeof(expect_level) / sizeof(expect_level[0]))
                assert_true(fabs(pct * 100.0 - expect_level[row]) < 1e-9);
            /* value = first value whose cumulative share reaches the level */
            assert_true(v / 1000.0 >= pct - 1e-9);
            assert_true((v - 1.0) / 1000.0 < pct + 1e-9);
            assert_int_equal((long long)v, cnt); /* 1..1000: count up to v is v */
            /* the fixed-width layout of HdrHistogram */
            assert_int_equal(strlen(line), 12 + 1 + 14 + 1 + 10 + 1 + 14);
        } else {
            assert_int_equal(sscanf(line, "%lf %lf %lld", &v, &pct, &cnt), 3);
            assert_true(pct == 1.0);
            assert_true(v == 1000.0);
            assert_int_equal(cnt, 1000);
            saw_last = 1;
        }
        prev_pct = pct;
        row++;
    }
    assert_true(saw_last);
    assert_true(row > 40); /* 5 ticks per half distance down to 1/1000 */
    assert_true(fabs(mean - 500.5) < 1e-3);
    assert_true(fabs(sd - 288.675) < 1e-3);
    assert_true(max == 1000.0);
    assert_int_equal(total, 1000);
    assert_int_equal(buckets, 22);
    assert_int_equal(subs, 2048);
    free(text);
    yb_hdr_free(h);
}

static void test_hgrm_exact_small(void **st)
{
    /* Two values, scaled µs -> ms: every line computed by hand. */
    yb_hdr *h = yb_hdr_new_default();
    char *text;
    const char *want =
        "       Value     Percentile TotalCount 1/(1-Percentile)\n"
        "\n"
        "       1.000 0.000000000000          1           1.00\n"
        "       1.000 0.100000000000          1           1.11\n"
        "       1.000 0.200000000000          1           1.25\n"
        "       1.000 0.300000000000          1           1.43\n"
        "       1.000 0.400000000000          1           1.67\n"
        "       1.000 0.500000000000          1           2.00\n"
        "       2.000 0.550000000000          2           2.22\n"
        "       2.000 1.000000000000          2\n"
        "#[Mean    =        1.500, StdDeviation   =        0.500]\n"
        "#[Max     =        2.000, Total count    =            2]\n"
        "#[Buckets =           22, SubBuckets     =         2048]\n";

    (void)st;
    yb_hdr_record(h, 1000);
    yb_hdr_record(h, 2000);
    text = hgrm_text(h, 1000.0);
    assert_string_equal(text, want);
    free(text);
    yb_hdr_free(h);

    h = yb_hdr_new_default();
    text = hgrm_text(h, 1.0);
    assert_string_equal(text, "       Value     Percentile TotalCount 1/(1-Percentile)\n\n"
                              "#[Mean    =        0.000, StdDeviation   =        0.000]\n"
                              "#[Max     =        0.000, Total count    =            0]\n"
                              "#[Buckets =           22, SubBuckets     =         2048]\n");
    free(text);
    assert_int_equal(yb_hdr_write_hgrm(h, NULL, 1.0), -1);
    yb_hdr_free(h);
}

/* ---- V2 encoding ----------------------------------------------------------- */

static uint8_t *b64(const char *s, size_t *len)
{
    uint8_t *out = NULL;

    assert_int_equal(yb_base64_decode(s, strlen(s), &out, len), 0);
    return out;
}

/* The uncompressed V2 bytes inside a compressed encoding. */
static uint8_t *inflated(const uint8_t *buf, size_t len, size_t *outlen)
{
    uLongf cap = 1 << 20;
    uint8_t *out = malloc(cap);
    uint32_t clen;

    assert_non_null(out);
    assert_true(len >= 8);
    clen = (uint32_t)buf[4] << 24 | (uint32_t)buf[5] << 16 | (uint32_t)buf[6] << 8 | buf[7];
    assert_int_equal(uncompress(out, &cap, buf + 8, clen), Z_OK);
    *outlen = cap;
    return out;
}

typedef struct {
    const char *b64;
    int64_t lowest, highest;
    int64_t values[3], counts[3];
} foreign;

/* Encoded by HdrHistogram implementations (Java, C, and ports checked
 * against them); each must decode to exactly these values and re-encode
 * to the same uncompressed bytes.  (A widely copied "standard test
 * histogram" sample is not here: its payload-length field counts the
 * 40-byte header too, and HdrHistogram's Java decoder rejects it, as
 * ours does.) */
static const foreign FOREIGN[] = {
    {"HISTFAAAACV4nJNpmSzMwMDAwQABzFCaEUrp2H+AsI4zMh1lZEpkAgBdIQSk", 1, 300, {100, 200, 250}, {1, 1, 1}},
    {"HISTFAAAACB4nJNpmSzMwMDAzAABMJoRQnEw2H+AsP7LMwEARZgDpQ==", 1, 2048, {2048, 0, 0}, {1, 0, 0}},
    {"HISTFAAAACF4nJNpmSzMwMDAzAABMJoRTM6Y1mD/ASLwN5oJAFuQBYU=", 1, 10000000, {28656, 0, 0}, {1, 0, 0}},
    {"HISTFAAAACh4nJNpmSzMwMDAyQABzFCaEUzOmNZg/wEisL2Kaasc00ImJgCC8Qbe", 1, 10000000,
     {108288, 407552, 444928}, {1, 1, 1}},
};

static void test_decode_foreign(void **st)
{
    (void)st;
    for (size_t k = 0; k < sizeof(FOREIGN) / sizeof(FOREIGN[0]); k++) {
        const foreign *fx = &FOREIGN[k];
        size_t len, enclen, raw1len, raw2len;
        uint8_t *buf = b64(fx->b64, &len), *enc = NULL, *raw1, *raw2;
        yb_hdr *h = yb_hdr_decode_compressed(buf, len);
        yb_hdr *ref = yb_hdr_new(fx->lowest, fx->highest, 3);
        int64_t total = 0;

        assert_non_null(h);
        assert_non_null(ref);
        for (int i = 0; i < 3; i++) {
            yb_hdr_record_n(ref, fx->values[i], fx->counts[i]);
            total += fx->counts[i];
        }
        assert_int_equal(yb_hdr_count(h), total);
        assert_int_equal(yb_hdr_max(h), yb_hdr_max(ref));
        assert_int_equal(yb_hdr_min(h), yb_hdr_min(ref));
        for (double p = 0.0; p <= 100.0; p += 0.5)
            assert_int_equal(yb_hdr_percentile(h, p), yb_hdr_percentile(ref, p));

        /* Our encoding of the same data carries the same V2 bytes. */
        assert_int_equal(yb_hdr_encode_compressed(ref, &enc, &enclen), 0);
        assert_memory_equal(enc, buf, 4); /* compressed cookie */
        raw1 = inflated(buf, len, &raw1len);
        raw2 = inflated(enc, enclen, &raw2len);
        assert_int_equal(raw1len, raw2len);
        assert_memory_equal(raw1, raw2, raw1len);
        free(raw1);
        free(raw2);
        free(enc);
        free(buf);
        yb_hdr_free(h);
        yb_hdr_free(ref);
    }
}

static yb_hdr *spread(void)
{
    yb_hdr *h = yb_hdr_new_default();

    for (int64_t v = 1; v < INT64_C(3600000000); v = v * 3 / 2 + 1)
        yb_hdr_record_n(h, v, v % 7 + 1);
    yb_hdr_record_n(h, 1234, 1000000);
    return h;
}

static void test_round_trip(void **st)
{
    yb_hdr *h = spread(), *e = yb_hdr_new_default(), *d;
    uint8_t *buf = NULL, *buf2 = NULL;
    size_t len = 0, len2 = 0;

    (void)st;
    assert_int_equal(yb_hdr_encode_compressed(h, &buf, &len), 0);
    d = yb_hdr_decode_compressed(buf, len);
    assert_non_null(d);
    assert_int_equal(yb_hdr_count(d), yb_hdr_count(h));
    assert_int_equal(yb_hdr_min(d), yb_hdr_min(h));
    assert_int_equal(yb_hdr_max(d), yb_hdr_max(h));
    assert_true(yb_hdr_mean(d) == yb_hdr_mean(h));
    for (double p = 0.0; p <= 100.0; p += 0.125)
        assert_int_equal(yb_hdr_percentile(d, p), yb_hdr_percentile(h, p));
    /* Equal counts everywhere: the re-encoding is byte-identical. */
    assert_int_equal(yb_hdr_encode_compressed(d, &buf2, &len2), 0);
    assert_int_equal(len, len2);
    assert_memory_equal(buf, buf2, len);
    free(buf);
    free(buf2);
    yb_hdr_free(d);

    /* Empty histogram */
    assert_int_equal(yb_hdr_encode_compressed(e, &buf, &len), 0);
    d = yb_hdr_decode_compressed(buf, len);
    assert_non_null(d);
    assert_int_equal(yb_hdr_count(d), 0);
    free(buf);
    yb_hdr_free(d);
    yb_hdr_free(e);
    yb_hdr_free(h);
}

/* The .hgrm text of h, malloc'd. */
static char *hgrm_of(const yb_hdr *h)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    assert_non_null(f);
    assert_int_equal(yb_hdr_write_hgrm(h, f, 1000.0), 0);
    fclose(f);
    return text;
}

/* a and b hold the same counts: every query and the encoding agree. */
static void assert_same_hist(const yb_hdr *a, const yb_hdr *b)
{
    uint8_t *ea, *eb;
    size_t la, lb;
    char *ta = hgrm_of(a), *tb = hgrm_of(b);

    assert_int_equal(yb_hdr_count(a), yb_hdr_count(b));
    assert_int_equal(yb_hdr_min(a), yb_hdr_min(b));
    assert_int_equal(yb_hdr_max(a), yb_hdr_max(b));
    assert_true(yb_hdr_mean(a) == yb_hdr_mean(b));
    assert_true(yb_hdr_stddev(a) == yb_hdr_stddev(b));
    for (double p = 0.0; p <= 100.0; p += 0.5)
        assert_int_equal(yb_hdr_percentile(a, p), yb_hdr_percentile(b, p));
    assert_string_equal(ta, tb);
    assert_int_equal(yb_hdr_encode_compressed(a, &ea, &la), 0);
    assert_int_equal(yb_hdr_encode_compressed(b, &eb, &lb), 0);
    assert_int_equal(la, lb);
    assert_memory_equal(ea, eb, la);
    free(ea);
    free(eb);
    free(ta);
    free(tb);
}

/* A histogram keeps its first distinct slots apart from its counts array
 * (the first 8 in its struct, up to 128 on the heap) and moves them to the
 * array when there are more: with 1 to 300 distinct slots (in no order,
 * some recorded several times), it answers exactly as the same counts
 * decoded into the array do, merges into an empty and a full histogram
 * alike, and after a reset records afresh (kept slots on the heap are
 * freed with it: a leak under the sanitizer build otherwise). */
static void test_few_slots(void **st)
{
    static const int64_t first[] = {3000000, 17, 5000, 123456, 1,      2047,   2048, 999999,
                                    42,      17, 4096, 65536,  300000, 3,      8191, 77777,
                                    1000,    5,  2500, 3600000000};
    static const size_t sizes[] = {1,  2,  3,  4,  5,   6,   7,   8,   9,   10,  11, 12,
                                   13, 14, 15, 16, 17,  18,  19,  20,  31,  32,  33, 34,
                                   127, 128, 129, 130, 200, 300};
    int64_t vals[300];
    uint64_t x = 88172645463325252ull;
    (void)st;
    for (size_t i = 0; i < 300; i++) {
        if (i < sizeof first / sizeof first[0]) {
            vals[i] = first[i];
            continue;
        }
        x ^= x << 13; /* xorshift: spread over the range, repeats now and then */
        x ^= x >> 7;
        x ^= x << 17;
        vals[i] = (int64_t)(x % 20000000u) + 1;
    }
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        yb_hdr *h = yb_hdr_new_default(), *full = one_to_thousand(), *d, *m;
        uint8_t *buf;
        size_t len;

        assert_non_null(h);
        for (int pass = 0; pass < 2; pass++) {
            for (size_t i = 0; i < n; i++)
                yb_hdr_record_n(h, vals[i], (int64_t)(i % 3) + 1);
            assert_int_equal(yb_hdr_encode_compressed(h, &buf, &len), 0);
            d = yb_hdr_decode_compressed(buf, len); /* decoded: in the array */
            free(buf);
            assert_non_null(d);
            assert_same_hist(h, d);
            m = yb_hdr_new_default();
            assert_non_null(m);
            assert_int_equal(yb_hdr_add(m, h), 0);
            assert_same_hist(m, d);
            /* and a histogram with kept slots into one with kept slots */
            assert_int_equal(yb_hdr_add(m, h), 0);
            assert_int_equal(yb_hdr_count(m), 2 * yb_hdr_count(d));
            assert_int_equal(yb_hdr_percentile(m, 50.0), yb_hdr_percentile(d, 50.0));
            assert_int_equal(yb_hdr_percentile(m, 99.0), yb_hdr_percentile(d, 99.0));
            yb_hdr_free(m);
            /* into a histogram that holds more: the same as adding d */
            m = one_to_thousand();
            assert_int_equal(yb_hdr_add(m, h), 0);
            assert_int_equal(yb_hdr_add(full, d), 0);
            assert_same_hist(m, full);
            yb_hdr_free(m);
            yb_hdr_free(full);
            full = one_to_thousand();
            yb_hdr_free(d);
            /* past the kept slots (128 distinct ones) the counts array
             * holds them (vals repeats some) */
            int in_counts = yb_hdr_uses_counts(h);
            assert_int_equal(in_counts, n >= 200 ? 1 : n <= 128 ? 0 : in_counts);
            yb_hdr_reset(h); /* the second pass records into a reset one */
            assert_int_equal(yb_hdr_count(h), 0);
            assert_int_equal(yb_hdr_percentile(h, 50.0), 0);
            /* and one that had moved to its counts array stays there (a
             * per-second histogram would otherwise pay the kept slots'
             * insertions again every second) */
            assert_int_equal(yb_hdr_uses_counts(h), in_counts);
        }
        yb_hdr_free(full);
        yb_hdr_free(h);
    }
}

/* yb_hdr_record takes a kept slot's common cases inline (the slot found
 * last first, without a search): recording one value at a time into a
 * histogram with kept slots answers exactly as the same values recorded
 * into one that holds its counts in the array, through runs of one value,
 * alternations, new slots before and after the last one, values out of
 * range, the move past the kept slots and a reset. */
static void test_record_one_by_one(void **st)
{
    static const int64_t pattern[] = {1, 1, 1, 7, 1, 7, 7, 3, 1, 3, 0, 5000, 5000, 2,
                                      4000000000000, 1, 9, 8, 9, 8, 1, 1, 2};
    yb_hdr *empty = yb_hdr_new_default(), *a = yb_hdr_new_default(), *ref;
    uint8_t *buf;
    size_t len;
    uint64_t x = 2463534242u;
    (void)st;

    assert_non_null(empty);
    assert_non_null(a);
    assert_int_equal(yb_hdr_encode_compressed(empty, &buf, &len), 0);
    ref = yb_hdr_decode_compressed(buf, len); /* decoded: in the array */
    free(buf);
    assert_non_null(ref);
    assert_true(yb_hdr_uses_counts(ref));
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < sizeof pattern / sizeof pattern[0]; i++) {
            yb_hdr_record(a, pattern[i]);
            yb_hdr_record(ref, pattern[i]);
            assert_false(yb_hdr_uses_counts(a));
            assert_same_hist(a, ref);
        }
        /* runs of a few values at a time, over more than the kept slots */
        for (int i = 0; i < 3000; i++) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            int64_t v = (int64_t)(x % (i < 1500 ? 40u : 400000u)) + 1;
            for (int k = 0; k < (int)(x >> 20) % 4; k++) {
                yb_hdr_record(a, v);
                yb_hdr_record(ref, v);
            }
            if (i % 500 == 0)
                assert_same_hist(a, ref);
        }
        assert_true(yb_hdr_uses_counts(a));
        assert_same_hist(a, ref);
        yb_hdr_free(a); /* and afresh: a new one, ref reset */
        a = yb_hdr_new_default();
        assert_non_null(a);
        yb_hdr_reset(ref);
    }
    /* a reset histogram with kept slots: the slot found last is gone */
    yb_hdr_record(a, 5);
    yb_hdr_record(a, 6);
    yb_hdr_reset(a);
    yb_hdr_record(a, 6);
    yb_hdr_record(ref, 6);
    assert_same_hist(a, ref);
    yb_hdr_free(ref);
    yb_hdr_free(a);
    yb_hdr_free(empty);
}

static void test_decode_truncated_and_corrupt(void **st)
{
    yb_hdr *h = spread(), *d;
    uint8_t *buf = NULL, *bad;
    size_t len = 0;

    (void)st;
    assert_int_equal(yb_hdr_encode_compressed(h, &buf, &len), 0);
    assert_null(yb_hdr_decode_compressed(NULL, 10));
    /* Every strict prefix is rejected; each copy is exactly len bytes of
     * heap so valgrind/ASan catch any read past it. */
    for (size_t n = 0; n < len; n++) {
        bad = malloc(n ? n : 1);
        memcpy(bad, buf, n);
        assert_null(yb_hdr_decode_compressed(bad, n));
        free(bad);
    }
    /* Every byte flipped: never crashes; if the header is hit, NULL. */
    bad = malloc(len);
    for (size_t i = 0; i < len; i++) {
        memcpy(bad, buf, len);
        bad[i] ^= 0xff;
        d = yb_hdr_decode_compressed(bad, len);
        if (i < 8)
            assert_null(d);
        yb_hdr_free(d);
    }
    free(bad);
    free(buf);
    yb_hdr_free(h);
}

/* Builds a compressed buffer around a hand-made V2 body. */
static uint8_t *wrap(const uint8_t *raw, size_t rawlen, size_t *len)
{
    uLongf clen = compressBound((uLong)rawlen);
    uint8_t *out = malloc(8 + clen);

    assert_int_equal(compress2(out + 8, &clen, raw, (uLong)rawlen, 6), Z_OK);
    out[0] = 0x1c, out[1] = 0x84, out[2] = 0x93, out[3] = 0x14;
    out[4] = (uint8_t)(clen >> 24), out[5] = (uint8_t)(clen >> 16);
    out[6] = (uint8_t)(clen >> 8), out[7] = (uint8_t)clen;
    *len = 8 + clen;
    return out;
}

static size_t v2_header(uint8_t *p, uint32_t plen, uint32_t digits, uint64_t lo, uint64_t hi)
{
    const uint8_t ratio[8] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0};
    uint32_t w[4] = {0x1c849313u, plen, 0, digits};

    for (int i = 0; i < 4; i++)
        for (int b = 0; b < 4; b++)
            p[i * 4 + b] = (uint8_t)(w[i] >> (24 - 8 * b));
    for (int b = 0; b < 8; b++) {
        p[16 + b] = (uint8_t)(lo >> (56 - 8 * b));
        p[24 + b] = (uint8_t)(hi >> (56 - 8 * b));
    }
    memcpy(p + 32, ratio, 8);
    return 40;
}

static void test_decode_hostile(void **st)
{
    static const struct {
        uint32_t digits;
        uint64_t lo, hi;
        uint8_t body[24];
        size_t bodylen;
        int ok;
    } cases[] = {
        /* sanity: one count of 5 at slot 3 */
        {3, 1, 1000, {0x05, 0x0a}, 2, 1},
        /* a zero run of 2^24 slots in a 32-slot array */
        {1, 1, 2, {0xff, 0xff, 0xff, 0x0f}, 4, 0},
        /* INT64_MIN as a run length */
        {3, 1, 1000, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 9, 0},
        /* counts summing past INT64_MAX */
        {3, 1, 1000, {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                      0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 18, 0},
        /* unterminated LEB128 word */
        {3, 1, 1000, {0x80, 0x80}, 2, 0},
        /* bad digits, lowest 0, highest < 2 * lowest, highest huge */
        {9, 1, 1000, {0x02}, 1, 0},
        {3, 0, 1000, {0x02}, 1, 0},
        {3, 100, 150, {0x02}, 1, 0},
        {3, 1, UINT64_MAX, {0x02}, 1, 0},
        /* a layout too large to allocate from untrusted input */
        {5, 1, (UINT64_C(1) << 61), {0x02}, 1, 0},
    };

    (void)st;
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        uint8_t raw[64];
        size_t n = v2_header(raw, (uint32_t)cases[k].bodylen, cases[k].digits, cases[k].lo,
                             cases[k].hi);
        size_t len;
        uint8_t *buf;
        yb_hdr *h;

        memcpy(raw + n, cases[k].body, cases[k].bodylen);
        buf = wrap(raw, n + cases[k].bodylen, &len);
        h = yb_hdr_decode_compressed(buf, len);
        if (cases[k].ok) {
            assert_non_null(h);
            assert_int_equal(yb_hdr_count(h), 5);
            assert_int_equal(yb_hdr_max(h), 3);
        } else {
            assert_null(h);
        }
        yb_hdr_free(h);
        free(buf);
    }
    /* A payload length larger than what was compressed. */
    {
        uint8_t raw[64], *buf;
        size_t n = v2_header(raw, 50, 3, 1, 1000), len;

        raw[n] = 0x02;
        buf = wrap(raw, n + 1, &len);
        assert_null(yb_hdr_decode_compressed(buf, len));
        free(buf);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_args),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_exact_range),
        cmocka_unit_test(test_equivalent_ranges),
        cmocka_unit_test(test_classic_outlier),
        cmocka_unit_test(test_precision_guarantee),
        cmocka_unit_test(test_clamping),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_hgrm_parse_back),
        cmocka_unit_test(test_hgrm_exact_small),
        cmocka_unit_test(test_decode_foreign),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_few_slots),
        cmocka_unit_test(test_record_one_by_one),
        cmocka_unit_test(test_decode_truncated_and_corrupt),
        cmocka_unit_test(test_decode_hostile),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
