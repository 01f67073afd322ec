/* Per-worker recorder: turns the engine's timestamps into per-phase
 * histograms, counters and a per-second series. */
#include "config.h"
#include "stats/recorder.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_S UINT64_C(1000000000)
/* A per-second series longer than this (about 194 days) means a bogus
 * timestamp, not a long run: such a result is kept out of the series
 * rather than allowed to allocate gigabytes. */
#define MAX_INTERVALS (UINT64_C(1) << 24)

static const char *const HIST_NAMES[YB_H__COUNT] = {
    "e2e", "service", "connect", "tls", "h2", "write", "ttfb", "lateness", "sync",
    "sample_lateness",
};

const char *yb_hist_name(yb_hist_id id)
{
    return (unsigned)id < YB_H__COUNT ? HIST_NAMES[id] : "unknown";
}

int yb_recorder_init(yb_recorder *r)
{
    int i;

    memset(r, 0, sizeof(*r));
    for (i = 0; i < YB_H__COUNT; i++) {
        r->h[i] = yb_hdr_new_default();
        if (!r->h[i])
            goto fail;
    }
    r->iv_h = yb_hdr_new_default();
    if (!r->iv_h)
        goto fail;
    return 0;
fail:
    yb_recorder_cleanup(r);
    return -ENOMEM;
}

void yb_recorder_cleanup(yb_recorder *r)
{
    int i;

    if (!r)
        return;
    for (i = 0; i < YB_H__COUNT; i++)
        yb_hdr_free(r->h[i]);
    for (size_t k = 0; k < r->n_iv; k++)
        free(r->iv[k].hist);
    free(r->iv);
    yb_hdr_free(r->iv_h);
    memset(r, 0, sizeof(*r));
}

/* Makes iv[0..n) exist (new entries zeroed, t set).  Doubling keeps the
 * hot path's cost amortised O(1).  Returns 0 or -ENOMEM. */
static int ensure_intervals(yb_recorder *r, size_t n)
{
    if (n > r->cap_iv) {
        size_t cap = r->cap_iv ? r->cap_iv : 64;
        yb_interval *iv;

        while (cap < n)
            cap *= 2;
        iv = realloc(r->iv, cap * sizeof(*iv));
        if (!iv)
            return -ENOMEM;
        r->iv = iv;
        r->cap_iv = cap;
    }
    for (size_t i = r->n_iv; i < n; i++) {
        memset(&r->iv[i], 0, sizeof(r->iv[i]));
        r->iv[i].t = i;
    }
    if (n > r->n_iv)
        r->n_iv = n;
    return 0;
}

/* Stores h as interval sec's compressed histogram (adding to what is
 * there) and refreshes its percentiles.  Returns 0 or -ENOMEM. */
static int iv_store(yb_recorder *r, uint64_t sec, const yb_hdr *h)
{
    if (yb_hdr_count(h) == 0 || sec >= r->n_iv)
        return 0;
    yb_interval *iv = &r->iv[sec];
    yb_hdr *sum = NULL;
    if (iv->hist) {
        sum = yb_hdr_decode_compressed(iv->hist, iv->hist_len);
        if (!sum || yb_hdr_add(sum, h) < 0) {
            yb_hdr_free(sum);
            return -ENOMEM;
        }
        h = sum;
    }
    uint8_t *buf;
    size_t len;
    int rc = yb_hdr_encode_compressed(h, &buf, &len);
    if (rc == 0) {
        free(iv->hist);
        iv->hist = buf;
        iv->hist_len = len;
        iv->p50_us = yb_hdr_percentile(h, 50);
        iv->p99_us = yb_hdr_percentile(h, 99);
        iv->max_us = yb_hdr_max(h);
    }
    yb_hdr_free(sum);
    return rc == 0 ? 0 : -ENOMEM;
}

int yb_recorder_finish(yb_recorder *r)
{
    if (!r->iv_h)
        return 0;
    int rc = iv_store(r, r->iv_sec, r->iv_h);
    yb_hdr_reset(r->iv_h);
    return rc;
}

/* Records end - start (ns) as µs when both timestamps happened.  Rounded
 * up, so a sub-microsecond phase still counts as the histogram's 1 µs
 * floor rather than vanishing; an inverted pair (a clock mix-up in the
 * caller) is not a duration and is dropped. */
static void phase(yb_recorder *r, yb_hist_id id, uint64_t start, uint64_t end)
{
    uint64_t us;

    if (start == 0 || end == 0 || end < start)
        return;
    us = (end - start + 999) / 1000;
    yb_hdr_record(r->h[id], us == 0 ? 1 : (int64_t)(us > INT64_MAX ? INT64_MAX : us));
}

void yb_recorder_add(yb_recorder *r, const yb_result *res)
{
    yb_err_class err = res->err;
    uint64_t setup_end, write_start;

    if ((unsigned)err >= YB_ERR__COUNT)
        err = YB_ERR_OTHER;
    r->completed++;
    if (err == YB_ERR_NONE)
        r->ok++;
    else
        r->errors[err]++;
    if (res->status >= 0 && res->status < YB_MAX_STATUS)
        r->status[res->status]++;
    else
        r->status[0]++; /* no valid status line: counted with "none" */
    if (res->grpc_status >= 0)
        r->grpc[res->grpc_status < YB_GRPC_CODES ? res->grpc_status : YB_GRPC_CODES]++;
    r->bytes_out += res->bytes_out;
    r->bytes_in += res->bytes_in;
    if (res->conn_start)
        r->sessions_opened++;
    if (res->tls_done) {
        if (res->tls_resumed)
            r->tls_resumed++;
        else
            r->tls_full++;
    }
    if (res->done > r->run_end)
        r->run_end = res->done;

    phase(r, YB_H_E2E, res->due, res->done);
    phase(r, YB_H_SERVICE, res->send_start, res->done);
    phase(r, YB_H_CONNECT, res->conn_start, res->connected);
    phase(r, YB_H_TLS, res->connected, res->tls_done);
    phase(r, YB_H_H2, res->tls_done ? res->tls_done : res->connected, res->h2_ready);
    /* The write phase starts when the session is usable: a request that
     * opened its session has send_start at the open, and the set-up time
     * belongs to the connect/tls/h2 histograms, not to writing. */
    setup_end = res->h2_ready ? res->h2_ready : res->tls_done ? res->tls_done : res->connected;
    write_start = res->send_start;
    if (write_start && setup_end > write_start)
        write_start = setup_end;
    phase(r, YB_H_WRITE, write_start, res->sent);
    phase(r, YB_H_TTFB, res->sent, res->first_byte);
    /* Lateness: a request sent before its due time (closed loop, clock
     * granularity) was not late at all, so it records the 1 µs floor. */
    if (res->due && res->send_start)
        phase(r, YB_H_LATENESS, res->due, res->send_start > res->due ? res->send_start : res->due);
    if (res->sync_ns) {
        uint64_t us = (res->sync_ns + 999) / 1000;
        yb_hdr_record(r->h[YB_H_SYNC], us > INT64_MAX ? INT64_MAX : (int64_t)us);
    }

    if (res->done) {
        uint64_t sec = res->done > r->run_start ? (res->done - r->run_start) / NS_PER_S : 0;

        if (sec < MAX_INTERVALS && ensure_intervals(r, (size_t)sec + 1) == 0) {
            yb_interval *iv = &r->iv[sec];

            iv->requests++;
            if (err != YB_ERR_NONE)
                iv->errors++;
            iv->bytes_out += res->bytes_out;
            iv->bytes_in += res->bytes_in;
            /* A second is sealed once a later one starts (completions come
             * in time order; a straggler joins the open second). */
            if (sec > r->iv_sec) {
                iv_store(r, r->iv_sec, r->iv_h);
                yb_hdr_reset(r->iv_h);
                r->iv_sec = sec;
            }
            if (res->due && res->done >= res->due) {
                uint64_t us = (res->done - res->due + 999) / 1000;
                yb_hdr_record(r->iv_h, us ? (int64_t)us : 1);
            }
        }
    }
}

void yb_recorder_notify(yb_recorder *r, uint64_t now, int64_t lateness_ns, uint64_t n_updates)
{
    r->notifications++;
    r->updates += n_updates;
    if (lateness_ns >= 0) {
        uint64_t us = ((uint64_t)lateness_ns + 999) / 1000;
        yb_hdr_record(r->h[YB_H_SAMPLE_LATENESS], us ? (int64_t)us : 1);
    }
    uint64_t sec = now > r->run_start ? (now - r->run_start) / NS_PER_S : 0;
    if (sec < MAX_INTERVALS && ensure_intervals(r, (size_t)sec + 1) == 0) {
        r->iv[sec].notifications++;
        r->iv[sec].updates += n_updates;
    }
}

/* Whole seconds from base to start, to the nearest second: recorders of
 * one run start within milliseconds of each other, so rounding puts each
 * second where most of its requests really completed. */
static size_t shift_s(uint64_t base, uint64_t start)
{
    return (size_t)((start - base + NS_PER_S / 2) / NS_PER_S);
}

int yb_recorder_merge(yb_recorder *dst, const yb_recorder *src)
{
    uint64_t base;
    size_t dshift = 0, sshift = 0, need;
    int i, rc;

    /* run_start == 0 means "never set": the other side's start wins. */
    if (dst->run_start == 0)
        base = src->run_start;
    else if (src->run_start == 0)
        base = dst->run_start;
    else
        base = dst->run_start < src->run_start ? dst->run_start : src->run_start;
    if (dst->run_start)
        dshift = shift_s(base, dst->run_start);
    if (src->run_start)
        sshift = shift_s(base, src->run_start);

    need = dst->n_iv ? dst->n_iv + dshift : 0;
    if (src->n_iv && src->n_iv + sshift > need)
        need = src->n_iv + sshift;
    if (need > dst->n_iv) {
        size_t old = dst->n_iv;

        rc = ensure_intervals(dst, need);
        if (rc < 0)
            return rc;
        if (dshift && old) {
            memmove(&dst->iv[dshift], &dst->iv[0], old * sizeof(dst->iv[0]));
            memset(&dst->iv[0], 0, dshift * sizeof(dst->iv[0]));
            for (size_t k = 0; k < dst->n_iv; k++)
                dst->iv[k].t = k;
        }
    }
    for (size_t k = 0; k < src->n_iv; k++) {
        yb_interval *d = &dst->iv[k + sshift];

        d->requests += src->iv[k].requests;
        d->errors += src->iv[k].errors;
        d->bytes_out += src->iv[k].bytes_out;
        d->bytes_in += src->iv[k].bytes_in;
        d->notifications += src->iv[k].notifications;
        d->updates += src->iv[k].updates;
        if (src->iv[k].hist) {
            yb_hdr *h = yb_hdr_decode_compressed(src->iv[k].hist, src->iv[k].hist_len);
            rc = h ? iv_store(dst, k + sshift, h) : -ENOMEM;
            yb_hdr_free(h);
            if (rc < 0)
                return rc;
        }
    }

    for (i = 0; i < YB_H__COUNT; i++)
        if (yb_hdr_add(dst->h[i], src->h[i]) < 0)
            return -ENOMEM; /* only when a histogram is missing */
    dst->started += src->started;
    dst->completed += src->completed;
    dst->ok += src->ok;
    for (i = 0; i < YB_ERR__COUNT; i++)
        dst->errors[i] += src->errors[i];
    for (i = 0; i < YB_MAX_STATUS; i++)
        dst->status[i] += src->status[i];
    for (i = 0; i <= YB_GRPC_CODES; i++)
        dst->grpc[i] += src->grpc[i];
    dst->bytes_out += src->bytes_out;
    dst->bytes_in += src->bytes_in;
    dst->sessions_opened += src->sessions_opened;
    dst->tls_full += src->tls_full;
    dst->tls_resumed += src->tls_resumed;
    dst->cut_off += src->cut_off;
    dst->unsent += src->unsent;
    dst->retried += src->retried;
    dst->notifications += src->notifications;
    dst->updates += src->updates;
    dst->run_start = base;
    if (src->run_end > dst->run_end)
        dst->run_end = src->run_end;
    return 0;
}
