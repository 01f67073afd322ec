/* The plan's sharing out: every worker's part of the concurrency, the
 * session limits, the -n budget and the run length, for the 1 x 1 plan of
 * `run` and for many pairs sharing the workers as lanes.  Parts must add
 * up to the whole, and none may be left empty where the run needs at
 * least one. */
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
    o.max_backlog_bytes = 5u << 20;
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
    assert_true(s.max_wait_bytes == UINT64_MAX);
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

/* The plan's target rate: each pair's schedule from its start offset to
 * the end of its duration (or of a ramp), summed; a --split part counts
 * its share; closed loops count nothing. */
static void test_rate_at(void **st)
{
    (void)st;
    char err[128];
    yb_engine_opts a = opts(1, 1), b = opts(1, 1), c = opts(1, 1);
    assert_int_equal(yb_sched_parse("20", &a.sched, err, sizeof err), 0);
    a.start_ns = 1 * SEC;
    a.duration_ns = 2 * SEC;
    assert_int_equal(yb_sched_parse("ramp:10..20/2s", &b.sched, err, sizeof err), 0);
    yb_plan p;
    memset(&p, 0, sizeof p);
    assert_int_equal(yb_plan_add(&p, &c), 0); /* closed loop */
    int any = 0;
    assert_true(yb_plan_rate_at(&p, SEC, &any) == 0.0);
    assert_false(any);
    assert_int_equal(yb_plan_add(&p, &a), 0);
    assert_int_equal(yb_plan_add(&p, &b), 0);
    assert_true(yb_plan_rate_at(&p, 0, &any) == 10.0); /* a not started yet */
    assert_true(any);
    assert_true(yb_plan_rate_at(&p, SEC, NULL) == 20.0 + 15.0);
    assert_true(yb_plan_rate_at(&p, 2 * SEC, NULL) == 20.0); /* the ramp has ended */
    assert_true(yb_plan_rate_at(&p, 3 * SEC, NULL) == 0.0);  /* a's duration too */
    a.split_n = 4;
    assert_true(yb_plan_rate_at(&p, 2 * SEC, NULL) == 5.0);
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
    assert_int_equal(s.max_wait_bytes, 5u << 20); /* --max-backlog-bytes */
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
    assert_int_equal(s.max_wait_bytes, 5u << 20);
    assert_int_equal(s.run_ns, 0); /* no schedule length: ends with the corpus */
}

/* Every pair of p: its lanes sit on distinct workers among those that
 * run, take each place of its span once, and their shares add up to the
 * pair's whole (sessions, slots, -n budget).  Returns the lanes in all. */
static size_t check_pairs_add_up(const yb_plan *p)
{
    unsigned nw = yb_plan_workers(p);
    size_t lanes = 0;
    for (size_t i = 0; i < p->n_pairs; i++) {
        const yb_engine_opts *o = p->pair[i].workload;
        unsigned span = yb_plan_span(p, i), seen = 0, sess = 0, slots = 0;
        uint64_t budget = 0;
        assert_true(span >= 1 && span <= p->workers && span <= nw);
        for (unsigned w = 0; w < p->workers; w++) {
            int place = yb_plan_place(p, i, w);
            if (place < 0)
                continue;
            assert_true(w < nw); /* only on workers that run */
            assert_true((unsigned)place < span);
            assert_false(seen & (1u << place)); /* each place once */
            seen |= 1u << place;
            yb_share s;
            yb_plan_share(p, i, (unsigned)place, &s);
            assert_int_equal(s.workers, span);
            assert_int_equal(s.worker, place);
            assert_true(s.slots >= 1); /* no lane without work */
            sess += s.sess_limit;
            slots += s.slots;
            budget += s.budget;
            lanes++;
        }
        assert_int_equal(seen, (1u << span) - 1);
        assert_int_equal(sess, o->concurrency);
        assert_int_equal(slots, o->concurrency * (o->streams ? o->streams : 1));
        if (o->requests)
            assert_int_equal(budget, o->requests);
    }
    return lanes;
}

/* One pair: every worker runs a lane of it, as before lanes existed. */
static void test_lanes_single_pair(void **st)
{
    (void)st;
    yb_engine_opts o = opts(4, 6);
    o.requests = 10;
    yb_plan p;
    yb_plan_single(&p, &o);
    assert_int_equal(yb_plan_workers(&p), 4);
    assert_int_equal(yb_plan_span(&p, 0), 4);
    for (unsigned w = 0; w < 4; w++)
        assert_int_equal(yb_plan_place(&p, 0, w), w);
    assert_int_equal(check_pairs_add_up(&p), 4);
}

/* A fleet of targets with one session each on 3 threads: 3 workers, not
 * one per target; the pairs go round the workers, 334 / 333 / 333. */
static void test_lanes_many_single_session_pairs(void **st)
{
    (void)st;
    static yb_engine_opts o[1000];
    yb_plan p;
    memset(&p, 0, sizeof p);
    for (size_t i = 0; i < 1000; i++) {
        o[i] = opts(3, 1);
        o[i].requests = 7;
        assert_int_equal(yb_plan_add(&p, &o[i]), 0);
    }
    assert_int_equal(yb_plan_workers(&p), 3);
    unsigned per[3] = {0, 0, 0};
    for (size_t i = 0; i < 1000; i++) {
        assert_int_equal(yb_plan_span(&p, i), 1);
        assert_int_equal(p.pair[i].first, i % 3);
        for (unsigned w = 0; w < 3; w++)
            per[w] += yb_plan_place(&p, i, w) == 0;
        yb_share s;
        yb_plan_share(&p, i, 0, &s);
        assert_int_equal(s.budget, 7); /* the whole -n of its target */
        assert_int_equal(s.slots, 1);
    }
    assert_int_equal(per[0], 334);
    assert_int_equal(per[1], 333);
    assert_int_equal(per[2], 333);
    assert_int_equal(check_pairs_add_up(&p), 1000);
}

/* Pairs of different concurrency: each spans min(workers, concurrency)
 * workers, placed after the previous pair's, wrapping round. */
static void test_lanes_mixed_spans(void **st)
{
    (void)st;
    yb_engine_opts o[4];
    unsigned conc[4] = {2, 5, 1, 3};
    yb_plan p;
    memset(&p, 0, sizeof p);
    for (size_t i = 0; i < 4; i++) {
        o[i] = opts(3, conc[i]);
        o[i].streams = 2;
        o[i].requests = 11;
        assert_int_equal(yb_plan_add(&p, &o[i]), 0);
    }
    unsigned want_span[4] = {2, 3, 1, 3}, want_first[4] = {0, 2, 2, 0};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(yb_plan_span(&p, i), want_span[i]);
        assert_int_equal(p.pair[i].first, want_first[i]);
    }
    /* pair 1 starts on worker 2 and wraps round to 0 and 1 */
    assert_int_equal(yb_plan_place(&p, 1, 2), 0);
    assert_int_equal(yb_plan_place(&p, 1, 0), 1);
    assert_int_equal(yb_plan_place(&p, 1, 1), 2);
    assert_int_equal(yb_plan_place(&p, 2, 0), -1);
    assert_int_equal(yb_plan_place(&p, 2, 2), 0);
    assert_int_equal(yb_plan_workers(&p), 3);
    assert_int_equal(check_pairs_add_up(&p), 9);
}

/* More threads than the pairs can use: only the workers with lanes run. */
static void test_lanes_fewer_than_threads(void **st)
{
    (void)st;
    yb_engine_opts a = opts(8, 2), b = opts(8, 1);
    yb_plan p;
    memset(&p, 0, sizeof p);
    assert_int_equal(yb_plan_add(&p, &a), 0);
    assert_int_equal(yb_plan_add(&p, &b), 0);
    assert_int_equal(yb_plan_workers(&p), 3);
    assert_int_equal(yb_plan_place(&p, 1, 2), 0);
    assert_int_equal(check_pairs_add_up(&p), 3);
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
        cmocka_unit_test(test_rate_at),
        cmocka_unit_test(test_schedule_length),
        cmocka_unit_test(test_timing_original_is_open_loop),
        cmocka_unit_test(test_split_among_targets),
        cmocka_unit_test(test_lanes_single_pair),
        cmocka_unit_test(test_lanes_many_single_session_pairs),
        cmocka_unit_test(test_lanes_mixed_spans),
        cmocka_unit_test(test_lanes_fewer_than_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
