/* A worker: one thread with its own libuv loop, timers, recorder and
 * exchange free list, running one "lane" for each pair of the plan it takes
 * part in (plan.h: yb_plan_place).  A lane is the worker's share of one
 * (workload, target) pair: its corpus source, issue counters, open-loop
 * state and session pool (pool.h).  The worker loop decides when each
 * lane's requests are issued (closed loop: a slot frees -> the next
 * request; open loop: the schedule's due times, schedule.h, one timer for
 * every lane), hands them to the lane's pool, records what comes back and
 * ends each lane, and the worker with its last (stop, deadline, grace
 * period, timeouts).
 *
 * Life cycle, from the engine's thread: yb_worker_new,
 * (yb_worker_set_metrics, yb_worker_set_tag), yb_worker_start (its thread
 * prepares, then waits), yb_worker_ready, yb_worker_set_start,
 * (yb_worker_set_lane), yb_worker_go or yb_worker_cancel,
 * (yb_worker_live while it runs), yb_worker_join, then yb_worker_error /
 * yb_worker_recorder, yb_worker_free.  Nothing else of a worker is shared
 * between threads. */
#ifndef YB_WORKER_H
#define YB_WORKER_H

#include <stdint.h>
#include "engine/plan.h"
#include "stats/recorder.h"

typedef struct yb_worker yb_worker;

/* Open loop: requests due within this window of the first one waiting go
 * out in one wake-up at the window's end (no --spin; see batch_wake). */
#ifndef YB_OPEN_BATCH_NS
#define YB_OPEN_BATCH_NS 250000ull
#endif
struct yb_stream_lane; /* report/stream.h */
struct yb_metrics_lane; /* report/metrics.h */

/* What a running worker publishes for the progress line: recent values,
 * read without locks (never a consistent snapshot). */
typedef struct {
    int running;            /* the worker's loop has not ended */
    uint64_t completed;     /* so far */
    uint64_t errors;        /* so far */
    uint64_t backlog;       /* waiting for a session now */
    uint64_t sec_count;     /* completed in the last whole second */
    uint64_t p50_us, p99_us;/* end-to-end in the last whole second */
} yb_worker_live;

/* Prepares worker `index` (< yb_plan_workers(p)) of plan p: its loop and
 * a lane for every pair with a place on it (each opens its corpus share
 * and pool with the target's TLS context; an open-loop lane reads its
 * share ahead).  live = 1 keeps the per-second figures of yb_worker_live;
 * per_pair (NULL = none): the plan's per-pair recorders, which the lanes
 * record into besides the worker's recorder: a pair's only lane into the
 * pair's recorder itself, the lanes of a pair spread over several workers
 * each into one of its own (yb_worker_lane_recorder); lane_recs = 1 gives
 * each lane one of its own even without per_pair (live metrics per pair).
 * p must outlive the worker.  Returns the worker, or NULL with a message
 * in err. */
yb_worker *yb_worker_new(const yb_plan *p, unsigned index, int live, yb_recorder *per_pair,
                         int lane_recs, char *err, size_t errlen);
/* Sets the run's start (uv_hrtime), from which intervals count; each
 * lane's due times and deadline count from it plus its pair's start offset
 * (yb_share.start_ns), before which the lane issues nothing.  Called
 * once, after yb_worker_ready and before yb_worker_go. */
void yb_worker_set_start(yb_worker *w, uint64_t start);
/* Gives the worker its lane of the run's streamed outputs (per-request
 * log, sealed seconds; report/stream.h).  Called at most once, before
 * yb_worker_go; without it nothing is streamed. */
void yb_worker_set_lane(yb_worker *w, struct yb_stream_lane *lane);
/* Gives the worker's lane i (< yb_worker_lanes) its lane of the live
 * metrics (report/metrics.h): the worker publishes the lane's figures
 * there on its tick and once more when it ends.  A worker of several
 * lanes must have been made with per_pair.  Called at most once per lane,
 * before yb_worker_start.  Returns 0 or -1 (out of memory, or no
 * recorder of the lane's own). */
int yb_worker_set_metrics(yb_worker *w, size_t i, struct yb_metrics_lane *m);
/* The index in the plan of the pair lane i of w runs. */
size_t yb_worker_lane_pair(const yb_worker *w, size_t i);
/* Has the worker's recorder tag each second's end-to-end histogram of lane
 * i's requests by operation, each tag named prefix + the operation
 * (yb_recorder_tag).  Called before yb_worker_start.  Returns 0 or -1 (out
 * of memory). */
int yb_worker_set_tag(yb_worker *w, size_t i, const char *prefix);
/* Starts the worker's thread, which prepares (its io_uring, its timer
 * slack, its CPU counters) and then waits for yb_worker_go or
 * yb_worker_cancel: the run's clock starts once every worker is ready.
 * Returns 0, or -1 when it could not start. */
int yb_worker_start(yb_worker *w);
/* Waits until a started worker is prepared. */
void yb_worker_ready(yb_worker *w);
/* Lets a prepared worker run, from the start yb_worker_set_start gave. */
void yb_worker_go(yb_worker *w);
/* Ends a prepared worker without running it (nothing is sent); join it
 * still. */
void yb_worker_cancel(yb_worker *w);
/* Reads what a started worker publishes (any thread). */
void yb_worker_live_read(const yb_worker *w, yb_worker_live *out);
/* Calls fn for each error reason w has published since *seen (any
 * thread; entries are immutable once published) and advances *seen. */
void yb_worker_new_reasons(const yb_worker *w, size_t *seen,
                           void (*fn)(const yb_reason_count *e, void *ud), void *ud);
/* Waits for a started worker's thread to end. */
void yb_worker_join(yb_worker *w);
/* After the join: the first corpus error that stopped one of the
 * worker's lanes, with the index of its pair in *pair, or NULL. */
const char *yb_worker_error(const yb_worker *w, size_t *pair);
/* After the join: the worker's recorder, all its lanes' figures (owned by
 * the worker; finish and merge it before yb_worker_free). */
yb_recorder *yb_worker_recorder(yb_worker *w);
/* The number of lanes the worker runs. */
size_t yb_worker_lanes(const yb_worker *w);
/* After the join: lane i's recorder (NULL unless per_pair), with the
 * index of its pair in *pair, and *own = 1 when it is the lane's own
 * (owned by the worker, as above; to be merged into the pair's), 0 when it
 * is the pair's recorder itself (the pair's only lane recorded there). */
yb_recorder *yb_worker_lane_recorder(yb_worker *w, size_t i, size_t *pair, int *own);
void yb_worker_free(yb_worker *w);

#endif
