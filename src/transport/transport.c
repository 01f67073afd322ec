/* Transport: uv_tcp_t plus, for TLS, an SSL object between two BIOs.
 *
 * Read side: a memory BIO fed with what uv reads; SSL_read decrypts from
 * it.  Write side: a tiny custom BIO that appends ciphertext straight to
 * the transport's pending buffer (a memory BIO would cost either a second
 * copy to drain it or, with BIO_reset, a memset of its whole capacity on
 * every flush).  The pending buffer is offered to uv_try_write first; only
 * what the kernel did not take is handed to uv_write, and while that write
 * is in flight new output accumulates and goes out as one batch.  A write
 * of one record's worth with nothing queued (an HTTP/1.1 request, a small
 * batch) skips the buffer: the BIO offers OpenSSL's record to the kernel
 * itself and keeps only what it did not take, so the ciphertext is not
 * copied once more (and the buffer, released once drained, is not grown
 * and freed for every request).
 *
 * Lifetime: the struct is freed only after uv has closed every handle
 * (close callbacks), so a callback that closes the transport leaves it
 * valid until control returns to uv; every path checks `closing` after
 * calling out. */
#include "config.h"
#include "transport/transport.h"
#include "transport/tls_priv.h"
#include "transport/uring.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

/* Bytes uv reads at once.  Shared per thread: libuv calls alloc_cb and
 * read_cb back to back for one stream, and the bytes are consumed (fed to
 * the BIO or handed to on_read) before read_cb returns. */
#define READ_BUF_SIZE 65536
/* Plaintext handed to on_read at once: every record one socket read
 * brought, decrypted first (up to this much), so that the application
 * answers them all with one write rather than one per record. */
#define PLAIN_BUF_SIZE 65536
/* Small multi-buffer writes are coalesced so that they become one record. */
#define COALESCE_MAX 16384
/* Write buffers larger than this are released once drained, so that
 * neither a burst nor one big request (a 14.5 KB gNMI Set: 16 KB of
 * buffer) pins memory on every idle connection afterwards: a thousand
 * sessions waiting for their answers would hold 16 MB.  Smaller ones stay
 * (the first allocation is this size: enough for HTTP/2's control frames
 * and a small request). */
#define KEEP_BUF_MAX 1024u
/* With a ring (yb_transport_connect's ring, plain TCP): each connection's
 * receive buffer (the ring fills it while the thread sleeps, so it cannot
 * be shared), and the largest write that is copied and queued on the
 * ring; a larger one goes to the kernel at once, from the caller's
 * buffers, as without a ring. */
#define RING_READ_BUF 32768
#define RING_SEND_MAX 4096
/* Cap on queued bytes per transport (and keeps lengths inside uv_buf_t). */
#define QUEUE_MAX ((size_t)1 << 30)
/* How long a graceful close waits for queued bytes to leave. */
#define LINGER_MS 1000

static _Thread_local char read_buf[READ_BUF_SIZE];
static _Thread_local uint8_t plain_buf[PLAIN_BUF_SIZE];
static _Thread_local uint8_t coalesce_buf[COALESCE_MAX];

typedef struct {
    uint8_t *p;
    size_t off, len, cap;   /* live bytes are p[off..len) */
} obuf;

enum timer_mode { TM_NONE, TM_CONNECT, TM_ACCEPT_READY, TM_RESUME, TM_LINGER };

struct yb_transport {
    uv_tcp_t tcp;
    uv_connect_t creq;
    uv_write_t wreq;
    uv_timer_t timer;
    uv_loop_t *loop;
    yb_transport_cbs cbs;
    void *ud;

    SSL *ssl;
    BIO *rbio;                  /* owned by ssl */

    obuf pend;                  /* waiting to be written */
    obuf infl;                  /* handed to uv_write */

    uint64_t t_start, t_connected, t_tls_done;
    uint64_t t_drained;         /* when the last queued bytes reached the kernel */
    enum timer_mode tmode;
    yb_err_class reason;
    int pending_closes;

    unsigned timer_inited : 1;
    unsigned connected : 1;     /* TCP established (fd usable) */
    unsigned hs_done : 1;
    unsigned ready_reported : 1;
    unsigned reading : 1;
    unsigned paused : 1;
    unsigned busy : 1;          /* a uv_write is in flight */
    unsigned had_queued : 1;    /* owe an on_drain */
    unsigned closing : 1;       /* no more callbacks but on_close */
    unsigned handles_closed : 1;
    unsigned silent : 1;        /* start failed: free without callbacks */
    unsigned resumed : 1;
    unsigned direct : 1;        /* the output BIO writes to the socket itself */
    unsigned ring_recv : 1;     /* the ring holds a receive into rbuf */
    unsigned ring_send : 1;     /* the ring holds a send of infl */
    unsigned ring_linked : 1;   /* the send has the receive linked behind it */
    unsigned delivering : 1;    /* on_read of what the ring received runs */
    unsigned send_deferred : 1; /* infl waits for the delivery to end */
    unsigned free_pending : 1;  /* handles closed; waits for the ring's ops */
    unsigned no_ring_writes : 1;/* yb_transport_ring_writes(t, 0) */

    /* plain TCP on a ring (NULL: libuv reads and writes) */
    yb_uring *ring;
    int fd;
    yb_uring_op rop, sop;       /* the receive, the send */
    unsigned ring_ops;          /* of them, queued or in flight */
    uint8_t *rbuf;              /* RING_READ_BUF bytes */
    size_t rheld;               /* received while paused, not yet delivered */

    char alpn[32];
    char errtext[YB_REASON_MAX]; /* a reason (util/errors.h) without the peer */
    uint64_t connect_timeout_ns;
    char peer[64];
};

/* ---- the output BIO ------------------------------------------------- */

static BIO_METHOD *out_method;
static pthread_once_t out_once = PTHREAD_ONCE_INIT;

static int obuf_append(obuf *b, const void *data, size_t n)
{
    if (n > QUEUE_MAX - b->len)
        return -1;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : KEEP_BUF_MAX;
        uint8_t *p;

        while (cap < b->len + n)
            cap *= 2;
        p = realloc(b->p, cap);
        if (!p)
            return -1;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
    return 0;
}

static void obuf_clear(obuf *b)
{
    b->off = b->len = 0;
    if (b->cap > KEEP_BUF_MAX) {
        free(b->p);
        b->p = NULL;
        b->cap = 0;
    }
}

static size_t obuf_live(const obuf *b)
{
    return b->len - b->off;
}

static int out_write(BIO *b, const char *data, size_t len, size_t *written)
{
    yb_transport *t = BIO_get_data(b);
    size_t took = 0;

    if (t->direct && !t->busy && obuf_live(&t->pend) == 0) {
        uv_buf_t ub = uv_buf_init((char *)data, (unsigned)len);
        int r = uv_try_write((uv_stream_t *)&t->tcp, &ub, 1);

        /* an error is met again, and reported, by the flush that sends
         * what is queued here */
        if (r > 0)
            took = (size_t)r;
    }
    if (took < len && obuf_append(&t->pend, data + took, len - took) < 0)
        return 0;
    *written = len;
    return 1;
}

static long out_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)b; (void)num; (void)ptr;
    /* SSL flushes after each flight; the transport flushes at its own
     * points, so a flush here only needs to succeed. */
    return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int out_create(BIO *b)
{
    BIO_set_init(b, 1);
    return 1;
}

static void out_method_init(void)
{
    BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK,
                                 "yangblast transport out");

    if (!m)
        return;
    if (!BIO_meth_set_write_ex(m, out_write) || !BIO_meth_set_ctrl(m, out_ctrl) ||
        !BIO_meth_set_create(m, out_create)) {
        BIO_meth_free(m);
        return;
    }
    out_method = m;     /* lives until exit, like OpenSSL's own methods */
}

/* Gives t an SSL on tls with the read memory BIO and the output BIO.
 * Returns 0 or -1 with t->errtext set. */
static int setup_ssl(yb_transport *t, yb_tls_ctx *tls, const char *sni)
{
    BIO *w;

    pthread_once(&out_once, out_method_init);
    if (!out_method) {
        snprintf(t->errtext, sizeof t->errtext, "cannot create TLS output BIO");
        return -1;
    }
    t->ssl = yb_tls_ssl_new(tls, sni, t->peer, t->errtext, sizeof t->errtext);
    if (!t->ssl)
        return -1;
    t->rbio = BIO_new(BIO_s_mem());
    w = BIO_new(out_method);
    if (!t->rbio || !w) {
        BIO_free(t->rbio);
        BIO_free(w);
        t->rbio = NULL;
        snprintf(t->errtext, sizeof t->errtext, "out of memory");
        return -1;
    }
    /* An empty read BIO means "wait for more", not EOF. */
    BIO_set_mem_eof_return(t->rbio, -1);
    BIO_set_data(w, t);
    SSL_set_bio(t->ssl, t->rbio, w);
    return 0;
}

/* ---- lifetime ------------------------------------------------------------ */

static void free_transport(yb_transport *t)
{
    SSL_free(t->ssl);
    free(t->rbuf);
    free(t->pend.p);
    free(t->infl.p);
    free(t);
}

static void on_handle_closed(uv_handle_t *h)
{
    yb_transport *t = h->data;

    if (--t->pending_closes > 0)
        return;
    if (t->ring_ops) {
        t->free_pending = 1;    /* the ring's last op frees it */
        return;
    }
    if (!t->silent && t->cbs.on_close)
        t->cbs.on_close(t, t->ud, t->reason);
    free_transport(t);
}

/* The end of a close that waited for the ring's operations. */
static void ring_op_ended(yb_transport *t)
{
    if (--t->ring_ops == 0 && t->free_pending) {
        if (!t->silent && t->cbs.on_close)
            t->cbs.on_close(t, t->ud, t->reason);
        free_transport(t);
    }
}

/* Asks the ring to end t's operations before its socket is closed (the
 * kernel has taken them by then: yb_uring_cancel_fd submits). */
static void ring_cancel(yb_transport *t)
{
    if (t->ring_ops)
        (void)yb_uring_cancel_fd(t->ring, t->fd);
}

/* Closes the uv handles; on_close and the free follow from uv.  Idempotent. */
static void close_handles(yb_transport *t)
{
    if (t->handles_closed)
        return;
    ring_cancel(t);
    t->handles_closed = 1;
    t->closing = 1;
    t->pending_closes = 1 + t->timer_inited;
    if (t->timer_inited)
        uv_close((uv_handle_t *)&t->timer, on_handle_closed);
    uv_close((uv_handle_t *)&t->tcp, on_handle_closed);
}

/* Ends the connection with error class cls: on_ready(cls) if the
 * application has not been told about readiness yet (unless it closed
 * first), then on_close(cls). */
static void fail(yb_transport *t, yb_err_class cls)
{
    int was_closing = t->closing;

    if (t->handles_closed)
        return;
    if (!was_closing) {
        t->closing = 1;
        t->reason = cls;
        if (!t->ready_reported) {
            t->ready_reported = 1;
            if (t->cbs.on_ready)
                t->cbs.on_ready(t, t->ud, cls);
        }
    }
    close_handles(t);
}

static void ensure_timer(yb_transport *t)
{
    if (!t->timer_inited) {
        uv_timer_init(t->loop, &t->timer);  /* cannot fail on unix */
        t->timer.data = t;
        t->timer_inited = 1;
    }
}

static void on_timer(uv_timer_t *tm);

static void start_timer(yb_transport *t, enum timer_mode mode, uint64_t ms)
{
    ensure_timer(t);
    t->tmode = mode;
    uv_timer_start(&t->timer, on_timer, ms, 0);
}

static void stop_timer(yb_transport *t, enum timer_mode mode)
{
    if (t->timer_inited && t->tmode == mode) {
        uv_timer_stop(&t->timer);
        t->tmode = TM_NONE;
    }
}

/* ---- writing ---------------------------------------------------------- */

static void on_write_done(uv_write_t *req, int status);

/* Hands the pending bytes to uv_write (they become the in-flight buffer).
 * Returns 0 or a negative uv error (nothing submitted). */
/* The pending bytes become the in-flight buffer; the drained in-flight
 * one, emptied, takes new pending bytes. */
static void pend_to_infl(yb_transport *t)
{
    obuf tmp = t->infl;

    t->infl = t->pend;
    t->pend = tmp;
    t->pend.off = t->pend.len = 0;
}

static int submit(yb_transport *t)
{
    uv_buf_t b;
    int r;

    pend_to_infl(t);
    b = uv_buf_init((char *)t->infl.p + t->infl.off, (unsigned)obuf_live(&t->infl));
    r = uv_write(&t->wreq, (uv_stream_t *)&t->tcp, &b, 1, on_write_done);
    if (r < 0)
        return r;
    t->busy = 1;
    t->had_queued = 1;
    return 0;
}

/* Words a socket error as a reason: what it means for the request first
 * ("reset: ...", "connect: ..."), then what we were doing. */
static void uv_reason(yb_transport *t, int uverr, const char *doing)
{
    switch (yb_err_from_uv(uverr)) {
    case YB_ERR_RESET:
        yb_reason_fmt(t->errtext, sizeof t->errtext, "reset: %s (while %s)", uv_strerror(uverr),
                      doing);
        break;
    case YB_ERR_REFUSED:
        yb_reason_fmt(t->errtext, sizeof t->errtext, "connect: %s", uv_strerror(uverr));
        break;
    default:
        yb_reason_fmt(t->errtext, sizeof t->errtext, "%s: %s",
                      !strcmp(doing, "connecting") ? "connect" : doing, uv_strerror(uverr));
        break;
    }
}

/* The stream ended while reading: the peer's clean end (UV_EOF) or an
 * error (a negative uv error, which is -errno). */
static void read_ended(yb_transport *t, int uverr)
{
    if (uverr == UV_EOF) {
        if (t->ssl && !t->hs_done)
            yb_reason_fmt(t->errtext, sizeof t->errtext,
                          "tls: peer closed the connection during the handshake");
        fail(t, YB_ERR_CLOSED);
        return;
    }
    uv_reason(t, uverr, "reading");
    fail(t, yb_err_from_uv(uverr));
}

static void write_error(yb_transport *t, int uverr)
{
    if (t->closing) {
        close_handles(t);
        return;
    }
    uv_reason(t, uverr, "writing");
    fail(t, yb_err_from_uv(uverr));
}

/* Sends the pending bytes: try_write, then queue the remainder.
 * Returns 1 when everything reached the kernel, 0 when some is queued (or
 * a write was already in flight), negative after a failure (the transport
 * is then closing). */
static int flush_out(yb_transport *t)
{
    size_t live = obuf_live(&t->pend);
    uv_buf_t b;
    int r;

    if (t->busy)
        return 0;
    if (live == 0)
        return 1;
    b = uv_buf_init((char *)t->pend.p + t->pend.off, (unsigned)live);
    r = uv_try_write((uv_stream_t *)&t->tcp, &b, 1);
    if (r == UV_EAGAIN)
        r = 0;
    if (r < 0) {
        write_error(t, r);
        return r;
    }
    if ((size_t)r == live) {
        obuf_clear(&t->pend);
        return 1;
    }
    t->pend.off += (size_t)r;
    r = submit(t);
    if (r < 0) {
        write_error(t, r);
        return r;
    }
    return 0;
}

/* Last words (TLS alerts) before a close: one try, no queueing. */
static void flush_best_effort(yb_transport *t)
{
    uv_buf_t b;

    if (t->busy || !t->connected || obuf_live(&t->pend) == 0)
        return;
    b = uv_buf_init((char *)t->pend.p + t->pend.off, (unsigned)obuf_live(&t->pend));
    (void)uv_try_write((uv_stream_t *)&t->tcp, &b, 1);
    t->pend.off = t->pend.len = 0;
}

static int ring_submit(yb_transport *t);

/* The in-flight buffer left (status 0) or could not (a negative uv
 * error): writes what queued meanwhile, finishes a graceful close, or
 * owes the application its on_drain. */
static void write_done(yb_transport *t, int status)
{
    t->busy = 0;
    obuf_clear(&t->infl);
    if (t->handles_closed)
        return;                 /* cancelled by the close */
    if (status < 0) {
        write_error(t, status);
        return;
    }
    if (obuf_live(&t->pend) > 0) {
        /* uv_write itself writes at once if it can */
        int r = t->ring ? ring_submit(t) : submit(t);
        if (r < 0)
            write_error(t, r);
        return;
    }
    if (t->closing) {
        close_handles(t);       /* graceful close was waiting for us */
        return;
    }
    if (t->had_queued) {
        t->had_queued = 0;
        if (t->cbs.on_drain)
            t->cbs.on_drain(t, t->ud);
    }
}

static void on_write_done(uv_write_t *req, int status)
{
    yb_transport *t = req->data;

    t->t_drained = uv_hrtime();
    write_done(t, status);
}

/* ---- writing and reading through a ring ----------------------------------- */

/* How the ring carries a plain connection.  It reads into t->rbuf, one
 * receive at a time.  A write is copied (pend), becomes the in-flight
 * buffer (infl) and goes out as one send; when no receive is out, the
 * next one is linked behind it (yb_uring_send_recv): one submission for
 * a request and its answer, and no completion for the send unless it
 * fails.  While the application handles what a receive brought
 * (delivering), a write it makes waits (send_deferred) and is queued
 * after, with the next receive: that receive may not fill rbuf before the
 * application is done with it. */

/* Queues the in-flight buffer's send, with the next receive linked
 * behind it if with_recv.  Returns 0 or UV_ENOMEM (the ring is full). */
static int ring_queue_send(yb_transport *t, int with_recv)
{
    const uint8_t *p = t->infl.p + t->infl.off;
    size_t n = obuf_live(&t->infl);

    if (with_recv) {
        if (yb_uring_send_recv(t->ring, t->fd, &t->sop, p, n, &t->rop, t->rbuf, RING_READ_BUF) < 0)
            return UV_ENOMEM;
        t->ring_recv = t->ring_linked = 1;
        t->ring_ops++;          /* the pair's: it completes once */
    } else {
        if (yb_uring_send(t->ring, &t->sop, t->fd, p, n) < 0)
            return UV_ENOMEM;
        t->ring_ops++;
    }
    t->ring_send = 1;
    return 0;
}

/* Queues the next receive.  Returns 0 or UV_ENOMEM. */
static int ring_recv(yb_transport *t)
{
    if (t->ring_recv)
        return 0;
    if (yb_uring_recv(t->ring, &t->rop, t->fd, t->rbuf, RING_READ_BUF) < 0)
        return UV_ENOMEM;
    t->ring_recv = 1;
    t->ring_ops++;
    return 0;
}

/* 1 when the connection wants its next receive queued. */
static int wants_recv(const yb_transport *t)
{
    return !t->closing && t->reading && !t->paused && !t->rheld && !t->ring_recv;
}

/* Hands the pending bytes to the ring: they become the in-flight buffer,
 * queued at once or, while delivering, after the application returns
 * (ring_next).  Returns 0 or a negative uv error. */
static int ring_submit(yb_transport *t)
{
    pend_to_infl(t);
    t->busy = 1;
    t->had_queued = 1;
    if (t->delivering) {
        t->send_deferred = 1;
        return 0;
    }
    return ring_queue_send(t, wants_recv(t));
}

/* What follows a delivery: the write it made with the next receive
 * linked behind it, or the receive alone. */
static void ring_next(yb_transport *t)
{
    int r = 0;

    if (t->handles_closed)
        return;
    if (t->send_deferred) {
        t->send_deferred = 0;
        r = ring_queue_send(t, wants_recv(t));
    } else if (wants_recv(t)) {
        r = ring_recv(t);
    }
    if (r < 0) {
        uv_reason(t, r, "writing");
        fail(t, yb_err_from_uv(r));
    }
}

/* The send's completion: always for an unlinked one; for a linked pair
 * only when the send failed or sent less, and then its receive never ran
 * (queued again here unless the transport is closing).  The op's count
 * is held until the end: write_done may close. */
static void on_ring_send(yb_uring_op *op, int res)
{
    yb_transport *t = (yb_transport *)((char *)op - offsetof(yb_transport, sop));
    int linked = t->ring_linked;

    t->ring_send = t->ring_linked = 0;
    if (linked)
        t->ring_recv = 0;
    if (res == 0)
        res = UV_EPIPE;         /* nothing of a non-empty buffer went */
    if (!t->handles_closed && res > 0 && (size_t)res < obuf_live(&t->infl)) {
        t->infl.off += (size_t)res; /* the rest the same way */
        int r = ring_queue_send(t, 0);
        if (r < 0)
            write_error(t, r);
    } else {
        t->t_drained = t->sop.at;
        write_done(t, res < 0 ? res : 0);
    }
    if (linked)
        ring_next(t);
    ring_op_ended(t);
}

/* The receive's completion (for a linked pair: the send before it went
 * whole, without a completion of its own).  The op's count is held until
 * the end: the callbacks may close. */
static void on_ring_recv(yb_uring_op *op, int res)
{
    yb_transport *t = (yb_transport *)((char *)op - offsetof(yb_transport, rop));

    t->ring_recv = 0;
    t->delivering = 1;
    if (t->ring_linked) {
        /* all of it went, when the ring handed it to the kernel */
        t->ring_linked = t->ring_send = 0;
        t->t_drained = t->sop.at;
        write_done(t, 0);
    }
    if (!t->closing) {
        if (res > 0) {
            if (t->paused || !t->reading)
                t->rheld = (size_t)res;     /* delivered on resume */
            else if (t->cbs.on_read)
                t->cbs.on_read(t, t->ud, t->rbuf, (size_t)res);
        } else {
            read_ended(t, res == 0 ? UV_EOF : res);
        }
    }
    t->delivering = 0;
    ring_next(t);
    ring_op_ended(t);
}

/* Delivers what a receive brought while paused (from the loop). */
static void ring_resume(yb_transport *t)
{
    size_t len = t->rheld;

    t->rheld = 0;
    t->ring_ops++;
    t->delivering = 1;
    if (t->cbs.on_read)
        t->cbs.on_read(t, t->ud, t->rbuf, len);
    t->delivering = 0;
    ring_next(t);
    ring_op_ended(t);
}

/* Empties this thread's OpenSSL error queue, so that SSL_get_error after
 * the next call sees that call's errors only.  ERR_clear_error resets all
 * of the queue's slots each time; it is the usual case (nothing queued)
 * that is checked first, since this runs before every record read and
 * write. */
static void err_reset(void)
{
    if (ERR_peek_error())
        ERR_clear_error();
}

static int ssl_write_all(yb_transport *t, const void *p, size_t len)
{
    size_t w;

    err_reset();
    if (!SSL_write_ex(t->ssl, p, len, &w)) {
        yb_reason_fmt(t->errtext, sizeof t->errtext, "tls: write failed");
        ERR_clear_error();
        fail(t, YB_ERR_TLS);
        return UV_EPROTO;
    }
    return 0;
}

/* Encrypts bufs in order, in records of up to COALESCE_MAX plaintext
 * bytes: pieces are gathered into one staging buffer (a small piece -- a
 * frame header -- would otherwise be a record of its own), except whole
 * records' worth of a large piece met with the staging buffer empty,
 * which are encrypted straight from the caller's buffer (as is a single
 * buffer).  So every byte is copied at most once before the encrypting
 * copy.  Returns 0 or UV_EPROTO (the transport failed). */
static int encrypt_all(yb_transport *t, const uv_buf_t *bufs, unsigned n)
{
    size_t o = 0;
    unsigned i;

    for (i = 0; i < n; i++) {
        const char *p = bufs[i].base;
        size_t left = bufs[i].len;

        while (left) {
            size_t k;

            if (n == 1 || (o == 0 && left >= COALESCE_MAX)) {
                k = n == 1 ? left : left - left % COALESCE_MAX;
                if (ssl_write_all(t, p, k) < 0)
                    return UV_EPROTO;
            } else {
                k = COALESCE_MAX - o < left ? COALESCE_MAX - o : left;
                memcpy(coalesce_buf + o, p, k);
                o += k;
                if (o == COALESCE_MAX) {
                    if (ssl_write_all(t, coalesce_buf, o) < 0)
                        return UV_EPROTO;
                    o = 0;
                }
            }
            p += k;
            left -= k;
        }
    }
    if (o && ssl_write_all(t, coalesce_buf, o) < 0)
        return UV_EPROTO;
    return 0;
}

static int write_tls(yb_transport *t, const uv_buf_t *bufs, unsigned n, size_t total)
{
    int r;

    /* one record (its ciphertext one BIO write) with nothing queued: the
     * output BIO hands it to the kernel itself; a larger write gathers its
     * records for one write(2) */
    t->direct = total <= COALESCE_MAX && !t->busy && obuf_live(&t->pend) == 0;
    r = encrypt_all(t, bufs, n);
    t->direct = 0;
    return r < 0 ? r : flush_out(t);
}

static int write_plain(yb_transport *t, const uv_buf_t *bufs, unsigned n, size_t total)
{
    size_t skip;
    unsigned i;
    int r;

    if (t->busy || (t->ring && !t->no_ring_writes && total <= RING_SEND_MAX)) {
        /* behind a write in flight; or, small, on the ring, which sends it
         * with the thread's next poll or sleep */
        for (i = 0; i < n; i++)
            if (obuf_append(&t->pend, bufs[i].base, bufs[i].len) < 0)
                goto nomem;
        if (t->busy)
            return 0;
        r = ring_submit(t);
        if (r < 0) {
            write_error(t, r);
            return r;
        }
        return 0;
    }
    r = uv_try_write((uv_stream_t *)&t->tcp, bufs, n);
    if (r == UV_EAGAIN)
        r = 0;
    if (r < 0) {
        write_error(t, r);
        return r;
    }
    if ((size_t)r == total)
        return 1;
    skip = (size_t)r;
    for (i = 0; i < n; i++) {
        if (skip >= bufs[i].len) {
            skip -= bufs[i].len;
            continue;
        }
        if (obuf_append(&t->pend, bufs[i].base + skip, bufs[i].len - skip) < 0)
            goto nomem;
        skip = 0;
    }
    r = submit(t);
    if (r < 0) {
        write_error(t, r);
        return r;
    }
    return 0;

nomem:
    yb_reason_fmt(t->errtext, sizeof t->errtext, "write queue full or out of memory");
    fail(t, YB_ERR_OTHER);
    return UV_ENOMEM;
}

int yb_transport_write(yb_transport *t, const uv_buf_t *bufs, unsigned n)
{
    size_t total = 0;
    unsigned i;

    if (t->closing)
        return UV_ECANCELED;
    /* Before on_ready there is no (secure) stream to write to. */
    if (!t->ready_reported)
        return UV_ENOTCONN;
    for (i = 0; i < n; i++)
        total += bufs[i].len;
    if (total == 0)
        return t->busy ? 0 : 1;
    return t->ssl ? write_tls(t, bufs, n, total) : write_plain(t, bufs, n, total);
}

void yb_transport_ring_writes(yb_transport *t, int on)
{
    t->no_ring_writes = on ? 0 : 1;
}

size_t yb_transport_queued(const yb_transport *t)
{
    return obuf_live(&t->pend) + (t->busy ? obuf_live(&t->infl) : 0);
}

/* ---- reading ------------------------------------------------------------ */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)h; (void)suggested;
    buf->base = read_buf;
    buf->len = sizeof read_buf;
}

static void on_tcp_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

static int set_reading(yb_transport *t, int on)
{
    int r;

    if (on == (int)t->reading)
        return 0;
    if (t->ring) {
        /* off: a receive already queued stays; what it brings is held
         * while paused (on_ring_recv).  On while delivering: ring_next
         * queues it once the application is done with rbuf. */
        r = on && !t->rheld && !t->delivering ? ring_recv(t) : 0;
        if (r == 0)
            t->reading = on ? 1 : 0;
        if (on && t->rheld)
            start_timer(t, TM_RESUME, 0);
        return r;
    }
    r = on ? uv_read_start((uv_stream_t *)&t->tcp, on_alloc, on_tcp_read)
           : uv_read_stop((uv_stream_t *)&t->tcp);
    if (r == 0)
        t->reading = on ? 1 : 0;
    return r;
}

/* Tells the application the stream is usable.  Returns 0, or -1 when the
 * application closed the transport from on_ready. */
static int report_ready(yb_transport *t)
{
    int r;

    stop_timer(t, TM_CONNECT);
    t->ready_reported = 1;
    if (t->ssl) {
        const unsigned char *p = NULL;
        unsigned len = 0;

        SSL_get0_alpn_selected(t->ssl, &p, &len);
        if (p && len < sizeof t->alpn) {
            memcpy(t->alpn, p, len);
            t->alpn[len] = '\0';
        }
        t->resumed = SSL_session_reused(t->ssl) ? 1 : 0;
        yb_tls_learn_group(t->ssl);
    }
    if (t->cbs.on_ready)
        t->cbs.on_ready(t, t->ud, YB_ERR_NONE);
    if (t->closing)
        return -1;
    r = set_reading(t, !t->paused);
    if (r < 0) {
        uv_reason(t, r, "reading");
        fail(t, yb_err_from_uv(r));
        return -1;
    }
    return 0;
}

/* Records why TLS failed in t->errtext (verification result first:
 * OpenSSL's own reason for it is only "certificate verify failed") and
 * clears OpenSSL's error queue. */
static void tls_reason(yb_transport *t, int sslerr)
{
    long vr = SSL_get_verify_result(t->ssl);
    unsigned long e = ERR_peek_last_error();
    const char *what = t->hs_done ? "tls: error" : "tls: handshake failed";

    if (vr != X509_V_OK && (SSL_get_verify_mode(t->ssl) & SSL_VERIFY_PEER))
        yb_reason_fmt(t->errtext, sizeof t->errtext, "tls: certificate verify failed: %s",
                      X509_verify_cert_error_string(vr));
    else if (e && ERR_GET_REASON(e) == SSL_R_TLSV1_ALERT_NO_APPLICATION_PROTOCOL &&
             !SSL_is_server(t->ssl))
        /* the server speaks none of what we asked for: for gNMI, no h2 */
        yb_reason_fmt(t->errtext, sizeof t->errtext,
                      "tls: the server accepts none of the protocols offered via ALPN (%s): it "
                      "does not speak %s over TLS here",
                      yb_tls_alpn_offered(t->ssl), yb_tls_alpn_offered(t->ssl));
    else if (e && ERR_reason_error_string(e))
        yb_reason_fmt(t->errtext, sizeof t->errtext, "%s: %s", what, ERR_reason_error_string(e));
    else if (sslerr == SSL_ERROR_SYSCALL)
        yb_reason_fmt(t->errtext, sizeof t->errtext, "%s: unexpected end of stream", what);
    else
        yb_reason_fmt(t->errtext, sizeof t->errtext, "%s (SSL error %d)", what, sslerr);
    ERR_clear_error();
}

/* Records why TLS failed, sends the alert if the kernel takes it, and
 * fails the transport. */
static void tls_fail(yb_transport *t, int sslerr)
{
    tls_reason(t, sslerr);
    flush_best_effort(t);
    fail(t, YB_ERR_TLS);
}

/* Drives the handshake.  Returns 1 when done (on_ready delivered and the
 * transport still open), 0 when more input is needed, -1 when closing. */
static int tls_handshake(yb_transport *t)
{
    int r, e;

    ERR_clear_error();
    r = SSL_do_handshake(t->ssl);
    if (r == 1) {
        t->hs_done = 1;
        t->t_tls_done = uv_hrtime();
        if (flush_out(t) < 0)
            return -1;
        return report_ready(t) < 0 ? -1 : 1;
    }
    e = SSL_get_error(t->ssl, r);
    if (e == SSL_ERROR_WANT_READ)
        return flush_out(t) < 0 ? -1 : 0;
    tls_fail(t, e);
    return -1;
}

/* Consumes what is buffered in the read BIO: handshake, then plaintext
 * to on_read until SSL wants more input, the application pauses or the
 * transport closes. */
static void tls_input(yb_transport *t)
{
    if (!t->hs_done && tls_handshake(t) <= 0)
        return;
    for (;;) {
        size_t have = 0, n;
        int e = SSL_ERROR_NONE;

        if (t->closing)
            return;
        if (t->paused)
            break;
        /* every record there is, into one buffer (one record's plaintext
         * is at most 16 KB, so a nearly full buffer takes a part of one) */
        while (have < sizeof plain_buf) {
            /* nothing left in the read BIO nor decrypted in SSL: another
             * SSL_read could only say "want read" (it costs a pass through
             * the record layer per answer) */
            if (have && !SSL_has_pending(t->ssl) && !BIO_ctrl_pending(t->rbio)) {
                e = SSL_ERROR_WANT_READ;
                break;
            }
            err_reset();
            if (!SSL_read_ex(t->ssl, plain_buf + have, sizeof plain_buf - have, &n)) {
                e = SSL_get_error(t->ssl, 0);
                break;
            }
            have += n;
        }
        /* the reason of a failure is taken before on_read, whose writes
         * clear OpenSSL's error queue; the plaintext before it still counts */
        if (e != SSL_ERROR_NONE && e != SSL_ERROR_WANT_READ && e != SSL_ERROR_ZERO_RETURN)
            tls_reason(t, e);
        if (have && t->cbs.on_read) {
            t->cbs.on_read(t, t->ud, plain_buf, have);
            if (t->closing)
                return;
        }
        if (e == SSL_ERROR_NONE)
            continue;                           /* the buffer was full */
        if (e == SSL_ERROR_WANT_READ)
            break;
        if (e == SSL_ERROR_ZERO_RETURN) {       /* close_notify */
            fail(t, YB_ERR_CLOSED);
            return;
        }
        flush_best_effort(t);                   /* the alert */
        fail(t, YB_ERR_TLS);
        return;
    }
    /* SSL_read may have produced output (key updates, alerts). */
    (void)flush_out(t);
}

static void on_tcp_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    yb_transport *t = s->data;

    if (nread == 0 || t->closing)
        return;
    if (nread < 0) {
        read_ended(t, (int)nread);
        return;
    }
    if (!t->ssl) {
        if (t->cbs.on_read)
            t->cbs.on_read(t, t->ud, (const uint8_t *)buf->base, (size_t)nread);
        return;
    }
    if (BIO_write(t->rbio, buf->base, (int)nread) != (int)nread) {
        yb_reason_fmt(t->errtext, sizeof t->errtext, "out of memory");
        fail(t, YB_ERR_OTHER);
        return;
    }
    tls_input(t);
}

/* ---- connect / accept ----------------------------------------------------- */

static void on_timer(uv_timer_t *tm)
{
    yb_transport *t = tm->data;
    enum timer_mode mode = t->tmode;

    t->tmode = TM_NONE;
    switch (mode) {
    case TM_CONNECT: {
        char d[32];
        yb_reason_fmt(t->errtext, sizeof t->errtext, "timeout after %s (%s)",
                      yb_reason_duration(d, sizeof d, t->connect_timeout_ns),
                      t->connected ? "TLS handshake" : "connect");
        fail(t, YB_ERR_CONNECT_TIMEOUT);
        break;
    }
    case TM_ACCEPT_READY:
        (void)report_ready(t);
        break;
    case TM_RESUME:
        if (t->closing || t->paused)
            break;
        if (t->rheld)
            ring_resume(t);
        else if (t->ssl)
            tls_input(t);
        break;
    case TM_LINGER:
        close_handles(t);
        break;
    case TM_NONE:
        break;
    }
}

static void on_connect(uv_connect_t *req, int status)
{
    yb_transport *t = req->data;
    int r;

    if (t->closing)
        return;                 /* includes UV_ECANCELED from uv_close */
    if (status < 0) {
        uv_reason(t, status, "connecting");
        fail(t, yb_err_from_uv(status));
        return;
    }
    t->connected = 1;
    t->t_connected = uv_hrtime();
    if (!t->ssl) {
        uv_os_fd_t fd;
        if (t->ring && (!yb_uring_ready(t->ring) || uv_fileno((uv_handle_t *)&t->tcp, &fd) < 0 ||
                        !(t->rbuf = calloc(1, RING_READ_BUF))))
            t->ring = NULL;     /* libuv reads and writes, as without one */
        else if (t->ring)
            t->fd = fd;
        (void)report_ready(t);
        return;
    }
    r = set_reading(t, 1);
    if (r < 0) {
        uv_reason(t, r, "reading");
        fail(t, yb_err_from_uv(r));
        return;
    }
    (void)tls_handshake(t);     /* sends the ClientHello */
}

static void format_peer(char *out, size_t outlen, const struct sockaddr *sa)
{
    char ip[INET6_ADDRSTRLEN];

    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

        uv_ip4_name(in, ip, sizeof ip);
        snprintf(out, outlen, "%s:%u", ip, (unsigned)ntohs(in->sin_port));
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

        uv_ip6_name(in6, ip, sizeof ip);
        snprintf(out, outlen, "[%s]:%u", ip, (unsigned)ntohs(in6->sin6_port));
    } else {
        snprintf(out, outlen, "?");
    }
}

static yb_transport *transport_alloc(uv_loop_t *loop, const yb_transport_cbs *cbs, void *ud)
{
    yb_transport *t = calloc(1, sizeof *t);

    if (!t)
        return NULL;
    t->loop = loop;
    t->cbs = *cbs;
    t->ud = ud;
    t->t_start = uv_hrtime();
    t->tcp.data = t;
    t->creq.data = t;
    t->wreq.data = t;
    t->fd = -1;
    t->rop.done = on_ring_recv;
    t->sop.done = on_ring_send;
    return t;
}

yb_transport *yb_transport_connect(uv_loop_t *loop, yb_uring *ring, const struct sockaddr *addr,
                                   yb_tls_ctx *tls, const char *sni,
                                   uint64_t connect_timeout_ns,
                                   const yb_transport_cbs *cbs, void *ud, yb_err_class *err)
{
    yb_transport *t;
    int r;

    if (err)
        *err = YB_ERR_OTHER;
    if (!loop || !addr || !cbs ||
        (addr->sa_family != AF_INET && addr->sa_family != AF_INET6))
        return NULL;
    t = transport_alloc(loop, cbs, ud);
    if (!t)
        return NULL;
    format_peer(t->peer, sizeof t->peer, addr);
    if (tls && setup_ssl(t, tls, sni) < 0)
        goto fail_free;
    if (t->ssl && SSL_is_server(t->ssl))
        goto fail_free;         /* a server context cannot connect */
    if (!t->ssl)
        t->ring = ring;
    if (uv_tcp_init(loop, &t->tcp) < 0)
        goto fail_free;
    t->tcp.data = t;            /* uv_tcp_init clears data */
    /* Applied by libuv when it creates the socket in uv_tcp_connect. */
    (void)uv_tcp_nodelay(&t->tcp, 1);
    r = uv_tcp_connect(&t->creq, &t->tcp, addr, on_connect);
    if (r < 0) {
        if (err)
            *err = yb_err_from_uv(r);
        t->silent = 1;          /* nothing started: no callbacks */
        close_handles(t);
        return NULL;
    }
    t->connect_timeout_ns = connect_timeout_ns;
    if (connect_timeout_ns) {
        uint64_t ms = (connect_timeout_ns + 999999) / 1000000;
        start_timer(t, TM_CONNECT, ms);
    }
    if (err)
        *err = YB_ERR_NONE;
    return t;

fail_free:
    free_transport(t);
    return NULL;
}

yb_transport *yb_transport_accept(uv_stream_t *server, yb_uring *ring, yb_tls_ctx *tls,
                                  const yb_transport_cbs *cbs, void *ud)
{
    yb_transport *t;
    struct sockaddr_storage ss;
    int sslen = sizeof ss;

    if (!server || !cbs)
        return NULL;
    t = transport_alloc(server->loop, cbs, ud);
    if (!t)
        return NULL;
    if (tls && setup_ssl(t, tls, NULL) < 0)
        goto fail_free;
    if (t->ssl && !SSL_is_server(t->ssl))
        goto fail_free;
    if (uv_tcp_init(server->loop, &t->tcp) < 0)
        goto fail_free;
    t->tcp.data = t;
    if (uv_accept(server, (uv_stream_t *)&t->tcp) < 0)
        goto fail_close;
    t->connected = 1;
    t->t_connected = t->t_start;
    (void)uv_tcp_nodelay(&t->tcp, 1);
    if (uv_tcp_getpeername(&t->tcp, (struct sockaddr *)&ss, &sslen) == 0)
        format_peer(t->peer, sizeof t->peer, (const struct sockaddr *)&ss);
    if (t->ssl) {
        if (set_reading(t, 1) < 0)      /* the client speaks first */
            goto fail_close;
    } else {
        uv_os_fd_t fd;
        if (ring && yb_uring_ready(ring) && uv_fileno((uv_handle_t *)&t->tcp, &fd) == 0 &&
            (t->rbuf = calloc(1, RING_READ_BUF))) {
            t->ring = ring;     /* else libuv reads and writes, as without one */
            t->fd = fd;
            /* Receives only: a server's write is not each answered by the
             * peer, so a receive linked behind it would hold back its
             * completion, and on_drain, until the peer sends again (a
             * Subscribe's samples, the frames after a GOAWAY would wait
             * for it); its writes go to the kernel at once. */
            t->no_ring_writes = 1;
        }
        /* Deferred so that on_ready never runs before accept returns. */
        start_timer(t, TM_ACCEPT_READY, 0);
    }
    return t;

fail_close:
    t->silent = 1;
    close_handles(t);
    return NULL;
fail_free:
    free_transport(t);
    return NULL;
}

/* ---- closing and control --------------------------------------------------- */

void yb_transport_close(yb_transport *t)
{
    if (!t || t->closing)
        return;
    t->closing = 1;
    t->reason = YB_ERR_NONE;
    if (!t->connected) {
        close_handles(t);
        return;
    }
    (void)set_reading(t, 0);
    if (t->ssl && t->hs_done) {
        ERR_clear_error();
        (void)SSL_shutdown(t->ssl);     /* queues close_notify; no reply awaited */
        ERR_clear_error();
    }
    if (!t->busy && obuf_live(&t->pend) > 0)
        (void)flush_out(t);
    if (t->busy && !t->handles_closed) {
        /* Let queued bytes (a response, close_notify) leave, but not
         * forever: a peer that stops reading must not pin the socket. */
        start_timer(t, TM_LINGER, LINGER_MS);
        return;
    }
    close_handles(t);
}

void yb_transport_reset(yb_transport *t)
{
    if (!t || t->handles_closed)
        return;
    if (!t->closing) {
        t->closing = 1;
        t->reason = YB_ERR_NONE;
    }
    ring_cancel(t);
    t->handles_closed = 1;
    t->pending_closes = 1 + t->timer_inited;
    if (t->timer_inited)
        uv_close((uv_handle_t *)&t->timer, on_handle_closed);
    /* SO_LINGER 0 then close: the kernel sends RST instead of FIN. */
    if (!t->connected || uv_tcp_close_reset(&t->tcp, on_handle_closed) != 0)
        uv_close((uv_handle_t *)&t->tcp, on_handle_closed);
}

void yb_transport_pause(yb_transport *t, int paused)
{
    if (!t || t->closing)
        return;
    t->paused = paused ? 1 : 0;
    if (!t->ready_reported)
        return;                 /* applied by report_ready */
    if (set_reading(t, !t->paused) < 0)
        return;
    /* Plaintext may be waiting inside SSL from before the pause; deliver
     * it from the loop, not from inside this call. */
    if (!t->paused && t->ssl &&
        (SSL_pending(t->ssl) > 0 || BIO_ctrl_pending(t->rbio) > 0))
        start_timer(t, TM_RESUME, 0);
}

/* ---- accessors ------------------------------------------------------------- */

uint64_t yb_transport_t_start(const yb_transport *t) { return t->t_start; }
uint64_t yb_transport_t_connected(const yb_transport *t) { return t->t_connected; }
uint64_t yb_transport_t_tls_done(const yb_transport *t) { return t->t_tls_done; }
uint64_t yb_transport_t_drained(const yb_transport *t) { return t->t_drained; }
int yb_transport_tls_resumed(const yb_transport *t) { return t->resumed; }
const char *yb_transport_alpn(const yb_transport *t) { return t->alpn; }
const char *yb_transport_error_text(const yb_transport *t) { return t->errtext; }
yb_err_class yb_transport_failure(const yb_transport *t) { return t->closing ? t->reason : YB_ERR_NONE; }
const char *yb_transport_peer(const yb_transport *t) { return t->peer; }
