/* The session pool of one target inside one worker (see pool.h): sessions
 * (a transport plus a codec each), the policy that picks one for an
 * exchange, the queue of exchanges waiting for a session, and the target's
 * TLS context (its resumption cache). */
#include "config.h"
#include "engine/pool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct session {
    yb_pool *p;
    yb_transport *t;
    yb_codec *codec;
    int ready;           /* transport ready and codec started */
    int opening;         /* counted in the pool's n_opening: the server has not
                          * answered yet (no TLS handshake, no byte read) */
    int closing;         /* close requested; on_close pending */
    int broken;          /* a write failed the transport; on_close pending */
    int one_shot;        /* per-request: closed after its exchange */
    yb_err_class close_why; /* class given to exchanges failed by our close */
    char why_text[YB_REASON_MAX]; /* their reason ("" = from the transport or the close) */
    yb_exchange *inflight; /* submitted to the codec (doubly linked) */
    unsigned n_inflight;
    yb_exchange *pend_head, *pend_tail; /* waiting for the session to be ready */
    yb_exchange *opener; /* the exchange that pays the set-up phases */
    int pre;             /* opened by yb_pool_preopen, not yet usable: its
                          * set-up goes to host->opened, not to a request */
    uint64_t pre_start;  /* ... when its connect began */
    uint64_t conn_id;    /* --sessions original: the recorded connection */
    uint64_t id;         /* numbered from 1 in opening order (yb_result.session) */
    int mapped;          /* in the pool's conn_id map */
    int dirty;           /* submitted work waits for the codec's flush */
    struct session *dnext;
    struct session *next, *prev;
    struct session *hnext; /* conn_id map chain */
} session;

#define CONN_BUCKETS 1024

struct yb_pool {
    yb_pool_cfg cfg;
    yb_pool_host host;
    void *ud;
    yb_codec_host codec_host; /* what the sessions' codecs call */
    yb_tls_ctx *tls;          /* TLS targets: context and resumption cache */
    int own_tls;              /* made here (else borrowed: cfg.tls_ctx) */
    unsigned n_persistent;
    uint64_t n_oneshot;       /* per-request sessions open */
    session *sessions;        /* sessions with room first: one that frees
                               * goes to the front, one a submission fills
                               * to the back (so finding a session with
                               * room is not a walk past the busy ones) */
    session *sessions_tail;
    session *dirty;           /* sessions to flush at the end of this pass */
    yb_exchange *wait_head, *wait_tail; /* waiting for a session */
    uint64_t n_wait;          /* length of the wait queue */
    uint64_t wait_bytes;      /* the memory its requests hold (wait_cost) */
    int wait_in_order;        /* queued in due order since it was empty */
    uint64_t n_opened;        /* sessions opened so far (the last id) */
    /* Reconnect back-off (see pool.h): consecutive failed set-ups, the
     * time before which no session is opened, set-ups in progress, and
     * how many back-offs there were. */
    unsigned failures;
    uint64_t backoff_until;
    unsigned n_opening;
    uint64_t backoffs;
    session **conn_map;       /* --sessions original only: CONN_BUCKETS chains
                               * (8 KB a pool, and a fleet has a pool a target) */
};

/* ---- exchange lists ------------------------------------------------------ */

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

/* Queues x at the wait queue's end, noting whether the queue is still in
 * due order (then the timeout scan stops at the first that has not timed
 * out, instead of walking a backlog of thousands every tick). */
static void wait_append(yb_pool *p, yb_exchange *x)
{
    if (!p->wait_head)
        p->wait_in_order = 1;
    else if (x->res.due < p->wait_tail->res.due)
        p->wait_in_order = 0; /* a retry, which keeps its due time */
    fifo_push(&p->wait_head, &p->wait_tail, x);
    p->n_wait++;
    p->wait_bytes += x->wait_bytes;
}

/* Takes x (in the wait queue) out of the queue's count and memory. */
static void wait_left(yb_pool *p, yb_exchange *x)
{
    p->n_wait--;
    p->wait_bytes -= x->wait_bytes;
    x->wait_bytes = 0;
}

/* Ends x with error class why and gives it back to the host.  text (NULL
 * or "" = none) becomes x's reason unless a lower layer gave one first. */
static void x_fail(yb_pool *p, yb_exchange *x, yb_err_class why, const char *text)
{
    x->res.err = why == YB_ERR_NONE ? YB_ERR_CLOSED : why;
    x->res.done = uv_hrtime();
    if (!x->res.reason[0] && text && *text)
        snprintf(x->res.reason, sizeof x->res.reason, "%s", text);
    p->host.done(p->ud, x);
}

/* "timeout after 30s (PHASE)" into buf. */
static const char *timeout_reason(char *buf, size_t len, uint64_t to, const char *phase)
{
    char d[32];
    return yb_reason_fmt(buf, len, "timeout after %s (%s)", yb_reason_duration(d, sizeof d, to),
                         phase);
}

/* ---- reconnect back-off ------------------------------------------------ */

/* A session set-up failed (refused, timed out, TLS or HTTP/2 set-up
 * failed): the next one waits YB_POOL_BACKOFF_MIN_NS, doubling with each
 * failure in a row up to YB_POOL_BACKOFF_MAX_NS, so a dead target costs a
 * bounded number of connects per second instead of one after another. */
static void setup_failed(yb_pool *p, uint64_t now)
{
    if (p->failures < UINT32_MAX)
        p->failures++;
    uint64_t d = YB_POOL_BACKOFF_MIN_NS; /* MIN << (failures - 1), capped */
    for (unsigned i = 1; i < p->failures && d < YB_POOL_BACKOFF_MAX_NS; i++)
        d *= 2;
    p->backoff_until = now + (d < YB_POOL_BACKOFF_MAX_NS ? d : YB_POOL_BACKOFF_MAX_NS);
    p->backoffs++;
}

/* A session may be opened now: always while the target answers; after
 * failed set-ups, once the back-off has passed and one at a time (a probe)
 * until a set-up succeeds again. */
static int may_open(const yb_pool *p)
{
    return !p->failures || (p->n_opening == 0 && uv_hrtime() >= p->backoff_until);
}

/* s's set-up is over (answered, or closed before it was). */
static void opening_over(yb_pool *p, session *s)
{
    if (s->opening) {
        s->opening = 0;
        p->n_opening--;
    }
}

/* The server answered on s (completed the TLS handshake, or sent bytes):
 * the target works, the back-off ends.  A server that accepts connections
 * and closes them unanswered counts as failing, as one that refuses. */
static void answered(yb_pool *p, session *s)
{
    if (s->opening) {
        opening_over(p, s);
        p->failures = 0;
    }
}

/* ---- sessions ---------------------------------------------------------- */

static void sess_unlink(yb_pool *p, session *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        p->sessions = s->next;
    if (s->next)
        s->next->prev = s->prev;
    else
        p->sessions_tail = s->prev;
    s->next = s->prev = NULL;
}

/* Links s (on no list) first. */
static void sess_link_front(yb_pool *p, session *s)
{
    s->prev = NULL;
    s->next = p->sessions;
    if (p->sessions)
        p->sessions->prev = s;
    else
        p->sessions_tail = s;
    p->sessions = s;
}

static void sess_to_front(yb_pool *p, session *s)
{
    if (p->sessions == s)
        return;
    sess_unlink(p, s);
    sess_link_front(p, s);
}

static void sess_to_back(yb_pool *p, session *s)
{
    if (p->sessions_tail == s)
        return;
    sess_unlink(p, s);
    s->next = NULL;
    s->prev = p->sessions_tail;
    if (p->sessions_tail)
        p->sessions_tail->next = s;
    else
        p->sessions = s;
    p->sessions_tail = s;
}

/* Keeps the first reason given for s's end (NULL or "" = none). */
static void sess_why(session *s, const char *text)
{
    if (!s->why_text[0] && text && *text)
        snprintf(s->why_text, sizeof s->why_text, "%s", text);
}

static void sess_close(session *s, yb_err_class why, const char *text)
{
    if (s->closing)
        return;
    s->closing = 1;
    s->close_why = why;
    sess_why(s, text);
    yb_transport_close(s->t);
}

static session **conn_slot(yb_pool *p, uint64_t conn_id)
{
    session **pp = &p->conn_map[(conn_id * 0x9e3779b97f4a7c15ull) >> 54];
    while (*pp && (*pp)->conn_id != conn_id)
        pp = &(*pp)->hnext;
    return pp;
}

static void conn_unmap(yb_pool *p, session *s)
{
    if (!s->mapped)
        return;
    session **pp = conn_slot(p, s->conn_id);
    if (*pp == s)
        *pp = s->hnext;
    s->mapped = 0;
}

/* Marks s for this pass's flush. */
static void mark_dirty(session *s)
{
    yb_pool *p = s->p;
    if (p->cfg.ops->flush && !s->dirty) {
        s->dirty = 1;
        s->dnext = p->dirty;
        p->dirty = s;
    }
}

static int sess_has_room(const session *s)
{
    const yb_codec_ops *ops = s->p->cfg.ops;
    return s->ready && !s->closing && !s->broken && ops->usable(s->codec) &&
           ops->capacity(s->codec) > 0;
}

/* Submits x on s.  Returns 0, or < 0 when the codec refused it (x is then
 * still the caller's; s is marked broken when the write failed its
 * transport). */
static int sess_submit(session *s, yb_exchange *x, uint64_t now)
{
    x->owner = s;
    x->res.session = s->id;
    if (!x->res.send_start)
        x->res.send_start = now;
    int rc = s->p->cfg.ops->submit(s->codec, x, now);
    if (rc < 0) {
        if (yb_transport_failure(s->t) != YB_ERR_NONE)
            s->broken = 1; /* its write failed the transport */
        return rc;
    }
    list_push(&s->inflight, x);
    s->n_inflight++;
    mark_dirty(s);
    if (!sess_has_room(s))
        sess_to_back(s->p, s); /* full: the next search starts past it */
    return 0;
}

static const char *closed_reason(char *buf, size_t len, const yb_exchange *x, int by_peer,
                                 const char *peer);

/* Fails x, which s's codec did not take.  When the write failed the
 * transport under it (the peer reset the connection), or the transport
 * was already failing (a reset or an EOF read, its on_close not yet
 * run), x fails with that reason, as the rest of s's work will in
 * on_close (s is broken and takes no more); else the session refused it. */
static void submit_failed(session *s, yb_exchange *x)
{
    if (!s->broken) {
        x_fail(s->p, x, YB_ERR_OTHER, "the session refused the request");
        return;
    }
    char why[YB_REASON_MAX];
    yb_err_class cls = yb_transport_failure(s->t);
    const char *text = yb_transport_error_text(s->t), *peer = yb_transport_peer(s->t);
    x_fail(s->p, x, cls,
           *text ? yb_reason_fmt(why, sizeof why, "%s (%s)", text, peer)
                 : closed_reason(why, sizeof why, x, cls == YB_ERR_CLOSED, peer));
}

/* Submits what waits on s (pending from before it was ready). */
static void sess_drain_pending(session *s)
{
    uint64_t now = uv_hrtime();
    while (s->pend_head && sess_has_room(s)) {
        yb_exchange *x = fifo_pop(&s->pend_head, &s->pend_tail);
        if (sess_submit(s, x, now) < 0)
            submit_failed(s, x);
    }
}

/* ---- what the codecs call (yb_codec_host) -------------------------------- */

static int host_write(void *hd, const uv_buf_t *bufs, unsigned n)
{
    session *s = hd;
    return yb_transport_write(s->t, bufs, n);
}

static void host_done(void *hd, yb_exchange *x)
{
    session *s = hd;
    yb_pool *p = s->p;
    list_unlink(&s->inflight, x);
    s->n_inflight--;
    if (x->retry) {
        /* not processed by the server (refused stream, above GOAWAY's last
         * id): run it again on another session, keeping its due time */
        x->retry = 0;
        x->res.done = x->res.first_byte = x->res.sent = 0;
        x->res.conn_start = x->res.connected = x->res.tls_done = x->res.h2_ready = 0;
        x->res.bytes_in = 0;
        x->res.reason[0] = '\0';
        p->host.retried(p->ud, x);
        wait_append(p, x);
    } else {
        p->host.done(p->ud, x);
    }
    if (s->one_shot && !s->n_inflight && !s->pend_head)
        sess_close(s, YB_ERR_NONE, NULL);
    else if (!s->closing) {
        sess_to_front(p, s);
        if (s->ready && s->pend_head)
            sess_drain_pending(s); /* --sessions original: its next recorded request */
    }
}

static void host_close(void *hd, int fatal, yb_err_class why, const char *reason)
{
    session *s = hd;
    sess_why(s, reason);
    if (fatal || !s->n_inflight)
        sess_close(s, why, NULL);
    /* else: close once the last in-flight exchange is done (HTTP/2 GOAWAY) */
}

/* Gives the set-up of a session yb_pool_preopen opened to host->opened:
 * started at start, on transport t (NULL: it never got one), ending with
 * err (YB_ERR_NONE: set up, its HTTP/2 set-up done at h2_ready, or 0). */
static void preopen_report(yb_pool *p, uint64_t id, uint64_t start, yb_transport *t,
                           yb_err_class err, uint64_t h2_ready)
{
    if (!p->host.opened)
        return;
    yb_result r;
    memset(&r, 0, sizeof r);
    r.conn_start = start;
    if (t) {
        r.connected = yb_transport_t_connected(t);
        r.tls_done = yb_transport_t_tls_done(t);
        r.tls_resumed = yb_transport_tls_resumed(t);
    }
    r.h2_ready = h2_ready;
    r.session = id;
    r.err = err;
    p->host.opened(p->ud, &r);
}

/* A pre-opened session s finished its set-up (h2_ready: when its HTTP/2
 * set-up ended, else 0), whether or not requests already fill it (they
 * may go on an HTTP/2 session before its SETTINGS). */
static void preopen_over(session *s, uint64_t h2_ready)
{
    if (!s->pre)
        return;
    s->pre = 0;
    preopen_report(s->p, s->id, s->pre_start, s->t, YB_ERR_NONE, h2_ready);
}

static void host_ready(void *hd)
{
    session *s = hd;
    uint64_t now = uv_hrtime();
    if (s->opener && !s->opener->res.h2_ready)
        s->opener->res.h2_ready = now;
    preopen_over(s, now);
    sess_drain_pending(s);
}

static void host_notify(void *hd, uint64_t now, int64_t lateness_ns, uint64_t n_updates)
{
    session *s = hd;
    s->p->host.notify(s->p->ud, now, lateness_ns, n_updates);
}

/* ---- what the transports call ------------------------------------------ */

static void on_ready(yb_transport *t, void *ud, yb_err_class status)
{
    session *s = ud;
    if (status != YB_ERR_NONE) {
        s->close_why = status; /* on_close follows and fails the pending work */
        return;
    }
    yb_pool *p = s->p;
    if (s->opener) {
        s->opener->res.connected = yb_transport_t_connected(t);
        s->opener->res.tls_done = yb_transport_t_tls_done(t);
        s->opener->res.tls_resumed = yb_transport_tls_resumed(t);
    }
    if (p->tls && p->cfg.ops == &yb_h2_client_ops && strcmp(yb_transport_alpn(t), "h2")) {
        /* HTTP/2 over TLS is agreed through ALPN: a server that did not
         * choose h2 speaks something else on this connection */
        char why[YB_REASON_MAX];
        const char *got = yb_transport_alpn(t);
        yb_reason_fmt(why, sizeof why,
                      "protocol: the TLS server does not speak HTTP/2 (ALPN: it chose %s, not h2) "
                      "(%s)",
                      *got ? got : "no protocol", yb_transport_peer(t));
        sess_close(s, YB_ERR_PROTOCOL, why);
        return;
    }
    if (p->cfg.ops->start(s->codec) < 0) {
        /* a first write the peer reset fails the transport, and on_close
         * follows with its reason; else the codec itself could not start */
        if (yb_transport_failure(t) == YB_ERR_NONE)
            sess_close(s, YB_ERR_PROTOCOL, "protocol: the session could not start");
        return;
    }
    s->ready = 1;
    if (p->tls)
        answered(p, s); /* the handshake was the server's answer */
    if (p->cfg.ops != &yb_h2_client_ops)
        preopen_over(s, 0); /* HTTP/1.1: set up once connected (HTTP/2: host_ready) */
    sess_drain_pending(s);
    p->host.kick(p->ud, uv_hrtime());
}

static void on_read(yb_transport *t, void *ud, const uint8_t *d, size_t n)
{
    (void)t;
    session *s = ud;
    if (s->closing)
        return;
    yb_pool *p = s->p;
    if (n)
        answered(p, s);
    /* what the codec has to send back (HTTP/2: DATA the peer's window now
     * lets go, acknowledgements) leaves with the requests the kick submits,
     * in one write; the flush after it covers a lane that has ended */
    uint64_t now = uv_hrtime();
    p->cfg.ops->on_read(s->codec, d, n, now);
    mark_dirty(s);
    p->host.kick(p->ud, now);
    yb_pool_flush(p);
}

static void on_drain(yb_transport *t, void *ud)
{
    session *s = ud;
    s->p->cfg.ops->on_drain(s->codec, yb_transport_t_drained(t));
}

/* Why x failed when its session ended with no reason of its own: the
 * peer closed (or we did) at some point of x's exchange. */
static const char *closed_reason(char *buf, size_t len, const yb_exchange *x, int by_peer,
                                 const char *peer)
{
    const char *who = by_peer ? "closed by peer" : "closed";
    if (x->res.first_byte)
        return yb_reason_fmt(buf, len, "%s after %llu response bytes (%s)", who,
                             (unsigned long long)x->res.bytes_in, peer);
    if (x->res.sent)
        return yb_reason_fmt(buf, len, "%s before the response (%s)", who, peer);
    return yb_reason_fmt(buf, len, "%s before the request was sent (%s)", who, peer);
}

static void on_close(yb_transport *t, void *ud, yb_err_class reason)
{
    session *s = ud;
    yb_pool *p = s->p;
    if (reason == YB_ERR_CLOSED && !s->closing)
        p->cfg.ops->on_eof(s->codec, uv_hrtime());
    yb_err_class why = s->closing && s->close_why != YB_ERR_NONE ? s->close_why
                       : reason != YB_ERR_NONE ? reason : s->close_why;
    /* The session's reason: what closed it (a codec, a timeout), else
     * what the transport saw, with the peer's address. */
    char tbuf[YB_REASON_MAX];
    const char *text = s->why_text;
    if (!*text && *yb_transport_error_text(t))
        text = yb_reason_fmt(tbuf, sizeof tbuf, "%s (%s)", yb_transport_error_text(t),
                             yb_transport_peer(t));
    int by_peer = reason == YB_ERR_CLOSED && !(s->closing && s->close_why != YB_ERR_NONE);
    while (s->inflight) {
        yb_exchange *x = s->inflight;
        char xbuf[YB_REASON_MAX];
        list_unlink(&s->inflight, x);
        x_fail(p, x, why,
               *text ? text : closed_reason(xbuf, sizeof xbuf, x, by_peer, yb_transport_peer(t)));
    }
    while (s->pend_head) {
        yb_exchange *x = fifo_pop(&s->pend_head, &s->pend_tail);
        char xbuf[YB_REASON_MAX];
        x_fail(p, x, why,
               *text ? text : closed_reason(xbuf, sizeof xbuf, x, by_peer, yb_transport_peer(t)));
    }
    if (s->pre) /* pre-opened, closed before its set-up was over */
        preopen_report(p, s->id, s->pre_start, t, why != YB_ERR_NONE ? why : YB_ERR_CLOSED, 0);
    sess_unlink(p, s);
    conn_unmap(p, s);
    if (s->opening) {
        opening_over(p, s);
        /* closed before the server answered, and not by the run ending it */
        if (!(s->closing && s->close_why == YB_ERR_NONE))
            setup_failed(p, uv_hrtime());
    }
    if (s->dirty) {
        session **pp = &p->dirty;
        while (*pp != s)
            pp = &(*pp)->dnext;
        *pp = s->dnext;
    }
    if (!s->one_shot)
        p->n_persistent--;
    else
        p->n_oneshot--;
    p->cfg.ops->destroy(s->codec);
    free(s);
    p->host.kick(p->ud, uv_hrtime());
}

static const yb_transport_cbs TRANSPORT_CBS = {on_ready, on_read, on_drain, on_close};

/* Opens a session for x (which pays its set-up), or for none (x NULL:
 * yb_pool_preopen).  Returns 0, or < 0 with x failed and given back. */
static int sess_open(yb_pool *p, yb_exchange *x, int one_shot)
{
    session *s = calloc(1, sizeof *s);
    if (!s) {
        if (x)
            x_fail(p, x, YB_ERR_OTHER, "out of memory");
        return -ENOMEM;
    }
    s->p = p;
    s->one_shot = one_shot;
    s->id = ++p->n_opened;
    s->codec = p->cfg.ops->create(p->cfg.codec, &p->codec_host, s);
    if (!s->codec) {
        free(s);
        if (x)
            x_fail(p, x, YB_ERR_OTHER, "out of memory");
        return -ENOMEM;
    }
    uint64_t now = uv_hrtime();
    if (x) {
        x->res.conn_start = now;
        x->res.send_start = now;
        s->opener = x;
        fifo_push(&s->pend_head, &s->pend_tail, x);
    } else {
        s->pre = 1;
        s->pre_start = now;
    }
    /* link first: callbacks may run from inside connect on failure paths */
    sess_link_front(p, s);
    if (!one_shot)
        p->n_persistent++;
    else
        p->n_oneshot++;
    yb_err_class ec = YB_ERR_NONE;
    const yb_target *tg = p->cfg.target;
    s->t = yb_transport_connect(p->cfg.loop, p->cfg.ring, (const struct sockaddr *)&tg->addr, p->tls,
                                tg->tls ? yb_target_servername(tg) : NULL, p->cfg.timeout_ns, &TRANSPORT_CBS, s,
                                &ec);
    if (!s->t) {
        if (x)
            fifo_pop(&s->pend_head, &s->pend_tail);
        sess_unlink(p, s);
        if (!one_shot)
            p->n_persistent--;
        else
            p->n_oneshot--;
        p->cfg.ops->destroy(s->codec);
        uint64_t s_id = s->id;
        free(s);
        if (ec == YB_ERR_NONE)
            ec = YB_ERR_OTHER;
        char why[YB_REASON_MAX];
        yb_reason_fmt(why, sizeof why, "connect: could not start (%s) (%s)", yb_err_name(ec),
                      tg->authority);
        setup_failed(p, now);
        if (x)
            x_fail(p, x, ec, why);
        else
            preopen_report(p, s_id, now, NULL, ec, 0);
        return -1;
    }
    yb_transport_ring_writes(s->t, p->cfg.ops->ring_writes);
    s->opening = 1;
    p->n_opening++;
    return 0;
}

/* ---- the wait queue ------------------------------------------------------ */

/* The memory x holds while it waits: nothing when its prepared request is
 * the source's cache's (shared), else its prepared bytes. */
static uint64_t wait_cost(const yb_exchange *x)
{
    return x->req->cached ? 0 : yb_prepared_cost(x->req);
}

/* Queues x to wait for a session; past max_wait, or past max_wait_bytes
 * of memory (when others wait already), it fails as an overflow (counted,
 * never silently dropped). */
static void wait_push(yb_pool *p, yb_exchange *x)
{
    uint64_t cost = wait_cost(x), max = p->cfg.max_wait_bytes;
    /* (the first to wait may hold more than max alone, so wait_bytes can
     * be over it) */
    if (p->n_wait >= p->cfg.max_wait ||
        (p->n_wait && (p->wait_bytes > max || cost > max - p->wait_bytes))) {
        char why[YB_REASON_MAX];
        if (p->n_wait >= p->cfg.max_wait)
            yb_reason_fmt(why, sizeof why,
                          "backlog overflow: %llu requests were already waiting for a session",
                          (unsigned long long)p->n_wait);
        else
            /* (the limit, not the count: one reason, not one per count) */
            yb_reason_fmt(why, sizeof why,
                          "backlog overflow: the requests waiting for a session held the "
                          "%llu KB of --max-backlog-bytes",
                          (unsigned long long)(p->cfg.max_wait_bytes >> 10));
        x_fail(p, x, YB_ERR_OVERFLOW, why);
        return;
    }
    x->wait_bytes = cost;
    wait_append(p, x);
}

static yb_exchange *wait_pop(yb_pool *p)
{
    yb_exchange *x = fifo_pop(&p->wait_head, &p->wait_tail);
    if (x)
        wait_left(p, x);
    return x;
}

/* Per-request sessions may be opened (at most -c at once). */
static int can_open_oneshot(const yb_pool *p)
{
    return p->n_oneshot < p->cfg.oneshot_limit && may_open(p);
}

/* --sessions original: x runs on its recorded connection's session, in
 * recorded order behind its earlier requests, or opens that session.
 * Returns 0, or -1 when the session must be opened and the back-off says
 * not yet (x is then still the caller's). */
static int submit_original(yb_pool *p, yb_exchange *x, uint64_t now)
{
    uint64_t cid = x->req->conn_id;
    session *s = *conn_slot(p, cid);
    if (!s) {
        if (!may_open(p))
            return -1;
        if (sess_open(p, x, 0) == 0) {
            s = p->sessions; /* sess_open links the new session first */
            s->conn_id = cid;
            s->mapped = 1;
            s->hnext = NULL;
            *conn_slot(p, cid) = s;
        }
        return 0;
    }
    if (!s->pend_head && sess_has_room(s) && sess_submit(s, x, now) == 0)
        return 0;
    fifo_push(&s->pend_head, &s->pend_tail, x);
    return 0;
}

/* ---- the interface ------------------------------------------------------- */

yb_pool *yb_pool_new(const yb_pool_cfg *cfg, const yb_pool_host *host, void *ud, char *err,
                     size_t errlen)
{
    yb_pool *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p->cfg = *cfg;
    p->host = *host;
    p->ud = ud;
    p->codec_host.write = host_write;
    p->codec_host.done = host_done;
    p->codec_host.close = host_close;
    p->codec_host.ready = host_ready;
    p->codec_host.notify = host->notify ? host_notify : NULL;
    p->codec_host.budget = cfg->budget;
    if (cfg->policy == YB_SESS_ORIGINAL &&
        !(p->conn_map = calloc(CONN_BUCKETS, sizeof *p->conn_map))) {
        snprintf(err, errlen, "out of memory");
        free(p);
        return NULL;
    }
    if (cfg->target->tls && cfg->tls_ctx) {
        p->tls = cfg->tls_ctx;
    } else if (cfg->target->tls) {
        p->own_tls = 1;
        yb_tls_client_opts t = *cfg->tls;
        t.session_cache = cfg->tls_resume;
        if (!t.alpn)
            t.alpn = cfg->ops == &yb_h1_client_ops ? "http/1.1" : "h2";
        p->tls = yb_tls_client_ctx_new(&t, err, errlen);
        if (!p->tls) {
            free(p->conn_map);
            free(p);
            return NULL;
        }
    }
    return p;
}

void yb_pool_free(yb_pool *p)
{
    if (!p)
        return;
    if (p->own_tls)
        yb_tls_ctx_free(p->tls);
    free(p->conn_map);
    free(p);
}

yb_tls_ctx *yb_pool_tls(const yb_pool *p)
{
    return p->tls;
}

unsigned yb_pool_preopen(yb_pool *p)
{
    unsigned n = 0;
    if (p->cfg.policy != YB_SESS_REUSE)
        return 0;
    while (p->n_persistent < p->cfg.sess_limit && may_open(p) && sess_open(p, NULL, 0) == 0)
        n++;
    return n;
}

unsigned yb_pool_preopening(const yb_pool *p)
{
    unsigned n = 0;
    for (const session *s = p->sessions; s; s = s->next)
        if (s->pre && !s->closing && !s->broken)
            n++;
    return n;
}

void yb_pool_submit(yb_pool *p, yb_exchange *x, uint64_t now)
{
    if (p->cfg.policy == YB_SESS_PER_REQUEST) {
        if (can_open_oneshot(p))
            sess_open(p, x, 1);
        else
            wait_push(p, x);
        return;
    }
    if (p->cfg.policy == YB_SESS_ORIGINAL) {
        /* the recorded connection's own session; waits while backing off */
        if (p->wait_head || submit_original(p, x, now) < 0)
            wait_push(p, x);
        return;
    }
    if (x->pin_session) {
        /* a chain's step: on the session of the step before it, which its
         * completion has just freed; if that one closed or is full, as any */
        for (session *s = p->sessions; s; s = s->next)
            if (s->id == x->pin_session) {
                if (sess_has_room(s) && sess_submit(s, x, now) == 0)
                    return;
                break;
            }
    }
    for (session *s = p->sessions; s; s = s->next) {
        if (sess_has_room(s)) {
            if (sess_submit(s, x, now) == 0)
                return;
            break;
        }
    }
    if (p->n_persistent < p->cfg.sess_limit && may_open(p)) {
        sess_open(p, x, 0);
        return;
    }
    wait_push(p, x);
}

void yb_pool_drain(yb_pool *p)
{
    while (p->wait_head) {
        if (p->cfg.policy == YB_SESS_ORIGINAL) {
            /* in order: the head first, by its recorded connection */
            if (!*conn_slot(p, p->wait_head->req->conn_id) && !may_open(p))
                break;
            submit_original(p, wait_pop(p), uv_hrtime());
            continue;
        }
        if (p->cfg.policy == YB_SESS_PER_REQUEST) {
            if (!can_open_oneshot(p))
                break;
            sess_open(p, wait_pop(p), 1);
            continue;
        }
        session *s = p->sessions;
        while (s && !sess_has_room(s))
            s = s->next;
        uint64_t now = uv_hrtime();
        if (s) {
            yb_exchange *x = wait_pop(p);
            if (sess_submit(s, x, now) < 0)
                submit_failed(s, x);
        } else if (p->n_persistent < p->cfg.sess_limit && may_open(p)) {
            sess_open(p, wait_pop(p), 0);
        } else {
            break;
        }
    }
}

void yb_pool_flush(yb_pool *p)
{
    if (!p->dirty)
        return;
    uint64_t now = uv_hrtime();
    while (p->dirty) {
        session *s = p->dirty;
        p->dirty = s->dnext;
        s->dirty = 0;
        if (!s->closing)
            p->cfg.ops->flush(s->codec, now);
    }
}

uint64_t yb_pool_waiting(const yb_pool *p)
{
    return p->n_wait;
}

uint64_t yb_pool_backoffs(const yb_pool *p)
{
    return p->backoffs;
}

/* Lowers *at to t + to (the time something started at t times out). */
static void expires(uint64_t *at, uint64_t t, uint64_t to)
{
    if (!*at || t + to < *at)
        *at = t + to;
}

uint64_t yb_pool_timeouts(yb_pool *p, uint64_t now, uint64_t to, int keep_streams)
{
    uint64_t at = 0; /* the earliest time what is left can time out */
    for (session *s = p->sessions, *next; s; s = next) {
        next = s->next;
        /* A session whose set-up never finishes (TCP accepted, but no
         * HTTP/2 SETTINGS) holds its opener on the pending list, out of
         * the transport's connect timer's reach: close it, which fails
         * the pending exchanges.  So is a pre-opened one (yb_pool_preopen:
         * no opener; requests that went on it before its HTTP/2 set-up
         * ended fail with it). */
        uint64_t setup_start = s->pend_head && s->pend_head == s->opener
                                   ? (s->opener->res.conn_start ? s->opener->res.conn_start : now)
                               : s->pre && !s->closing ? s->pre_start
                                                       : 0;
        if (setup_start && now - setup_start >= to) {
            char why[YB_REASON_MAX];
            const char *phase = !yb_transport_t_connected(s->t) ? "connect"
                                : p->tls && !yb_transport_t_tls_done(s->t) ? "TLS handshake"
                                                                          : "HTTP/2 settings";
            sess_close(s, YB_ERR_CONNECT_TIMEOUT, timeout_reason(why, sizeof why, to, phase));
            continue;
        }
        if (setup_start)
            expires(&at, setup_start, to);
        for (yb_exchange *x = s->inflight, *xn; x; x = xn) {
            xn = x->next;
            /* a STREAM subscription of a timed run lasts until the run
             * ends, once the server has answered it */
            if (x->req->open_ended && x->res.first_byte && keep_streams)
                continue;
            if (now - x->res.send_start < to) {
                expires(&at, x->res.send_start, to);
                continue;
            }
            list_unlink(&s->inflight, x);
            s->n_inflight--;
            int keep = p->cfg.ops->cancel(s->codec, x);
            char why[YB_REASON_MAX], ph[64];
            if (!x->res.sent)
                snprintf(ph, sizeof ph, "sending the request");
            else if (!x->res.first_byte)
                snprintf(ph, sizeof ph, "waiting for first byte");
            else
                snprintf(ph, sizeof ph, "response body, %llu bytes received",
                         (unsigned long long)x->res.bytes_in);
            x_fail(p, x, YB_ERR_TIMEOUT, timeout_reason(why, sizeof why, to, ph));
            if (!keep) {
                /* the rest of this session's exchanges did not time out:
                 * they end because we close it */
                sess_close(s, YB_ERR_TIMEOUT, "closed: another request on the session timed out");
                break;
            }
        }
    }
    /* Exchanges waiting for a session also time out (from their due time). */
    for (yb_exchange *x = p->wait_head, *xn; x; x = xn) {
        xn = x->next;
        if (now - x->res.due < to) {
            expires(&at, x->res.due, to);
            if (p->wait_in_order)
                break; /* the rest are due later, and time out later */
            continue;
        }
        if (x->prev)
            x->prev->next = x->next;
        else
            p->wait_head = x->next;
        if (x->next)
            x->next->prev = x->prev;
        else
            p->wait_tail = x->prev;
        x->next = x->prev = NULL;
        wait_left(p, x);
        char why[YB_REASON_MAX];
        x_fail(p, x, YB_ERR_TIMEOUT, timeout_reason(why, sizeof why, to, "waiting for a session"));
    }
    return at;
}

void yb_pool_finish_streams(yb_pool *p)
{
    if (!p->cfg.ops->finish)
        return;
    for (session *s = p->sessions; s; s = s->next) {
        if (s->closing)
            continue;
        int any = 0;
        for (yb_exchange *x = s->inflight; x; x = x->next)
            if (x->req->open_ended && p->cfg.ops->finish(s->codec, x) == 0)
                any = 1;
        if (any)
            mark_dirty(s);
    }
}

void yb_pool_withdraw(yb_pool *p)
{
    while (p->wait_head)
        p->host.drop(p->ud, wait_pop(p));
    for (session *s = p->sessions; s; s = s->next) {
        yb_exchange *keep_h = NULL, *keep_t = NULL, *x;
        while ((x = fifo_pop(&s->pend_head, &s->pend_tail))) {
            if (x->res.send_start) /* the opener, paying the set-up */
                fifo_push(&keep_h, &keep_t, x);
            else
                p->host.drop(p->ud, x);
        }
        s->pend_head = keep_h;
        s->pend_tail = keep_t;
    }
}

void yb_pool_cut_off(yb_pool *p)
{
    while (p->wait_head)
        p->host.drop(p->ud, wait_pop(p));
    for (session *s = p->sessions; s; s = s->next) {
        for (yb_exchange **l = &s->inflight; *l;) {
            yb_exchange *x = *l;
            list_unlink(l, x);
            p->cfg.ops->cancel(s->codec, x);
            p->host.drop(p->ud, x);
        }
        s->n_inflight = 0;
        while (s->pend_head)
            p->host.drop(p->ud, fifo_pop(&s->pend_head, &s->pend_tail));
        sess_close(s, YB_ERR_NONE, NULL);
    }
}

void yb_pool_close_all(yb_pool *p)
{
    for (session *s = p->sessions; s; s = s->next)
        sess_close(s, YB_ERR_NONE, "closed: the run ended");
}
