/* Outputs written while the run goes: the per-request log (--log, JSON
 * lines or CSV), the per-second series (--series, JSON lines) and the
 * HdrHistogram interval log (--hlog).  One writer thread formats and
 * writes them; the workers only hand over, and never wait for the disk:
 *
 *   - each worker has a lane: a bounded single-producer ring of finished
 *     requests (YB_STREAM_RING entries), and a queue of the seconds its
 *     recorder sealed (yb_recorder_seal);
 *   - the writer drains the rings every few milliseconds and writes a
 *     second once every worker has sealed it (the sum of the workers'
 *     seconds, as yb_recorder_merge adds them up at the end);
 *   - a full ring drops the request's log line and counts it (reported
 *     after the run, never silently): a worker that waited for the disk
 *     would distort the very latencies it measures.  A full queue of
 *     seconds loses nothing: the worker hands them over on a later tick,
 *     and whatever is still missing at the end is written from the merged
 *     recorder, which holds the same figures.
 *
 * Files are written in place as they grow (tail -f works), each write
 * ending at a line's end, and flushed at least every YB_STREAM_POLL_MS:
 * after a kill -9 a file holds every line written so far, the last one
 * complete unless the kill came in the middle of that write.
 *
 * Life cycle: yb_stream_open (before the run: opens the files), then the
 * engine calls yb_stream_lanes and yb_stream_launch (before the run's
 * clock starts), yb_stream_start (when it does), gives each worker its
 * lane, and calls
 * yb_stream_end once the workers have joined and their recorders are
 * merged; then yb_stream_close (figures and errors) and yb_stream_free. */
#ifndef YB_STREAM_H
#define YB_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include "stats/recorder.h"

#define YB_STREAM_RING 8192       /* log lines a worker may have waiting */
#define YB_STREAM_POLL_MS 10      /* the writer's pass interval */

typedef struct {
    const char *log;     /* --log FILE ("-" = stdout) or NULL */
    int log_csv;         /* --log-format csv */
    const char *series;  /* --series FILE or NULL */
    const char *hlog;    /* --hlog FILE or NULL */
    unsigned shard;      /* the run's shard index (--shard I/N; 0 when whole),
                          * on every log line */
    /* Called on the writer's thread with each second once every worker
     * has sealed it, while the run goes on (never the last, partial
     * second, nor those written after the workers ended): run
     * --abort-on-fail's check.  NULL = none. */
    void (*on_second)(const yb_interval *iv, void *ud);
    void *second_ud;
} yb_stream_opts;

typedef struct yb_stream yb_stream;
typedef struct yb_stream_lane yb_stream_lane;

/* What the writer did, for the run's messages. */
typedef struct {
    uint64_t log_lines;    /* per-request lines written */
    uint64_t log_dropped;  /* lines dropped because the writer fell behind */
    uint64_t seconds;      /* seconds written to --series / --hlog */
    uint64_t seconds_late; /* of which written only at the end of the run */
} yb_stream_stats;

/* Opens the outputs o names (in place; an existing regular file is
 * truncated) and writes the CSV header.  Returns the stream (also when o
 * names none), or NULL with a message naming the file in err. */
yb_stream *yb_stream_open(const yb_stream_opts *o, char *err, size_t errlen);

/* Engine side.  Prepares one lane per worker (before the run's clock
 * starts: it allocates the rings).  Returns 0, or -1 with err. */
int yb_stream_lanes(yb_stream *s, unsigned workers, char *err, size_t errlen);
/* Starts the writer thread, which writes nothing until yb_stream_start
 * (its start is then not in the run's first milliseconds).  Returns 0, or
 * -1 with err. */
int yb_stream_launch(yb_stream *s, char *err, size_t errlen);
/* Records run_start (uv_hrtime; its wall clock goes into the .hlog
 * header), writes the header and lets the writer write. */
void yb_stream_start(yb_stream *s, uint64_t run_start);
/* 1 when the outputs include --hlog, whose seconds carry per-operation
 * tags: the engine then has each worker's recorder tag them
 * (yb_recorder_tag). */
int yb_stream_tagged(const yb_stream *s);
/* Worker `worker`'s lane (valid until yb_stream_free). */
yb_stream_lane *yb_stream_lane_of(yb_stream *s, unsigned worker);
/* 1 when the per-request log is on (the worker may skip its hand-over). */
int yb_stream_logs(const yb_stream_lane *l);

/* Worker side (the lane's own worker thread only; never blocks).  Hands
 * over one finished request: res (times absolute, uv_hrtime; its reason
 * as yb_result_reason gives it), the corpus record it came from, its
 * index among its pair's requests across the whole run (every shard's:
 * engine/shard.h), its run-wide session number (0 = none), and the
 * workload and target of the run it belonged to
 * (yb_engine_opts.log_workload, .log_target).  A full ring counts the
 * line as dropped. */
void yb_stream_result(yb_stream_lane *l, const yb_result *res, uint64_t record,
                      uint64_t index, uint64_t session, unsigned workload, unsigned target);
/* Hands over the worker's next sealed second (iv->t must be the second
 * after the last one handed over; iv is copied).  Returns 0, or -1 when
 * the queue is full or memory short: hand it over again later. */
int yb_stream_second(yb_stream_lane *l, const yb_interval *iv);
/* The worker has ended, having sealed n_seconds seconds in all. */
void yb_stream_lane_end(yb_stream_lane *l, uint64_t n_seconds);

/* After the workers joined: stops the writer and writes what it has not
 * written yet from merged, the workers' merged recorder.  Returns 0 or -1
 * with err (the first write error of any output). */
int yb_stream_end(yb_stream *s, const yb_recorder *merged, char *err, size_t errlen);

/* Flushes and closes the outputs and fills *st.  Returns 0, or -1 with
 * the first write error (naming the file) in err. */
int yb_stream_close(yb_stream *s, yb_stream_stats *st, char *err, size_t errlen);
void yb_stream_free(yb_stream *s);

#endif
