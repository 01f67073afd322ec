/* bench/floor_h2 [-p POLL] HOST PORT CONNS STREAMS COUNT|DURATION PATH BODY_FILE: the
 * floor of an h2c gRPC unary client's CPU per call.
 *
 * One thread, CONNS connections (TCP_NODELAY), STREAMS calls in flight on
 * each (at most the server's SETTINGS_MAX_CONCURRENT_STREAMS).  Each call is
 * a POST of PATH whose body is BODY_FILE's bytes as they are (already
 * gRPC-framed): one pre-encoded HEADERS block (static-table indexes and
 * literals without indexing, no Huffman, so the encoder needs no dynamic
 * table) with :method POST, :scheme http, :path, :authority HOST:PORT,
 * content-type application/grpc and te trailers -- h2load's request with
 * -H content-type -H te, less its user-agent -- then DATA frames pointing
 * into the file's buffer (no copy), as the server's connection and stream
 * windows and its SETTINGS_MAX_FRAME_SIZE allow.  Everything a pass of the
 * event loop produces for a connection (HEADERS, DATA, SETTINGS and PING
 * ACKs, WINDOW_UPDATEs) leaves with one writev(2); each readable socket is
 * read once (epoll, level-triggered).  With -p (a duration, e.g. 10us) it
 * polls for events that long before it sleeps in epoll_wait, as
 * yangblast's worker does.
 *
 * We announce SETTINGS_ENABLE_PUSH 0 and SETTINGS_INITIAL_WINDOW_SIZE 16 MiB
 * and raise the connection's window to 16 MiB, and give back what the
 * server's DATA consumed (WINDOW_UPDATE) once half a window is used.
 *
 * A call is done at its response's END_STREAM.  What is checked of each
 * answer, without decoding HPACK (so grpc-status and the other header
 * values are NOT checked): the response is HEADERS whose block starts with
 * 0x88 (:status 200 as static-table index 8, what nghttp2's encoder
 * sends), then DATA, then a trailers HEADERS with END_STREAM (a
 * trailers-only answer, which gRPC servers send for errors, fails the run),
 * its DATA bytes are the first answer's, and it comes after the whole
 * request was sent.  Any RST_STREAM, GOAWAY, PUSH_PROMISE, frame over 16 KB,
 * flow-control overrun, frame on a stream not open or malformed frame ends
 * the run with a message (exit 1), as do a closed connection and 10 s
 * without an answer.  It stops after COUNT calls, or starts none after
 * DURATION and lets those in flight finish.  Prints one line: requests,
 * seconds, its own user and system CPU (getrusage, from the first request
 * to the last answer), CPU us per call, the answers' DATA length.
 * Built on demand: make bench/floor_h2. */
#include "config.h"
#include "floor_common.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>

#define PROG "floor_h2"
#define MAX_CONNS 4096
#define MAX_STREAMS 1024
#define MAX_BODY (64u << 20)
#define MAX_PATH 4096
#define OUR_WINDOW (1u << 24)       /* stream and connection receive windows */
#define OUR_MAX_FRAME 16384         /* we announce no larger frames */
#define RBUF (4 * (OUR_MAX_FRAME + 9))
#define SMALL_CAP 65536             /* frame headers and HEADERS blocks of a pass */
#define IOV_CAP 1024
#define PINGS 16
#define WIN_MAX 0x7fffffff

enum { F_DATA, F_HEADERS, F_PRIORITY, F_RST, F_SETTINGS, F_PUSH, F_PING, F_GOAWAY, F_WINUP, F_CONT };
enum { FL_END_STREAM = 1, FL_ACK = 1, FL_END_HEADERS = 4, FL_PADDED = 8, FL_PRIORITY = 0x20 };

typedef struct {
    uint32_t id;          /* 0: slot free */
    int hdr_sent;
    size_t sent;          /* body bytes sent */
    int64_t win;          /* our send window on this stream */
    int resp;             /* 0 awaiting response HEADERS, 1 got them */
    uint64_t resp_data;   /* response DATA bytes */
    uint32_t recv_used;   /* DATA bytes received not given back */
} stream;

typedef struct {
    int fd, dirty, want_out, got_settings;
    int starved;          /* the output's room stopped the last pump */
    uint32_t next_id;
    unsigned active;
    int64_t win;          /* our send window on the connection */
    int64_t peer_init;    /* the server's SETTINGS_INITIAL_WINDOW_SIZE */
    uint32_t peer_max_frame, peer_max_streams;
    uint32_t recv_used;   /* connection DATA bytes not given back */
    unsigned acks;        /* SETTINGS ACKs to send */
    unsigned npings;
    uint8_t pings[PINGS][8];
    uint32_t cont_id;     /* a header block continues on this stream */
    int cont_end;         /* ... and ends it */
    /* output of this pass: iov[first..niov) not yet written */
    struct iovec iov[IOV_CAP];
    int niov, first;
    size_t small_len;
    uint8_t small[SMALL_CAP];
    size_t have;
    uint8_t rbuf[RBUF];
    stream *st;
} conn;

static const uint8_t *body;
static size_t body_len;
static uint8_t hblock[MAX_PATH + 256];
static size_t hblock_len;
static int epfd;
static unsigned streams_per_conn;
static uint64_t issued, done, limit_count;
static int stopping;
static uint64_t ref_data = UINT64_MAX; /* the first answer's DATA bytes */

static int fail(conn *c, uint32_t id, const char *what)
{
    fprintf(stderr, PROG ": connection %d, stream %u: %s\n", c->fd, id, what);
    return -1;
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- output --------------------------------------------------------------------- */

/* Room for n more bytes in small and k more iovecs. */
static int room(conn *c, size_t n, int k)
{
    if (c->small_len + n <= SMALL_CAP && c->niov + k <= IOV_CAP)
        return 1;
    c->starved = 1;
    return 0;
}

/* Appends n bytes of small data (copied), extending the last iovec when it
 * ends where they start. */
static void put_small(conn *c, const void *p, size_t n)
{
    uint8_t *at = c->small + c->small_len;
    memcpy(at, p, n);
    c->small_len += n;
    struct iovec *last = c->niov > c->first ? &c->iov[c->niov - 1] : NULL;
    if (last && (uint8_t *)last->iov_base + last->iov_len == at)
        last->iov_len += n;
    else
        c->iov[c->niov++] = (struct iovec){.iov_base = at, .iov_len = n};
}

static void put_frame_head(conn *c, size_t len, int type, int flags, uint32_t id)
{
    uint8_t h[9] = {(uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len, (uint8_t)type,
                    (uint8_t)flags, (uint8_t)(id >> 24 & 0x7f), (uint8_t)(id >> 16),
                    (uint8_t)(id >> 8), (uint8_t)id};
    put_small(c, h, 9);
}

static void put_winup(conn *c, uint32_t id, uint32_t inc)
{
    uint8_t p[4] = {(uint8_t)(inc >> 24), (uint8_t)(inc >> 16), (uint8_t)(inc >> 8), (uint8_t)inc};
    put_frame_head(c, 4, F_WINUP, 0, id);
    put_small(c, p, 4);
}

/* Emits what stream s may send now: its HEADERS, then DATA as far as the
 * windows and the output's room allow. */
static void pump_stream(conn *c, stream *s)
{
    if (!s->hdr_sent) {
        if (!room(c, 9 + hblock_len, 1))
            return;
        put_frame_head(c, hblock_len, F_HEADERS, FL_END_HEADERS, s->id);
        put_small(c, hblock, hblock_len);
        s->hdr_sent = 1;
    }
    while (s->sent < body_len && s->win > 0 && c->win > 0 && room(c, 9, 2)) {
        size_t n = body_len - s->sent;
        if (n > c->peer_max_frame)
            n = c->peer_max_frame;
        if ((int64_t)n > s->win)
            n = (size_t)s->win;
        if ((int64_t)n > c->win)
            n = (size_t)c->win;
        int end = s->sent + n == body_len;
        put_frame_head(c, n, F_DATA, end ? FL_END_STREAM : 0, s->id);
        c->iov[c->niov++] = (struct iovec){.iov_base = (void *)(body + s->sent), .iov_len = n};
        s->sent += n;
        s->win -= (int64_t)n;
        c->win -= (int64_t)n;
    }
}

/* Turns c's state into frames: SETTINGS and PING ACKs, WINDOW_UPDATEs,
 * then the streams' HEADERS and DATA, starting new calls as the run
 * wants. */
static int pump(conn *c)
{
    c->starved = 0;
    for (; c->acks && room(c, 9, 1); c->acks--)
        put_frame_head(c, 0, F_SETTINGS, FL_ACK, 0);
    for (unsigned i = 0; i < c->npings && room(c, 17, 1); i++) {
        put_frame_head(c, 8, F_PING, FL_ACK, 0);
        put_small(c, c->pings[i], 8);
        memmove(c->pings[i], c->pings[c->npings - 1], 8);
        c->npings--, i--;
    }
    if (c->recv_used >= OUR_WINDOW / 2 && room(c, 13, 1)) {
        put_winup(c, 0, c->recv_used);
        c->recv_used = 0;
    }
    unsigned max = streams_per_conn < c->peer_max_streams ? streams_per_conn : c->peer_max_streams;
    for (unsigned i = 0; i < streams_per_conn; i++) {
        stream *s = &c->st[i];
        if (!s->id) {
            if (stopping || c->active >= max || (limit_count && issued >= limit_count))
                continue;
            if (c->next_id > WIN_MAX)
                return fail(c, 0, "stream ids used up (2^31)");
            *s = (stream){.id = c->next_id, .win = c->peer_init};
            c->next_id += 2;
            c->active++;
            issued++;
        }
        if (s->recv_used >= OUR_WINDOW / 2 && room(c, 13, 1)) {
            put_winup(c, s->id, s->recv_used);
            s->recv_used = 0;
        }
        pump_stream(c, s);
    }
    return 0;
}

static int set_out(conn *c, int out)
{
    struct epoll_event ev = {.events = EPOLLIN | (out ? EPOLLOUT : 0), .data.ptr = c};
    if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) < 0)
        return fail(c, 0, strerror(errno));
    c->want_out = out;
    return 0;
}

/* One writev of what is queued.  Returns 0 or -1. */
static int flush(conn *c)
{
    c->dirty = 0;
    if (c->first == c->niov)
        return c->want_out ? set_out(c, 0) : 0;
    ssize_t w = writev(c->fd, c->iov + c->first, c->niov - c->first);
    if (w < 0) {
        if (errno != EAGAIN)
            return fail(c, 0, strerror(errno));
        w = 0;
    }
    size_t left = (size_t)w;
    while (c->first < c->niov && left >= c->iov[c->first].iov_len)
        left -= c->iov[c->first++].iov_len;
    if (c->first == c->niov) {
        c->first = c->niov = 0;
        c->small_len = 0;
        return c->want_out ? set_out(c, 0) : 0;
    }
    c->iov[c->first].iov_base = (uint8_t *)c->iov[c->first].iov_base + left;
    c->iov[c->first].iov_len -= left;
    return c->want_out ? 0 : set_out(c, 1);
}

/* ---- input ---------------------------------------------------------------------- */

static stream *find(conn *c, uint32_t id)
{
    for (unsigned i = 0; id && i < streams_per_conn; i++)
        if (c->st[i].id == id)
            return &c->st[i];
    return NULL;
}

/* The answer on s ended. */
static int ended(conn *c, stream *s)
{
    if (!s->resp)
        return fail(c, s->id, "a trailers-only answer (a gRPC error; grpc-status not decoded)");
    if (s->sent < body_len)
        return fail(c, s->id, "an answer before the whole request was sent");
    if (ref_data == UINT64_MAX) {
        ref_data = s->resp_data;
    } else if (s->resp_data != ref_data) {
        char m[96];
        snprintf(m, sizeof m, "an answer of %llu DATA bytes where the first had %llu",
                 (unsigned long long)s->resp_data, (unsigned long long)ref_data);
        return fail(c, s->id, m);
    }
    s->id = 0;
    c->active--;
    done++;
    return 0;
}

static int on_settings(conn *c, int flags, const uint8_t *p, size_t len)
{
    if (flags & FL_ACK)
        return len ? fail(c, 0, "a SETTINGS ACK with a payload") : 0;
    if (len % 6)
        return fail(c, 0, "a SETTINGS frame whose length is not a multiple of 6");
    for (size_t i = 0; i < len; i += 6) {
        unsigned key = (unsigned)p[i] << 8 | p[i + 1];
        uint32_t v = get32(p + i + 2);
        if (key == 3) {
            c->peer_max_streams = v;
        } else if (key == 4) {
            if (v > WIN_MAX)
                return fail(c, 0, "SETTINGS_INITIAL_WINDOW_SIZE over 2^31-1");
            for (unsigned k = 0; k < streams_per_conn; k++)
                if (c->st[k].id)
                    c->st[k].win += (int64_t)v - c->peer_init;
            c->peer_init = v;
        } else if (key == 5) {
            if (v < 16384 || v > 16777215)
                return fail(c, 0, "SETTINGS_MAX_FRAME_SIZE outside 16384..2^24-1");
            c->peer_max_frame = v;
        }
    }
    c->got_settings = 1;
    c->acks++;
    return 0;
}

static int on_winup(conn *c, uint32_t id, const uint8_t *p, size_t len)
{
    if (len != 4)
        return fail(c, id, "a WINDOW_UPDATE of length other than 4");
    uint32_t inc = get32(p) & WIN_MAX;
    if (!inc)
        return fail(c, id, "a WINDOW_UPDATE of 0");
    int64_t *w = &c->win;
    if (id) {
        stream *s = find(c, id);
        if (!s)
            return 0; /* a stream already closed: allowed */
        w = &s->win;
    }
    if (*w + inc > WIN_MAX)
        return fail(c, id, "a WINDOW_UPDATE taking the window over 2^31-1");
    *w += inc;
    return 0;
}

static int on_goaway(conn *c, const uint8_t *p, size_t len)
{
    if (len < 8)
        return fail(c, 0, "a GOAWAY shorter than 8 bytes");
    char dbg[81];
    size_t n = len - 8 < sizeof dbg - 1 ? len - 8 : sizeof dbg - 1;
    for (size_t i = 0; i < n; i++)
        dbg[i] = p[8 + i] >= 0x20 && p[8 + i] < 0x7f ? (char)p[8 + i] : '?';
    dbg[n] = 0;
    char m[160];
    snprintf(m, sizeof m, "GOAWAY, last stream %u, error code %u, \"%s\"", get32(p) & WIN_MAX,
             get32(p + 4), dbg);
    return fail(c, 0, m);
}

/* A HEADERS frame's block [p, p + len) after padding and priority. */
static int on_headers(conn *c, uint32_t id, int flags, const uint8_t *p, size_t len)
{
    stream *s = find(c, id);
    if (!s)
        return fail(c, id, "HEADERS on a stream not open");
    size_t pad = 0;
    if (flags & FL_PADDED) {
        if (len < 1)
            return fail(c, id, "a padded HEADERS frame without its pad length");
        pad = *p++;
        len--;
    }
    if (flags & FL_PRIORITY) {
        if (len < 5)
            return fail(c, id, "a HEADERS frame too short for its priority");
        p += 5, len -= 5;
    }
    if (pad > len)
        return fail(c, id, "a HEADERS frame's padding longer than the frame");
    len -= pad;
    if (!s->resp && !(flags & FL_END_STREAM)) {
        if (!len || p[0] != 0x88)
            return fail(c, id, "response HEADERS not starting with :status 200 (static index 8)");
        s->resp = 1;
    } else if (s->resp && !(flags & FL_END_STREAM)) {
        return fail(c, id, "a second HEADERS without END_STREAM");
    }
    if (!(flags & FL_END_HEADERS)) {
        c->cont_id = id;
        c->cont_end = flags & FL_END_STREAM;
        return 0;
    }
    return (flags & FL_END_STREAM) ? ended(c, s) : 0;
}

static int on_data(conn *c, uint32_t id, int flags, const uint8_t *p, size_t len)
{
    stream *s = find(c, id);
    if (!s)
        return fail(c, id, "DATA on a stream not open");
    if (!s->resp)
        return fail(c, id, "DATA before the response HEADERS");
    if (c->recv_used + len > OUR_WINDOW || s->recv_used + len > OUR_WINDOW)
        return fail(c, id, "DATA over the window we gave");
    c->recv_used += (uint32_t)len;
    s->recv_used += (uint32_t)len;
    size_t pad = 0;
    if (flags & FL_PADDED) {
        if (len < 1 || (pad = p[0]) > len - 1)
            return fail(c, id, "a DATA frame's padding longer than the frame");
        len -= 1 + pad;
    }
    s->resp_data += len;
    return (flags & FL_END_STREAM) ? fail(c, id, "END_STREAM on DATA: an answer without trailers")
                                   : 0;
}

/* One whole frame. */
static int frame(conn *c, const uint8_t *h, const uint8_t *p)
{
    size_t len = (size_t)h[0] << 16 | (size_t)h[1] << 8 | h[2];
    int type = h[3], flags = h[4];
    uint32_t id = get32(h + 5) & WIN_MAX;
    if (!c->got_settings && type != F_SETTINGS)
        return fail(c, id, "the server's first frame is not SETTINGS");
    if (c->cont_id && (type != F_CONT || id != c->cont_id))
        return fail(c, id, "a header block not continued by CONTINUATION");
    switch (type) {
    case F_DATA:
        return on_data(c, id, flags, p, len);
    case F_HEADERS:
        return on_headers(c, id, flags, p, len);
    case F_CONT:
        if (!c->cont_id)
            return fail(c, id, "CONTINUATION without HEADERS");
        if (!(flags & FL_END_HEADERS))
            return 0;
        c->cont_id = 0;
        if (!c->cont_end)
            return 0;
        stream *s = find(c, id);
        return s ? ended(c, s) : fail(c, id, "CONTINUATION on a stream not open");
    case F_RST:
        return fail(c, id, len == 4 ? "RST_STREAM" : "a malformed RST_STREAM");
    case F_SETTINGS:
        return id ? fail(c, id, "SETTINGS on a stream") : on_settings(c, flags, p, len);
    case F_PUSH:
        return fail(c, id, "PUSH_PROMISE (we disabled push)");
    case F_PING:
        if (id || len != 8)
            return fail(c, id, "a malformed PING");
        if (flags & FL_ACK)
            return 0;
        if (c->npings == PINGS)
            return fail(c, 0, "more than 16 PINGs unanswered");
        memcpy(c->pings[c->npings++], p, 8);
        return 0;
    case F_GOAWAY:
        return on_goaway(c, p, len);
    case F_WINUP:
        return on_winup(c, id, p, len);
    default: /* PRIORITY, unknown types: ignored */
        return 0;
    }
}

/* Reads once and takes every whole frame.  Returns 0 or -1. */
static int readable(conn *c)
{
    ssize_t r = read(c->fd, c->rbuf + c->have, RBUF - c->have);
    if (r < 0)
        return errno == EAGAIN ? 0 : fail(c, 0, strerror(errno));
    if (r == 0)
        return fail(c, 0, "the server closed the connection");
    c->have += (size_t)r;
    size_t off = 0;
    while (c->have - off >= 9) {
        const uint8_t *h = c->rbuf + off;
        size_t len = (size_t)h[0] << 16 | (size_t)h[1] << 8 | h[2];
        if (len > OUR_MAX_FRAME)
            return fail(c, 0, "a frame over 16 KB (we announced no more)");
        if (c->have - off < 9 + len)
            break;
        if (frame(c, h, h + 9) < 0)
            return -1;
        off += 9 + len;
    }
    memmove(c->rbuf, c->rbuf + off, c->have - off);
    c->have -= off;
    c->dirty = 1;
    return 0;
}

/* ---- set-up ----------------------------------------------------------------------- */

/* Appends v as an HPACK integer with an n-bit prefix under the bits of
 * first.  Returns 0, or -1 when it does not fit. */
static int hp_int(uint8_t first, int n, size_t v)
{
    size_t max = ((size_t)1 << n) - 1;
    if (hblock_len + 8 > sizeof hblock)
        return -1;
    if (v < max) {
        hblock[hblock_len++] = (uint8_t)(first | v);
        return 0;
    }
    hblock[hblock_len++] = (uint8_t)(first | max);
    for (v -= max; v >= 128; v >>= 7)
        hblock[hblock_len++] = (uint8_t)(v % 128 + 128);
    hblock[hblock_len++] = (uint8_t)v;
    return 0;
}

/* A string literal, no Huffman. */
static int hp_str(const char *s)
{
    size_t n = strlen(s);
    if (hp_int(0, 7, n) < 0 || hblock_len + n > sizeof hblock)
        return -1;
    memcpy(hblock + hblock_len, s, n);
    hblock_len += n;
    return 0;
}

/* The request's header block (see the top). */
static int make_block(const char *path, const char *authority)
{
    hblock[hblock_len++] = 0x83; /* :method POST */
    hblock[hblock_len++] = 0x86; /* :scheme http */
    /* literals without indexing: 0000 + 4-bit name index, 0 = new name */
    if (hp_int(0, 4, 4) < 0 || hp_str(path) < 0 ||              /* :path */
        hp_int(0, 4, 1) < 0 || hp_str(authority) < 0 ||         /* :authority */
        hp_int(0, 4, 31) < 0 || hp_str("application/grpc") < 0 || /* content-type */
        hp_int(0, 4, 0) < 0 || hp_str("te") < 0 || hp_str("trailers") < 0)
        return -1;
    return 0;
}

/* The preface, our SETTINGS and the connection's WINDOW_UPDATE. */
static void greet(conn *c)
{
    static const char PREFACE[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    static const uint8_t SET[] = {0, 2, 0, 0, 0, 0, /* ENABLE_PUSH 0 */
                                  0, 4, OUR_WINDOW >> 24, (OUR_WINDOW >> 16) & 0xff,
                                  (OUR_WINDOW >> 8) & 0xff, OUR_WINDOW & 0xff};
    put_small(c, PREFACE, sizeof PREFACE - 1);
    put_frame_head(c, sizeof SET, F_SETTINGS, 0, 0);
    put_small(c, SET, sizeof SET);
    put_winup(c, 0, OUR_WINDOW - 65535);
}

int main(int argc, char **argv)
{
    uint64_t poll_ns = 0;
    for (int o; (o = getopt(argc, argv, "p:")) != -1;)
        if (o != 'p' || floor_parse_poll(PROG, optarg, &poll_ns) < 0)
            return 2;
    if (argc - optind != 7) {
        fprintf(stderr,
                "usage: " PROG " [-p POLL] HOST PORT CONNS STREAMS COUNT|DURATION PATH BODY_FILE\n");
        return 2;
    }
    argv += optind - 1; /* the operands as argv[1..7] */
    uint16_t port;
    uint64_t nconns, nstreams;
    floor_limit lim;
    if (floor_parse_common(PROG, argv[2], argv[3], argv[5], MAX_CONNS, &port, &nconns, &lim) < 0)
        return 2;
    if (yb_parse_u64(argv[4], 1, MAX_STREAMS, &nstreams) < 0) {
        fprintf(stderr, PROG ": streams '%s': an integer 1..%d\n", argv[4], MAX_STREAMS);
        return 2;
    }
    streams_per_conn = (unsigned)nstreams;
    limit_count = lim.count;
    const char *path = argv[6];
    char authority[128];
    int v6 = strchr(argv[1], ':') != NULL;
    snprintf(authority, sizeof authority, "%s%s%s:%u", v6 ? "[" : "", argv[1], v6 ? "]" : "",
             (unsigned)port);
    if (path[0] != '/' || strlen(path) > MAX_PATH || strlen(argv[1]) > 100 ||
        make_block(path, authority) < 0) {
        fprintf(stderr, PROG ": PATH: starting with '/', at most %d bytes; HOST at most 100\n",
                MAX_PATH);
        return 2;
    }
    int status = 1;
    conn *cs = NULL;
    uint8_t *file = floor_read_file(PROG, argv[7], MAX_BODY, &body_len);
    if (!file)
        return 2;
    body = file;
    if ((epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 || !(cs = calloc(nconns, sizeof *cs))) {
        perror(PROG);
        goto out;
    }
    for (uint64_t i = 0; i < nconns; i++)
        cs[i].fd = -1;
    for (uint64_t i = 0; i < nconns; i++) {
        conn *c = &cs[i];
        if (!(c->st = calloc(nstreams, sizeof *c->st))) {
            perror(PROG);
            goto out;
        }
        if ((c->fd = floor_connect(PROG, argv[1], port, epfd, EPOLLIN, c)) < 0)
            goto out;
        c->next_id = 1;
        c->win = c->peer_init = 65535;
        c->peer_max_frame = 16384;
        c->peer_max_streams = UINT32_MAX;
    }
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    uint64_t t0 = floor_now(), deadline = lim.ns ? t0 + lim.ns : 0;
    floor_watch watch = {0};
    for (uint64_t i = 0; i < nconns; i++) {
        greet(&cs[i]);
        if (pump(&cs[i]) < 0 || flush(&cs[i]) < 0)
            goto out;
    }
    struct epoll_event evs[256];
    while (issued > done) {
        int n = floor_wait(epfd, evs, 256, poll_ns);
        if (n < 0) {
            perror(PROG ": epoll_wait");
            goto out;
        }
        for (int i = 0; i < n; i++) {
            conn *c = evs[i].data.ptr;
            if (evs[i].events & EPOLLOUT)
                c->dirty = 1;
            if ((evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) && readable(c) < 0)
                goto out;
        }
        uint64_t now = floor_now();
        if (deadline && now >= deadline)
            stopping = 1;
        for (int i = 0; i < n; i++) {
            conn *c = evs[i].data.ptr;
            /* again while the output's room, not the windows, held
             * frames back and all of it went out */
            while (c->dirty) {
                if (pump(c) < 0 || flush(c) < 0)
                    goto out;
                c->dirty = c->starved && !c->want_out;
            }
        }
        if (floor_watch_check(PROG, &watch, done, issued - done, now) < 0)
            goto out;
    }
    uint64_t t1 = floor_now();
    getrusage(RUSAGE_SELF, &r1);
    char extra[96];
    snprintf(extra, sizeof extra, "response_data_bytes %llu poll_ns %llu",
             (unsigned long long)ref_data, (unsigned long long)poll_ns);
    floor_report(PROG, done, nconns, t0, t1, &r0, &r1, extra);
    status = 0;
out:
    if (cs)
        for (uint64_t i = 0; i < nconns; i++) {
            if (cs[i].fd >= 0)
                close(cs[i].fd);
            free(cs[i].st);
        }
    free(cs);
    free(file);
    if (epfd >= 0)
        close(epfd);
    return status;
}
