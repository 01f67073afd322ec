/* Recorder: which histogram each timestamp pair feeds, the counters, the
 * per-second series and the merge of recorders that started apart. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "stats/recorder.h"

#define MS UINT64_C(1000000)
#define SEC UINT64_C(1000000000)
#define T0 (UINT64_C(5000) * SEC) /* uv_hrtime is never near 0 */

static int setup(void **st)
{
    yb_recorder *r = test_malloc(sizeof(*r));

    if (yb_recorder_init(r) != 0)
        return -1;
    r->run_start = T0;
    *st = r;
    return 0;
}

static int teardown(void **st)
{
    yb_recorder_cleanup(*st);
    test_free(*st);
    return 0;
}

/* A request on an already open session: no set-up timestamps. */
static yb_result reused(uint64_t due)
{
    yb_result res;

    memset(&res, 0, sizeof(res));
    res.due = due;
    res.send_start = due + 2 * MS;    /* 2 ms late */
    res.sent = res.send_start + 1 * MS;
    res.first_byte = res.sent + 10 * MS;
    res.done = res.first_byte + 3 * MS;
    res.bytes_out = 14500;
    res.bytes_in = 300;
    res.status = 204;
    res.grpc_status = -1;
    res.err = YB_ERR_NONE;
    return res;
}

static void test_names(void **st)
{
    (void)st;
    assert_string_equal(yb_hist_name(YB_H_E2E), "e2e");
    assert_string_equal(yb_hist_name(YB_H_SERVICE), "service");
    assert_string_equal(yb_hist_name(YB_H_CONNECT), "connect");
    assert_string_equal(yb_hist_name(YB_H_TLS), "tls");
    assert_string_equal(yb_hist_name(YB_H_H2), "h2");
    assert_string_equal(yb_hist_name(YB_H_WRITE), "write");
    assert_string_equal(yb_hist_name(YB_H_TTFB), "ttfb");
    assert_string_equal(yb_hist_name(YB_H_LATENESS), "lateness");
    assert_string_equal(yb_hist_name(YB_H__COUNT), "unknown");
}

static void test_reused_session_phases(void **st)
{
    yb_recorder *r = *st;
    yb_result res = reused(T0);

    yb_recorder_add(r, &res);
    /* connected == 0: the set-up was paid by another request */
    assert_int_equal(yb_hdr_count(r->h[YB_H_CONNECT]), 0);
    assert_int_equal(yb_hdr_count(r->h[YB_H_TLS]), 0);
    assert_int_equal(yb_hdr_count(r->h[YB_H_H2]), 0);
    assert_int_equal(r->sessions_opened, 0);
    assert_int_equal(yb_hdr_percentile(r->h[YB_H_E2E], 50), 16007);     /* done - due, 8-wide slot */
    assert_int_equal(yb_hdr_percentile(r->h[YB_H_SERVICE], 50), 14007); /* done - send_start */
    assert_int_equal(yb_hdr_percentile(r->h[YB_H_LATENESS], 50), 2000);
    assert_int_equal(yb_hdr_percentile(r->h[YB_H_WRITE], 50), 1000);
    assert_int_equal(yb_hdr_percentile(r->h[YB_H_TTFB], 50), 10007);
    assert_int_equal(r->completed, 1);
    assert_int_equal(r->ok, 1);
    assert_int_equal(yb_recorder_status(r, 204), 1);
    assert_int_equal(r->run_end, res.done);
}

static void test_new_session_phases(void **st)
{
    yb_recorder *r = *st;
    yb_result res;

    memset(&res, 0, sizeof(res));
    res.due = T0;
    res.send_start = T0;            /* the session open starts the request */
    res.conn_start = T0;
    res.connected = T0 + 1 * MS;    /* connect 1 ms */
    res.tls_done = T0 + 4 * MS;     /* TLS 3 ms */
    res.h2_ready = T0 + 5 * MS;     /* h2 1 ms */
    res.sent = T0 + 5 * MS + 500;   /* write 0.5 µs -> rounds up to 1 µs */
    res.first_byte = T0 + 8 * MS;
    res.done = T0 + 9 * MS;
    res.status = 200;
    res.grpc_status = 0;
    res.tls_resumed = 1;
    yb_recorder_add(r, &res);

    assert_int_equal(yb_hdr_percentile(r->h[YB_H_CONNECT], 50), 1000);
    assert_int_equal(yb_hdr_percentile(r->h[YB_H_TLS], 50), 3001); /* 2-wide slot */
    assert_int_equal(yb_hdr_percentile(r->h[YB_H_H2], 50), 1000);
    /* write excludes the set-up: it starts at h2_ready, not send_start */
    assert_int_equal(yb_hdr_percentile(r->h[YB_H_WRITE], 50), 1);
    assert_int_equal(yb_hdr_clamped(r->h[YB_H_WRITE]), 0);
    assert_int_equal(yb_hdr_percentile(r->h[YB_H_TTFB], 50), 3001); /* 2999.5 µs rounds up */
    assert_int_equal(yb_hdr_percentile(r->h[YB_H_E2E], 50), 9007);  /* 9 ms, 8-wide slot */
    /* due == send_start: not late; the 1 µs floor */
    assert_int_equal(yb_hdr_percentile(r->h[YB_H_LATENESS], 50), 1);
    assert_int_equal(r->sessions_opened, 1);
    assert_int_equal(r->tls_resumed, 1);
    assert_int_equal(r->tls_full, 0);
    assert_int_equal(r->grpc[0], 1);

    /* Plain TCP + h2c: the h2 phase starts at connected. */
    res.tls_done = 0;
    res.tls_resumed = 0;
    yb_recorder_add(r, &res);
    assert_int_equal(yb_hdr_count(r->h[YB_H_TLS]), 1);
    assert_int_equal(yb_hdr_count(r->h[YB_H_H2]), 2);
    assert_int_equal(yb_hdr_percentile(r->h[YB_H_H2], 100), 4001); /* 4 ms */
    assert_int_equal(r->tls_full, 0);
    assert_int_equal(r->sessions_opened, 2);
}

/* Statuses: the first distinct ones in slots, then all of them in the
 * table (counts moved over, none lost); merging a recorder of each kind
 * into each other kind adds exactly; codes outside 0..599 count as none. */
static void test_status_slots_and_table(void **state)
{
    yb_recorder *r = *state, s, u;
    assert_int_equal(yb_recorder_init(&s), 0);
    assert_int_equal(yb_recorder_init(&u), 0);
    for (int k = 0; k < YB_STATUS_SLOTS; k++)
        assert_int_equal(yb_recorder_count_status(r, 200 + k, (uint64_t)k + 1), 0);
    assert_int_equal(yb_recorder_count_status(r, 200, 10), 0);
    assert_null(r->status_tab);               /* every status found a slot */
    assert_int_equal(yb_recorder_status(r, 200), 11);
    assert_int_equal(yb_recorder_status(r, 599), 0);
    assert_int_equal(yb_recorder_status(r, 600), 0);
    assert_int_equal(yb_recorder_status(r, -1), 0);
    /* a slotted recorder merged into a fresh one stays in slots */
    assert_int_equal(yb_recorder_merge(&u, r), 0);
    assert_null(u.status_tab);
    assert_int_equal(yb_recorder_status(&u, 201), 2);
    /* one more distinct status: the table, with the slots' counts */
    assert_int_equal(yb_recorder_count_status(r, 599, 7), 0);
    assert_non_null(r->status_tab);
    assert_int_equal(yb_recorder_status(r, 200), 11);
    for (int k = 1; k < YB_STATUS_SLOTS; k++)
        assert_int_equal(yb_recorder_status(r, 200 + k), (uint64_t)k + 1);
    assert_int_equal(yb_recorder_status(r, 599), 7);
    assert_int_equal(yb_recorder_count_status(r, 1000, 3), 0); /* as none */
    assert_int_equal(yb_recorder_status(r, 0), 3);
    /* the table merged into slots, and slots into a table */
    assert_int_equal(yb_recorder_count_status(&s, 404, 5), 0);
    assert_int_equal(yb_recorder_merge(&s, r), 0);
    assert_non_null(s.status_tab);
    assert_int_equal(yb_recorder_status(&s, 404), 5);
    assert_int_equal(yb_recorder_status(&s, 599), 7);
    assert_int_equal(yb_recorder_status(&s, 200), 11);
    assert_int_equal(yb_recorder_merge(r, &u), 0);
    assert_int_equal(yb_recorder_status(r, 200), 22);
    uint64_t all[YB_MAX_STATUS];
    yb_recorder_statuses(&u, all);
    uint64_t sum = 0;
    for (int k = 0; k < YB_MAX_STATUS; k++)
        sum += all[k];
    assert_int_equal(sum, 11 + 2 + 3 + 4);
    assert_int_equal(all[203], 4);
    yb_recorder_statuses(&s, all);
    assert_int_equal(all[0], 3);
    assert_int_equal(all[404], 5);
    yb_recorder_cleanup(&s);
    yb_recorder_cleanup(&u);
}

/* A lazy recorder makes a histogram at its first value: the others stay
 * NULL (empty to the readers) through merges either way, until filled. */
static void test_lazy_histograms(void **state)
{
    yb_recorder *full = *state, lz, dst;
    assert_int_equal(yb_recorder_init_lazy(&lz), 0);
    assert_int_equal(yb_recorder_init_lazy(&dst), 0);
    lz.run_start = T0;
    for (int i = 0; i < YB_H__COUNT; i++)
        assert_null(lz.h[i]);
    assert_null(lz.iv_h);
    dst.series_counts_only = 1;
    yb_result res = reused(T0);
    yb_recorder_add(&dst, &res);
    assert_null(dst.iv_h);                 /* counts only: never made */
    yb_recorder_add(&lz, &res);
    assert_non_null(lz.iv_h);              /* the open second's */
    yb_recorder_chain(&lz, 1, 5000);
    assert_non_null(lz.h[YB_H_E2E]);
    assert_non_null(lz.h[YB_H_CHAIN]);
    assert_null(lz.h[YB_H_CONNECT]);       /* a reused session: no set-up */
    assert_int_equal(yb_hdr_count(lz.h[YB_H_E2E]), 1);
    assert_int_equal(yb_hdr_count(lz.h[YB_H_CONNECT]), 0);
    /* lazy into full, full into lazy, lazy into lazy */
    yb_recorder_add(full, &res);
    assert_int_equal(yb_recorder_merge(full, &lz), 0);
    assert_int_equal(yb_hdr_count(full->h[YB_H_E2E]), 2);
    assert_int_equal(yb_hdr_count(full->h[YB_H_CHAIN]), 1);
    assert_int_equal(yb_recorder_merge(&dst, &lz), 0);
    assert_null(dst.h[YB_H_CONNECT]);
    assert_int_equal(yb_hdr_count(dst.h[YB_H_E2E]), 2);
    assert_int_equal(yb_recorder_merge(&lz, full), 0);
    assert_non_null(lz.h[YB_H_CONNECT]);   /* full's, empty, made on merge */
    assert_int_equal(yb_hdr_count(lz.h[YB_H_E2E]), 3);
    assert_int_equal(yb_recorder_fill(&dst), 0);
    for (int i = 0; i < YB_H__COUNT; i++)
        assert_non_null(dst.h[i]);
    assert_int_equal(yb_hdr_count(dst.h[YB_H_E2E]), 2);
    assert_int_equal(yb_recorder_finish(&dst), 0);
    yb_recorder_cleanup(&lz);
    yb_recorder_cleanup(&dst);
}

static void test_counters(void **st)
{
    yb_recorder *r = *st;
    yb_result res = reused(T0);

    res.err = YB_ERR_TIMEOUT;
    res.status = 0;
    yb_recorder_add(r, &res);
    res.err = YB_ERR_STATUS;
    res.status = 503;
    yb_recorder_add(r, &res);
    res.err = YB_ERR_STATUS;
    res.status = 200;
    res.grpc_status = 14;
    yb_recorder_add(r, &res);
    res.err = (yb_err_class)99; /* out of range: counted as other */
    res.status = 1000;          /* out of range: counted with "none" */
    res.grpc_status = 42;       /* out of range: the overflow slot */
    yb_recorder_add(r, &res);
    res = reused(T0);
    yb_recorder_add(r, &res);

    assert_int_equal(r->completed, 5);
    assert_int_equal(r->ok, 1);
    assert_int_equal(r->errors[YB_ERR_TIMEOUT], 1);
    assert_int_equal(r->errors[YB_ERR_STATUS], 2);
    assert_int_equal(r->errors[YB_ERR_OTHER], 1);
    assert_int_equal(r->errors[YB_ERR_NONE], 0);
    assert_int_equal(yb_recorder_status(r, 0), 2);
    assert_int_equal(yb_recorder_status(r, 503), 1);
    assert_int_equal(yb_recorder_status(r, 200), 1);
    assert_int_equal(yb_recorder_status(r, 204), 1);
    assert_int_equal(r->grpc[14], 1);
    assert_int_equal(r->grpc[YB_GRPC_CODES], 1);
    assert_int_equal(r->bytes_out, 5 * 14500);
    assert_int_equal(r->bytes_in, 5 * 300);
    assert_int_equal(r->started, 0); /* the engine's job */
}

static void test_intervals(void **st)
{
    yb_recorder *r = *st;
    yb_result res;

    /* completions at 0.02 s, 0.5 s, 2.3 s and 130 s (the series grows) */
    res = reused(T0);
    yb_recorder_add(r, &res);
    res = reused(T0 + 480 * MS);
    yb_recorder_add(r, &res);
    res = reused(T0 + 2280 * MS);
    res.err = YB_ERR_RESET;
    yb_recorder_add(r, &res);
    res = reused(T0 + 130 * SEC);
    yb_recorder_add(r, &res);

    assert_int_equal(r->n_iv, 131);
    assert_true(r->cap_iv >= 131);
    for (size_t i = 0; i < r->n_iv; i++)
        assert_int_equal(r->iv[i].t, i);
    assert_int_equal(r->iv[0].requests, 2);
    assert_int_equal(r->iv[0].bytes_out, 29000);
    assert_int_equal(r->iv[1].requests, 0);
    assert_int_equal(r->iv[2].requests, 1);
    assert_int_equal(r->iv[2].errors, 1);
    assert_int_equal(r->iv[130].requests, 1);
    assert_int_equal(r->iv[130].bytes_in, 300);
}

/* The count of a tag's (or a second's) compressed histogram. */
static int64_t hist_count(const uint8_t *hist, size_t len)
{
    yb_hdr *h = yb_hdr_decode_compressed(hist, len);
    assert_non_null(h);
    int64_t n = yb_hdr_count(h);
    yb_hdr_free(h);
    return n;
}

/* Tagged seconds: one tag per operation with successes, named prefix +
 * operation (',' and spaces replaced), adding up to the second; failures
 * in none; merged by name; copied and freed whole.  Live buckets count
 * what the HdrHistograms count. */
static void test_tags(void **st)
{
    yb_recorder *r = *st;
    assert_int_equal(yb_recorder_tag(r, "w.ybc/sw1/"), 0); /* the first prefix */
    assert_int_equal(yb_recorder_keep_live(r), 0);
    uint32_t get = yb_ops_index(&r->ops, "Get");
    uint32_t set = yb_ops_index(&r->ops, "PATCH /a={1},{2}");
    uint64_t at[] = {0, 100 * MS, 200 * MS, 1200 * MS, 1300 * MS};
    uint32_t op[] = {get, set, set, get, get};
    for (size_t i = 0; i < 5; i++) {
        yb_result res = reused(T0 + at[i]);
        if (i == 4)
            res.err = YB_ERR_STATUS; /* a failure: no latency, no tag */
        yb_recorder_add(r, &res);
        yb_recorder_add_op(r, op[i], &res);
    }
    assert_int_equal(yb_recorder_finish(r), 0);
    assert_int_equal(r->n_iv, 2);
    assert_int_equal(r->iv[0].n_tags, 2);
    assert_string_equal(r->iv[0].tags[0].tag, "w.ybc/sw1/Get");
    assert_string_equal(r->iv[0].tags[1].tag, "w.ybc/sw1/PATCH_/a={1}_{2}");
    assert_int_equal(hist_count(r->iv[0].tags[0].hist, r->iv[0].tags[0].hist_len), 1);
    assert_int_equal(hist_count(r->iv[0].tags[1].hist, r->iv[0].tags[1].hist_len), 2);
    assert_int_equal(hist_count(r->iv[0].hist, r->iv[0].hist_len), 3);
    assert_int_equal(r->iv[1].n_tags, 1);
    assert_int_equal(hist_count(r->iv[1].tags[0].hist, r->iv[1].tags[0].hist_len), 1);
    assert_in_range(r->iv[0].tags[1].max_us, 16000, 16016); /* within HdrHistogram precision */

    /* the live buckets hold the HdrHistograms' values */
    for (int h = 0; h < YB_H__COUNT; h++) {
        uint64_t n = 0;
        for (int b = 0; b <= YB_LIVE_BOUNDS; b++)
            n += r->live->n[h][b];
        assert_int_equal(n, yb_hdr_count(r->h[h]));
    }
    assert_int_equal(r->live->sum_us[YB_H_E2E], 4 * 16000);

    yb_interval c;
    assert_int_equal(yb_interval_copy(&c, &r->iv[0]), 0);
    assert_int_equal(yb_interval_add(&c, &r->iv[1]), 0); /* Get joins Get */
    assert_int_equal(c.n_tags, 2);
    assert_int_equal(hist_count(c.tags[0].hist, c.tags[0].hist_len), 2);
    assert_int_equal(hist_count(c.hist, c.hist_len), 4);
    yb_interval_cleanup(&c);
    assert_null(c.tags);
}

/* series_counts_only: the per-second series counts, with no latency
 * histogram to compress each second; the totals keep their latency. */
static void test_series_counts_only(void **st)
{
    yb_recorder *r = *st;
    yb_result res;

    r->series_counts_only = 1;
    res = reused(T0);
    yb_recorder_add(r, &res);
    res = reused(T0 + 1500 * MS);
    yb_recorder_add(r, &res);
    assert_int_equal(yb_recorder_finish(r), 0);
    assert_int_equal(r->n_iv, 2);
    assert_int_equal(r->iv[0].requests, 1);
    assert_int_equal(r->iv[1].requests, 1);
    assert_null(r->iv[0].hist);
    assert_null(r->iv[1].hist);
    assert_int_equal(yb_hdr_count(r->h[YB_H_E2E]), 2);
}

static void test_merge_different_start(void **st)
{
    yb_recorder *a = *st, b;
    yb_result res;

    assert_int_equal(yb_recorder_init(&b), 0);
    /* b started 2 s before a: a's second 0 is b's second 2 */
    b.run_start = T0 - 2 * SEC;
    res = reused(T0 - 2 * SEC);          /* b second 0 */
    yb_recorder_add(&b, &res);
    res = reused(T0);                    /* b second 2 */
    yb_recorder_add(&b, &res);
    b.started = 5;
    b.cut_off = 3;
    b.sessions_opened = 4;
    b.retried = 6;

    res = reused(T0);                    /* a second 0 */
    yb_recorder_add(a, &res);
    res = reused(T0 + 1 * SEC);          /* a second 1 */
    res.err = YB_ERR_CLOSED;
    yb_recorder_add(a, &res);
    a->started = 2;

    assert_int_equal(yb_recorder_merge(a, &b), 0);
    assert_int_equal(a->run_start, T0 - 2 * SEC);
    assert_int_equal(a->run_end, T0 + 1 * SEC + 16 * MS);
    assert_int_equal(a->n_iv, 4);
    for (size_t i = 0; i < a->n_iv; i++)
        assert_int_equal(a->iv[i].t, i);
    assert_int_equal(a->iv[0].requests, 1);
    assert_int_equal(a->iv[1].requests, 0);
    assert_int_equal(a->iv[2].requests, 2); /* b's second 2 + a's second 0 */
    assert_int_equal(a->iv[3].requests, 1);
    assert_int_equal(a->iv[3].errors, 1);
    assert_int_equal(a->completed, 4);
    assert_int_equal(a->ok, 3);
    assert_int_equal(a->started, 7);
    assert_int_equal(a->cut_off, 3);
    assert_int_equal(a->retried, 6);
    assert_int_equal(a->sessions_opened, 4);
    assert_int_equal(a->errors[YB_ERR_CLOSED], 1);
    assert_int_equal(yb_recorder_status(a, 204), 4);
    /* the failure is in no success histogram, only in its own */
    assert_int_equal(yb_hdr_count(a->h[YB_H_E2E]), 3);
    assert_int_equal(yb_hdr_count(a->h[YB_H_E2E_FAILED]), 1);

    /* b later than the aggregate: b's second 0 lands at a's second 3 */
    yb_recorder_cleanup(&b);
    assert_int_equal(yb_recorder_init(&b), 0);
    b.run_start = T0 + 1 * SEC;
    res = reused(T0 + 1 * SEC);
    yb_recorder_add(&b, &res);
    assert_int_equal(yb_recorder_merge(a, &b), 0);
    assert_int_equal(a->run_start, T0 - 2 * SEC);
    assert_int_equal(a->iv[3].requests, 2);

    /* Merging into a fresh aggregate (run_start unset) takes src's start. */
    {
        yb_recorder agg;

        assert_int_equal(yb_recorder_init(&agg), 0);
        assert_int_equal(yb_recorder_merge(&agg, a), 0);
        assert_int_equal(agg.run_start, a->run_start);
        assert_int_equal(agg.n_iv, a->n_iv);
        assert_int_equal(agg.iv[2].requests, 2);
        assert_int_equal(agg.completed, a->completed);
        yb_recorder_cleanup(&agg);
    }
    yb_recorder_cleanup(&b);
}

/* A failed request enters no success figure: not end-to-end, service, any
 * phase, the per-second end-to-end (.hlog) or the ok byte counts; only
 * e2e_failed and the generator's lateness. */
static void test_failure_kept_apart(void **st)
{
    yb_recorder *r = *st;
    yb_result res = reused(T0);
    res.conn_start = res.send_start;
    res.connected = res.conn_start + 1 * MS;
    res.tls_done = res.connected + 1 * MS;
    res.status = 409;
    res.err = YB_ERR_STATUS;
    snprintf(res.reason, sizeof res.reason, "http 409");
    yb_recorder_add(r, &res);
    assert_int_equal(r->completed, 1);
    assert_int_equal(r->ok, 0);
    assert_int_equal(r->errors[YB_ERR_STATUS], 1);
    for (int i = 0; i < YB_H__COUNT; i++)
        if (i != YB_H_E2E_FAILED && i != YB_H_LATENESS)
            assert_int_equal(yb_hdr_count(r->h[i]), 0);
    assert_int_equal(yb_hdr_count(r->h[YB_H_E2E_FAILED]), 1);
    assert_int_equal(yb_hdr_percentile(r->h[YB_H_E2E_FAILED], 50), 16007);
    assert_int_equal(yb_hdr_count(r->h[YB_H_LATENESS]), 1);
    assert_int_equal(r->bytes_out, 14500);
    assert_int_equal(r->ok_bytes_out, 0);
    assert_int_equal(r->ok_bytes_in, 0);
    /* the session it opened still counts: it was paid */
    assert_int_equal(r->sessions_opened, 1);
    assert_int_equal(yb_recorder_finish(r), 0);
    assert_int_equal(r->iv[0].requests, 1);
    assert_int_equal(r->iv[0].errors, 1);
    assert_null(r->iv[0].hist); /* no success completed in that second */
    assert_string_equal(yb_result_reason(&res), "http 409");
    res.reason[0] = 0;
    assert_string_equal(yb_result_reason(&res), "status");
    res.err = YB_ERR_NONE;
    assert_string_equal(yb_result_reason(&res), "");
}

/* Reasons: counted per (class, text); the first YB_REASONS distinct kept,
 * the rest counted per class as other; per class, reasons + other ==
 * errors; merged across recorders under the same bound. */
static void test_reasons_bounded(void **st)
{
    yb_recorder *r = *st, b;
    yb_result res = reused(T0);
    uint64_t sum[YB_ERR__COUNT] = {0};

    yb_recorder_add(r, &res); /* a success: no reason table yet */
    assert_null(r->reasons);
    assert_int_equal(yb_recorder_reasons_published(r), 0);
    res.err = YB_ERR_CLOSED;
    for (int i = 0; i < 100; i++) {
        snprintf(res.reason, sizeof res.reason, "closed by peer after %d response bytes", i);
        res.done = T0 + (uint64_t)i * MS;
        yb_recorder_add(r, &res);
        yb_recorder_add(r, &res); /* twice each */
    }
    res.err = YB_ERR_TLS;
    snprintf(res.reason, sizeof res.reason, "tls: certificate verify failed");
    yb_recorder_add(r, &res); /* table full: other, in its own class */
    res.err = YB_ERR_PROTOCOL;
    res.reason[0] = 0; /* no reason given: its class stands for it */
    for (int i = 0; i < 7; i++)
        yb_recorder_add(r, &res);
    assert_int_equal(r->n_reasons, YB_REASONS);
    assert_int_equal(yb_recorder_reasons_published(r), YB_REASONS);
    assert_string_equal(r->reasons[0].text, "closed by peer after 0 response bytes");
    assert_int_equal(r->reasons[0].count, 2);
    assert_int_equal(r->reasons[0].first, T0);
    assert_int_equal(r->reasons[63].count, 2);
    assert_int_equal(r->reasons_other[YB_ERR_CLOSED], (100 - 64) * 2);
    assert_int_equal(r->reasons_other[YB_ERR_TLS], 1);
    assert_int_equal(r->reasons_other[YB_ERR_PROTOCOL], 7);
    assert_int_equal(r->errors[YB_ERR_PROTOCOL], 7);
    assert_int_equal(r->completed, 209);
    for (size_t i = 0; i < r->n_reasons; i++)
        sum[r->reasons[i].cls] += r->reasons[i].count;
    for (int c = 1; c < YB_ERR__COUNT; c++)
        assert_int_equal(sum[c] + r->reasons_other[c], r->errors[c]);

    /* merge: a reason both know adds up (first = the earlier); new ones
     * beyond the bound go to other */
    assert_int_equal(yb_recorder_init(&b), 0);
    b.run_start = T0;
    res.err = YB_ERR_CLOSED;
    snprintf(res.reason, sizeof res.reason, "closed by peer after 5 response bytes");
    res.done = T0 + 1 * MS;
    yb_recorder_add(&b, &res);
    snprintf(res.reason, sizeof res.reason, "something new");
    yb_recorder_add(&b, &res);
    res.err = YB_ERR_PROTOCOL;
    snprintf(res.reason, sizeof res.reason, "protocol: x");
    yb_recorder_add(&b, &res);
    yb_recorder_add(&b, &res);
    assert_int_equal(yb_recorder_merge(r, &b), 0);
    assert_int_equal(r->reasons[5].count, 3);
    assert_int_equal(r->reasons[5].first, T0 + 1 * MS);
    assert_int_equal(r->reasons_other[YB_ERR_CLOSED], (100 - 64) * 2 + 1);
    assert_int_equal(r->reasons_other[YB_ERR_PROTOCOL], 9);
    memset(sum, 0, sizeof sum);
    for (size_t i = 0; i < r->n_reasons; i++)
        sum[r->reasons[i].cls] += r->reasons[i].count;
    for (int c = 1; c < YB_ERR__COUNT; c++)
        assert_int_equal(sum[c] + r->reasons_other[c], r->errors[c]);
    yb_recorder_cleanup(&b);
}

/* Error responses: the first YB_ERR_SAMPLES kept with at most
 * YB_ERR_SAMPLE_BODY bytes of body each; merged, the first by time. */
static void test_error_samples(void **st)
{
    yb_recorder *r = *st, b;
    yb_result res = reused(T0);
    uint8_t big[3000];

    memset(big, 'x', sizeof big);
    res.err = YB_ERR_STATUS;
    res.status = 409;
    snprintf(res.reason, sizeof res.reason, "http 409");
    yb_recorder_error_body(r, &res, big, 0); /* no body: nothing kept, nothing allocated */
    assert_null(r->samples);
    for (int i = 0; i < 10; i++) {
        res.done = T0 + (uint64_t)(2 * i) * MS; /* r: 0, 2, 4, ... ms */
        yb_recorder_error_body(r, &res, big, i == 0 ? sizeof big : 5);
    }
    assert_int_equal(r->n_samples, YB_ERR_SAMPLES);
    assert_int_equal(r->samples[0].body_len, YB_ERR_SAMPLE_BODY); /* capped */
    assert_int_equal(r->samples[1].body_len, 5);
    assert_int_equal(r->samples[7].done, T0 + 14 * MS);
    assert_string_equal(r->samples[0].reason, "http 409");
    assert_int_equal(r->samples[0].status, 409);
    /* a success or an empty body is never kept */
    assert_int_equal(yb_recorder_init(&b), 0);
    res.err = YB_ERR_NONE;
    yb_recorder_error_body(&b, &res, big, 5);
    res.err = YB_ERR_STATUS;
    yb_recorder_error_body(&b, &res, big, 0);
    assert_int_equal(b.n_samples, 0);
    /* b: 1, 3, 5 ms; merged, the first 8 by time are 0 1 2 3 4 5 6 8 */
    for (int i = 0; i < 3; i++) {
        res.done = T0 + (uint64_t)(2 * i + 1) * MS;
        yb_recorder_error_body(&b, &res, (const uint8_t *)"b", 1);
    }
    assert_int_equal(yb_recorder_merge(r, &b), 0);
    assert_int_equal(r->n_samples, YB_ERR_SAMPLES);
    static const int want[] = {0, 1, 2, 3, 4, 5, 6, 8};
    for (int i = 0; i < YB_ERR_SAMPLES; i++)
        assert_int_equal(r->samples[i].done, T0 + (uint64_t)want[i] * MS);
    assert_memory_equal(r->samples[1].body, "b", 1);
    yb_recorder_cleanup(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test_setup_teardown(test_reused_session_phases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_session_phases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lazy_histograms, setup, teardown),
        cmocka_unit_test_setup_teardown(test_status_slots_and_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_intervals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tags, setup, teardown),
        cmocka_unit_test_setup_teardown(test_series_counts_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_merge_different_start, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failure_kept_apart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reasons_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_samples, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
