/* The plan's sharing out: every worker's part of the concurrency, the
 * session limits, the -n budget and the run length, for the 1 x 1 plan of
 * `run`.  Parts must add up to the whole, and none may be left empty where
 * the run needs at least one. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "engine/plan.h"

#define SEC UINT64_C(1000000000)

static yb_engine_opts opts(unsigned threads, unsigned concurrency)
{
    yb_engine_opts o;
    memset(&o, 0, sizeof o);
    o.threads = threads;
    o.concurrency = concurrency;
    o.policy = YB_SESS_REUSE;
    o.max_backlog = 1000;
    return o;
}

static void test_single_pair(void **st)
{
    (void)st;
    yb_engine_opts o = opts(3, 3);
    yb_plan p;
    yb_plan_single(&p, &o);
    assert_int_equal(p.workers, 3);
    assert_int_equal(p.n_pairs, 1);
    assert_ptr_equal(p.pair[0].workload, &o);
    assert_ptr_equal(p.pair[0].target, &o.target);
}

/* A fleet: one pair per target, each shared among the plan's workers with
 * its own load model (a target's concurrency from the inventory). */
static void test_pairs_added(void **st)
{
    (void)st;
    static yb_engine_opts o[YB_PLAN_MAX_PAIRS + 1];
    for (size_t i = 0; i <= YB_PLAN_MAX_PAIRS; i++)
        o[i] = opts(2, 2 + (unsigned)i);
    yb_plan p;
    memset(&p, 0, sizeof p);
    for (size_t i = 0; i < YB_PLAN_MAX_PAIRS; i++)
        assert_int_equal(yb_plan_add(&p, &o[i]), 0);
    assert_int_equal(yb_plan_add(&p, &o[YB_PLAN_MAX_PAIRS]), -1);
    assert_int_equal(p.n_pairs, YB_PLAN_MAX_PAIRS);
    assert_int_equal(p.workers, 2);
    assert_ptr_equal(p.pair[5].workload, &o[5]);
    assert_ptr_equal(p.pair[5].target, &o[5].target);
    yb_share a, b;
    yb_plan_share(&p, 5, 0, &a);
    yb_plan_share(&p, 5, 1, &b);
    assert_int_equal(a.slots + b.slots, 7);
    assert_int_equal(a.worker, 0);
    assert_int_equal(b.worker, 1);
}

static void test_slots_and_reuse_sessions(void **st)
{
    (void)st;
    yb_engine_opts o = opts(2, 5);
    yb_plan p;
    yb_plan_single(&p, &o);
    yb_share a, b;
    yb_plan_share(&p, 0, 0, &a);
    yb_plan_share(&p, 0, 1, &b);
    assert_int_equal(a.slots, 3);
    assert_int_equal(b.slots, 2);
    assert_int_equal(a.sess_limit, 3); /* reuse: one session per slot */
    assert_int_equal(b.sess_limit, 2);
    assert_int_equal(a.worker, 0);
    assert_int_equal(b.worker, 1);
    assert_int_equal(b.workers, 2);
    assert_false(a.by_conn);
}

/* h2load's -c N -m M: N sessions, M requests in flight on each. */
static void test_sessions_times_streams(void **st)
{
    (void)st;
    yb_engine_opts o = opts(3, 4);
    o.streams = 8;
    yb_plan p;
    yb_plan_single(&p, &o);
    unsigned want_sess[] = {2, 1, 1}, sess = 0, slots = 0;
    for (unsigned i = 0; i < 3; i++) {
        yb_share s;
        yb_plan_share(&p, 0, i, &s);
        assert_int_equal(s.sess_limit, want_sess[i]);
        assert_int_equal(s.slots, want_sess[i] * 8);
        sess += s.sess_limit;
        slots += s.slots;
    }
    assert_int_equal(sess, 4);   /* -c 4: four sessions */
    assert_int_equal(slots, 32); /* x -m 8: 32 in flight */
}

static void test_per_request_and_original(void **st)
{
    (void)st;
    yb_engine_opts o = opts(1, 4);
    o.policy = YB_SESS_PER_REQUEST;
    yb_plan p;
    yb_plan_single(&p, &o);
    yb_share s;
    yb_plan_share(&p, 0, 0, &s);
    assert_int_equal(s.sess_limit, 0); /* no persistent sessions */
    assert_int_equal(s.slots, 4);      /* which caps the one-shot ones */
    o.policy = YB_SESS_ORIGINAL;
    yb_plan_share(&p, 0, 0, &s);
    assert_int_equal(s.sess_limit, UINT32_MAX);
    assert_true(s.by_conn);
}

static void test_budget_adds_up(void **st)
{
    (void)st;
    yb_engine_opts o = opts(3, 3);
    o.requests = 7;
    yb_plan p;
    yb_plan_single(&p, &o);
    uint64_t want[] = {3, 2, 2}, sum = 0;
    for (unsigned i = 0; i < 3; i++) {
        yb_share s;
        yb_plan_share(&p, 0, i, &s);
        assert_int_equal(s.budget, want[i]);
        assert_true(s.cycle); /* -n may be more than one pass */
        assert_int_equal(s.run_ns, 0);
        sum += s.budget;
    }
    assert_int_equal(sum, 7);
}

static void test_one_pass_or_duration(void **st)
{
    (void)st;
    yb_engine_opts o = opts(1, 1);
    yb_plan p;
    yb_plan_single(&p, &o);
    yb_share s;
    yb_plan_share(&p, 0, 0, &s);
    assert_true(s.budget == UINT64_MAX);
    assert_false(s.cycle); /* neither -n nor -D: one pass */
    assert_int_equal(s.run_ns, 0);
    assert_false(s.open_loop);
    assert_true(s.max_wait == UINT64_MAX); /* the closed loop has no backlog cap */
    o.duration_ns = 2 * SEC;
    yb_plan_share(&p, 0, 0, &s);
    assert_true(s.cycle);
    assert_int_equal(s.run_ns, 2 * SEC);
}

/* A plan's workload that starts late: the offset is its own, and its run
 * length counts from it, not from the run's start. */
static void test_start_offset(void **st)
{
    (void)st;
    yb_engine_opts o = opts(2, 2);
    yb_plan p;
    yb_plan_single(&p, &o);
    yb_share s;
    yb_plan_share(&p, 0, 1, &s);
    assert_int_equal(s.start_ns, 0);
    o.start_ns = 30 * SEC;
    o.duration_ns = 10 * SEC;
    yb_plan_share(&p, 0, 1, &s);
    assert_int_equal(s.start_ns, 30 * SEC);
    assert_int_equal(s.run_ns, 10 * SEC);
    assert_true(s.cycle);
}

static void test_schedule_length(void **st)
{
    (void)st;
    yb_engine_opts o = opts(2, 2);
    char err[128];
    assert_int_equal(yb_sched_parse("ramp:10..20/3s", &o.sched, err, sizeof err), 0);
    yb_plan p;
    yb_plan_single(&p, &o);
    yb_share s;
    yb_plan_share(&p, 0, 1, &s);
    assert_true(s.open_loop);
    assert_true(s.cycle);
    assert_int_equal(s.run_ns, 3 * SEC); /* a ramp ends by itself */
    assert_int_equal(s.max_wait, 1000);  /* --max-backlog */
    /* -n ends the run instead */
    o.requests = 10;
    yb_plan_share(&p, 0, 1, &s);
    assert_int_equal(s.run_ns, 0);
    assert_int_equal(s.budget, 5);
    /* -D wins over the ramp's length */
    o.duration_ns = 1 * SEC;
    yb_plan_share(&p, 0, 1, &s);
    assert_int_equal(s.run_ns, 1 * SEC);
}

/* --split: 3 targets x 2 workers take the shares of 6 workers of one
 * workload: -n and -c add up to the whole, the remainder spread one each,
 * and each worker has its own place in the interleaved schedule. */
static void test_split_among_targets(void **st)
{
    (void)st;
    yb_engine_opts o[3];
    yb_plan p;
    memset(&p, 0, sizeof p);
    for (unsigned t = 0; t < 3; t++) {
        o[t] = opts(2, 7);
        o[t].requests = 20;
        o[t].split_i = t;
        o[t].split_n = 3;
        assert_int_equal(yb_plan_add(&p, &o[t]), 0);
    }
    uint64_t budget = 0, slots = 0, seen = 0;
    for (unsigned t = 0; t < 3; t++)
        for (unsigned w = 0; w < 2; w++) {
            yb_share s;
            yb_plan_share(&p, t, w, &s);
            assert_int_equal(s.workers, 6);
            assert_int_equal(s.worker, w * 3 + t);
            seen |= UINT64_C(1) << s.worker;
            assert_true(s.budget == 3 || s.budget == 4);
            budget += s.budget;
            slots += s.slots;
        }
    assert_int_equal(budget, 20);
    assert_int_equal(slots, 7);
    assert_int_equal(seen, 0x3f);
}

static void test_timing_original_is_open_loop(void **st)
{
    (void)st;
    yb_engine_opts o = opts(1, 1);
    o.timing_original = 1;
    yb_plan p;
    yb_plan_single(&p, &o);
    yb_share s;
    yb_plan_share(&p, 0, 0, &s);
    assert_true(s.open_loop);
    assert_int_equal(s.max_wait, 1000);
    assert_int_equal(s.run_ns, 0); /* no schedule length: ends with the corpus */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_pair),
        cmocka_unit_test(test_pairs_added),
        cmocka_unit_test(test_slots_and_reuse_sessions),
        cmocka_unit_test(test_sessions_times_streams),
        cmocka_unit_test(test_per_request_and_original),
        cmocka_unit_test(test_budget_adds_up),
        cmocka_unit_test(test_one_pass_or_duration),
        cmocka_unit_test(test_start_offset),
        cmocka_unit_test(test_schedule_length),
        cmocka_unit_test(test_timing_original_is_open_loop),
        cmocka_unit_test(test_split_among_targets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
