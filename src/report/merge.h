/* yangblast merge: the JSON reports (and interval logs) of a run's shards
 * (run --shard I/N) made into the report of the whole run, exactly.
 *
 * Each report is read back (report/reader.h) into a recorder: its exact
 * histograms (yangblast-report(5) HISTOGRAMS), counters, error reasons and
 * responses, operations and per-second series, its seconds placed on the
 * wall clock by its shard.start_unix_ns.  The recorders are added with
 * yb_recorder_merge, the very addition a run makes of its workers, so the
 * merged report is rendered by the run's own text and JSON code.  The
 * per-target and per-workload rows are added by name, their percentiles
 * recomputed from their added histograms. */
#ifndef YB_MERGE_H
#define YB_MERGE_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include "codec/accept.h"
#include "report/report.h"
#include "report/threshold.h"
#include "stats/recorder.h"

#define YB_MERGE_MAX_INPUTS 1024
#define YB_MERGE_MAX_WARNINGS 64

typedef struct {
    int force;              /* merge different run ids, duplicate shards, counts that differ */
    int64_t tolerance_ns;   /* warn when shard starts differ by more (default 100 ms) */
} yb_merge_opts;

/* One input report, as the shard table shows it. */
typedef struct {
    const char *path;       /* as given (borrowed) */
    int sharded;            /* it had a shard block (run --shard / --start-at) */
    unsigned index, count;  /* shard index of count; 0 of 1 when not sharded */
    char host[256];         /* "" when unknown */
    int64_t start_unix_ns;  /* its t=0 on the wall clock; 0 = unknown */
    int64_t offset_ns;      /* its start against --start-at (0 without) */
    int clock_known, clock_synchronised;
    int64_t clock_maxerror_us;
    uint64_t requests, errors;
    double cpu_s, cpu_utilization;
    int behind_schedule, target_limited, cpu_starved, cpu_saturated;
} yb_merge_shard;

typedef struct yb_merge_part yb_merge_part;

typedef struct {
    yb_merge_shard *shard;  /* n, in shard index order (input order among equals) */
    size_t n;
    yb_recorder rec;        /* the merged figures */
    yb_run_info info;       /* the run: the first shard's settings, CPU and threads summed */
    yb_accept accept;
    double *rate_curve;
    char run_id[128];       /* "" when the reports carry none */
    int64_t start_unix_ns;  /* the earliest known start; 0 = none known */
    char interrupted[16];
    json_t *first;          /* the first shard's report: owns info's strings */
    yb_merge_part *targets, *workloads; /* rows by name */
    size_t n_targets, n_workloads;
    char warn[YB_MERGE_MAX_WARNINGS][512];
    size_t n_warn;
} yb_merge;

/* Reads the n reports at paths[] (n <= YB_MERGE_MAX_INPUTS) and merges
 * them into *m (zeroed here).  Refuses (return -1, message naming the file
 * and the key, or the two files, in err) a report that is not a run report
 * this version wrote in full (histograms included), reports of different
 * run ids, duplicate shard indexes, different shard counts or sharded
 * reports mixed with plain ones (the last four unless o->force); warns (in
 * m->warn) about missing shard indexes, starts further apart than
 * o->tolerance_ns, unsynchronised clocks and reports without a wall-clock
 * start.  Returns 0, -1 (input) or -2 (out of memory); free m with
 * yb_merge_free either way. */
int yb_merge_reports(yb_merge *m, const char *const *paths, size_t n, const yb_merge_opts *o,
                     char *err, size_t errlen);

/* yb_merge_reports on n documents already parsed (docs[i] named
 * names[i]; borrowed, the first shard's kept by reference in m->first).
 * Same returns. */
int yb_merge_docs(yb_merge *m, json_t *const *docs, const char *const *names, size_t n,
                  const yb_merge_opts *o, char *err, size_t errlen);

/* The text report of a single run (report.h), the per-target and
 * per-workload tables, then the shard table (the warnings are the
 * caller's to print).  Returns 0 or -1. */
int yb_merge_text(FILE *f, const yb_merge *m);

/* The merged yangblast-report/1 (report.h's JSON, with targets,
 * workloads and a `shards` array).  Caller json_decref's; NULL on ENOMEM. */
json_t *yb_merge_json(const yb_merge *m);

/* Judges the thresholds ts (run --threshold's grammar) on the merged run:
 * unscoped on the whole, target=/workload= on the merged rows (end-to-end
 * latency, errors, rate, requests).  Returns how many failed, -1 with a
 * message in err when one names no row or a figure the rows do not carry,
 * -2 when out of memory. */
long yb_merge_thresholds(yb_merge *m, yb_thresholds *ts, char *err, size_t errlen);

void yb_merge_free(yb_merge *m);

/* Merges the HdrHistogram interval logs at in[0..n) (as run --hlog writes
 * them) into out, written atomically: every line re-based on the earliest
 * StartTime, the lines of one tag (or none) whose starts fall in the same
 * second (rounded) added into one.  Returns 0, -1 (an input: err names the
 * file and line) or -2 (out of memory or the write failed: err says). */
int yb_merge_hlogs(const char *out, const char *const *in, size_t n, char *err, size_t errlen);

/* The same from n logs already in memory (buf[i], len[i], named
 * names[i]), written to f (NULL: only checked).  Same returns. */
int yb_merge_hlog_bufs(FILE *f, const char *const *bufs, const size_t *lens,
                       const char *const *names, size_t n, char *err, size_t errlen);

#endif
