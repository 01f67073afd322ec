/* Cost model and fault injection of `yangblast serve`: how long the
 * simulated switch takes to answer (service-time distributions, a fixed
 * number of workers with a FIFO queue in front, a per-check login cost),
 * and which answers go wrong on purpose (connection reset, stall, HTTP or
 * gRPC status, GOAWAY).  Delays run on one timerfd (armed to the
 * nanosecond, absolute on CLOCK_MONOTONIC, polled by the libuv loop) over
 * a deadline heap: the loop never blocks, an answer is never early and is
 * late only by the wake-up, and a request costs no allocation. */
#ifndef YB_SERVE_COST_H
#define YB_SERVE_COST_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

/* ---- random numbers ---------------------------------------------------- */

/* splitmix64: small, fast and reproducible from --seed. */
typedef struct {
    uint64_t s;
} yb_rng;

void yb_rng_seed(yb_rng *r, uint64_t seed);
uint64_t yb_rng_next(yb_rng *r);
/* Uniform in [0, 1). */
double yb_rng_unit(yb_rng *r);

/* ---- service time ------------------------------------------------------- */

typedef enum { YB_DIST_FIXED = 0, YB_DIST_UNIFORM, YB_DIST_EXP } yb_dist;

typedef struct {
    yb_dist dist;
    uint64_t a_ns;      /* fixed: the time; uniform: min; exp: mean */
    uint64_t b_ns;      /* uniform: max */
    uint64_t per_kb_ns; /* added per KiB (1024 bytes, pro rata) of request body */
} yb_service_time;

/* Parses "fixed:DUR", "uniform:MIN..MAX" or "exp:MEAN", optionally followed
 * by "+per-kb:DUR" (DUR as in yb_parse_duration).  Returns 0 or -EINVAL
 * (out untouched). */
int yb_service_time_parse(const char *s, yb_service_time *out);
/* Draws one service time for a request with body_len bytes of body. */
uint64_t yb_service_time_draw(const yb_service_time *st, yb_rng *r, size_t body_len);

/* ---- faults -------------------------------------------------------------- */

typedef enum {
    YB_FAULT_RESET = 0,    /* reset@P */
    YB_FAULT_STALL,        /* stall:DUR@P */
    YB_FAULT_GOAWAY_AFTER, /* goaway-after:N (gNMI) */
    YB_FAULT_STATUS,       /* status:CODE@P */
    YB_FAULT__COUNT
} yb_fault_kind;

typedef struct {
    yb_fault_kind kind;
    double p;          /* probability 0..1 (reset, stall, status) */
    uint64_t nth;      /* "@#N": fires on the server's N-th request only (0 = use p) */
    uint64_t dur_ns;   /* stall */
    uint64_t n;        /* goaway-after */
    int code;          /* status: an HTTP status (100..599) or gRPC code (0..16) */
} yb_fault;

/* Parses one --fault value.  Returns 0 or -EINVAL. */
int yb_fault_parse(const char *s, yb_fault *out);
/* Static name of a kind ("reset", "stall", "goaway", "status"). */
const char *yb_fault_name(yb_fault_kind k);

/* What the faults decided for one request. */
typedef struct {
    int reset;          /* 1 = reset the connection instead of answering */
    int status;         /* 0 = none, else the configured CODE */
    uint64_t stall_ns;  /* extra hold before answering */
} yb_fault_verdict;

/* Rolls every reset/stall/status fault of f[0..n) for the server's
 * request number seq (1-based, counted across protocols; a reset wins over
 * a status; stalls add up).  counts[kind] (may be NULL) is incremented for
 * each fault that fired. */
void yb_faults_roll(const yb_fault *f, size_t n, uint64_t seq, yb_rng *r, yb_fault_verdict *v,
                    uint64_t *counts);

/* Maps a status fault code to the other protocol: an HTTP status for a
 * gRPC code (≤ 16), a gRPC code for an HTTP status (> 16), following
 * gRPC's HTTP-to-status table. */
int yb_grpc_to_http(int grpc_code);
int yb_http_to_grpc(int http_status);

/* ---- workers and queue ------------------------------------------------- */

typedef struct yb_job yb_job;
/* Called once when the job's service (and stall) time is over. */
typedef void (*yb_job_fn)(yb_job *j);

/* Embedded by the caller in its per-request state (no allocation here). */
struct yb_job {
    yb_job_fn done;
    uint64_t service_ns; /* set before submit: time holding a worker */
    uint64_t stall_ns;   /* set before submit: hold after service, no worker */
    /* private */
    uint64_t deadline;
    size_t heap_idx;
    int state;
    yb_job *qnext;
};

typedef struct {
    uv_loop_t *loop;
    uv_poll_t poll;        /* watches tfd */
    int tfd;               /* the timerfd, -1 before init */
    uint64_t armed;        /* its absolute expiry (uv_hrtime ns), 0 = disarmed */
    unsigned workers;      /* 0 = unlimited */
    unsigned busy;
    yb_job *qhead, *qtail; /* waiting for a worker */
    size_t qlen;
    yb_job **heap;         /* timed jobs by deadline */
    size_t hlen, hcap;
    int pumping;
    /* queue depth statistics (time-weighted mean) */
    size_t qmax;
    uint64_t t0, t_last;
    long double q_area;    /* sum of depth × ns */
    uint64_t jobs;
    /* worker occupancy: busy workers × ns, accounted at every change */
    uint64_t b_last;
    long double b_area;
} yb_sched;

/* Initialises s on loop with `workers` concurrent jobs (0 = unlimited).
 * Returns 0, or a negative errno (timerfd) or libuv error; s then holds
 * nothing to clean up. */
int yb_sched_init(yb_sched *s, uv_loop_t *loop, unsigned workers);
/* Stops and closes the timer (the loop must run once more to finish
 * closing its handle) and frees the heap; jobs still pending never
 * complete. */
void yb_sched_cleanup(yb_sched *s);
/* Submits j.  j->done may run before this returns (no wait, no delay),
 * else from the loop.  Returns 0 or -ENOMEM (j->done never runs). */
int yb_sched_submit(yb_sched *s, yb_job *j);
/* Withdraws a pending job (its owner is going away); no-op when j is not
 * pending.  j->done never runs. */
void yb_sched_cancel(yb_sched *s, yb_job *j);
/* 1 while j is queued or being timed. */
int yb_sched_pending(const yb_job *j);
/* Worker occupancy since init: the sum over time of busy workers × ns
 * (jobs in service; a stall holds no worker), accounted up to now. */
long double yb_sched_busy_area(yb_sched *s);
/* Queue depth: maximum and time-weighted mean since init. */
void yb_sched_queue_stats(yb_sched *s, size_t *max, double *mean);

#endif
