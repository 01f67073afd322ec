/* Thresholds: the grammar (canonical metric names, limits in their units,
 * scopes ending at the last colon, refusals), the verdicts on a synthetic
 * recorder, and the per-second check of --abort-on-fail on sealed
 * seconds. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/threshold.h"
#include "stats/hdr.h"

#define MS UINT64_C(1000000)
#define SEC UINT64_C(1000000000)
#define T0 (UINT64_C(7000) * SEC)

static void parses(void **st)
{
    (void)st;
    yb_thresholds ts;
    char err[1200];
    yb_thresholds_init(&ts);
    assert_int_equal(yb_thresholds_add(&ts, "e2e.p99<50ms", err, sizeof err), 0);
    assert_int_equal(yb_thresholds_add(&ts, " ttfb.p99.9 <= 200us ", err, sizeof err), 0);
    assert_int_equal(yb_thresholds_add(&ts, "errors<0.1%", err, sizeof err), 0);
    assert_int_equal(yb_thresholds_add(&ts, "errors.timeout<=5", err, sizeof err), 0);
    assert_int_equal(yb_thresholds_add(&ts, "rate>=1.5k/s", err, sizeof err), 0);
    assert_int_equal(yb_thresholds_add(&ts, "target=https://sw1:443:e2e.max<1m30s", err,
                                       sizeof err), 0);
    assert_int_equal(yb_thresholds_add(&ts, "requests>1000", err, sizeof err), 0);
    assert_int_equal(ts.n, 7);
    assert_string_equal(ts.t[0].m.name, "e2e.p99");
    assert_int_equal(ts.t[0].op, YB_TH_LT);
    assert_true(ts.t[0].limit == 50000.0); /* µs */
    assert_string_equal(ts.t[1].m.name, "ttfb.p99.9");
    assert_int_equal(ts.t[1].m.hist, YB_H_TTFB);
    assert_true(ts.t[1].m.pct == 99.9);
    assert_int_equal(ts.t[1].op, YB_TH_LE);
    assert_true(ts.t[1].limit == 200.0);
    assert_true(ts.t[2].percent && ts.t[2].limit == 0.1);
    assert_int_equal(ts.t[3].m.err, YB_ERR_TIMEOUT);
    assert_true(!ts.t[3].percent && ts.t[3].limit == 5.0);
    assert_int_equal(ts.t[4].m.kind, YB_M_RATE);
    assert_int_equal(ts.t[4].op, YB_TH_GE);
    assert_true(ts.t[4].limit == 1500.0);
    assert_string_equal(ts.t[5].scope_kind, "target");
    assert_string_equal(ts.t[5].scope_name, "https://sw1:443");
    assert_int_equal(ts.t[5].m.stat, YB_STAT_MAX);
    assert_true(ts.t[5].limit == 90e6);
    assert_int_equal(ts.t[6].op, YB_TH_GT);
    yb_thresholds_cleanup(&ts);
}

static void refuses(void **st)
{
    (void)st;
    static const char *const BAD[] = {
        "", "e2e.p99", "e2e.p99<", "<5ms", "e2e.p99<50", "e2e.p99<50xs", "e2e.p0<1ms",
        "e2e.p100.1<1ms", "e2e.pfoo<1ms", "e2e<1ms", "bogus.p50<1ms", "errors<x", "errors<101%",
        "errors<-1%", "errors<1.5", "errors.nope<1", "rate>=fast", "rate>=-1", "requests>1.5",
        "host=a:e2e.p99<1ms", "target=:e2e.p99<1ms", "e2e.p99<1ms<2ms", "e2e.p99=<1ms",
        "e2e.p99<1ms extra",
    };
    char err[1200];
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        yb_thresholds ts;
        yb_thresholds_init(&ts);
        err[0] = 0;
        if (yb_thresholds_add(&ts, BAD[i], err, sizeof err) == 0)
            fail_msg("accepted '%s'", BAD[i]);
        char want[80];
        snprintf(want, sizeof want, "--threshold '%s': ", BAD[i]);
        assert_non_null(strstr(err, want));
        assert_non_null(strstr(err, "A threshold is"));
        assert_int_equal(ts.n, 0);
    }
    yb_thresholds ts;
    yb_thresholds_init(&ts);
    for (int i = 0; i < YB_TH_MAX; i++)
        assert_int_equal(yb_thresholds_add(&ts, "e2e.p50<1s", err, sizeof err), 0);
    assert_int_equal(yb_thresholds_add(&ts, "e2e.p50<1s", err, sizeof err), -1);
    assert_non_null(strstr(err, "at most 32"));
}

/* 100 ok requests at 10 ms end to end over 1 s, 5 failed (status). */
static void fill(yb_recorder *r)
{
    assert_int_equal(yb_recorder_init(r), 0);
    r->run_start = T0;
    for (int i = 0; i < 105; i++) {
        yb_result res;
        memset(&res, 0, sizeof res);
        res.due = T0 + (uint64_t)i * 9 * MS;
        res.send_start = res.due;
        res.sent = res.due + 1 * MS;
        res.first_byte = res.due + 9 * MS;
        res.done = res.due + 10 * MS;
        res.status = i < 100 ? 200 : 500;
        res.grpc_status = -1;
        res.err = i < 100 ? YB_ERR_NONE : YB_ERR_STATUS;
        yb_recorder_add(r, &res);
    }
    r->started = 105;
    r->run_end = T0 + 1 * SEC;
    assert_int_equal(yb_recorder_finish(r), 0);
}

static void verdicts(void **st)
{
    (void)st;
    yb_recorder r;
    fill(&r);
    yb_thresholds ts;
    char err[1200];
    yb_thresholds_init(&ts);
    static const char *const E[] = {"e2e.p99<20ms", "e2e.p50<5ms",  "errors<=5",
                                    "errors<4%",    "errors.status<5", "rate>=100",
                                    "tls.p50<5ms",  "target=t1:e2e.max<=11ms", "requests>=100"};
    for (size_t i = 0; i < sizeof E / sizeof E[0]; i++)
        assert_int_equal(yb_thresholds_add(&ts, E[i], err, sizeof err), 0);
    yb_th_scope sc = {"target", "t1", &r, NULL};
    assert_int_equal(yb_thresholds_check_scopes(&ts, &sc, 1, err, sizeof err), 0);
    yb_th_scope other = {"target", "t2", &r, NULL};
    assert_int_equal(yb_thresholds_check_scopes(&ts, &other, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "no target 't1' in this run (its targets: 't2')"));

    size_t nfail = yb_thresholds_eval(&ts, &r, &sc, 1);
    assert_int_equal(nfail, 4);
    int pass[] = {1, 0, 1, 0, 0, 1, 0, 1, 1};
    for (size_t i = 0; i < ts.n; i++)
        if (ts.t[i].pass != pass[i])
            fail_msg("'%s': pass %d, measured %g", ts.t[i].expr, ts.t[i].pass, ts.t[i].measured);
    assert_true(ts.t[0].measured >= 10000 && ts.t[0].measured <= 10010); /* 10 ms, in µs */
    assert_true(ts.t[2].measured == 5);
    assert_true(ts.t[3].measured > 4.76 && ts.t[3].measured < 4.77); /* 5 of 105 */
    assert_true(ts.t[4].measured == 5); /* not < 5 */
    assert_true(ts.t[5].measured > 99 && ts.t[5].measured <= 100.1);
    assert_false(ts.t[6].measured_ok); /* nothing to measure fails */
    assert_non_null(strstr(ts.t[6].note, "no data"));

    /* an unknown scope at the end is a failure with the reason */
    assert_int_equal(yb_thresholds_eval(&ts, &r, &other, 1), 5);
    assert_non_null(strstr(ts.t[7].note, "no target 't1'"));

    /* a scope another shard runs: known (no usage error), not judged here */
    yb_th_scope away[2] = {{"target", "t2", &r, NULL}, {"target", "t1", NULL, "another shard's"}};
    assert_int_equal(yb_thresholds_check_scopes(&ts, away, 2, err, sizeof err), 0);
    assert_int_equal(yb_thresholds_eval(&ts, &r, away, 2), 4); /* as with t1's own figures, less t1's */
    assert_true(ts.t[7].pass && ts.t[7].skipped && !ts.t[7].measured_ok);
    assert_string_equal(ts.t[7].note, "another shard's");
    assert_false(ts.t[0].skipped);

    json_t *j = json_object();
    assert_int_equal(yb_thresholds_json(j, &ts), 0);
    json_t *a = json_object_get(j, "thresholds");
    assert_int_equal(json_array_size(a), ts.n);
    json_t *t0 = json_array_get(a, 0);
    assert_string_equal(json_string_value(json_object_get(t0, "metric")), "e2e.p99");
    assert_string_equal(json_string_value(json_object_get(t0, "unit")), "us");
    assert_true(json_is_true(json_object_get(t0, "pass")));
    assert_true(json_is_null(json_object_get(json_array_get(a, 6), "measured")));
    assert_true(json_is_null(json_object_get(j, "stopped_by_threshold")));
    json_decref(j);
    yb_thresholds_cleanup(&ts);
    yb_recorder_cleanup(&r);
}

/* A sealed second of n requests (e errors) at lat_us each. */
static void second(yb_interval *iv, uint64_t t, uint64_t n, uint64_t e, int64_t lat_us)
{
    memset(iv, 0, sizeof *iv);
    iv->t = t;
    iv->requests = n;
    iv->errors = e;
    yb_hdr *h = yb_hdr_new_default();
    assert_non_null(h);
    yb_hdr_record_n(h, lat_us, (int64_t)(n - e));
    assert_int_equal(yb_hdr_encode_compressed(h, &iv->hist, &iv->hist_len), 0);
    yb_hdr_free(h);
}

static void per_second(void **st)
{
    (void)st;
    volatile sig_atomic_t stop = 0;
    yb_thresholds ts;
    char err[1200];
    yb_thresholds_init(&ts);
    assert_int_equal(yb_thresholds_add(&ts, "tls.p50<1ms", err, sizeof err), 0); /* end only */
    assert_int_equal(yb_thresholds_add(&ts, "errors>=1", err, sizeof err), 0);  /* end only */
    assert_int_equal(yb_thresholds_add(&ts, "rate>=50", err, sizeof err), 0);
    assert_int_equal(yb_thresholds_add(&ts, "e2e.p99<5ms", err, sizeof err), 0);
    assert_int_equal(yb_thresholds_checked_per_second(&ts), 2); /* rate, e2e */
    assert_int_equal(yb_thresholds_arm(&ts, &stop), 0);
    yb_interval iv;
    second(&iv, 0, 100, 0, 2000);
    yb_thresholds_second(&iv, &ts);
    free(iv.hist);
    assert_int_equal(stop, 0);
    assert_int_equal(ts.stopped_by, -1);
    /* second 1: slow; the p99 of both seconds together goes over 5 ms */
    second(&iv, 1, 100, 0, 9000);
    yb_thresholds_second(&iv, &ts);
    free(iv.hist);
    assert_int_equal(stop, YB_TH_STOPPED);
    assert_int_equal(ts.stopped_by, 3);
    assert_true(ts.stopped_at_s == 2.0);
    assert_true(ts.stopped_measured >= 9000);
    json_t *j = json_object();
    assert_int_equal(yb_thresholds_json(j, &ts), 0);
    json_t *s = json_object_get(j, "stopped_by_threshold");
    assert_string_equal(json_string_value(json_object_get(s, "expr")), "e2e.p99<5ms");
    assert_true(json_is_true(json_object_get(json_array_get(json_object_get(j, "thresholds"), 3),
                                             "stopped_run")));
    json_decref(j);
    yb_thresholds_cleanup(&ts);

    /* a percentage of errors over the seconds so far */
    stop = 0;
    yb_thresholds_init(&ts);
    assert_int_equal(yb_thresholds_add(&ts, "errors<10%", err, sizeof err), 0);
    assert_int_equal(yb_thresholds_arm(&ts, &stop), 0);
    second(&iv, 0, 10, 1, 1000);
    yb_thresholds_second(&iv, &ts);
    free(iv.hist);
    assert_int_equal(stop, YB_TH_STOPPED); /* 10 % is not < 10 %: fails */
    assert_int_equal(ts.stopped_by, 0);
    yb_thresholds_cleanup(&ts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses),
        cmocka_unit_test(refuses),
        cmocka_unit_test(verdicts),
        cmocka_unit_test(per_second),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
