/* Standard outputs for other tools: HdrHistogram's .hgrm percentile text
 * and .hlog interval log, and one CSV row per run for spreadsheets. */
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

static int emit_hgrm(FILE *f, void *ud)
{
    const yb_recorder *r = ud;
    return yb_hdr_write_hgrm(r->h[YB_H_E2E], f, 1000.0); /* µs -> ms */
}

int yb_report_hgrm(const char *path, const yb_recorder *r, char *err, size_t errlen)
{
    return yb_write_atomic(path, emit_hgrm, (void *)r, err, errlen);
}

typedef struct {
    const yb_recorder *r;
    double start_unix_s;
} hlog_ctx;

int yb_report_hlog_header(FILE *f, double start_unix_s)
{
    time_t t = (time_t)start_unix_s;
    struct tm tm;
    char when[64] = "";
    if (gmtime_r(&t, &tm))
        strftime(when, sizeof when, "%a %b %d %H:%M:%S UTC %Y", &tm);
    fprintf(f, "#[Logged with " PACKAGE_NAME " " PACKAGE_VERSION "]\n");
    fprintf(f, "#[Histogram log format version 1.3]\n");
    fprintf(f, "#[StartTime: %.3f (seconds since epoch), %s]\n", start_unix_s, when);
    fprintf(f, "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\","
               "\"Interval_Compressed_Histogram\"\n");
    return ferror(f) ? -1 : 0;
}

/* One interval line, tagged when tag is not NULL. */
static int hlog_line(FILE *f, const char *tag, uint64_t t, int64_t max_us, const uint8_t *hist,
                     size_t len)
{
    char *b64 = yb_base64_encode(hist, len);
    if (!b64)
        return -1;
    fprintf(f, "%s%s%s%.3f,%.3f,%.3f,%s\n", tag ? "Tag=" : "", tag ? tag : "", tag ? "," : "",
            (double)t, 1.0, (double)max_us / 1000.0, b64);
    free(b64);
    return ferror(f) ? -1 : 0;
}

int yb_report_hlog_interval(FILE *f, const yb_interval *iv)
{
    if (!iv->hist)
        return 0; /* a second in which nothing completed */
    if (hlog_line(f, NULL, iv->t, iv->max_us, iv->hist, iv->hist_len) < 0)
        return -1;
    for (size_t i = 0; i < iv->n_tags; i++)
        if (hlog_line(f, iv->tags[i].tag, iv->t, iv->tags[i].max_us, iv->tags[i].hist,
                      iv->tags[i].hist_len) < 0)
            return -1;
    return 0;
}

static int emit_hlog(FILE *f, void *ud)
{
    const hlog_ctx *c = ud;
    if (yb_report_hlog_header(f, c->start_unix_s) < 0)
        return -1;
    for (size_t i = 0; i < c->r->n_iv; i++)
        if (yb_report_hlog_interval(f, &c->r->iv[i]) < 0)
            return -1;
    return 0;
}

int yb_report_hlog(const char *path, const yb_recorder *r, double start_unix_s, char *err,
                   size_t errlen)
{
    hlog_ctx c = {r, start_unix_s};
    return yb_write_atomic(path, emit_hlog, &c, err, errlen);
}

/* Quotes a CSV field when it needs it (RFC 4180). */
static void csv_field(char *out, size_t cap, const char *s)
{
    if (!s)
        s = "";
    if (!strpbrk(s, ",\"\r\n")) {
        snprintf(out, cap, "%s", s);
        return;
    }
    size_t n = 0;
    if (cap < 3) {
        if (cap)
            out[0] = 0;
        return;
    }
    out[n++] = '"';
    for (; *s && n + 3 < cap; s++) {
        if (*s == '"')
            out[n++] = '"';
        out[n++] = *s;
    }
    out[n++] = '"';
    out[n] = 0;
}

#define CSV_HEADER                                                                           \
    "time_unix_s,corpus,target,protocol,sessions,concurrency,threads,streams,"                \
    "rate_target_per_s,requests_ok,requests_error,duration_s,data_mb,avg_speed_mbps,"         \
    "rate_per_s,e2e_p50_ms,e2e_p90_ms,e2e_p99_ms,e2e_p99_9_ms,e2e_max_ms,"                   \
    "service_p50_ms,service_p99_ms,sessions_opened,tls_full,tls_resumed,cpu_per_request_us," \
    "notifications,updates,sync_p50_ms,sample_lateness_p99_ms,workload,operation\n"

/* What every row of a run starts with: time, corpus, target, protocol,
 * sessions, concurrency, threads, streams, target rate. */
static int row_head(char *row, size_t cap, double now, const yb_run_info *info,
                    const char *target)
{
    char corpus[512], tg[512], proto[64], sess[64];
    csv_field(corpus, sizeof corpus, info->corpus);
    csv_field(tg, sizeof tg, target);
    csv_field(proto, sizeof proto, info->protocol);
    csv_field(sess, sizeof sess, info->sessions);
    return snprintf(row, cap, "%.3f,%s,%s,%s,%s,%u,%u,%u,%.3f,", now, corpus, tg, proto, sess,
                    info->concurrency, info->threads, info->streams, info->rate);
}

/* One row per operation of r (target `target`): counts, the run's
 * duration, rate and end-to-end percentiles of the operation's
 * successes; the figures kept per run only are left empty.  Returns 0 or
 * -1 (write error). */
static int op_rows(FILE *f, const yb_recorder *r, const yb_run_info *info, const char *target,
                   const char *workload, double now, double d)
{
    const yb_ops *t = &r->ops;
    for (size_t i = 0; i <= t->n; i++) {
        const yb_op_stats *op = i < t->n ? &t->op[i] : &t->other;
        if (i == t->n && !op->count)
            continue; /* no `other` row when nothing went there */
        char row[4096], name[2 * YB_OP_NAME_MAX + 3];
        int h = row_head(row, sizeof row, now, info, target);
        csv_field(name, sizeof name, i < t->n ? op->name : "other");
        const yb_hdr *e = op->e2e;
        double p[5] = {0, 0, 0, 0, 0};
        if (e && op->ok) {
            p[0] = (double)yb_hdr_percentile(e, 50) / 1e3;
            p[1] = (double)yb_hdr_percentile(e, 90) / 1e3;
            p[2] = (double)yb_hdr_percentile(e, 99) / 1e3;
            p[3] = (double)yb_hdr_percentile(e, 99.9) / 1e3;
            p[4] = (double)yb_hdr_max(e) / 1e3;
        }
        int n = snprintf(row + h, sizeof row - (size_t)h,
                         "%" PRIu64 ",%" PRIu64 ",%.6f,,,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,"
                         ",,,,,,,,,,%s,%s\n",
                         op->ok, op->errors, d, d > 0 ? (double)op->ok / d : 0.0, p[0], p[1],
                         p[2], p[3], p[4], workload, name);
        if (h < 0 || n < 0 || (size_t)(h + n) >= sizeof row ||
            fwrite(row, 1, (size_t)(h + n), f) != (size_t)(h + n))
            return -1;
    }
    return 0;
}

int yb_report_csv(const char *path, const yb_recorder *r, const yb_run_info *info, char *err,
                  size_t errlen)
{
    yb_outfile of;
    if (yb_outfile_open(&of, path, 1, err, errlen) < 0)
        return -1;
    int fd = fileno(of.f);
    struct stat st;
    /* a header only where a file starts: not on a device or pipe */
    int need_header = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0;
    double d = yb_report_duration_s(r), mb = (double)r->ok_bytes_out / 1e6;
    const yb_hdr *e = r->h[YB_H_E2E], *sv = r->h[YB_H_SERVICE];
    const char *slash = info->corpus ? strrchr(info->corpus, '/') : NULL;
    char workload[512];
    csv_field(workload, sizeof workload, slash ? slash + 1 : info->corpus);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double now = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    char row[4096];
    int h = row_head(row, sizeof row, now, info, info->target);
    int n = h < 0 ? -1 : snprintf(
        row + h, sizeof row - (size_t)h,
        "%" PRIu64 ",%" PRIu64 ",%.6f,%.6f,%.6f,%.3f,"
        "%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f,"
        "%" PRIu64 ",%" PRIu64 ",%.3f,%.3f,%s,\n",
        r->ok, r->completed - r->ok, d, mb, d > 0 ? mb / d : 0.0, d > 0 ? (double)r->ok / d : 0.0,
        (double)yb_hdr_percentile(e, 50) / 1e3, (double)yb_hdr_percentile(e, 90) / 1e3,
        (double)yb_hdr_percentile(e, 99) / 1e3, (double)yb_hdr_percentile(e, 99.9) / 1e3,
        (double)yb_hdr_max(e) / 1e3, (double)yb_hdr_percentile(sv, 50) / 1e3,
        (double)yb_hdr_percentile(sv, 99) / 1e3, r->sessions_opened, r->tls_full, r->tls_resumed,
        r->completed ? (info->cpu_user_s + info->cpu_sys_s) * 1e6 / (double)r->completed : 0.0,
        r->notifications, r->updates, (double)yb_hdr_percentile(r->h[YB_H_SYNC], 50) / 1e3,
        (double)yb_hdr_percentile(r->h[YB_H_SAMPLE_LATENESS], 99) / 1e3, workload);
    int bad = n < 0 || (size_t)(h + n) >= sizeof row ||
              (need_header && fputs(CSV_HEADER, of.f) == EOF) ||
              fwrite(row, 1, (size_t)(h + n), of.f) != (size_t)(h + n);
    /* then the run's operations, per target when it had several */
    if (!bad && info->n_parts) {
        for (size_t i = 0; i < info->n_parts && !bad; i++) {
            char wl[512];
            const char *pw = info->part_workloads ? info->part_workloads[i] : NULL;
            if (pw)
                csv_field(wl, sizeof wl, pw);
            bad = op_rows(of.f, info->parts[i], info, info->part_names[i], pw ? wl : workload,
                          now, d) < 0;
        }
    } else if (!bad) {
        bad = op_rows(of.f, r, info, info->target, workload, now, d) < 0;
    }
    if (bad) {
        snprintf(err, errlen, "%s: write failed: %s", path, strerror(errno));
        yb_outfile_abort(&of);
        return -1;
    }
    return yb_outfile_commit(&of, err, errlen);
}
