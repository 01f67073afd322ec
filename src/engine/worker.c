/* The worker loop (see worker.h): issues requests when they are due,
 * hands them to the session pool, records what comes back, ends the run.
 * It owns the exchanges (allocated, recycled and recorded here); the pool
 * gives them back through yb_pool_host. */
#include "config.h"
#include "engine/worker.h"
#include "engine/pool.h"
#include "engine/source.h"
#include "codec/blobs.h"
#include "report/metrics.h"
#include "report/stream.h"
#include "tmpl/pick.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

typedef struct yb_worker worker;
typedef struct lane lane;

/* The worker's two heaps of lanes, each by one of the lane's times. */
enum { H_DUE, H_CHECK };
typedef struct {
    lane **a;            /* room for every lane (allocated with them) */
    size_t n;
    int k;               /* H_DUE or H_CHECK: which time orders it */
} lane_heap;

/* What a worker publishes for the progress line (relaxed atomics: the
 * reader only wants a recent value, never a consistent snapshot). */
typedef struct {
    _Atomic uint64_t completed, errors, backlog, sec, sec_count;
    _Atomic uint64_t p50_us, p99_us;
    _Atomic int running;
} live_stats;

/* One pair of the plan inside this worker: its share, its corpus source,
 * what it has issued, its place in the schedule and its session pool.
 * Everything else (loop, timers, recorder, exchanges) is the worker's. */
struct lane {
    worker *w;
    size_t pair;         /* in the plan */
    const yb_engine_opts *o;  /* the workload */
    const yb_target *target;
    yb_share share;      /* of the plan's pair: slots, budget, sessions, ... */
    yb_source *src;
    yb_metrics_lane *mlane; /* live metrics (NULL = none) */
    uint32_t tag;        /* its tag in the worker recorder's seconds (yb_recorder_tag) */
    yb_pool *pool;       /* the target's sessions */
    yb_recorder *rec;    /* the pair's figures (NULL = not wanted): the pair's
                          * recorder itself, or (own_rec) this lane's part of it */
    int own_rec;
    uint32_t *opmap;     /* worker operation index -> rec's index + 1 (0 = not yet) */
    size_t n_opmap;
    uint64_t issued;
    unsigned outstanding;/* issued and not finished */
    uint64_t start;      /* its own start: the run's + the pair's offset */
    uv_timer_t *begin;   /* closed loop with a start offset: wakes it then
                          * (NULL = none: a fleet has a lane a target) */
    int idle;            /* closed loop: before its start offset */
    /* open loop */
    uint64_t next_k;     /* this lane's next request index */
    uint64_t next_due;   /* absolute due time of request next_k */
    yb_exchange *next_x; /* --timing original: the next request, read ahead */
    uint64_t pass_offset;/* --timing original: added to recorded times per pass */
    uint64_t last_ts, last_pass;
    /* its times in the worker's two heaps (0 = not in it): [H_DUE] when
     * the worker's timer must wake it (open loop), [H_CHECK] when the
     * tick must look at it (stop, deadline, grace, timeouts, back-off);
     * pos: its index in each heap + 1 (0 = not in it) */
    uint64_t at[2];
    size_t pos[2];
    uint64_t waiting;    /* its pool's waiting exchanges, as last seen (backlog) */
    uint64_t deadline;   /* stop issuing at (0 = none) */
    uint64_t grace_end;  /* cut in-flight work off at (0 = not stopping) */
    int exhausted;       /* nothing more to issue */
    int done;            /* exhausted and nothing in flight: its sessions closed */
    yb_exchange *steps, *steps_tail; /* chains: next steps to send (pump) */
    uint64_t reserved;   /* chains: steps still to come of those started (a
                          * chain starts only when -n has room for all of it) */
};

struct yb_worker {
    lane *lanes;
    size_t n_lanes, n_done;
    const yb_engine_opts *o;  /* the first lane's workload: the run's settings */
    int open_loop;       /* some lane runs an open loop */
    uv_loop_t loop;
    yb_uring *ring;      /* plain sessions' I/O, or NULL (run_loop) */
    uv_timer_t tick;
    uint64_t tick_ns;
    yb_recorder rec;
    yb_mem_budget mem;   /* response bytes its codecs may keep */
    yb_stream_lane *out; /* streamed outputs (NULL = none) */
    uint64_t handed;     /* sealed seconds handed to the stream */
    yb_hdr *live_h;      /* end-to-end of the current second (progress only) */
    uint64_t live_sec;   /* second index live_h covers */
    live_stats live;
    int tfd;             /* timerfd: ns-precise wake-ups for due times */
    uv_poll_t tpoll;
    int ring_timer;      /* the ring's alarm wakes for due times (tfd: if it cannot) */
    lane_heap due;       /* open-loop lanes by wake time, earliest first */
    lane_heap check;     /* lanes by when the tick must look at them */
    uint64_t waiting;    /* the sum of the lanes' `waiting` */
    uint64_t outstanding;/* the sum of the lanes' `outstanding` (run_loop) */
    size_t n_mlanes;     /* lanes with a live metrics lane */
    int stopping;        /* the stop signal has been seen */
    int preopening;      /* before the gate: open-loop lanes' sessions are
                          * being opened (preopen); the pools' kicks wait */
    yb_exchange *free_x; /* recycled exchanges */
    yb_blobs *blobs;     /* request bodies its lanes' caches share (a fleet: one per corpus record) */
    uint64_t kicks;      /* session events (reads, set-ups, closes) so far */
    unsigned poll_skip;  /* idle spells left to sleep at once (run_loop) */
    unsigned poll_backoff;
    int finished;        /* teardown started */
    int failed;
    size_t failed_pair;  /* the pair whose corpus failed */
    char err[512];
    pthread_t thread;
    /* the start gate (yb_worker_start, yb_worker_ready, yb_worker_go) */
    pthread_mutex_t gate_mu;
    pthread_cond_t gate_cv;
    int gate;            /* GATE_* */
    int gate_inited;
};

enum { GATE_PREPARING, GATE_READY, GATE_GO, GATE_CANCEL };

/* ---- the heaps: lanes by the time they next need the CPU ------------------ */

static int earlier(const lane_heap *h, const lane *a, const lane *b)
{
    return a->at[h->k] < b->at[h->k];
}

static void heap_swap(lane_heap *h, size_t i, size_t j)
{
    lane *t = h->a[i];
    h->a[i] = h->a[j];
    h->a[j] = t;
    h->a[i]->pos[h->k] = i + 1;
    h->a[j]->pos[h->k] = j + 1;
}

static void heap_up(lane_heap *h, size_t i)
{
    while (i > 0 && earlier(h, h->a[i], h->a[(i - 1) / 2])) {
        heap_swap(h, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void heap_down(lane_heap *h, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && earlier(h, h->a[l], h->a[m]))
            m = l;
        if (r < h->n && earlier(h, h->a[r], h->a[m]))
            m = r;
        if (m == i)
            return;
        heap_swap(h, i, m);
        i = m;
    }
}

/* Sets l's time in heap h to `at` (0 = never: it leaves the heap). */
static void heap_set(lane_heap *h, lane *l, uint64_t at)
{
    int k = h->k;
    l->at[k] = at;
    if (!l->pos[k]) {
        if (!at)
            return;
        h->a[h->n] = l;
        l->pos[k] = ++h->n;
        heap_up(h, h->n - 1);
        return;
    }
    size_t i = l->pos[k] - 1;
    if (!at) {
        heap_swap(h, i, h->n - 1);
        h->n--;
        l->pos[k] = 0;
        if (i < h->n) {
            heap_up(h, i);
            heap_down(h, i);
        }
        return;
    }
    heap_up(h, i);
    heap_down(h, l->pos[k] - 1);
}

/* Sets when open-loop lane l next needs waking (0 = never). */
static void lane_wake_at(lane *l, uint64_t at)
{
    heap_set(&l->w->due, l, at);
}

/* The tick looks at lane l at `at` at the latest (0: no change).  The
 * tick visits only the lanes whose time has come, so that a thousand
 * lanes cost nothing while their requests are in flight: every reason a
 * lane needs the tick sets a time here (its deadline, the end of its
 * grace period, its pool's earliest timeout, a session it waits for). */
static void lane_check_by(lane *l, uint64_t at)
{
    if (at && (!l->at[H_CHECK] || at < l->at[H_CHECK]))
        heap_set(&l->w->check, l, at);
}

/* ---- exchanges --------------------------------------------------------- */

static yb_exchange *x_new(worker *w, yb_prepared *p, uint64_t now)
{
    yb_exchange *x = w->free_x;
    if (x)
        w->free_x = x->next;
    else if (!(x = malloc(sizeof *x)))
        return NULL;
    memset(x, 0, sizeof *x);
    x->req = p;
    x->res.due = now;
    x->res.grpc_status = -1;
    return x;
}

/* Publishes the last complete second's figures for the progress line. */
static void live_roll(worker *w, uint64_t sec)
{
    atomic_store_explicit(&w->live.p50_us, (uint64_t)yb_hdr_percentile(w->live_h, 50),
                          memory_order_relaxed);
    atomic_store_explicit(&w->live.p99_us, (uint64_t)yb_hdr_percentile(w->live_h, 99),
                          memory_order_relaxed);
    atomic_store_explicit(&w->live.sec_count, (uint64_t)yb_hdr_count(w->live_h),
                          memory_order_relaxed);
    atomic_store_explicit(&w->live.sec, w->live_sec, memory_order_relaxed);
    yb_hdr_reset(w->live_h);
    w->live_sec = sec;
}

static void live_add(worker *w, const yb_result *res)
{
    uint64_t sec = (res->done - w->rec.run_start) / 1000000000ull;
    if (sec != w->live_sec)
        live_roll(w, sec);
    /* like the report: latency is of successful requests */
    if (res->err == YB_ERR_NONE && res->due && res->done > res->due)
        yb_hdr_record(w->live_h, (int64_t)((res->done - res->due) / 1000));
    atomic_fetch_add_explicit(&w->live.completed, 1, memory_order_relaxed);
    if (res->err != YB_ERR_NONE)
        atomic_fetch_add_explicit(&w->live.errors, 1, memory_order_relaxed);
}

/* The index in the lane's own recorder of operation idx of the worker's
 * table, where the source names operations: the lane's table gets the
 * same names, in the order the lane meets them. */
static uint32_t lane_op(lane *l, uint32_t idx)
{
    const yb_ops *wt = &l->w->rec.ops;
    yb_ops *lt = &l->rec->ops;
    if (idx == YB_OP_NONE)
        return idx;
    if (idx >= wt->n) /* the worker's `other` */
        return (uint32_t)yb_ops_cap(lt);
    if (idx >= l->n_opmap) {
        uint32_t *m = realloc(l->opmap, wt->n * sizeof *m);
        if (!m)
            return (uint32_t)yb_ops_cap(lt);
        memset(m + l->n_opmap, 0, (wt->n - l->n_opmap) * sizeof *m);
        l->opmap = m;
        l->n_opmap = wt->n;
    }
    if (!l->opmap[idx])
        l->opmap[idx] = yb_ops_index(lt, wt->op[idx].name) + 1;
    return l->opmap[idx] - 1;
}

/* Records a finished request in r (the worker's or the lane's own) as
 * operation op of r's table, in tag `tag` of r's tagged seconds. */
static void record(yb_recorder *r, const yb_exchange *x, uint32_t op, uint32_t tag)
{
    /* started = written to a session (the pool sets send_start then); a
     * request that failed while it waited for one (backlog overflow, a
     * timeout in the queue) was never started */
    if (x->res.send_start)
        r->started++;
    yb_recorder_add(r, &x->res);
    yb_recorder_add_op_as(r, op, tag, &x->res);
    if (x->err_body_len) /* valid only now (see yb_exchange) */
        yb_recorder_error_body(r, &x->res, x->err_body, x->err_body_len);
}

/* Records the end of x's chain (ok: its last step succeeded) and gives
 * back the chain's first request, which held the chain's records. */
static void chain_end(lane *l, const yb_exchange *x, int ok)
{
    for (const yb_prepared *q = x->req->next_step; q; q = q->next_step)
        l->reserved--; /* steps that will not be sent */
    uint64_t ns = x->res.done > x->chain_due ? x->res.done - x->chain_due : 0;
    yb_recorder_chain(&l->w->rec, ok, ns);
    if (l->rec)
        yb_recorder_chain(l->rec, ok, ns);
    yb_source_release(l->src, (yb_prepared *)(x->chain_head ? x->chain_head : x->req));
}

static void x_finish(lane *l, yb_exchange *x);

/* Frees x's {{prev....}} values (a chain step's). */
static void drop_values(yb_exchange *x)
{
    if (x->got) {
        yb_pick_vals_free(x->got);
        free(x->got);
        x->got = NULL;
    }
}

/* nx, the step after x, takes its {{prev....}} values from x's response
 * (kept by the codec while it completes: x->req->keep_resp).  Returns 0,
 * or -1 with nx failed (its reason names the placeholder and what was
 * missing, never a value). */
static int take_values(yb_exchange *nx, const yb_exchange *x)
{
    yb_pick_resp rs = {.body = x->body, .body_len = x->body_len, .body_whole = x->body_whole,
                       .grpc = x->body_grpc, .head = x->head, .head_len = x->head_len};
    char why[YB_REASON_MAX];
    int rc = (nx->got = calloc(1, sizeof *nx->got)) ? 0 : -ENOMEM;
    if (!rc)
        rc = yb_pick_extract(nx->req->pick, &rs, nx->got, why, sizeof why);
    if (!rc) {
        nx->tv.got = nx->got->got;
        nx->tv.n_got = nx->got->n;
        return 0;
    }
    nx->res.err = YB_ERR_OTHER;
    yb_reason_fmt(nx->res.reason, sizeof nx->res.reason, "chain step: %s",
                  rc == -ENOMEM ? "out of memory taking the previous response's values" : why);
    return -1;
}

/* An exchange taken from lane l (inc) or finished (dec): the lane's
 * count of those not finished and its worker's sum of them (run_loop)
 * move together. */
static void outstanding_inc(lane *l)
{
    l->outstanding++;
    l->w->outstanding++;
}

static void outstanding_dec(lane *l)
{
    l->outstanding--;
    l->w->outstanding--;
}

/* x, a step of a chain, finished: the next step is queued for the pump
 * (never sent from inside the codec's callback), on x's session, when x
 * succeeded and the lane still issues; otherwise the chain ends here. */
static void chain_next(lane *l, yb_exchange *x)
{
    const yb_prepared *next = x->req->next_step;
    if (!next || x->res.err != YB_ERR_NONE || l->grace_end) {
        chain_end(l, x, !next && x->res.err == YB_ERR_NONE);
        return;
    }
    yb_exchange *nx = x_new(l->w, (yb_prepared *)next, uv_hrtime());
    if (!nx) {
        chain_end(l, x, 0);
        return;
    }
    l->reserved--;
    nx->chain_head = x->chain_head ? x->chain_head : x->req;
    nx->chain_due = x->chain_due;
    nx->pin_session = x->res.session;
    nx->tv.iter = x->tv.iter; /* the pass of the chain, its own index */
    nx->tv.index = l->issued * l->share.workers + l->share.worker;
    nx->tv.worker = l->share.worker;
    nx->workers = l->share.workers;
    l->issued++;
    outstanding_inc(l);
    if (next->pick && take_values(nx, x) < 0) {
        /* failed before it was sent: counted with its reason, and the
         * chain ends with it */
        nx->res.done = nx->res.due;
        x_finish(l, nx);
        return;
    }
    nx->next = NULL;
    if (l->steps_tail)
        l->steps_tail->next = nx;
    else
        l->steps = nx;
    l->steps_tail = nx;
}

/* Records x and recycles it.  x must be on no list. */
static void x_finish(lane *l, yb_exchange *x)
{
    worker *w = l->w;
    if (!x->res.done)
        x->res.done = uv_hrtime();
    record(&w->rec, x, x->req->op, l->tag);
    if (l->rec)
        record(l->rec, x, lane_op(l, x->req->op), 0);
    if (w->live_h)
        live_add(w, &x->res);
    if (yb_stream_logs(w->out)) {
        /* sessions numbered across the pair: each lane's pool counts from 1 */
        uint64_t sess = x->res.session
                            ? (x->res.session - 1) * l->share.workers + l->share.worker + 1
                            : 0;
        yb_stream_result(w->out, &x->res, x->req->record, x->tv.index, sess, l->o->log_workload,
                         l->o->log_target);
    }
    if (x->chain_head || x->req->next_step)
        chain_next(l, x);
    else
        yb_source_release(l->src, (yb_prepared *)x->req);
    drop_values(x);
    outstanding_dec(l);
    x->next = w->free_x;
    w->free_x = x;
}

/* ---- scheduler ----------------------------------------------------------- */

static void pump_at(lane *l, uint64_t now);
static void run_loop(worker *w);
static void pump(lane *l) { pump_at(l, 0); }

/* Seals the seconds that have ended (all of them at the end: final) and
 * hands those not handed yet to the streamed outputs.  A second the
 * stream has no room for goes on a later tick. */
static void seal_seconds(worker *w, uint64_t now, int final)
{
    yb_recorder_seal(&w->rec, now, final);
    if (!w->out)
        return;
    while (w->handed < w->rec.sealed && yb_stream_second(w->out, &w->rec.iv[w->handed]) == 0)
        w->handed++;
    if (final)
        yb_stream_lane_end(w->out, w->rec.sealed);
}

/* Hands x to the pool at now (a clock reading taken just before), which
 * writes it to a session at once or lets it wait for one; it counts as
 * started only once written (x_finish). */
static void dispatch(lane *l, yb_exchange *x, uint64_t now)
{
    x->res.issued = now;
    /* it may time out from its due time (waiting for a session) on */
    if (l->o->timeout_ns)
        lane_check_by(l, (x->res.due && x->res.due < now ? x->res.due : now) + l->o->timeout_ns);
    if (x->req->next_step && !x->chain_head)
        x->chain_due = x->res.due; /* a chain's latency counts from its first due time */
    yb_pool_submit(l->pool, x, now);
}

/* Takes the next request from the lane's corpus share as an exchange due
 * at `due`.  Returns it, or NULL with l->exhausted set (end of the share,
 * the -n budget, or a corpus error in the worker's err). */
static yb_exchange *take_request(lane *l, uint64_t due)
{
    worker *w = l->w;
    if (l->issued + l->reserved >= l->share.budget) {
        l->exhausted = 1;
        return NULL;
    }
    yb_prepared *p;
    char err[sizeof w->err];
    int rc = yb_source_next(l->src, l->share.cycle, &p, err, sizeof err);
    if (rc <= 0) {
        if (rc < 0 && !w->failed) {
            w->failed = 1;
            w->failed_pair = l->pair;
            snprintf(w->err, sizeof w->err, "%s", err);
        }
        l->exhausted = 1;
        return NULL;
    }
    uint64_t steps = 0; /* a chain's steps after this one */
    for (const yb_prepared *q = p->next_step; q; q = q->next_step)
        steps++;
    if (steps && l->issued + l->reserved + 1 + steps > l->share.budget) {
        /* -n has no room for the whole chain: it is not started */
        yb_source_release(l->src, p);
        l->exhausted = 1;
        return NULL;
    }
    yb_exchange *x = x_new(w, p, due);
    if (!x) {
        yb_source_release(l->src, p);
        if (!w->failed) {
            w->failed = 1;
            w->failed_pair = l->pair;
            snprintf(w->err, sizeof w->err, "out of memory");
        }
        l->exhausted = 1;
        return NULL;
    }
    l->reserved += steps;
    /* what its placeholders are filled from (codec.h), if it has any */
    x->tv.iter = yb_source_passes(l->src);
    x->tv.index = l->issued * l->share.workers + l->share.worker;
    x->tv.worker = l->share.worker;
    x->workers = l->share.workers;
    l->issued++;
    outstanding_inc(l);
    return x;
}

/* Closed loop: issues requests while there are free slots. */
static void fill(lane *l)
{
    while (!l->idle && !l->exhausted && !l->grace_end && l->outstanding < l->share.slots) {
        yb_exchange *x = take_request(l, 0);
        if (!x)
            break;
        /* closed loop: due when issued, after the corpus read, so decoding
         * the corpus never counts as latency; one clock reading is the
         * request's due, issue and (written at once) start time */
        uint64_t now = uv_hrtime();
        x->res.due = now;
        dispatch(l, x, now);
    }
}

/* Open loop: absolute due time of the lane's request k (its global index
 * in the pair is k * workers + worker, so the pair's workers interleave on
 * one schedule), or 0 past the schedule's end. */
static uint64_t due_of(const lane *l, uint64_t k)
{
    uint64_t t;
    if (yb_sched_due(&l->o->sched, k * l->share.workers + l->share.worker, &t) < 0)
        return 0;
    return l->start + t;
}

/* When the worker's timer fires for the earliest lane in the due heap
 * (0 = no lane waits): --spin wakes early, and issue_due spins the rest
 * of the way, since a wake-up from idle can take tens of microseconds on
 * its own. */
static uint64_t timer_at(const worker *w)
{
    if (!w->due.n)
        return 0;
    const lane *l = w->due.a[0];
    uint64_t wake = l->at[H_DUE];
    return wake > l->o->spin_ns ? wake - l->o->spin_ns : wake;
}

/* Arms the worker's timer for the earliest lane in the due heap: the
 * ring's alarm when there is a ring, else (or when the ring takes
 * nothing) the timerfd. */
static void arm_timer(worker *w)
{
    if (!w->due.n)
        return;
    if (w->ring_timer && yb_uring_alarm(w->ring, timer_at(w)) == 0)
        return;
    struct itimerspec its;
    memset(&its, 0, sizeof its);
    uint64_t at = timer_at(w);
    its.it_value.tv_sec = (time_t)(at / 1000000000ull);
    its.it_value.tv_nsec = (long)(at % 1000000000ull);
    if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
        its.it_value.tv_nsec = 1;
    timerfd_settime(w->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* --timing original: reads the next request ahead and computes its due
 * time from its recorded timestamp (scaled by --speed; each new pass over
 * the corpus continues after the previous one).  Returns 0 at the end. */
static uint64_t original_next(lane *l)
{
    if (!l->next_x) {
        l->next_x = take_request(l, 0);
        if (!l->next_x)
            return 0;
        uint64_t pass = yb_source_passes(l->src);
        if (pass != l->last_pass) {
            l->pass_offset += l->last_ts + 1000000; /* next pass: 1 ms after the last */
            l->last_pass = pass;
        }
        uint64_t ts = l->next_x->req->timestamp_ns;
        l->last_ts = ts;
        double scaled = (double)(ts + l->pass_offset) / (l->o->speed > 0 ? l->o->speed : 1.0);
        l->next_x->res.due = l->start + (uint64_t)scaled;
    }
    return l->next_x->res.due;
}

/* Gives back a read-ahead request that will never be sent (the run
 * ended before its time came); it was never started, so it is not counted. */
static void drop_readahead(lane *l)
{
    if (!l->next_x)
        return;
    yb_source_release(l->src, (yb_prepared *)l->next_x->req);
    outstanding_dec(l);
    l->issued--;
    free(l->next_x);
    l->next_x = NULL;
}

static void issue_original(lane *l)
{
    /* one batch window at most, as issue_due */
    uint64_t now = uv_hrtime(), until = now + YB_OPEN_BATCH_NS, due;
    while (!l->exhausted && !l->grace_end && (due = original_next(l)) && due <= now) {
        if (l->deadline && (due >= l->deadline || now >= l->deadline)) {
            if (due >= l->deadline)
                l->exhausted = 1;
            break; /* past -D: what was due before it is unsent (begin_stop) */
        }
        if (now >= until)
            break; /* the loop's turn; the one read ahead wakes the lane at once */
        yb_exchange *x = l->next_x;
        l->next_x = NULL;
        dispatch(l, x, uv_hrtime());
        now = uv_hrtime();
    }
    if (!l->exhausted && !l->grace_end && l->next_x) {
        lane_wake_at(l, l->next_x->res.due);
    } else {
        lane_wake_at(l, 0);
        drop_readahead(l);
    }
    pump(l);
}

/* Open loop: when lane l next wakes up to issue its request next_k.  When
 * the request after it is due within YB_OPEN_BATCH_NS too, the wake-up
 * waits for the end of that window and sends every request due in it at
 * once: one wake-up, one timer read and one re-arm for a batch instead of
 * each request (at 10,000/s, five instead of one), each late by at most
 * the window, which the report counts as generator lateness.  --spin asks
 * for the exact microsecond and gets no window; neither do the last
 * requests before -D, so that what is due before it is sent before it. */
static uint64_t batch_wake(const lane *l)
{
    uint64_t at = l->next_due;
    if (l->o->spin_ns || !at)
        return at;
    uint64_t after = due_of(l, l->next_k + 1);
    if (!after || after - at > YB_OPEN_BATCH_NS)
        return at;
    if (l->deadline && (at >= l->deadline || l->deadline - at <= 2 * YB_OPEN_BATCH_NS))
        return at; /* near -D: each on time, none pushed past it */
    return at + YB_OPEN_BATCH_NS;
}

/* Open loop: issues every request of lane l whose due time has come,
 * whatever the responses, then lets the worker sleep until the next one.
 * spin: --spin may wait here for a due time that is near (0: only what
 * is due now). */
static void issue_due(lane *l, int spin)
{
    if (l->o->timing_original) {
        issue_original(l);
        return;
    }
    uint64_t now = uv_hrtime();
    /* --spin: the next due time is near, so wait for it here, once per
     * wake-up (never in the loop below, which must let I/O run) */
    if (spin && l->o->spin_ns && l->next_due > now && l->next_due - now <= l->o->spin_ns)
        while ((now = uv_hrtime()) < l->next_due)
            ;
    /* It issues for one batch window at most, what was due and what falls
     * due meanwhile: a lane that cannot keep up (a request costing more
     * to issue than the time between two) goes back to the loop after
     * each window, so that its sessions come up and answers and timeouts
     * are seen, instead of issuing without end (before: every request of
     * the run, the sessions never seen connected, so all but the backlog
     * overflowed).  The timer, armed for a due time past, brings it back
     * at once. */
    uint64_t until = now + YB_OPEN_BATCH_NS;
    while (!l->exhausted && !l->grace_end && l->next_due <= now) {
        if (!l->next_due || (l->deadline && l->next_due >= l->deadline)) {
            l->exhausted = 1;
            break;
        }
        if (l->deadline && now >= l->deadline)
            break; /* behind at -D: the rest is unsent (begin_stop), not sent late */
        yb_exchange *x = take_request(l, l->next_due);
        if (!x)
            break;
        uint64_t t = uv_hrtime();
        dispatch(l, x, t);
        l->next_due = due_of(l, ++l->next_k);
        if (t >= until)
            break; /* the window is over: the loop's turn */
        if (l->next_due > now)
            now = uv_hrtime();
    }
    lane_wake_at(l, !l->exhausted && !l->grace_end ? batch_wake(l) : 0);
    pump(l);
}

/* The timer fired: every lane whose time has come issues what is due
 * (each once per wake-up, so a lane behind at its deadline cannot keep
 * the loop here), then the timer is armed for the next.  Nothing when no
 * time has come.  spin: as issue_due's (a lane within --spin of its due
 * time has come too). */
static void fire_due(worker *w, int spin)
{
    uint64_t now = uv_hrtime();
    for (size_t n = w->due.n; n-- && w->due.n && !w->finished;) {
        lane *l = w->due.a[0];
        if (l->at[H_DUE] > now + (spin ? l->o->spin_ns : 0))
            break;
        issue_due(l, spin);
    }
    if (!w->finished)
        arm_timer(w);
}

/* The ring's alarm time passed while it handed over completions (see
 * yb_uring_on_due): what is due goes out now, not after the rest of a
 * burst of answers (at -c 192 against a sink that stalled, answering
 * them first made the generator's lateness p99 about a millisecond). */
static void on_ring_due(void *ud)
{
    worker *w = ud;
    if (w->finished)
        return;
    /* only what is due: --spin's wait for the exact time is for the
     * wake-up after the burst, not for each answer of it (spinning here
     * made each answer wait up to the spin: at 10,000/s with --spin
     * 100us the worker fell 2 % behind) */
    fire_due(w, 0);
}

/* The timerfd fired. */
static void on_due(uv_poll_t *p, int status, int events)
{
    (void)status;
    (void)events;
    worker *w = p->data;
    uint64_t expirations;
    if (read(w->tfd, &expirations, sizeof expirations) < 0 && errno != EAGAIN)
        return;
    fire_due(w, 1);
}

static void begin_stop(lane *l, uint64_t now);
static void lane_end(lane *l);
static void pool_drop(void *ud, yb_exchange *x);

/* Moves lane l's waiting exchanges onto sessions, issues more, ends the
 * lane (and the worker with its last lane).  now: the clock read for the
 * event that calls (0 = none read yet). */
static void pump_at(lane *l, uint64_t now)
{
    if (l->done || l->w->finished)
        return;
    /* -D: nothing goes onto a session after the deadline, not even what
     * has waited for one since before it */
    if (l->deadline && !l->grace_end) {
        if (!now)
            now = uv_hrtime();
        if (now >= l->deadline)
            begin_stop(l, now);
    }
    /* chains: the steps whose previous step completed go first, onto
     * the session it ran on */
    while (l->steps) {
        yb_exchange *x = l->steps;
        l->steps = x->next;
        if (!l->steps)
            l->steps_tail = NULL;
        dispatch(l, x, uv_hrtime());
    }
    yb_pool_drain(l->pool);
    if (!l->share.open_loop)
        fill(l);
    yb_pool_flush(l->pool);
    if (l->exhausted && l->outstanding == 0) {
        lane_end(l);
        return;
    }
    /* what waits for a session may wait for a back-off to end (the pool
     * has no timer of its own): the tick drains it */
    uint64_t waiting = yb_pool_waiting(l->pool);
    l->w->waiting += waiting - l->waiting;
    l->waiting = waiting;
    if (waiting)
        lane_check_by(l, (now ? now : uv_hrtime()) + l->w->tick_ns);
}

/* Cuts off everything still in flight (after a stop's grace period). */
static void cut_off(lane *l)
{
    l->exhausted = 1;
    yb_pool_cut_off(l->pool);
}

/* Open loop at -D: the requests the schedule had due before the deadline
 * that this lane never took from it (it was behind) are unsent too. */
static uint64_t unissued_before_deadline(lane *l)
{
    uint64_t n = 0;
    if (l->o->timing_original) {
        if (l->next_x && l->next_x->res.due < l->deadline)
            n++; /* the read-ahead; later records are not read to count them */
        return n;
    }
    for (uint64_t k = l->next_k, due = l->next_due; due && due < l->deadline &&
                                                     l->issued + n < l->share.budget;
         due = due_of(l, ++k))
        n++;
    return n;
}

/* The lane stops issuing (stop signal, or the -D deadline at now): what
 * waits for a session is withdrawn as unsent, open-ended streams are
 * ended, and what is in flight gets the grace period. */
static void begin_stop(lane *l, uint64_t now)
{
    const yb_engine_opts *o = l->o;
    int at_deadline = l->deadline && now >= l->deadline && !(o->stop && *o->stop);
    if (at_deadline && l->share.open_loop) {
        uint64_t n = unissued_before_deadline(l);
        l->w->rec.unsent += n;
        if (l->rec)
            l->rec->unsent += n;
    }
    l->exhausted = 1;
    l->grace_end = now + (o->grace_ns ? o->grace_ns : 1);
    lane_check_by(l, l->grace_end);
    lane_wake_at(l, 0);
    drop_readahead(l);
    while (l->steps) { /* chain steps not sent yet: unsent, as withdrawn ones */
        yb_exchange *x = l->steps;
        l->steps = x->next;
        pool_drop(l, x);
    }
    l->steps_tail = NULL;
    yb_pool_withdraw(l->pool);
    /* STREAM subscriptions end as ok: they ran as long as the run wanted
     * them to */
    yb_pool_finish_streams(l->pool);
}

static void close_cb_noop(uv_handle_t *h)
{
    (void)h;
}

/* The worker's last lane has ended: seals the figures and closes the
 * loop's handles, so the loop runs out. */
static void teardown(worker *w)
{
    if (w->finished)
        return;
    w->finished = 1;
    w->rec.run_end = uv_hrtime();
    seal_seconds(w, w->rec.run_end, 1);
    uv_timer_stop(&w->tick);
    uv_close((uv_handle_t *)&w->tick, close_cb_noop);
    if (w->open_loop) {
        uv_poll_stop(&w->tpoll);
        uv_close((uv_handle_t *)&w->tpoll, close_cb_noop);
    }
}

/* Lane l has issued all it will and nothing is in flight: its sessions
 * close, and the worker ends with its last lane. */
static void lane_end(lane *l)
{
    if (l->done)
        return;
    l->done = 1;
    lane_wake_at(l, 0);
    heap_set(&l->w->check, l, 0);
    l->w->waiting -= l->waiting;
    l->waiting = 0;
    uint64_t backoffs = yb_pool_backoffs(l->pool);
    l->w->rec.reconnect_backoffs += backoffs;
    if (l->rec) {
        l->rec->run_end = uv_hrtime();
        l->rec->reconnect_backoffs = backoffs;
    }
    if (l->begin && !uv_is_closing((uv_handle_t *)l->begin)) {
        uv_timer_stop(l->begin);
        uv_close((uv_handle_t *)l->begin, close_cb_noop); /* freed with the lane */
    }
    yb_pool_close_all(l->pool);
    if (++l->w->n_done == l->w->n_lanes)
        teardown(l->w);
}

/* Publishes each lane's figures to its live metrics lane: its own
 * recorder, or the worker's when it is the worker's only lane. */
static void publish_metrics(worker *w, uint64_t now, int final)
{
    if (!w->n_mlanes)
        return; /* no --metrics-listen: no walk over a fleet's lanes every tick */
    for (size_t i = 0; i < w->n_lanes; i++) {
        lane *l = &w->lanes[i];
        if (!l->mlane)
            continue;
        uint64_t waiting = l->done ? 0 : yb_pool_waiting(l->pool);
        uint64_t flight = l->outstanding > waiting ? l->outstanding - waiting : 0;
        /* the first lane speaks for the thread (the self-check's count) */
        yb_metrics_publish(l->mlane, l->rec ? l->rec : &w->rec, flight, waiting, i == 0, now,
                           final);
    }
}

/* The tick's look at lane l (its time in the check heap has come, or
 * the stop signal): stops it at the stop or its deadline, cuts off what
 * outlived the grace period, fails what timed out, drains what waits for
 * a session; then sets when it needs the tick next. */
static void visit(lane *l, uint64_t now, int stop)
{
    if (l->done)
        return;
    if (!l->grace_end && (stop || (l->deadline && now >= l->deadline)))
        begin_stop(l, now);
    if (l->grace_end && now >= l->grace_end && l->outstanding)
        cut_off(l);
    if (l->exhausted)
        drop_readahead(l);
    uint64_t next = 0;
    if (l->o->timeout_ns)
        next = yb_pool_timeouts(l->pool, now, l->o->timeout_ns, l->deadline != 0);
    pump(l);
    if (l->done || l->w->finished)
        return;
    lane_check_by(l, next);
    if (!l->grace_end)
        lane_check_by(l, l->deadline);
    else if (now < l->grace_end)
        lane_check_by(l, l->grace_end);
}

static void on_tick(uv_timer_t *t)
{
    worker *w = t->data;
    uint64_t now = uv_hrtime();
    if (w->finished)
        return;
    atomic_store_explicit(&w->live.backlog, w->waiting, memory_order_relaxed);
    seal_seconds(w, now, 0);
    publish_metrics(w, now, 0);
    if (w->live_h && (now - w->rec.run_start) / 1000000000ull != w->live_sec)
        live_roll(w, (now - w->rec.run_start) / 1000000000ull); /* a quiet second */
    int stop = w->o->stop && *w->o->stop;
    if (stop && !w->stopping) {
        /* every lane stops, once */
        w->stopping = 1;
        for (size_t i = 0; i < w->n_lanes && !w->finished; i++)
            visit(&w->lanes[i], now, 1);
    }
    /* the lanes whose time has come (each once: one visit sets its next
     * time after now) */
    while (w->check.n && !w->finished && w->check.a[0]->at[H_CHECK] <= now) {
        lane *l = w->check.a[0];
        heap_set(&w->check, l, 0);
        visit(l, now, stop);
        if (l->at[H_CHECK] && l->at[H_CHECK] <= now)
            heap_set(&w->check, l, now + w->tick_ns); /* (never twice in one tick) */
    }
    if (w->open_loop && !w->finished)
        arm_timer(w); /* a lane may have left the heap */
}

/* This thread's time on a CPU and time runnable but waiting for one (ns),
 * from /proc/thread-self/schedstat; both 0 where the kernel does not say. */
static void sched_times(uint64_t *run, uint64_t *wait)
{
    unsigned long long r = 0, w = 0;
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    if (f) {
        if (fscanf(f, "%llu %llu", &r, &w) != 2)
            r = w = 0;
        fclose(f);
    }
    *run = r;
    *wait = w;
}

/* This thread's involuntary context switches so far. */
static uint64_t invol_switches(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_THREAD, &ru) == 0 ? (uint64_t)ru.ru_nivcsw : 0;
}

/* Closed loop: lane l's start offset has come (a uv timer counts whole
 * milliseconds of a cached clock, so it is checked against the real one). */
static void on_begin(uv_timer_t *t)
{
    lane *l = t->data;
    uint64_t now = uv_hrtime();
    if (l->done || l->w->finished)
        return;
    if (now < l->start) {
        uv_timer_start(l->begin, on_begin, 1, 0);
        return;
    }
    l->idle = 0;
    pump(l);
}

/* How long preopen waits for the sessions' set-up at most (and at most
 * the lanes' --timeout). */
#define PREOPEN_MAX_NS 10000000000ull

static void on_preopen_tick(uv_timer_t *t)
{
    (void)t; /* a wake-up: preopen's loop looks at the time */
}

/* Sessions still being set up by preopen, over the worker's lanes. */
static unsigned preopening(const worker *w)
{
    unsigned n = 0;
    for (size_t i = 0; i < w->n_lanes; i++)
        if (w->lanes[i].share.open_loop)
            n += yb_pool_preopening(w->lanes[i].pool);
    return n;
}

/* An open loop opens its persistent sessions before its clock starts, as
 * wrk2 connects before its schedule and k6 allocates its VUs before an
 * arrival-rate scenario: the first due times then pay no set-up, and do
 * not wait behind it (opened inside the schedule, 64 sessions made the
 * first 50 ms of a 58,000/s run late by up to 7 ms: more than the 1 %
 * of a 4 s run's requests).  Each session's set-up is still counted
 * (pool_opened).  It waits until every one is set up or has failed, at
 * most PREOPEN_MAX_NS or --timeout, and no longer once a stop comes; a
 * session still setting up then is used once it is ready. */
static void preopen(worker *w)
{
    uint64_t wait = PREOPEN_MAX_NS;
    unsigned n = 0;
    for (size_t i = 0; i < w->n_lanes; i++) {
        lane *l = &w->lanes[i];
        if (!l->share.open_loop)
            continue;
        n += yb_pool_preopen(l->pool);
        if (l->o->timeout_ns && l->o->timeout_ns < wait)
            wait = l->o->timeout_ns;
    }
    if (!n)
        return;
    w->preopening = 1;
    uint64_t until = uv_hrtime() + wait;
    int ring = yb_uring_ready(w->ring);
    /* the tick (not started yet) keeps the loop alive, so that each pass
     * polls it, and wakes it to look at the time and the stop flag */
    uv_timer_start(&w->tick, on_preopen_tick, 10, 10);
    while (preopening(w) && uv_hrtime() < until && !(w->o->stop && *w->o->stop)) {
        if (ring) {
            uv_update_time(&w->loop);
            yb_uring_wait(w->ring, uv_backend_timeout(&w->loop));
            yb_uring_pass(w->ring);
        } else {
            uv_run(&w->loop, UV_RUN_ONCE);
        }
    }
    uv_timer_stop(&w->tick);
    w->preopening = 0;
}

/* Says the worker is prepared, then waits for yb_worker_go (returns 1)
 * or yb_worker_cancel (0). */
static int gate_pass(worker *w)
{
    pthread_mutex_lock(&w->gate_mu);
    w->gate = GATE_READY;
    pthread_cond_broadcast(&w->gate_cv);
    while (w->gate == GATE_READY)
        pthread_cond_wait(&w->gate_cv, &w->gate_mu);
    int go = w->gate == GATE_GO;
    pthread_mutex_unlock(&w->gate_mu);
    return go;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    /* what other processes (or the hypervisor) took of this thread's CPU:
     * the self-check tells a starved generator from a slow target */
    uint64_t nivcsw0 = invol_switches(), run0, wait0, run1, wait1;
    sched_times(&run0, &wait0);
    if (w->ring)
        (void)yb_uring_start(w->ring); /* if it fails, sessions use libuv */
    /* The kernel may defer a thread's timer wake-ups by its "timer slack"
     * (50 us by default) to batch them; due times want the real instant. */
    if (w->open_loop)
        prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    if (w->open_loop)
        preopen(w);
    /* prepared: the run's clock starts once every worker is (the thread's
     * start and the above took 1.5-2.7 ms, which the first requests of
     * an open loop counted as lateness) */
    if (!gate_pass(w)) {
        atomic_store(&w->live.running, 0);
        return NULL;
    }
    uv_update_time(&w->loop);
    uv_timer_start(&w->tick, on_tick, w->tick_ns / 1000000 ? w->tick_ns / 1000000 : 1,
                   w->tick_ns / 1000000 ? w->tick_ns / 1000000 : 1);
    if (w->open_loop)
        uv_poll_start(&w->tpoll, UV_READABLE, on_due);
    w->ring_timer = w->open_loop && yb_uring_ready(w->ring);
    if (w->ring_timer)
        yb_uring_on_due(w->ring, on_ring_due, w);
    for (size_t i = 0; i < w->n_lanes && !w->finished; i++) {
        lane *l = &w->lanes[i];
        if (l->share.open_loop) {
            l->next_due = due_of(l, 0);
            issue_due(l, 1); /* the first due time is its start */
        } else {
            uint64_t now = uv_hrtime();
            if (now < l->start && l->begin) { /* idles until its start offset */
                l->idle = 1;
                uv_timer_start(l->begin, on_begin, (l->start - now) / 1000000 + 1, 0);
            }
            pump(l);
        }
    }
    if (w->open_loop && !w->finished)
        arm_timer(w);
    run_loop(w);
    w->rec.gen_invol_switches = invol_switches() - nivcsw0;
    sched_times(&run1, &wait1);
    w->rec.gen_run_ns = run1 > run0 ? run1 - run0 : 0;
    w->rec.gen_runq_wait_ns = wait1 > wait0 ? wait1 - wait0 : 0;
    w->rec.gen_io_threads = 1;
    w->rec.gen_ring_threads = (uint64_t)yb_uring_used(w->ring);
    /* the final figures, once nothing can change them */
    publish_metrics(w, uv_hrtime(), 1);
    atomic_store(&w->live.running, 0);
    return NULL;
}

/* ---- what the pool calls (yb_pool_host; ud is the lane) ------------------ */

static void pool_done(void *ud, yb_exchange *x)
{
    x_finish(ud, x);
}

static void pool_drop(void *ud, yb_exchange *x)
{
    lane *l = ud;
    yb_recorder *r[2] = {&l->w->rec, l->rec};
    for (int i = 0; i < 2 && r[i]; i++) {
        if (x->res.send_start) { /* written to a session: started, then cut off */
            r[i]->started++;
            r[i]->cut_off++;
        } else {
            r[i]->unsent++;
        }
    }
    if (x->chain_head || x->req->next_step)
        chain_end(l, x, 0);
    else
        yb_source_release(l->src, (yb_prepared *)x->req);
    drop_values(x);
    outstanding_dec(l);
    free(x);
}

static void pool_retried(void *ud, yb_exchange *x)
{
    (void)x;
    lane *l = ud;
    l->w->rec.retried++;
    if (l->rec)
        l->rec->retried++;
}

static void pool_notify(void *ud, uint64_t now, int64_t lateness_ns, uint64_t n_updates)
{
    lane *l = ud;
    yb_recorder_notify(&l->w->rec, now, lateness_ns, n_updates);
    if (l->rec)
        yb_recorder_notify(l->rec, now, lateness_ns, n_updates);
}

static void pool_kick(void *ud, uint64_t now)
{
    lane *l = ud;
    if (l->w->preopening)
        return; /* nothing is due before the clock; the run's start pumps */
    l->w->kicks++;
    pump_at(l, now);
}

/* A pre-opened session's set-up (preopen), which no request paid. */
static void pool_opened(void *ud, const yb_result *res)
{
    lane *l = ud;
    yb_recorder_setup(&l->w->rec, res);
    if (l->rec)
        yb_recorder_setup(l->rec, res);
}

static const yb_pool_host POOL_HOST = {
    .done = pool_done,
    .drop = pool_drop,
    .retried = pool_retried,
    .notify = pool_notify,
    .opened = pool_opened,
    .kick = pool_kick,
};

/* ---- the worker's life cycle ---------------------------------------------- */

/* A pass of the loop on a ring: the loop itself only when it may have
 * work (its descriptor was readable, or a timer is due or a callback
 * pending: each look would otherwise cost an epoll_wait, as much as the
 * request), then the completions already in the ring's queue.  Returns 0
 * when neither has anything left to wait for. */
static int ring_pass(worker *w)
{
    yb_uring_pass(w->ring);
    if (yb_uring_alarm_fired(w->ring) && !w->finished)
        fire_due(w, 1);
    return yb_uring_alive(w->ring);
}

/* run_loop with a ring: every sleep is also the call that hands the
 * kernel what the last pass queued and brings back what completed, and it
 * does not sleep when something has: one system call a pass, where
 * libuv's loop makes one for each read and each write.  No poll window
 * (see run_loop): each look would cost a call, and a bench GET cost 3 %
 * less without one (14.1 against 14.6 us, before sends were linked to
 * their receives).  The price: against a server that answers in a few
 * microseconds (serve --sink on loopback) a closed loop sleeps more and
 * reaches about a tenth fewer requests a second than with epoll, for
 * less CPU a request. */
static void run_loop_ring(worker *w)
{
    while (ring_pass(w)) {
        uv_update_time(&w->loop);
        yb_uring_wait(w->ring, uv_backend_timeout(&w->loop));
    }
}

/* How long the loop polls for the next answer before it sleeps, and how
 * many idle spells in a row it sleeps at once at most after polls that
 * found nothing (see run_loop). */
#define POLL_NS 10000u
#define POLL_BACKOFF_MAX 64u

/* Runs the worker's loop until it has no more work (with a ring:
 * run_loop_ring; what follows is the epoll loop's way).  A wake-up from sleep
 * costs more CPU than the work of a small answer (a context switch, and
 * on a virtual machine an exit: rusage minus perf's task-clock was 15-20
 * us per context switch on the bench VM, against 6-10 us for a whole
 * HTTP/1.1 request), so when the loop runs out of ready events while
 * requests are out (sent, or on a session being set up) it first polls
 * (epoll without waiting) for up to POLL_NS, in case the next answer is
 * that close, or for the open loop's timer due within POLL_NS; with
 * neither (an open loop between its answer and a later due time) no poll
 * could find work, and it sleeps at once.  A poll that finds nothing
 * makes the next 1, 2, 4 ... POLL_BACKOFF_MAX idle spells sleep at once
 * (so a slow target costs at most about POLL_NS / POLL_BACKOFF_MAX per
 * wake-up), and one that finds an answer resets that.  Backing off only
 * after several misses in a row made GETs to a fast nginx about 10 %
 * cheaper at load 5-9, the same at a quiet machine, and calls to nghttpd
 * (answers a little slower than the window) about 10 % dearer at a quiet
 * one (bench/h2_vs_h2load.sh -s nghttpd: 1.08 of h2load against 0.98);
 * a real device answers slower still, so the first miss backs off.
 * Nothing waits for the poll: events are handled as soon as a poll sees
 * them, and the CPU it takes counts in the run's CPU figures like any
 * other. */
static void run_loop(worker *w)
{
    if (w->ring) {
        run_loop_ring(w);
        return;
    }
    for (;;) {
        uint64_t before = w->kicks;
        if (!uv_run(&w->loop, UV_RUN_NOWAIT))
            return;
        if (w->kicks != before)
            continue; /* it had work: look again at once */
        int got = 0;
        uint64_t due = timer_at(w), now = 0;
        if (w->outstanding <= w->waiting && (!due || due > (now = uv_hrtime()) + POLL_NS)) {
            /* nothing out on a session, no request due soon: nothing to
             * poll for */
        } else if (w->poll_skip) {
            w->poll_skip--;
        } else {
            uint64_t end = (now ? now : uv_hrtime()) + POLL_NS;
            while (!got && uv_hrtime() < end) {
                if (!uv_run(&w->loop, UV_RUN_NOWAIT))
                    return;
                got = w->kicks != before;
            }
            if (got)
                w->poll_backoff = 0;
            else
                w->poll_skip = w->poll_backoff =
                    !w->poll_backoff ? 1 : w->poll_backoff < POLL_BACKOFF_MAX ? 2 * w->poll_backoff
                                                                               : POLL_BACKOFF_MAX;
        }
        if (!got && !uv_run(&w->loop, UV_RUN_ONCE))
            return;
    }
}

/* Closes a handle left open (a worker that failed to set up, or never ran). */
static void close_left(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, close_cb_noop);
}

static void worker_cleanup(worker *w)
{
    if (w->loop.data) {
        uv_walk(&w->loop, close_left, NULL);
        uv_run(&w->loop, UV_RUN_NOWAIT);
        uv_loop_close(&w->loop);
    }
    yb_uring_free(w->ring);
    if (w->tfd >= 0)
        close(w->tfd);
    /* last lane first: a lane may use the TLS context of an earlier one */
    for (size_t i = w->n_lanes; i-- > 0;) {
        lane *l = &w->lanes[i];
        yb_source_free(l->src);
        yb_pool_free(l->pool);
        free(l->begin); /* closed with the loop's handles */
        if (l->own_rec) {
            yb_recorder_cleanup(l->rec);
            free(l->rec);
        }
        free(l->opmap);
    }
    free(w->lanes);
    free(w->due.a);
    free(w->check.a);
    yb_hdr_free(w->live_h);
    while (w->free_x) {
        yb_exchange *x = w->free_x;
        w->free_x = x->next;
        free(x);
    }
    yb_recorder_cleanup(&w->rec);
    yb_blobs_free(w->blobs); /* after the sources: their requests hold its bodies */
}

static int same_str(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* Whether lanes a and b would make identical client TLS contexts with no
 * resumption cache (a cache shared by several targets could offer one
 * target's session to another that has the same server name). */
static int same_tls(const lane *a, const lane *b)
{
    const yb_engine_opts *x = a->o, *y = b->o;
    const yb_tls_client_opts *s = &x->tls, *t = &y->tls;
    return a->target->tls && b->target->tls && !x->tls_resume && !y->tls_resume &&
           x->ops == y->ops && same_str(s->cacert, t->cacert) && s->insecure == t->insecure &&
           same_str(s->cert, t->cert) && same_str(s->key, t->key) && same_str(s->alpn, t->alpn) &&
           s->min_version == t->min_version && s->max_version == t->max_version &&
           same_str(s->ciphers, t->ciphers) && same_str(s->ciphersuites, t->ciphersuites) &&
           s->session_cache == t->session_cache && same_str(s->keylog, t->keylog);
}

/* A TLS context an earlier lane of this worker made with l's settings, or
 * NULL: a thousand targets with one CA need one context (with its parsed
 * CA store), not a thousand. */
static yb_tls_ctx *shared_tls(const worker *w, const lane *l)
{
    for (const lane *e = w->lanes; e < l; e++)
        if (same_tls(e, l))
            return yb_pool_tls(e->pool);
    return NULL;
}

/* Opens lane l's corpus share and pool (pair `pair`, this worker's place
 * in it: `place`).  Returns 0 or -1 with err. */
static int lane_init(worker *w, lane *l, const yb_plan *plan, size_t pair, unsigned place,
                     size_t n_lanes, yb_recorder *per_pair, int lane_recs, char *err,
                     size_t errlen)
{
    const yb_engine_opts *o = plan->pair[pair].workload;
    l->w = w;
    l->pair = pair;
    l->o = o;
    l->target = plan->pair[pair].target;
    yb_plan_share(plan, pair, place, &l->share);
    if (l->share.start_ns && !l->share.open_loop) {
        if (!(l->begin = malloc(sizeof *l->begin))) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        uv_timer_init(&w->loop, l->begin);
        l->begin->data = l;
    }
    if (per_pair && yb_plan_span(plan, pair) == 1) {
        /* the pair's only lane: it records into the pair's recorder, which
         * no other thread touches until the run has ended */
        l->rec = &per_pair[pair];
        l->rec->ops.cap = (size_t)o->max_ops;
        /* a pair's figures are totals, unless the run asks for more */
        l->rec->series_counts_only = !plan->pair[0].workload->pair_series_latency;
    } else if (per_pair || lane_recs) {
        l->own_rec = 1;
        if (!(l->rec = calloc(1, sizeof *l->rec))) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        if (yb_recorder_init(l->rec) < 0) {
            free(l->rec);
            l->rec = NULL;
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        l->rec->ops.cap = (size_t)o->max_ops;
        l->rec->series_counts_only =
            per_pair != NULL && !plan->pair[0].workload->pair_series_latency;
    }
    /* the share's worker index: with --split, one of span x parts */
    /* the prepared-request cache is the worker's: its lanes share it */
    l->src = yb_source_new(o->corpus_path, l->share.worker, l->share.workers, l->share.by_conn,
                           o->ops, &o->codec, o->cache_bytes / n_lanes, err, errlen);
    if (!l->src)
        return -1;
    yb_source_route(l->src, o->route);
    /* several lanes: a share that fits the cache is kept even when the run
     * sends no record of it twice, so that yb_source_warm closes its reader
     * (its decompression window and buffers: about 90 KB a target) */
    yb_source_uses(l->src, n_lanes > 1 ? UINT64_MAX : l->share.cycle ? l->share.budget : 0);
    yb_source_rewrite(l->src, o->rewrite);
    if (o->authmap)
        yb_source_authority(l->src, o->authmap, o->auth_target);
    /* operations are named once, in the worker's table; a lane's own
     * recorder gets the same names (lane_op) */
    yb_source_ops(l->src, &w->rec.ops);
    yb_source_blobs(l->src, w->blobs);
    if (o->sched.kind != YB_SCHED_NONE || n_lanes > 1) {
        /* open loop: decode the corpus before the clock starts; several
         * lanes: so that a share that fits the cache frees its reader (a
         * thousand targets would each keep a decompression window) */
        if (yb_source_warm(l->src, err, errlen) < 0)
            return -1;
    }
    yb_pool_cfg pc = {
        .loop = &w->loop,
        .ring = w->ring,
        .target = l->target,
        .ops = o->ops,
        .codec = &o->codec,
        .tls = &o->tls,
        .tls_ctx = shared_tls(w, l),
        .tls_resume = o->tls_resume,
        .timeout_ns = o->timeout_ns,
        .policy = o->policy,
        .sess_limit = l->share.sess_limit,
        .oneshot_limit = l->share.slots,
        .max_wait = l->share.max_wait,
        .max_wait_bytes = l->share.max_wait_bytes,
        .budget = &w->mem,
    };
    if (!(l->pool = yb_pool_new(&pc, &POOL_HOST, l, err, errlen)))
        return -1;
    if (l->share.open_loop)
        w->open_loop = 1;
    return 0;
}

/* Opens worker `index`'s lanes (one per pair it takes part in) and its
 * loop.  Returns 0 or -1 with err (w is then cleaned up by the caller). */
static int worker_init(worker *w, const yb_plan *plan, unsigned index, int live,
                       yb_recorder *per_pair, int lane_recs, char *err, size_t errlen)
{
    w->tfd = -1;
    w->o = plan->pair[0].workload;
    if (yb_recorder_init(&w->rec) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    w->rec.ops.cap = (size_t)w->o->max_ops;
    if (!(w->blobs = yb_blobs_new()) || (live && !(w->live_h = yb_hdr_new_default()))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < plan->n_pairs; i++)
        n += yb_plan_place(plan, i, index) >= 0;
    w->lanes = calloc(n ? n : 1, sizeof *w->lanes);
    w->due.a = calloc(n ? n : 1, sizeof *w->due.a);
    w->check.a = calloc(n ? n : 1, sizeof *w->check.a);
    w->due.k = H_DUE;
    w->check.k = H_CHECK;
    if (!w->lanes || !w->due.a || !w->check.a) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* the loop first: the lanes' pools live on it */
    if (uv_loop_init(&w->loop) < 0) {
        snprintf(err, errlen, "cannot create an event loop");
        return -1;
    }
    w->loop.data = w;
    /* --io auto: a kernel without io_uring (or one that forbids it)
     * leaves libuv to do all the I/O */
    if (w->o->io != YB_IO_EPOLL) {
        char rerr[128];
        w->ring = yb_uring_new(&w->loop, rerr, sizeof rerr);
        if (!w->ring && w->o->io == YB_IO_URING) {
            snprintf(err, errlen, "--io uring: %s", rerr);
            return -1;
        }
    }
    uint64_t max_body = 0, min_timeout = 0;
    for (size_t i = 0; i < plan->n_pairs; i++) {
        int place = yb_plan_place(plan, i, index);
        if (place < 0)
            continue;
        if (lane_init(w, &w->lanes[w->n_lanes++], plan, i, (unsigned)place, n, per_pair,
                      lane_recs, err, errlen) < 0)
            return -1;
        const yb_engine_opts *o = plan->pair[i].workload;
        if (o->codec.max_body > max_body)
            max_body = o->codec.max_body;
        if (o->timeout_ns && (!min_timeout || o->timeout_ns < min_timeout))
            min_timeout = o->timeout_ns;
    }
    /* at least one message that --max-body allows */
    w->mem.limit = max_body > YB_MEM_BUDGET_DEFAULT ? max_body : YB_MEM_BUDGET_DEFAULT;
    w->tick_ns = 10 * 1000000ull;
    if (min_timeout && min_timeout / 4 < w->tick_ns)
        w->tick_ns = min_timeout / 4 > 1000000 ? min_timeout / 4 : 1000000;
    uv_timer_init(&w->loop, &w->tick);
    w->tick.data = w;
    if (w->open_loop) {
        w->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        if (w->tfd < 0 || uv_poll_init(&w->loop, &w->tpoll, w->tfd) < 0) {
            snprintf(err, errlen, "cannot create a timer: %s", strerror(errno));
            return -1;
        }
        w->tpoll.data = w;
    }
    return 0;
}

yb_worker *yb_worker_new(const yb_plan *p, unsigned index, int live, yb_recorder *per_pair,
                         int lane_recs, char *err, size_t errlen)
{
    worker *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (worker_init(w, p, index, live, per_pair, lane_recs, err, errlen) < 0) {
        worker_cleanup(w);
        free(w);
        return NULL;
    }
    return w;
}

void yb_worker_set_lane(yb_worker *w, yb_stream_lane *sl)
{
    w->out = sl;
}

int yb_worker_set_metrics(yb_worker *w, size_t i, yb_metrics_lane *m)
{
    lane *l = &w->lanes[i];
    /* several lanes publish their own recorders (the engine asks for
     * them); a worker's only lane may publish the worker's */
    if (!l->rec && w->n_lanes > 1)
        return -1;
    if (yb_recorder_keep_live(l->rec ? l->rec : &w->rec) < 0)
        return -1;
    if (!l->mlane)
        w->n_mlanes++;
    l->mlane = m;
    return 0;
}

size_t yb_worker_lane_pair(const yb_worker *w, size_t i)
{
    return w->lanes[i].pair;
}

int yb_worker_set_tag(yb_worker *w, size_t i, const char *prefix)
{
    int t = yb_recorder_tag(&w->rec, prefix);
    if (t < 0)
        return -1;
    w->lanes[i].tag = (uint32_t)t;
    return 0;
}

void yb_worker_set_start(yb_worker *w, uint64_t start)
{
    w->rec.run_start = start; /* the run's: one clock for every pair's seconds */
    for (size_t i = 0; i < w->n_lanes; i++) {
        lane *l = &w->lanes[i];
        if (l->rec)
            l->rec->run_start = start;
        l->start = start + l->share.start_ns;
        if (l->share.run_ns) {
            l->deadline = l->start + l->share.run_ns;
            lane_check_by(l, l->deadline);
        }
    }
}

int yb_worker_start(yb_worker *w)
{
    if (!w->gate_inited) {
        if (pthread_mutex_init(&w->gate_mu, NULL))
            return -1;
        if (pthread_cond_init(&w->gate_cv, NULL)) {
            pthread_mutex_destroy(&w->gate_mu);
            return -1;
        }
        w->gate_inited = 1;
    }
    w->gate = GATE_PREPARING;
    atomic_store(&w->live.running, 1);
    if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
        atomic_store(&w->live.running, 0);
        return -1;
    }
    return 0;
}

/* Moves a started worker's gate from `from` to `to`, once it is at
 * `from`. */
static void gate_move(worker *w, int from, int to)
{
    pthread_mutex_lock(&w->gate_mu);
    while (w->gate != from)
        pthread_cond_wait(&w->gate_cv, &w->gate_mu);
    w->gate = to;
    pthread_cond_broadcast(&w->gate_cv);
    pthread_mutex_unlock(&w->gate_mu);
}

void yb_worker_ready(yb_worker *w)
{
    pthread_mutex_lock(&w->gate_mu);
    while (w->gate == GATE_PREPARING)
        pthread_cond_wait(&w->gate_cv, &w->gate_mu);
    pthread_mutex_unlock(&w->gate_mu);
}

void yb_worker_go(yb_worker *w)
{
    gate_move(w, GATE_READY, GATE_GO);
}

void yb_worker_cancel(yb_worker *w)
{
    gate_move(w, GATE_READY, GATE_CANCEL);
}

void yb_worker_live_read(const yb_worker *w, yb_worker_live *out)
{
    const live_stats *l = &w->live;
    out->running = atomic_load_explicit(&l->running, memory_order_relaxed);
    out->completed = atomic_load_explicit(&l->completed, memory_order_relaxed);
    out->errors = atomic_load_explicit(&l->errors, memory_order_relaxed);
    out->backlog = atomic_load_explicit(&l->backlog, memory_order_relaxed);
    out->sec_count = atomic_load_explicit(&l->sec_count, memory_order_relaxed);
    out->p50_us = atomic_load_explicit(&l->p50_us, memory_order_relaxed);
    out->p99_us = atomic_load_explicit(&l->p99_us, memory_order_relaxed);
}

void yb_worker_new_reasons(const yb_worker *w, size_t *seen,
                           void (*fn)(const yb_reason_count *e, void *ud), void *ud)
{
    size_t n = yb_recorder_reasons_published(&w->rec);
    for (; *seen < n; (*seen)++)
        fn(&w->rec.reasons[*seen], ud);
}

void yb_worker_join(yb_worker *w)
{
    pthread_join(w->thread, NULL);
}

const char *yb_worker_error(const yb_worker *w, size_t *pair)
{
    if (!w->failed)
        return NULL;
    *pair = w->failed_pair;
    return w->err;
}

yb_recorder *yb_worker_recorder(yb_worker *w)
{
    return &w->rec;
}

size_t yb_worker_lanes(const yb_worker *w)
{
    return w->n_lanes;
}

yb_recorder *yb_worker_lane_recorder(yb_worker *w, size_t i, size_t *pair, int *own)
{
    *pair = w->lanes[i].pair;
    *own = w->lanes[i].own_rec;
    return w->lanes[i].rec;
}

void yb_worker_free(yb_worker *w)
{
    if (!w)
        return;
    worker_cleanup(w);
    if (w->gate_inited) {
        pthread_cond_destroy(&w->gate_cv);
        pthread_mutex_destroy(&w->gate_mu);
    }
    free(w);
}
