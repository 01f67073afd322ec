/* The worker loop (see worker.h): issues requests when they are due,
 * hands them to the session pool, records what comes back, ends the run.
 * It owns the exchanges (allocated, recycled and recorded here); the pool
 * gives them back through yb_pool_host. */
#include "config.h"
#include "engine/worker.h"
#include "engine/pool.h"
#include "engine/source.h"
#include "report/stream.h"

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

/* What a worker publishes for the progress line (relaxed atomics: the
 * reader only wants a recent value, never a consistent snapshot). */
typedef struct {
    _Atomic uint64_t completed, errors, backlog, sec, sec_count;
    _Atomic uint64_t p50_us, p99_us;
    _Atomic int running;
} live_stats;

struct yb_worker {
    const yb_engine_opts *o;  /* the workload */
    const yb_target *target;
    yb_share share;      /* of the plan's pair: slots, budget, sessions, ... */
    const yb_codec_ops *ops;
    uv_loop_t loop;
    uv_timer_t tick;
    uint64_t tick_ns;
    uv_timer_t begin;    /* closed loop: wakes it at its start offset */
    int idle;            /* closed loop: before its start offset */
    yb_source *src;
    yb_recorder rec;
    yb_mem_budget mem;   /* response bytes its codecs may keep */
    yb_stream_lane *lane;/* streamed outputs (NULL = none) */
    uint64_t handed;     /* sealed seconds handed to the lane */
    yb_pool *pool;       /* the target's sessions */
    yb_hdr *live_h;      /* end-to-end of the current second (progress only) */
    uint64_t live_sec;   /* second index live_h covers */
    live_stats live;
    uint64_t issued;
    unsigned outstanding;/* issued and not finished */
    /* open loop */
    int tfd;             /* timerfd: ns-precise wake-ups for due times */
    uv_poll_t tpoll;
    uint64_t next_k;     /* this worker's next request index */
    uint64_t next_due;   /* absolute due time of request next_k */
    uint64_t start;      /* its own start: the run's + the pair's offset */
    yb_exchange *next_x; /* --timing original: the next request, read ahead */
    uint64_t pass_offset;/* --timing original: added to recorded times per pass */
    uint64_t last_ts, last_pass;
    yb_exchange *free_x; /* recycled exchanges */
    uint64_t deadline;   /* stop issuing at (0 = none) */
    uint64_t grace_end;  /* cut in-flight work off at (0 = not stopping) */
    int exhausted;       /* nothing more to issue */
    int finished;        /* teardown started */
    int failed;
    char err[512];
    pthread_t thread;
};

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

/* Records x and recycles it.  x must be on no list. */
static void x_finish(worker *w, yb_exchange *x)
{
    if (!x->res.done)
        x->res.done = uv_hrtime();
    /* started = written to a session (the pool sets send_start then); a
     * request that failed while it waited for one (backlog overflow, a
     * timeout in the queue) was never started */
    if (x->res.send_start)
        w->rec.started++;
    yb_recorder_add(&w->rec, &x->res);
    yb_recorder_add_op(&w->rec, x->req->op, &x->res);
    if (x->err_body_len) /* valid only now (see yb_exchange) */
        yb_recorder_error_body(&w->rec, &x->res, x->err_body, x->err_body_len);
    if (w->live_h)
        live_add(w, &x->res);
    if (yb_stream_logs(w->lane)) {
        /* sessions numbered across the run: each worker's pool counts from 1 */
        uint64_t sess = x->res.session
                            ? (x->res.session - 1) * w->share.workers + w->share.worker + 1
                            : 0;
        yb_stream_result(w->lane, &x->res, x->req->record, sess);
    }
    yb_source_release(w->src, (yb_prepared *)x->req);
    w->outstanding--;
    x->next = w->free_x;
    w->free_x = x;
}

/* ---- scheduler ----------------------------------------------------------- */

static void teardown(worker *w);
static void pump(worker *w);

/* Seals the seconds that have ended (all of them at the end: final) and
 * hands those not handed yet to the streamed outputs.  A second the lane
 * has no room for goes on a later tick. */
static void seal_seconds(worker *w, uint64_t now, int final)
{
    yb_recorder_seal(&w->rec, now, final);
    if (!w->lane)
        return;
    while (w->handed < w->rec.sealed && yb_stream_second(w->lane, &w->rec.iv[w->handed]) == 0)
        w->handed++;
    if (final)
        yb_stream_lane_end(w->lane, w->rec.sealed);
}

/* Hands x to the pool, which writes it to a session at once or lets it
 * wait for one; it counts as started only once written (x_finish). */
static void dispatch(worker *w, yb_exchange *x)
{
    x->res.issued = uv_hrtime();
    yb_pool_submit(w->pool, x);
}

/* Takes the next request from the corpus share as an exchange due at
 * `due`.  Returns it, or NULL with w->exhausted set (end of the share, the
 * -n budget, or a corpus error in w->err). */
static yb_exchange *take_request(worker *w, uint64_t due)
{
    if (w->issued >= w->share.budget) {
        w->exhausted = 1;
        return NULL;
    }
    yb_prepared *p;
    int rc = yb_source_next(w->src, w->share.cycle, &p, w->err, sizeof w->err);
    if (rc <= 0) {
        if (rc < 0)
            w->failed = 1;
        w->exhausted = 1;
        return NULL;
    }
    yb_exchange *x = x_new(w, p, due);
    if (!x) {
        yb_source_release(w->src, p);
        w->failed = 1;
        snprintf(w->err, sizeof w->err, "out of memory");
        w->exhausted = 1;
        return NULL;
    }
    w->issued++;
    w->outstanding++;
    return x;
}

/* Closed loop: issues requests while there are free slots. */
static void fill(worker *w)
{
    while (!w->idle && !w->exhausted && !w->grace_end && w->outstanding < w->share.slots) {
        yb_exchange *x = take_request(w, 0);
        if (!x)
            break;
        /* closed loop: due when issued, after the corpus read, so decoding
         * the corpus never counts as latency */
        x->res.due = uv_hrtime();
        dispatch(w, x);
    }
}

/* Open loop: absolute due time of this worker's request k (its global
 * index is k * threads + id, so workers interleave on one schedule), or 0
 * past the schedule's end. */
static uint64_t due_of(const worker *w, uint64_t k)
{
    uint64_t t;
    if (yb_sched_due(&w->o->sched, k * w->share.workers + w->share.worker, &t) < 0)
        return 0;
    return w->start + t;
}

static void arm_timer(worker *w)
{
    struct itimerspec its;
    memset(&its, 0, sizeof its);
    /* --spin: wake early; issue_due spins the rest of the way, since a
     * wake-up from idle can take tens of microseconds on its own */
    uint64_t at = w->next_due > w->o->spin_ns ? w->next_due - w->o->spin_ns : w->next_due;
    its.it_value.tv_sec = (time_t)(at / 1000000000ull);
    its.it_value.tv_nsec = (long)(at % 1000000000ull);
    if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
        its.it_value.tv_nsec = 1;
    timerfd_settime(w->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* --timing original: reads the next request ahead and computes its due
 * time from its recorded timestamp (scaled by --speed; each new pass over
 * the corpus continues after the previous one).  Returns 0 at the end. */
static uint64_t original_next(worker *w)
{
    if (!w->next_x) {
        w->next_x = take_request(w, 0);
        if (!w->next_x)
            return 0;
        uint64_t pass = yb_source_passes(w->src);
        if (pass != w->last_pass) {
            w->pass_offset += w->last_ts + 1000000; /* next pass: 1 ms after the last */
            w->last_pass = pass;
        }
        uint64_t ts = w->next_x->req->timestamp_ns;
        w->last_ts = ts;
        double scaled = (double)(ts + w->pass_offset) / (w->o->speed > 0 ? w->o->speed : 1.0);
        w->next_x->res.due = w->start + (uint64_t)scaled;
    }
    return w->next_x->res.due;
}

/* Gives back a read-ahead request that will never be sent (the run
 * ended before its time came); it was never started, so it is not counted. */
static void drop_readahead(worker *w)
{
    if (!w->next_x)
        return;
    yb_source_release(w->src, (yb_prepared *)w->next_x->req);
    w->outstanding--;
    w->issued--;
    free(w->next_x);
    w->next_x = NULL;
}

static void issue_original(worker *w)
{
    uint64_t now = uv_hrtime(), due;
    while (!w->exhausted && !w->grace_end && (due = original_next(w)) && due <= now) {
        if (w->deadline && (due >= w->deadline || now >= w->deadline)) {
            if (due >= w->deadline)
                w->exhausted = 1;
            break; /* past -D: what was due before it is unsent (begin_stop) */
        }
        yb_exchange *x = w->next_x;
        w->next_x = NULL;
        dispatch(w, x);
        now = uv_hrtime();
    }
    if (!w->exhausted && !w->grace_end && w->next_x) {
        w->next_due = w->next_x->res.due;
        arm_timer(w);
    } else {
        drop_readahead(w);
    }
    pump(w);
}

/* Open loop: issues every request whose due time has come, whatever the
 * responses, then sleeps until the next one. */
static void issue_due(worker *w)
{
    if (w->o->timing_original) {
        issue_original(w);
        return;
    }
    uint64_t now = uv_hrtime();
    /* --spin: the next due time is near, so wait for it here, once per
     * wake-up (never in the loop below, which must let I/O run) */
    if (w->o->spin_ns && w->next_due > now && w->next_due - now <= w->o->spin_ns)
        while ((now = uv_hrtime()) < w->next_due)
            ;
    while (!w->exhausted && !w->grace_end && w->next_due <= now) {
        if (!w->next_due || (w->deadline && w->next_due >= w->deadline)) {
            w->exhausted = 1;
            break;
        }
        if (w->deadline && now >= w->deadline)
            break; /* behind at -D: the rest is unsent (begin_stop), not sent late */
        yb_exchange *x = take_request(w, w->next_due);
        if (!x)
            break;
        dispatch(w, x);
        w->next_due = due_of(w, ++w->next_k);
        if (w->next_due > now)
            now = uv_hrtime();
    }
    if (!w->exhausted && !w->grace_end && w->next_due)
        arm_timer(w);
    pump(w);
}

static void on_due(uv_poll_t *p, int status, int events)
{
    (void)status;
    (void)events;
    worker *w = p->data;
    uint64_t expirations;
    if (read(w->tfd, &expirations, sizeof expirations) < 0 && errno != EAGAIN)
        return;
    if (!w->finished)
        issue_due(w);
}

static void begin_stop(worker *w, uint64_t now);

/* Moves waiting exchanges onto sessions, issues more, ends the run. */
static void pump(worker *w)
{
    if (w->finished)
        return;
    /* -D: nothing goes onto a session after the deadline, not even what
     * has waited for one since before it */
    if (w->deadline && !w->grace_end) {
        uint64_t now = uv_hrtime();
        if (now >= w->deadline)
            begin_stop(w, now);
    }
    yb_pool_drain(w->pool);
    if (!w->share.open_loop)
        fill(w);
    yb_pool_flush(w->pool);
    if (w->exhausted && w->outstanding == 0)
        teardown(w);
}

/* Cuts off everything still in flight (after a stop's grace period). */
static void cut_off(worker *w)
{
    w->exhausted = 1;
    yb_pool_cut_off(w->pool);
}

/* Open loop at -D: the requests the schedule had due before the deadline
 * that this worker never took from it (it was behind) are unsent too. */
static uint64_t unissued_before_deadline(worker *w)
{
    uint64_t n = 0;
    if (w->o->timing_original) {
        if (w->next_x && w->next_x->res.due < w->deadline)
            n++; /* the read-ahead; later records are not read to count them */
        return n;
    }
    for (uint64_t k = w->next_k, due = w->next_due; due && due < w->deadline &&
                                                     w->issued + n < w->share.budget;
         due = due_of(w, ++k))
        n++;
    return n;
}

/* The run stops issuing (stop signal, or the -D deadline at now): what
 * waits for a session is withdrawn as unsent, open-ended streams are
 * ended, and what is in flight gets the grace period. */
static void begin_stop(worker *w, uint64_t now)
{
    int at_deadline = w->deadline && now >= w->deadline && !(w->o->stop && *w->o->stop);
    if (at_deadline && w->share.open_loop)
        w->rec.unsent += unissued_before_deadline(w);
    w->exhausted = 1;
    w->grace_end = now + (w->o->grace_ns ? w->o->grace_ns : 1);
    drop_readahead(w);
    yb_pool_withdraw(w->pool);
    /* STREAM subscriptions end as ok: they ran as long as the run wanted
     * them to */
    yb_pool_finish_streams(w->pool);
}

static void on_tick(uv_timer_t *t)
{
    worker *w = t->data;
    uint64_t now = uv_hrtime();
    if (w->finished)
        return;
    atomic_store_explicit(&w->live.backlog, yb_pool_waiting(w->pool), memory_order_relaxed);
    seal_seconds(w, now, 0);
    if (w->live_h && (now - w->rec.run_start) / 1000000000ull != w->live_sec)
        live_roll(w, (now - w->rec.run_start) / 1000000000ull); /* a quiet second */
    if (!w->grace_end && ((w->o->stop && *w->o->stop) || (w->deadline && now >= w->deadline)))
        begin_stop(w, now);
    if (w->exhausted)
        drop_readahead(w);
    if (w->grace_end && now >= w->grace_end && w->outstanding)
        cut_off(w);
    if (w->o->timeout_ns)
        yb_pool_timeouts(w->pool, now, w->o->timeout_ns, w->deadline != 0);
    pump(w);
}

static void close_cb_noop(uv_handle_t *h)
{
    (void)h;
}

static void teardown(worker *w)
{
    if (w->finished)
        return;
    w->finished = 1;
    w->rec.run_end = uv_hrtime();
    w->rec.reconnect_backoffs = yb_pool_backoffs(w->pool);
    seal_seconds(w, w->rec.run_end, 1);
    yb_pool_close_all(w->pool);
    uv_timer_stop(&w->tick);
    uv_close((uv_handle_t *)&w->tick, close_cb_noop);
    uv_timer_stop(&w->begin);
    uv_close((uv_handle_t *)&w->begin, close_cb_noop);
    if (w->share.open_loop) {
        uv_poll_stop(&w->tpoll);
        uv_close((uv_handle_t *)&w->tpoll, close_cb_noop);
    }
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

/* Closed loop: its start offset has come (a uv timer counts whole
 * milliseconds of a cached clock, so it is checked against the real one). */
static void on_begin(uv_timer_t *t)
{
    worker *w = t->data;
    uint64_t now = uv_hrtime();
    if (w->finished)
        return;
    if (now < w->start) {
        uv_timer_start(&w->begin, on_begin, 1, 0);
        return;
    }
    w->idle = 0;
    pump(w);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    /* what other processes (or the hypervisor) took of this thread's CPU:
     * the self-check tells a starved generator from a slow target */
    uint64_t nivcsw0 = invol_switches(), run0, wait0, run1, wait1;
    sched_times(&run0, &wait0);
    /* The kernel may defer a thread's timer wake-ups by its "timer slack"
     * (50 us by default) to batch them; due times want the real instant. */
    if (w->share.open_loop)
        prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    uv_update_time(&w->loop);
    uv_timer_start(&w->tick, on_tick, w->tick_ns / 1000000 ? w->tick_ns / 1000000 : 1,
                   w->tick_ns / 1000000 ? w->tick_ns / 1000000 : 1);
    if (w->share.open_loop) {
        w->next_due = due_of(w, 0);
        uv_poll_start(&w->tpoll, UV_READABLE, on_due);
        issue_due(w); /* the first due time is its start */
    } else {
        uint64_t now = uv_hrtime();
        if (now < w->start) { /* idles until its start offset */
            w->idle = 1;
            uv_timer_start(&w->begin, on_begin, (w->start - now) / 1000000 + 1, 0);
        }
        pump(w);
    }
    uv_run(&w->loop, UV_RUN_DEFAULT);
    w->rec.gen_invol_switches = invol_switches() - nivcsw0;
    sched_times(&run1, &wait1);
    w->rec.gen_run_ns = run1 > run0 ? run1 - run0 : 0;
    w->rec.gen_runq_wait_ns = wait1 > wait0 ? wait1 - wait0 : 0;
    atomic_store(&w->live.running, 0);
    return NULL;
}

/* ---- what the pool calls (yb_pool_host) ---------------------------------- */

static void pool_done(void *ud, yb_exchange *x)
{
    x_finish(ud, x);
}

static void pool_drop(void *ud, yb_exchange *x)
{
    worker *w = ud;
    if (x->res.send_start) { /* written to a session: started, then cut off */
        w->rec.started++;
        w->rec.cut_off++;
    } else {
        w->rec.unsent++;
    }
    yb_source_release(w->src, (yb_prepared *)x->req);
    w->outstanding--;
    free(x);
}

static void pool_retried(void *ud, yb_exchange *x)
{
    (void)x;
    worker *w = ud;
    w->rec.retried++;
}

static void pool_notify(void *ud, uint64_t now, int64_t lateness_ns, uint64_t n_updates)
{
    worker *w = ud;
    yb_recorder_notify(&w->rec, now, lateness_ns, n_updates);
}

static void pool_kick(void *ud)
{
    pump(ud);
}

static const yb_pool_host POOL_HOST = {pool_done, pool_drop, pool_retried, pool_notify, pool_kick};

/* ---- the worker's life cycle ---------------------------------------------- */

static void worker_cleanup(worker *w)
{
    if (w->loop.data) {
        uv_run(&w->loop, UV_RUN_NOWAIT);
        uv_loop_close(&w->loop);
    }
    if (w->tfd >= 0)
        close(w->tfd);
    yb_source_free(w->src);
    yb_pool_free(w->pool);
    yb_hdr_free(w->live_h);
    while (w->free_x) {
        yb_exchange *x = w->free_x;
        w->free_x = x->next;
        free(x);
    }
    yb_recorder_cleanup(&w->rec);
}

/* Opens worker w's corpus share, pool and loop.  Returns 0 or -1 with err
 * (w is then cleaned up by the caller). */
static int worker_init(worker *w, const yb_plan *plan, size_t pair, unsigned i, int live,
                       char *err, size_t errlen)
{
    const yb_engine_opts *o = plan->pair[pair].workload;
    w->o = o;
    w->target = plan->pair[pair].target;
    w->tfd = -1;
    w->ops = o->ops;
    yb_plan_share(plan, pair, i, &w->share);
    if (yb_recorder_init(&w->rec) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (live && !(w->live_h = yb_hdr_new_default())) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* the share's worker index: with --split, one of workers x parts */
    w->src = yb_source_new(o->corpus_path, w->share.worker, w->share.workers, w->share.by_conn,
                           w->ops, &o->codec, o->cache_bytes, err, errlen);
    if (!w->src)
        return -1;
    yb_source_route(w->src, o->route);
    if (o->authmap)
        yb_source_authority(w->src, o->authmap, o->auth_target);
    w->rec.ops.cap = (size_t)o->max_ops;
    yb_source_ops(w->src, &w->rec.ops);
    if (o->sched.kind != YB_SCHED_NONE) {
        /* open loop: decode the corpus before the clock starts */
        if (yb_source_warm(w->src, err, errlen) < 0)
            return -1;
    }
    yb_pool_cfg pc = {
        .loop = &w->loop,
        .target = w->target,
        .ops = w->ops,
        .codec = &o->codec,
        .tls = &o->tls,
        .tls_resume = o->tls_resume,
        .timeout_ns = o->timeout_ns,
        .policy = o->policy,
        .sess_limit = w->share.sess_limit,
        .oneshot_limit = w->share.slots,
        .max_wait = w->share.max_wait,
        .budget = &w->mem,
    };
    /* at least one message that --max-body allows */
    w->mem.limit = o->codec.max_body > YB_MEM_BUDGET_DEFAULT ? o->codec.max_body
                                                             : YB_MEM_BUDGET_DEFAULT;
    if (!(w->pool = yb_pool_new(&pc, &POOL_HOST, w, err, errlen)))
        return -1;
    w->tick_ns = 10 * 1000000ull;
    if (o->timeout_ns && o->timeout_ns / 4 < w->tick_ns)
        w->tick_ns = o->timeout_ns / 4 > 1000000 ? o->timeout_ns / 4 : 1000000;
    if (uv_loop_init(&w->loop) < 0) {
        snprintf(err, errlen, "cannot create an event loop");
        return -1;
    }
    w->loop.data = w;
    uv_timer_init(&w->loop, &w->tick);
    w->tick.data = w;
    uv_timer_init(&w->loop, &w->begin);
    w->begin.data = w;
    if (w->share.open_loop) {
        w->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        if (w->tfd < 0 || uv_poll_init(&w->loop, &w->tpoll, w->tfd) < 0) {
            snprintf(err, errlen, "cannot create a timer: %s", strerror(errno));
            return -1;
        }
        w->tpoll.data = w;
    }
    return 0;
}

yb_worker *yb_worker_new(const yb_plan *p, size_t pair, unsigned index, int live, char *err,
                         size_t errlen)
{
    worker *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (worker_init(w, p, pair, index, live, err, errlen) < 0) {
        worker_cleanup(w);
        free(w);
        return NULL;
    }
    return w;
}

void yb_worker_set_lane(yb_worker *w, yb_stream_lane *lane)
{
    w->lane = lane;
}

void yb_worker_set_start(yb_worker *w, uint64_t start)
{
    w->rec.run_start = start; /* the run's: one clock for every pair's seconds */
    w->start = start + w->share.start_ns;
    if (w->share.run_ns)
        w->deadline = w->start + w->share.run_ns;
}

int yb_worker_start(yb_worker *w)
{
    atomic_store(&w->live.running, 1);
    if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
        atomic_store(&w->live.running, 0);
        return -1;
    }
    return 0;
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

const char *yb_worker_error(const yb_worker *w)
{
    return w->failed ? w->err : NULL;
}

yb_recorder *yb_worker_recorder(yb_worker *w)
{
    return &w->rec;
}

void yb_worker_free(yb_worker *w)
{
    if (!w)
        return;
    worker_cleanup(w);
    free(w);
}
