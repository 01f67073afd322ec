/* The plan: what a run is to do, and how its work is shared among the
 * workers.  A plan is a list of (workload, target) pairs; a workload is a
 * corpus with its load model and session policy (yb_engine_opts), a target
 * where its sessions connect.  Every worker takes a share of every pair:
 * records (or whole recorded connections) k with k mod workers = its
 * index, its part of the concurrency, of the session pool and of the -n
 * budget, and every workers-th due time of the pair's schedule.
 *
 * A plan holds one pair (the options of `run`) or several (a fleet, a
 * routed mixed corpus: src/cli/fleet.c; the workloads of a plan file:
 * src/cli/plan.c).  The pairs share the plan's
 * `workers` threads: a worker runs a "lane" for each pair it takes part
 * in.  Pair p runs on span_p = min(workers, its concurrency) workers (at
 * least 1), laid out one after the other round the workers: the first
 * pair on workers 0 .. span_0 - 1, the next from there on, wrapping
 * round.  Within its span a pair is shared exactly as a 1 x 1 plan of
 * span_p workers would be, so 1,000 targets with one session each run on
 * `workers` threads, not 1,000.  A pair may start later than the run
 * (start_ns) and stop before it ends (duration_ns); the run ends when
 * every pair is done.  Pure arithmetic over the options: no I/O, no
 * clocks. */
#ifndef YB_PLAN_H
#define YB_PLAN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include "codec/codec.h"
#include "corpus/rewrite.h"
#include "engine/pool.h"
#include "engine/schedule.h"
#include "engine/shard.h"
#include "engine/target.h"
#include "transport/transport.h"

typedef struct yb_progress yb_progress; /* engine.h */
struct yb_stream;                       /* report/stream.h */
struct yb_authmap;                      /* engine/route.h */
struct yb_metrics;                      /* report/metrics.h */

/* --io: plain TCP sessions' reads and writes go through the worker's
 * io_uring where the kernel allows one (AUTO), must (URING: a worker
 * that cannot have one fails to start), or through libuv's epoll. */

/* One workload against one target, as `run` and `experiment` parse it:
 * what is sent (corpus, codec settings), when (load model), on which
 * sessions (policy) and for how long.  Read-only during the run. */
typedef struct {
    const char *corpus_path;
    int route;               /* YB_ROUTE_*: the records this workload takes */
    /* --route authority: only the records whose recorded authority names
     * inventory target auth_target (engine/route.h); NULL = every one */
    const struct yb_authmap *authmap;
    int auth_target;
    const yb_codec_ops *ops; /* codec for the corpus' protocol */
    yb_target target;
    unsigned threads;        /* workers, >= 1 */
    unsigned concurrency;    /* -c: sessions across all workers, >= threads */
    unsigned streams;        /* -m: requests in flight per session (HTTP/2
                              * streams; 1 for HTTP/1.1): the closed loop
                              * keeps concurrency x streams in flight */
    yb_sess_policy policy;
    int tls_resume;          /* per-request sessions resume TLS */
    int io;                  /* YB_IO_*: how plain sessions do their I/O
                              * (the first workload's, for every worker) */
    uint64_t requests;       /* total requests; 0 = one pass over the corpus */
    uint64_t start_ns;       /* start offset: the workload idles this long after
                              * the run's start (a plan's workloads start apart) */
    uint64_t duration_ns;    /* stop issuing this long after its start; 0 = none */
    uint64_t timeout_ns;     /* per request (and connect); 0 = none */
    /* --split: this workload is part split_i of split_n (0 or 1 = whole)
     * of one load model divided among targets.  Its workers then take the
     * shares split_i, split_n + split_i, ... of workers x split_n: the
     * records, -n, -c and the schedule's due times are shared out as among
     * that many workers, so the parts add up to the whole exactly. */
    unsigned split_i, split_n;
    /* --shard I/N: this process runs shard I of N of the workload
     * (engine/shard.h): item k of it (due time, -n request, record,
     * recorded connection, session of -c) is the shard's when k mod N = I.
     * Its workers take their shares as workers place x N + I of span x N
     * of the whole run (outside any --split), and its sessions are the
     * shard's part of -c.  count 0 or 1 = the whole workload. */
    yb_shard shard;
    uint64_t cache_bytes;    /* prepared-request cache per worker */
    yb_tls_client_opts tls;
    yb_codec_cfg codec;
    yb_schedule sched;       /* open loop when sched.kind != YB_SCHED_NONE; a
                              * view (schedule.h) of the schedule the command
                              * parsed, which holds its steps */
    uint64_t max_backlog;    /* open loop: due requests allowed to wait per worker */
    uint64_t max_backlog_bytes; /* ... and the memory they may hold (streamed
                              * requests' prepared bytes) */
    uint64_t max_ops;        /* distinct operations reported (stats/ops.h), 0 = default */
    const yb_rewrite *rewrite; /* rules applied to each record when it is
                              * prepared (corpus/rewrite.h), or NULL */
    uint64_t spin_ns;        /* open loop: wake this early and spin to the due time */
    int timing_original;     /* open loop at the corpus' recorded times */
    double speed;            /* timing_original: time scale (2 = twice as fast) */
    volatile sig_atomic_t *stop; /* set asynchronously to stop the run */
    /* Called from the calling thread about once a second while the run
     * goes on (NULL = no progress). */
    void (*progress)(const yb_progress *p, void *ud);
    void *progress_ud;
    /* Called from the calling thread (never a worker's) within about 50 ms
     * of each new distinct error reason's first occurrence, with its time
     * since the start (s), class and text (NULL = not wanted).  Workers
     * only publish reasons (yb_recorder_reasons_published); they never
     * wait for this. */
    void (*on_reason)(double t_s, yb_err_class cls, const char *reason, void *ud);
    void *reason_ud;
    uint64_t grace_ns;       /* in-flight grace period after a stop */
    /* The per-pair recorders (yb_engine_run_plan's per_pair) keep each
     * second's latency too, not only its counts (read from the first
     * pair; experiment sweep judges each target's measured seconds). */
    int pair_series_latency;
    /* --start-at: the wall-clock instant (ns since the Unix epoch) that is
     * the run's start; 0 = as soon as the workers are prepared.  The engine
     * prepares every worker (sources read ahead, TLS contexts, pools) and
     * then waits for it; a stop while it waits ends the run before any
     * request (yb_engine_run_plan returns YB_ENGINE_NOT_STARTED). */
    int64_t start_at_ns;
    /* Set by the engine, when not NULL, to the wall clock of the run's
     * start (ns since the Unix epoch), read as the clock starts. */
    int64_t *started_unix_ns;
    /* Outputs written as the run goes (per-request log, per-second series,
     * .hlog), opened by the caller; the engine feeds them and ends them
     * with the merged recorder.  NULL = none. */
    struct yb_stream *stream;
    /* Which workload and which target of the run this pair is, numbered
     * from 0 as the report lists them (the per-request log says them). */
    unsigned log_workload, log_target;
    /* Live metrics (--metrics-listen), opened by the caller: each worker
     * publishes its recorder there as the run goes.  NULL = none. */
    struct yb_metrics *metrics;
    /* The pair's names in per-workload / per-target figures (live
     * metrics): NULL = the corpus file's name, scheme://authority. */
    const char *workload_name, *target_name;
} yb_engine_opts;

/* Routing: which of a mixed corpus' records a workload takes. */
#define YB_ROUTE_ALL 0 /* every record */
#define YB_ROUTE_H1 1  /* HTTP/1.1 records only (RESTCONF, other HTTP/1.1) */
#define YB_ROUTE_H2 2  /* HTTP/2 records only (gNMI, other HTTP/2) */

#define YB_PLAN_MAX_PAIRS 4096

typedef struct {
    const yb_engine_opts *workload; /* corpus, load model, session policy */
    const yb_target *target;        /* where its sessions connect */
    unsigned first;                 /* the first of its workers (set by yb_plan_add) */
} yb_plan_pair;

typedef struct {
    unsigned workers;               /* threads at most, >= 1 (yb_plan_workers: how many run) */
    size_t n_pairs;
    yb_plan_pair pair[YB_PLAN_MAX_PAIRS];
} yb_plan;

/* One worker's share of one pair (its lane of the pair). */
typedef struct {
    unsigned worker, workers; /* its place among the pair's workers (the
                               * span): its request k is the pair's global
                               * request k * workers + worker (one schedule,
                               * interleaved) */
    int by_conn;              /* the corpus is shared by recorded connection */
    unsigned slots;           /* requests in flight: its sessions x streams
                               * (closed loop); also the cap on per-request
                               * sessions open at once */
    unsigned sess_limit;      /* persistent sessions open at once */
    uint64_t budget;          /* requests to issue; UINT64_MAX = until the end */
    int cycle;                /* wrap around the corpus share */
    int open_loop;            /* due times from the schedule or the recording */
    uint64_t start_ns;        /* its first request no earlier than this after the
                               * run's start (the workload's start offset) */
    uint64_t run_ns;          /* stop issuing this long after its own start
                               * (start_ns); 0 = none */
    uint64_t max_wait;        /* requests allowed to wait for a session */
    uint64_t max_wait_bytes;  /* ... and the memory they may hold */
} yb_share;

/* The plan of one workload against one target (o and o->target must
 * outlive the plan). */
void yb_plan_single(yb_plan *p, const yb_engine_opts *o);

/* Adds the pair (o, o->target) to p, whose workers come from the first
 * pair, and places it on the workers after the previous pair's (o must
 * outlive the plan; its concurrency must not change afterwards).  Returns
 * 0, or -1 when p is full. */
int yb_plan_add(yb_plan *p, const yb_engine_opts *o);

/* How many workers pair `pair` runs on: min(p->workers, its concurrency),
 * at least 1.  Its workers are p->pair[pair].first and the span - 1 after
 * it, modulo p->workers. */
unsigned yb_plan_span(const yb_plan *p, size_t pair);

/* The worker threads the plan runs on: min(p->workers, the sum of the
 * pairs' spans). */
unsigned yb_plan_workers(const yb_plan *p);

/* Worker `w`'s place among pair `pair`'s workers (0 .. span - 1), or -1
 * when the pair has no lane on worker w. */
int yb_plan_place(const yb_plan *p, size_t pair, unsigned w);

/* The plan's target rate t_ns after the run's start (requests/s): over
 * its pairs with a rate schedule, their schedule's rate then, from their
 * start offset to the end of their duration or schedule (a --split part
 * its share of it).  *any (may be NULL) is set to 1 when some pair has a
 * rate schedule at all.  For progress and the reports' target curve. */
double yb_plan_rate_at(const yb_plan *p, uint64_t t_ns, int *any);

/* Fills *s with the share of pair `pair` (< p->n_pairs) taken by the
 * pair's worker `worker` (its place, 0 .. span - 1: yb_plan_place). */
void yb_plan_share(const yb_plan *p, size_t pair, unsigned worker, yb_share *s);

#endif
