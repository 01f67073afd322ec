/* Thresholds (run/experiment --threshold EXPR): pass/fail criteria on a
 * run's figures, checked at the end against the merged recorder and, with
 * --abort-on-fail, each second while the run goes (stopping it through
 * the run's stop flag).  Also the metric vocabulary ("e2e.p99.9",
 * "errors", "rate") that `compare` names its figures with.
 *
 *   EXPR   := [SCOPE ':'] METRIC OP VALUE
 *   SCOPE  := (target | workload | operation) '=' NAME
 *   METRIC := PHASE '.' STAT | errors ['.' CLASS] | rate | requests
 *   STAT   := pN (0 < N <= 100: p50, p99.9) | min | max | mean
 *   OP     := < | <= | > | >=
 *   VALUE  := a duration with its unit (latency), N% or a count (errors),
 *             a rate with an optional /s (rate), a count (requests)
 *
 * Numbers go through the one parser of util/util.h. */
#ifndef YB_THRESHOLD_H
#define YB_THRESHOLD_H

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include "stats/recorder.h"

#define YB_TH_MAX 32          /* thresholds per run */
#define YB_TH_STOPPED (-1)    /* what --abort-on-fail stores in the stop flag */

typedef enum { YB_M_LATENCY, YB_M_ERRORS, YB_M_RATE, YB_M_REQUESTS } yb_metric_kind;
typedef enum { YB_STAT_PCT, YB_STAT_MIN, YB_STAT_MAX, YB_STAT_MEAN } yb_metric_stat;

/* One figure of a run, by name. */
typedef struct {
    yb_metric_kind kind;
    yb_hist_id hist;        /* YB_M_LATENCY: the phase */
    yb_metric_stat stat;    /* YB_M_LATENCY */
    double pct;             /* YB_STAT_PCT: 0 < pct <= 100 */
    yb_err_class err;       /* YB_M_ERRORS: one class, YB_ERR_NONE = all */
    char name[48];          /* canonical: "e2e.p99.9", "errors.timeout", "rate" */
} yb_metric;

/* Parses the metric name at s (len bytes).  Returns 0 and fills *m, or
 * -1. */
int yb_metric_parse(const char *s, size_t len, yb_metric *m);

/* The figure m of recorder r: latency in µs, errors as a count (or, with
 * percent, in % of the completed requests), rate in successful requests
 * per second of the run's duration, requests as the successful count.
 * Returns 1 with *v set, or 0 when r has nothing to measure it on (no
 * request paid that phase, nothing completed, a run of no duration). */
int yb_metric_value(const yb_metric *m, const yb_recorder *r, int percent, double *v);

typedef enum { YB_TH_LT, YB_TH_LE, YB_TH_GT, YB_TH_GE } yb_th_op;

typedef struct {
    const char *expr;         /* as given (not copied: argv's) */
    char scope_kind[16];      /* "" = the whole run, or target/workload/operation */
    char scope_name[128];
    yb_metric m;
    yb_th_op op;
    int percent;              /* errors: the limit is a percentage */
    double limit;             /* µs | count | % | per second */
    /* the verdict (yb_thresholds_eval) */
    int measured_ok;          /* 1 = measured holds a value */
    double measured;
    int pass;
    int skipped;              /* 1 = its scope is judged elsewhere (pass stays 1) */
    char note[160];           /* why there is no value (no data, unknown scope) */
} yb_threshold;

/* A part of the run a scope can name, with its own figures. */
typedef struct {
    const char *kind;         /* "target", "workload", "operation" */
    const char *name;         /* e.g. the target's inventory name or URL */
    const yb_recorder *rec;   /* its figures (NULL before the run) */
    const char *elsewhere;    /* not NULL: a part another process runs (a shard's
                                 target), where its thresholds are judged: why */
} yb_th_scope;

typedef struct {
    yb_threshold t[YB_TH_MAX];
    size_t n;
    int abort_on_fail;
    volatile sig_atomic_t *stop; /* set to YB_TH_STOPPED to stop the run */
    /* per second while the run goes (the output writer's thread only) */
    yb_hdr *cum;              /* end-to-end of the seconds so far */
    uint64_t cum_requests, cum_errors, cum_seconds;
    int stopped_by;           /* the threshold that stopped the run, or -1 */
    double stopped_at_s;      /* at the end of which second */
    double stopped_measured;  /* its figure then */
} yb_thresholds;

void yb_thresholds_init(yb_thresholds *ts);
void yb_thresholds_cleanup(yb_thresholds *ts);

/* Adds threshold expr (kept by pointer: it must outlive ts).  Returns 0,
 * or -1 with a message naming expr and what is accepted in err. */
int yb_thresholds_add(yb_thresholds *ts, const char *expr, char *err, size_t errlen);

/* Refuses a scope that names no part of the run: returns 0, or -1 with a
 * message naming the threshold and the parts the run has in err. */
int yb_thresholds_check_scopes(const yb_thresholds *ts, const yb_th_scope *sc, size_t n,
                               char *err, size_t errlen);

/* Returns how many of the thresholds the per-second check can judge
 * before the end (unscoped e2e.*, a percentage of errors or an upper
 * bound on their count, rate). */
size_t yb_thresholds_checked_per_second(const yb_thresholds *ts);

/* Prepares the per-second check of --abort-on-fail (stop: the run's stop
 * flag).  Returns 0 or -1 (out of memory). */
int yb_thresholds_arm(yb_thresholds *ts, volatile sig_atomic_t *stop);
/* The per-second check (a yb_stream on_second callback; ud is the
 * yb_thresholds): adds second iv to the figures so far and, when one of
 * the thresholds that can be judged before the end (unscoped e2e.*,
 * errors, rate) fails on them, records it and sets the stop flag. */
void yb_thresholds_second(const yb_interval *iv, void *ud);

/* Judges every threshold against the whole run (whole) or its scope (sc,
 * n).  Returns how many failed. */
size_t yb_thresholds_eval(yb_thresholds *ts, const yb_recorder *whole, const yb_th_scope *sc,
                          size_t n);

/* Prints the verdicts ("Thresholds:" and a line each; label, when not
 * NULL, names the run) and, when a threshold stopped the run, which.
 * Returns 0 or -1 on a write error. */
int yb_thresholds_text(FILE *f, const yb_thresholds *ts, const char *label);

/* Sets report's "thresholds" array and "stopped_by_threshold"
 * (yangblast-report(5)).  Returns 0 or -1. */
int yb_thresholds_json(json_t *report, const yb_thresholds *ts);

#endif
