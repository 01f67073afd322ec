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

int yb_report_hlog_interval(FILE *f, const yb_interval *iv)
{
    if (!iv->hist)
        return 0; /* a second in which nothing completed */
    char *b64 = yb_base64_encode(iv->hist, iv->hist_len);
    if (!b64)
        return -1;
    fprintf(f, "%.3f,%.3f,%.3f,%s\n", (double)iv->t, 1.0, (double)iv->max_us / 1000.0, b64);
    free(b64);
    return ferror(f) ? -1 : 0;
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

int yb_report_csv(const char *path, const yb_recorder *r, const yb_run_info *info, char *err,
                  size_t errlen)
{
    static const char HEADER[] =
        "time_unix_s,corpus,target,protocol,sessions,concurrency,threads,streams,"
        "rate_target_per_s,requests_ok,requests_error,duration_s,data_mb,avg_speed_mbps,"
        "rate_per_s,e2e_p50_ms,e2e_p90_ms,e2e_p99_ms,e2e_p99_9_ms,e2e_max_ms,"
        "service_p50_ms,service_p99_ms,sessions_opened,tls_full,tls_resumed,cpu_per_request_us,"
        "notifications,updates,sync_p50_ms,sample_lateness_p99_ms\n";
    yb_outfile of;
    if (yb_outfile_open(&of, path, 1, err, errlen) < 0)
        return -1;
    int fd = fileno(of.f);
    struct stat st;
    /* a header only where a file starts: not on a device or pipe */
    int need_header = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0;
    double d = yb_report_duration_s(r), mb = (double)r->ok_bytes_out / 1e6;
    const yb_hdr *e = r->h[YB_H_E2E], *sv = r->h[YB_H_SERVICE];
    char corpus[512], target[512], proto[64], sess[64];
    csv_field(corpus, sizeof corpus, info->corpus);
    csv_field(target, sizeof target, info->target);
    csv_field(proto, sizeof proto, info->protocol);
    csv_field(sess, sizeof sess, info->sessions);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    char row[4096];
    int n = snprintf(
        row, sizeof row,
        "%s%.3f,%s,%s,%s,%s,%u,%u,%u,%.3f,%" PRIu64 ",%" PRIu64 ",%.6f,%.6f,%.6f,%.3f,"
        "%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f,"
        "%" PRIu64 ",%" PRIu64 ",%.3f,%.3f\n",
        need_header ? HEADER : "", (double)now.tv_sec + (double)now.tv_nsec / 1e9, corpus, target,
        proto, sess, info->concurrency, info->threads, info->streams, info->rate, r->ok,
        r->completed - r->ok, d, mb, d > 0 ? mb / d : 0.0, d > 0 ? (double)r->ok / d : 0.0,
        (double)yb_hdr_percentile(e, 50) / 1e3, (double)yb_hdr_percentile(e, 90) / 1e3,
        (double)yb_hdr_percentile(e, 99) / 1e3, (double)yb_hdr_percentile(e, 99.9) / 1e3,
        (double)yb_hdr_max(e) / 1e3, (double)yb_hdr_percentile(sv, 50) / 1e3,
        (double)yb_hdr_percentile(sv, 99) / 1e3, r->sessions_opened, r->tls_full, r->tls_resumed,
        r->completed ? (info->cpu_user_s + info->cpu_sys_s) * 1e6 / (double)r->completed : 0.0,
        r->notifications, r->updates, (double)yb_hdr_percentile(r->h[YB_H_SYNC], 50) / 1e3,
        (double)yb_hdr_percentile(r->h[YB_H_SAMPLE_LATENESS], 99) / 1e3);
    if (n < 0 || (size_t)n >= sizeof row || fwrite(row, 1, (size_t)n, of.f) != (size_t)n) {
        snprintf(err, errlen, "%s: write failed: %s", path, strerror(errno));
        yb_outfile_abort(&of);
        return -1;
    }
    return yb_outfile_commit(&of, err, errlen);
}
