/* Per-worker recorder: turns the engine's timestamps into per-phase
 * histograms, counters and a per-second series. */
#include "config.h"
#include "stats/recorder.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_S UINT64_C(1000000000)
/* A per-second series longer than this (about 194 days) means a bogus
 * timestamp, not a long run: such a result is kept out of the series
 * rather than allowed to allocate gigabytes. */
#define MAX_INTERVALS (UINT64_C(1) << 24)

static const char *const HIST_NAMES[YB_H__COUNT] = {
    "e2e", "service", "connect", "tls", "h2", "write", "ttfb", "lateness", "sync",
    "sample_lateness", "e2e_failed", "generator_lateness", "session_wait", "chain",
};

const char *yb_hist_name(yb_hist_id id)
{
    return (unsigned)id < YB_H__COUNT ? HIST_NAMES[id] : "unknown";
}

const char *yb_result_reason(const yb_result *res)
{
    if (res->err == YB_ERR_NONE)
        return "";
    return res->reason[0] ? res->reason : yb_err_name(res->err);
}

/* FNV-1a: a cheap first test before comparing reason texts. */
static uint32_t text_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

/* Counts n occurrences of (cls, text) first seen at `first`: into its
 * entry, a new entry while there is room, else reasons_other[cls].  Only
 * the owner thread calls this; a new entry is published (release) after it
 * is written. */
static void reason_count(yb_recorder *r, yb_err_class cls, const char *text, uint64_t n,
                         uint64_t first, int merging)
{
    uint32_t h = text_hash(text);
    for (size_t i = 0; i < r->n_reasons; i++) {
        yb_reason_count *e = &r->reasons[i];
        if (e->hash == h && e->cls == cls && !strcmp(e->text, text)) {
            e->count += n;
            /* only a merge (no reader then) moves first: a published
             * entry's first never changes while the owner records */
            if (merging && first && (!e->first || first < e->first))
                e->first = first;
            return;
        }
    }
    if (r->n_reasons >= YB_REASONS ||
        (!r->reasons && !(r->reasons = calloc(YB_REASONS, sizeof *r->reasons)))) {
        r->reasons_other[cls] += n;
        return;
    }
    /* (the array is written before the entry's release below: a reader
     * that sees the entry sees the array) */
    yb_reason_count *e = &r->reasons[r->n_reasons];
    e->count = n;
    e->first = first;
    e->hash = h;
    e->cls = cls;
    snprintf(e->text, sizeof e->text, "%s", text);
    r->n_reasons++;
    atomic_store_explicit(&r->reasons_pub, r->n_reasons, memory_order_release);
}

void yb_recorder_count_reason(yb_recorder *r, yb_err_class cls, const char *text, uint64_t n,
                              uint64_t first)
{
    reason_count(r, cls, text, n, first, 1);
}

void yb_recorder_error_body(yb_recorder *r, const yb_result *res, const uint8_t *body, size_t len)
{
    if (res->err == YB_ERR_NONE || !body || !len)
        return;
    yb_err_sample *s = yb_recorder_sample_slot(r);
    if (!s)
        return;
    s->done = res->done;
    s->cls = res->err;
    s->status = res->status;
    s->grpc_status = res->grpc_status;
    snprintf(s->reason, sizeof s->reason, "%s", yb_result_reason(res));
    s->body_len = len < sizeof s->body ? len : sizeof s->body;
    memcpy(s->body, body, s->body_len);
}

yb_err_sample *yb_recorder_sample_slot(yb_recorder *r)
{
    if (r->n_samples >= YB_ERR_SAMPLES ||
        (!r->samples && !(r->samples = calloc(YB_ERR_SAMPLES, sizeof *r->samples))))
        return NULL;
    yb_err_sample *s = &r->samples[r->n_samples++];
    memset(s, 0, sizeof *s);
    return s;
}

/* Adds src's samples to dst's, keeping the first YB_ERR_SAMPLES of both
 * by completion time (each side is already in completion order). */
static void merge_samples(yb_recorder *dst, const yb_recorder *src)
{
    if (src->n_samples && !dst->samples &&
        !(dst->samples = calloc(YB_ERR_SAMPLES, sizeof *dst->samples)))
        return; /* (examples only: the counts are merged apart) */
    for (size_t k = 0; k < src->n_samples; k++) {
        const yb_err_sample *s = &src->samples[k];
        size_t at = dst->n_samples;
        while (at > 0 && dst->samples[at - 1].done > s->done)
            at--;
        if (at >= YB_ERR_SAMPLES)
            break; /* later than every kept one, and so are the rest */
        size_t n = dst->n_samples < YB_ERR_SAMPLES ? dst->n_samples : YB_ERR_SAMPLES - 1;
        memmove(&dst->samples[at + 1], &dst->samples[at], (n - at) * sizeof *s);
        dst->samples[at] = *s;
        if (dst->n_samples < YB_ERR_SAMPLES)
            dst->n_samples++;
    }
}

size_t yb_recorder_reasons_published(const yb_recorder *r)
{
    return atomic_load_explicit(&((yb_recorder *)r)->reasons_pub, memory_order_acquire);
}

int yb_recorder_init_lazy(yb_recorder *r)
{
    memset(r, 0, sizeof(*r));
    atomic_init(&r->reasons_pub, 0);
    r->tag_pending = -1;
    return 0;
}

int yb_recorder_fill(yb_recorder *r)
{
    for (int i = 0; i < YB_H__COUNT; i++)
        if (!r->h[i] && !(r->h[i] = yb_hdr_new_default()))
            return -ENOMEM;
    return 0;
}

int yb_recorder_init(yb_recorder *r)
{
    if (yb_recorder_init_lazy(r) < 0 || !(r->iv_h = yb_hdr_new_default()) ||
        yb_recorder_fill(r) < 0) {
        yb_recorder_cleanup(r);
        return -ENOMEM;
    }
    return 0;
}

uint64_t yb_recorder_status(const yb_recorder *r, int code)
{
    if (code < 0 || code >= YB_MAX_STATUS)
        return 0;
    if (r->status_tab)
        return r->status_tab[code];
    for (unsigned k = 0; k < r->n_status; k++)
        if (r->status_code[k] == code)
            return r->status_n[k];
    return 0;
}

int yb_recorder_count_status(yb_recorder *r, int code, uint64_t n)
{
    if (code < 0 || code >= YB_MAX_STATUS)
        code = 0;
    if (!r->status_tab) {
        for (unsigned k = 0; k < r->n_status; k++)
            if (r->status_code[k] == code) {
                r->status_n[k] += n;
                return 0;
            }
        if (r->n_status < YB_STATUS_SLOTS) {
            r->status_code[r->n_status] = (uint16_t)code;
            r->status_n[r->n_status++] = n;
            return 0;
        }
        if (!(r->status_tab = calloc(YB_MAX_STATUS, sizeof *r->status_tab)))
            return -ENOMEM;
        for (unsigned k = 0; k < r->n_status; k++)
            r->status_tab[r->status_code[k]] = r->status_n[k];
        r->n_status = 0;
    }
    r->status_tab[code] += n;
    return 0;
}

void yb_recorder_statuses(const yb_recorder *r, uint64_t *out)
{
    if (r->status_tab) {
        memcpy(out, r->status_tab, YB_MAX_STATUS * sizeof *out);
        return;
    }
    memset(out, 0, YB_MAX_STATUS * sizeof *out);
    for (unsigned k = 0; k < r->n_status; k++)
        out[r->status_code[k]] = r->status_n[k];
}

int yb_recorder_keep_live(yb_recorder *r)
{
    if (!r->live && !(r->live = calloc(1, sizeof *r->live)))
        return -ENOMEM;
    return 0;
}

void yb_recorder_cleanup(yb_recorder *r)
{
    int i;

    if (!r)
        return;
    for (i = 0; i < YB_H__COUNT; i++)
        yb_hdr_free(r->h[i]);
    for (size_t k = 0; k < r->n_iv; k++)
        yb_interval_cleanup(&r->iv[k]);
    free(r->iv);
    yb_hdr_free(r->iv_h);
    yb_ops_free(&r->ops);
    free(r->live);
    free(r->reasons);
    free(r->samples);
    free(r->status_tab);
    for (size_t k = 0; k < r->n_tag_prefix; k++)
        free(r->tag_prefix[k]);
    free(r->tag_prefix);
    free(r->tag_vals);
    memset(r, 0, sizeof(*r));
}

/* Makes iv[0..n) exist (new entries zeroed, t set).  Doubling keeps the
 * hot path's cost amortised O(1).  Returns 0 or -ENOMEM. */
static int ensure_intervals(yb_recorder *r, size_t n)
{
    if (n > r->cap_iv) {
        /* from a few: a fleet keeps a recorder per target, and most runs
         * are short */
        size_t cap = r->cap_iv ? r->cap_iv : 4;
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

/* Adds h into iv's compressed histogram and refreshes its percentiles.
 * Returns 0 or -ENOMEM. */
static int iv_add_hist(yb_interval *iv, const yb_hdr *h)
{
    if (yb_hdr_count(h) == 0)
        return 0;
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

/* Stores h as interval sec's compressed histogram (adding to what is
 * there).  Returns 0 or -ENOMEM. */
static int iv_store(yb_recorder *r, uint64_t sec, const yb_hdr *h)
{
    if (yb_hdr_count(h) == 0 || sec >= r->n_iv)
        return 0;
    return iv_add_hist(&r->iv[sec], h);
}

/* Adds the compressed histogram (hist, len) into tag `name` of iv (a new
 * tag at the end when iv has none of that name; name is copied).
 * Returns 0 or -ENOMEM. */
static int tag_add(yb_interval *iv, const char *name, const uint8_t *hist, size_t len)
{
    yb_interval_tag *t = NULL;
    for (size_t i = 0; i < iv->n_tags && !t; i++)
        if (!strcmp(iv->tags[i].tag, name))
            t = &iv->tags[i];
    yb_hdr *h = yb_hdr_decode_compressed(hist, len);
    if (!h)
        return -ENOMEM;
    int rc = 0;
    if (t) {
        yb_hdr *sum = yb_hdr_decode_compressed(t->hist, t->hist_len);
        if (!sum || yb_hdr_add(sum, h) < 0) {
            rc = -ENOMEM;
        } else {
            yb_hdr_free(h);
            h = sum;
            sum = NULL;
        }
        yb_hdr_free(sum);
    } else {
        yb_interval_tag *v = realloc(iv->tags, (iv->n_tags + 1) * sizeof *v);
        if (!v) {
            rc = -ENOMEM;
        } else {
            iv->tags = v;
            t = &v[iv->n_tags];
            memset(t, 0, sizeof *t);
            if (!(t->tag = strdup(name)))
                rc = -ENOMEM;
            else
                iv->n_tags++;
        }
    }
    uint8_t *buf;
    size_t blen;
    if (rc == 0 && (rc = yb_hdr_encode_compressed(h, &buf, &blen)) == 0) {
        free(t->hist);
        t->hist = buf;
        t->hist_len = blen;
        t->max_us = yb_hdr_max(h);
    }
    yb_hdr_free(h);
    return rc == 0 ? 0 : -ENOMEM;
}

int yb_interval_add(yb_interval *dst, const yb_interval *src)
{
    dst->requests += src->requests;
    dst->errors += src->errors;
    dst->bytes_out += src->bytes_out;
    dst->bytes_in += src->bytes_in;
    dst->notifications += src->notifications;
    dst->updates += src->updates;
    for (size_t i = 0; i < src->n_tags; i++)
        if (tag_add(dst, src->tags[i].tag, src->tags[i].hist, src->tags[i].hist_len) < 0)
            return -ENOMEM;
    if (!src->hist)
        return 0;
    yb_hdr *h = yb_hdr_decode_compressed(src->hist, src->hist_len);
    int rc = h ? iv_add_hist(dst, h) : -ENOMEM;
    yb_hdr_free(h);
    return rc;
}

void yb_interval_cleanup(yb_interval *iv)
{
    for (size_t i = 0; i < iv->n_tags; i++) {
        free(iv->tags[i].tag);
        free(iv->tags[i].hist);
    }
    free(iv->tags);
    free(iv->hist);
    iv->tags = NULL;
    iv->n_tags = 0;
    iv->hist = NULL;
    iv->hist_len = 0;
}

int yb_interval_copy(yb_interval *dst, const yb_interval *src)
{
    *dst = *src;
    dst->hist = NULL;
    dst->tags = NULL;
    dst->n_tags = 0;
    if (src->hist) {
        if (!(dst->hist = malloc(src->hist_len)))
            return -ENOMEM;
        memcpy(dst->hist, src->hist, src->hist_len);
    }
    for (size_t i = 0; i < src->n_tags; i++)
        if (tag_add(dst, src->tags[i].tag, src->tags[i].hist, src->tags[i].hist_len) < 0) {
            yb_interval_cleanup(dst);
            return -ENOMEM;
        }
    return 0;
}

/* The name of operation op of r, for a tag. */
static const char *op_name(const yb_recorder *r, uint32_t op)
{
    if (op == YB_OP_NONE)
        return "none";
    return op < r->ops.n ? r->ops.op[op].name : "other";
}

static int cmp_tag_val(const void *a, const void *b)
{
    const struct yb_tag_val *x = a, *y = b;
    if (x->tag != y->tag)
        return x->tag < y->tag ? -1 : 1;
    return x->op < y->op ? -1 : x->op > y->op;
}

/* Stores the open second's successes per operation as the tags of
 * second sec (dropped when sec is past the series).  Returns 0 or
 * -ENOMEM. */
static int tags_store(yb_recorder *r, uint64_t sec)
{
    size_t n = r->n_tag_vals;
    r->n_tag_vals = 0;
    if (!n || sec >= r->n_iv)
        return 0;
    yb_hdr *h = yb_hdr_new_default();
    if (!h)
        return -ENOMEM;
    qsort(r->tag_vals, n, sizeof *r->tag_vals, cmp_tag_val);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0;) {
        size_t j = i;
        yb_hdr_reset(h);
        for (; j < n && r->tag_vals[j].op == r->tag_vals[i].op &&
               r->tag_vals[j].tag == r->tag_vals[i].tag;
             j++)
            yb_hdr_record(h, r->tag_vals[j].us);
        char name[512];
        int len = snprintf(name, sizeof name, "%s%s", r->tag_prefix[r->tag_vals[i].tag],
                           op_name(r, r->tag_vals[i].op));
        /* the log format splits on ',' and white space */
        for (int k = 0; k < len && k < (int)sizeof name - 1; k++)
            if (name[k] == ',' || name[k] == ' ' || (unsigned char)name[k] < 0x21 ||
                (unsigned char)name[k] == 0x7f)
                name[k] = '_';
        uint8_t *buf;
        size_t blen;
        if ((rc = yb_hdr_encode_compressed(h, &buf, &blen)) == 0) {
            rc = tag_add(&r->iv[sec], name, buf, blen);
            free(buf);
        }
        i = j;
    }
    yb_hdr_free(h);
    return rc == 0 ? 0 : -ENOMEM;
}

int yb_recorder_tag(yb_recorder *r, const char *prefix)
{
    char **v = realloc(r->tag_prefix, (r->n_tag_prefix + 1) * sizeof *v);
    if (!v)
        return -ENOMEM;
    r->tag_prefix = v;
    if (!(v[r->n_tag_prefix] = strdup(prefix)))
        return -ENOMEM;
    return (int)r->n_tag_prefix++;
}

/* The second (since run_start) that time t falls in. */
static uint64_t second_of(const yb_recorder *r, uint64_t t)
{
    return t > r->run_start ? (t - r->run_start) / NS_PER_S : 0;
}

/* Seals seconds before upto: stores the open histogram in its second and
 * opens second upto (the series must reach it).  Returns 0 or -ENOMEM. */
static int seal_to(yb_recorder *r, uint64_t upto)
{
    if (upto <= r->iv_sec)
        return 0;
    int rc = iv_store(r, r->iv_sec, r->iv_h);
    if (tags_store(r, r->iv_sec) < 0)
        rc = -ENOMEM;
    yb_hdr_reset(r->iv_h);
    r->iv_sec = upto;
    return rc;
}

int yb_recorder_seal(yb_recorder *r, uint64_t now, int final)
{
    uint64_t upto = second_of(r, now) + (final ? 1 : 0);
    if (upto > MAX_INTERVALS)
        upto = MAX_INTERVALS;
    if (upto <= r->sealed)
        return 0;
    if (ensure_intervals(r, (size_t)upto) < 0)
        return -ENOMEM;
    int rc = seal_to(r, upto);
    r->sealed = upto;
    return rc;
}

int yb_recorder_finish(yb_recorder *r)
{
    if (!r->iv_h)
        return 0;
    int rc = iv_store(r, r->iv_sec, r->iv_h);
    if (tags_store(r, r->iv_sec) < 0)
        rc = -ENOMEM;
    yb_hdr_reset(r->iv_h);
    return rc;
}

/* The phase's end points, or 0 when it has none. */
/* Inline in the recording below, where each call names its phase: the
 * switch then folds away (yb_recorder_add pays ten of them per request). */
static inline int phase_ends(const yb_result *res, yb_hist_id id, uint64_t *start, uint64_t *end)
{
    uint64_t setup_end;

    switch (id) {
    case YB_H_E2E: *start = res->due; *end = res->done; break;
    case YB_H_SERVICE: *start = res->send_start; *end = res->done; break;
    case YB_H_CONNECT: *start = res->conn_start; *end = res->connected; break;
    case YB_H_TLS: *start = res->connected; *end = res->tls_done; break;
    case YB_H_H2:
        *start = res->tls_done ? res->tls_done : res->connected;
        *end = res->h2_ready;
        break;
    case YB_H_WRITE:
        /* The write phase starts when the session is usable: a request
         * that opened its session has send_start at the open, and the
         * set-up time belongs to the connect/tls/h2 phases, not to writing. */
        setup_end = res->h2_ready ? res->h2_ready : res->tls_done ? res->tls_done : res->connected;
        *start = res->send_start;
        if (*start && setup_end > *start)
            *start = setup_end;
        *end = res->sent;
        break;
    case YB_H_TTFB: *start = res->sent; *end = res->first_byte; break;
    case YB_H_LATENESS:
        /* A request sent before its due time (closed loop, clock
         * granularity) was not late at all. */
        *start = res->due;
        *end = res->send_start > res->due ? res->send_start : res->due;
        if (!res->send_start)
            return 0;
        break;
    /* ... split at the hand-over to the session pool: before it the
     * generator was late, after it the request waited for a session or
     * stream */
    case YB_H_GEN_LATE:
        *start = res->due;
        *end = res->issued > res->due ? res->issued : res->due;
        if (!res->issued || !res->send_start)
            return 0;
        break;
    case YB_H_SESSION_WAIT:
        *start = res->issued > res->due ? res->issued : res->due;
        *end = res->send_start > *start ? res->send_start : *start;
        if (!res->issued || !res->send_start)
            return 0;
        break;
    default: return 0;
    }
    return 1;
}

static inline int phase_ns(const yb_result *res, yb_hist_id id, uint64_t *ns)
{
    uint64_t start, end;

    /* an inverted pair (a clock mix-up in the caller) is not a duration */
    if (!phase_ends(res, id, &start, &end) || start == 0 || end == 0 || end < start)
        return 0;
    *ns = end - start;
    return 1;
}

int yb_result_phase(const yb_result *res, yb_hist_id id, uint64_t *ns)
{
    return phase_ns(res, id, ns);
}

/* Records a duration rounded up to whole µs, so a sub-microsecond phase
 * still counts as the histogram's 1 µs floor rather than vanishing. */
static int64_t ns_to_us(uint64_t ns)
{
    uint64_t us = (ns + 999) / 1000;
    return us == 0 ? 1 : (int64_t)(us > INT64_MAX ? INT64_MAX : us);
}

/* Fixed bucket bounds of the live histograms, in µs (ascending). */
const uint64_t yb_live_bounds_us[YB_LIVE_BOUNDS] = {
    10,     25,     50,      100,     250,     500,      1000,     2500,     5000,    10000,  25000,
    50000,  100000, 250000,  500000,  1000000, 2500000,  5000000,  10000000, 30000000, 60000000,
};

/* The one place a value enters a latency histogram: the HdrHistogram and,
 * when kept, the live fixed buckets, so both count the same values. */
static void hist_record(yb_recorder *r, yb_hist_id id, int64_t us)
{
    if (!r->h[id] && !(r->h[id] = yb_hdr_new_default()))
        return; /* a lazy recorder's (yb_recorder_init_lazy), out of memory */
    yb_hdr_record(r->h[id], us);
    if (r->live) {
        size_t b = 0;
        while (b < YB_LIVE_BOUNDS && (uint64_t)us > yb_live_bounds_us[b])
            b++;
        r->live->n[id][b]++;
        r->live->sum_us[id] += (uint64_t)us;
    }
}

static void record_ns(yb_recorder *r, yb_hist_id id, uint64_t ns)
{
    hist_record(r, id, ns_to_us(ns));
}

/* Keeps the success yb_recorder_add just put in the open second for the
 * tagged second: prefix `tag`, operation op. */
static void tag_keep(yb_recorder *r, uint32_t op, uint32_t tag)
{
    int64_t us = r->tag_pending;
    r->tag_pending = -1;
    if (tag >= r->n_tag_prefix || us < 0)
        return;
    if (r->n_tag_vals == r->cap_tag_vals) {
        size_t cap = r->cap_tag_vals ? 2 * r->cap_tag_vals : 256;
        struct yb_tag_val *v = realloc(r->tag_vals, cap * sizeof *v);
        if (!v)
            return; /* the tags then miss it: only when memory ran out */
        r->tag_vals = v;
        r->cap_tag_vals = cap;
    }
    r->tag_vals[r->n_tag_vals++] = (struct yb_tag_val){tag, op, us};
}

void yb_recorder_add_op(yb_recorder *r, uint32_t op, const yb_result *res)
{
    yb_recorder_add_op_as(r, op, 0, res);
}

void yb_recorder_add_op_as(yb_recorder *r, uint32_t op, uint32_t tag, const yb_result *res)
{
    tag_keep(r, op, tag);
    uint64_t ns;
    int ok = res->err == YB_ERR_NONE;
    int64_t us = ok && phase_ns(res, YB_H_E2E, &ns) ? ns_to_us(ns) : -1;
    yb_ops_record(&r->ops, op, ok, res->bytes_out + res->bytes_in, us);
}

static void add_success_phases(yb_recorder *r, const yb_result *res);
static void interval_add(yb_recorder *r, const yb_result *res, yb_err_class err);

/* The set-up phases res paid (connect, TLS, HTTP/2): inline, so each
 * phase_ns knows its phase, as in add_success_phases. */
static inline void add_setup_phases(yb_recorder *r, const yb_result *res)
{
    uint64_t ns;

    if (phase_ns(res, YB_H_CONNECT, &ns))
        record_ns(r, YB_H_CONNECT, ns);
    if (phase_ns(res, YB_H_TLS, &ns))
        record_ns(r, YB_H_TLS, ns);
    if (phase_ns(res, YB_H_H2, &ns))
        record_ns(r, YB_H_H2, ns);
}

/* The session set-up res paid: sessions_opened, and its TLS handshake. */
static void count_setup(yb_recorder *r, const yb_result *res)
{
    if (res->conn_start)
        r->sessions_opened++;
    if (res->tls_done) {
        if (res->tls_resumed)
            r->tls_resumed++;
        else
            r->tls_full++;
    }
}

void yb_recorder_add(yb_recorder *r, const yb_result *res)
{
    yb_err_class err = res->err;
    uint64_t ns;

    if ((unsigned)err >= YB_ERR__COUNT)
        err = YB_ERR_OTHER;
    r->tag_pending = -1;
    r->completed++;
    if (err == YB_ERR_NONE) {
        r->ok++;
        r->ok_bytes_out += res->bytes_out;
        r->ok_bytes_in += res->bytes_in;
    } else {
        r->errors[err]++;
        reason_count(r, err, res->reason[0] ? res->reason : yb_err_name(err), 1, res->done, 0);
    }
    /* no valid status line: counted with "none"; a status that finds
     * neither a slot nor memory for the table is lost (only when memory ran
     * out, as the tags' values) */
    (void)yb_recorder_count_status(r, res->status, 1);
    if (res->grpc_status >= 0)
        r->grpc[res->grpc_status < YB_GRPC_CODES ? res->grpc_status : YB_GRPC_CODES]++;
    r->bytes_out += res->bytes_out;
    r->bytes_in += res->bytes_in;
    count_setup(r, res);
    if (res->done > r->run_end)
        r->run_end = res->done;

    /* Lateness is the generator's (when it sent), whatever the answer. */
    if (phase_ns(res, YB_H_LATENESS, &ns))
        record_ns(r, YB_H_LATENESS, ns);
    if (phase_ns(res, YB_H_GEN_LATE, &ns))
        record_ns(r, YB_H_GEN_LATE, ns);
    if (phase_ns(res, YB_H_SESSION_WAIT, &ns))
        record_ns(r, YB_H_SESSION_WAIT, ns);
    if (err != YB_ERR_NONE) {
        /* A failure is no latency sample of the target: how long it took
         * to fail is a figure of its own. */
        if (phase_ns(res, YB_H_E2E, &ns))
            record_ns(r, YB_H_E2E_FAILED, ns);
    } else {
        add_success_phases(r, res);
    }
    interval_add(r, res, err);
}

void yb_recorder_setup(yb_recorder *r, const yb_result *res)
{
    count_setup(r, res);
    if (res->err == YB_ERR_NONE) /* a failed set-up's phases are no latency samples */
        add_setup_phases(r, res);
}

/* The latency histograms of a successful request. */
static void add_success_phases(yb_recorder *r, const yb_result *res)
{
    uint64_t ns;

    /* one by one, so that each phase_ns knows its phase: every phase
     * before YB_H_LATENESS */
    _Static_assert(YB_H_TTFB + 1 == YB_H_LATENESS, "a phase is missing below");
    if (phase_ns(res, YB_H_E2E, &ns))
        record_ns(r, YB_H_E2E, ns);
    if (phase_ns(res, YB_H_SERVICE, &ns))
        record_ns(r, YB_H_SERVICE, ns);
    add_setup_phases(r, res);
    if (phase_ns(res, YB_H_WRITE, &ns))
        record_ns(r, YB_H_WRITE, ns);
    if (phase_ns(res, YB_H_TTFB, &ns))
        record_ns(r, YB_H_TTFB, ns);
    if (res->sync_ns) {
        uint64_t us = (res->sync_ns + 999) / 1000;
        hist_record(r, YB_H_SYNC, us > INT64_MAX ? INT64_MAX : (int64_t)us);
    }
}

/* The per-second series: every completion counts; only successes enter
 * the second's end-to-end histogram (the .hlog). */
static void interval_add(yb_recorder *r, const yb_result *res, yb_err_class err)
{
    if (res->done) {
        uint64_t sec = second_of(r, res->done);

        /* a result timed in a sealed second joins the open one: what was
         * sealed has been handed on and stays as it was */
        if (sec < r->sealed)
            sec = r->iv_sec;
        if (sec < MAX_INTERVALS && ensure_intervals(r, (size_t)sec + 1) == 0) {
            yb_interval *iv = &r->iv[sec];

            iv->requests++;
            if (err != YB_ERR_NONE)
                iv->errors++;
            iv->bytes_out += res->bytes_out;
            iv->bytes_in += res->bytes_in;
            /* A second is sealed once a later one starts (completions come
             * in time order). */
            seal_to(r, sec);
            if (err == YB_ERR_NONE && res->due && res->done >= res->due &&
                !r->series_counts_only) {
                uint64_t us = (res->done - res->due + 999) / 1000;
                /* a lazy recorder makes it with the first (a fleet's
                 * per-target ones keep counts only: never) */
                if (!r->iv_h && !(r->iv_h = yb_hdr_new_default()))
                    return; /* out of memory: the second misses it */
                yb_hdr_record(r->iv_h, us ? (int64_t)us : 1);
                r->tag_pending = us ? (int64_t)us : 1; /* for its operation's tag */
            }
        }
    }
}

void yb_recorder_chain(yb_recorder *r, int ok, uint64_t ns)
{
    if (!ok) {
        r->chains_failed++;
        return;
    }
    r->chains_ok++;
    uint64_t us = ns / 1000;
    if (!r->h[YB_H_CHAIN] && !(r->h[YB_H_CHAIN] = yb_hdr_new_default()))
        return; /* a lazy recorder's (yb_recorder_init_lazy), out of memory */
    yb_hdr_record(r->h[YB_H_CHAIN], us ? (int64_t)us : 1);
}

void yb_recorder_notify(yb_recorder *r, uint64_t now, int64_t lateness_ns, uint64_t n_updates)
{
    r->notifications++;
    r->updates += n_updates;
    if (lateness_ns >= 0) {
        uint64_t us = ((uint64_t)lateness_ns + 999) / 1000;
        hist_record(r, YB_H_SAMPLE_LATENESS, us ? (int64_t)us : 1);
    }
    uint64_t sec = second_of(r, now);
    if (sec < r->sealed)
        sec = r->iv_sec; /* a sealed second stays as it was */
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

int yb_recorder_extend(yb_recorder *r, size_t n)
{
    return ensure_intervals(r, n);
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
    for (size_t k = 0; k < src->n_iv; k++)
        if ((rc = yb_interval_add(&dst->iv[k + sshift], &src->iv[k])) < 0)
            return rc;

    for (i = 0; i < YB_H__COUNT; i++) {
        if (!src->h[i])
            continue; /* a lazy recorder's, empty */
        if ((!dst->h[i] && !(dst->h[i] = yb_hdr_new_default())) || yb_hdr_add(dst->h[i], src->h[i]) < 0)
            return -ENOMEM;
    }
    dst->started += src->started;
    dst->completed += src->completed;
    dst->ok += src->ok;
    for (i = 0; i < YB_ERR__COUNT; i++)
        dst->errors[i] += src->errors[i];
    if (src->status_tab) {
        for (i = 0; i < YB_MAX_STATUS; i++)
            if (src->status_tab[i] && yb_recorder_count_status(dst, i, src->status_tab[i]) < 0)
                return -ENOMEM;
    } else {
        for (unsigned k = 0; k < src->n_status; k++)
            if (yb_recorder_count_status(dst, src->status_code[k], src->status_n[k]) < 0)
                return -ENOMEM;
    }
    for (i = 0; i <= YB_GRPC_CODES; i++)
        dst->grpc[i] += src->grpc[i];
    dst->bytes_out += src->bytes_out;
    dst->bytes_in += src->bytes_in;
    dst->ok_bytes_out += src->ok_bytes_out;
    dst->ok_bytes_in += src->ok_bytes_in;
    for (size_t k = 0; k < src->n_reasons; k++)
        reason_count(dst, src->reasons[k].cls, src->reasons[k].text, src->reasons[k].count,
                     src->reasons[k].first, 1);
    for (i = 0; i < YB_ERR__COUNT; i++)
        dst->reasons_other[i] += src->reasons_other[i];
    merge_samples(dst, src);
    dst->sessions_opened += src->sessions_opened;
    dst->reconnect_backoffs += src->reconnect_backoffs;
    dst->tls_full += src->tls_full;
    dst->tls_resumed += src->tls_resumed;
    dst->cut_off += src->cut_off;
    dst->unsent += src->unsent;
    dst->gen_invol_switches += src->gen_invol_switches;
    dst->gen_run_ns += src->gen_run_ns;
    dst->gen_io_threads += src->gen_io_threads;
    dst->gen_ring_threads += src->gen_ring_threads;
    dst->gen_runq_wait_ns += src->gen_runq_wait_ns;
    dst->cpu_ticks += src->cpu_ticks;
    dst->cpu_steal_ticks += src->cpu_steal_ticks;
    dst->retried += src->retried;
    dst->notifications += src->notifications;
    dst->updates += src->updates;
    dst->chains_ok += src->chains_ok;
    dst->chains_failed += src->chains_failed;
    dst->run_start = base;
    if (src->run_end > dst->run_end)
        dst->run_end = src->run_end;
    return yb_ops_merge(&dst->ops, &src->ops);
}
