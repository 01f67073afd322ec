/* Workers: one libuv loop per thread with its own corpus share, schedule,
 * sessions and recorder.  This file owns the scheduler (closed loop: a slot
 * frees -> the next request) and the session pool (reuse, per-request,
 * pool=N); codecs and transports are driven through their interfaces. */
#include "config.h"
#include "engine/engine.h"
#include "engine/source.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

typedef struct worker worker;

/* What a worker publishes for the progress line (relaxed atomics: the
 * reader only wants a recent value, never a consistent snapshot). */
typedef struct {
    _Atomic uint64_t completed, errors, backlog, sec, sec_count;
    _Atomic uint64_t p50_us, p99_us;
    _Atomic int running;
} live_stats;

typedef struct session {
    worker *w;
    yb_transport *t;
    yb_codec *codec;
    int ready;           /* transport ready and codec started */
    int closing;         /* close requested; on_close pending */
    int one_shot;        /* per-request: closed after its exchange */
    yb_err_class close_why; /* class given to exchanges failed by our close */
    yb_exchange *inflight; /* submitted to the codec (doubly linked) */
    unsigned n_inflight;
    yb_exchange *pend_head, *pend_tail; /* waiting for the session to be ready */
    yb_exchange *opener; /* the exchange that pays the set-up phases */
    uint64_t conn_id;    /* --sessions original: the recorded connection */
    int mapped;          /* in the worker's conn_id map */
    int dirty;           /* submitted work waits for the codec's flush */
    struct session *dnext;
    struct session *next, *prev;
    struct session *hnext; /* conn_id map chain */
} session;

#define CONN_BUCKETS 1024

struct worker {
    unsigned id;
    const yb_engine_opts *o;
    const yb_codec_ops *ops;
    uv_loop_t loop;
    uv_timer_t tick;
    uint64_t tick_ns;
    yb_tls_ctx *tls;
    yb_source *src;
    yb_recorder rec;
    yb_codec_host host;
    yb_hdr *live_h;      /* end-to-end of the current second (progress only) */
    uint64_t live_sec;   /* second index live_h covers */
    live_stats live;
    uint64_t budget;     /* requests to issue; UINT64_MAX = until the end */
    int cycle;           /* wrap around the corpus share */
    uint64_t issued;
    unsigned slots;      /* closed-loop concurrency of this worker */
    unsigned outstanding;/* issued and not finished */
    unsigned sess_limit; /* persistent sessions allowed */
    unsigned n_persistent;
    session *sessions;
    session *dirty;      /* sessions to flush at the end of this pass */
    yb_exchange *wait_head, *wait_tail; /* waiting for a session */
    uint64_t n_wait;     /* length of the wait queue (the open-loop backlog) */
    uint64_t n_oneshot;  /* per-request sessions open */
    /* open loop */
    int open_loop;
    int tfd;             /* timerfd: ns-precise wake-ups for due times */
    uv_poll_t tpoll;
    uint64_t next_k;     /* this worker's next request index */
    uint64_t next_due;   /* absolute due time of request next_k */
    uint64_t start;
    yb_exchange *next_x; /* --timing original: the next request, read ahead */
    uint64_t pass_offset;/* --timing original: added to recorded times per pass */
    uint64_t last_ts, last_pass;
    session *conn_map[CONN_BUCKETS]; /* --sessions original */
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

/* Records x and recycles it.  x must be on no list. */
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
    if (res->due && res->done > res->due)
        yb_hdr_record(w->live_h, (int64_t)((res->done - res->due) / 1000));
    atomic_fetch_add_explicit(&w->live.completed, 1, memory_order_relaxed);
    if (res->err != YB_ERR_NONE)
        atomic_fetch_add_explicit(&w->live.errors, 1, memory_order_relaxed);
}

static void x_finish(worker *w, yb_exchange *x)
{
    if (!x->res.done)
        x->res.done = uv_hrtime();
    yb_recorder_add(&w->rec, &x->res);
    if (w->live_h)
        live_add(w, &x->res);
    yb_source_release(w->src, (yb_prepared *)x->req);
    w->outstanding--;
    x->next = w->free_x;
    w->free_x = x;
}

static void x_fail(worker *w, yb_exchange *x, yb_err_class why)
{
    x->res.err = why == YB_ERR_NONE ? YB_ERR_CLOSED : why;
    x->res.done = uv_hrtime();
    x_finish(w, x);
}

static void list_unlink(yb_exchange **head, yb_exchange *x)
{
    if (x->prev)
        x->prev->next = x->next;
    else
        *head = x->next;
    if (x->next)
        x->next->prev = x->prev;
    x->next = x->prev = NULL;
}

static void list_push(yb_exchange **head, yb_exchange *x)
{
    x->prev = NULL;
    x->next = *head;
    if (*head)
        (*head)->prev = x;
    *head = x;
}

static void fifo_push(yb_exchange **h, yb_exchange **t, yb_exchange *x)
{
    x->next = NULL;
    x->prev = *t;
    if (*t)
        (*t)->next = x;
    else
        *h = x;
    *t = x;
}

static yb_exchange *fifo_pop(yb_exchange **h, yb_exchange **t)
{
    yb_exchange *x = *h;
    if (x) {
        *h = x->next;
        if (*h)
            (*h)->prev = NULL;
        else
            *t = NULL;
        x->next = x->prev = NULL;
    }
    return x;
}

/* ---- sessions ---------------------------------------------------------- */

static void pump(worker *w);

static void sess_unlink(worker *w, session *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        w->sessions = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->next = s->prev = NULL;
}

static void sess_to_front(worker *w, session *s)
{
    if (w->sessions == s)
        return;
    sess_unlink(w, s);
    s->next = w->sessions;
    if (w->sessions)
        w->sessions->prev = s;
    w->sessions = s;
}

static void sess_close(session *s, yb_err_class why)
{
    if (s->closing)
        return;
    s->closing = 1;
    s->close_why = why;
    yb_transport_close(s->t);
}

static session **conn_slot(worker *w, uint64_t conn_id)
{
    session **pp = &w->conn_map[(conn_id * 0x9e3779b97f4a7c15ull) >> 54];
    while (*pp && (*pp)->conn_id != conn_id)
        pp = &(*pp)->hnext;
    return pp;
}

static void conn_unmap(worker *w, session *s)
{
    if (!s->mapped)
        return;
    session **pp = conn_slot(w, s->conn_id);
    if (*pp == s)
        *pp = s->hnext;
    s->mapped = 0;
}

/* Submits x on s.  Returns 0, or < 0 when the codec refused it (x is then
 * still the caller's). */
static int sess_submit(session *s, yb_exchange *x, uint64_t now)
{
    x->owner = s;
    if (!x->res.send_start)
        x->res.send_start = now;
    int rc = s->w->ops->submit(s->codec, x, now);
    if (rc < 0)
        return rc;
    list_push(&s->inflight, x);
    s->n_inflight++;
    if (s->w->ops->flush && !s->dirty) {
        s->dirty = 1;
        s->dnext = s->w->dirty;
        s->w->dirty = s;
    }
    return 0;
}

/* Writes out what this pass submitted, one batch per session. */
static void flush_dirty(worker *w)
{
    if (!w->dirty)
        return;
    uint64_t now = uv_hrtime();
    while (w->dirty) {
        session *s = w->dirty;
        w->dirty = s->dnext;
        s->dirty = 0;
        if (!s->closing)
            w->ops->flush(s->codec, now);
    }
}

static int sess_has_room(const session *s)
{
    return s->ready && !s->closing && s->w->ops->usable(s->codec) &&
           s->w->ops->capacity(s->codec) > 0;
}

/* Submits what waits on s (pending from before it was ready). */
static void sess_drain_pending(session *s)
{
    uint64_t now = uv_hrtime();
    while (s->pend_head && sess_has_room(s)) {
        yb_exchange *x = fifo_pop(&s->pend_head, &s->pend_tail);
        if (sess_submit(s, x, now) < 0) {
            x_fail(s->w, x, YB_ERR_OTHER);
        }
    }
}

/* Codec host callbacks. */
static int host_write(void *hd, const uv_buf_t *bufs, unsigned n)
{
    session *s = hd;
    return yb_transport_write(s->t, bufs, n);
}

static void host_done(void *hd, yb_exchange *x)
{
    session *s = hd;
    list_unlink(&s->inflight, x);
    s->n_inflight--;
    if (x->retry) {
        /* not processed by the server (refused stream, above GOAWAY's last
         * id): run it again on another session, keeping its due time */
        x->retry = 0;
        x->res.done = x->res.first_byte = x->res.sent = 0;
        x->res.conn_start = x->res.connected = x->res.tls_done = x->res.h2_ready = 0;
        x->res.bytes_in = 0;
        s->w->rec.retried++;
        fifo_push(&s->w->wait_head, &s->w->wait_tail, x);
        s->w->n_wait++;
    } else {
        x_finish(s->w, x);
    }
    if (s->one_shot && !s->n_inflight && !s->pend_head)
        sess_close(s, YB_ERR_NONE);
    else if (!s->closing) {
        sess_to_front(s->w, s);
        if (s->ready && s->pend_head)
            sess_drain_pending(s); /* --sessions original: its next recorded request */
    }
}

static void host_close(void *hd, int fatal, yb_err_class why)
{
    session *s = hd;
    if (fatal || !s->n_inflight)
        sess_close(s, why);
    /* else: close once the last in-flight exchange is done (HTTP/2 GOAWAY) */
}

static void host_ready(void *hd)
{
    session *s = hd;
    if (s->opener && !s->opener->res.h2_ready)
        s->opener->res.h2_ready = uv_hrtime();
    sess_drain_pending(s);
}

static void host_notify(void *hd, uint64_t now, int64_t lateness_ns, uint64_t n_updates)
{
    session *s = hd;
    yb_recorder_notify(&s->w->rec, now, lateness_ns, n_updates);
}

static void on_ready(yb_transport *t, void *ud, yb_err_class status)
{
    session *s = ud;
    if (status != YB_ERR_NONE) {
        s->close_why = status; /* on_close follows and fails the pending work */
        return;
    }
    worker *w = s->w;
    if (s->opener) {
        s->opener->res.connected = yb_transport_t_connected(t);
        s->opener->res.tls_done = yb_transport_t_tls_done(t);
        s->opener->res.tls_resumed = yb_transport_tls_resumed(t);
    }
    if (w->ops->start(s->codec) < 0) {
        sess_close(s, YB_ERR_PROTOCOL);
        return;
    }
    s->ready = 1;
    sess_drain_pending(s);
    pump(w);
}

static void on_read(yb_transport *t, void *ud, const uint8_t *d, size_t n)
{
    (void)t;
    session *s = ud;
    if (s->closing)
        return;
    s->w->ops->on_read(s->codec, d, n, uv_hrtime());
    pump(s->w);
}

static void on_drain(yb_transport *t, void *ud)
{
    (void)t;
    session *s = ud;
    s->w->ops->on_drain(s->codec, uv_hrtime());
}

static void on_close(yb_transport *t, void *ud, yb_err_class reason)
{
    (void)t;
    session *s = ud;
    worker *w = s->w;
    if (reason == YB_ERR_CLOSED && !s->closing)
        w->ops->on_eof(s->codec, uv_hrtime());
    yb_err_class why = s->closing && s->close_why != YB_ERR_NONE ? s->close_why
                       : reason != YB_ERR_NONE ? reason : s->close_why;
    while (s->inflight) {
        yb_exchange *x = s->inflight;
        list_unlink(&s->inflight, x);
        x_fail(w, x, why);
    }
    while (s->pend_head)
        x_fail(w, fifo_pop(&s->pend_head, &s->pend_tail), why);
    sess_unlink(w, s);
    conn_unmap(w, s);
    if (s->dirty) {
        session **pp = &w->dirty;
        while (*pp != s)
            pp = &(*pp)->dnext;
        *pp = s->dnext;
    }
    if (!s->one_shot)
        w->n_persistent--;
    else
        w->n_oneshot--;
    w->ops->destroy(s->codec);
    free(s);
    pump(w);
}

static const yb_transport_cbs TRANSPORT_CBS = {on_ready, on_read, on_drain, on_close};

/* Opens a session for x (which pays its set-up).  Returns 0, or < 0 with x
 * failed and finished. */
static int sess_open(worker *w, yb_exchange *x, int one_shot)
{
    session *s = calloc(1, sizeof *s);
    if (!s) {
        x_fail(w, x, YB_ERR_OTHER);
        return -ENOMEM;
    }
    s->w = w;
    s->one_shot = one_shot;
    s->codec = w->ops->create(&w->o->codec, &w->host, s);
    if (!s->codec) {
        free(s);
        x_fail(w, x, YB_ERR_OTHER);
        return -ENOMEM;
    }
    uint64_t now = uv_hrtime();
    x->res.conn_start = now;
    x->res.send_start = now;
    s->opener = x;
    fifo_push(&s->pend_head, &s->pend_tail, x);
    /* link first: callbacks may run from inside connect on failure paths */
    s->next = w->sessions;
    if (w->sessions)
        w->sessions->prev = s;
    w->sessions = s;
    if (!one_shot)
        w->n_persistent++;
    else
        w->n_oneshot++;
    yb_err_class ec = YB_ERR_NONE;
    const yb_target *tg = &w->o->target;
    s->t = yb_transport_connect(&w->loop, (const struct sockaddr *)&tg->addr, w->tls,
                                tg->tls ? tg->host : NULL, w->o->timeout_ns, &TRANSPORT_CBS, s,
                                &ec);
    if (!s->t) {
        fifo_pop(&s->pend_head, &s->pend_tail);
        sess_unlink(w, s);
        if (!one_shot)
            w->n_persistent--;
        else
            w->n_oneshot--;
        w->ops->destroy(s->codec);
        free(s);
        x_fail(w, x, ec == YB_ERR_NONE ? YB_ERR_OTHER : ec);
        return -1;
    }
    return 0;
}

/* Queues x to wait for a session; in the open loop a full backlog fails
 * it as an overflow (counted, never silently dropped). */
static void wait_push(worker *w, yb_exchange *x)
{
    if (w->open_loop && w->n_wait >= w->o->max_backlog) {
        x_fail(w, x, YB_ERR_OVERFLOW);
        return;
    }
    fifo_push(&w->wait_head, &w->wait_tail, x);
    w->n_wait++;
}

static yb_exchange *wait_pop(worker *w)
{
    yb_exchange *x = fifo_pop(&w->wait_head, &w->wait_tail);
    if (x)
        w->n_wait--;
    return x;
}

/* Per-request sessions may be opened (at most -c at once). */
static int can_open_oneshot(const worker *w)
{
    return w->n_oneshot < w->slots;
}

/* Finds a session for x or queues it. */
static void dispatch(worker *w, yb_exchange *x)
{
    uint64_t now = uv_hrtime();
    w->rec.started++;
    if (w->o->policy == YB_SESS_PER_REQUEST) {
        if (can_open_oneshot(w))
            sess_open(w, x, 1);
        else
            wait_push(w, x);
        return;
    }
    if (w->o->policy == YB_SESS_ORIGINAL) {
        /* The recorded connection's own session, in recorded order: queue
         * behind its earlier requests. */
        uint64_t cid = x->req->conn_id;
        session *s = *conn_slot(w, cid);
        if (!s) {
            if (sess_open(w, x, 0) == 0) {
                s = w->sessions; /* sess_open links the new session first */
                s->conn_id = cid;
                s->mapped = 1;
                s->hnext = NULL;
                *conn_slot(w, cid) = s;
            }
            return;
        }
        if (!s->pend_head && sess_has_room(s) && sess_submit(s, x, now) == 0)
            return;
        fifo_push(&s->pend_head, &s->pend_tail, x);
        return;
    }
    for (session *s = w->sessions; s; s = s->next) {
        if (sess_has_room(s)) {
            if (sess_submit(s, x, now) == 0)
                return;
            break;
        }
    }
    if (w->n_persistent < w->sess_limit) {
        sess_open(w, x, 0);
        return;
    }
    wait_push(w, x);
}

/* ---- scheduler ----------------------------------------------------------- */

static void teardown(worker *w);

/* Takes the next request from the corpus share as an exchange due at
 * `due`.  Returns it, or NULL with w->exhausted set (end of the share, the
 * -n budget, or a corpus error in w->err). */
static yb_exchange *take_request(worker *w, uint64_t due)
{
    if (w->issued >= w->budget) {
        w->exhausted = 1;
        return NULL;
    }
    yb_prepared *p;
    uint64_t skipped = 0;
    int rc = yb_source_next(w->src, w->cycle, &p, &skipped, w->err, sizeof w->err);
    if (skipped) {
        /* records this codec cannot carry: counted, never dropped silently */
        w->rec.completed += skipped;
        w->rec.errors[YB_ERR_PROTOCOL] += skipped;
    }
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
    while (!w->exhausted && !w->grace_end && w->outstanding < w->slots) {
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
    if (yb_sched_due(&w->o->sched, k * w->o->threads + w->id, &t) < 0)
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
        if (w->deadline && due >= w->deadline) {
            w->exhausted = 1;
            break;
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

/* Moves waiting exchanges onto sessions, issues more, ends the run. */
static void pump(worker *w)
{
    if (w->finished)
        return;
    while (w->wait_head) {
        if (w->o->policy == YB_SESS_PER_REQUEST) {
            if (!can_open_oneshot(w))
                break;
            sess_open(w, wait_pop(w), 1);
            continue;
        }
        session *s = w->sessions;
        while (s && !sess_has_room(s))
            s = s->next;
        uint64_t now = uv_hrtime();
        if (s) {
            yb_exchange *x = wait_pop(w);
            if (sess_submit(s, x, now) < 0)
                x_fail(w, x, YB_ERR_OTHER);
        } else if (w->n_persistent < w->sess_limit) {
            sess_open(w, wait_pop(w), 0);
        } else {
            break;
        }
    }
    if (!w->open_loop)
        fill(w);
    flush_dirty(w);
    if (w->exhausted && w->outstanding == 0)
        teardown(w);
}

/* Cuts off everything still in flight (after a stop's grace period). */
static void cut_off(worker *w)
{
    w->exhausted = 1;
    while (w->wait_head) {
        yb_exchange *x = wait_pop(w);
        w->rec.cut_off++;
        yb_source_release(w->src, (yb_prepared *)x->req);
        w->outstanding--;
        free(x);
    }
    for (session *s = w->sessions; s; s = s->next) {
        for (yb_exchange **l = &s->inflight; *l;) {
            yb_exchange *x = *l;
            list_unlink(l, x);
            w->ops->cancel(s->codec, x);
            w->rec.cut_off++;
            yb_source_release(w->src, (yb_prepared *)x->req);
            w->outstanding--;
            free(x);
        }
        s->n_inflight = 0;
        while (s->pend_head) {
            yb_exchange *x = fifo_pop(&s->pend_head, &s->pend_tail);
            w->rec.cut_off++;
            yb_source_release(w->src, (yb_prepared *)x->req);
            w->outstanding--;
            free(x);
        }
        sess_close(s, YB_ERR_NONE);
    }
}

/* The run is stopping: ends the open-ended exchanges (STREAM
 * subscriptions), which then complete as ok when their resets go out with
 * this pass's flush.  They ran as long as the run wanted them to. */
static void finish_open_ended(worker *w)
{
    if (!w->ops->finish)
        return;
    for (session *s = w->sessions; s; s = s->next) {
        if (s->closing)
            continue;
        int any = 0;
        for (yb_exchange *x = s->inflight; x; x = x->next)
            if (x->req->open_ended && w->ops->finish(s->codec, x) == 0)
                any = 1;
        if (any && w->ops->flush && !s->dirty) {
            s->dirty = 1;
            s->dnext = w->dirty;
            w->dirty = s;
        }
    }
}

/* Fails exchanges that exceeded --timeout. */
static void check_timeouts(worker *w, uint64_t now)
{
    uint64_t to = w->o->timeout_ns;
    for (session *s = w->sessions, *next; s; s = next) {
        next = s->next;
        /* A session whose set-up never finishes (TCP accepted, but no
         * HTTP/2 SETTINGS) holds its opener on the pending list, out of
         * the transport's connect timer's reach: close it, which fails
         * the pending exchanges. */
        if (s->pend_head && s->pend_head == s->opener && s->opener->res.conn_start &&
            now - s->opener->res.conn_start >= to) {
            sess_close(s, YB_ERR_CONNECT_TIMEOUT);
            continue;
        }
        for (yb_exchange *x = s->inflight, *xn; x; x = xn) {
            xn = x->next;
            if (now - x->res.send_start < to)
                continue;
            /* a STREAM subscription of a timed run lasts until the run
             * ends, once the server has answered it */
            if (x->req->open_ended && x->res.first_byte && w->deadline)
                continue;
            list_unlink(&s->inflight, x);
            s->n_inflight--;
            int keep = w->ops->cancel(s->codec, x);
            x_fail(w, x, YB_ERR_TIMEOUT);
            if (!keep) {
                sess_close(s, YB_ERR_TIMEOUT);
                break;
            }
        }
    }
    /* Exchanges waiting for a session also time out (from their due time). */
    for (yb_exchange *x = w->wait_head, *xn; x; x = xn) {
        xn = x->next;
        if (now - x->res.due < to)
            continue;
        if (x->prev)
            x->prev->next = x->next;
        else
            w->wait_head = x->next;
        if (x->next)
            x->next->prev = x->prev;
        else
            w->wait_tail = x->prev;
        x->next = x->prev = NULL;
        w->n_wait--;
        x_fail(w, x, YB_ERR_TIMEOUT);
    }
}

static void on_tick(uv_timer_t *t)
{
    worker *w = t->data;
    uint64_t now = uv_hrtime();
    if (w->finished)
        return;
    atomic_store_explicit(&w->live.backlog, w->n_wait, memory_order_relaxed);
    if (w->live_h && (now - w->rec.run_start) / 1000000000ull != w->live_sec)
        live_roll(w, (now - w->rec.run_start) / 1000000000ull); /* a quiet second */
    if (!w->grace_end && ((w->o->stop && *w->o->stop) || (w->deadline && now >= w->deadline))) {
        w->exhausted = 1;
        w->grace_end = now + (w->o->grace_ns ? w->o->grace_ns : 1);
        if (w->deadline && now >= w->deadline && !(w->o->stop && *w->o->stop) && w->o->timeout_ns)
            w->grace_end = now + w->o->timeout_ns; /* -D: let in-flight work finish */
        finish_open_ended(w);
    }
    if (w->grace_end || w->exhausted)
        drop_readahead(w);
    if (w->grace_end && now >= w->grace_end && w->outstanding)
        cut_off(w);
    if (w->o->timeout_ns)
        check_timeouts(w, now);
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
    for (session *s = w->sessions; s; s = s->next)
        sess_close(s, YB_ERR_NONE);
    uv_timer_stop(&w->tick);
    uv_close((uv_handle_t *)&w->tick, close_cb_noop);
    if (w->open_loop) {
        uv_poll_stop(&w->tpoll);
        uv_close((uv_handle_t *)&w->tpoll, close_cb_noop);
    }
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    /* The kernel may defer a thread's timer wake-ups by its "timer slack"
     * (50 us by default) to batch them; due times want the real instant. */
    if (w->open_loop)
        prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    uv_update_time(&w->loop);
    uv_timer_start(&w->tick, on_tick, w->tick_ns / 1000000 ? w->tick_ns / 1000000 : 1,
                   w->tick_ns / 1000000 ? w->tick_ns / 1000000 : 1);
    if (w->open_loop) {
        w->next_due = due_of(w, 0);
        uv_poll_start(&w->tpoll, UV_READABLE, on_due);
        issue_due(w);
    } else {
        pump(w);
    }
    uv_run(&w->loop, UV_RUN_DEFAULT);
    atomic_store(&w->live.running, 0);
    return NULL;
}

/* ---- engine -------------------------------------------------------------- */

static void worker_cleanup(worker *w)
{
    if (w->loop.data) {
        uv_run(&w->loop, UV_RUN_NOWAIT);
        uv_loop_close(&w->loop);
    }
    if (w->tfd >= 0)
        close(w->tfd);
    yb_source_free(w->src);
    yb_tls_ctx_free(w->tls);
    yb_hdr_free(w->live_h);
    while (w->free_x) {
        yb_exchange *x = w->free_x;
        w->free_x = x->next;
        free(x);
    }
    yb_recorder_cleanup(&w->rec);
}

static unsigned share(unsigned total, unsigned n, unsigned i)
{
    return total / n + (i < total % n ? 1 : 0);
}

/* Prepares worker i (opens its corpus share, TLS context, loop).  Returns
 * 0 or -1 with err. */
static int worker_init(worker *w, const yb_engine_opts *o, unsigned i, uint64_t start, char *err,
                       size_t errlen)
{
    w->id = i;
    w->o = o;
    w->tfd = -1;
    w->ops = o->ops;
    w->host.write = host_write;
    w->host.done = host_done;
    w->host.close = host_close;
    w->host.ready = host_ready;
    w->host.notify = host_notify;
    if (yb_recorder_init(&w->rec) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    w->rec.run_start = start;
    if (o->progress && !(w->live_h = yb_hdr_new_default())) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    w->src = yb_source_new(o->corpus_path, i, o->threads, o->policy == YB_SESS_ORIGINAL, w->ops,
                           &o->codec, o->cache_bytes, err,
                           errlen);
    if (!w->src)
        return -1;
    if (o->sched.kind != YB_SCHED_NONE) {
        /* open loop: decode the corpus before the clock starts */
        uint64_t skipped = 0;
        if (yb_source_warm(w->src, &skipped, err, errlen) < 0)
            return -1;
        w->rec.completed += skipped;
        w->rec.errors[YB_ERR_PROTOCOL] += skipped;
    }
    if (o->target.tls) {
        yb_tls_client_opts t = o->tls;
        t.session_cache = o->tls_resume;
        if (!t.alpn)
            t.alpn = w->ops == &yb_h1_client_ops ? "http/1.1" : "h2";
        w->tls = yb_tls_client_ctx_new(&t, err, errlen);
        if (!w->tls)
            return -1;
    }
    w->slots = share(o->concurrency, o->threads, i);
    switch (o->policy) {
    case YB_SESS_REUSE: w->sess_limit = w->slots; break;
    case YB_SESS_POOL:
        w->sess_limit = share(o->pool_size, o->threads, i);
        if (!w->sess_limit)
            w->sess_limit = 1;
        break;
    case YB_SESS_ORIGINAL: w->sess_limit = UINT32_MAX; break;
    default: w->sess_limit = 0; break;
    }
    w->open_loop = o->sched.kind != YB_SCHED_NONE || o->timing_original;
    uint64_t sched_len = w->open_loop ? yb_sched_length(&o->sched) : 0;
    if (o->requests) {
        w->budget = o->requests / o->threads + (i < o->requests % o->threads ? 1 : 0);
        w->cycle = 1;
    } else {
        w->budget = UINT64_MAX;
        w->cycle = o->duration_ns > 0 || sched_len > 0;
    }
    if (o->duration_ns)
        w->deadline = start + o->duration_ns;
    else if (sched_len && !o->requests)
        w->deadline = start + sched_len; /* a ramp or steps end by themselves */
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

/* Calls o->progress about once a second until every worker has ended. */
static void progress_loop(const yb_engine_opts *o, worker *ws, unsigned n, uint64_t start)
{
    uint64_t next = start + 1000000000ull;
    for (;;) {
        unsigned running = 0;
        for (unsigned i = 0; i < n; i++)
            running += (unsigned)atomic_load_explicit(&ws[i].live.running, memory_order_relaxed);
        if (!running)
            return;
        uint64_t now = uv_hrtime();
        if (now >= next) {
            yb_progress p;
            memset(&p, 0, sizeof p);
            p.elapsed_s = (double)(now - start) / 1e9;
            p.target_rate = o->sched.kind ? yb_sched_rate_at(&o->sched, now - start) : 0;
            double p50w = 0;
            for (unsigned i = 0; i < n; i++) {
                live_stats *l = &ws[i].live;
                uint64_t cnt = atomic_load_explicit(&l->sec_count, memory_order_relaxed);
                p.completed += atomic_load_explicit(&l->completed, memory_order_relaxed);
                p.errors += atomic_load_explicit(&l->errors, memory_order_relaxed);
                p.backlog += atomic_load_explicit(&l->backlog, memory_order_relaxed);
                p.last_completed += cnt;
                double p50 = (double)atomic_load_explicit(&l->p50_us, memory_order_relaxed) / 1e3;
                double p99 = (double)atomic_load_explicit(&l->p99_us, memory_order_relaxed) / 1e3;
                p50w += p50 * (double)cnt;
                if (p99 > p.p99_ms)
                    p.p99_ms = p99;
            }
            p.p50_ms = p.last_completed ? p50w / (double)p.last_completed : 0;
            o->progress(&p, o->progress_ud);
            next += 1000000000ull;
            if (next < now)
                next = now + 1000000000ull;
        }
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

int yb_engine_run(const yb_engine_opts *o, yb_recorder *out, char *err, size_t errlen)
{
    worker *ws = calloc(o->threads, sizeof *ws);
    if (!ws) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    unsigned started = 0;
    uint64_t start = uv_hrtime();
    for (unsigned i = 0; i < o->threads && !rc; i++)
        rc = worker_init(&ws[i], o, i, start, err, errlen);
    start = uv_hrtime();
    for (unsigned i = 0; i < o->threads && !rc; i++) {
        ws[i].rec.run_start = start;
        ws[i].start = start;
        if (ws[i].deadline)
            ws[i].deadline = start + (o->duration_ns ? o->duration_ns : yb_sched_length(&o->sched));
    }
    for (unsigned i = 0; i < o->threads && !rc; i++) {
        atomic_store(&ws[i].live.running, 1);
        if (pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]) != 0) {
            snprintf(err, errlen, "cannot start worker thread %u", i);
            rc = -1;
        } else {
            started++;
        }
    }
    if (o->progress && !rc)
        progress_loop(o, ws, started, start);
    for (unsigned i = 0; i < started; i++)
        pthread_join(ws[i].thread, NULL);
    out->run_start = start;
    for (unsigned i = 0; i < started; i++) {
        if (ws[i].failed && !rc) {
            /* corpus reader errors already start with the file's name */
            size_t pl = strlen(o->corpus_path);
            if (!strncmp(ws[i].err, o->corpus_path, pl) && ws[i].err[pl] == ':')
                snprintf(err, errlen, "%s", ws[i].err);
            else
                snprintf(err, errlen, "%s: %s", o->corpus_path, ws[i].err);
            rc = -1;
        }
        if ((yb_recorder_finish(&ws[i].rec) < 0 || yb_recorder_merge(out, &ws[i].rec) < 0) &&
            !rc) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
    }
    for (unsigned i = 0; i < o->threads; i++)
        worker_cleanup(&ws[i]);
    free(ws);
    return rc;
}
