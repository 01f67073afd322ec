/* A worker: one thread with its own libuv loop, its share of the plan
 * (plan.h), its corpus source, its session pool (pool.h) and its recorder.
 * The worker loop decides when requests are issued (closed loop: a slot
 * frees -> the next request; open loop: the schedule's due times,
 * schedule.h), hands them to the pool, records what comes back and ends
 * the run (stop, deadline, grace period, timeouts).
 *
 * Life cycle, from the engine's thread: yb_worker_new, yb_worker_set_start,
 * (yb_worker_set_lane), yb_worker_start, (yb_worker_live while it runs), yb_worker_join, then
 * yb_worker_error / yb_worker_recorder, yb_worker_free.  Nothing else of a
 * worker is shared between threads. */
#ifndef YB_WORKER_H
#define YB_WORKER_H

#include <stdint.h>
#include "engine/plan.h"
#include "stats/recorder.h"

typedef struct yb_worker yb_worker;
struct yb_stream_lane; /* report/stream.h */

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

/* Prepares worker `index` of pair `pair` of plan p (opens its corpus share, TLS context,
 * loop; an open-loop worker reads its share ahead).  live = 1 keeps the
 * per-second figures of yb_worker_live.  p must outlive the worker.
 * Returns the worker, or NULL with a message in err. */
yb_worker *yb_worker_new(const yb_plan *p, size_t pair, unsigned index, int live, char *err,
                         size_t errlen);
/* Sets the run's start (uv_hrtime), from which intervals count; the
 * pair's due times and deadline count from it plus the pair's start offset
 * (yb_share.start_ns), before which the worker issues nothing.  Called
 * once, before yb_worker_start. */
void yb_worker_set_start(yb_worker *w, uint64_t start);
/* Gives the worker its lane of the run's streamed outputs (per-request
 * log, sealed seconds; report/stream.h).  Called at most once, before
 * yb_worker_start; without it nothing is streamed. */
void yb_worker_set_lane(yb_worker *w, struct yb_stream_lane *lane);
/* Starts the worker's thread.  Returns 0, or -1 when it could not start. */
int yb_worker_start(yb_worker *w);
/* Reads what a started worker publishes (any thread). */
void yb_worker_live_read(const yb_worker *w, yb_worker_live *out);
/* Calls fn for each error reason w has published since *seen (any
 * thread; entries are immutable once published) and advances *seen. */
void yb_worker_new_reasons(const yb_worker *w, size_t *seen,
                           void (*fn)(const yb_reason_count *e, void *ud), void *ud);
/* Waits for a started worker's thread to end. */
void yb_worker_join(yb_worker *w);
/* After the join: the corpus error that stopped the worker, or NULL. */
const char *yb_worker_error(const yb_worker *w);
/* After the join: the worker's recorder (owned by the worker; finish and
 * merge it before yb_worker_free). */
yb_recorder *yb_worker_recorder(yb_worker *w);
void yb_worker_free(yb_worker *w);

#endif
