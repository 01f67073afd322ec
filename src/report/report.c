/* Text and JSON rendering of a merged recorder.  The JSON schema is the
 * stable interface (man/yangblast-report.5); the text is for people. */
#include "config.h"
#include "report/report.h"
#include "util/outfile.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SCHEMA "yangblast-report/1"
/* 15 significant digits: more than any measurement here carries, and
 * few enough that 2.00225 is not written as 2.0022500000000001. */
#define JSON_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))

static const char *const PHASE_LABEL[YB_H__COUNT] = {
    "end-to-end", "service", "connect", "tls", "h2", "write", "ttfb", "lateness", "sync",
    "sample late", "failed e2e", " gen late", " wait", /* the two parts of lateness */
    "chain",
};

double yb_report_duration_s(const yb_recorder *r)
{
    if (!r || r->run_start == 0 || r->run_end <= r->run_start)
        return 0.0;
    return (double)(r->run_end - r->run_start) / 1e9;
}

/* The study's numbers, computed once for the table and the JSON alike. */
typedef struct {
    double duration_s, data_mb, speed_mbps, rate_per_s;
} summary;

static summary summarize(const yb_recorder *r)
{
    summary s;

    s.duration_s = yb_report_duration_s(r);
    /* The study's Data and Avg Speed: what successful requests carried
     * (a run where everything failed moved no data worth the name). */
    s.data_mb = (double)r->ok_bytes_out / 1e6;
    s.speed_mbps = s.duration_s > 0.0 ? s.data_mb / s.duration_s : 0.0;
    s.rate_per_s = s.duration_s > 0.0 ? (double)r->ok / s.duration_s : 0.0;
    return s;
}

static uint64_t error_total(const yb_recorder *r)
{
    uint64_t n = 0;

    for (int i = 1; i < YB_ERR__COUNT; i++)
        n += r->errors[i];
    return n;
}

static double cpu_per_request_us(const yb_recorder *r, const yb_run_info *info)
{
    if (!info || r->completed == 0)
        return 0.0;
    return (info->cpu_user_s + info->cpu_sys_s) * 1e6 / (double)r->completed;
}

/* How the generator's sessions did their I/O: "io_uring" (every thread's
 * plain-TCP sessions on its ring; TLS always on epoll), "epoll" (none on
 * one), "mixed", or NULL when not known (a merge of reports from before). */
static const char *io_path(const yb_recorder *r)
{
    if (!r->gen_io_threads)
        return NULL;
    return r->gen_ring_threads == 0 ? "epoll"
           : r->gen_ring_threads >= r->gen_io_threads ? "io_uring"
                                                       : "mixed";
}

static const char *or_dash(const char *s)
{
    return s && *s ? s : "-";
}

/* ---- text ------------------------------------------------------------------ */

int yb_report_table(FILE *f, const yb_recorder *r, const yb_run_info *info, const char *title)
{
    char rate_title[64];
    summary s;
    int w;

    if (!f || !r)
        return -1;
    s = summarize(r);
    if (info && info->unit && *info->unit)
        snprintf(rate_title, sizeof(rate_title), "%s/s", info->unit);
    else
        snprintf(rate_title, sizeof(rate_title), "Requests/s");
    w = (int)strlen(rate_title);
    if (w < 10)
        w = 10;
    if (title && *title)
        fprintf(f, "%s\n", title);
    /* Laid out as a Markdown table (right-aligned columns), so a run can be
     * pasted into a write-up as it is. */
    fprintf(f, "# Requests | Avg Speed (MB/s) | Data (MB) | Duration (s) | %*s\n", w, rate_title);
    fprintf(f, "---------: | ---------------: | --------: | -----------: | ");
    for (int i = 0; i < w - 1; i++)
        fputc('-', f);
    fprintf(f, ":\n");
    fprintf(f, "%10" PRIu64 " | %16.2f | %9.2f | %12.3f | %*.1f\n", r->ok, s.speed_mbps, s.data_mb,
            s.duration_s, w, s.rate_per_s);
    return ferror(f) ? -1 : 0;
}

void yb_report_self_check(const yb_recorder *r, const yb_run_info *info, yb_self_check *out)
{
    memset(out, 0, sizeof *out);
    if (!info)
        return;
    int open_loop = info->rate > 0 || info->load || info->plan_open_loop;
    out->lateness_p99_ms = (double)yb_hdr_percentile(r->h[YB_H_LATENESS], 99) / 1000.0;
    out->gen_lateness_p99_ms = (double)yb_hdr_percentile(r->h[YB_H_GEN_LATE], 99) / 1000.0;
    out->wait_p99_ms = (double)yb_hdr_percentile(r->h[YB_H_SESSION_WAIT], 99) / 1000.0;
    out->lateness_limit_ms = 1.0;
    if (info->rate > 0 && 100.0 / info->rate > out->lateness_limit_ms)
        out->lateness_limit_ms = 100.0 / info->rate; /* a tenth of the interval, in ms */
    /* The generator is to blame only for its own lateness (a session was
     * free, it sent late); waiting for a session or stream is the target's
     * pace or the chosen -c/-m. */
    out->behind_schedule = open_loop && out->gen_lateness_p99_ms > out->lateness_limit_ms;
    out->target_limited = open_loop && out->wait_p99_ms > out->lateness_limit_ms;
    double d = yb_report_duration_s(r);
    unsigned threads = info->threads ? info->threads : 1;
    if (d > 0) {
        out->cpu_utilization = (info->cpu_user_s + info->cpu_sys_s) / (d * threads);
        out->invol_switches_per_s = (double)r->gen_invol_switches / (d * threads);
    }
    if (r->gen_run_ns + r->gen_runq_wait_ns)
        out->runq_wait_share = (double)r->gen_runq_wait_ns /
                               (double)(r->gen_run_ns + r->gen_runq_wait_ns);
    if (r->cpu_ticks)
        out->steal_share = (double)r->cpu_steal_ticks / (double)r->cpu_ticks;
    /* Short runs are all start-up; judge saturation on a second or more. */
    out->cpu_saturated = d >= 1.0 && out->cpu_utilization > 0.9;
    /* Starved: others (processes, the hypervisor) took the CPU the
     * generator wanted, whatever its own share. */
    out->cpu_starved = d >= 1.0 && (out->runq_wait_share > YB_STARVED_RUNQ_SHARE ||
                                    out->invol_switches_per_s > YB_STARVED_INVOL_PER_S ||
                                    out->steal_share > YB_STARVED_STEAL_SHARE);
}

static void text_self_check(FILE *f, const yb_recorder *r, const yb_run_info *info)
{
    yb_self_check c;
    yb_report_self_check(r, info, &c);
    char starved[160];
    snprintf(starved, sizeof starved, "%.0f%% of the time it wanted a CPU it waited for one, "
             "%.0f involuntary context switches/s per thread, steal %.1f%%",
             100.0 * c.runq_wait_share, c.invol_switches_per_s, 100.0 * c.steal_share);
    if (c.target_limited)
        fprintf(f, "\n*** NOTE: the target or the chosen concurrency is the limit: requests "
                   "waited for a free session/stream\n*** (p99 %.3f ms > %.3f ms) before they "
                   "could be sent.  Latencies from the due time include the\n*** wait; raise "
                   "-c/-m if the target can take more in parallel, or lower the rate.\n",
                c.wait_p99_ms, c.lateness_limit_ms);
    if (c.target_limited && c.cpu_starved)
        fprintf(f, "*** (The generator was also kept off its CPU, see below: it read responses "
                   "late too,\n*** so part of that wait may be its own.)\n");
    if (c.behind_schedule) {
        fprintf(f, "\n*** WARNING: the generator fell behind its own schedule: it sent late "
                   "with a session free\n*** (generator lateness p99 %.3f ms > %.3f ms); "
                   "latencies include its delay.\n",
                c.gen_lateness_p99_ms, c.lateness_limit_ms);
        if (c.cpu_starved)
            fprintf(f, "*** It was kept off its CPU by other processes or the hypervisor (%s):\n"
                       "*** run it where it has CPUs of its own.\n", starved);
        else if (c.cpu_saturated)
            fprintf(f, "*** Add threads (-t) or lower the rate.\n");
        else
            /* neither busy nor kept off its CPU: more threads would not
             * wake it sooner */
            fprintf(f, "*** It used %.0f%% of its CPU and was not kept off it: it woke late (this "
                       "machine's timer\n*** and scheduling jitter).  --spin D wakes it D early "
                       "and spins to each due time.\n",
                    100.0 * c.cpu_utilization);
    } else if (c.cpu_starved) {
        fprintf(f, "\n*** WARNING: other processes or the hypervisor kept the generator off its "
                   "CPU\n*** (%s): its timings may include that delay.\n", starved);
    }
    if (c.cpu_saturated)
        fprintf(f, "\n*** WARNING: the generator used %.0f%% of its %u thread(s)' CPU: it may be "
                   "the bottleneck, not the target.\n",
                100.0 * c.cpu_utilization, info->threads ? info->threads : 1);
}

/* An interrupted run says so, with what was planned and what ran. */
static void text_interrupted(FILE *f, const yb_recorder *r, const yb_run_info *info)
{
    if (!info || !info->interrupted)
        return;
    fprintf(f, "\nINTERRUPTED by %s: ran %.3f s", info->interrupted, yb_report_duration_s(r));
    if (info->planned_duration_s > 0)
        fprintf(f, " of %.3f s planned", info->planned_duration_s);
    fprintf(f, "; %" PRIu64 " requests started, %" PRIu64 " completed", r->started,
            r->completed);
    if (info->planned_requests)
        fprintf(f, " of %" PRIu64 " planned", info->planned_requests);
    else if (info->planned_duration_s <= 0)
        fprintf(f, " (one pass over the corpus planned)");
    fprintf(f, ".  The figures cover the part that ran.\n");
}

/* The success rule, when not the default: "Success: HTTP below 400 and
 * 404, 409; gRPC OK and 6 ALREADY_EXISTS; the recorded status where
 * there is one (--expect original)". */
static void text_accept(FILE *f, const yb_accept *a)
{
    int codes[YB_ACCEPT_MAX_CODES];
    size_t nh = a ? yb_accept_codes(a, 0, codes, YB_ACCEPT_MAX_CODES) : 0;
    if (!a || (!nh && !a->grpc && !a->original))
        return;
    fprintf(f, "Success: HTTP below 400");
    for (size_t i = 0; i < nh && i < YB_ACCEPT_MAX_CODES; i++)
        fprintf(f, "%s%d", i ? ", " : " and ", codes[i]);
    size_t ng = yb_accept_codes(a, 1, codes, YB_ACCEPT_MAX_CODES);
    fprintf(f, "; gRPC OK");
    for (size_t i = 0; i < ng && i < YB_ACCEPT_MAX_CODES; i++)
        fprintf(f, "%s%d %s", i ? ", " : " and ", codes[i], or_dash(yb_grpc_name(codes[i])));
    if (a->original)
        fprintf(f, "; the recorded status where there is one (--expect original)");
    fprintf(f, "\n");
}

/* The shard and its clock, one line: which part of the run this was and
 * how far its start may be trusted against the other shards'. */
static void text_shard(FILE *f, const yb_run_shard *s)
{
    char when[40] = "", off[64] = "", clk[96];
    time_t t = (time_t)(s->start_unix_ns / 1000000000LL);
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    if (s->start_at_unix_ns)
        snprintf(off, sizeof off, " (%+.3f ms from --start-at)",
                 (double)(s->start_unix_ns - s->start_at_unix_ns) / 1e6);
    if (!s->clock.known)
        snprintf(clk, sizeof clk, "clock state unknown");
    else
        snprintf(clk, sizeof clk, "clock %s (max error %.3f ms, est. error %.3f ms)",
                 s->clock.synchronised ? "synchronised" : "NOT synchronised",
                 (double)s->clock.maxerror_us / 1e3, (double)s->clock.esterror_us / 1e3);
    fprintf(f, "Shard: %u/%u on %s, started %s.%06lldZ%s, %s\n", s->index, s->count,
            or_dash(s->host), when, (long long)(s->start_unix_ns % 1000000000LL / 1000), off,
            clk);
}

static void text_run(FILE *f, const yb_recorder *r, const yb_run_info *info)
{
    if (info && info->shard)
        text_shard(f, info->shard);
    if (info) {
        fprintf(f, "Run: corpus %s, target %s, protocol %s, sessions %s, TLS resumption %s\n",
                or_dash(info->corpus), or_dash(info->target), or_dash(info->protocol),
                or_dash(info->sessions), info->tls_resume ? "on" : "off");
        if (info->plan_workloads) {
            fprintf(f, "     threads %u, %zu workloads, each with its own load model and "
                    "sessions (Workloads below)\n", info->threads, info->plan_workloads);
        } else {
            fprintf(f, "     concurrency %u, threads %u, streams %u, ", info->concurrency,
                    info->threads, info->streams);
            if (info->load)
                fprintf(f, "open loop, %s\n", info->load);
            else if (info->rate > 0.0)
                fprintf(f, "open loop at %.1f/s\n", info->rate);
            else
                fprintf(f, "closed loop\n");
        }
        text_accept(f, info->accept);
    }
    fprintf(f,
            "Requests: started %" PRIu64 ", completed %" PRIu64 ", ok %" PRIu64 ", errors %" PRIu64
            ", cut off %" PRIu64 ", unsent %" PRIu64 ", retried %" PRIu64 "\n",
            r->started, r->completed, r->ok, error_total(r), r->cut_off, r->unsent, r->retried);
}

static void text_latency(FILE *f, const yb_recorder *r)
{
    uint64_t clamped = 0;

    fprintf(f, "\n%-12s %10s %10s %10s %10s %10s %10s %10s\n", "Latency (ms)", "count", "p50", "p90",
            "p99", "p99.9", "max", "mean");
    /* lateness' two parts right under it */
    static const yb_hist_id ORDER[] = {YB_H_E2E, YB_H_SERVICE, YB_H_CONNECT, YB_H_TLS, YB_H_H2,
                                       YB_H_WRITE, YB_H_TTFB, YB_H_LATENESS, YB_H_GEN_LATE,
                                       YB_H_SESSION_WAIT, YB_H_E2E_FAILED, YB_H_CHAIN,
                                       YB_H_SYNC, YB_H_SAMPLE_LATENESS};
    _Static_assert(sizeof ORDER / sizeof ORDER[0] == YB_H__COUNT, "every histogram, once");
    for (size_t k = 0; k < YB_H__COUNT; k++) {
        yb_hist_id i = ORDER[k];
        const yb_hdr *h = r->h[i];
        int64_t n = yb_hdr_count(h);

        clamped += yb_hdr_clamped(h);
        /* A phase nobody paid (no TLS, sessions reused) is noise in the
         * table; end-to-end always shows, even empty, so a run with no
         * completion is visibly empty. */
        if ((n == 0 && i != YB_H_E2E) || i == YB_H_SYNC || i == YB_H_SAMPLE_LATENESS)
            continue; /* Subscribe's own figures: in the Subscribe block */
        fprintf(f, "%-12s %10" PRId64 " %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f\n",
                PHASE_LABEL[i], n, (double)yb_hdr_percentile(h, 50.0) / 1e3,
                (double)yb_hdr_percentile(h, 90.0) / 1e3, (double)yb_hdr_percentile(h, 99.0) / 1e3,
                (double)yb_hdr_percentile(h, 99.9) / 1e3, (double)yb_hdr_max(h) / 1e3,
                yb_hdr_mean(h) / 1e3);
    }
    if (yb_hdr_count(r->h[YB_H_E2E_FAILED]))
        fprintf(f, "(latencies are of the %" PRIu64 " successful requests; \"failed e2e\" is how "
                   "long the failed ones took to fail)\n",
                r->ok);
    if (clamped)
        fprintf(f, "(%" PRIu64 " values outside 1 us .. 1 h were clamped)\n", clamped);
}

/* Subscribe: notification rates, time to sync_response, sample lateness
 * (only when the run had Subscribe calls). */
static void text_subscribe(FILE *f, const yb_recorder *r)
{
    const yb_hdr *sy = r->h[YB_H_SYNC], *la = r->h[YB_H_SAMPLE_LATENESS];
    double d = yb_report_duration_s(r);

    if (!r->notifications && !yb_hdr_count(sy))
        return;
    fprintf(f, "\nSubscribe: %" PRIu64 " notifications (%.1f/s), %" PRIu64 " updates (%.1f/s)\n",
            r->notifications, d > 0 ? (double)r->notifications / d : 0.0, r->updates,
            d > 0 ? (double)r->updates / d : 0.0);
    if (yb_hdr_count(sy))
        fprintf(f, "  time to sync_response (ms): p50 %.3f, p99 %.3f (%" PRId64 " calls)\n",
                (double)yb_hdr_percentile(sy, 50.0) / 1e3, (double)yb_hdr_percentile(sy, 99.0) / 1e3,
                yb_hdr_count(sy));
    if (yb_hdr_count(la))
        fprintf(f, "  sample lateness (ms): p50 %.3f, p99 %.3f, max %.3f\n",
                (double)yb_hdr_percentile(la, 50.0) / 1e3, (double)yb_hdr_percentile(la, 99.0) / 1e3,
                (double)yb_hdr_max(la) / 1e3);
}

/* Fills idx with the indices of r's reasons, most frequent first (ties:
 * first seen first).  Returns how many. */
static size_t reasons_sorted(const yb_recorder *r, size_t idx[YB_REASONS])
{
    size_t n = r->n_reasons < YB_REASONS ? r->n_reasons : YB_REASONS;
    for (size_t i = 0; i < n; i++) {
        size_t k = i;
        /* insertion sort: at most 64 entries */
        while (k > 0) {
            const yb_reason_count *a = &r->reasons[idx[k - 1]], *b = &r->reasons[i];
            if (a->count > b->count || (a->count == b->count && a->first <= b->first))
                break;
            idx[k] = idx[k - 1];
            k--;
        }
        idx[k] = i;
    }
    return n;
}

static void text_reasons(FILE *f, const yb_recorder *r)
{
    size_t idx[YB_REASONS], n = reasons_sorted(r, idx);
    int any_other = 0;
    for (int c = 1; c < YB_ERR__COUNT; c++)
        any_other |= r->reasons_other[c] != 0;
    if (!n && !any_other)
        return;
    fprintf(f, "Error reasons:\n");
    for (size_t i = 0; i < n; i++) {
        const yb_reason_count *e = &r->reasons[idx[i]];
        fprintf(f, "  %10" PRIu64 "  %s\n", e->count, e->text);
    }
    for (int c = 1; c < YB_ERR__COUNT; c++)
        if (r->reasons_other[c])
            fprintf(f, "  %10" PRIu64 "  other (%s; beyond the first %d distinct reasons)\n",
                    r->reasons_other[c], yb_err_name((yb_err_class)c), YB_REASONS);
}

/* Seconds from the run's start to t (0 when before it or unknown). */
static double since_start(const yb_recorder *r, uint64_t t)
{
    return r->run_start && t > r->run_start ? (double)(t - r->run_start) / 1e9 : 0.0;
}

/* The first error responses with their bodies: text shown line by line
 * (indented, control characters but newlines as '?'), anything else
 * summarized (its bytes are in the JSON report). */
static void text_samples(FILE *f, const yb_recorder *r)
{
    if (!r->n_samples)
        return;
    fprintf(f, "Error responses (the first %zu, with up to %d bytes of each body):\n",
            r->n_samples, YB_ERR_SAMPLE_BODY);
    for (size_t i = 0; i < r->n_samples; i++) {
        const yb_err_sample *s = &r->samples[i];
        fprintf(f, "  [+%.3f s] %s\n", since_start(r, s->done), s->reason);
        if (!yb_utf8_valid(s->body, s->body_len)) {
            fprintf(f, "    (%zu bytes, not text: base64 in the JSON report)\n", s->body_len);
            continue;
        }
        fputs("    ", f);
        for (size_t k = 0; k < s->body_len; k++) {
            uint8_t c = s->body[k];
            if (c == '\n') {
                if (k + 1 < s->body_len)
                    fputs("\n    ", f);
            } else if (c != '\r') { /* CRLF line ends read as LF */
                fputc((c >= 0x20 && c != 0x7f) || c == '\t' ? (int)c : '?', f);
            }
        }
        fprintf(f, "%s\n", s->body_len == YB_ERR_SAMPLE_BODY ? " [...]" : "");
    }
}

static void text_counts(FILE *f, const yb_recorder *r)
{
    const char *sep;

    fprintf(f, "\nSessions opened: %" PRIu64 "; TLS handshakes: %" PRIu64 " full, %" PRIu64
               " resumed",
            r->sessions_opened, r->tls_full, r->tls_resumed);
    if (r->reconnect_backoffs) /* a target failed set-ups: the pool waited */
        fprintf(f, "; reconnect back-offs: %" PRIu64, r->reconnect_backoffs);
    fputc('\n', f);

    fprintf(f, "HTTP status:");
    sep = " ";
    for (int i = 1; i < YB_MAX_STATUS; i++) {
        if (yb_recorder_status(r, i)) {
            fprintf(f, "%s%d: %" PRIu64, sep, i, yb_recorder_status(r, i));
            sep = ", ";
        }
    }
    if (yb_recorder_status(r, 0)) {
        fprintf(f, "%snone: %" PRIu64, sep, yb_recorder_status(r, 0));
        sep = ", ";
    }
    fprintf(f, "%s\n", *sep == ' ' ? " -" : "");

    sep = " ";
    for (int i = 0; i <= YB_GRPC_CODES; i++) {
        if (!r->grpc[i])
            continue;
        if (*sep == ' ')
            fprintf(f, "gRPC status:");
        if (i < YB_GRPC_CODES)
            fprintf(f, "%s%d %s: %" PRIu64, sep, i, yb_grpc_name(i), r->grpc[i]);
        else
            fprintf(f, "%sother: %" PRIu64, sep, r->grpc[i]);
        sep = ", ";
    }
    if (*sep != ' ')
        fprintf(f, "\n");

    fprintf(f, "Errors:");
    sep = " ";
    for (int i = 1; i < YB_ERR__COUNT; i++) {
        if (r->errors[i]) {
            fprintf(f, "%s%s %" PRIu64, sep, yb_err_name((yb_err_class)i), r->errors[i]);
            sep = ", ";
        }
    }
    fprintf(f, "%s\n", *sep == ' ' ? " none" : "");
    text_reasons(f, r);
    text_samples(f, r);
}

/* Operations by requests (most first), ties by name: fills idx with
 * indexes into r->ops.op and returns how many. */
static const yb_ops *sort_ops;
static int ops_cmp(const void *a, const void *b)
{
    const yb_op_stats *x = &sort_ops->op[*(const size_t *)a], *y = &sort_ops->op[*(const size_t *)b];
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->name, y->name);
}

static size_t *ops_sorted(const yb_ops *t)
{
    size_t *idx = malloc((t->n ? t->n : 1) * sizeof *idx);
    if (!idx)
        return NULL;
    for (size_t i = 0; i < t->n; i++)
        idx[i] = i;
    sort_ops = t; /* the report is written from one thread */
    qsort(idx, t->n, sizeof *idx, ops_cmp);
    return idx;
}

static double op_ms(const yb_op_stats *o, double p)
{
    if (!o->ok || !o->e2e)
        return 0.0;
    return (double)(p > 100 ? yb_hdr_max(o->e2e) : yb_hdr_percentile(o->e2e, p)) / 1e3;
}

static void text_op(FILE *f, const yb_op_stats *o, const char *name)
{
    fprintf(f, "  %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %9.2f %9.2f %9.2f  %s\n", o->count,
            o->ok, o->errors, op_ms(o, 50), op_ms(o, 99), op_ms(o, 101), name);
}

static void text_ops(FILE *f, const yb_recorder *r)
{
    const yb_ops *t = &r->ops;
    size_t *idx = ops_sorted(t);
    if (!idx || (!t->n && !t->other.count)) {
        free(idx);
        return;
    }
    fprintf(f, "Operations (latency of successful requests):\n  %10s %10s %10s %9s %9s %9s  %s\n",
            "requests", "ok", "errors", "p50 ms", "p99 ms", "max ms", "operation");
    for (size_t i = 0; i < t->n; i++)
        text_op(f, &t->op[idx[i]], t->op[idx[i]].name);
    if (t->other.count) {
        text_op(f, &t->other, "other");
        fprintf(f, "  (other: the operations beyond the first %zu distinct)\n", yb_ops_cap(t));
    }
    free(idx);
}

int yb_report_text(FILE *f, const yb_recorder *r, const yb_run_info *info)
{
    if (!f || !r)
        return -1;
    if (yb_report_table(f, r, info, NULL) < 0)
        return -1;
    text_self_check(f, r, info);
    text_interrupted(f, r, info);
    fputc('\n', f);
    text_run(f, r, info);
    text_latency(f, r);
    text_subscribe(f, r);
    if (r->chains_ok || r->chains_failed)
        fprintf(f, "\nChains: %" PRIu64 " ok, %" PRIu64 " failed (the chain row above: first "
                "request due to last done, ok chains; each step is an operation below)\n",
                r->chains_ok, r->chains_failed);
    text_counts(f, r);
    text_ops(f, r);
    if (info) {
        fprintf(f, "Generator CPU: %.3f s user + %.3f s sys = %.3f s; %.1f us per request",
                info->cpu_user_s, info->cpu_sys_s, info->cpu_user_s + info->cpu_sys_s,
                cpu_per_request_us(r, info));
        if (io_path(r))
            fprintf(f, "; I/O %s", io_path(r));
        fputc('\n', f);
    }
    return ferror(f) ? -1 : 0;
}

/* ---- JSON ------------------------------------------------------------------ */

/* Counters are uint64; JSON integers are int64 in jansson.  No real run
 * reaches 2^63, but saturate rather than wrap to a negative number. */
static json_t *juint(uint64_t v)
{
    return json_integer(v > (uint64_t)INT64_MAX ? (json_int_t)INT64_MAX : (json_int_t)v);
}

/* Paths and URLs come from the command line and need not be UTF-8, which
 * JSON strings must be: such a value is written as null. */
static json_t *jstr(const char *s)
{
    json_t *v = s ? json_string(s) : NULL;

    return v ? v : json_null();
}

/* Sets key and remembers any failure in *bad (set_new frees v on error). */
static void put(json_t *o, const char *key, json_t *v, int *bad)
{
    if (!v || json_object_set_new(o, key, v) < 0)
        *bad = 1;
}

json_t *yb_report_hist_b64(const yb_hdr *h)
{
    uint8_t *enc = NULL;
    size_t len = 0;
    if (!h || yb_hdr_encode_compressed(h, &enc, &len) < 0)
        return NULL;
    char *b64 = yb_base64_encode(enc, len);
    free(enc);
    json_t *v = b64 ? json_string(b64) : NULL;
    free(b64);
    return v;
}

json_t *yb_report_hists_json(const yb_hdr *const *h, const char *const *names, size_t n)
{
    json_t *o = json_object();
    int bad = !o;
    for (size_t i = 0; o && i < n; i++)
        if (h[i])
            put(o, names[i], yb_report_hist_b64(h[i]), &bad);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* {"e2e": base64} of a second, or {} when nothing succeeded in it: the
 * series' histogram is kept compressed already. */
static json_t *json_interval_hists(const yb_interval *iv, int *bad)
{
    json_t *o = json_object();
    char *b64 = iv->hist ? yb_base64_encode(iv->hist, iv->hist_len) : NULL;
    if (!o || (iv->hist && !b64))
        *bad = 1;
    else if (b64)
        put(o, "e2e", json_string(b64), bad);
    free(b64);
    return o;
}

json_t *yb_report_interval_json(const yb_interval *iv)
{
    json_t *e = json_object();
    int bad = 0;

    if (!e)
        return NULL;
    put(e, "t_s", juint(iv->t), &bad);
    put(e, "requests", juint(iv->requests), &bad);
    put(e, "errors", juint(iv->errors), &bad);
    put(e, "bytes_out", juint(iv->bytes_out), &bad);
    put(e, "bytes_in", juint(iv->bytes_in), &bad);
    put(e, "notifications", juint(iv->notifications), &bad);
    put(e, "updates", juint(iv->updates), &bad);
    put(e, "p50_us", juint((uint64_t)iv->p50_us), &bad);
    put(e, "p99_us", juint((uint64_t)iv->p99_us), &bad);
    put(e, "max_us", juint((uint64_t)iv->max_us), &bad);
    put(e, "histograms", json_interval_hists(iv, &bad), &bad);
    if (bad) {
        json_decref(e);
        return NULL;
    }
    return e;
}

/* {"http": [409], "grpc": [6], "expect": "status" | "original"} */
static json_t *json_accept(const yb_accept *a, int *bad)
{
    static const yb_accept none;
    json_t *o = json_object();
    if (!o) {
        *bad = 1;
        return NULL;
    }
    if (!a)
        a = &none;
    for (int g = 0; g < 2; g++) {
        int codes[YB_ACCEPT_MAX_CODES];
        size_t n = yb_accept_codes(a, g, codes, YB_ACCEPT_MAX_CODES);
        json_t *l = json_array();
        for (size_t i = 0; l && i < n && i < YB_ACCEPT_MAX_CODES; i++)
            if (json_array_append_new(l, json_integer(codes[i])) < 0)
                *bad = 1;
        put(o, g ? "grpc" : "http", l, bad);
    }
    put(o, "expect", json_string(a->original ? "original" : "status"), bad);
    return o;
}

static json_t *json_shard(const yb_run_shard *s, int *bad)
{
    json_t *c = !s->clock.known ? json_null()
                : json_pack("{s:b, s:I, s:I}", "synchronised", s->clock.synchronised,
                            "maxerror_us", (json_int_t)s->clock.maxerror_us, "esterror_us",
                            (json_int_t)s->clock.esterror_us);
    json_t *o = json_pack("{s:I, s:I, s:s?, s:I, s:o, s:I, s:o*}", "index", (json_int_t)s->index,
                          "count", (json_int_t)s->count, "host", s->host, "start_unix_ns",
                          (json_int_t)s->start_unix_ns, "start_at_unix_ns",
                          s->start_at_unix_ns ? json_integer(s->start_at_unix_ns) : json_null(),
                          "start_offset_ns",
                          (json_int_t)(s->start_at_unix_ns ? s->start_unix_ns - s->start_at_unix_ns
                                                           : 0),
                          "clock", c);
    if (!o)
        *bad = 1;
    return o;
}

static json_t *json_run(const yb_run_info *info, int *bad)
{
    json_t *o = json_object();

    if (!o) {
        *bad = 1;
        return NULL;
    }
    put(o, "corpus", jstr(info ? info->corpus : NULL), bad);
    put(o, "target", jstr(info ? info->target : NULL), bad);
    put(o, "protocol", jstr(info ? info->protocol : NULL), bad);
    put(o, "sessions", jstr(info ? info->sessions : NULL), bad);
    put(o, "tls_resume", json_boolean(info && info->tls_resume), bad);
    put(o, "concurrency", json_integer(info ? info->concurrency : 0), bad);
    put(o, "threads", json_integer(info ? info->threads : 0), bad);
    put(o, "streams", json_integer(info ? info->streams : 0), bad);
    put(o, "rate_target_per_s", json_real(info ? info->rate : 0.0), bad);
    put(o, "unit", jstr(info ? info->unit : NULL), bad);
    put(o, "max_errors", juint(info ? info->max_errors : 0), bad);
    put(o, "load", jstr(info ? info->load : NULL), bad);
    if (info && info->rate_curve && info->n_rate_curve) {
        json_t *c = json_array();
        for (size_t i = 0; c && i < info->n_rate_curve; i++) {
            json_t *pt = json_pack("[ff]", info->rate_curve[2 * i], info->rate_curve[2 * i + 1]);
            if (!pt || json_array_append_new(c, pt) < 0)
                *bad = 1;
        }
        put(o, "target_rate_curve", c, bad);
    }
    put(o, "planned_duration_s",
        info && info->planned_duration_s > 0 ? json_real(info->planned_duration_s) : json_null(),
        bad);
    put(o, "planned_requests",
        info && info->planned_requests ? juint(info->planned_requests) : json_null(), bad);
    put(o, "accept", json_accept(info ? info->accept : NULL, bad), bad);
    return o;
}

/* percentile_curve: [[percentile, value], ...] as the .hgrm rows walk the
 * histogram (for plots on HdrHistogram's 1/(1-p) axis). */
static json_t *json_curve(const yb_hdr *h, int *bad)
{
    enum { CAP = 256 };
    double pct[CAP];
    int64_t val[CAP];
    size_t n = yb_hdr_percentile_curve(h, pct, val, CAP);
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_pack("[fI]", pct[i], (json_int_t)val[i])) < 0)
            *bad = 1;
    return a;
}

static json_t *json_hist(const yb_hdr *h, int *bad)
{
    json_t *o = json_object();

    if (!o) {
        *bad = 1;
        return NULL;
    }
    put(o, "count", json_integer(yb_hdr_count(h)), bad);
    put(o, "min", json_integer(yb_hdr_min(h)), bad);
    put(o, "p50", json_integer(yb_hdr_percentile(h, 50.0)), bad);
    put(o, "p90", json_integer(yb_hdr_percentile(h, 90.0)), bad);
    put(o, "p99", json_integer(yb_hdr_percentile(h, 99.0)), bad);
    put(o, "p99_9", json_integer(yb_hdr_percentile(h, 99.9)), bad);
    put(o, "max", json_integer(yb_hdr_max(h)), bad);
    put(o, "mean", json_real(yb_hdr_mean(h)), bad);
    put(o, "stddev", json_real(yb_hdr_stddev(h)), bad);
    put(o, "clamped", juint(yb_hdr_clamped(h)), bad);
    put(o, "percentile_curve", json_curve(h, bad), bad);
    return o;
}

/* errors.reasons: [{class, reason, count, first_s}], most frequent first,
 * then one {class, reason: "other"} per class with reasons beyond the
 * first YB_REASONS. */
static json_t *json_reasons(const yb_recorder *r, int *bad)
{
    json_t *a = json_array();
    size_t idx[YB_REASONS], n = reasons_sorted(r, idx);
    if (!a) {
        *bad = 1;
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const yb_reason_count *e = &r->reasons[idx[i]];
        json_t *o = json_object();
        if (o) {
            put(o, "class", json_string(yb_err_name(e->cls)), bad);
            put(o, "reason", jstr(e->text), bad);
            put(o, "count", juint(e->count), bad);
            put(o, "first_s", json_real(since_start(r, e->first)), bad);
        }
        if (!o || json_array_append_new(a, o) < 0)
            *bad = 1;
    }
    for (int c = 1; c < YB_ERR__COUNT; c++) {
        if (!r->reasons_other[c])
            continue;
        json_t *o = json_object();
        if (o) {
            put(o, "class", json_string(yb_err_name((yb_err_class)c)), bad);
            put(o, "reason", json_string("other"), bad);
            put(o, "count", juint(r->reasons_other[c]), bad);
        }
        if (!o || json_array_append_new(a, o) < 0)
            *bad = 1;
    }
    return a;
}

static json_t *json_op(const yb_op_stats *o, const char *name, int *bad)
{
    json_t *j = json_object();
    if (!j) {
        *bad = 1;
        return NULL;
    }
    put(j, "operation", jstr(name), bad);
    put(j, "requests", juint(o->count), bad);
    put(j, "ok", juint(o->ok), bad);
    put(j, "errors", juint(o->errors), bad);
    put(j, "bytes", juint(o->bytes), bad);
    put(j, "p50_ms", json_real(op_ms(o, 50)), bad);
    put(j, "p99_ms", json_real(op_ms(o, 99)), bad);
    put(j, "max_ms", json_real(op_ms(o, 101)), bad);
    {
        static const char *const E2E[] = {"e2e"};
        const yb_hdr *h[] = {o->e2e};
        put(j, "histograms", yb_report_hists_json(h, E2E, 1), bad);
    }
    return j;
}

/* operations: per operation, most requests first, then `other`. */
static json_t *json_ops(const yb_recorder *r, int *bad)
{
    const yb_ops *t = &r->ops;
    json_t *a = json_array();
    size_t *idx = ops_sorted(t);
    if (!a || !idx) {
        free(idx);
        json_decref(a);
        *bad = 1;
        return NULL;
    }
    for (size_t i = 0; i < t->n; i++) {
        json_t *o = json_op(&t->op[idx[i]], t->op[idx[i]].name, bad);
        if (!o || json_array_append_new(a, o) < 0)
            *bad = 1;
    }
    if (t->other.count) {
        json_t *o = json_op(&t->other, "other", bad);
        if (!o || json_array_append_new(a, o) < 0)
            *bad = 1;
    }
    free(idx);
    return a;
}

/* error_responses: the first error responses with their bodies. */
static json_t *json_samples(const yb_recorder *r, int *bad)
{
    json_t *a = json_array();
    if (!a) {
        *bad = 1;
        return NULL;
    }
    for (size_t i = 0; i < r->n_samples; i++) {
        const yb_err_sample *s = &r->samples[i];
        json_t *o = json_object();
        if (o) {
            put(o, "t_s", json_real(since_start(r, s->done)), bad);
            put(o, "class", json_string(yb_err_name(s->cls)), bad);
            put(o, "reason", jstr(s->reason), bad);
            put(o, "status", s->status > 0 ? json_integer(s->status) : json_null(), bad);
            put(o, "grpc_status",
                s->grpc_status >= 0 ? json_integer(s->grpc_status) : json_null(), bad);
            put(o, "body_kept_bytes", juint(s->body_len), bad);
            if (yb_utf8_valid(s->body, s->body_len)) {
                put(o, "body", json_stringn((const char *)s->body, s->body_len), bad);
            } else {
                char *b64 = yb_base64_encode(s->body, s->body_len);
                put(o, "body_base64", b64 ? json_string(b64) : NULL, bad);
                free(b64);
            }
        }
        if (!o || json_array_append_new(a, o) < 0)
            *bad = 1;
    }
    return a;
}

json_t *yb_report_json(const yb_recorder *r, const yb_run_info *info)
{
    json_t *root = NULL, *o;
    summary s;
    char key[16];
    int bad = 0;

    if (!r)
        return NULL;
    s = summarize(r);
    root = json_object();
    if (!root)
        return NULL;
    put(root, "schema", json_string(SCHEMA), &bad);
    put(root, "run_id", jstr(info ? info->run_id : NULL), &bad);
    if (info && info->shard)
        put(root, "shard", json_shard(info->shard, &bad), &bad);
    put(root, "run", json_run(info, &bad), &bad);
    put(root, "interrupted", json_boolean(info && info->interrupted), &bad);
    put(root, "interrupted_by", jstr(info ? info->interrupted : NULL), &bad);

    o = json_object();
    if (o) {
        put(o, "requests_ok", juint(r->ok), &bad);
        put(o, "requests_completed", juint(r->completed), &bad);
        put(o, "requests_started", juint(r->started), &bad);
        put(o, "requests_unsent", juint(r->unsent), &bad);
        put(o, "requests_error", juint(error_total(r)), &bad);
        put(o, "requests_retried", juint(r->retried), &bad);
        put(o, "data_bytes", juint(r->ok_bytes_out), &bad);
        put(o, "data_in_bytes", juint(r->ok_bytes_in), &bad);
        put(o, "all_data_bytes", juint(r->bytes_out), &bad);
        put(o, "all_data_in_bytes", juint(r->bytes_in), &bad);
        put(o, "duration_s", json_real(s.duration_s), &bad);
        put(o, "avg_speed_mbps", json_real(s.speed_mbps), &bad);
        put(o, "rate_per_s", json_real(s.rate_per_s), &bad);
    }
    put(root, "summary", o, &bad);

    o = json_object();
    for (int i = 0; o && i < YB_H__COUNT; i++)
        put(o, yb_hist_name((yb_hist_id)i), json_hist(r->h[i], &bad), &bad);
    put(root, "latency_us", o, &bad);
    {
        const char *names[YB_H__COUNT];
        const yb_hdr *hs[YB_H__COUNT];
        for (int i = 0; i < YB_H__COUNT; i++) {
            names[i] = yb_hist_name((yb_hist_id)i);
            hs[i] = r->h[i];
        }
        put(root, "histograms", yb_report_hists_json(hs, names, YB_H__COUNT), &bad);
    }

    o = json_object();
    if (o) {
        put(o, "notifications", juint(r->notifications), &bad);
        put(o, "updates", juint(r->updates), &bad);
        put(o, "notifications_per_s",
            json_real(s.duration_s > 0 ? (double)r->notifications / s.duration_s : 0.0), &bad);
        put(o, "updates_per_s",
            json_real(s.duration_s > 0 ? (double)r->updates / s.duration_s : 0.0), &bad);
    }
    put(root, "subscribe", o, &bad);

    o = json_object();
    if (o) {
        put(o, "ok", juint(r->chains_ok), &bad);
        put(o, "failed", juint(r->chains_failed), &bad);
    }
    put(root, "chains", o, &bad);

    o = json_object();
    if (o) {
        put(o, "opened", juint(r->sessions_opened), &bad);
        put(o, "tls_full", juint(r->tls_full), &bad);
        put(o, "tls_resumed", juint(r->tls_resumed), &bad);
        put(o, "reconnect_backoffs", juint(r->reconnect_backoffs), &bad);
    }
    put(root, "sessions", o, &bad);

    o = json_object();
    for (int i = 1; o && i < YB_MAX_STATUS; i++) {
        if (yb_recorder_status(r, i)) {
            snprintf(key, sizeof(key), "%d", i);
            put(o, key, juint(yb_recorder_status(r, i)), &bad);
        }
    }
    if (o && yb_recorder_status(r, 0))
        put(o, "none", juint(yb_recorder_status(r, 0)), &bad);
    put(root, "status", o, &bad);

    o = json_object();
    for (int i = 0; o && i < YB_GRPC_CODES; i++) {
        if (r->grpc[i]) {
            snprintf(key, sizeof(key), "%d", i);
            put(o, key, juint(r->grpc[i]), &bad);
        }
    }
    if (o && r->grpc[YB_GRPC_CODES])
        put(o, "other", juint(r->grpc[YB_GRPC_CODES]), &bad);
    put(root, "grpc_status", o, &bad);

    /* Every class, zeros included: consumers can index without checking. */
    o = json_object();
    for (int i = 1; o && i < YB_ERR__COUNT; i++)
        put(o, yb_err_name((yb_err_class)i), juint(r->errors[i]), &bad);
    if (o)
        put(o, "reasons", json_reasons(r, &bad), &bad);
    put(root, "errors", o, &bad);
    put(root, "error_responses", json_samples(r, &bad), &bad);
    put(root, "operations", json_ops(r, &bad), &bad);

    o = json_object();
    if (o) {
        put(o, "user_s", json_real(info ? info->cpu_user_s : 0.0), &bad);
        put(o, "sys_s", json_real(info ? info->cpu_sys_s : 0.0), &bad);
        put(o, "per_request_us", json_real(cpu_per_request_us(r, info)), &bad);
        if (io_path(r)) {
            put(o, "io", json_string(io_path(r)), &bad);
            put(o, "io_uring_threads", juint(r->gen_ring_threads), &bad);
        }
    }
    put(root, "cpu", o, &bad);

    o = json_array();
    for (size_t i = 0; o && i < r->n_iv; i++) {
        json_t *e = yb_report_interval_json(&r->iv[i]);
        if (!e || json_array_append_new(o, e) < 0)
            bad = 1;
    }
    put(root, "intervals", o, &bad);
    put(root, "cut_off", juint(r->cut_off), &bad);
    {
        yb_self_check c;
        yb_report_self_check(r, info, &c);
        json_t *sc = json_object();
        if (sc) {
            put(sc, "behind_schedule", json_boolean(c.behind_schedule), &bad);
            put(sc, "lateness_p99_ms", json_real(c.lateness_p99_ms), &bad);
            put(sc, "generator_lateness_p99_ms", json_real(c.gen_lateness_p99_ms), &bad);
            put(sc, "session_wait_p99_ms", json_real(c.wait_p99_ms), &bad);
            put(sc, "lateness_limit_ms", json_real(c.lateness_limit_ms), &bad);
            put(sc, "target_limited", json_boolean(c.target_limited), &bad);
            put(sc, "cpu_starved", json_boolean(c.cpu_starved), &bad);
            put(sc, "run_queue_wait_share", json_real(c.runq_wait_share), &bad);
            put(sc, "involuntary_switches_per_s", json_real(c.invol_switches_per_s), &bad);
            put(sc, "steal_share", json_real(c.steal_share), &bad);
            put(sc, "cpu_saturated", json_boolean(c.cpu_saturated), &bad);
            put(sc, "cpu_utilization", json_real(c.cpu_utilization), &bad);
        }
        put(root, "self_check", sc, &bad);
    }

    if (bad) {
        json_decref(root);
        return NULL;
    }
    return root;
}

/* ---- atomic file write ------------------------------------------------------ */

int yb_write_atomic(const char *path, int (*emit)(FILE *f, void *ud), void *ud, char *err,
                    size_t errlen)
{
    yb_outfile o;
    if (yb_outfile_open(&o, path, 0, err, errlen) < 0)
        return -1;
    if (emit(o.f, ud) < 0) {
        if (err && errlen)
            snprintf(err, errlen, "%s: write failed: %s", path, strerror(errno));
        yb_outfile_abort(&o);
        return -1;
    }
    return yb_outfile_commit(&o, err, errlen);
}

static int emit_json(FILE *f, void *ud)
{
    return json_dumpf(ud, f, JSON_FLAGS) < 0 || fputc('\n', f) == EOF ? -1 : 0;
}

int yb_write_json_file(const char *path, json_t *json, char *err, size_t errlen)
{
    if (!json) {
        if (err && errlen)
            snprintf(err, errlen, "no JSON to write");
        return -1;
    }
    return yb_write_atomic(path, emit_json, json, err, errlen);
}
