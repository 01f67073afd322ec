/* Shard reports merged into the report of the whole run (see merge.h). */
#include "config.h"
#include "report/merge.h"
#include "report/reader.h"
#include "report/threshold.h"
#include "util/json_type.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define SCHEMA "yangblast-report/1"
#define NS_PER_S 1000000000.0
/* Every rebuilt recorder's t=0 is BASE_NS plus its start's distance from
 * the earliest one (run_start 0 means "never set" to the recorder). */
#define BASE_NS UINT64_C(1000000000)
/* Shards of one run start within seconds of each other; starts further
 * apart than this are not one run (and would shift the series by as many
 * empty seconds). */
#define MAX_SPREAD_NS (INT64_C(86400) * 1000000000)
#define MAX_INTERVALS 1000000    /* seconds of series per report (11 days) */
#define MAX_HIST_B64 (1u << 20)  /* one histogram's base64 */
#define MAX_CURVE 100000         /* run.target_rate_curve points */
#define MAX_PARTS 100000         /* targets or workloads rows in all */
#define MAX_ACCEPT 1000          /* run.accept codes */

/* Where a report is being read: its name and the message of the first
 * problem. */
typedef struct {
    const char *path;
    char *err;
    size_t errlen;
} rd;

static json_t *get(rd *d, const json_t *o, const char *prefix, const char *key, json_type t)
{
    return yb_report_member(d->path, o, prefix, key, t, d->err, d->errlen);
}

static int get_u64(rd *d, const json_t *o, const char *prefix, const char *key, uint64_t *out)
{
    json_t *v = get(d, o, prefix, key, JSON_INTEGER);
    if (!v)
        return -1;
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

/* A number >= 0 that is finite and at most max. */
static int get_num(rd *d, const json_t *o, const char *prefix, const char *key, double max,
                   double *out)
{
    json_t *v = get(d, o, prefix, key, JSON_REAL);
    if (!v)
        return -1;
    *out = json_number_value(v);
    if (!(*out <= max)) {
        snprintf(d->err, d->errlen, "%s: %s%s: expected a number up to %g, found %g", d->path,
                 prefix, key, max, *out);
        return -1;
    }
    return 0;
}

static int get_bool(rd *d, const json_t *o, const char *prefix, const char *key, int *out)
{
    json_t *v = get(d, o, prefix, key, JSON_TRUE);
    if (!v)
        return -1;
    *out = json_is_true(v);
    return 0;
}

/* A string or null (NULL); -1 for anything else. */
static int get_str_or_null(rd *d, const json_t *o, const char *prefix, const char *key,
                           const char **out)
{
    json_t *v = json_object_get(o, key);
    if (v && json_is_null(v)) {
        *out = NULL;
        return 0;
    }
    if (!(v = get(d, o, prefix, key, JSON_STRING)))
        return -1;
    *out = json_string_value(v);
    return 0;
}

/* Histogram key of object o: the decoded histogram, and with raw its
 * compressed bytes (malloc'd); NULL with a message for anything that is
 * not a base64 V2 compressed HdrHistogram. */
static yb_hdr *get_hist(rd *d, const json_t *o, const char *prefix, const char *key,
                        uint8_t **raw, size_t *rawlen)
{
    json_t *v = get(d, o, prefix, key, JSON_STRING);
    uint8_t *buf = NULL;
    size_t len = 0;
    yb_hdr *h = NULL;
    if (!v)
        return NULL;
    if (json_string_length(v) <= MAX_HIST_B64 &&
        yb_base64_decode(json_string_value(v), json_string_length(v), &buf, &len) == 0)
        h = yb_hdr_decode_compressed(buf, len);
    if (!h) {
        free(buf);
        snprintf(d->err, d->errlen,
                 "%s: %s%s: not an HdrHistogram (base64 of the V2 compressed encoding)", d->path,
                 prefix, key);
        return NULL;
    }
    if (raw) {
        *raw = buf;
        *rawlen = len;
    } else {
        free(buf);
    }
    return h;
}

/* Adds histogram key of o (a "histograms" object) into dst; an absent key
 * is an empty histogram unless required.  Returns 0 or -1. */
static int add_hist(rd *d, const json_t *o, const char *prefix, const char *key, int required,
                    yb_hdr *dst)
{
    if (!required && !json_object_get(o, key))
        return 0;
    yb_hdr *h = get_hist(d, o, prefix, key, NULL, NULL);
    if (!h)
        return -1;
    int rc = yb_hdr_add(dst, h);
    yb_hdr_free(h);
    if (rc < 0)
        snprintf(d->err, d->errlen, "%s: %s%s: cannot be added", d->path, prefix, key);
    return rc;
}

/* "PATH: " and the message in err.  Returns -1. */
static int bad(rd *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(rd *d, const char *fmt, ...)
{
    int l = snprintf(d->err, d->errlen, "%s: ", d->path);
    va_list ap;
    va_start(ap, fmt);
    if (l >= 0 && (size_t)l < d->errlen)
        vsnprintf(d->err + l, d->errlen - (size_t)l, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- the shard block and the run id (first pass) ---------------------- */

static int read_shard(rd *d, const json_t *j, yb_merge_shard *s, const char **run_id)
{
    json_t *sh = json_object_get(j, "shard");
    s->path = d->path;
    s->index = 0;
    s->count = 1;
    if (get_str_or_null(d, j, "", "run_id", run_id) < 0) {
        /* reports from before run ids: a plain run */
        if (json_object_get(j, "run_id"))
            return -1;
        *run_id = NULL;
    }
    if (!sh || json_is_null(sh))
        return 0;
    uint64_t idx, cnt, start, maxerr = 0;
    const char *host;
    json_t *clock;
    if (!(sh = get(d, j, "", "shard", JSON_OBJECT)) || get_u64(d, sh, "shard.", "index", &idx) ||
        get_u64(d, sh, "shard.", "count", &cnt) ||
        get_u64(d, sh, "shard.", "start_unix_ns", &start) ||
        get_str_or_null(d, sh, "shard.", "host", &host))
        return -1;
    if (cnt < 1 || cnt > YB_MERGE_MAX_INPUTS || idx >= cnt)
        return bad(d, "%s: expected index < count <= 1024", "shard");
    json_t *off = json_object_get(sh, "start_offset_ns");
    if (off && !json_is_integer(off))
        return bad(d, "%s: expected an integer", "shard.start_offset_ns");
    s->offset_ns = off ? (int64_t)json_integer_value(off) : 0;
    clock = json_object_get(sh, "clock");
    if (clock && !json_is_null(clock)) {
        if (!json_is_object(clock) || get_bool(d, clock, "shard.clock.", "synchronised",
                                               &s->clock_synchronised) ||
            get_u64(d, clock, "shard.clock.", "maxerror_us", &maxerr))
            return -1;
        s->clock_known = 1;
        s->clock_maxerror_us = (int64_t)maxerr;
    }
    s->sharded = 1;
    s->index = (unsigned)idx;
    s->count = (unsigned)cnt;
    s->start_unix_ns = (int64_t)start;
    snprintf(s->host, sizeof s->host, "%s", host ? host : "");
    return 0;
}

/* ---- a report into a recorder (second pass) ----------------------------- */

static int class_of(const char *name)
{
    for (int c = 1; c < YB_ERR__COUNT; c++)
        if (!strcmp(yb_err_name((yb_err_class)c), name))
            return c;
    return -1;
}

/* ns after t0 for a number of seconds s (bounded by the report's span). */
static uint64_t at_s(uint64_t t0, double s)
{
    return t0 + (uint64_t)llround(s * NS_PER_S);
}

static int read_counts(rd *d, const json_t *j, yb_recorder *r)
{
    json_t *sum, *o, *v;
    const char *k;
    if (!(sum = get(d, j, "", "summary", JSON_OBJECT)) ||
        get_u64(d, sum, "summary.", "requests_ok", &r->ok) ||
        get_u64(d, sum, "summary.", "requests_completed", &r->completed) ||
        get_u64(d, sum, "summary.", "requests_started", &r->started) ||
        get_u64(d, sum, "summary.", "requests_unsent", &r->unsent) ||
        get_u64(d, sum, "summary.", "requests_retried", &r->retried) ||
        get_u64(d, sum, "summary.", "data_bytes", &r->ok_bytes_out) ||
        get_u64(d, sum, "summary.", "data_in_bytes", &r->ok_bytes_in) ||
        get_u64(d, sum, "summary.", "all_data_bytes", &r->bytes_out) ||
        get_u64(d, sum, "summary.", "all_data_in_bytes", &r->bytes_in))
        return -1;
    if (r->ok > r->completed)
        return bad(d, "%s: more than requests_completed", "summary.requests_ok");
    if (!(o = get(d, j, "", "subscribe", JSON_OBJECT)) ||
        get_u64(d, o, "subscribe.", "notifications", &r->notifications) ||
        get_u64(d, o, "subscribe.", "updates", &r->updates) ||
        !(o = get(d, j, "", "chains", JSON_OBJECT)) ||
        get_u64(d, o, "chains.", "ok", &r->chains_ok) ||
        get_u64(d, o, "chains.", "failed", &r->chains_failed) ||
        !(o = get(d, j, "", "sessions", JSON_OBJECT)) ||
        get_u64(d, o, "sessions.", "opened", &r->sessions_opened) ||
        get_u64(d, o, "sessions.", "tls_full", &r->tls_full) ||
        get_u64(d, o, "sessions.", "tls_resumed", &r->tls_resumed) ||
        get_u64(d, o, "sessions.", "reconnect_backoffs", &r->reconnect_backoffs) ||
        get_u64(d, j, "", "cut_off", &r->cut_off))
        return -1;
    if (!(o = get(d, j, "", "status", JSON_OBJECT)))
        return -1;
    json_object_foreach(o, k, v) {
        uint64_t code = 0;
        if (strcmp(k, "none") && yb_parse_u64(k, 1, YB_MAX_STATUS - 1, &code) < 0)
            return bad(d, "status.%s: expected an HTTP status (1..599) or \"none\"", k);
        uint64_t n = 0;
        if (get_u64(d, o, "status.", k, &n))
            return -1;
        if (yb_recorder_count_status(r, (int)code, n) < 0)
            return bad(d, "status.%s: out of memory", k);
    }
    if (!(o = get(d, j, "", "grpc_status", JSON_OBJECT)))
        return -1;
    json_object_foreach(o, k, v) {
        uint64_t code = YB_GRPC_CODES;
        if (strcmp(k, "other") && yb_parse_u64(k, 0, YB_GRPC_CODES - 1, &code) < 0)
            return bad(d, "grpc_status.%s: expected a gRPC code (0..16) or \"other\"", k);
        if (get_u64(d, o, "grpc_status.", k, &r->grpc[code]))
            return -1;
    }
    if (!(o = get(d, j, "", "errors", JSON_OBJECT)))
        return -1;
    for (int c = 1; c < YB_ERR__COUNT; c++)
        if (get_u64(d, o, "errors.", yb_err_name((yb_err_class)c), &r->errors[c]))
            return -1;
    return 0;
}

static int read_reasons(rd *d, const json_t *j, yb_recorder *r, double span_s)
{
    json_t *a = get(d, json_object_get(j, "errors"), "errors.", "reasons", JSON_ARRAY), *e;
    size_t i;
    char p[64];
    if (!a)
        return -1;
    json_array_foreach(a, i, e) {
        snprintf(p, sizeof p, "errors.reasons[%zu].", i);
        const char *cls, *text;
        uint64_t n;
        double first = 0;
        json_t *c;
        if (!json_is_object(e))
            return bad(d, "%.*s: expected an object", (int)strlen(p) - 1, p);
        if (!(c = get(d, e, p, "class", JSON_STRING)) ||
            get_str_or_null(d, e, p, "reason", &text) || get_u64(d, e, p, "count", &n))
            return -1;
        cls = json_string_value(c);
        int ci = class_of(cls);
        if (ci < 0)
            return bad(d, "%sclass: not an error class", p);
        if (text && !strcmp(text, "other") && !json_object_get(e, "first_s")) {
            r->reasons_other[ci] += n;
            continue;
        }
        if (get_num(d, e, p, "first_s", span_s + 1, &first))
            return -1;
        yb_recorder_count_reason(r, (yb_err_class)ci, text ? text : yb_err_name(ci), n,
                                 at_s(r->run_start, first));
    }
    return 0;
}

static int read_samples(rd *d, const json_t *j, yb_recorder *r, double span_s)
{
    json_t *a = get(d, j, "", "error_responses", JSON_ARRAY), *e, *c, *st, *gs, *body;
    size_t i;
    char p[64];
    if (!a)
        return -1;
    json_array_foreach(a, i, e) {
        snprintf(p, sizeof p, "error_responses[%zu].", i);
        const char *reason;
        double t;
        int ci;
        if (!json_is_object(e))
            return bad(d, "%.*s: expected an object", (int)strlen(p) - 1, p);
        if (get_num(d, e, p, "t_s", span_s + 1, &t) || !(c = get(d, e, p, "class", JSON_STRING)) ||
            get_str_or_null(d, e, p, "reason", &reason))
            return -1;
        if ((ci = class_of(json_string_value(c))) < 0)
            return bad(d, "%sclass: not an error class", p);
        st = json_object_get(e, "status");
        gs = json_object_get(e, "grpc_status");
        if ((st && !json_is_null(st) && !json_is_integer(st)) ||
            (gs && !json_is_null(gs) && !json_is_integer(gs)))
            return bad(d, "%sstatus, grpc_status: expected integers or null", p);
        yb_err_sample *s = yb_recorder_sample_slot(r);
        if (!s)
            continue; /* a report keeps at most as many; a hostile one is cut */
        s->done = at_s(r->run_start, t);
        s->cls = (yb_err_class)ci;
        s->status = st && json_is_integer(st) ? (int)(json_integer_value(st) & 0xffff) : 0;
        s->grpc_status = gs && json_is_integer(gs) ? (int)(json_integer_value(gs) & 0xffff) : -1;
        snprintf(s->reason, sizeof s->reason, "%s", reason ? reason : "");
        if ((body = json_object_get(e, "body")) && json_is_string(body)) {
            s->body_len = json_string_length(body);
            if (s->body_len > sizeof s->body)
                s->body_len = sizeof s->body;
            memcpy(s->body, json_string_value(body), s->body_len);
        } else if ((body = json_object_get(e, "body_base64")) && json_is_string(body)) {
            uint8_t *b = NULL;
            size_t bl = 0;
            if (json_string_length(body) > 4 * sizeof s->body ||
                yb_base64_decode(json_string_value(body), json_string_length(body), &b, &bl) < 0)
                return bad(d, "%sbody_base64: not base64 of at most 1024 bytes", p);
            s->body_len = bl < sizeof s->body ? bl : sizeof s->body;
            if (bl)
                memcpy(s->body, b, s->body_len);
            free(b);
        }
    }
    return 0;
}

static int read_ops(rd *d, const json_t *j, yb_recorder *r)
{
    json_t *a = get(d, j, "", "operations", JSON_ARRAY), *e, *name, *hs;
    size_t i;
    char p[64];
    if (!a)
        return -1;
    r->ops.cap = YB_OPS_LIMIT;
    json_array_foreach(a, i, e) {
        snprintf(p, sizeof p, "operations[%zu].", i);
        yb_op_stats *o;
        if (!json_is_object(e))
            return bad(d, "%.*s: expected an object", (int)strlen(p) - 1, p);
        if (!(name = get(d, e, p, "operation", JSON_STRING)) ||
            !(hs = get(d, e, p, "histograms", JSON_OBJECT)))
            return -1;
        const char *n = json_string_value(name);
        if (json_string_length(name) >= YB_OP_NAME_MAX || strlen(n) != json_string_length(name))
            return bad(d, "%soperation: longer than 191 bytes or holding NUL", p);
        if (!strcmp(n, "other") && i + 1 == json_array_size(a)) {
            o = &r->ops.other;
            if (!o->e2e && !(o->e2e = yb_hdr_new_default()))
                return -2;
        } else {
            size_t before = r->ops.n;
            uint32_t k = yb_ops_index(&r->ops, n);
            if (k >= r->ops.n || r->ops.n == before)
                return bad(d, "%soperation: a second row of that name, or more than %d rows",
                           p, YB_OPS_LIMIT);
            o = &r->ops.op[k];
        }
        char hp[80];
        snprintf(hp, sizeof hp, "%shistograms.", p);
        if (get_u64(d, e, p, "requests", &o->count) || get_u64(d, e, p, "ok", &o->ok) ||
            get_u64(d, e, p, "errors", &o->errors) || get_u64(d, e, p, "bytes", &o->bytes) ||
            add_hist(d, hs, hp, "e2e", o->ok > 0, o->e2e))
            return -1;
    }
    return 0;
}

static int read_intervals(rd *d, const json_t *j, yb_recorder *r)
{
    json_t *a = get(d, j, "", "intervals", JSON_ARRAY), *e, *hs;
    size_t i;
    char p[64];
    if (!a)
        return -1;
    if (json_array_size(a) > MAX_INTERVALS)
        return bad(d, "%s: more than 1000000 seconds", "intervals");
    if (yb_recorder_extend(r, json_array_size(a)) < 0)
        return -2;
    json_array_foreach(a, i, e) {
        snprintf(p, sizeof p, "intervals[%zu].", i);
        yb_interval *iv = &r->iv[i];
        uint64_t t;
        if (!json_is_object(e))
            return bad(d, "%.*s: expected an object", (int)strlen(p) - 1, p);
        if (get_u64(d, e, p, "t_s", &t) || get_u64(d, e, p, "requests", &iv->requests) ||
            get_u64(d, e, p, "errors", &iv->errors) ||
            get_u64(d, e, p, "bytes_out", &iv->bytes_out) ||
            get_u64(d, e, p, "bytes_in", &iv->bytes_in) ||
            get_u64(d, e, p, "notifications", &iv->notifications) ||
            get_u64(d, e, p, "updates", &iv->updates) ||
            !(hs = get(d, e, p, "histograms", JSON_OBJECT)))
            return -1;
        if (t != i)
            return bad(d, "%st_s: expected the seconds in order from 0", p);
        if (json_object_get(hs, "e2e")) {
            char hp[80];
            snprintf(hp, sizeof hp, "%shistograms.", p);
            yb_hdr *h = get_hist(d, hs, hp, "e2e", &iv->hist, &iv->hist_len);
            if (!h)
                return -1;
            iv->p50_us = yb_hdr_percentile(h, 50);
            iv->p99_us = yb_hdr_percentile(h, 99);
            iv->max_us = yb_hdr_max(h);
            yb_hdr_free(h);
        }
    }
    return 0;
}

/* The generator's CPU figures of the self-check: a report keeps them as
 * shares and rates, so they are weighed back into counts (by the shard's
 * CPU time, its duration and threads) for the merged self-check to weigh
 * each shard by its size. */
static int read_self_check(rd *d, const json_t *j, yb_recorder *r, yb_merge_shard *s,
                           double cpu_s, double span_s, double threads)
{
    json_t *sc = get(d, j, "", "self_check", JSON_OBJECT);
    double runq, invol, steal;
    if (!sc || get_num(d, sc, "self_check.", "run_queue_wait_share", 1, &runq) ||
        get_num(d, sc, "self_check.", "involuntary_switches_per_s", 1e12, &invol) ||
        get_num(d, sc, "self_check.", "steal_share", 1, &steal) ||
        get_num(d, sc, "self_check.", "cpu_utilization", 1e6, &s->cpu_utilization) ||
        get_bool(d, sc, "self_check.", "behind_schedule", &s->behind_schedule) ||
        get_bool(d, sc, "self_check.", "target_limited", &s->target_limited) ||
        get_bool(d, sc, "self_check.", "cpu_starved", &s->cpu_starved) ||
        get_bool(d, sc, "self_check.", "cpu_saturated", &s->cpu_saturated))
        return -1;
    r->gen_run_ns = (uint64_t)(cpu_s * NS_PER_S);
    r->gen_runq_wait_ns = runq < 0.999 ? (uint64_t)(cpu_s * NS_PER_S * runq / (1 - runq))
                                       : r->gen_run_ns * 1000;
    r->gen_invol_switches = (uint64_t)(invol * span_s * threads);
    r->cpu_ticks = (uint64_t)(span_s * 1e6);
    r->cpu_steal_ticks = (uint64_t)((double)r->cpu_ticks * steal);
    return 0;
}

static int read_latency(rd *d, const json_t *j, yb_recorder *r)
{
    json_t *hs = get(d, j, "", "histograms", JSON_OBJECT);
    json_t *lat = hs ? get(d, j, "", "latency_us", JSON_OBJECT) : NULL;
    if (!lat)
        return -1;
    for (int i = 0; i < YB_H__COUNT; i++) {
        const char *name = yb_hist_name((yb_hist_id)i);
        json_t *ph = json_object_get(lat, name);
        uint64_t count;
        char p[64];
        snprintf(p, sizeof p, "latency_us.%s.", name);
        if (!ph)
            continue; /* a phase this report's writer did not know */
        uint64_t clamped;
        if (!json_is_object(ph) || get_u64(d, ph, p, "count", &count) ||
            get_u64(d, ph, p, "clamped", &clamped) ||
            add_hist(d, hs, "histograms.", name, 1, r->h[i]))
            return -1;
        yb_hdr_add_clamped(r->h[i], clamped); /* not in the encoding */
        if ((uint64_t)yb_hdr_count(r->h[i]) != count)
            return bad(d, "histograms.%s: its count differs from latency_us' count", name);
    }
    return 0;
}

/* The shard's I/O path (cpu.io_uring_threads, of its run.threads): into
 * r's gen_io_threads and gen_ring_threads; both 0 when the report does not
 * say (one from before --io).  Returns 0 or -1. */
static int read_io(rd *d, const json_t *cpu, double threads, yb_recorder *r)
{
    uint64_t ring;
    if (!json_object_get(cpu, "io_uring_threads"))
        return 0;
    if (get_u64(d, cpu, "cpu.", "io_uring_threads", &ring) < 0)
        return -1;
    if ((double)ring > threads) {
        snprintf(d->err, d->errlen, "%s: cpu.io_uring_threads: %llu of %g threads", d->path,
                 (unsigned long long)ring, threads);
        return -1;
    }
    r->gen_io_threads = (uint64_t)threads;
    r->gen_ring_threads = ring;
    return 0;
}

/* One report into r, its t=0 at run_start.  Returns 0, -1 or -2. */
static int read_report(rd *d, const json_t *j, yb_recorder *r, uint64_t run_start,
                       yb_merge_shard *s, double *cpu_user, double *cpu_sys, double *threads)
{
    json_t *sum = json_object_get(j, "summary"), *cpu, *run;
    double span, user, sys, th;
    int rc;
    if (!(run = get(d, j, "", "run", JSON_OBJECT)) ||
        get_num(d, sum, "summary.", "duration_s", 1e7, &span) ||
        !(cpu = get(d, j, "", "cpu", JSON_OBJECT)) ||
        get_num(d, cpu, "cpu.", "user_s", 1e9, &user) ||
        get_num(d, cpu, "cpu.", "sys_s", 1e9, &sys) ||
        get_num(d, run, "run.", "threads", 1e6, &th) || read_io(d, cpu, th, r))
        return -1;
    r->run_start = run_start;
    r->run_end = run_start + (uint64_t)llround(span * NS_PER_S);
    if ((rc = read_counts(d, j, r)) || (rc = read_latency(d, j, r)) ||
        (rc = read_reasons(d, j, r, span)) || (rc = read_samples(d, j, r, span)) ||
        (rc = read_ops(d, j, r)) || (rc = read_intervals(d, j, r)) ||
        (rc = read_self_check(d, j, r, s, user + sys, span, th > 0 ? th : 1)))
        return rc;
    s->requests = r->completed;
    s->errors = r->completed - r->ok;
    s->cpu_s = user + sys;
    *cpu_user += user;
    *cpu_sys += sys;
    *threads += th;
    return 0;
}

/* ---- targets and workloads: rows added by name -------------------------- */

struct yb_merge_part {
    json_t *row;        /* the first shard's row, its figures replaced at the end */
    yb_hdr *h[3];       /* e2e, sync, sample_lateness (targets: e2e) */
    double span_s;      /* workloads: the longest span of its shards */
};

static const char *const PART_HISTS[] = {"e2e", "sync", "sample_lateness"};
static const char *const TARGET_SUMS[] = {"started", "requests", "ok", "errors",
                                          "sessions_opened", "reconnect_backoffs"};
static const char *const WORKLOAD_SUMS[] = {"started", "requests", "ok", "errors",
                                            "notifications"};

static int add_parts(rd *d, const json_t *j, const char *key, yb_merge_part **parts, size_t *n)
{
    int wl = !strcmp(key, "workloads");
    const char *const *sums = wl ? WORKLOAD_SUMS : TARGET_SUMS;
    size_t nsums = wl ? sizeof WORKLOAD_SUMS / sizeof *sums : sizeof TARGET_SUMS / sizeof *sums;
    size_t nh = wl ? 3 : 1, i;
    json_t *a = json_object_get(j, key), *e, *name, *hs;
    char p[96], hp[120];
    if (!a)
        return 0;
    if (!json_is_array(a))
        return bad(d, "%s: expected an array", key);
    json_array_foreach(a, i, e) {
        snprintf(p, sizeof p, "%s[%zu].", key, i);
        snprintf(hp, sizeof hp, "%shistograms.", p);
        if (!json_is_object(e))
            return bad(d, "%.*s: expected an object", (int)strlen(p) - 1, p);
        if (!(name = get(d, e, p, "name", JSON_STRING)) ||
            !(hs = get(d, e, p, "histograms", JSON_OBJECT)))
            return -1;
        size_t k = 0;
        while (k < *n && strcmp(json_string_value(json_object_get((*parts)[k].row, "name")),
                                json_string_value(name)))
            k++;
        if (k == *n) {
            if (*n >= MAX_PARTS)
                return bad(d, "%s: more than 100000 rows in all", key);
            yb_merge_part *g = realloc(*parts, (*n + 1) * sizeof *g);
            if (!g)
                return -2;
            *parts = g;
            memset(&g[k], 0, sizeof g[k]);
            (*n)++;
            if (!(g[k].row = json_deep_copy(e)))
                return -2;
            for (size_t h = 0; h < nh; h++)
                if (!(g[k].h[h] = yb_hdr_new_default()))
                    return -2;
            for (size_t s = 0; s < nsums; s++)
                if (json_object_set_new(g[k].row, sums[s], json_integer(0)) < 0)
                    return -2;
        }
        yb_merge_part *pt = &(*parts)[k];
        for (size_t s = 0; s < nsums; s++) {
            uint64_t v;
            json_t *sumv = json_object_get(pt->row, sums[s]);
            if (get_u64(d, e, p, sums[s], &v))
                return -1;
            uint64_t t = (uint64_t)json_integer_value(sumv) + v;
            json_integer_set(sumv, t > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)t);
        }
        for (size_t h = 0; h < nh; h++)
            if (add_hist(d, hs, hp, PART_HISTS[h], 0, pt->h[h]))
                return -1;
        if (wl) { /* its span: requests over its rate, as the row computed it */
            double rate, req = (double)json_integer_value(json_object_get(e, "requests"));
            if (get_num(d, e, p, "rate_per_s", 1e12, &rate))
                return -1;
            if (rate > 0 && req / rate > pt->span_s)
                pt->span_s = req / rate;
        }
    }
    return 0;
}

static double hist_ms(const yb_hdr *h, double p)
{
    return yb_hdr_count(h) ? (double)yb_hdr_percentile(h, p) / 1e3 : 0.0;
}

/* The rows' figures from their added counts and histograms. */
static int finish_parts(yb_merge_part *parts, size_t n, int wl)
{
    static const char *const PCT[3][2] = {{"p50_ms", "p99_ms"},
                                          {"sync_p50_ms", "sync_p99_ms"},
                                          {"sample_lateness_p50_ms", "sample_lateness_p99_ms"}};
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        yb_merge_part *pt = &parts[i];
        for (size_t h = 0; h < (wl ? 3u : 1u); h++) {
            bad |= json_object_set_new(pt->row, PCT[h][0], json_real(hist_ms(pt->h[h], 50))) < 0;
            bad |= json_object_set_new(pt->row, PCT[h][1], json_real(hist_ms(pt->h[h], 99))) < 0;
        }
        json_t *hs = yb_report_hists_json((const yb_hdr *const *)pt->h, PART_HISTS, wl ? 3 : 1);
        bad |= !hs || json_object_set_new(pt->row, "histograms", hs) < 0;
        if (wl) {
            double s = pt->span_s;
            json_t *rq = json_object_get(pt->row, "requests");
            json_t *nt = json_object_get(pt->row, "notifications");
            bad |= json_object_set_new(pt->row, "rate_per_s",
                                       json_real(s > 0 ? (double)json_integer_value(rq) / s
                                                       : 0.0)) < 0;
            bad |= json_object_set_new(pt->row, "notifications_per_s",
                                       json_real(s > 0 ? (double)json_integer_value(nt) / s
                                                       : 0.0)) < 0;
        }
    }
    return bad ? -2 : 0;
}

static void free_parts(yb_merge_part *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        json_decref(p[i].row);
        for (int h = 0; h < 3; h++)
            yb_hdr_free(p[i].h[h]);
    }
    free(p);
}

/* ---- thresholds on the merged run ---------------------------------------- */

/* What a merged target or workload row can be judged on: its end-to-end
 * histogram and its counts (the rows carry no other phase and no error
 * classes).  Returns NULL when t asks for something else, with why. */
static const char *row_lacks(const yb_threshold *t)
{
    if (t->m.kind == YB_M_LATENCY && t->m.hist != YB_H_E2E)
        return "a target's or workload's row carries end-to-end latency only";
    if (t->m.kind == YB_M_ERRORS && t->m.err != YB_ERR_NONE)
        return "a target's or workload's row counts errors, not their classes";
    return NULL;
}

/* A recorder view of a row (borrowing its e2e histogram) spanning the
 * merged run. */
static void row_view(const yb_merge *m, const yb_merge_part *pt, yb_recorder *r)
{
    memset(r, 0, sizeof *r);
    r->h[YB_H_E2E] = pt->h[0];
    json_t *rq = json_object_get(pt->row, "requests"), *ok = json_object_get(pt->row, "ok");
    r->completed = (uint64_t)json_integer_value(rq);
    r->ok = (uint64_t)json_integer_value(ok);
    r->run_start = m->rec.run_start;
    r->run_end = m->rec.run_end;
}

long yb_merge_thresholds(yb_merge *m, yb_thresholds *ts, char *err, size_t errlen)
{
    size_t n = m->n_targets + m->n_workloads;
    yb_th_scope *sc = calloc(n ? n : 1, sizeof *sc);
    yb_recorder *views = calloc(n ? n : 1, sizeof *views);
    long ret = -2;
    if (!sc || !views)
        goto out;
    for (size_t i = 0; i < n; i++) {
        int wl = i >= m->n_targets;
        const yb_merge_part *pt = wl ? &m->workloads[i - m->n_targets] : &m->targets[i];
        row_view(m, pt, &views[i]);
        sc[i] = (yb_th_scope){wl ? "workload" : "target",
                              json_string_value(json_object_get(pt->row, "name")), &views[i],
                              NULL};
    }
    ret = -1;
    if (yb_thresholds_check_scopes(ts, sc, n, err, errlen) < 0)
        goto out;
    for (size_t i = 0; i < ts->n; i++) {
        const char *why = ts->t[i].scope_kind[0] ? row_lacks(&ts->t[i]) : NULL;
        if (why) {
            snprintf(err, errlen, "--threshold '%s': %s", ts->t[i].expr, why);
            goto out;
        }
    }
    ret = (long)yb_thresholds_eval(ts, &m->rec, sc, n);
out:
    free(sc);
    free(views);
    return ret;
}

/* ---- the run's settings (the first shard's) ----------------------------- */

static int read_run(rd *d, const json_t *j, yb_merge *m)
{
    json_t *run = json_object_get(j, "run"), *acc, *a, *v;
    yb_run_info *in = &m->info;
    double num;
    const char *s;
    if (get_str_or_null(d, run, "run.", "corpus", &in->corpus) ||
        get_str_or_null(d, run, "run.", "target", &in->target) ||
        get_str_or_null(d, run, "run.", "protocol", &in->protocol) ||
        get_str_or_null(d, run, "run.", "sessions", &in->sessions) ||
        get_str_or_null(d, run, "run.", "unit", &in->unit) ||
        get_str_or_null(d, run, "run.", "load", &in->load) ||
        get_bool(d, run, "run.", "tls_resume", &in->tls_resume) ||
        get_num(d, run, "run.", "concurrency", 1e9, &num))
        return -1;
    in->concurrency = (unsigned)num;
    if (get_num(d, run, "run.", "streams", 1e9, &num))
        return -1;
    in->streams = (unsigned)num;
    if (get_num(d, run, "run.", "rate_target_per_s", 1e12, &in->rate) ||
        get_u64(d, run, "run.", "max_errors", &in->max_errors))
        return -1;
    if ((v = json_object_get(run, "planned_duration_s")) && !json_is_null(v) &&
        get_num(d, run, "run.", "planned_duration_s", 1e9, &in->planned_duration_s))
        return -1;
    if ((v = json_object_get(run, "planned_requests")) && !json_is_null(v) &&
        get_u64(d, run, "run.", "planned_requests", &in->planned_requests))
        return -1;
    if (!(acc = get(d, run, "run.", "accept", JSON_OBJECT)) ||
        get_str_or_null(d, acc, "run.accept.", "expect", &s))
        return -1;
    m->accept.original = s && !strcmp(s, "original");
    for (int g = 0; g < 2; g++) {
        size_t i;
        if (!(a = get(d, acc, "run.accept.", g ? "grpc" : "http", JSON_ARRAY)))
            return -1;
        if (json_array_size(a) > MAX_ACCEPT)
            return bad(d, "run.accept.%s: too many codes", g ? "grpc" : "http");
        json_array_foreach(a, i, v) {
            if (!json_is_integer(v) || json_integer_value(v) < 0 ||
                json_integer_value(v) > 999)
                return bad(d, "run.accept.%s: expected status codes", g ? "grpc" : "http");
            uint16_t c = (uint16_t)json_integer_value(v);
            yb_accept_add_codes(&m->accept, g, &c, 1);
        }
    }
    in->accept = &m->accept;
    if ((a = json_object_get(run, "target_rate_curve"))) {
        size_t i;
        if (!json_is_array(a) || json_array_size(a) > MAX_CURVE)
            return bad(d, "%s: expected an array of [s, rate] pairs (at most 100000)",
                       "run.target_rate_curve");
        if (json_array_size(a) &&
            !(m->rate_curve = calloc(2 * json_array_size(a), sizeof *m->rate_curve)))
            return -2;
        json_array_foreach(a, i, v) {
            json_t *t = json_array_get(v, 0), *r = json_array_get(v, 1);
            if (json_array_size(v) != 2 || !json_is_number(t) || !json_is_number(r))
                return bad(d, "%s: expected an array of [s, rate] pairs",
                           "run.target_rate_curve");
            m->rate_curve[2 * i] = json_number_value(t);
            m->rate_curve[2 * i + 1] = json_number_value(r);
        }
        in->rate_curve = m->rate_curve;
        in->n_rate_curve = json_array_size(a);
    }
    return 0;
}

/* ---- the whole merge ---------------------------------------------------- */

static void warnf(yb_merge *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warnf(yb_merge *m, const char *fmt, ...)
{
    if (m->n_warn >= YB_MERGE_MAX_WARNINGS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->warn[m->n_warn++], sizeof m->warn[0], fmt, ap);
    va_end(ap);
}

/* Checks the shards against each other (run ids, indexes, counts, starts).
 * Returns 0 or -1 with err. */
static int check_shards(yb_merge *m, const char *const *ids, const yb_merge_opts *o, char *err,
                        size_t errlen)
{
    size_t n = m->n, sharded = 0;
    for (size_t i = 0; i < n; i++)
        sharded += m->shard[i].sharded;
    for (size_t i = 1; i < n && !o->force; i++) {
        const char *a = ids[0] ? ids[0] : "none", *b = ids[i] ? ids[i] : "none";
        if (strcmp(a, b)) {
            snprintf(err, errlen,
                     "%s and %s are reports of different runs (run_id %.40s vs %.40s); --force "
                     "merges them anyway", m->shard[0].path, m->shard[i].path, a, b);
            return -1;
        }
    }
    if (sharded && sharded < n && !o->force) {
        size_t p = 0, s = 0;
        while (m->shard[p].sharded)
            p++;
        while (!m->shard[s].sharded)
            s++;
        snprintf(err, errlen, "%s is a shard (--shard) and %s is not: not parts of one run; "
                 "--force merges them anyway", m->shard[s].path, m->shard[p].path);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const yb_merge_shard *a = &m->shard[i];
        for (size_t k = i + 1; a->sharded && k < n; k++) {
            const yb_merge_shard *b = &m->shard[k];
            if (!b->sharded)
                continue;
            if (a->count != b->count && !o->force) {
                snprintf(err, errlen, "%s is a shard of %u and %s of %u: not parts of one run; "
                         "--force merges them anyway", a->path, a->count, b->path, b->count);
                return -1;
            }
            if (a->index == b->index) {
                if (!o->force) {
                    snprintf(err, errlen, "%s and %s are both shard %u: each shard's report "
                             "once; --force merges them anyway", a->path, b->path, a->index);
                    return -1;
                }
                warnf(m, "%s and %s are both shard %u (merged because of --force: its requests "
                      "count twice)", a->path, b->path, a->index);
            }
        }
    }
    if (sharded) { /* missing indexes, against the first shard's count */
        unsigned count = m->shard[0].count;
        char list[300] = "";
        size_t l = 0, missing = 0;
        for (unsigned x = 0; x < count; x++) {
            size_t k = 0;
            while (k < n && m->shard[k].index != x)
                k++;
            if (k < n)
                continue;
            missing++;
            if (l < sizeof list - 16)
                l += (size_t)snprintf(list + l, sizeof list - l, "%s%u", missing > 1 ? ", " : "",
                                      x);
        }
        if (missing)
            warnf(m, "shard%s %s%s of %u missing: the merged report covers %u of the %u shards",
                  missing > 1 ? "s" : "", list, l >= sizeof list - 16 ? ", ..." : "", count,
                  count - (unsigned)missing, count);
    }
    int64_t lo = 0, hi = 0;
    size_t lo_i = 0, hi_i = 0, known = 0;
    for (size_t i = 0; i < n; i++) {
        const yb_merge_shard *s = &m->shard[i];
        if (!s->start_unix_ns) {
            if (n > 1)
                warnf(m, "%s has no wall-clock start (run without --shard or --start-at): its "
                      "seconds are aligned on the first second of the others", s->path);
            continue;
        }
        if (s->clock_known && !s->clock_synchronised)
            warnf(m, "%s: the clock of %s was not synchronised (NTP): its start may be off by "
                  "up to %.3f ms", s->path, s->host[0] ? s->host : "its host",
                  (double)s->clock_maxerror_us / 1e3);
        if (!known++ || s->start_unix_ns < lo)
            lo = s->start_unix_ns, lo_i = i;
        if (known == 1 || s->start_unix_ns > hi)
            hi = s->start_unix_ns, hi_i = i;
    }
    if (known && hi - lo > MAX_SPREAD_NS) {
        snprintf(err, errlen, "%s and %s started %.0f s apart: not one run", m->shard[lo_i].path,
                 m->shard[hi_i].path, (double)(hi - lo) / NS_PER_S);
        return -1;
    }
    if (known > 1 && hi - lo > o->tolerance_ns)
        warnf(m, "shards started %.3f ms apart (more than the tolerance of %.3f ms): %s first, "
              "%s last; per-second figures mix their seconds", (double)(hi - lo) / 1e6,
              (double)o->tolerance_ns / 1e6, m->shard[lo_i].path, m->shard[hi_i].path);
    m->start_unix_ns = known ? lo : 0;
    return 0;
}

int yb_merge_docs(yb_merge *m, json_t *const *docs, const char *const *names, size_t n,
                  const yb_merge_opts *o, char *err, size_t errlen)
{
    const char **ids = NULL;
    size_t *order = NULL;
    yb_recorder one;
    int rc = -2, have_one = 0, io_unknown = 0;
    double user = 0, sys = 0, threads = 0;
    memset(m, 0, sizeof *m);
    if (n == 0 || n > YB_MERGE_MAX_INPUTS) {
        snprintf(err, errlen, "expected 1 to %d reports", YB_MERGE_MAX_INPUTS);
        return -1;
    }
    if (!(m->shard = calloc(n, sizeof *m->shard)) || !(ids = calloc(n, sizeof *ids)) ||
        !(order = calloc(n, sizeof *order)) || yb_recorder_init(&m->rec) < 0)
        goto out;
    m->rec.ops.cap = YB_OPS_LIMIT;
    m->n = n;
    /* first pass: what each report is */
    for (size_t i = 0; i < n; i++) {
        rd d = {names[i], err, errlen};
        json_t *schema;
        rc = -1;
        if (!json_is_object(docs[i])) {
            snprintf(err, errlen, "%s: expected a JSON object (a yangblast report), found %s",
                     names[i], yb_json_type_name(docs[i]));
            goto out;
        }
        if (!(schema = get(&d, docs[i], "", "schema", JSON_STRING)))
            goto out;
        if (strcmp(json_string_value(schema), SCHEMA)) {
            snprintf(err, errlen, "%s: schema: not a run report (expected '%s')", names[i],
                     SCHEMA);
            goto out;
        }
        if (read_shard(&d, docs[i], &m->shard[i], &ids[i]) < 0)
            goto out;
        if (ids[i] && json_string_length(json_object_get(docs[i], "run_id")) >= sizeof m->run_id) {
            snprintf(err, errlen, "%s: run_id: longer than %zu bytes", names[i],
                     sizeof m->run_id - 1);
            goto out;
        }
        order[i] = i;
    }
    /* shard order (a stable insertion sort keeps input order among equals) */
    for (size_t i = 1; i < n; i++)
        for (size_t k = i; k > 0 && m->shard[order[k - 1]].index > m->shard[order[k]].index; k--) {
            size_t t = order[k];
            order[k] = order[k - 1];
            order[k - 1] = t;
        }
    {
        yb_merge_shard *sorted = calloc(n, sizeof *sorted);
        const char **sids = calloc(n, sizeof *sids);
        if (!sorted || !sids) {
            free(sorted);
            free(sids);
            rc = -2;
            goto out;
        }
        for (size_t i = 0; i < n; i++) {
            sorted[i] = m->shard[order[i]];
            sids[i] = ids[order[i]];
        }
        free(m->shard);
        free(ids);
        m->shard = sorted;
        ids = sids;
    }
    if ((rc = check_shards(m, ids, o, err, errlen)) < 0)
        goto out;
    if (ids[0])
        snprintf(m->run_id, sizeof m->run_id, "%s", ids[0]);
    /* second pass: every report into a recorder, added to the merge */
    for (size_t i = 0; i < n; i++) {
        size_t src = order[i];
        rd d = {names[src], err, errlen};
        yb_merge_shard *s = &m->shard[i];
        uint64_t t0 = BASE_NS;
        if (s->start_unix_ns && m->start_unix_ns)
            t0 += (uint64_t)(s->start_unix_ns - m->start_unix_ns);
        if (yb_recorder_init(&one) < 0) {
            rc = -2;
            goto out;
        }
        have_one = 1;
        if ((rc = read_report(&d, docs[src], &one, t0, s, &user, &sys, &threads)) < 0)
            goto out;
        io_unknown |= one.gen_io_threads == 0;
        if ((rc = add_parts(&d, docs[src], "targets", &m->targets, &m->n_targets)) < 0 ||
            (rc = add_parts(&d, docs[src], "workloads", &m->workloads, &m->n_workloads)) < 0)
            goto out;
        json_t *ib = json_object_get(docs[src], "interrupted_by");
        if (!m->interrupted[0] && json_is_string(ib))
            snprintf(m->interrupted, sizeof m->interrupted, "%s", json_string_value(ib));
        if (i == 0 && (rc = read_run(&d, docs[src], m)) < 0)
            goto out;
        if (yb_recorder_merge(&m->rec, &one) < 0) {
            rc = -2;
            goto out;
        }
        yb_recorder_cleanup(&one);
        have_one = 0;
    }
    if ((rc = finish_parts(m->targets, m->n_targets, 0)) < 0 ||
        (rc = finish_parts(m->workloads, m->n_workloads, 1)) < 0)
        goto out;
    m->first = json_incref(docs[order[0]]);
    m->info.cpu_user_s = user;
    m->info.cpu_sys_s = sys;
    if (io_unknown) /* a shard that does not say: the whole run's I/O path is not known */
        m->rec.gen_io_threads = m->rec.gen_ring_threads = 0;
    /* the whole run had every shard's threads: the CPU checks divide by them */
    m->info.threads = threads > 0 && threads < 1e6 ? (unsigned)threads : 1;
    m->info.interrupted = m->interrupted[0] ? m->interrupted : NULL;
    m->info.run_id = m->run_id[0] ? m->run_id : NULL;
    m->info.plan_workloads = m->n_workloads;
    for (size_t i = 0; i < n; i++) /* an open loop's checks: a plan's rows do not say */
        m->info.plan_open_loop |= m->shard[i].behind_schedule || m->shard[i].target_limited;
    rc = 0;
out:
    if (have_one)
        yb_recorder_cleanup(&one);
    if (rc == -2)
        snprintf(err, errlen, "out of memory");
    free(ids);
    free(order);
    return rc;
}

int yb_merge_reports(yb_merge *m, const char *const *paths, size_t n, const yb_merge_opts *o,
                     char *err, size_t errlen)
{
    json_t **docs = calloc(n ? n : 1, sizeof *docs);
    int rc = -1;
    memset(m, 0, sizeof *m);
    if (!docs) {
        snprintf(err, errlen, "out of memory");
        return -2;
    }
    for (size_t i = 0; i < n; i++)
        if (!(docs[i] = yb_report_read(paths[i], "merge", err, errlen)))
            goto out;
    rc = yb_merge_docs(m, docs, paths, n, o, err, errlen);
out:
    for (size_t i = 0; i < n; i++)
        json_decref(docs[i]);
    free(docs);
    return rc;
}

void yb_merge_free(yb_merge *m)
{
    if (!m)
        return;
    yb_recorder_cleanup(&m->rec);
    free(m->shard);
    free(m->rate_curve);
    free_parts(m->targets, m->n_targets);
    free_parts(m->workloads, m->n_workloads);
    json_decref(m->first);
    memset(m, 0, sizeof *m);
}

/* ---- rendering ---------------------------------------------------------- */

static double num(const json_t *row, const char *key)
{
    return json_number_value(json_object_get(row, key));
}

static const char *str(const json_t *row, const char *key)
{
    const char *s = json_string_value(json_object_get(row, key));
    return s ? s : "-";
}

/* The per-target and per-workload tables of a run, from the merged rows. */
static void text_parts(FILE *f, const yb_merge *m)
{
    if (m->n_targets) {
        fprintf(f, "\nTargets:\n  %-32s %10s %10s %10s %10s %10s %9s %9s\n", "target",
                "requests", "ok", "errors", "p50 ms", "p99 ms", "sessions", "backoffs");
        for (size_t i = 0; i < m->n_targets; i++) {
            const json_t *r = m->targets[i].row;
            fprintf(f, "  %-32s %10.0f %10.0f %10.0f %10.2f %10.2f %9.0f %9.0f\n", str(r, "name"),
                    num(r, "requests"), num(r, "ok"), num(r, "errors"), num(r, "p50_ms"),
                    num(r, "p99_ms"), num(r, "sessions_opened"), num(r, "reconnect_backoffs"));
        }
    }
    if (m->n_workloads) {
        fprintf(f, "\nWorkloads:\n  %-20s %7s %9s %9s %7s %9s %9s %9s\n", "workload", "start s",
                "requests", "ok", "errors", "req/s", "p50 ms", "p99 ms");
        for (size_t i = 0; i < m->n_workloads; i++) {
            const json_t *r = m->workloads[i].row;
            fprintf(f, "  %-20s %7.1f %9.0f %9.0f %7.0f %9.1f %9.2f %9.2f\n", str(r, "name"),
                    num(r, "start_s"), num(r, "requests"), num(r, "ok"), num(r, "errors"),
                    num(r, "rate_per_s"), num(r, "p50_ms"), num(r, "p99_ms"));
        }
    }
}

static double offset_ms(const yb_merge *m, const yb_merge_shard *s)
{
    return s->start_unix_ns && m->start_unix_ns
               ? (double)(s->start_unix_ns - m->start_unix_ns) / 1e6
               : 0.0;
}

/* The self-check's verdict in a word or two. */
static const char *verdict(const yb_merge_shard *s)
{
    if (s->behind_schedule)
        return "BEHIND SCHEDULE";
    if (s->cpu_starved)
        return "CPU STARVED";
    if (s->cpu_saturated)
        return "CPU SATURATED";
    if (s->target_limited)
        return "target-limited";
    return "ok";
}

int yb_merge_text(FILE *f, const yb_merge *m)
{
    if (yb_report_text(f, &m->rec, &m->info) < 0)
        return -1;
    text_parts(f, m);
    fprintf(f, "\nShards (%zu report%s%s%s):\n  %5s %-20s %12s %10s %10s %9s %6s  %s\n", m->n,
            m->n == 1 ? "" : "s", m->run_id[0] ? ", run " : "", m->run_id, "index", "host",
            "start ms", "requests", "errors", "CPU s", "CPU %", "self-check");
    for (size_t i = 0; i < m->n; i++) {
        const yb_merge_shard *s = &m->shard[i];
        char idx[32];
        if (s->sharded)
            snprintf(idx, sizeof idx, "%u/%u", s->index, s->count);
        else
            snprintf(idx, sizeof idx, "-");
        fprintf(f, "  %5s %-20.20s %+12.3f %10" PRIu64 " %10" PRIu64 " %9.3f %6.1f  %s%s%s\n",
                idx, s->host[0] ? s->host : "-", offset_ms(m, s), s->requests, s->errors,
                s->cpu_s, 100.0 * s->cpu_utilization, verdict(s),
                s->clock_known && !s->clock_synchronised ? ", clock not synchronised" : "",
                s->sharded ? "" : " (not a shard)");
        fprintf(f, "        %s\n", s->path);
    }
    return ferror(f) ? -1 : 0;
}

static json_t *json_shards(const yb_merge *m)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < m->n; i++) {
        const yb_merge_shard *s = &m->shard[i];
        json_t *clock = s->clock_known ? json_pack("{s:b, s:I}", "synchronised",
                                                   s->clock_synchronised, "maxerror_us",
                                                   (json_int_t)s->clock_maxerror_us)
                                       : json_null();
        json_t *e = json_pack(
            "{s:s?, s:o, s:o, s:s?, s:o, s:f, s:I, s:o, s:I, s:I, s:f, s:f, s:{s:b, s:b, s:b, "
            "s:b}}",
            "file", yb_utf8_valid((const uint8_t *)s->path, strlen(s->path)) ? s->path : NULL,
            "index", s->sharded ? json_integer(s->index) : json_null(), "count",
            s->sharded ? json_integer(s->count) : json_null(), "host", s->host[0] ? s->host : NULL,
            "start_unix_ns", s->start_unix_ns ? json_integer(s->start_unix_ns) : json_null(),
            "start_ms", offset_ms(m, s), "start_offset_ns", (json_int_t)s->offset_ns, "clock",
            clock, "requests", (json_int_t)s->requests, "errors", (json_int_t)s->errors,
            "cpu_s", s->cpu_s, "cpu_utilization", s->cpu_utilization, "self_check",
            "behind_schedule", s->behind_schedule, "target_limited", s->target_limited,
            "cpu_starved", s->cpu_starved, "cpu_saturated", s->cpu_saturated);
        if (!e || json_array_append_new(a, e) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *json_rows(const yb_merge_part *p, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append(a, p[i].row) < 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

json_t *yb_merge_json(const yb_merge *m)
{
    json_t *j = yb_report_json(&m->rec, &m->info), *w = json_array();
    int bad = !j || !w;
    for (size_t i = 0; !bad && i < m->n_warn; i++)
        bad |= json_array_append_new(w, json_string(m->warn[i])) < 0;
    if (!bad && m->n_targets)
        bad |= json_object_set_new(j, "targets", json_rows(m->targets, m->n_targets)) < 0;
    if (!bad && m->n_workloads)
        bad |= json_object_set_new(j, "workloads", json_rows(m->workloads, m->n_workloads)) < 0;
    if (!bad)
        bad |= json_object_set_new(j, "shards", json_shards(m)) < 0;
    if (!bad)
        bad |= json_object_set_new(j, "merge_warnings", w) < 0;
    else
        json_decref(w);
    if (bad) {
        json_decref(j);
        return NULL;
    }
    return j;
}
