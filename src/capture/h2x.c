/* HTTP/2 extraction.  Frames are parsed here, with every length checked
 * against what the frame holds; header blocks (HEADERS + CONTINUATION,
 * PUSH_PROMISE) are decoded with nghttp2's HPACK inflater, one per
 * direction, never with a full nghttp2 session (a session would answer,
 * enforce flow control and refuse what a capture legitimately shows).
 * Requests are assembled per stream: the client's HEADERS give the record,
 * its DATA the body (for gRPC the length-prefixed messages, kept as they
 * were), END_STREAM completes it; the server's :status and grpc-status
 * (headers or trailers) give the expected results.
 *
 * A hole in a DATA payload costs only that stream.  A hole anywhere else
 * loses the framing or, worse, the HPACK dynamic table, which later header
 * blocks depend on: that direction is abandoned (counted) and the streams
 * it leaves open are dropped or written without a status. */
#include "config.h"
#include "capture/capture_priv.h"
#include "gnmi/gnmi_msg.h"
#include "util/blkcache.h"

#include <nghttp2/nghttp2.h>
#include <stdlib.h>
#include <string.h>

const uint8_t yb_cap_h2_preface[YB_H2_PREFACE_LEN] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

#define MAX_STREAMS 1024          /* streams tracked at once per connection */
#define MAX_HEADER_BLOCK (256u << 10)
#define FRAME_HDR 9

enum { F_DATA = 0, F_HEADERS = 1, F_PRIORITY = 2, F_RST = 3, F_SETTINGS = 4, F_PUSH = 5,
       F_CONT = 9 };
enum { FL_END_STREAM = 1, FL_ACK = 1, FL_END_HEADERS = 4, FL_PADDED = 8, FL_PRIORITY = 0x20 };

typedef struct {
    uint32_t id;
    yb_cap_slot *slot; /* NULL: not recorded (over the stream cap, queue full) */
    int have_req;      /* the client's HEADERS were seen */
    int req_done, resp_done;
    int broken;        /* request lost: why + 1 (yb_cap_drop_reason) */
    int lost[2];       /* reported lost (yb_cap_h2_lost) per direction */
    uint8_t *body;
    size_t body_len, body_cap;
    size_t hdr_bytes;
} stream;

typedef struct {
    nghttp2_hd_inflater *inf;
    int dead;
    size_t preface_got;   /* client direction: preface bytes matched */
    uint8_t hdr[FRAME_HDR];
    size_t hdr_got;
    uint32_t flen, fstream;
    uint8_t ftype, fflags;
    int in_payload;
    int skip;             /* the payload is being discarded */
    uint8_t *pay;
    size_t pay_got, pay_cap;
    uint8_t *hb;          /* header block being assembled */
    size_t hb_len, hb_cap;
    int hb_active, hb_end_stream, hb_push;
    uint32_t hb_stream;
} dirp;

struct yb_cap_h2 {
    yb_capture *c;
    uint64_t conn_id;
    char scheme[8];
    dirp d[2];
    stream *s;
    size_t ns, scap;
    uint64_t mem; /* bytes held by this connection's buffers */
};

static uint32_t be24(const uint8_t *p)
{
    return ((uint32_t)p[0] << 16) | ((uint32_t)p[1] << 8) | p[2];
}

static uint32_t be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* Charges n bytes to this connection and the total; returns 0 or -1. */
static int charge(yb_cap_h2 *h, size_t n)
{
    if (h->mem + n > yb_cap_opts(h->c)->max_flow_buffer || yb_cap_mem_charge(h->c, n) < 0)
        return -1;
    h->mem += n;
    return 0;
}

static void uncharge(yb_cap_h2 *h, size_t n)
{
    if (n > h->mem)
        n = h->mem;
    h->mem -= n;
    yb_cap_mem_release(h->c, n);
}

/* Grows *buf (capacity *cap, charged) to hold need bytes, to at least
 * first when it is empty; returns 0 or -1. */
static int reserve_first(yb_cap_h2 *h, uint8_t **buf, size_t *cap, size_t need, size_t first)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : first;
    while (nc < need)
        nc *= 2;
    if (charge(h, nc - *cap) < 0)
        return -1;
    uint8_t *nb = realloc(*buf, nc);
    if (!nb) {
        uncharge(h, nc - *cap);
        return -1;
    }
    *buf = nb;
    *cap = nc;
    return 0;
}

static int reserve(yb_cap_h2 *h, uint8_t **buf, size_t *cap, size_t need)
{
    return reserve_first(h, buf, cap, need, 1024);
}

/* The size a stream's body buffer starts with, given its first DATA
 * payload p[0..n): the whole of the first gRPC message when p starts with
 * its prefix (flag, 4-byte length) and it is at most 1 MB, so that a body
 * arriving in several frames is not copied by doubling reallocs on the
 * way; the usual 1 KB otherwise.  (Only a size: p is not trusted.) */
static size_t first_body_size(const uint8_t *p, size_t n)
{
    if (n >= 5 && p[0] <= 1) {
        uint32_t m = be32(p + 1);
        if (m <= (1u << 20) - 5 && m + 5 > n)
            return m + 5;
    }
    return n > 1024 ? n : 1024;
}

static void release_buf(yb_cap_h2 *h, uint8_t **buf, size_t *len, size_t *cap)
{
    free(*buf);
    uncharge(h, *cap);
    *buf = NULL;
    *cap = 0;
    if (len)
        *len = 0;
}

/* ---- nghttp2's allocations ---------------------------------------------
 *
 * The HPACK inflaters allocate a buffer for every string they decode and
 * an entry for every field they add to the dynamic table, two inflaters
 * per connection: through glibc that was about a tenth of a capture's time
 * (many sizes, many blocks alive at once: its bins' slow path).  They
 * allocate here instead, from a cache of freed blocks per size class
 * (util/blkcache) that a capture's connections share (a capture runs in
 * one thread) and that lives as long as the capture, at most POOL_KEEP
 * blocks per class.  Every block starts with a header saying what it
 * holds (a class's size, or the size asked for when over the largest
 * class: then a plain malloc block). */
#define POOL_GRAIN_LOG2 6u /* classes of 64 bytes */
#define POOL_GRAIN (1u << POOL_GRAIN_LOG2)
#define POOL_CLASSES 16u /* up to 1 KB */
#define POOL_KEEP 512u

typedef union {
    size_t cap; /* what the block holds after the header */
    max_align_t align;
} blk_hdr;

struct yb_cap_h2_pool {
    nghttp2_mem mem;
    yb_blkcache *bc; /* keeps headers: class k holds k * POOL_GRAIN after one */
};

static const yb_blkcache_cfg pool_cfg = {
    .grain_log2 = POOL_GRAIN_LOG2, .adj = -(long)sizeof(blk_hdr),
    .classes = POOL_CLASSES + 1, .keep = POOL_KEEP,
    .max = sizeof(blk_hdr) + POOL_CLASSES * POOL_GRAIN,
};

static void *pool_malloc(size_t size, void *ud)
{
    yb_cap_h2_pool *pl = ud;
    size_t cap = size;
    if (size <= POOL_CLASSES * POOL_GRAIN) {
        size_t need = sizeof(blk_hdr) + (size ? size : 1);
        blk_hdr *h = yb_blkcache_get(pl->bc, &pool_cfg, need);
        if (h)
            return h + 1;
        cap = yb_blkcache_class_size(&pool_cfg, yb_blkcache_class_of(&pool_cfg, need)) - sizeof *h;
    }
    if (cap > SIZE_MAX - sizeof(blk_hdr))
        return NULL;
    blk_hdr *h = malloc(sizeof *h + cap);
    if (!h)
        return NULL;
    h->cap = cap;
    return h + 1;
}

static size_t pool_capacity(const void *p)
{
    return ((const blk_hdr *)p - 1)->cap;
}

static void pool_free(void *p, void *ud)
{
    yb_cap_h2_pool *pl = ud;
    if (!p)
        return;
    blk_hdr *h = (blk_hdr *)p - 1;
    if (!yb_blkcache_put(pl->bc, &pool_cfg, h, sizeof *h + h->cap))
        free(h);
}

static void *pool_calloc(size_t n, size_t size, void *ud)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    void *p = pool_malloc(n * size, ud);
    if (p)
        memset(p, 0, n * size);
    return p;
}

static void *pool_realloc(void *p, size_t size, void *ud)
{
    if (!p)
        return pool_malloc(size, ud);
    if (!size) {
        pool_free(p, ud);
        return NULL;
    }
    size_t cap = pool_capacity(p);
    if (size <= cap)
        return p;
    void *q = pool_malloc(size, ud);
    if (!q)
        return NULL;
    memcpy(q, p, cap);
    pool_free(p, ud);
    return q;
}

yb_cap_h2_pool *yb_cap_h2_pool_new(void)
{
    yb_cap_h2_pool *pl = calloc(1, sizeof *pl);
    if (pl && !(pl->bc = yb_blkcache_new(&pool_cfg))) {
        free(pl);
        return NULL;
    }
    if (pl) {
        pl->mem.mem_user_data = pl;
        pl->mem.malloc = pool_malloc;
        pl->mem.free = pool_free;
        pl->mem.calloc = pool_calloc;
        pl->mem.realloc = pool_realloc;
    }
    return pl;
}

void yb_cap_h2_pool_free(yb_cap_h2_pool *pl)
{
    if (!pl)
        return;
    yb_blkcache_free(pl->bc);
    free(pl);
}

yb_cap_h2 *yb_cap_h2_new(yb_capture *c, uint64_t conn_id, const char *scheme)
{
    yb_cap_h2 *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->c = c;
    h->conn_id = conn_id;
    snprintf(h->scheme, sizeof h->scheme, "%s", scheme);
    yb_cap_h2_pool *pl = yb_cap_h2_pool_of(c);
    for (int i = 0; i < 2; i++)
        if (nghttp2_hd_inflate_new2(&h->d[i].inf, pl ? &pl->mem : NULL) != 0) {
            yb_cap_h2_free(h);
            return NULL;
        }
    return h;
}

static stream *find(yb_cap_h2 *h, uint32_t id)
{
    for (size_t i = h->ns; i-- > 0;)
        if (h->s[i].id == id)
            return &h->s[i];
    return NULL;
}

static stream *add_stream(yb_cap_h2 *h, uint32_t id)
{
    if (h->ns == MAX_STREAMS)
        return NULL;
    if (h->ns == h->scap) {
        size_t nc = h->scap ? h->scap * 2 : 8;
        stream *ns = realloc(h->s, nc * sizeof *ns);
        if (!ns)
            return NULL;
        h->s = ns;
        h->scap = nc;
    }
    stream *s = &h->s[h->ns++];
    memset(s, 0, sizeof *s);
    s->id = id;
    return s;
}

/* Grows s's body buffer to hold need bytes; the first one comes from the
 * capture's buffers, first_body_size(p, n) or more.  Returns 0 or -1. */
static int reserve_body(yb_cap_h2 *h, stream *s, size_t need, const uint8_t *p, size_t n)
{
    if (s->body_cap)
        return reserve(h, &s->body, &s->body_cap, need);
    size_t want = first_body_size(p, n), cap;
    if (want < need)
        want = need;
    uint8_t *b = yb_cap_buf_take(h->c, want, &cap);
    if (!b)
        return -1;
    if (charge(h, cap) < 0) {
        /* Over the caps: what the message's prefix claims (or the buffer
         * at hand) may be more than the body needs; a buffer of the usual
         * size for need may still fit, as it would have without the hint. */
        yb_cap_buf_give(h->c, b, cap);
        s->body = NULL;
        s->body_cap = 0;
        return reserve(h, &s->body, &s->body_cap, need);
    }
    s->body = b;
    s->body_cap = cap;
    return 0;
}

/* Gives s's body buffer back (uncharged). */
static void release_body(yb_cap_h2 *h, stream *s)
{
    yb_cap_buf_give(h->c, s->body, s->body_cap);
    uncharge(h, s->body_cap);
    s->body = NULL;
    s->body_len = s->body_cap = 0;
}

static void remove_stream(yb_cap_h2 *h, stream *s)
{
    release_body(h, s);
    size_t i = (size_t)(s - h->s);
    memmove(&h->s[i], &h->s[i + 1], (h->ns - i - 1) * sizeof *s);
    h->ns--;
}

static void mark_broken(yb_cap_h2 *h, stream *s, yb_cap_drop_reason why)
{
    if (s->broken)
        return;
    s->broken = (int)why + 1;
    release_body(h, s);
}

/* The client finished its request: the record is complete. */
static void request_done(yb_cap_h2 *h, stream *s)
{
    s->req_done = 1;
    if (!s->slot)
        return;
    if (s->broken || !s->have_req) {
        yb_cap_slot_drop(h->c, s->slot, s->broken ? (yb_cap_drop_reason)(s->broken - 1)
                                                   : YB_DROP_PARSE);
        s->slot = NULL;
        return;
    }
    yb_request *r = yb_cap_slot_req(s->slot);
    int grpc = 0;
    for (size_t i = 0; i < r->n_headers; i++)
        if (!strcmp(r->headers[i].name, "content-type") && r->headers[i].value_len >= 16 &&
            !memcmp(r->headers[i].value, "application/grpc", 16))
            grpc = 1;
    if (grpc) {
        /* The body stays framed (as the corpus format wants); the walk only
         * checks that it is well formed. */
        size_t off = 0, ml;
        const uint8_t *m;
        int rc;
        while ((rc = yb_grpc_next(s->body, s->body_len, &off, &m, &ml, SIZE_MAX)) == 1)
            ;
        if (rc < 0)
            yb_cap_stats(h->c)->grpc_framing_errors++;
    }
    if (s->body_len) {
        /* The record takes the buffer; its charge moves to the queue. */
        uncharge(h, s->body_cap);
        yb_cap_slot_take_body(s->slot, s->body, s->body_len, s->body_cap);
        s->body = NULL;
        s->body_len = s->body_cap = 0;
    }
    r->protocol = !strncmp(r->path, "/gnmi.gNMI/", 11) ? YB_PROTO_GNMI : YB_PROTO_HTTP2;
    yb_cap_slot_complete(h->c, s->slot);
}

/* Ends a stream from either side; once both are done the slot goes. */
static void maybe_finish(yb_cap_h2 *h, stream *s)
{
    if (!(s->req_done && s->resp_done))
        return;
    if (s->slot)
        yb_cap_slot_done(h->c, s->slot);
    remove_stream(h, s);
}

/* Parses a small decimal (grpc-status, :status); -1 if not 1..3 digits. */
static int small_num(const uint8_t *v, size_t n)
{
    if (n == 0 || n > 3)
        return -1;
    int x = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return -1;
        x = x * 10 + (v[i] - '0');
    }
    return x;
}

static int name_is(const nghttp2_nv *nv, const char *s)
{
    size_t l = strlen(s);
    return nv->namelen == l && !memcmp(nv->name, s, l);
}

/* One decoded header field of a block for stream s (may be NULL). */
static void on_field(yb_cap_h2 *h, int dir, stream *s, int push, const nghttp2_nv *nv)
{
    if (!s || push || s->broken)
        return;
    if (dir == 1) {
        yb_request *r = s->slot ? yb_cap_slot_req(s->slot) : NULL;
        if (!r)
            return;
        if (name_is(nv, ":status")) {
            int st = small_num(nv->value, nv->valuelen);
            if (st >= 200)
                r->expected_status = (uint32_t)st;
        } else if (name_is(nv, "grpc-status")) {
            int g = small_num(nv->value, nv->valuelen);
            if (g >= 0)
                r->expected_grpc = g;
        }
        return;
    }
    if (!s->slot || s->req_done)
        return;
    s->hdr_bytes += nv->namelen + nv->valuelen + 2;
    yb_request *r = yb_cap_slot_req(s->slot);
    if (s->hdr_bytes > YB_CAP_MAX_HEADER_BYTES || r->n_headers >= YB_CAP_MAX_HEADERS) {
        mark_broken(h, s, YB_DROP_TOO_LARGE);
        return;
    }
    /* Values become C strings for the pseudo-headers (cut at a NUL, as
     * the record's strings are), in the slot's arena.  The length limits
     * are those of the 8 KB buffer they once went through. */
    enum { STR_MAX = 8192 };
    int rc = 0;
    if (nv->namelen && nv->name[0] == ':') {
        if (nv->valuelen >= STR_MAX) {
            mark_broken(h, s, YB_DROP_TOO_LARGE);
            return;
        }
        char **field = NULL;
        if (name_is(nv, ":method"))
            field = &r->method;
        else if (name_is(nv, ":path"))
            field = &r->path;
        else if (name_is(nv, ":scheme"))
            field = &r->scheme;
        else if (name_is(nv, ":authority"))
            field = &r->authority;
        /* other pseudo-headers (:protocol) have no place in a record */
        if (field)
            rc = yb_cap_slot_set(s->slot, field, nv->value, nv->valuelen);
    } else if (name_is(nv, "content-length")) {
        /* derived by the sender */
    } else if (name_is(nv, "host") && !r->authority[0] && nv->valuelen < STR_MAX) {
        rc = yb_cap_slot_set(s->slot, &r->authority, nv->value, nv->valuelen);
    } else {
        if (nv->namelen >= STR_MAX) {
            mark_broken(h, s, YB_DROP_TOO_LARGE);
            return;
        }
        rc = yb_cap_slot_add_header(s->slot, nv->name, nv->namelen, nv->value, nv->valuelen);
    }
    if (rc < 0)
        mark_broken(h, s, YB_DROP_TOO_LARGE);
}

static void kill_dir(yb_cap_h2 *h, int dir, const char *why);
static void skipped_data_end(yb_cap_h2 *h, int dir);

/* Says once per stream and direction what was lost of it: the request
 * (its record is dropped) or the response (the record keeps what was
 * seen).  Only streams with a record in the making are named. */
static void lost(yb_cap_h2 *h, stream *s, int dir, const char *why, uint64_t bytes)
{
    if (s->lost[dir] || !s->slot)
        return;
    s->lost[dir] = 1;
    yb_cap_h2_lost(h->c, h->conn_id, s->id, dir, why, bytes);
}

/* Decodes the assembled header block of direction dir. */
static void header_block(yb_cap_h2 *h, int dir)
{
    dirp *d = &h->d[dir];
    uint32_t id = d->hb_stream;
    int push = d->hb_push, end_stream = d->hb_end_stream;
    stream *s = find(h, id);
    if (dir == 0 && !push) {
        if (!s && id % 2 == 1) {
            s = add_stream(h, id);
            if (!s)
                yb_cap_stats(h->c)->drop_overflow++;
            if (s) {
                s->slot = yb_cap_slot_open(h->c, h->conn_id);
                s->have_req = 1;
                if (s->slot)
                    yb_cap_slot_set(s->slot, &yb_cap_slot_req(s->slot)->scheme, h->scheme,
                                    strlen(h->scheme));
            }
        } else if (s && s->have_req) {
            s = NULL; /* trailers of the request: not part of a record */
        }
    }
    /* An empty header block leaves hb NULL; arithmetic on a null pointer,
     * even by zero, is undefined, so point at a static empty buffer. */
    static const uint8_t empty[1];
    const uint8_t *in = d->hb ? d->hb : empty;
    size_t inlen = d->hb_len;
    for (;;) {
        nghttp2_nv nv;
        int fl = 0;
        ssize_t rv = nghttp2_hd_inflate_hd2(d->inf, &nv, &fl, (uint8_t *)in, inlen, 1);
        if (rv < 0) {
            yb_cap_stats(h->c)->hpack_errors++;
            d->hb_len = 0;
            d->hb_active = 0;
            kill_dir(h, dir, "HPACK error: the connection's header state is lost");
            return;
        }
        in += rv;
        inlen -= (size_t)rv;
        if (fl & NGHTTP2_HD_INFLATE_EMIT)
            on_field(h, dir, s, push, &nv);
        if (fl & NGHTTP2_HD_INFLATE_FINAL) {
            nghttp2_hd_inflate_end_headers(d->inf);
            break;
        }
        if (!(fl & NGHTTP2_HD_INFLATE_EMIT) && inlen == 0)
            break;
    }
    d->hb_len = 0;
    d->hb_active = 0;
    if (push)
        return;
    s = find(h, id); /* on_field never adds or removes streams, but be exact */
    if (!s)
        return;
    if (dir == 0 && end_stream && !s->req_done) {
        request_done(h, s);
        maybe_finish(h, s);
    } else if (dir == 1 && end_stream) {
        s->resp_done = 1;
        maybe_finish(h, s);
    }
}

static void proto_error(yb_cap_h2 *h, int dir)
{
    yb_cap_stats(h->c)->h2_errors++;
    kill_dir(h, dir, "HTTP/2 framing error");
}

/* Handles one complete frame of direction dir; p/len is the payload. */
static void frame(yb_cap_h2 *h, int dir, const uint8_t *p, size_t len)
{
    dirp *d = &h->d[dir];
    uint8_t type = d->ftype, fl = d->fflags;
    uint32_t id = d->fstream;
    if (d->hb_active && type != F_CONT) {
        proto_error(h, dir); /* a header block must continue uninterrupted */
        return;
    }
    size_t off = 0, end = len;
    if ((type == F_DATA || type == F_HEADERS || type == F_PUSH) && (fl & FL_PADDED)) {
        if (len < 1 || (size_t)p[0] + 1 > len) {
            proto_error(h, dir);
            return;
        }
        off = 1;
        end = len - p[0];
    }
    switch (type) {
    case F_DATA: {
        if (id == 0) {
            proto_error(h, dir);
            return;
        }
        stream *s = find(h, id);
        if (!s)
            return;
        if (dir == 0 && !s->req_done) {
            size_t n = end - off;
            if (!s->broken && s->slot && n) {
                if (s->body_len + n > YB_CORPUS_MAX_ENTRY / 2 ||
                    reserve_body(h, s, s->body_len + n, p + off, n) < 0) {
                    mark_broken(h, s, YB_DROP_TOO_LARGE);
                } else {
                    memcpy(s->body + s->body_len, p + off, n);
                    s->body_len += n;
                }
            }
            if (fl & FL_END_STREAM) {
                request_done(h, s);
                maybe_finish(h, s);
            }
        } else if (dir == 1 && (fl & FL_END_STREAM)) {
            s->resp_done = 1;
            maybe_finish(h, s);
        }
        return;
    }
    case F_HEADERS:
    case F_PUSH:
        if (id == 0) {
            proto_error(h, dir);
            return;
        }
        if (type == F_HEADERS && (fl & FL_PRIORITY))
            off += 5;
        if (type == F_PUSH)
            off += 4;
        if (off > end) {
            proto_error(h, dir);
            return;
        }
        if (reserve(h, &d->hb, &d->hb_cap, end - off) < 0 || end - off > MAX_HEADER_BLOCK) {
            yb_cap_stats(h->c)->h2_errors++;
            kill_dir(h, dir, "header block over the buffer cap");
            return;
        }
        if (end > off) /* an empty fragment is legal; hb may still be NULL */
            memcpy(d->hb, p + off, end - off);
        d->hb_len = end - off;
        d->hb_stream = id;
        d->hb_push = type == F_PUSH;
        d->hb_end_stream = type == F_HEADERS && (fl & FL_END_STREAM);
        d->hb_active = 1;
        if (fl & FL_END_HEADERS)
            header_block(h, dir);
        return;
    case F_CONT:
        if (!d->hb_active || id != d->hb_stream) {
            proto_error(h, dir);
            return;
        }
        if (d->hb_len + len > MAX_HEADER_BLOCK ||
            reserve(h, &d->hb, &d->hb_cap, d->hb_len + len) < 0) {
            yb_cap_stats(h->c)->h2_errors++;
            kill_dir(h, dir, "header block over the buffer cap");
            return;
        }
        if (len)
            memcpy(d->hb + d->hb_len, p, len);
        d->hb_len += len;
        if (fl & FL_END_HEADERS)
            header_block(h, dir);
        return;
    case F_RST: {
        if (len != 4 || id == 0) {
            proto_error(h, dir);
            return;
        }
        stream *s = find(h, id);
        if (!s)
            return;
        if (!s->req_done) {
            if (s->slot)
                yb_cap_slot_drop(h->c, s->slot, YB_DROP_INCOMPLETE);
            s->slot = NULL;
            s->req_done = 1;
        }
        s->resp_done = 1;
        maybe_finish(h, s);
        return;
    }
    case F_SETTINGS:
        if (fl & FL_ACK)
            return;
        if (len % 6) {
            proto_error(h, dir);
            return;
        }
        /* Our peer's HPACK encoder may use the table size this side
         * announces: the other direction's inflater must allow it. */
        for (size_t i = 0; i + 6 <= len; i += 6) {
            uint16_t sid = (uint16_t)((p[i] << 8) | p[i + 1]);
            if (sid == 1)
                nghttp2_hd_inflate_change_table_size(h->d[!dir].inf, be32(p + i + 2));
        }
        return;
    default:
        return; /* PRIORITY, PING, GOAWAY, WINDOW_UPDATE, extensions */
    }
}

/* Abandons a direction: its remaining bytes are counted, not parsed; the
 * streams it leaves unfinished are named as lost, for why. */
static void kill_dir(yb_cap_h2 *h, int dir, const char *why)
{
    dirp *d = &h->d[dir];
    if (d->dead)
        return;
    d->dead = 1;
    release_buf(h, &d->pay, &d->pay_got, &d->pay_cap);
    release_buf(h, &d->hb, &d->hb_len, &d->hb_cap);
    d->hb_active = 0;
    /* Streams this direction can no longer finish. */
    for (size_t i = h->ns; i-- > 0;) {
        stream *s = &h->s[i];
        if ((dir == 0 && !s->req_done) || (dir == 1 && !s->resp_done))
            lost(h, s, dir, why, 0);
        if (dir == 0 && !s->req_done) {
            if (s->slot)
                yb_cap_slot_drop(h->c, s->slot, YB_DROP_GAP);
            s->slot = NULL;
            s->req_done = 1;
        }
        if (dir == 1)
            s->resp_done = 1;
        maybe_finish(h, s);
    }
}

void yb_cap_h2_data(yb_cap_h2 *h, int dir, const uint8_t *p, size_t n)
{
    dirp *d = &h->d[dir];
    yb_capture_stats *st = yb_cap_stats(h->c);
    if (dir == 0 && d->preface_got < YB_H2_PREFACE_LEN && !d->dead) {
        size_t k = YB_H2_PREFACE_LEN - d->preface_got;
        if (k > n)
            k = n;
        if (memcmp(p, yb_cap_h2_preface + d->preface_got, k)) {
            proto_error(h, dir);
        } else {
            d->preface_got += k;
            p += k;
            n -= k;
        }
    }
    while (n && !d->dead) {
        if (!d->in_payload) {
            size_t k = FRAME_HDR - d->hdr_got;
            if (k > n)
                k = n;
            memcpy(d->hdr + d->hdr_got, p, k);
            d->hdr_got += k;
            p += k;
            n -= k;
            if (d->hdr_got < FRAME_HDR)
                return;
            d->hdr_got = 0;
            d->flen = be24(d->hdr);
            d->ftype = d->hdr[3];
            d->fflags = d->hdr[4];
            d->fstream = be32(d->hdr + 5) & 0x7fffffffu;
            d->in_payload = 1;
            d->skip = 0;
            d->pay_got = 0;
        }
        size_t want = d->flen - d->pay_got;
        if (!d->skip && d->pay_got == 0 && n >= want) {
            /* Whole payload in this chunk: parse in place, no copy. */
            d->in_payload = 0;
            frame(h, dir, p, want);
            p += want;
            n -= want;
            continue;
        }
        size_t k = want < n ? want : n;
        if (!d->skip) {
            if (reserve(h, &d->pay, &d->pay_cap, d->flen) < 0) {
                st->h2_errors++;
                kill_dir(h, dir, "frame over the buffer cap");
                break;
            }
            memcpy(d->pay + d->pay_got, p, k);
        }
        d->pay_got += k;
        p += k;
        n -= k;
        if (d->pay_got == d->flen) {
            d->in_payload = 0;
            if (!d->skip)
                frame(h, dir, d->pay, d->flen);
            else
                skipped_data_end(h, dir);
            if (d->pay_cap > 65536 + FRAME_HDR) /* keep only a modest buffer */
                release_buf(h, &d->pay, NULL, &d->pay_cap);
        }
    }
    if (n)
        st->dropped_unparsed_bytes += n;
}

/* A DATA frame whose payload was skipped (a hole in it) still ends its
 * stream when it carried END_STREAM. */
static void skipped_data_end(yb_cap_h2 *h, int dir)
{
    dirp *d = &h->d[dir];
    stream *s = find(h, d->fstream);
    if (!s || !(d->fflags & FL_END_STREAM))
        return;
    if (dir == 0 && !s->req_done)
        request_done(h, s);
    else if (dir == 1)
        s->resp_done = 1;
    maybe_finish(h, s);
}

void yb_cap_h2_gap(yb_cap_h2 *h, int dir, uint64_t n)
{
    dirp *d = &h->d[dir];
    if (d->dead)
        return;
    /* A hole inside a DATA payload: the stream's data is lost, the framing
     * and HPACK state are not. */
    if (d->in_payload && d->ftype == F_DATA && n <= d->flen - d->pay_got &&
        !(dir == 0 && d->preface_got < YB_H2_PREFACE_LEN)) {
        stream *s = find(h, d->fstream);
        yb_cap_stats(h->c)->h2_lost_body_bytes += n;
        if (s)
            lost(h, s, dir, dir == 0 ? "gap in its DATA: the request is dropped"
                                     : "gap in the response DATA: body lost, status kept", n);
        if (s && dir == 0)
            mark_broken(h, s, YB_DROP_GAP);
        if (!d->skip) {
            /* Frame completes without being parsed; END_STREAM is lost
             * with it, so the frame still ends the request (dropped). */
            d->skip = 1;
        }
        d->pay_got += n;
        if (d->pay_got == d->flen) {
            d->in_payload = 0;
            skipped_data_end(h, dir);
        }
        return;
    }
    kill_dir(h, dir, "gap outside a DATA payload: framing and HPACK state lost");
}

void yb_cap_h2_free(yb_cap_h2 *h)
{
    if (!h)
        return;
    if (h->c) {
        for (size_t i = h->ns; i-- > 0;) {
            stream *s = &h->s[i];
            if (!s->req_done) {
                if (s->slot)
                    yb_cap_slot_drop(h->c, s->slot, YB_DROP_INCOMPLETE);
                s->slot = NULL;
                s->req_done = 1;
            }
            s->resp_done = 1;
            maybe_finish(h, s);
        }
    }
    for (int i = 0; i < 2; i++) {
        release_buf(h, &h->d[i].pay, NULL, &h->d[i].pay_cap);
        release_buf(h, &h->d[i].hb, NULL, &h->d[i].hb_cap);
        if (h->d[i].inf)
            nghttp2_hd_inflate_del(h->d[i].inf);
    }
    free(h->s);
    free(h);
}
