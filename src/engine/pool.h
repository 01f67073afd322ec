/* The session pool of one target, inside one worker: decides on which
 * session an exchange runs (reuse, per-request, original), opens
 * and closes sessions (transport + codec), keeps the TLS resumption cache
 * (the target's client TLS context) and the queue of exchanges waiting for
 * a session.  It never decides when a request is due, and never touches
 * the recorder or the corpus: finished exchanges go back to its host.
 *
 * The pool talks to the worker loop only through yb_pool_host, as a codec
 * talks to its session through yb_codec_host: the worker includes this
 * header, never the other way round.  Single-threaded: every call and
 * callback happens on the loop given in yb_pool_cfg. */
#ifndef YB_POOL_H
#define YB_POOL_H

#include <stdint.h>
#include <uv.h>
#include "codec/codec.h"
#include "engine/target.h"
#include "transport/transport.h"

typedef enum {
    YB_SESS_REUSE = 0,   /* -c persistent sessions, -m requests in flight on each */
    YB_SESS_PER_REQUEST, /* a new session (TCP + TLS [+ HTTP/2]) per request */
    YB_SESS_ORIGINAL,    /* one session per recorded connection, in recorded order */
} yb_sess_policy;

typedef struct yb_pool yb_pool;

/* What the pool asks of the worker loop that owns it.  Each callback gets
 * the `ud` given to yb_pool_new. */
typedef struct {
    /* x finished (x->res complete, res.done set, res.err its outcome): the
     * host records it and takes it back.  x is on none of the pool's lists. */
    void (*done)(void *ud, yb_exchange *x);
    /* x was never completed and will not be: withdrawn before it was
     * written to a session (yb_pool_withdraw; res.send_start == 0), or cut
     * off in flight when the run's grace period ended.  The host counts it
     * (unsent or cut off) and takes it back. */
    void (*drop)(void *ud, yb_exchange *x);
    /* x was not processed by the server (refused stream, above GOAWAY's
     * last id) and waits for a session again, keeping its due time: the
     * host counts a retry.  x stays the pool's. */
    void (*retried)(void *ud, yb_exchange *x);
    /* A Subscribe notification (see yb_codec_host.notify). */
    void (*notify)(void *ud, uint64_t now, int64_t lateness_ns, uint64_t n_updates);
    /* A session yb_pool_preopen opened finished its set-up, or failed
     * before (res: its conn_start, connected, tls_done, tls_resumed,
     * h2_ready, session, and err: YB_ERR_NONE or why it failed; the rest
     * 0): the host counts the set-up, which no request paid.  NULL: not
     * counted. */
    void (*opened)(void *ud, const yb_result *res);
    /* Sessions changed (one became ready, read bytes, or closed) at now
     * (uv_hrtime, read once for the event and its callbacks): the host
     * moves waiting work on (yb_pool_drain), issues more and flushes. */
    void (*kick)(void *ud, uint64_t now);
} yb_pool_host;

typedef struct {
    uv_loop_t *loop;            /* the worker's loop (outlives the pool) */
    yb_uring *ring;             /* its io_uring for plain sessions, or NULL
                                 * (yb_transport_connect) */
    const yb_target *target;    /* where sessions connect (outlives the pool) */
    const yb_codec_ops *ops;    /* codec of every session */
    const yb_codec_cfg *codec;  /* its settings (outlives the pool) */
    const yb_tls_client_opts *tls; /* client TLS settings (used when target->tls) */
    yb_tls_ctx *tls_ctx;        /* a context to use instead of making one from
                                 * tls (another pool's, yb_pool_tls; it must
                                 * outlive the pool), or NULL */
    int tls_resume;             /* per-request sessions resume TLS (session cache) */
    uint64_t timeout_ns;        /* connect timeout; 0 = none */
    yb_sess_policy policy;
    unsigned sess_limit;        /* persistent sessions open at once */
    unsigned oneshot_limit;     /* per-request sessions open at once */
    uint64_t max_wait;          /* exchanges allowed to wait for a session;
                                 * one more fails as YB_ERR_OVERFLOW */
    uint64_t max_wait_bytes;    /* ... and the memory they may hold: a request
                                 * not in the source's cache holds its prepared
                                 * bytes; one that would pass it fails as
                                 * YB_ERR_OVERFLOW too (the first to wait never) */
    yb_mem_budget *budget;      /* the worker's budget for response bytes its
                                 * codecs keep (NULL = unbounded; outlives the pool) */
} yb_pool_cfg;

/* Creates the pool (and, for a TLS target, its TLS context).  cfg is
 * copied; what it points to must outlive the pool.  Returns NULL with a
 * message in err. */
yb_pool *yb_pool_new(const yb_pool_cfg *cfg, const yb_pool_host *host, void *ud, char *err,
                     size_t errlen);
/* Frees the pool once every session has closed (the loop has run out). */
void yb_pool_free(yb_pool *p);
/* The pool's TLS context (NULL for a plain target), for another pool of
 * the same thread with the same TLS settings to share (yb_pool_cfg.tls_ctx). */
yb_tls_ctx *yb_pool_tls(const yb_pool *p);

/* --sessions reuse: opens sessions up to the limit for no exchange (an
 * open loop opens them before its clock starts, so that its first due
 * times do not pay the set-up and wait behind it).  Each one's set-up,
 * once over (HTTP/2: the server's SETTINGS came), goes to host->opened;
 * one that fails counts as a failed set-up (the reconnect back-off, see
 * below) and is not reopened here.  Returns how many it opened (0 for
 * the other policies). */
unsigned yb_pool_preopen(yb_pool *p);
/* Sessions yb_pool_preopen opened whose set-up is neither over nor
 * failed yet. */
unsigned yb_pool_preopening(const yb_pool *p);

/* Runs x on a session with room (x->pin_session's first, a chain's
 * step: the session the step before it ran on), opens one (x pays its
 * set-up phases) or queues x until one frees.  x then belongs to the pool until it comes
 * back through host->done or host->drop (possibly before this returns,
 * e.g. on a connect failure or a full wait queue).  now is a clock reading
 * (uv_hrtime) taken just before the call: x's start when a session takes
 * it at once. */
void yb_pool_submit(yb_pool *p, yb_exchange *x, uint64_t now);
/* Moves waiting exchanges onto sessions with room, opening sessions up to
 * the limits. */
void yb_pool_drain(yb_pool *p);
/* Writes out what was submitted since the last flush, one batch per
 * session (HTTP/2: requests submitted together leave in one write). */
void yb_pool_flush(yb_pool *p);
/* Exchanges waiting for a session now (the open-loop backlog). */
uint64_t yb_pool_waiting(const yb_pool *p);

/* Reconnect back-off.  A session that ends before the server answered on
 * it (connect refused or timed out, TLS or HTTP/2 set-up failed, closed
 * by the peer or timed out before a TLS handshake or a first byte from
 * the server) makes the pool wait before it opens another: MIN after the
 * first failure, doubling with each failure in a row, at most MAX; after
 * a failure only one session at a time (a probe) until the server
 * answers on one, which ends the back-off.  Exchanges that need a session meanwhile wait for one
 * (closed loop: they hold their slots, so a dead target is not a busy
 * loop of connects; open loop: up to max_wait, then overflow), and fail
 * only by --timeout.  The worker's tick drains the queue once the back-off
 * has passed. */
#define YB_POOL_BACKOFF_MIN_NS 10000000ull    /* 10 ms */
#define YB_POOL_BACKOFF_MAX_NS 1000000000ull  /* 1 s */

/* Back-offs so far: failed session set-ups after which the pool waited. */
uint64_t yb_pool_backoffs(const yb_pool *p);

/* Fails exchanges older than timeout_ns: in flight (from their send),
 * waiting (from their due time), and sessions whose set-up never ends.
 * keep_streams = 1 spares open-ended exchanges (STREAM subscriptions) the
 * server has answered: they last until the run ends.  Returns the
 * earliest time what is left could time out (0 = nothing could): nothing
 * submitted later can time out before it, so the caller need not call
 * again until then, or until it submits to an empty pool. */
uint64_t yb_pool_timeouts(yb_pool *p, uint64_t now, uint64_t timeout_ns, int keep_streams);
/* The run is stopping: ends the open-ended exchanges (the codec's
 * finish); they complete as ok once the next flush writes their resets. */
void yb_pool_finish_streams(yb_pool *p);
/* The run stops issuing: hands every exchange not yet written to a
 * session (waiting for one, or queued behind a recorded connection's
 * earlier requests) back through host->drop, so nothing goes out late
 * after the stop.  Exchanges in flight, and the openers paying their
 * sessions' set-up, stay. */
void yb_pool_withdraw(yb_pool *p);
/* Hands every exchange the pool holds back through host->drop and closes
 * every session. */
void yb_pool_cut_off(yb_pool *p);
/* Closes every session (the run is over); exchanges still in flight fail
 * through host->done as the sessions close. */
void yb_pool_close_all(yb_pool *p);

#endif
