/* The replay engine, as the commands see it: yb_engine_run runs a plan
 * (today: one workload against one target, yb_engine_opts) on N worker
 * threads and merges their recorders.  The data flows one way:
 *
 *   engine.c   the run: plan -> workers on one clock -> progress -> merge
 *   plan.c     what is to be run, and each worker's share of it
 *   worker.c   a worker's loop: when requests are due (schedule.c), which
 *              request comes next (source.c), records what comes back
 *   pool.c     the sessions of one target: which session carries a request
 *              (reuse, per-request, original, TLS resumption)
 *   then codec (HTTP/1.1 | HTTP/2 + gRPC) -> transport (TCP | TLS)
 *   results -> recorder (per worker) -> merged here -> report
 *
 * Each file talks only to those below it: the pool gives exchanges back
 * to its worker through yb_pool_host, as a codec talks to its session
 * through yb_codec_host. */
#ifndef YB_ENGINE_H
#define YB_ENGINE_H

#include <stdint.h>
#include "engine/plan.h"
#include "engine/target.h"
#include "stats/recorder.h"

/* A once-a-second snapshot for live progress (merged across workers). */
struct yb_progress {
    double elapsed_s;
    double target_rate;     /* open loop: the schedule's rate now; 0 = closed loop */
    uint64_t completed;     /* so far */
    uint64_t last_completed;/* in the last second */
    uint64_t errors;        /* so far */
    uint64_t backlog;       /* waiting for a session now */
    double p50_ms, p99_ms;  /* end-to-end, last second (p99: worst worker) */
};

/* yb_engine_run(_plan)'s return when the run was stopped while it waited
 * for its start time (yb_engine_opts.start_at_ns): no request was sent. */
#define YB_ENGINE_NOT_STARTED (-2)

/* Runs the replay and merges every worker's recorder into *out (which the
 * caller has initialised).  Returns 0 when the run happened (per-request
 * errors are in *out), or -1 with a message in err for set-up failures
 * (unreadable corpus, bad TLS files, thread creation), or
 * YB_ENGINE_NOT_STARTED (message in err) when a stop came before the
 * start time. */
int yb_engine_run(const yb_engine_opts *o, yb_recorder *out, char *err, size_t errlen);

/* The same for a plan of several pairs (plan.h: they share the workers,
 * each pair its own lanes, sources and sessions, all on one clock).  The run's own settings (stop,
 * progress, stream, reasons, grace) are read from the first pair's
 * workload.  per_pair, when not NULL, holds plan->n_pairs recorders (the
 * caller's, initialised) that get each pair's figures (its per-second
 * series counts only: series_counts_only is set); *out gets them all. */
int yb_engine_run_plan(const yb_plan *plan, yb_recorder *out, yb_recorder *per_pair, char *err,
                       size_t errlen);

#endif
