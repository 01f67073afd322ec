/* Live metrics: `--metrics-listen ADDR:PORT` serves the run's figures as
 * Prometheus text (or OpenMetrics text when the scraper's Accept header
 * asks for it) at GET /metrics while the run goes and until the report is
 * written (plus --metrics-linger).
 *
 * Data flows one way, as for the streamed outputs (report/stream.h): each
 * worker publishes a snapshot of its recorder on its tick (a triple
 * buffer per lane: the worker fills its back buffer and swaps it in with
 * one atomic exchange; the server swaps the freshest one out the same
 * way), so neither side ever waits for the other.  A scrape adds up the
 * lanes' latest snapshots; a lane keeps its last one after its worker
 * ended, so counters never go back, across the runs of an experiment too.
 *
 * The server is one thread with poll() on the listening socket and at
 * most YB_METRICS_MAX_CONNS connections, each with a bounded request
 * (YB_METRICS_REQ_MAX bytes), one answer and a deadline
 * (YB_METRICS_CONN_MS): a slow or hostile scraper costs a slot for a
 * bounded time and never the workers anything.
 *
 * A lane is one worker's share of one (workload, target) pair (a worker
 * runs one lane per pair it takes part in, engine/worker.h).
 *
 * Per-target / per-workload labels: the first max_series distinct
 * (workload, target) pairs get their own series; the rest are added up
 * under workload="other", target="other", and counted in
 * yangblast_metrics_series_grouped. */
#ifndef YB_METRICS_H
#define YB_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include "stats/recorder.h"

#define YB_METRICS_MAX_CONNS 8
#define YB_METRICS_CONN_MS 5000          /* a connection's whole life */
#define YB_METRICS_SERIES_DEFAULT 64
#define YB_METRICS_SERIES_LIMIT 4096
#define YB_METRICS_PUBLISH_NS 100000000ull /* a worker publishes every 100 ms */
#define YB_METRICS_LABEL_MAX 128         /* bytes of a label value kept */
#define YB_METRICS_BODY_MAX (64u << 20)  /* a scrape's body cap */

typedef struct yb_metrics yb_metrics;
typedef struct yb_metrics_lane yb_metrics_lane;

typedef struct {
    const char *listen;   /* ADDR:PORT, :PORT or [v6]:PORT (util.h yb_parse_listen) */
    size_t max_series;    /* distinct (workload, target) label pairs; 0 = default */
    /* for the self-check's lateness limit, as the report judges it */
    int open_loop;
    double rate;          /* fixed rate (0 = none) */
} yb_metrics_opts;

/* Binds the listener and starts the server thread.  Returns the server, or
 * NULL with a message naming the address in err. */
yb_metrics *yb_metrics_open(const yb_metrics_opts *o, char *err, size_t errlen);
/* The bound address as "ip:port" ([v6]:port), e.g. for port 0. */
const char *yb_metrics_address(const yb_metrics *m);

/* Engine side, before the run's workers start: a new lane for one worker
 * of the pair (workload, target) (label values; copied).  The lane lives
 * until yb_metrics_free.  Returns it, or NULL (out of memory) with err. */
yb_metrics_lane *yb_metrics_lane_new(yb_metrics *m, const char *workload, const char *target,
                                     char *err, size_t errlen);

/* Worker side (the lane's own worker only; never blocks, never
 * allocates): publishes r's counters and live histograms (r->live), the
 * requests in flight (written to a session, unanswered) and waiting for a
 * session (backlog), when YB_METRICS_PUBLISH_NS passed since the last
 * publication at now (uv_hrtime) or when final (the worker ended: also
 * marks the lane as no longer running).  thread: this lane speaks for its
 * worker thread (one lane per worker does), which the self-check counts. */
void yb_metrics_publish(yb_metrics_lane *l, const yb_recorder *r, uint64_t in_flight,
                        uint64_t backlog, int thread, uint64_t now, int final);

/* The run's reports are written: the figures are final
 * (yangblast_report_written 1). */
void yb_metrics_report_written(yb_metrics *m);

/* Renders what a scrape gets (Prometheus text 0.0.4, or OpenMetrics 1.0.0
 * with openmetrics) into a malloc'd buffer (caller frees).  Call from one
 * thread at a time (the server's, or a test's while no server runs).
 * Returns 0, or -1 when out of memory or over YB_METRICS_BODY_MAX. */
int yb_metrics_render(yb_metrics *m, int openmetrics, char **out, size_t *len);

/* Stops the server (open connections are closed) and frees everything. */
void yb_metrics_free(yb_metrics *m);

#endif
