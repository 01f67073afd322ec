/* transport/uring.c -- one thread's io_uring beside its libuv loop (see
 * uring.h). */
#include "config.h"
#include "transport/uring.h"

#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Submission slots: when they run out the queued ones are handed to the
 * kernel at once, so this bounds a batch, not the operations in flight.
 * The completion queue is larger, and the kernel keeps what overflows it
 * (IORING_FEAT_NODROP, which yb_uring_new requires). */
#define SQ_ENTRIES 256u
#define CQ_ENTRIES 4096u
/* user_data of the ring's own operations; an op's is its address */
#define UD_IGNORE 0u   /* a cancel's own completion */
#define UD_LOOP 1u     /* the poll of the loop's epoll descriptor */
#define UD_ALARM 2u    /* the timeout of yb_uring_alarm */

struct yb_uring {
    struct io_uring ring;
    uv_loop_t *loop;
    unsigned inflight;  /* ops queued or in flight */
    int loop_armed;     /* the poll of the loop's descriptor is in */
    int loop_fired;     /* it fired, or was not in, since yb_uring_loop_events */
    int started;
    int used;           /* some session's operation was queued */
    yb_uring_op *subs;  /* ops queued since the last submission */
    int alarm_pending;  /* the alarm's timeout is queued or in the kernel */
    int alarm_fired;    /* it fired since yb_uring_alarm_fired last said so */
    uint64_t alarm_at;  /* its time (ns, CLOCK_MONOTONIC) */
    struct __kernel_timespec alarm_ts; /* read by the kernel at submission */
    void (*due_fn)(void *);  /* yb_uring_on_due */
    void *due_ud;
};

int yb_io_mode_parse(const char *s)
{
    static const char *const names[] = {
        [YB_IO_AUTO] = "auto", [YB_IO_URING] = "uring", [YB_IO_EPOLL] = "epoll",
    };
    for (int m = 0; s && m < (int)(sizeof names / sizeof names[0]); m++)
        if (!strcmp(s, names[m]))
            return m;
    return -1;
}

yb_uring *yb_uring_new(uv_loop_t *loop, char *err, size_t errlen)
{
    yb_uring *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    /* completions are delivered only when the thread asks for them (no
     * interrupt of a running thread); the thread is named at start */
    p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
              IORING_SETUP_R_DISABLED;
    p.cq_entries = CQ_ENTRIES;
    int rc = io_uring_queue_init_params(SQ_ENTRIES, &r->ring, &p);
    if (rc < 0) {
        snprintf(err, errlen, "io_uring: %s", strerror(-rc));
        free(r);
        return NULL;
    }
    if (!(p.features & IORING_FEAT_NODROP) || !(p.features & IORING_FEAT_EXT_ARG) ||
        !(p.features & IORING_FEAT_CQE_SKIP)) {
        snprintf(err, errlen, "io_uring: this kernel's is too old");
        io_uring_queue_exit(&r->ring);
        free(r);
        return NULL;
    }
    r->loop = loop;
    r->loop_fired = 1;
    return r;
}

int yb_uring_start(yb_uring *r)
{
    /* Debian 12's liburing declares io_uring_enable_rings but does not
     * export it: the register call it stands for */
    if (syscall(__NR_io_uring_register, r->ring.ring_fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0) < 0)
        return -1;
    r->started = 1;
    return 0;
}

int yb_uring_ready(const yb_uring *r)
{
    return r && r->started;
}

int yb_uring_used(const yb_uring *r)
{
    return r && r->used;
}

/* Stamps the ops about to be submitted with the time (see yb_uring_op). */
static void stamp(yb_uring *r)
{
    if (!r->subs)
        return;
    uint64_t now = uv_hrtime();
    for (yb_uring_op *op = r->subs, *next; op; op = next) {
        next = op->next_sub;
        op->at = now;
        op->next_sub = NULL;
    }
    r->subs = NULL;
}

/* Hands every queued operation to the kernel.  Returns as
 * io_uring_submit. */
static int submit_now(yb_uring *r)
{
    stamp(r);
    return io_uring_submit(&r->ring);
}

/* Makes room for n submissions (io_uring_get_sqe then gives them, in
 * order), handing the queued ones to the kernel first if there is less.
 * Returns 0, or -1 when there is none (the ring is not started, or the
 * kernel takes nothing). */
static int room(yb_uring *r, unsigned n)
{
    if (!r->started)
        return -1;
    if (io_uring_sq_space_left(&r->ring) < n)
        (void)submit_now(r);
    if (io_uring_sq_space_left(&r->ring) < n)
        return -1;
    return 0;
}

static struct io_uring_sqe *get_sqe(yb_uring *r)
{
    return room(r, 1) < 0 ? NULL : io_uring_get_sqe(&r->ring);
}

/* op goes in with the next submission (stamp). */
static void queued(yb_uring *r, yb_uring_op *op, int quiet)
{
    op->at = 0;
    op->quiet = quiet;
    op->next_sub = r->subs;
    r->subs = op;
    r->used = 1;
    if (!quiet)
        r->inflight++;
}

int yb_uring_recv(yb_uring *r, yb_uring_op *op, int fd, void *buf, size_t len)
{
    struct io_uring_sqe *s = get_sqe(r);
    if (!s)
        return -1;
    io_uring_prep_recv(s, fd, buf, len, 0);
    io_uring_sqe_set_data(s, op);
    queued(r, op, 0);
    return 0;
}

int yb_uring_send(yb_uring *r, yb_uring_op *op, int fd, const void *buf, size_t len)
{
    struct io_uring_sqe *s = get_sqe(r);
    if (!s)
        return -1;
    io_uring_prep_send(s, fd, buf, len, MSG_NOSIGNAL);
    io_uring_sqe_set_data(s, op);
    queued(r, op, 0);
    return 0;
}

int yb_uring_send_recv(yb_uring *r, int fd, yb_uring_op *sop, const void *sbuf, size_t slen,
                       yb_uring_op *rop, void *rbuf, size_t rlen)
{
    /* two slots in a row: a link joins an SQE to the next one */
    if (room(r, 2) < 0)
        return -1;
    struct io_uring_sqe *s = io_uring_get_sqe(&r->ring), *rs = io_uring_get_sqe(&r->ring);
    /* MSG_WAITALL: a short send is a failure, so "no completion" means
     * all of it went; the receive starts only after it.  A failed send
     * with CQE_SKIP_SUCCESS takes its linked receive's completion away
     * (the kernel skips it), so the pair makes one completion either way */
    io_uring_prep_send(s, fd, sbuf, slen, MSG_NOSIGNAL | MSG_WAITALL);
    io_uring_sqe_set_data(s, sop);
    s->flags |= IOSQE_IO_LINK | IOSQE_CQE_SKIP_SUCCESS;
    io_uring_prep_recv(rs, fd, rbuf, rlen, 0);
    io_uring_sqe_set_data(rs, rop);
    queued(r, sop, 1);
    queued(r, rop, 0);
    return 0;
}

int yb_uring_cancel_fd(yb_uring *r, int fd)
{
    struct io_uring_sqe *s = get_sqe(r);
    if (!s)
        return -1;
    /* by descriptor: a send-and-receive pair then ends with one
     * completion whichever of the two is under way */
    io_uring_prep_cancel_fd(s, fd, IORING_ASYNC_CANCEL_ALL);
    io_uring_sqe_set_data64(s, UD_IGNORE);
    /* at once: the ops may still be waiting for submission, and the
     * caller is about to close fd, whose number a new socket may then
     * take */
    (void)submit_now(r);
    return 0;
}

unsigned yb_uring_inflight(const yb_uring *r)
{
    return r->inflight;
}

unsigned yb_uring_reap(yb_uring *r)
{
    struct io_uring_cqe *cqe;
    unsigned n = 0;
    /* one at a time: a done may queue more, and must see the queue
     * already past its own completion */
    while (io_uring_peek_cqe(&r->ring, &cqe) == 0) {
        uint64_t ud = cqe->user_data;
        int res = cqe->res;
        io_uring_cqe_seen(&r->ring, cqe);
        n++;
        if (ud == UD_LOOP) {
            r->loop_armed = 0;
            r->loop_fired = 1;
        } else if (ud == UD_ALARM) {
            r->alarm_pending = 0; /* fired (-ETIME), or cancelled at the end */
            r->alarm_fired = 1;
        } else if (ud != UD_IGNORE) {
            yb_uring_op *op = (yb_uring_op *)(uintptr_t)ud;
            /* a quiet op was not counted, but its pair was, and the
             * receive of a pair whose send failed never completes */
            r->inflight--;
            op->done(op, res);
            /* its time may have come while the ones before were handled */
            if (r->due_fn && r->alarm_pending && uv_hrtime() >= r->alarm_at)
                r->due_fn(r->due_ud);
        }
    }
    return n;
}

void yb_uring_on_due(yb_uring *r, void (*fn)(void *ud), void *ud)
{
    r->due_fn = fn;
    r->due_ud = ud;
}

int yb_uring_alarm(yb_uring *r, uint64_t at)
{
    if (!at || (r->alarm_pending && r->alarm_at == at))
        return 0;
    struct io_uring_sqe *s = get_sqe(r);
    if (!s)
        return -1;
    r->alarm_at = at;
    r->alarm_ts.tv_sec = (long long)(at / 1000000000u);
    r->alarm_ts.tv_nsec = (long long)(at % 1000000000u);
    if (r->alarm_pending) {
        /* moved; if it has fired meanwhile, the update fails (ENOENT)
         * and its completion, already on its way, reports it */
        io_uring_prep_timeout_update(s, &r->alarm_ts, UD_ALARM, IORING_TIMEOUT_ABS);
        io_uring_sqe_set_data64(s, UD_IGNORE);
    } else {
        io_uring_prep_timeout(s, &r->alarm_ts, 0, IORING_TIMEOUT_ABS);
        io_uring_sqe_set_data64(s, UD_ALARM);
        r->alarm_pending = 1;
    }
    return 0;
}

int yb_uring_alarm_fired(yb_uring *r)
{
    int f = r->alarm_fired;
    r->alarm_fired = 0;
    return f;
}

/* Puts the poll of the loop's epoll descriptor in, if it is not. */
static void arm_loop(yb_uring *r)
{
    if (r->loop_armed)
        return;
    struct io_uring_sqe *s = get_sqe(r);
    if (s) {
        io_uring_prep_poll_add(s, uv_backend_fd(r->loop), POLLIN);
        io_uring_sqe_set_data64(s, UD_LOOP);
        r->loop_armed = 1;
    }
}

int yb_uring_loop_events(yb_uring *r)
{
    int f = r->loop_fired || !r->started;
    r->loop_fired = !r->loop_armed; /* not watched: it may have some */
    return f;
}

void yb_uring_wait(yb_uring *r, int timeout_ms)
{
    if (!r->started) {
        uv_run(r->loop, UV_RUN_ONCE);
        return;
    }
    arm_loop(r);
    struct io_uring_cqe *cqe;
    struct __kernel_timespec ts = {.tv_sec = timeout_ms / 1000,
                                   .tv_nsec = (long long)(timeout_ms % 1000) * 1000000};
    stamp(r);
    (void)io_uring_submit_and_wait_timeout(&r->ring, &cqe, 1, timeout_ms >= 0 ? &ts : NULL,
                                           NULL);
    (void)yb_uring_reap(r);
}

void yb_uring_pass(yb_uring *r)
{
    uv_update_time(r->loop);
    if (yb_uring_loop_events(r) || uv_backend_timeout(r->loop) == 0)
        (void)uv_run(r->loop, UV_RUN_NOWAIT);
    yb_uring_reap(r);
}

int yb_uring_alive(const yb_uring *r)
{
    return uv_loop_alive(r->loop) || r->inflight;
}

void yb_uring_run(yb_uring *r)
{
    if (!r->started) {
        uv_run(r->loop, UV_RUN_DEFAULT);
        return;
    }
    for (;;) {
        yb_uring_pass(r);
        if (!yb_uring_alive(r))
            return;
        uv_update_time(r->loop);
        yb_uring_wait(r, uv_backend_timeout(r->loop));
    }
}

void yb_uring_free(yb_uring *r)
{
    if (!r)
        return;
    r->due_fn = NULL; /* what it would call is being torn down */
    if (r->inflight) {
        struct io_uring_sqe *s = get_sqe(r);
        if (s) {
            io_uring_prep_cancel(s, NULL, IORING_ASYNC_CANCEL_ANY);
            io_uring_sqe_set_data64(s, UD_IGNORE);
        }
        /* cancelled operations end at once; a second is plenty */
        for (int i = 0; i < 100 && r->inflight; i++) {
            struct io_uring_cqe *cqe;
            struct __kernel_timespec ts = {.tv_sec = 0, .tv_nsec = 10000000};
            stamp(r);
            (void)io_uring_submit_and_wait_timeout(&r->ring, &cqe, 1, &ts, NULL);
            (void)yb_uring_reap(r);
        }
    }
    io_uring_queue_exit(&r->ring);
    free(r);
}
