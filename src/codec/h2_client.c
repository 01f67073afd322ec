/* HTTP/2 client codec on nghttp2's client session (mem_send/mem_recv over
 * the session's transport), with gRPC framed by hand on top: 5-byte
 * message prefixes, trailers, grpc-status / grpc-message, and gNMI
 * responses checked with protobuf-c. */
#include "config.h"
#include "codec/codec.h"
#include "codec/blobs.h"
#include "tmpl/pick.h"
#include "gnmi/gnmi_msg.h"
#include "util/blkcache.h"

#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <nghttp2/nghttp2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* gRPC status codes used here. */
enum {
    GRPC_OK = 0, GRPC_CANCELLED = 1, GRPC_UNKNOWN = 2, GRPC_RESOURCE_EXHAUSTED = 8,
    GRPC_UNIMPLEMENTED = 12, GRPC_INTERNAL = 13, GRPC_UNAVAILABLE = 14,
    GRPC_PERMISSION_DENIED = 7, GRPC_UNAUTHENTICATED = 16,
};

typedef enum { RPC_OTHER = 0, RPC_SET, RPC_GET, RPC_CAPABILITIES, RPC_SUBSCRIBE } rpc_kind;

/* Codec-private part of a prepared request. */
typedef struct {
    nghttp2_nv *nv;
    size_t n_nv;
    char *arena;       /* names and values */
    const uint8_t *body;
    struct yb_blobs *blobs; /* body is shared through it (codec/blobs.h), or NULL: owned */
    size_t body_len;
    rpc_kind rpc;
    int grpc;          /* content-type application/grpc */
    size_t set_ops;    /* Set: operations in the request */
    uint32_t results_field; /* Set: SetResponse's field of results (its number) */
    int sub_mode;      /* Subscribe: SubscriptionList.mode (SUB_*), -1 = not a Subscribe */
    size_t first_len;  /* Subscribe: bytes of the first gRPC message (the SubscribeRequest) */
    yb_tmpl **nv_tmpl; /* templated: per header field, its value's template or NULL */
    yb_tmpl *body_tmpl;/* templated: the body's, or NULL */
    size_t n_own;      /* fields before this index are ours (never templates),
                        * except :path */
} h2_req;

enum { SUB_ONCE = 0, SUB_POLL = 1, SUB_STREAM = 2 }; /* SubscriptionList.Mode */

/* A response message up to this size is kept in the stream itself. */
#define STREAM_SMALL_MSG 256
/* Stream states a session keeps for its next requests. */
#define STREAM_POOL_MAX 32

/* Per-stream state. */
typedef struct stream {
    yb_exchange *x;
    const uint8_t *body;      /* the request body: the prepared one, or body_own */
    size_t body_len, first_len; /* its length; Subscribe: its first message's */
    uint8_t *body_own;        /* a templated body, filled for this request */
    size_t body_off;          /* request body sent so far */
    size_t body_limit;        /* Subscribe: body bytes that may be sent now */
    int may_end;              /* Subscribe: END_STREAM once body_limit is sent */
    int deferred;             /* the data provider returned NGHTTP2_ERR_DEFERRED */
    int local_ended;          /* our END_STREAM is sent (nghttp2's local close) */
    int stopped;              /* ended by the engine at the run's end (finish) */
    /* gRPC response messages, assembled one at a time as they arrive:
     * the 5-byte prefix, then exactly the length it announces (over
     * --max-body or the worker's budget: too_large).  A unary call keeps
     * its one message to check it at the end; Subscribe decodes each as it
     * completes and reuses the buffer. */
    uint8_t pre[YB_GRPC_PREFIX];
    size_t pre_len;           /* prefix bytes of the message being received */
    uint8_t *msg;             /* its bytes: small, or msg_cap allocated (taken from
                               * the budget) */
    size_t msg_len, msg_need, msg_cap;
    int have_msg;             /* unary: the response message is complete */
    uint8_t *err_head;        /* non-gRPC with an error :status: the body's first bytes */
    size_t err_len;
    int too_large;            /* over --max-body or the budget: stopped */
    int http_status;
    int grpc_status;          /* -1 = not seen */
    int got_headers;
    int bad;                  /* a protocol/validation problem was found */
    const char *bad_why;      /* static: what it was */
    char grpc_msg[YB_REASON_MAX]; /* grpc-message, percent-decoded, sanitized */
    uint8_t *head;            /* req->keep_resp: the header fields and trailers,
                               * "name: value\n" each (at most YB_PICK_HEAD_MAX) */
    size_t head_len;
    uint8_t *plain;           /* req->keep_resp, not gRPC: the body (at most
                               * YB_PICK_BODY_MAX; plain_cut when not whole) */
    size_t plain_len, plain_cap;
    int plain_cut;
    unsigned messages;
    struct stream *next, *prev; /* the codec's open streams (next: or its pool) */
    uint8_t small[STREAM_SMALL_MSG]; /* a small message (a SetResponse) needs no heap;
                                      * last: a reused stream is cleared up to here */
} stream;

struct yb_codec {
    const yb_codec_cfg *cfg;
    const yb_codec_host *host;
    void *hostdata;
    nghttp2_session *ng;
    /* One write's worth of output, in order: pieces of `out` (what
     * mem_send gave: HEADERS, SETTINGS, ..., and each DATA frame's 9-byte
     * header) and, between them, DATA payloads pointing straight at the
     * request bodies (nghttp2's no-copy DATA: bodies are not copied in
     * user space on h2c; over TLS the transport's encryption is their
     * one copy). */
    uint8_t *out;
    size_t out_len, out_cap;
    struct piece { const uint8_t *p; size_t off, len; } *pieces; /* p NULL: out + off */
    unsigned n_pieces;
    /* (flags in bytes: this state is what each idle session of a fleet
     * keeps, so it stays small) */
    unsigned char got_settings, got_ack, ready;
    unsigned char goaway;
    unsigned char dead;
    unsigned char got_bytes;  /* the peer has sent something */
    unsigned held;            /* requests with a body submitted since the last flush
                               * (their HEADERS wait in nghttp2's queue) */
    unsigned active;
    /* The stream looked up last (stream_of): the frames of one response
     * come together, and each callback would otherwise search nghttp2's
     * stream map again.  hit is NULL when it was unbound or freed. */
    int32_t hit_sid;
    stream *hit;
    stream *streams;
    stream *pool;             /* finished streams' states, for the next requests */
    unsigned n_pool;
    uint64_t now;
    yb_tmpl_buf fill;         /* templated header values, filled (reused) */
    yb_tmpl_buf one;          /* one of them, before it joins fill */
    nghttp2_nv *nv;           /* templated: the header fields of one submit */
    size_t nv_cap;
};

/* ---- nghttp2's small allocations, kept per thread while streams run ----
 *
 * Every request makes nghttp2 allocate (and, when it ends, free) its
 * stream, the HEADERS and DATA items and a copy of the header array: a
 * cache of freed blocks per size class (util/blkcache), per worker thread
 * (sessions never leave their worker), hands the blocks of ended streams
 * to the next ones without a trip through malloc.  It holds at most
 * MEM_KEEP blocks per class, and nothing once no stream of this thread is
 * open: idle sessions keep no more memory than before. */
#define MEM_STEP_LOG2 5u /* class k holds blocks of at least k * 32 bytes */
#define MEM_CLASSES 16u  /* so up to 512 bytes; larger ones go to malloc */
#define MEM_KEEP 64u

static const yb_blkcache_cfg mem_cfg = {
    .grain_log2 = MEM_STEP_LOG2, .classes = MEM_CLASSES + 1, .keep = MEM_KEEP,
    /* a block of 512 asked-for bytes holds up to 543 (usable sizes) */
    .max = ((size_t)(MEM_CLASSES + 1) << MEM_STEP_LOG2) - 1,
};

static _Thread_local struct {
    yb_blkcache *bc;         /* made when the first stream opens */
    unsigned long streams;   /* open streams of this thread's sessions */
    int armed;               /* 1: drained when the thread ends; -1: could not be,
                              * so nothing is kept */
} tl_mem;
static pthread_key_t mem_key;
static pthread_once_t mem_once = PTHREAD_ONCE_INIT;
static int mem_key_ok;

static void mem_thread_end(void *arg)
{
    yb_blkcache_free(arg);
    tl_mem.bc = NULL;
}

static void mem_key_make(void)
{
    mem_key_ok = pthread_key_create(&mem_key, mem_thread_end) == 0;
}

/* A stream of this thread opens: the first one makes the cache and arms
 * its freeing at the thread's end (a worker thread ends before the engine
 * frees its sessions). */
static void mem_stream_open(void)
{
    if (!tl_mem.armed) {
        pthread_once(&mem_once, mem_key_make);
        tl_mem.bc = mem_key_ok ? yb_blkcache_new(&mem_cfg) : NULL;
        if (tl_mem.bc && pthread_setspecific(mem_key, tl_mem.bc) == 0) {
            tl_mem.armed = 1;
        } else {
            yb_blkcache_free(tl_mem.bc);
            tl_mem.bc = NULL;
            tl_mem.armed = -1;
        }
    }
    tl_mem.streams++;
}

/* A stream of this thread ends; with the last, the kept blocks go.  A
 * session freed by another thread than its own (the engine's teardown)
 * finds no streams counted there and leaves the count alone. */
static void mem_stream_close(void)
{
    if (tl_mem.streams && !--tl_mem.streams && tl_mem.bc)
        yb_blkcache_drain(tl_mem.bc);
}

static void *mem_malloc(size_t size, void *ud)
{
    yb_blkcache *bc = tl_mem.bc;
    (void)ud;
    if (!size || size > ((size_t)MEM_CLASSES << MEM_STEP_LOG2) || !bc)
        return malloc(size);
    void *b = yb_blkcache_get(bc, &mem_cfg, size);
    /* else the whole class: it comes back to it */
    return b ? b : malloc(yb_blkcache_class_size(&mem_cfg, yb_blkcache_class_of(&mem_cfg, size)));
}

static void mem_free(void *p, void *ud)
{
    (void)ud;
    if (!p)
        return;
    /* what it can hold, whoever asked for it */
    if (!tl_mem.streams || !tl_mem.bc || !yb_blkcache_put(tl_mem.bc, &mem_cfg, p, malloc_usable_size(p)))
        free(p);
}

static void *mem_calloc(size_t n, size_t size, void *ud)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    void *p = mem_malloc(n * size, ud);
    if (p)
        memset(p, 0, n * size);
    return p;
}

static void *mem_realloc(void *p, size_t size, void *ud)
{
    (void)ud;
    return realloc(p, size); /* every block is malloc's, pooled or not */
}

static nghttp2_mem mem_pooled = {NULL, mem_malloc, mem_free, mem_calloc, mem_realloc};

static void stream_link(yb_codec *c, stream *st)
{
    st->prev = NULL;
    st->next = c->streams;
    if (c->streams)
        c->streams->prev = st;
    c->streams = st;
    c->active++;
    mem_stream_open();
}

/* Frees what st keeps of its response and gives it back to the budget. */
static void stream_drop_body(yb_codec *c, stream *st)
{
    yb_mem_give(c->host->budget, st->msg_cap + (st->err_head ? YB_ERR_BODY_KEEP : 0));
    if (st->msg != st->small)
        free(st->msg);
    free(st->err_head);
    st->msg = st->err_head = NULL;
    st->msg_len = st->msg_need = st->msg_cap = st->err_len = 0;
    st->pre_len = 0;
    st->have_msg = 0;
}

/* Frees the header fields and body st kept for the next chain step. */
static void stream_drop_head(yb_codec *c, stream *st)
{
    if (st->head)
        yb_mem_give(c->host->budget, YB_PICK_HEAD_MAX);
    free(st->head);
    st->head = NULL;
    yb_mem_give(c->host->budget, st->plain_cap);
    free(st->plain);
    st->plain = NULL;
    st->plain_len = st->plain_cap = 0;
}

/* Keeps the body of a plain HTTP/2 response the next chain step reads,
 * growing from the worker's budget up to YB_PICK_BODY_MAX; beyond (or
 * without memory) it is cut and let go. */
static void keep_plain(yb_codec *c, stream *st, const uint8_t *d, size_t len)
{
    if (st->plain_cut)
        return;
    if (len > YB_PICK_BODY_MAX - st->plain_len)
        goto cut;
    if (st->plain_len + len > st->plain_cap) {
        size_t nc = st->plain_cap ? st->plain_cap : 4096;
        while (nc < st->plain_len + len)
            nc *= 2;
        if (nc > YB_PICK_BODY_MAX)
            nc = YB_PICK_BODY_MAX;
        if (yb_mem_take(c->host->budget, nc - st->plain_cap) < 0)
            goto cut;
        uint8_t *nb = realloc(st->plain, nc);
        if (!nb) {
            yb_mem_give(c->host->budget, nc - st->plain_cap);
            goto cut;
        }
        st->plain = nb;
        st->plain_cap = nc;
    }
    memcpy(st->plain + st->plain_len, d, len);
    st->plain_len += len;
    return;
cut:
    yb_mem_give(c->host->budget, st->plain_cap);
    free(st->plain);
    st->plain = NULL;
    st->plain_len = st->plain_cap = 0;
    st->plain_cut = 1;
}

/* A cleared stream state: from the pool, else new.  NULL when out of
 * memory. */
static stream *stream_new(yb_codec *c)
{
    stream *st = c->pool;
    if (!st)
        return calloc(1, sizeof *st);
    c->pool = st->next;
    c->n_pool--;
    memset(st, 0, offsetof(stream, small));
    return st;
}

/* Gives st's state (its response and body already dropped) back to the
 * pool, or frees it when the pool is full. */
static void stream_put(yb_codec *c, stream *st)
{
    if (c->hit == st)
        c->hit = NULL;
    if (c->n_pool >= STREAM_POOL_MAX) {
        free(st);
        return;
    }
    st->next = c->pool;
    c->pool = st;
    c->n_pool++;
}

/* Unlinks st from the codec's streams (no longer active). */
static void stream_unlink(yb_codec *c, stream *st)
{
    if (st->prev)
        st->prev->next = st->next;
    else
        c->streams = st->next;
    if (st->next)
        st->next->prev = st->prev;
    c->active--;
    mem_stream_close();
}

/* The stream state bound to stream sid, or NULL (none, or completed
 * already). */
static stream *stream_of(yb_codec *c, int32_t sid)
{
    if (c->hit && c->hit_sid == sid)
        return c->hit;
    stream *st = nghttp2_session_get_stream_user_data(c->ng, sid);
    if (st) {
        c->hit_sid = sid;
        c->hit = st;
    }
    return st;
}

/* Unbinds stream sid's state: its callbacks find none from now on. */
static void stream_unbind(yb_codec *c, int32_t sid)
{
    nghttp2_session_set_stream_user_data(c->ng, sid, NULL);
    if (c->hit_sid == sid)
        c->hit = NULL;
}

static int write_batch(yb_codec *c);

/* Before st's body may go: output gathered in this flush may point at
 * it (a stream can close inside mem_send, once its last DATA is out), so
 * the batch is written first. */
static void stream_release_body(yb_codec *c)
{
    if (c->n_pieces)
        write_batch(c); /* a failure marks the session dead */
}

/* Unlinks and frees st. */
static void stream_free(yb_codec *c, stream *st)
{
    stream_release_body(c);
    stream_unlink(c, st);
    stream_drop_body(c, st);
    free(st->body_own);
    stream_drop_head(c, st);
    stream_put(c, st);
}

/* Ends st's exchange through host->done, then frees st: the failed
 * response's first bytes (x->err_body) stay valid while done runs. */
static void stream_done(yb_codec *c, stream *st)
{
    yb_exchange *x = st->x;
    stream_release_body(c); /* before done: it may let the prepared body go */
    stream_unlink(c, st);
    x->stream_id = 0;
    c->host->done(c->hostdata, x);
    stream_drop_body(c, st);
    free(st->body_own);
    stream_drop_head(c, st);
    stream_put(c, st);
}

/* Marks st's response as malformed, keeping the first reason. */
static void mark_bad(stream *st, const char *why)
{
    if (!st->bad_why)
        st->bad_why = why;
    st->bad = 1;
}

/* ---- prepare ------------------------------------------------------------ */

static int hdr_skip(const char *name)
{
    static const char *const skip[] = {"host", "content-length", "connection", "te",
                                       "transfer-encoding", "keep-alive", "upgrade",
                                       "grpc-timeout", "user-agent", "content-type",
                                       "proxy-connection", NULL};
    for (const char *const *p = skip; *p; p++)
        if (!strcasecmp(name, *p))
            return 1;
    return 0;
}

static rpc_kind rpc_of(const char *path)
{
    if (!strcmp(path, "/gnmi.gNMI/Set"))
        return RPC_SET;
    if (!strcmp(path, "/gnmi.gNMI/Get"))
        return RPC_GET;
    if (!strcmp(path, "/gnmi.gNMI/Capabilities"))
        return RPC_CAPABILITIES;
    if (!strcmp(path, "/gnmi.gNMI/Subscribe"))
        return RPC_SUBSCRIBE;
    return RPC_OTHER;
}

/* gRPC timeout: at most 8 digits and a unit. */
static void grpc_timeout(uint64_t ns, char *buf, size_t cap)
{
    static const struct { char unit; uint64_t div; } units[] = {
        {'n', 1}, {'u', 1000}, {'m', 1000000}, {'S', 1000000000ull},
        {'M', 60000000000ull}, {'H', 3600000000000ull}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        uint64_t v = (ns + units[i].div - 1) / units[i].div;
        if (v < 100000000ull) {
            snprintf(buf, cap, "%llu%c", (unsigned long long)v, units[i].unit);
            return;
        }
    }
    snprintf(buf, cap, "99999999H");
}

static size_t set_ops_of(const uint8_t *body, size_t len)
{
    size_t off = 0, n;
    const uint8_t *m;
    if (yb_grpc_next(body, len, &off, &m, &n, len) != 1)
        return 0;
    Gnmi__SetRequest *r = (Gnmi__SetRequest *)yb_gnmi_unpack(&gnmi__set_request__descriptor, m, n);
    if (!r)
        return 0;
    size_t ops = r->n_delete_ + r->n_replace + r->n_update + r->n_union_replace;
    gnmi__set_request__free_unpacked(r, NULL);
    return ops;
}

/* Subscribe: the mode of the first message (a SubscribeRequest with a
 * SubscriptionList) and its length with the gRPC prefix.  A body that is
 * not such a request counts as ONCE: it is sent whole, as before. */
static int sub_mode_of(const uint8_t *body, size_t len, size_t *first_len)
{
    size_t off = 0, n;
    const uint8_t *m;
    *first_len = len;
    if (yb_grpc_next(body, len, &off, &m, &n, len) != 1)
        return SUB_ONCE;
    Gnmi__SubscribeRequest *r = (Gnmi__SubscribeRequest *)yb_gnmi_unpack(&gnmi__subscribe_request__descriptor, m, n);
    if (!r)
        return SUB_ONCE;
    int mode = SUB_ONCE;
    if (r->request_case == GNMI__SUBSCRIBE_REQUEST__REQUEST_SUBSCRIBE && r->subscribe) {
        if (r->subscribe->mode == GNMI__SUBSCRIPTION_LIST__MODE__POLL)
            mode = SUB_POLL;
        else if (r->subscribe->mode == GNMI__SUBSCRIPTION_LIST__MODE__STREAM)
            mode = SUB_STREAM;
        *first_len = off;
    }
    gnmi__subscribe_request__free_unpacked(r, NULL);
    return mode;
}

static void h2_req_free(h2_req *h)
{
    if (!h)
        return;
    if (h->nv_tmpl)
        for (size_t i = 0; i < h->n_nv; i++)
            yb_tmpl_free(h->nv_tmpl[i]);
    free(h->nv_tmpl);
    yb_tmpl_free(h->body_tmpl);
    free(h->nv);
    free(h->arena);
    if (h->blobs)
        yb_blob_put(h->blobs, h->body);
    else
        free((uint8_t *)(uintptr_t)h->body);
    free(h);
}

/* A templated record: compiles :path (field path_i), the record's and -H's
 * header values and the body.  Our own fields (credentials included) are
 * never templates.  Returns 0, -ENOMEM or -EINVAL (a bad template, or a
 * {{target}} name a header value cannot carry). */
static int compile_templates(const yb_codec_cfg *cfg, const yb_request *r, h2_req *h,
                             size_t path_i)
{
    char err[512];
    h->nv_tmpl = calloc(h->n_nv, sizeof *h->nv_tmpl);
    if (!h->nv_tmpl)
        return -ENOMEM;
    for (size_t i = 0; i < h->n_nv; i++) {
        if ((i < h->n_own && i != path_i) || !yb_tmpl_has(h->nv[i].value, h->nv[i].valuelen))
            continue;
        yb_tmpl *t = h->nv_tmpl[i] = yb_tmpl_new();
        if (!t)
            return -ENOMEM;
        int rc = yb_tmpl_text(t, h->nv[i].value, h->nv[i].valuelen, err, sizeof err);
        if (rc)
            return rc;
        if (yb_tmpl_uses_target(t) && cfg->target_name)
            for (const char *p = cfg->target_name; *p; p++)
                if (*p == '\r' || *p == '\n')
                    return -EINVAL;
    }
    if (yb_tmpl_has(r->body, r->body_len)) {
        if (!(h->body_tmpl = yb_tmpl_new()))
            return -ENOMEM;
        int rc = yb_tmpl_body(h->body_tmpl, r, err, sizeof err);
        if (rc)
            return rc;
    }
    return 0;
}

static int h2_prepare(const yb_codec_cfg *cfg, const yb_request *r, yb_prepared *out)
{
    if (!yb_proto_is_h2(r->protocol))
        return -EPROTONOSUPPORT;
    struct yb_blobs *blobs = out->blobs; /* (an input) */
    memset(out, 0, sizeof *out);
    out->blobs = blobs;
    h2_req *h = calloc(1, sizeof *h);
    if (!h)
        return -ENOMEM;
    h->rpc = rpc_of(r->path);
    h->grpc = r->protocol == YB_PROTO_GNMI;
    h->sub_mode = -1;
    if (h->rpc == RPC_SUBSCRIBE)
        h->sub_mode = sub_mode_of(r->body, r->body_len, &h->first_len);
    for (size_t i = 0; i < r->n_headers; i++)
        if (!strcasecmp(r->headers[i].name, "content-type") && r->headers[i].value_len >= 16 &&
            !strncmp((const char *)r->headers[i].value, "application/grpc", 16))
            h->grpc = 1;
    char tmo[16] = "";
    /* A STREAM subscription lasts the run: no deadline for the server. */
    if (h->grpc && cfg->timeout_ns && h->sub_mode != SUB_STREAM)
        grpc_timeout(cfg->timeout_ns, tmo, sizeof tmo);

    /* Header order as the gRPC HTTP/2 protocol wants it: pseudo-headers,
     * te, grpc-timeout, content-type, user-agent, then custom metadata. */
    const char *fixed[][2] = {
        {":method", r->method}, {":scheme", cfg->scheme ? cfg->scheme : r->scheme},
        {":path", r->path},     {":authority", cfg->authority ? cfg->authority : r->authority},
        {"te", h->grpc ? "trailers" : NULL},
        {"grpc-timeout", *tmo ? tmo : NULL},
        {"content-type", h->grpc ? "application/grpc" : NULL},
        {"user-agent", cfg->user_agent},
        {"username", h->grpc && cfg->user ? cfg->user : NULL},
        {"password", h->grpc && cfg->user ? cfg->password : NULL},
        /* gNMI with --user sends username/password metadata (above); a
         * bearer token goes as `authorization` metadata, as gNMI servers
         * expect, and so does HTTP Basic on plain HTTP/2 */
        {"authorization", !h->grpc || !cfg->user ? cfg->auth_header : NULL},
    };
    const int our_auth = !h->grpc || !cfg->user ? cfg->auth_header != NULL : 0;
    size_t templatable = 0; /* the :path field's index */
    size_t nfixed = sizeof fixed / sizeof fixed[0];
    /* room for the fields it may send, no more: a fleet keeps a prepared
     * request per target */
    size_t max_nv = cfg->n_extra, arena = 0;
    for (size_t i = 0; i < r->n_headers; i++)
        max_nv += !hdr_skip(r->headers[i].name); /* (te, content-type: ours) */
    for (size_t i = 0; i < nfixed; i++)
        if (fixed[i][1]) {
            max_nv++;
            arena += strlen(fixed[i][0]) + strlen(fixed[i][1]) + 2;
        }
    for (size_t i = 0; i < r->n_headers; i++)
        arena += strlen(r->headers[i].name) + r->headers[i].value_len + 2;
    for (size_t i = 0; i < cfg->n_extra; i++)
        arena += strlen(cfg->extra[i].name) + cfg->extra[i].value_len + 2;
    h->nv = calloc(max_nv, sizeof *h->nv);
    h->arena = malloc(arena + 1);
    if (!h->nv || !h->arena)
        goto oom;
    char *a = h->arena;
#define ADD(N, NL, V, VL)                                                           \
    do {                                                                            \
        nghttp2_nv *nv_ = &h->nv[h->n_nv++];                                        \
        memcpy(a, N, NL);                                                           \
        for (size_t k_ = 0; k_ < (NL); k_++) /* HTTP/2 field names are lower case */ \
            if (a[k_] >= 'A' && a[k_] <= 'Z')                                       \
                a[k_] = (char)(a[k_] + 32);                                         \
        a[NL] = 0;                                                                  \
        nv_->name = (uint8_t *)a;                                                   \
        nv_->namelen = NL;                                                          \
        a += (NL) + 1;                                                              \
        if (VL)                                                                     \
            memcpy(a, V, VL);                                                       \
        a[VL] = 0;                                                                  \
        nv_->value = (uint8_t *)a;                                                  \
        nv_->valuelen = VL;                                                         \
        /* the prepared request outlives the HEADERS it is sent in */            \
        nv_->flags = NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE;   \
        a += (VL) + 1;                                                              \
    } while (0)
    for (size_t i = 0; i < nfixed; i++)
        if (fixed[i][1]) {
            /* of ours, only :path may hold placeholders (never credentials) */
            if (i == 2)
                templatable = h->n_nv;
            ADD(fixed[i][0], strlen(fixed[i][0]), fixed[i][1], strlen(fixed[i][1]));
        }
    size_t first_own = h->n_nv; /* the record's and -H's fields from here */
    for (size_t i = 0; i < r->n_headers; i++) {
        const yb_header *x = &r->headers[i];
        /* credentials of ours replace the recorded ones, never join them */
        if (hdr_skip(x->name) || (h->grpc && cfg->user && (!strcasecmp(x->name, "username") ||
                                                          !strcasecmp(x->name, "password"))) ||
            (our_auth && !strcasecmp(x->name, "authorization")))
            continue;
        ADD(x->name, strlen(x->name), x->value, x->value_len);
    }
    for (size_t i = 0; i < cfg->n_extra; i++)
        ADD(cfg->extra[i].name, strlen(cfg->extra[i].name), cfg->extra[i].value,
            cfg->extra[i].value_len);
#undef ADD
    h->n_own = first_own;
    if (r->body_len) {
        /* a fleet prepares the same body for every target: one copy */
        if (out->blobs && (h->body = yb_blob_get(out->blobs, r->body, r->body_len))) {
            h->blobs = out->blobs;
        } else {
            uint8_t *b = malloc(r->body_len);
            if (!b)
                goto oom;
            memcpy(b, r->body, r->body_len);
            h->body = b;
        }
        h->body_len = r->body_len;
    }
    if (h->rpc == RPC_SET) {
        h->set_ops = set_ops_of(h->body, h->body_len);
        /* looked up once here, not in every answer's check */
        const ProtobufCFieldDescriptor *f =
            protobuf_c_message_descriptor_get_field_by_name(&gnmi__set_response__descriptor, "response");
        h->results_field = f ? f->id : 0;
    }
    if (r->templated || cfg->templates) {
        int trc = compile_templates(cfg, r, h, templatable);
        if (trc) {
            h2_req_free(h);
            return trc;
        }
        out->templated = 1;
    }
    out->protocol = r->protocol;
    out->h2 = h;
    out->body_len = r->body_len;
    out->wire_len = r->body_len;
    for (size_t i = 0; i < h->n_nv; i++)
        out->wire_len += h->nv[i].namelen + h->nv[i].valuelen;
    out->conn_id = r->conn_id;
    out->expected_status = r->expected_status;
    out->expected_grpc = r->expected_grpc;
    out->open_ended = h->sub_mode == SUB_STREAM;
    return 0;
oom:
    free(h->nv);
    free(h->arena);
    free(h);
    return -ENOMEM;
}

static void h2_prepared_free(yb_prepared *p)
{
    h2_req_free(p->h2);
    p->h2 = NULL;
}

/* ---- session plumbing ------------------------------------------------- */

/* Output pieces written at once: a write's iovecs, and a bound on the
 * stack array built from them (more are written in several batches). */
#define PIECES_MAX 64
/* An output buffer larger than this is not kept between flushes. */
#define OUT_KEEP_MAX 16384

/* Writes the pieces gathered so far as one (gathering) write and empties
 * the batch.  Returns 0 or < 0 (session dead). */
static int write_batch(yb_codec *c)
{
    uv_buf_t b[PIECES_MAX];
    unsigned n = c->n_pieces;
    for (unsigned i = 0; i < n; i++) {
        const struct piece *pc = &c->pieces[i];
        b[i] = uv_buf_init((char *)(pc->p ? pc->p : c->out + pc->off), (unsigned)pc->len);
    }
    c->n_pieces = 0;
    c->out_len = 0;
    if (!n)
        return 0;
    /* the transport takes a copy of what the kernel does not take now, so
     * the bodies pointed at may go once this returns */
    int rc = c->host->write(c->hostdata, b, n);
    if (rc < 0) {
        c->dead = 1;
        return rc;
    }
    return 0;
}

/* Appends a piece: len bytes at p, or (p NULL) the out bytes from off.
 * A full batch is written first (never for out bytes: out_add makes room
 * before it appends them).  Returns 0 or < 0. */
static int piece_add(yb_codec *c, const uint8_t *p, size_t off, size_t len)
{
    if (c->n_pieces == PIECES_MAX) {
        int rc = write_batch(c);
        if (rc < 0)
            return rc;
    }
    if (!c->pieces && !(c->pieces = malloc(PIECES_MAX * sizeof *c->pieces)))
        return -ENOMEM;
    c->pieces[c->n_pieces++] = (struct piece){p, off, len};
    return 0;
}

/* Appends n bytes to out (a copy: mem_send's output is valid only until
 * its next call), extending the last piece when it is out's too.
 * Returns 0 or < 0. */
static int out_add(yb_codec *c, const uint8_t *d, size_t n)
{
    int extend = c->n_pieces && !c->pieces[c->n_pieces - 1].p;
    if (!extend && c->n_pieces == PIECES_MAX) {
        int rc = write_batch(c); /* empties out too */
        if (rc < 0)
            return rc;
    }
    if (c->out_len + n > c->out_cap) {
        size_t nc = c->out_cap ? c->out_cap : 1024;
        while (nc < c->out_len + n)
            nc *= 2;
        uint8_t *nb = realloc(c->out, nc);
        if (!nb)
            return -ENOMEM;
        c->out = nb;
        c->out_cap = nc;
    }
    memcpy(c->out + c->out_len, d, n);
    c->out_len += n;
    if (extend) {
        c->pieces[c->n_pieces - 1].len += n;
        return 0;
    }
    return piece_add(c, NULL, c->out_len - n, n);
}

/* nghttp2's no-copy DATA: the frame header joins out, the payload goes as
 * a piece pointing at the request body (read_body advanced body_off past
 * it just before, in the same mem_send call). */
static int send_data(nghttp2_session *ng, nghttp2_frame *f, const uint8_t *framehd,
                     size_t length, nghttp2_data_source *src, void *ud)
{
    (void)ng;
    yb_codec *c = ud;
    const stream *st = src->ptr;
    if (f->data.padlen) /* never asked for: no select_padding callback */
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    if (out_add(c, framehd, 9) < 0)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    if (length && piece_add(c, st->body + st->body_off - length, 0, length) < 0)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    return 0;
}

/* Serializes everything nghttp2 wants to send and writes it as one
 * gathering write.  Returns 0 or < 0 (session dead). */
static int flush(yb_codec *c)
{
    if (c->dead)
        return -EPIPE;
    c->held = 0;
    for (;;) {
        const uint8_t *d;
        ssize_t n = nghttp2_session_mem_send(c->ng, &d);
        if (n < 0) {
            c->dead = 1;
            return -EPROTO;
        }
        if (n == 0)
            break;
        int rc = out_add(c, d, (size_t)n);
        if (rc < 0) {
            c->dead = 1;
            return rc;
        }
    }
    int rc = write_batch(c);
    /* a quiet session keeps no output buffers (a thousand idle sessions
     * would otherwise each keep theirs); a busy one keeps a small one */
    if (!c->active || c->out_cap > OUT_KEEP_MAX) {
        free(c->out);
        free(c->pieces);
        c->out = NULL;
        c->pieces = NULL;
        c->out_cap = 0;
    }
    return rc;
}

static int http_to_grpc(int status)
{
    switch (status) {
    case 400: return GRPC_INTERNAL;
    case 401: return GRPC_UNAUTHENTICATED;
    case 403: return GRPC_PERMISSION_DENIED;
    case 404: return GRPC_UNIMPLEMENTED;
    case 429: case 502: case 503: case 504: return GRPC_UNAVAILABLE;
    default: return GRPC_UNKNOWN;
    }
}

/* RST_STREAM error codes → gRPC codes (gRPC over HTTP/2 protocol). */
static int rst_to_grpc(uint32_t ec)
{
    switch (ec) {
    case NGHTTP2_REFUSED_STREAM: return GRPC_UNAVAILABLE;
    case NGHTTP2_CANCEL: return GRPC_CANCELLED;
    case NGHTTP2_ENHANCE_YOUR_CALM: return GRPC_RESOURCE_EXHAUSTED;
    case NGHTTP2_INADEQUATE_SECURITY: return GRPC_PERMISSION_DENIED;
    default: return GRPC_INTERNAL;
    }
}

/* Checks the message m (n bytes) of a unary gNMI response.  Returns 1
 * when it is valid. */
static int check_unary(const h2_req *h, const uint8_t *m, size_t n)
{
    switch (h->rpc) {
    case RPC_SET: {
        /* the report needs only the number of results: counted on the
         * wire (checked as unpack would), nothing allocated */
        size_t results;
        return yb_gnmi_wire_count_id(&gnmi__set_response__descriptor, m, n, h->results_field, &results) == 0 &&
               results == h->set_ops;
    }
    case RPC_GET: {
        Gnmi__GetResponse *r = (Gnmi__GetResponse *)yb_gnmi_unpack(&gnmi__get_response__descriptor, m, n);
        if (r)
            gnmi__get_response__free_unpacked(r, NULL);
        return r != NULL;
    }
    case RPC_CAPABILITIES: {
        Gnmi__CapabilityResponse *r = (Gnmi__CapabilityResponse *)yb_gnmi_unpack(&gnmi__capability_response__descriptor, m, n);
        if (r)
            gnmi__capability_response__free_unpacked(r, NULL);
        return r != NULL;
    }
    default:
        return 1;
    }
}

/* "grpc 3 INVALID_ARGUMENT: <grpc-message>" (or what stands for the
 * message: the reset, the HTTP status), after "expected grpc 0 OK, got "
 * for a mismatch (x->res.err already set). */
static void grpc_reason(yb_exchange *x, const stream *st, int g, uint32_t error_code)
{
    char *r = x->res.reason;
    size_t rl = sizeof x->res.reason;
    const char *name = yb_grpc_name(g);
    char more[64] = "";
    int32_t want = x->req->expected_grpc;
    if (x->res.err == YB_ERR_UNEXPECTED) /* "expected grpc 0 OK, got grpc 6 ..." */
        yb_reason_fmt(r, rl, "expected grpc %d %s, got ", (int)want,
                      yb_grpc_name(want) ? yb_grpc_name(want) : "");
    else
        r[0] = 0;
    size_t at = strlen(r);
    if (name)
        yb_reason_fmt(r + at, rl - at, "grpc %d %s", g, name);
    else
        yb_reason_fmt(r + at, rl - at, "grpc %d", g);
    if (st->grpc_msg[0]) {
        yb_reason_append(r, rl, (const uint8_t *)": ", 2);
        yb_reason_append(r, rl, (const uint8_t *)st->grpc_msg, strlen(st->grpc_msg));
    } else if (error_code != NGHTTP2_NO_ERROR && st->grpc_status < 0) {
        snprintf(more, sizeof more, ": stream reset by the server (%s)",
                 nghttp2_http2_strerror(error_code));
    } else if (st->http_status && st->http_status != 200) {
        snprintf(more, sizeof more, ": http %d", st->http_status);
    } else if (st->grpc_status < 0) {
        snprintf(more, sizeof more, ": the response has no grpc-status");
    }
    yb_reason_append(r, rl, (const uint8_t *)more, strlen(more));
}

static void stream_complete(yb_codec *c, stream *st, uint32_t error_code)
{
    yb_exchange *x = st->x;
    const h2_req *h = x->req->h2;
    x->res.done = c->now;
    x->res.status = st->http_status;
    int g = st->grpc_status;
    if (st->stopped) {
        /* A STREAM subscription we ended because the run ended: it ran as
         * long as it was meant to, so it is ok, with no gRPC status of
         * the server's unless one came before our reset. */
        x->res.grpc_status = g;
        if (g > GRPC_CANCELLED)
            x->res.err = YB_ERR_STATUS; /* the server ended it with an error first */
        if (!x->res.sent)
            x->res.sent = c->now;
        return;
    }
    if (h->grpc) {
        if (st->too_large && g < 0)
            g = GRPC_RESOURCE_EXHAUSTED; /* as gRPC's own clients say of a message over their limit */
        else if (error_code != NGHTTP2_NO_ERROR && g < 0)
            g = rst_to_grpc(error_code);
        else if (st->http_status && st->http_status != 200)
            g = http_to_grpc(st->http_status);
        else if (g < 0)
            g = GRPC_INTERNAL; /* no grpc-status: the call did not finish properly */
        x->res.grpc_status = g;
        if (g == GRPC_OK && (st->pre_len || st->msg_need))
            mark_bad(st, "the call ended inside a gRPC message");
        if (g == GRPC_OK && !st->bad && h->rpc != RPC_SUBSCRIBE && h->rpc != RPC_OTHER &&
            (!st->have_msg || !check_unary(h, st->msg, st->msg_len)))
            mark_bad(st, !st->have_msg        ? "the call ended OK without a response message"
                         : h->rpc == RPC_SET ? "SetResponse does not decode or does not answer "
                                               "every operation of the SetRequest"
                         : h->rpc == RPC_GET ? "GetResponse does not decode"
                                             : "CapabilityResponse does not decode");
        if (st->too_large) {
            x->res.err = YB_ERR_TOO_LARGE;
            yb_reason_fmt(x->res.reason, sizeof x->res.reason, "too large: %s",
                          st->bad_why ? st->bad_why : "response over --max-body");
        } else if (st->bad) {
            x->res.err = YB_ERR_PROTOCOL;
            yb_reason_fmt(x->res.reason, sizeof x->res.reason, "protocol: %s",
                          st->bad_why ? st->bad_why : "malformed gRPC response");
        } else {
            x->res.err =
                yb_accept_grpc(&c->cfg->accept, x->req->accept, x->req->expected_grpc, g);
            if (x->res.err != YB_ERR_NONE)
                grpc_reason(x, st, g, error_code);
        }
    } else {
        if (st->too_large) {
            x->res.err = YB_ERR_TOO_LARGE;
            yb_reason_fmt(x->res.reason, sizeof x->res.reason, "too large: %s",
                          st->bad_why ? st->bad_why : "response over --max-body");
        } else if (error_code != NGHTTP2_NO_ERROR) {
            x->res.err = YB_ERR_PROTOCOL;
            yb_reason_fmt(x->res.reason, sizeof x->res.reason,
                          "protocol: stream reset by the server (%s)",
                          nghttp2_http2_strerror(error_code));
        } else if (!st->http_status || st->bad) {
            x->res.err = YB_ERR_PROTOCOL;
            yb_reason_fmt(x->res.reason, sizeof x->res.reason, "protocol: %s",
                          st->bad_why ? st->bad_why : "the stream ended without a :status");
        } else {
            x->res.err = yb_accept_http(&c->cfg->accept, x->req->accept, x->req->expected_status,
                                        st->http_status, x->res.reason, sizeof x->res.reason);
        }
    }
    if (x->res.err == YB_ERR_NONE && x->req->keep_resp) {
        /* the next step of its chain reads it (valid while done runs) */
        x->body = !h->grpc ? st->plain : st->have_msg ? st->msg : NULL;
        x->body_len = !h->grpc ? st->plain_len : st->have_msg ? st->msg_len : 0;
        x->body_whole = h->grpc ? h->rpc != RPC_SUBSCRIBE : !st->plain_cut;
        x->body_grpc = h->grpc;
        x->head = st->head;
        x->head_len = st->head_len;
    }
    if (x->res.err != YB_ERR_NONE && x->res.err != YB_ERR_TOO_LARGE) {
        /* what the server said, for the report: a unary gRPC call's
         * message, or the head of a plain HTTP/2 error body */
        if (st->have_msg && st->msg_len) {
            x->err_body = st->msg;
            x->err_body_len = st->msg_len < YB_ERR_BODY_KEEP ? st->msg_len : YB_ERR_BODY_KEEP;
        } else if (st->err_len) {
            x->err_body = st->err_head;
            x->err_body_len = st->err_len;
        }
    }
    if (!x->res.sent)
        x->res.sent = c->now;
}

static int on_begin_headers(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
    (void)ng;
    yb_codec *c = ud;
    stream *st = stream_of(c, f->hd.stream_id);
    if (st && !st->x->res.first_byte)
        st->x->res.first_byte = c->now;
    return 0;
}

static int parse_status(const uint8_t *v, size_t n)
{
    if (n == 0 || n > 3)
        return -1;
    int s = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return -1;
        s = s * 10 + (v[i] - '0');
    }
    return s;
}

/* Keeps a header field of a response the next chain step reads: whole
 * fields while they fit YB_PICK_HEAD_MAX (nghttp2 gives names in lower
 * case). */
static void keep_head(yb_codec *c, stream *st, const uint8_t *name, size_t nl,
                      const uint8_t *value, size_t vl)
{
    if (nl + vl + 3 > YB_PICK_HEAD_MAX - st->head_len)
        return;
    if (!st->head) { /* from the worker's budget, as the messages kept */
        if (yb_mem_take(c->host->budget, YB_PICK_HEAD_MAX) < 0)
            return;
        if (!(st->head = malloc(YB_PICK_HEAD_MAX))) {
            yb_mem_give(c->host->budget, YB_PICK_HEAD_MAX);
            return;
        }
    }
    uint8_t *o = st->head + st->head_len;
    memcpy(o, name, nl);
    memcpy(o + nl, ": ", 2);
    if (vl)
        memcpy(o + nl + 2, value, vl);
    o[nl + 2 + vl] = '\n';
    st->head_len += nl + vl + 3;
}

static int on_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *ud)
{
    (void)ng;
    (void)flags;
    yb_codec *c = ud;
    stream *st = stream_of(c, f->hd.stream_id);
    if (!st)
        return 0;
    if (st->x->req->keep_resp)
        keep_head(c, st, name, namelen, value, valuelen);
    if (namelen == 7 && !memcmp(name, ":status", 7)) {
        int s = parse_status(value, valuelen);
        if (s < 0)
            mark_bad(st, ":status is not a 3-digit number");
        else if (s >= 200 || !st->http_status)
            st->http_status = s;
    } else if (namelen == 11 && !memcmp(name, "grpc-status", 11)) {
        int s = parse_status(value, valuelen);
        st->grpc_status = s < 0 ? GRPC_UNKNOWN : s;
    } else if (namelen == 12 && !memcmp(name, "grpc-message", 12)) {
        st->grpc_msg[0] = 0;
        yb_reason_append_pct(st->grpc_msg, sizeof st->grpc_msg, value, valuelen);
    }
    return 0;
}

/* The server ended the call while our side is still open (a Subscribe
 * rejected with UNAUTHENTICATED or UNAVAILABLE before our half-close, a
 * POLL or STREAM call ended by the server, an answer that beat a long
 * request body): the call is over, so it completes now with the server's
 * status, and our side is reset instead of being kept open until the run
 * or the request's timeout ends it. */
static void remote_ended(yb_codec *c, stream *st, int32_t sid)
{
    stream_unbind(c, sid);
    stream_complete(c, st, NGHTTP2_NO_ERROR);
    nghttp2_submit_rst_stream(c->ng, NGHTTP2_FLAG_NONE, sid, NGHTTP2_NO_ERROR);
    stream_done(c, st);
}

static int on_frame_recv(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
    (void)ng;
    yb_codec *c = ud;
    switch (f->hd.type) {
    case NGHTTP2_SETTINGS:
        if (f->hd.flags & NGHTTP2_FLAG_ACK)
            c->got_ack = 1;
        else
            c->got_settings = 1;
        if (c->got_ack && c->got_settings && !c->ready) {
            c->ready = 1;
            c->host->ready(c->hostdata);
        }
        break;
    case NGHTTP2_GOAWAY: {
        /* exchanges the GOAWAY did not cover are retried; the reason is for
         * those that fail when the server then closes */
        char why[YB_REASON_MAX];
        yb_reason_fmt(why, sizeof why, "closed: the server sent GOAWAY (%s)",
                      nghttp2_http2_strerror(f->goaway.error_code));
        if (f->goaway.opaque_data_len) {
            yb_reason_append(why, sizeof why, (const uint8_t *)": ", 2);
            yb_reason_append(why, sizeof why, f->goaway.opaque_data, f->goaway.opaque_data_len);
        }
        c->goaway = 1;
        c->host->close(c->hostdata, 0, YB_ERR_NONE, why);
        break;
    }
    case NGHTTP2_HEADERS: {
        stream *st = stream_of(c, f->hd.stream_id);
        if (st)
            st->got_headers = 1;
        break;
    }
    default:
        break;
    }
    if ((f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) &&
        (f->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
        stream *st = stream_of(c, f->hd.stream_id);
        if (st && !st->local_ended)
            remote_ended(c, st, f->hd.stream_id);
    }
    return 0;
}

static uint64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Subscribe: a sync_response arrived.  POLL: lets the next Poll go out,
 * or, after the last Poll's sync_response, the half-close. */
static void sub_synced(yb_codec *c, stream *st, int32_t sid)
{
    const h2_req *h = st->x->req->h2;
    if (!st->x->res.sync_ns)
        st->x->res.sync_ns = c->now > st->x->res.send_start ? c->now - st->x->res.send_start : 1;
    if (h->sub_mode != SUB_POLL || st->may_end)
        return;
    if (st->body_limit < st->body_len) {
        /* the next message: its prefix was checked whole by prepare's walk,
         * but bound it anyway */
        size_t left = st->body_len - st->body_limit, n = left;
        if (left >= YB_GRPC_PREFIX) {
            const uint8_t *p = st->body + st->body_limit;
            uint64_t ml = (uint64_t)p[1] << 24 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 8 | p[4];
            if (ml + YB_GRPC_PREFIX < left)
                n = (size_t)ml + YB_GRPC_PREFIX;
        }
        st->body_limit += n;
    } else {
        st->may_end = 1;
    }
    if (st->deferred) {
        st->deferred = 0;
        nghttp2_session_resume_data(c->ng, sid);
    }
}

/* Subscribe: decodes one complete SubscribeResponse (m, n bytes). */
static void sub_message(yb_codec *c, stream *st, int32_t sid, const uint8_t *m, size_t n)
{
    Gnmi__SubscribeResponse *r = (Gnmi__SubscribeResponse *)yb_gnmi_unpack(&gnmi__subscribe_response__descriptor, m, n);
    st->messages++;
    if (!r) {
        mark_bad(st, "SubscribeResponse does not decode");
        return;
    }
    if (r->response_case == GNMI__SUBSCRIBE_RESPONSE__RESPONSE_UPDATE && r->update) {
        const Gnmi__Notification *nf = r->update;
        int64_t late = -1;
        if (nf->timestamp > 0) {
            uint64_t w = wall_ns();
            late = w > (uint64_t)nf->timestamp ? (int64_t)(w - (uint64_t)nf->timestamp) : 0;
        }
        st->x->res.notifications++;
        st->x->res.updates += nf->n_update;
        if (c->host->notify)
            c->host->notify(c->hostdata, c->now, late, nf->n_update);
        if (c->host->notification)
            c->host->notification(c->hostdata, nf);
    } else if (r->response_case == GNMI__SUBSCRIBE_RESPONSE__RESPONSE_SYNC_RESPONSE &&
               r->sync_response) {
        sub_synced(c, st, sid);
    }
    gnmi__subscribe_response__free_unpacked(r, NULL);
}

/* Stops st: its response cannot be kept (too_large = 1: over --max-body
 * or the budget) or is not valid.  Its memory goes back at once; our
 * RST_STREAM ends the stream and on_stream_close completes it. */
static void stream_stop(yb_codec *c, stream *st, int32_t sid, int too_large, const char *why)
{
    mark_bad(st, why);
    st->too_large = too_large;
    stream_drop_body(c, st);
    nghttp2_submit_rst_stream(c->ng, NGHTTP2_FLAG_NONE, sid, NGHTTP2_CANCEL);
}

/* A gRPC message prefix is complete: checks it and makes room for the
 * message.  Returns 0, or -1 when the stream was stopped. */
static int msg_begin(yb_codec *c, stream *st, int32_t sid, int unary)
{
    const uint8_t *p = st->pre;
    uint64_t ml = (uint64_t)p[1] << 24 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 8 | p[4];
    if (p[0] != 0 || (unary && st->have_msg)) {
        /* compressed (we never offer compression), or a second message on
         * a unary call */
        stream_stop(c, st, sid, 0,
                    p[0] ? "compressed gRPC message (never offered)"
                         : "a second response message on a unary call");
        return -1;
    }
    if (ml > c->cfg->max_body) {
        stream_stop(c, st, sid, 1, "gRPC message larger than --max-body");
        return -1;
    }
    if (!st->msg_cap && ml <= sizeof st->small) {
        st->msg = st->small;
    } else if (ml > st->msg_cap) {
        /* the whole announced length is taken from the budget up front:
         * a server cannot make us hold more than it allows */
        if (yb_mem_take(c->host->budget, ml - st->msg_cap) < 0) {
            stream_stop(c, st, sid, 1, "gRPC message over the worker's response memory budget");
            return -1;
        }
        uint8_t *nb = realloc(st->msg == st->small ? NULL : st->msg, (size_t)ml);
        if (!nb) {
            yb_mem_give(c->host->budget, ml - st->msg_cap);
            stream_stop(c, st, sid, 1, "out of memory keeping a gRPC message");
            return -1;
        }
        st->msg = nb;
        st->msg_cap = (size_t)ml;
    }
    st->msg_len = 0;
    st->msg_need = (size_t)ml;
    return 0;
}

/* Moves up to want - *have bytes from (*d, *len) to dst + *have. */
static void take_bytes(uint8_t *dst, size_t *have, size_t want, const uint8_t **d, size_t *len)
{
    size_t n = want - *have;
    if (n > *len)
        n = *len;
    memcpy(dst + *have, *d, n);
    *have += n;
    *d += n;
    *len -= n;
}

/* Feeds response DATA of a gNMI call into the message assembler. */
static void grpc_feed(yb_codec *c, stream *st, int32_t sid, const uint8_t *d, size_t len)
{
    const h2_req *h = st->x->req->h2;
    int unary = h->rpc != RPC_SUBSCRIBE;
    while (len && !st->bad) {
        if (!st->msg_need && st->pre_len < YB_GRPC_PREFIX) {
            take_bytes(st->pre, &st->pre_len, YB_GRPC_PREFIX, &d, &len);
            if (st->pre_len < YB_GRPC_PREFIX || msg_begin(c, st, sid, unary) < 0)
                continue;
        } else {
            take_bytes(st->msg, &st->msg_len, st->msg_need, &d, &len);
        }
        if (st->pre_len == YB_GRPC_PREFIX && st->msg_len == st->msg_need) {
            /* a message is complete */
            st->pre_len = 0;
            st->msg_need = 0;
            if (unary)
                st->have_msg = 1;
            else
                sub_message(c, st, sid, st->msg, st->msg_len);
        }
    }
}

/* Plain HTTP/2: keeps the first bytes of an error response's body. */
static void keep_err_head(yb_codec *c, stream *st, const uint8_t *d, size_t len)
{
    if (!st->err_head) {
        if (yb_mem_take(c->host->budget, YB_ERR_BODY_KEEP) < 0)
            return; /* the report can do without it */
        if (!(st->err_head = malloc(YB_ERR_BODY_KEEP))) {
            yb_mem_give(c->host->budget, YB_ERR_BODY_KEEP);
            return;
        }
    }
    size_t n = YB_ERR_BODY_KEEP - st->err_len;
    if (n > len)
        n = len;
    memcpy(st->err_head + st->err_len, d, n);
    st->err_len += n;
}

static int on_data_chunk(nghttp2_session *ng, uint8_t flags, int32_t sid, const uint8_t *d,
                         size_t len, void *ud)
{
    (void)ng;
    (void)flags;
    yb_codec *c = ud;
    stream *st = stream_of(c, sid);
    if (!st)
        return 0;
    st->x->res.bytes_in += len;
    if (!st->x->res.first_byte)
        st->x->res.first_byte = c->now;
    if (st->bad)
        return 0;
    const h2_req *h = st->x->req->h2;
    if (!h->grpc || h->rpc == RPC_OTHER || st->http_status != 200) {
        /* other calls, and a gRPC call answered without :status 200 (its
         * body is no gRPC response): counted, not kept, but for the head
         * of an error */
        if (st->http_status >= 300 && st->err_len < YB_ERR_BODY_KEEP)
            keep_err_head(c, st, d, len);
        if (!h->grpc && st->x->req->keep_resp)
            keep_plain(c, st, d, len);
        return 0;
    }
    grpc_feed(c, st, sid, d, len);
    return 0;
}

static int on_stream_close(nghttp2_session *ng, int32_t sid, uint32_t ec, void *ud)
{
    (void)ng;
    yb_codec *c = ud;
    stream *st = stream_of(c, sid);
    if (!st)
        return 0;
    stream_unbind(c, sid);
    yb_exchange *x = st->x;
    if (ec == NGHTTP2_REFUSED_STREAM && !st->got_headers) {
        /* Refused (or above GOAWAY's last stream id): not processed, so it
         * may be retried on another session. */
        x->retry = 1;
        x->res.done = c->now;
    } else {
        stream_complete(c, st, ec);
    }
    stream_done(c, st);
    return 0;
}

static ssize_t read_body(nghttp2_session *ng, int32_t sid, uint8_t *buf, size_t len,
                         uint32_t *flags, nghttp2_data_source *src, void *ud)
{
    (void)ng;
    if (!stream_of(ud, sid))
        return NGHTTP2_ERR_DEFERRED; /* completed already; our reset ends it */
    stream *st = src->ptr;
    size_t n = st->body_limit - st->body_off;
    if (n > len)
        n = len;
    (void)buf;
    st->body_off += n;
    if (st->body_off == st->body_len && st->may_end) {
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    } else if (n == 0) {
        /* Subscribe: the next Poll waits for a sync_response; a STREAM
         * subscription keeps its side open until the run ends. */
        st->deferred = 1;
        return NGHTTP2_ERR_DEFERRED;
    }
    /* nothing copied into buf: send_data hands the payload over as a piece */
    *flags |= NGHTTP2_DATA_FLAG_NO_COPY;
    return (ssize_t)n;
}

static int on_frame_send(nghttp2_session *ng, const nghttp2_frame *f, void *ud)
{
    (void)ng;
    yb_codec *c = ud;
    if ((f->hd.type == NGHTTP2_DATA || f->hd.type == NGHTTP2_HEADERS) &&
        (f->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
        stream *st = stream_of(c, f->hd.stream_id);
        if (st)
            st->local_ended = 1;
        if (st && !st->x->res.sent)
            st->x->res.sent = c->now;
    } else if (f->hd.type == NGHTTP2_DATA) {
        /* Subscribe: the request is sent once its SubscribeRequest is */
        stream *st = stream_of(c, f->hd.stream_id);
        const h2_req *h = st ? st->x->req->h2 : NULL;
        if (h && h->rpc == RPC_SUBSCRIBE && !st->x->res.sent && st->body_off >= st->first_len)
            st->x->res.sent = c->now;
    }
    return 0;
}

/* ---- codec ops ------------------------------------------------------------ */

static yb_codec *h2_create(const yb_codec_cfg *cfg, const yb_codec_host *host, void *hostdata)
{
    yb_codec *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->cfg = cfg;
    c->host = host;
    c->hostdata = hostdata;
    nghttp2_session_callbacks *cbs;
    if (nghttp2_session_callbacks_new(&cbs)) {
        free(c);
        return NULL;
    }
    nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data_chunk);
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_stream_close);
    nghttp2_session_callbacks_set_on_frame_send_callback(cbs, on_frame_send);
    nghttp2_session_callbacks_set_send_data_callback(cbs, send_data);
    nghttp2_option *opt = NULL;
    nghttp2_option_new(&opt);
    if (opt)
        nghttp2_option_set_peer_max_concurrent_streams(opt, 100);
    int rc = nghttp2_session_client_new3(&c->ng, cbs, c, opt, &mem_pooled);
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cbs);
    if (rc) {
        free(c);
        return NULL;
    }
    return c;
}

static void h2_destroy(yb_codec *c)
{
    if (!c)
        return;
    /* Streams still open: their exchanges belong to the session, which
     * fails them; only our per-stream state is freed here. */
    while (c->streams)
        stream_free(c, c->streams);
    while (c->pool) {
        stream *st = c->pool;
        c->pool = st->next;
        free(st);
    }
    nghttp2_session_del(c->ng);
    free(c->out);
    free(c->pieces);
    free(c->fill.p);
    free(c->one.p);
    free(c->nv);
    free(c);
}

static int h2_start(yb_codec *c)
{
    /* A large window so flow control never throttles a load test from our
     * side; the server's SETTINGS are honoured by nghttp2. */
    nghttp2_settings_entry iv[] = {
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 16 * 1024 * 1024},
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100},
    };
    if (nghttp2_submit_settings(c->ng, NGHTTP2_FLAG_NONE, iv, sizeof iv / sizeof iv[0]))
        return -EPROTO;
    nghttp2_session_set_local_window_size(c->ng, NGHTTP2_FLAG_NONE, 0, 64 * 1024 * 1024);
    return flush(c);
}

static unsigned h2_capacity(const yb_codec *c)
{
    if (!c->ready || c->goaway || c->dead)
        return 0;
    uint32_t remote = nghttp2_session_get_remote_settings(c->ng,
                                                          NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
    unsigned cap = c->cfg->streams ? c->cfg->streams : 1;
    if (remote < cap)
        cap = remote;
    return c->active < cap ? cap - c->active : 0;
}

static int h2_usable(const yb_codec *c)
{
    return !c->goaway && !c->dead;
}

/* A templated request: fills st's body and c->nv (the header fields, the
 * templated values in c->fill; nghttp2 copies them when it submits).
 * Returns 0 or < 0; *out_bytes gets what the request weighs. */
static int fill_request(yb_codec *c, const h2_req *h, stream *st, const yb_exchange *x,
                        uint64_t *out_bytes)
{
    yb_tmpl_vars v = yb_exchange_vars(x, c->cfg);
    if (h->body_tmpl) {
        yb_tmpl_buf b = {0};
        int rc = yb_tmpl_fill(h->body_tmpl, &v, &b);
        if (rc < 0) {
            free(b.p);
            return rc;
        }
        st->body = st->body_own = b.p;
        st->body_len = b.len;
        st->first_len = b.len;
        if (h->sub_mode >= 0 && b.len >= YB_GRPC_PREFIX) {
            /* Subscribe: the first message as filled */
            uint64_t ml = (uint64_t)b.p[1] << 24 | (uint64_t)b.p[2] << 16 |
                          (uint64_t)b.p[3] << 8 | b.p[4];
            if (ml + YB_GRPC_PREFIX <= b.len && h->first_len < h->body_len)
                st->first_len = (size_t)ml + YB_GRPC_PREFIX;
        }
    }
    if (c->nv_cap < h->n_nv) {
        nghttp2_nv *nv = realloc(c->nv, h->n_nv * sizeof *nv);
        if (!nv)
            return -ENOMEM;
        c->nv = nv;
        c->nv_cap = h->n_nv;
    }
    /* values into one buffer first (it may move as it grows), then point at them */
    c->fill.len = 0;
    uint64_t bytes = st->body_len;
    for (size_t i = 0; i < h->n_nv; i++) {
        c->nv[i] = h->nv[i];
        if (h->nv_tmpl[i]) {
            int rc = yb_tmpl_fill(h->nv_tmpl[i], &v, &c->one);
            if (rc == 0 && c->fill.cap - c->fill.len < c->one.len + 1) {
                size_t nc = (c->fill.len + c->one.len + 1) * 2;
                uint8_t *p = realloc(c->fill.p, nc);
                if (!p)
                    rc = -ENOMEM;
                else {
                    c->fill.p = p;
                    c->fill.cap = nc;
                }
            }
            if (rc < 0)
                return rc;
            memcpy(c->fill.p + c->fill.len, c->one.p, c->one.len);
            c->nv[i].valuelen = c->one.len;
            /* c->fill is refilled by the next submit, before the flush */
            c->nv[i].flags = NGHTTP2_NV_FLAG_NO_COPY_NAME;
            c->fill.len += c->one.len;
            c->fill.p[c->fill.len++] = 0;
        }
        bytes += c->nv[i].namelen + c->nv[i].valuelen;
    }
    size_t off = 0;
    for (size_t i = 0; i < h->n_nv; i++)
        if (h->nv_tmpl[i]) {
            c->nv[i].value = c->fill.p + off;
            off += c->nv[i].valuelen + 1;
        }
    *out_bytes = bytes;
    return 0;
}

static int h2_submit(yb_codec *c, yb_exchange *x, uint64_t now)
{
    const h2_req *h = x->req->h2;
    stream *st = stream_new(c);
    if (!st)
        return -ENOMEM;
    st->x = x;
    st->grpc_status = -1;
    st->body = h->body;
    st->body_len = h->body_len;
    st->first_len = h->first_len;
    const nghttp2_nv *nv = h->nv;
    uint64_t bytes = x->req->wire_len;
    if (x->req->templated) {
        int rc = fill_request(c, h, st, x, &bytes);
        if (rc < 0) {
            free(st->body_own);
            stream_put(c, st);
            return rc;
        }
        nv = c->nv;
    }
    st->body_limit = st->body_len;
    st->may_end = 1;
    if (h->rpc == RPC_SUBSCRIBE && h->sub_mode != SUB_ONCE) {
        /* POLL: the SubscribeRequest first, each Poll after a sync_response;
         * STREAM: the SubscribeRequest, and the stream stays open */
        st->body_limit = st->first_len;
        st->may_end = 0;
    }
    nghttp2_data_provider dp = {.source.ptr = st, .read_callback = read_body};
    c->now = now;
    int32_t sid = nghttp2_submit_request(c->ng, NULL, nv, h->n_nv, st->body_len ? &dp : NULL, st);
    if (sid < 0) {
        free(st->body_own);
        stream_put(c, st);
        return -EPROTO;
    }
    x->stream_id = (uint32_t)sid;
    x->res.bytes_out = bytes;
    if (st->body_len)
        c->held++;
    stream_link(c, st);
    return 0; /* written by h2_flush, with whatever else the engine submits now */
}

/* Whether the flush may wait: nothing is queued but HEADERS of requests
 * with a body while the peer's connection window is shut.  Their DATA
 * cannot go before its WINDOW_UPDATE, whose read flushes again; written
 * now, each HEADERS would cost a write(2) of its own (and the server a
 * read) for a frame it cannot act on without the body. */
static int may_hold(yb_codec *c)
{
    return c->held && nghttp2_session_get_remote_window_size(c->ng) <= 0 &&
           nghttp2_session_get_outbound_queue_size(c->ng) == c->held;
}

static void h2_flush(yb_codec *c, uint64_t now)
{
    c->now = now;
    if (may_hold(c))
        return;
    if (flush(c) < 0)
        return; /* the session is dead; its exchanges fail with it */
    /* the last output of a finished session (after GOAWAY) is out */
    if (!nghttp2_session_want_read(c->ng) && !nghttp2_session_want_write(c->ng))
        c->host->close(c->hostdata, 0, YB_ERR_NONE, NULL);
}

static int h2_on_read(yb_codec *c, const uint8_t *d, size_t n, uint64_t now)
{
    c->now = now;
    if (!c->got_bytes && n) {
        c->got_bytes = 1;
        if (n >= 5 && !memcmp(d, "HTTP/", 5)) {
            /* our preface was read as an HTTP/1.x request */
            c->dead = 1;
            c->host->close(c->hostdata, 1, YB_ERR_PROTOCOL,
                           "protocol: the server answered the HTTP/2 preface in HTTP/1.x: it "
                           "does not speak HTTP/2 here (h2c needs prior-knowledge support)");
            return -EPROTO;
        }
    }
    ssize_t rc = nghttp2_session_mem_recv(c->ng, d, n);
    if (rc < 0) {
        char why[YB_REASON_MAX];
        yb_reason_fmt(why, sizeof why, "protocol: HTTP/2: %s", nghttp2_strerror((int)rc));
        c->dead = 1;
        c->host->close(c->hostdata, 1, YB_ERR_PROTOCOL, why);
        return -EPROTO;
    }
    /* no write here: the host flushes (h2_flush) once it has submitted
     * what this input let it, so output and new requests share a write */
    if (!nghttp2_session_want_read(c->ng) && !nghttp2_session_want_write(c->ng))
        c->host->close(c->hostdata, 0, YB_ERR_NONE, NULL);
    return 0;
}

static void h2_on_eof(yb_codec *c, uint64_t now)
{
    c->now = now;
    c->dead = 1;
}

static int h2_cancel(yb_codec *c, yb_exchange *x)
{
    if (x->stream_id) {
        stream *st = stream_of(c, (int32_t)x->stream_id);
        if (st) {
            stream_unbind(c, (int32_t)x->stream_id);
            stream_free(c, st);
        }
        nghttp2_submit_rst_stream(c->ng, NGHTTP2_FLAG_NONE, (int32_t)x->stream_id,
                                  NGHTTP2_CANCEL);
        x->stream_id = 0;
        flush(c);
    }
    return !c->dead;
}

static int h2_finish(yb_codec *c, yb_exchange *x)
{
    stream *st = x->stream_id ? stream_of(c, (int32_t)x->stream_id)
                              : NULL;
    if (!st || st->stopped)
        return -ENOENT;
    st->stopped = 1;
    if (nghttp2_submit_rst_stream(c->ng, NGHTTP2_FLAG_NONE, (int32_t)x->stream_id,
                                  NGHTTP2_CANCEL))
        return -EPROTO;
    return 0; /* on_stream_close completes x when the reset is written */
}

static void h2_on_drain(yb_codec *c, uint64_t now)
{
    (void)c; (void)now;
}

const yb_codec_ops yb_h2_client_ops = {
    .name = "h2",
    .prepare = h2_prepare,
    .prepared_free = h2_prepared_free,
    .create = h2_create,
    .destroy = h2_destroy,
    .start = h2_start,
    .capacity = h2_capacity,
    .usable = h2_usable,
    .submit = h2_submit,
    .on_read = h2_on_read,
    .on_eof = h2_on_eof,
    .cancel = h2_cancel,
    .on_drain = h2_on_drain,
    .flush = h2_flush,
    .finish = h2_finish,
};
