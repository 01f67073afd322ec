/* The session study's multi-run renderings: one table per configuration
 * with a row per run (the study's layout), and the phase breakdown that
 * shows where per-request sessions lose their time. */
#include "config.h"
#include "report/report.h"

#include <inttypes.h>

int yb_report_study_table(FILE *f, const char *title, const yb_recorder *const *runs, size_t n,
                          const char *unit)
{
    char rate_col[48];
    snprintf(rate_col, sizeof rate_col, "%s/s", unit ? unit : "Requests");
    fprintf(f, "%s\n", title);
    fprintf(f, "%10s | %16s | %9s | %12s | %10s\n", "# Requests", "Avg Speed (MB/s)", "Data (MB)",
            "Duration (s)", rate_col);
    fprintf(f, "---------: | ---------------: | --------: | -----------: | ---------:\n");
    for (size_t i = 0; i < n; i++) {
        const yb_recorder *r = runs[i];
        double d = yb_report_duration_s(r), mb = (double)r->ok_bytes_out / 1e6;
        fprintf(f, "%10" PRIu64 " | %16.2f | %9.2f | %12.3f | %10.1f\n", r->ok,
                d > 0 ? mb / d : 0.0, mb, d, d > 0 ? (double)r->ok / d : 0.0);
    }
    return ferror(f) ? -1 : 0;
}

/* Mean of histogram id per request of the run (ms): the phase's total time
 * spread over every successful request (the histograms hold only those),
 * so phases paid by few requests weigh what they cost on average. */
static double per_request_ms(const yb_recorder *r, yb_hist_id id)
{
    if (!r->ok || !r->h[id])
        return 0;
    double total_us = yb_hdr_mean(r->h[id]) * (double)yb_hdr_count(r->h[id]);
    return total_us / (double)r->ok / 1000.0;
}

int yb_report_phase_breakdown(FILE *f, const char *const *labels, const yb_recorder *const *runs,
                              size_t n)
{
    fprintf(f, "%-32s %9s %9s %9s %9s %9s %9s %8s\n", "", "connect", "tls", "http2", "ttfb",
            "service", "e2e", "set-up");
    for (size_t i = 0; i < n; i++) {
        const yb_recorder *r = runs[i];
        double c = per_request_ms(r, YB_H_CONNECT), t = per_request_ms(r, YB_H_TLS),
               h = per_request_ms(r, YB_H_H2), b = per_request_ms(r, YB_H_TTFB),
               s = per_request_ms(r, YB_H_SERVICE), e = per_request_ms(r, YB_H_E2E);
        fprintf(f, "%-32s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %7.1f%%\n", labels[i], c, t, h, b,
                s, e, e > 0 ? 100.0 * (c + t + h) / e : 0.0);
    }
    fprintf(f, "(set-up = connect + tls + http2 as a share of end-to-end time)\n");
    return ferror(f) ? -1 : 0;
}

int yb_report_session_cost(FILE *f, const char *label, const yb_recorder *reuse,
                           const yb_recorder *per_request)
{
    double e = per_request_ms(per_request, YB_H_E2E) - per_request_ms(reuse, YB_H_E2E);
    double setup = per_request_ms(per_request, YB_H_CONNECT) + per_request_ms(per_request, YB_H_TLS) +
                   per_request_ms(per_request, YB_H_H2) -
                   (per_request_ms(reuse, YB_H_CONNECT) + per_request_ms(reuse, YB_H_TLS) +
                    per_request_ms(reuse, YB_H_H2));
    double ttfb = per_request_ms(per_request, YB_H_TTFB) - per_request_ms(reuse, YB_H_TTFB);
    fprintf(f,
            "%s: a new session per request costs %.3f ms more per request: %.3f ms setting the "
            "session up on the wire (connect, TLS, HTTP/2), %.3f ms more waiting for the first "
            "byte (the target's own per-session work), %.3f ms elsewhere.\n",
            label, e, setup, ttfb, e - setup - ttfb);
    return ferror(f) ? -1 : 0;
}
