/* transport/uring.h -- one thread's io_uring: socket receives and sends
 * that wait for the thread's next sleep, so that one system call hands the
 * kernel every request the last wake-up produced and brings back every
 * answer that came in meanwhile.
 *
 * On the bench VM a system call costs more than the user-space work of a
 * small HTTP/1.1 exchange; a client that writes each request and reads
 * each answer with its own call pays two a request, one that queues both
 * on a ring pays about one (bench/floor.sh, with and without -y '--io
 * epoll': a RESTCONF GET 0.61-0.70 of wrk's CPU against 0.73-0.86).
 *
 * The ring lives beside a libuv loop and never replaces it: connects, TLS,
 * timers and the server side stay on libuv.  The thread that runs the loop
 * sleeps in yb_uring_wait instead of uv_run(UV_RUN_ONCE): the ring then
 * also watches the loop's own epoll descriptor and wakes for a libuv event
 * or timer as for a completion.  One thread uses a ring: the one that
 * called yb_uring_start. */
#ifndef YB_URING_H
#define YB_URING_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

typedef struct yb_uring yb_uring;

/* An operation the ring carries.  done is called from yb_uring_reap or
 * yb_uring_wait with the kernel's result: bytes moved, 0 at end of stream,
 * or a negative errno (-ECANCELED after yb_uring_cancel).  The op's memory
 * and its buffer must stay until then.  at: when the kernel was handed
 * the op (uv_hrtime just before the call that submitted it; 0 before). */
typedef struct yb_uring_op {
    void (*done)(struct yb_uring_op *op, int res);
    uint64_t at;
    struct yb_uring_op *next_sub;   /* the ring's: queued, not yet submitted */
    int quiet;                      /* the ring's: no completion if it succeeds */
} yb_uring_op;

/* Creates a ring for loop (which must outlive it), disabled until
 * yb_uring_start.  Returns NULL, with why in err, when the kernel refuses
 * (no io_uring, or forbidden: a container's seccomp, the sysctl
 * kernel.io_uring_disabled): the caller then uses libuv alone. */
yb_uring *yb_uring_new(uv_loop_t *loop, char *err, size_t errlen);

/* How a thread's plain TCP connections reach the kernel (run --io, serve
 * --io): io_uring where the kernel allows it, else epoll (auto); io_uring
 * or an error (uring); libuv's epoll alone (epoll). */
enum { YB_IO_AUTO, YB_IO_URING, YB_IO_EPOLL };

/* The mode a --io value names ("auto", "uring" or "epoll"): one of YB_IO_*,
 * or -1 for anything else (NULL too). */
int yb_io_mode_parse(const char *s);

/* Makes the calling thread the ring's only user.  Returns 0 or -1 (the
 * ring then takes no operations). */
int yb_uring_start(yb_uring *r);

/* 1 when the ring takes operations (started), else 0. */
int yb_uring_ready(const yb_uring *r);

/* 1 when some receive or send went through the ring (a session's I/O; the
 * ring's own poll of the loop does not count), else 0 (NULL too). */
int yb_uring_used(const yb_uring *r);

/* Cancels what is still in flight, waits for it (every done is called)
 * and frees the ring.  NULL is a no-op. */
void yb_uring_free(yb_uring *r);

/* Queue a receive into buf / a send of buf on fd; the kernel sees them at
 * the next yb_uring_wait.  Return 0, or -1 when the ring
 * cannot take them (the caller then uses libuv). */
int yb_uring_recv(yb_uring *r, yb_uring_op *op, int fd, void *buf, size_t len);
int yb_uring_send(yb_uring *r, yb_uring_op *op, int fd, const void *buf, size_t len);

/* Queues a send of all of sbuf and, after it, a receive into rbuf, on fd
 * (a request and its answer): one operation with one done.  If the send
 * fails or sends less, sop's done gets its result (the errno, or the
 * bytes it sent) and the receive never runs; else rop's done gets the
 * receive's, and the send ended before it.  Returns 0, or -1 when the
 * ring cannot take them. */
int yb_uring_send_recv(yb_uring *r, int fd, yb_uring_op *sop, const void *sbuf, size_t slen,
                       yb_uring_op *rop, void *rbuf, size_t rlen);

/* Asks the kernel to end every operation on fd early (each done then gets
 * -ECANCELED, or its result if it had finished), at once: call it before
 * closing fd.  Returns 0, or -1 when the ring cannot take it. */
int yb_uring_cancel_fd(yb_uring *r, int fd);

/* Operations queued or in flight (each still owes its done). */
unsigned yb_uring_inflight(const yb_uring *r);

/* 1 when the loop's epoll descriptor may have events: the ring saw it
 * readable, or was not watching it, since the last call.  The caller
 * then runs the loop (UV_RUN_NOWAIT); otherwise that would find
 * nothing but due timers. */
int yb_uring_loop_events(yb_uring *r);

/* Asks for a wake-up at `at` (ns on CLOCK_MONOTONIC, uv_hrtime's clock):
 * a timeout in the ring, which ends its sleep then; yb_uring_alarm_fired
 * then says so.  One alarm at a time: another time moves the pending one
 * (the request goes in with the next submission: no system call of its
 * own, where a timerfd costs one to arm and an epoll_wait and a read to
 * see).  0, or the time already pending, is a no-op.  Returns 0, or -1
 * when the ring cannot take it (not started, no room): the caller keeps
 * a timer of its own. */
int yb_uring_alarm(yb_uring *r, uint64_t at);

/* 1 once after the alarm fired (it is no longer pending), else 0. */
int yb_uring_alarm_fired(yb_uring *r);

/* Has yb_uring_reap call fn(ud) between two completions once the pending
 * alarm's time has passed, instead of only after the last: a thread
 * behind a burst of completions (answers that queued up while its peer
 * or the machine stalled) does what falls due then, before it reaps the
 * rest.  fn may queue operations and move the alarm; the alarm's own
 * completion still follows.  fn NULL: none (the default). */
void yb_uring_on_due(yb_uring *r, void (*fn)(void *ud), void *ud);

/* Handles the completions already in the queue (no system call: with
 * DEFER_TASKRUN they arrive there only during yb_uring_wait).  Returns how
 * many it handled. */
unsigned yb_uring_reap(yb_uring *r);

/* One pass of a loop that sleeps in the ring: runs the libuv loop if it
 * may have work (yb_uring_loop_events, or a timer or callback due), then
 * handles the completions already in the queue. */
void yb_uring_pass(yb_uring *r);

/* 1 while the loop is alive or some operation is in flight, else 0. */
int yb_uring_alive(const yb_uring *r);

/* Runs the loop and the ring until neither has work: passes, with a sleep
 * in yb_uring_wait until the loop's next timer between them (a ring not
 * started: uv_run, as without one). */
void yb_uring_run(yb_uring *r);

/* Hands queued operations to the kernel and handles the completions,
 * sleeping first until one arrives, the loop has an event (its epoll
 * descriptor is readable) or timeout_ms passes (0: no sleep; -1: no
 * limit).  The caller then runs the loop with UV_RUN_NOWAIT if
 * yb_uring_loop_events says so. */
void yb_uring_wait(yb_uring *r, int timeout_ms);
#endif
