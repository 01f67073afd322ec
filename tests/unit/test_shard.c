/* Shards (engine/shard.h) and the wall-clock parser of --start-at
 * (util/walltime.h): the division's arithmetic, and the plan's shares of
 * N shards, each with its own threads, adding up to one run exactly:
 * every global request index, record, session and -n request once; then
 * the time parser on good and hostile text. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "engine/plan.h"
#include "engine/shard.h"
#include "util/walltime.h"

#define NS INT64_C(1000000000)

static void test_parse(void **st)
{
    (void)st;
    yb_shard s;
    assert_int_equal(yb_shard_parse("0/3", &s), 0);
    assert_int_equal(s.index, 0);
    assert_int_equal(s.count, 3);
    assert_int_equal(yb_shard_parse("1023/1024", &s), 0);
    assert_int_equal(s.index, 1023);
    assert_int_equal(yb_shard_parse("0/1", &s), 0);
    assert_false(yb_shard_divides(&s));
    static const char *const BAD[] = {"3/3", "0/0", "1/0", "0/1025", "-1/3", "+1/3", "1/+3",
                                      " 1/3", "1/3 ", "1/", "/3", "1", "", "1/3/4", "a/3",
                                      "1.0/3", "0x1/3", "99999999999999999999/3", "1/3x",
                                      "\f3/4", "\t1/3", "1/\n3"};
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++)
        assert_int_equal(yb_shard_parse(BAD[i], &s), -1);
    assert_int_equal(yb_shard_parse(NULL, &s), -1);
    assert_int_equal(yb_shard_parse_index("2", 3, &s), 0);
    assert_int_equal(s.index, 2);
    assert_int_equal(s.count, 3);
    assert_int_equal(yb_shard_parse_index("3", 3, &s), -1);
    assert_int_equal(yb_shard_parse_index("", 3, &s), -1);
    assert_int_equal(yb_shard_parse_index("-0", 3, &s), -1);
    assert_int_equal(yb_shard_parse_index("1", 0, &s), -1);
    assert_int_equal(yb_shard_parse_index(NULL, 3, &s), -1);
}

/* The parts of N shards add up to the total, each item in one shard. */
static void test_parts_add_up(void **st)
{
    (void)st;
    for (unsigned n = 1; n <= 7; n++)
        for (uint64_t total = 0; total < 40; total++) {
            uint64_t sum = 0;
            for (unsigned i = 0; i < n; i++) {
                yb_shard s = {i, n};
                uint64_t taken = 0;
                for (uint64_t k = 0; k < total; k++)
                    taken += (uint64_t)yb_shard_takes(&s, k);
                assert_int_equal(yb_shard_part(&s, total), taken);
                sum += taken;
            }
            assert_int_equal(sum, total);
        }
    yb_shard whole = {0, 0};
    assert_int_equal(yb_shard_part(&whole, 17), 17);
    assert_true(yb_shard_takes(&whole, 5));
    unsigned w, ws;
    yb_shard_lane(&whole, 2, 4, &w, &ws);
    assert_int_equal(w, 2);
    assert_int_equal(ws, 4);
    yb_shard s = {1, 3};
    yb_shard_lane(&s, 2, 4, &w, &ws);
    assert_int_equal(w, 7);
    assert_int_equal(ws, 12);
}

static yb_engine_opts opts(unsigned threads, unsigned concurrency, uint64_t requests)
{
    yb_engine_opts o;
    memset(&o, 0, sizeof o);
    o.threads = threads;
    o.concurrency = concurrency;
    o.requests = requests;
    o.policy = YB_SESS_REUSE;
    o.max_backlog = 1000;
    return o;
}

/* N shards, shard i on threads[i] threads: every lane's global request
 * indexes (k * workers + worker, for its budget) and records (j mod
 * workers = worker) together are 0 .. R - 1 once each, as in one run;
 * the sessions add up to -c; shard i's items are those k mod N = i. */
static void check_shards(unsigned n, const unsigned *threads, unsigned c, uint64_t r)
{
    unsigned char *seen = calloc(r, 1), *rec = calloc(r, 1);
    assert_non_null(seen);
    assert_non_null(rec);
    unsigned sessions = 0;
    for (unsigned i = 0; i < n; i++) {
        yb_engine_opts o = opts(threads[i], c, r);
        o.shard = (yb_shard){i, n};
        yb_plan p;
        yb_plan_single(&p, &o);
        unsigned span = yb_plan_span(&p, 0);
        for (unsigned w = 0; w < span; w++) {
            yb_share s;
            yb_plan_share(&p, 0, w, &s);
            sessions += s.sess_limit;
            assert_true(s.slots >= 1);
            for (uint64_t k = 0; k < s.budget; k++) {
                uint64_t g = k * s.workers + s.worker;
                assert_true(g < r);
                assert_int_equal(g % n, i);
                assert_int_equal(seen[g], 0);
                seen[g] = 1;
            }
            for (uint64_t j = 0; j < r; j++) /* the source's rule (source.h) */
                if (j % s.workers == s.worker) {
                    assert_int_equal(rec[j], 0);
                    rec[j] = 1;
                }
        }
    }
    for (uint64_t g = 0; g < r; g++) {
        assert_int_equal(seen[g], 1);
        assert_int_equal(rec[g], 1);
    }
    assert_int_equal(sessions, c);
    free(seen);
    free(rec);
}

static void test_shards_add_up(void **st)
{
    (void)st;
    static const unsigned T1[] = {1, 1, 1}, T2[] = {2, 1, 3}, T3[] = {4, 4, 4, 4, 4};
    check_shards(3, T1, 3, 60);
    check_shards(3, T2, 7, 61);
    check_shards(3, T2, 3, 10); /* fewer sessions per shard than threads */
    check_shards(5, T3, 23, 1000);
    check_shards(1, T1, 2, 9);
}

/* The open loop: shard i's lanes fall due at the schedule's times of
 * exactly the global indexes k mod N = i, and the plan's rate is the
 * shard's share of it. */
static void test_open_loop_interleaves(void **st)
{
    (void)st;
    const unsigned n = 3;
    int any;
    for (unsigned i = 0; i < n; i++) {
        yb_engine_opts o = opts(2, 6, 0);
        o.shard = (yb_shard){i, n};
        o.sched.kind = YB_SCHED_RATE;
        o.sched.rate = 300;
        yb_plan p;
        yb_plan_single(&p, &o);
        assert_true(yb_plan_rate_at(&p, 0, &any) > 99.9 && yb_plan_rate_at(&p, 0, &any) < 100.1);
        for (unsigned w = 0; w < yb_plan_span(&p, 0); w++) {
            yb_share s;
            yb_plan_share(&p, 0, w, &s);
            assert_true(s.open_loop);
            assert_int_equal(s.workers, 6);
            assert_int_equal(s.worker % n, i);
        }
    }
}

/* A pair of a --split part and a shard: items of the whole model once. */
static void test_split_then_shard(void **st)
{
    (void)st;
    const uint64_t r = 50;
    unsigned char seen[50] = {0};
    for (unsigned part = 0; part < 2; part++)
        for (unsigned i = 0; i < 2; i++) {
            yb_engine_opts o = opts(1, 4, r);
            o.split_i = part;
            o.split_n = 2;
            o.shard = (yb_shard){i, 2};
            yb_plan p;
            yb_plan_single(&p, &o);
            yb_share s;
            yb_plan_share(&p, 0, 0, &s);
            for (uint64_t k = 0; k < s.budget; k++) {
                uint64_t g = k * s.workers + s.worker;
                assert_true(g < r);
                assert_int_equal(seen[g], 0);
                seen[g] = 1;
            }
        }
    for (uint64_t g = 0; g < r; g++)
        assert_int_equal(seen[g], 1);
}

static void test_walltime_good(void **st)
{
    (void)st;
    int64_t t;
    assert_int_equal(yb_parse_walltime("2026-11-30T18:00:00Z", &t), 0);
    assert_int_equal(t, INT64_C(1796061600) * NS);
    assert_int_equal(yb_parse_walltime("2026-11-30t18:00:00z", &t), 0);
    assert_int_equal(t, INT64_C(1796061600) * NS);
    assert_int_equal(yb_parse_walltime("2026-11-30 19:00:00+01:00", &t), 0);
    assert_int_equal(t, INT64_C(1796061600) * NS);
    assert_int_equal(yb_parse_walltime("2026-11-30T12:30:00.25-05:30", &t), 0);
    assert_int_equal(t, INT64_C(1796061600) * NS + NS / 4);
    assert_int_equal(yb_parse_walltime("1970-01-01T00:00:00.000000001Z", &t), 0);
    assert_int_equal(t, 1);
    assert_int_equal(yb_parse_walltime("2024-02-29T00:00:00Z", &t), 0); /* leap day */
    assert_int_equal(t, INT64_C(1709164800) * NS);
    assert_int_equal(yb_parse_walltime("2000-02-29T00:00:00Z", &t), 0);
    assert_int_equal(t, INT64_C(951782400) * NS);
    assert_int_equal(yb_parse_walltime("@1796061600", &t), 0);
    assert_int_equal(t, INT64_C(1796061600) * NS);
    assert_int_equal(yb_parse_walltime("1796061600.123", &t), 0);
    assert_int_equal(t, INT64_C(1796061600) * NS + 123000000);
    assert_int_equal(yb_parse_walltime("0", &t), 0);
    assert_int_equal(t, 0);
    assert_int_equal(yb_parse_walltime("2199-12-31T23:59:59.999999999Z", &t), 0);
    assert_int_equal(t, INT64_C(7258118399) * NS + 999999999);
}

/* Hostile and malformed text: refused, never read past its end. */
static void test_walltime_hostile(void **st)
{
    (void)st;
    static const char *const BAD[] = {
        "", "@", "@@1", "tomorrow", "now", "-1", "+1", " 1", "1 ", "1e9", "0x10", "1.", ".5",
        "1.1234567890", "99999999999", "9223372036854775807", "18446744073709551616",
        "2026-11-30", "2026-11-30T18:00", "2026-11-30T18:00:00", "2026-11-30T18:00:00+01",
        "2026-11-30T18:00:00+0100", "2026-11-30T18:00:00+24:00", "2026-11-30T18:00:00+01:60",
        "2026-11-30T24:00:00Z", "2026-11-30T18:60:00Z", "2026-11-30T18:00:60Z",
        "2026-13-30T18:00:00Z", "2026-00-30T18:00:00Z", "2026-11-31T18:00:00Z",
        "2026-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2026-11-00T18:00:00Z",
        "1969-12-31T23:59:59Z", "2201-01-01T00:00:00Z", "9999-12-31T23:59:59Z",
        "2026-11-30X18:00:00Z", "2026/11/30T18:00:00Z", "2026-11-30T18:00:00ZZ",
        "2026-11-30T18:00:00Z ", "2026-11-30T18:00:00.Z", "2026-11-30T18:00:00.1234567890Z",
        "2026-1a-30T18:00:00Z", "2026-11-30T18:00:00\n", "2026-11-30T18:00:00\x01Z",
        "\xff\xfe", "1970-01-01T00:00:00+00:01", "2026-11-30T18:00:00 Z",
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        int64_t t = 42;
        assert_int_equal(yb_parse_walltime(BAD[i], &t), -1);
        assert_int_equal(t, 42); /* untouched */
    }
    int64_t t;
    assert_int_equal(yb_parse_walltime(NULL, &t), -1);
    /* every prefix of a good time, each in a buffer of exactly its length
     * (the sanitizers catch a read past it) */
    const char *good = "2026-11-30T12:30:00.25-05:30";
    for (size_t n = 0; n < strlen(good); n++) {
        char *p = malloc(n + 1);
        assert_non_null(p);
        memcpy(p, good, n);
        p[n] = 0;
        assert_int_equal(yb_parse_walltime(p, &t), n == 0 || n > 4 ? -1 : 0);
        free(p);
    }
}

static void test_clock_and_wait(void **st)
{
    (void)st;
    yb_clock_state c;
    yb_clock_read(&c);
    assert_true(!c.known || c.maxerror_us >= 0);
    int64_t at = yb_walltime_now() + 20000000; /* 20 ms ahead */
    assert_int_equal(yb_walltime_sleep_until(at, NULL), 0);
    assert_true(yb_walltime_now() >= at);
    volatile sig_atomic_t stop = 1;
    assert_int_equal(yb_walltime_sleep_until(yb_walltime_now() + 10 * NS, &stop), -1);
    assert_int_equal(yb_walltime_sleep_until(0, NULL), 0); /* the past: at once */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_parts_add_up),
        cmocka_unit_test(test_shards_add_up),
        cmocka_unit_test(test_open_loop_interleaves),
        cmocka_unit_test(test_split_then_shard),
        cmocka_unit_test(test_walltime_good),
        cmocka_unit_test(test_walltime_hostile),
        cmocka_unit_test(test_clock_and_wait),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
