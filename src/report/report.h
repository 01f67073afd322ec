/* Renders a merged recorder: the study's table, percentiles per phase,
 * status and error counts, generator CPU per request (text), and the same
 * in the documented JSON schema (man/yangblast-report.5). */
#ifndef YB_REPORT_H
#define YB_REPORT_H

#include <jansson.h>
#include <stdio.h>
#include "codec/accept.h"
#include "stats/recorder.h"
#include "util/walltime.h"

/* One process's part of a run divided among several (--shard) or
 * started at a wall-clock instant (--start-at): which shard, where, and
 * when its clock started against the instant asked for. */
typedef struct {
    unsigned index, count;      /* shard index of count (0 of 1: not divided) */
    const char *host;           /* gethostname */
    int64_t start_unix_ns;      /* the run's t=0, wall clock (ns since the epoch) */
    int64_t start_at_unix_ns;   /* --start-at, or 0: none */
    yb_clock_state clock;       /* the host clock's state at the start (adjtimex) */
} yb_run_shard;

/* What the run was: printed beside the measurements. */
typedef struct {
    const char *corpus;      /* corpus file */
    const char *target;      /* target URL */
    const char *protocol;    /* "restconf", "gnmi", ... */
    const char *sessions;    /* "reuse", "per-request", "original" */
    int tls_resume;          /* --tls-resume given */
    unsigned concurrency, threads, streams;
    double rate;             /* requests/s target; 0 = closed loop */
    const char *load;        /* the load model as given ("ramp:...", "timing original
                                x2"), or NULL: closed loop or fixed rate */
    const char *unit;        /* what one request is, for the table's
                                rate column: "ACL" → "ACL/s"; NULL → "Requests" */
    double cpu_user_s, cpu_sys_s; /* generator's own CPU time for the run */
    uint64_t max_errors;     /* threshold for exit code 1 */
    const char *interrupted; /* the signal that stopped the run early ("SIGINT"), or NULL */
    double planned_duration_s;  /* -D; 0 = none given */
    uint64_t planned_requests;  /* -n; 0 = none given (one pass, or -D) */
    const yb_accept *accept;    /* which replies succeeded (NULL = the default) */
    /* An open loop's load model (ramp, steps) sampled by whoever knows the
     * schedule: n_rate_curve points, rate_curve[2i] = seconds since the
     * start, rate_curve[2i + 1] = requests/s due then.  NULL/0 = none (a
     * closed loop, a fixed rate, original timing).  Written to the JSON as
     * run.target_rate_curve, so renderers draw the target without knowing
     * the engine's schedule. */
    const double *rate_curve;
    size_t n_rate_curve;
    /* run --plan: its number of workloads (0 = not a plan), whose load
     * models and sessions are their own (concurrency, streams, rate and
     * sessions above are not theirs), and whether any is an open loop. */
    size_t plan_workloads;
    int plan_open_loop;
    /* The run's parts when it had several targets or workloads: n_parts
     * recorders with the name of each one's target (and workload), for the
     * CSV's per-target operation rows; 0 = one target, info->target. */
    const yb_recorder *const *parts;
    const char *const *part_names;
    const char *const *part_workloads; /* each part's workload (NULL: the corpus') */
    size_t n_parts;
    const char *run_id;         /* the run's id (JSON run_id), or NULL */
    const yb_run_shard *shard;  /* --shard / --start-at, or NULL */
} yb_run_info;

/* The instrument's check on itself.  Open loop: send lateness has two
 * causes, told apart at the hand-over to the session pool: the generator
 * was late (behind_schedule: its p99 over 1 ms, or over a tenth of the
 * request interval when that is longer) or the request waited for a free
 * session/stream (target_limited: the target's pace or the chosen -c/-m,
 * same limit).  Any load: the generator's CPU time over 90 % of threads x
 * duration (cpu_saturated), or other processes / the hypervisor keeping it
 * off its CPU (cpu_starved: its threads waited runnable for a CPU as long as
 * they ran, or over 100 involuntary context switches/s per thread, or steal
 * over 5 % of the machine's CPU time).  Both CPU checks need a run of a
 * second or more. */
#define YB_STARVED_RUNQ_SHARE 0.50
#define YB_STARVED_INVOL_PER_S 100.0
#define YB_STARVED_STEAL_SHARE 0.05
typedef struct {
    int behind_schedule;     /* generator lateness p99 over the limit */
    int target_limited;      /* session wait p99 over the limit */
    double lateness_p99_ms;  /* both causes */
    double gen_lateness_p99_ms, wait_p99_ms, lateness_limit_ms;
    int cpu_saturated;
    double cpu_utilization;  /* CPU seconds / (duration x threads) */
    int cpu_starved;
    double runq_wait_share;  /* time waiting for a CPU / (that + time on one), worker threads */
    double invol_switches_per_s; /* per thread */
    double steal_share;      /* the machine's steal / its CPU time, during the run */
} yb_self_check;

void yb_report_self_check(const yb_recorder *r, const yb_run_info *info, yb_self_check *out);

/* Duration of the run in seconds (run_end - run_start; 0 if nothing ran). */
double yb_report_duration_s(const yb_recorder *r);

/* Prints the study's table row (with header) only:
 *   # Requests | Avg Speed (MB/s) | Data (MB) | Duration (s) | Requests/s
 * Data is request bytes sent (application data), MB = 10^6 bytes.
 * Returns 0 or -1 on a write error. */
int yb_report_table(FILE *f, const yb_recorder *r, const yb_run_info *info, const char *title);

/* Prints the full text report: the table, then latency percentiles (p50,
 * p90, p99, p99.9, max; ms) end-to-end and per phase with how many requests
 * paid each phase, status and error counts, CPU per request.  Returns 0 or
 * -1 on a write error. */
int yb_report_text(FILE *f, const yb_recorder *r, const yb_run_info *info);

/* Returns the JSON report object (caller json_decref's) or NULL. */
json_t *yb_report_json(const yb_recorder *r, const yb_run_info *info);
/* Returns one second of the series as the report's "intervals" hold it
 * (and --series streams it): t_s, requests, errors, bytes, notifications,
 * updates, p50/p99/max in µs, and its exact e2e histogram.  Caller json_decref's; NULL on ENOMEM. */
json_t *yb_report_interval_json(const yb_interval *iv);

/* The exact histogram h as the JSON reports carry it: a string, base64 of
 * HdrHistogram's V2 compressed encoding (the .hlog encoding).  Caller
 * json_decref's; NULL on ENOMEM or a NULL h. */
json_t *yb_report_hist_b64(const yb_hdr *h);
/* {names[i]: yb_report_hist_b64(h[i])} for the n histograms, a NULL one
 * left out (a breakdown's "histograms" object).  NULL on ENOMEM. */
json_t *yb_report_hists_json(const yb_hdr *const *h, const char *const *names, size_t n);

/* Prints one study table titled `title` with a row per run:
 *   # Requests | Avg Speed (MB/s) | Data (MB) | Duration (s) | UNIT/s
 * Returns 0 or -1 on a write error. */
int yb_report_study_table(FILE *f, const char *title, const yb_recorder *const *runs, size_t n,
                          const char *unit);

/* Prints, per run, the mean time per request spent in each phase
 * (connect, TLS, HTTP/2 set-up, TTFB, service, end-to-end; ms) and the
 * set-up share of end-to-end.  Returns 0 or -1 on a write error. */
int yb_report_phase_breakdown(FILE *f, const char *const *labels, const yb_recorder *const *runs,
                              size_t n);

/* Prints, for one protocol, how much more a new session per request costs
 * than a reused one (mean per request) and where: set-up on the wire, extra
 * time to first byte (the target's per-session work), the rest.  Returns 0
 * or -1 on a write error. */
int yb_report_session_cost(FILE *f, const char *label, const yb_recorder *reuse,
                           const yb_recorder *per_request);

/* Writes what emit prints (it returns 0 or -1) to path through
 * yb_outfile: a regular file through a temporary file in the same
 * directory, fsynced and renamed into place (a symbolic link is followed
 * and stays a link), so a failed or interrupted write never leaves a
 * partial file under path; a device, FIFO or socket in place; "-" to
 * stdout.  Returns 0 or -1 with err. */
int yb_write_atomic(const char *path, int (*emit)(FILE *f, void *ud), void *ud, char *err,
                    size_t errlen);

/* The end-to-end distribution in HdrHistogram's .hgrm text format
 * (values in ms), written atomically.  Returns 0 or -1 with err. */
int yb_report_hgrm(const char *path, const yb_recorder *r, char *err, size_t errlen);

/* An HdrHistogram interval log (format 1.3): one line per second with the
 * V2-compressed, base64 end-to-end histogram (values in µs; Interval_Max
 * in ms), start_unix_s being the wall-clock start.  Returns 0 or -1. */
int yb_report_hlog(const char *path, const yb_recorder *r, double start_unix_s, char *err,
                   size_t errlen);
/* Its parts, for the writer that streams the log as the run goes (run
 * --hlog, report/stream.h), which so writes what yb_report_hlog writes:
 * the header (StartTime, legend), and the lines of one second (nothing for
 * a second in which nothing completed): the untagged line (every success
 * of that second), then one "Tag=WORKLOAD/TARGET/OPERATION," line per tag
 * of iv (they add up to the untagged one).  Each returns 0 or -1. */
int yb_report_hlog_header(FILE *f, double start_unix_s);
int yb_report_hlog_interval(FILE *f, const yb_interval *iv);

/* Appends one row for this run to a CSV file (with a header line when the
 * file is new or empty), in one write.  Returns 0 or -1 with err. */
int yb_report_csv(const char *path, const yb_recorder *r, const yb_run_info *info, char *err,
                  size_t errlen);

/* Writes json to path through a temporary file renamed into place, so a
 * failed write never leaves a partial file.  Returns 0 or -1 with err. */
int yb_write_json_file(const char *path, json_t *json, char *err, size_t errlen);

#endif
