/* The codec interface: one protocol engine per session (HTTP/1.1 or
 * HTTP/2), in the spirit of h2load's Session.  A codec turns prepared
 * requests into bytes for its host (the session, which owns the
 * transport) and bytes received into completed exchanges.  It never
 * touches sockets, timers or the schedule. */
#ifndef YB_CODEC_H
#define YB_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>
#include "codec/accept.h"
#include "corpus/corpus.h"
#include "stats/recorder.h"
#include "tmpl/tmpl.h"

struct Gnmi__Notification; /* gnmi/gnmi.pb-c.h */
struct yb_pick;            /* tmpl/pick.h */

/* Settings shared by the codecs of a run (read-only during the run). */
typedef struct {
    const char *authority;   /* Host / :authority sent (the target's) */
    const char *scheme;      /* "http" / "https" */
    const char *auth_header; /* Authorization value (secret) or NULL */
    const char *user, *password; /* gNMI username/password metadata (secret) or NULL */
    const yb_header *extra;  /* -H headers added to every request */
    size_t n_extra;
    uint64_t timeout_ns;     /* for grpc-timeout; 0 = none */
    uint64_t max_body;       /* response body / gRPC message cap, bytes */
    unsigned streams;        /* HTTP/2: our cap on concurrent streams */
    const char *user_agent;
    yb_accept accept;        /* which replies succeed (accept.h) */
    size_t keep_body;        /* HTTP/1.1: keep the first keep_body bytes of a
                              * successful body for host->done (x->body);
                              * 0 = count them only (a load never keeps them) */
    int templates;           /* --templates: every record is a template */
    uint64_t seed;           /* --seed: what random placeholders derive from */
    const char *target_name; /* {{target}}: the inventory name, or the host */
} yb_codec_cfg;

/* A request made ready for the wire once and replayed many times. */
typedef struct yb_prepared {
    yb_proto protocol;
    uint8_t *wire;        /* HTTP/1.1: the full serialized request */
    size_t wire_len;
    int head;             /* HTTP/1.1: HEAD request (no response body) */
    void *h2;             /* HTTP/2: codec-private (header block, body) */
    uint64_t body_len;    /* request body bytes (for the report) */
    uint64_t record;      /* corpus index it came from */
    uint64_t conn_id;     /* original connection (for --sessions original) */
    uint64_t timestamp_ns;/* original time, relative to the first record */
    uint32_t expected_status; /* from the record; 0 = unknown */
    int32_t expected_grpc;    /* from the record; -1 = unknown */
    const yb_accept *accept;  /* the record's own accepted statuses, or NULL
                               * (owned by the engine's source) */
    uint32_t op;          /* its operation in the worker's recorder
                           * (stats/ops.h), YB_OP_NONE = none; set by
                           * the engine's source when it prepares it */
    int open_ended;       /* a STREAM Subscribe: runs until the run ends
                           * (the engine ends it with the codec's finish) */
    yb_tmpl *tmpl;        /* HTTP/1.1: the wire as a template (filled per
                           * request at submit), or NULL */
    int templated;        /* filled per request (HTTP/2 keeps its templates
                           * in its private part) */
    struct yb_prepared *next_step; /* a chain's next record (owned by the
                           * chain's first, which the source hands out) */
    struct yb_pick *pick; /* a chain step's {{prev....}} values, taken from
                           * the response of the step before (tmpl/pick.h;
                           * owned), or NULL */
    int keep_resp;        /* the next step picks from this one's response:
                           * the codec keeps its body and head for host->done
                           * (yb_exchange.body, .head) */
    unsigned refs;        /* engine bookkeeping: exchanges using it */
    int cached;           /* engine bookkeeping: kept by the source's cache */
    struct yb_blobs *blobs; /* set before prepare, or NULL: the table
                           * (codec/blobs.h) a codec may share its copy of
                           * the body through (HTTP/2), which must outlive
                           * the prepared request */
} yb_prepared;

/* What keeping p prepared costs, about: the bytes it holds (the wire,
 * which holds the body, else the body) and its bookkeeping, every step of
 * its chain.  The measure of the source's cache budget and of the pool's
 * backlog of streamed requests (--max-backlog-bytes). */
static inline uint64_t yb_prepared_cost(const yb_prepared *p)
{
    uint64_t n = 0;
    for (const yb_prepared *q = p; q; q = q->next_step)
        n += sizeof *q + 256 + (q->wire ? q->wire_len : q->body_len);
    return n;
}

/* The memory the responses in flight of one worker may hold (all its
 * sessions, every target): a codec takes from it before it keeps response
 * bytes and gives them back when it lets them go; what does not fit fails
 * the exchange as YB_ERR_TOO_LARGE.  One per worker, used on its thread
 * only. */
typedef struct {
    uint64_t limit; /* bytes */
    uint64_t used;  /* bytes held now */
} yb_mem_budget;

/* The default limit (the engine raises it to one --max-body message, so
 * a single response that --max-body allows always fits). */
#define YB_MEM_BUDGET_DEFAULT (64ull << 20)
/* First bytes of a failed response kept for the report (see err_body). */
#define YB_ERR_BODY_KEEP 1024

/* Takes n bytes from b (NULL = unbounded).  Returns 0, or -1 when they do
 * not fit (nothing taken). */
static inline int yb_mem_take(yb_mem_budget *b, uint64_t n)
{
    if (!b)
        return 0;
    if (n > b->limit - b->used)
        return -1;
    b->used += n;
    return 0;
}
/* Gives back n bytes taken with yb_mem_take. */
static inline void yb_mem_give(yb_mem_budget *b, uint64_t n)
{
    if (b)
        b->used -= n < b->used ? n : b->used;
}

/* One request in flight: what the codec must fill in res (sent,
 * first_byte, done, bytes_out/in, status, grpc_status, err, and for a
 * failure it detected, reason: "http 409", "grpc 3 INVALID_ARGUMENT:
 * ...", "protocol: ..."). */
typedef struct yb_exchange {
    const yb_prepared *req;
    yb_result res;
    /* A failed response's first bytes (at most YB_ERR_BODY_KEEP; NULL when
     * none): owned by the codec and valid only while host->done runs, so a
     * host that wants them copies them there.  Success bodies are never
     * kept (the report needs only their length). */
    const uint8_t *err_body;
    size_t err_body_len;
    /* With yb_codec_cfg.keep_body (HTTP/1.1): a successful response's first
     * bytes, owned by the codec, valid only while host->done runs.  With
     * req->keep_resp, a successful response's body (HTTP/1.1, HTTP/2) or
     * unary gRPC message (body_grpc), at most YB_PICK_BODY_MAX bytes (body_whole:
     * all of it), and its header fields ("name: value\n", names in lower
     * case; at most YB_PICK_HEAD_MAX bytes), for the next step's values. */
    const uint8_t *body;
    size_t body_len;
    int body_whole, body_grpc;
    const uint8_t *head;
    size_t head_len;
    struct yb_pick_vals *got;   /* this step's {{prev....}} values (the
                               * engine's: tv.got points into it) */
    struct yb_exchange *next, *prev; /* owner's lists */
    void *owner;                     /* the session it runs on */
    uint32_t stream_id;              /* HTTP/2 */
    int retry;                       /* HTTP/2 GOAWAY: not processed, may retry */
    /* A templated request's values (req->templated): iter, index and
     * worker set by the engine when it takes the request; the codec adds
     * the seed, the target and the session (numbered across the run from
     * res.session, the pool's number, and workers) when it fills it. */
    yb_tmpl_vars tv;
    uint32_t workers;
    /* A step of a chain (req->next_step or chain_head set; engine
     * bookkeeping): the chain's first request (whose reference the chain
     * holds), when the chain was due, and the session the step before ran
     * on (the pool's number; 0 = any). */
    const yb_prepared *chain_head;
    uint64_t chain_due;
    uint64_t pin_session;
    uint64_t wait_bytes;   /* the pool's: what it holds of the backlog's memory */
} yb_exchange;

/* The values of x's placeholders (see yb_exchange.tv). */
static inline yb_tmpl_vars yb_exchange_vars(const yb_exchange *x, const yb_codec_cfg *cfg)
{
    yb_tmpl_vars v = x->tv;
    v.seed = cfg->seed;
    v.target = cfg->target_name;
    v.session = x->res.session ? (x->res.session - 1) * (x->workers ? x->workers : 1) + v.worker + 1
                               : 0;
    return v;
}

/* What a codec may ask of its session. */
typedef struct {
    /* Write bytes to the transport (copied if they cannot go at once).
     * Returns 1 written, 0 queued, < 0 closing. */
    int (*write)(void *host, const uv_buf_t *bufs, unsigned n);
    /* Exchange x finished (res complete, res.done set). */
    void (*done)(void *host, yb_exchange *x);
    /* The session should close after in-flight work (Connection: close,
     * GOAWAY) or at once (fatal = 1, protocol error).  reason (NULL = none;
     * copied) is given to the exchanges the close fails that have none of
     * their own, e.g. "protocol: the server answered the HTTP/2 preface in
     * HTTP/1.1 (it does not speak HTTP/2 without TLS)". */
    void (*close)(void *host, int fatal, yb_err_class why, const char *reason);
    /* HTTP/2 session ready (SETTINGS exchanged): more capacity now. */
    void (*ready)(void *host);
    /* A Subscribe notification arrived at now (uv_hrtime) carrying
     * n_updates updates; lateness_ns = wall clock - its timestamp (clamped
     * at 0), or -1 when it had no timestamp.  NULL = not wanted.  Called
     * once per notification: it must not allocate per call. */
    void (*notify)(void *host, uint64_t now, int64_t lateness_ns, uint64_t n_updates);
    /* The same notification decoded (a Gnmi__Notification, valid during
     * the call only), for a host that reads its values (device telemetry,
     * src/telemetry).  NULL = not wanted. */
    void (*notification)(void *host, const struct Gnmi__Notification *nf);
    /* The worker's budget for response bytes kept in memory (NULL =
     * unbounded). */
    yb_mem_budget *budget;
} yb_codec_host;

typedef struct yb_codec yb_codec;

typedef struct {
    const char *name;
    /* 1: on a worker's io_uring the transport may copy this codec's small
     * writes and send them with the next receive linked behind them
     * (HTTP/1.1: a request's bytes, once); 0: its writes go to the kernel
     * at once from its own buffers, as with epoll (HTTP/2: gRPC bodies
     * are never copied in user space), and only its reads use the ring. */
    int ring_writes;
    /* Builds a prepared request from a record into out, which it clears
     * (out->blobs is read first: an input).  Returns 0 or -errno; the
     * result is freed with prepared_free. */
    int (*prepare)(const yb_codec_cfg *cfg, const yb_request *r, yb_prepared *out);
    void (*prepared_free)(yb_prepared *p);
    /* Creates codec state for one session (NULL on ENOMEM). */
    yb_codec *(*create)(const yb_codec_cfg *cfg, const yb_codec_host *host, void *hostdata);
    void (*destroy)(yb_codec *c);
    /* The transport is ready (may write a preface).  Returns 0 or < 0. */
    int (*start)(yb_codec *c);
    /* How many more exchanges may be submitted now. */
    unsigned (*capacity)(const yb_codec *c);
    /* 1 when the session can take work at all (HTTP/2: ready, no GOAWAY). */
    int (*usable)(const yb_codec *c);
    /* Starts x (capacity() > 0).  Returns 0 or < 0 (x untouched). */
    int (*submit)(yb_codec *c, yb_exchange *x, uint64_t now);
    /* Bytes received.  Returns 0, or < 0 when the session must close.  A
     * codec with flush writes what they call for (acknowledgements, data
     * the peer now lets go) in the host's next flush, not here. */
    int (*on_read)(yb_codec *c, const uint8_t *d, size_t n, uint64_t now);
    /* The peer closed cleanly (EOF): may complete a close-delimited
     * response.  In-flight exchanges that cannot complete are left for
     * the session to fail. */
    void (*on_eof)(yb_codec *c, uint64_t now);
    /* Abandons x (timeout): HTTP/2 resets the stream; returns 1 when the
     * session stays usable, 0 when it must be closed. */
    int (*cancel)(yb_codec *c, yb_exchange *x);
    /* The transport drained its queue. */
    void (*on_drain)(yb_codec *c, uint64_t now);
    /* Writes what submit() queued, so requests submitted together leave
     * in one write; NULL when submit writes at once (HTTP/1.1). */
    void (*flush)(yb_codec *c, uint64_t now);
    /* Ends an open-ended exchange (req->open_ended) because the run ends:
     * HTTP/2 resets its stream with CANCEL; x then completes as ok through
     * host->done once the reset is written (the caller flushes).  Returns 0,
     * or < 0 when x is not in flight here.  NULL when the codec has no
     * open-ended exchanges. */
    int (*finish)(yb_codec *c, yb_exchange *x);
} yb_codec_ops;

extern const yb_codec_ops yb_h1_client_ops;
extern const yb_codec_ops yb_h2_client_ops;

#endif
