/* The capture pipeline: packets -> decode -> reassembly -> connections
 * (protocol recognition, TLS) -> extractors -> records in order -> emit.
 *
 * Records leave in the order their requests started (the corpus is a
 * replay order), yet a record is only final once its response status is
 * known.  Each request therefore gets a slot in one queue when its first
 * byte is seen; the head of the queue is written as soon as its extractor
 * lets go of it.  The queue is bounded by max_total_buffer: when it is
 * exceeded the head is forced out (without its status, or dropped when the
 * request itself is unfinished), so a stalled connection cannot hold the
 * whole capture in memory. */
#include "config.h"
#include "capture/capture_priv.h"
#include "codec/h1.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#if defined(__has_include)
#if __has_include("capture/tls_decrypt.h")
#include "capture/tls_decrypt.h"
#define YB_HAVE_TLS_DECRYPT 1
#endif
#endif
#ifndef YB_HAVE_TLS_DECRYPT
#define YB_HAVE_TLS_DECRYPT 0
#endif

#define MAX_QUEUE 1000000u /* records waiting, whatever their size */
#define TALLY_MAX 64
/* Distinct redacted names listed: the defaults and YB_CAPTURE_MAX_REDACT
 * user names fit. */
#define MAX_REDACTIONS (16 + YB_CAPTURE_MAX_REDACT)
#define TLS_EARLY_MAX (64u << 10) /* server plaintext before we know the protocol */
#define TLS_SKIPS_LISTED 256      /* skipped TLS flows listed one by one */
#define TLS_SKIPS_TEXT 16         /* ... of which the text report shows */
#define TLS_REASONS_MAX 64        /* distinct skip reasons counted */
#define H2_LOST_LISTED 256        /* HTTP/2 lost streams listed one by one */
#define H2_LOST_TEXT 16           /* ... of which the text report shows */

/* A record's strings and header array live in its slot's arena: the
 * first SLOT_ARENA bytes inside the slot, more in chunks of their own
 * (each malloc'd, never moved), all freed with the slot.  A separate
 * malloc and free per string, as yb_request's own helpers do, was a fifth
 * of a capture's CPU.  The body alone is malloc'd (the record owns it). */
#define SLOT_ARENA 768
#define SLOT_CHUNK 4096

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t cap, used;
    uint8_t mem[];
} arena_chunk;

struct yb_cap_slot {
    yb_cap_slot *next;
    yb_request req;
    uint64_t charged;
    int complete;
    int dead;     /* dropped: nothing to write */
    int owned;    /* the extractor still holds it */
    int detached; /* forced out of the queue while owned */
    size_t hcap;       /* req.headers' capacity (in the arena) */
    size_t body_cap;   /* req.body's capacity (a yb_cap_buf_take buffer) */
    arena_chunk *more; /* chunks past the inline bytes, newest first */
    size_t used;       /* bytes of mem used */
    _Alignas(16) uint8_t mem[SLOT_ARENA];
};

typedef struct {
    char key[96];
    uint64_t n;
} tally_item;

/* A TLS flow that was not decrypted, and why. */
typedef struct {
    char client[64], server[64]; /* "addr:port" */
    char random[65];             /* client random in hex, "" when not seen */
    char reason[192];
} tls_skip;

typedef struct {
    char reason[192];
    uint64_t n;
} reason_count;

/* An HTTP/2 stream whose request or response was lost, and why. */
typedef struct {
    uint64_t conn_id, bytes;
    uint32_t stream;
    int dir;
    const char *why; /* static */
} h2_lost;

/* Request parsers kept for the next HTTP/1.1 connections: each holds a
 * 64 KB head arena, and its malloc and free per connection (the free of a
 * 64 KB chunk makes glibc consolidate its fast bins) were a few per cent
 * of a capture of many short connections.  About 70 KB each. */
#define H1_IDLE_MAX 16
/* Body buffers kept for the next requests (yb_cap_buf_give): at most
 * BUFS_KEEP, none over BUFS_MAX bytes, so at most 2 MB. */
#define BUFS_KEEP 32
#define BUFS_MAX (64u << 10)
/* Slots kept for the next requests (about 1 KB each). */
#define SPARE_SLOTS 64

struct yb_capture {
    yb_capture_opts o;
    yb_capture_emit_fn emit;
    void *ud;
    yb_capture_stats st;
    yb_cap_flows *flows;
    yb_cap_frags *frags;
    uint64_t now;
    uint64_t mem;
    yb_cap_slot *qhead, *qtail;
    uint64_t qcount;
    uint64_t ts_base;
    int have_base;
    uint32_t *orders; /* next conn_order per conn_id */
    size_t n_orders;
    char *redactions[MAX_REDACTIONS];
    size_t n_redactions;
    tally_item tally[TALLY_MAX];
    size_t n_tally;
    uint64_t tally_other;
    int emit_rc;
    int finished;
    struct yb_keylog *own_keylog;
    struct yb_tls_store *own_store; /* when opts gave none */
    tls_skip *skips;  /* the first TLS_SKIPS_LISTED skipped TLS flows */
    size_t n_skips;
    reason_count *reasons; /* TLS_REASONS_MAX of them */
    size_t n_reasons;
    uint64_t reasons_other;
    h2_lost *lost;         /* the first H2_LOST_LISTED */
    size_t n_lost;
    yb_h1_req *h1_idle[H1_IDLE_MAX]; /* request parsers of ended connections */
    size_t n_h1_idle;
    yb_cap_h2_pool *h2_pool;  /* HPACK inflaters' allocator, NULL until needed */
    int h2_pool_failed;
    struct {
        uint8_t *b;
        size_t cap;
    } bufs[BUFS_KEEP];        /* body buffers given back (yb_cap_buf_give) */
    size_t n_bufs;
    yb_cap_slot *spare;       /* slots of written records, for the next ones */
    size_t n_spare;
};

uint8_t *yb_cap_buf_take(yb_capture *c, size_t need, size_t *cap)
{
    for (size_t i = c->n_bufs; i-- > 0;)
        if (c->bufs[i].cap >= need && c->bufs[i].cap <= 2 * need + 4096) {
            uint8_t *b = c->bufs[i].b;
            *cap = c->bufs[i].cap;
            c->bufs[i] = c->bufs[--c->n_bufs];
            return b;
        }
    *cap = need ? need : 1;
    return malloc(*cap);
}

void yb_cap_buf_give(yb_capture *c, uint8_t *b, size_t cap)
{
    if (!b)
        return;
    if (cap > BUFS_MAX || !cap)
        free(b);
    else if (c->n_bufs < BUFS_KEEP) {
        c->bufs[c->n_bufs].b = b;
        c->bufs[c->n_bufs++].cap = cap;
    } else {
        /* full: the smallest goes, so that the ones kept fit most bodies */
        size_t m = 0;
        for (size_t i = 1; i < c->n_bufs; i++)
            if (c->bufs[i].cap < c->bufs[m].cap)
                m = i;
        if (c->bufs[m].cap < cap) {
            free(c->bufs[m].b);
            c->bufs[m].b = b;
            c->bufs[m].cap = cap;
        } else {
            free(b);
        }
    }
}

yb_cap_h2_pool *yb_cap_h2_pool_of(yb_capture *c)
{
    if (!c->h2_pool && !c->h2_pool_failed)
        c->h2_pool_failed = !(c->h2_pool = yb_cap_h2_pool_new());
    return c->h2_pool;
}

yb_capture_stats *yb_cap_stats(yb_capture *c) { return &c->st; }
const yb_capture_opts *yb_cap_opts(const yb_capture *c) { return &c->o; }
uint64_t yb_cap_now(const yb_capture *c) { return c->now; }
const yb_capture_stats *yb_capture_get_stats(const yb_capture *c) { return &c->st; }

int yb_cap_mem_charge(yb_capture *c, uint64_t n)
{
    if (c->mem + n > c->o.max_total_buffer)
        return -1;
    c->mem += n;
    return 0;
}

void yb_cap_mem_release(yb_capture *c, uint64_t n)
{
    c->mem = n > c->mem ? 0 : c->mem - n;
}

void yb_cap_count_file(yb_capture *c, uint64_t size, int failed)
{
    c->st.files++;
    c->st.file_bytes += size;
    if (failed)
        c->st.file_errors++;
}

const char *const *yb_capture_redactions(const yb_capture *c, size_t *n)
{
    *n = c->n_redactions;
    return (const char *const *)c->redactions;
}

yb_capture *yb_capture_new(const yb_capture_opts *o, yb_capture_emit_fn emit, void *ud)
{
    yb_capture *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->o = *o;
    if (!c->o.max_flow_buffer)
        c->o.max_flow_buffer = YB_CAP_DEFAULT_FLOW_BUFFER;
    if (!c->o.max_total_buffer)
        c->o.max_total_buffer = YB_CAP_DEFAULT_TOTAL_BUFFER;
    if (c->o.n_redact > YB_CAPTURE_MAX_REDACT)
        c->o.n_redact = YB_CAPTURE_MAX_REDACT;
    c->emit = emit;
    c->ud = ud;
    if (!(c->flows = yb_cap_flows_new(c)) || !(c->frags = yb_cap_frags_new(c))) {
        yb_cap_flows_free(c->flows);
        free(c);
        return NULL;
    }
#if YB_HAVE_TLS_DECRYPT
    /* Without one from the caller, a store of our own still lets a TLS 1.2
     * connection resume a session of an earlier one (NULL: it cannot). */
    if (!c->o.tls_store)
        c->own_store = yb_tls_store_new();
#endif
    return c;
}

/* ---- records ------------------------------------------------------------ */

/* Counts a redacted value and lists its header name once, in lower case
 * whatever the wire spelling. */
static void note_redaction(void *ud, const char *name)
{
    yb_capture *c = ud;
    c->st.redacted++;
    for (size_t i = 0; i < c->n_redactions; i++)
        if (!strcasecmp(c->redactions[i], name))
            return;
    if (c->n_redactions < MAX_REDACTIONS) {
        char *d = strdup(name);
        if (d) {
            for (char *p = d; *p; p++)
                if (*p >= 'A' && *p <= 'Z')
                    *p = (char)(*p + 32);
            c->redactions[c->n_redactions++] = d;
        }
    }
}

/* Counts a record under "<protocol> <:path>" (HTTP/2, the path's first 80
 * bytes) or "<protocol> <method>" (HTTP/1.1, its first 32 bytes).  The key
 * is put together by hand: an snprintf per record was 2 % of a capture. */
static void tally_add(yb_capture *c, const yb_request *r)
{
    char key[96];
    int h2 = yb_proto_is_h2(r->protocol);
    const char *pn = yb_proto_name(r->protocol), *v = h2 ? r->path : r->method;
    size_t pl = strlen(pn), vl = strnlen(v, h2 ? 80 : 32); /* pl <= 11: fits */
    memcpy(key, pn, pl);
    key[pl] = ' ';
    memcpy(key + pl + 1, v, vl);
    key[pl + 1 + vl] = 0;
    for (size_t i = 0; i < c->n_tally; i++)
        if (!strcmp(c->tally[i].key, key)) {
            c->tally[i].n++;
            return;
        }
    if (c->n_tally == TALLY_MAX) {
        c->tally_other++;
        return;
    }
    memcpy(c->tally[c->n_tally].key, key, sizeof key);
    c->tally[c->n_tally++].n = 1;
}

static uint32_t next_order(yb_capture *c, uint64_t conn_id)
{
    if (conn_id >= c->n_orders) {
        size_t nn = c->n_orders ? c->n_orders : 1024;
        while (nn <= conn_id)
            nn *= 2;
        uint32_t *no = realloc(c->orders, nn * sizeof *no);
        if (!no)
            return 0;
        memset(no + c->n_orders, 0, (nn - c->n_orders) * sizeof *no);
        c->orders = no;
        c->n_orders = nn;
    }
    return c->orders[conn_id]++;
}

static void write_record(yb_capture *c, yb_cap_slot *s)
{
    yb_request *r = &s->req;
    if (c->o.mgmt_only && r->protocol != YB_PROTO_RESTCONF && r->protocol != YB_PROTO_GNMI) {
        c->st.req_filtered++;
        return;
    }
    if (!c->o.keep_credentials && yb_cap_redact(r, c->o.redact, c->o.n_redact, note_redaction, c) < 0) {
        c->emit_rc = -ENOMEM;
        return;
    }
    if (yb_request_problem(r)) { /* would poison the writer: skip it, counted */
        c->st.drop_invalid++;
        return;
    }
    if (!c->have_base) {
        c->have_base = 1;
        c->ts_base = r->timestamp_ns;
    }
    r->timestamp_ns = r->timestamp_ns >= c->ts_base ? r->timestamp_ns - c->ts_base : 0;
    r->conn_order = next_order(c, r->conn_id);
    switch (r->protocol) {
    case YB_PROTO_RESTCONF: c->st.req_restconf++; break;
    case YB_PROTO_GNMI: c->st.req_gnmi++; break;
    case YB_PROTO_HTTP1: c->st.req_http1++; break;
    default: c->st.req_http2++; break;
    }
    c->st.requests++;
    if (!r->expected_status && r->expected_grpc < 0)
        c->st.no_response++;
    tally_add(c, r);
    if (c->emit && !c->emit_rc) {
        int rc = c->emit(c->ud, r);
        if (rc < 0)
            c->emit_rc = rc;
    }
}

static void free_slot(yb_capture *c, yb_cap_slot *s)
{
    yb_cap_mem_release(c, s->charged);
    yb_cap_buf_give(c, s->req.body, s->body_cap);
    for (arena_chunk *k = s->more, *nx; k; k = nx) {
        nx = k->next;
        free(k);
    }
    if (c->n_spare < SPARE_SLOTS) { /* for the next request */
        s->next = c->spare;
        c->spare = s;
        c->n_spare++;
        YB_CAP_POISON((uint8_t *)s + sizeof s->next, sizeof *s - sizeof s->next);
    } else {
        free(s);
    }
}

static yb_cap_slot *pop_head(yb_capture *c)
{
    yb_cap_slot *s = c->qhead;
    c->qhead = s->next;
    if (!c->qhead)
        c->qtail = NULL;
    c->qcount--;
    s->next = NULL;
    return s;
}

/* Writes every record at the head whose extractor has let go. */
static void drain(yb_capture *c)
{
    while (c->qhead && !c->qhead->owned) {
        yb_cap_slot *s = pop_head(c);
        if (!s->dead && s->complete)
            write_record(c, s);
        free_slot(c, s);
    }
}

/* Forces the head out while its extractor still holds it. */
static void force_head(yb_capture *c)
{
    yb_cap_slot *s = pop_head(c);
    if (s->complete && !s->dead) {
        write_record(c, s); /* its status may never come: written without */
    } else if (!s->dead) {
        c->st.drop_overflow++;
    }
    s->dead = 1;
    s->detached = 1;
    yb_cap_mem_release(c, s->charged);
    s->charged = 0;
    drain(c);
}

static void enforce_caps(yb_capture *c)
{
    while (c->qhead && (c->mem > c->o.max_total_buffer || c->qcount > MAX_QUEUE)) {
        if (!c->qhead->owned)
            drain(c);
        else
            force_head(c);
    }
}

yb_cap_slot *yb_cap_slot_open(yb_capture *c, uint64_t conn_id)
{
    if (c->qcount >= MAX_QUEUE)
        enforce_caps(c);
    /* (not calloc: the arena need not be zeroed) */
    yb_cap_slot *s = c->spare;
    if (s) {
        YB_CAP_UNPOISON((uint8_t *)s + sizeof s->next, sizeof *s - sizeof s->next);
        c->spare = s->next;
        c->n_spare--;
    } else {
        s = malloc(sizeof *s);
    }
    if (!s) {
        c->st.drop_overflow++;
        return NULL;
    }
    s->next = NULL;
    s->complete = s->dead = s->detached = 0;
    s->hcap = s->body_cap = 0;
    s->more = NULL;
    s->used = 0;
    yb_request_init(&s->req);
    s->req.timestamp_ns = c->now;
    s->req.conn_id = conn_id;
    s->owned = 1;
    s->charged = sizeof *s;
    c->mem += s->charged;
    if (c->qtail)
        c->qtail->next = s;
    else
        c->qhead = s;
    c->qtail = s;
    c->qcount++;
    return s;
}

yb_request *yb_cap_slot_req(yb_cap_slot *s) { return &s->req; }

/* Returns n bytes (8-aligned) of s's arena, or NULL on ENOMEM. */
static void *slot_alloc(yb_cap_slot *s, size_t n)
{
    if (n > SIZE_MAX / 2)
        return NULL;
    n = (n + 7) & ~(size_t)7;
    if (SLOT_ARENA - s->used >= n) {
        void *p = s->mem + s->used;
        s->used += n;
        return p;
    }
    arena_chunk *k = s->more;
    if (k && k->cap - k->used >= n) {
        void *p = k->mem + k->used;
        k->used += n;
        return p;
    }
    size_t cap = n > SLOT_CHUNK ? n : SLOT_CHUNK;
    if (!(k = malloc(sizeof *k + cap)))
        return NULL;
    k->next = s->more;
    k->cap = cap;
    k->used = n;
    s->more = k;
    return k->mem;
}

/* A NUL-terminated copy of v[0..n) in s's arena, cut at the first NUL
 * (what a C string of it holds); NULL on ENOMEM. */
static char *slot_str(yb_cap_slot *s, const void *v, size_t n)
{
    const char *z = n ? memchr(v, 0, n) : NULL;
    if (z)
        n = (size_t)(z - (const char *)v);
    char *d = slot_alloc(s, n + 1);
    if (!d)
        return NULL;
    if (n)
        memcpy(d, v, n);
    d[n] = 0;
    return d;
}

int yb_cap_slot_set(yb_cap_slot *s, char **field, const void *v, size_t n)
{
    char *d = slot_str(s, v, n);
    if (!d)
        return -ENOMEM;
    *field = d;
    return 0;
}

int yb_cap_slot_add_header(yb_cap_slot *s, const void *name, size_t nlen, const void *value,
                           size_t vlen)
{
    yb_request *r = &s->req;
    if (r->n_headers == s->hcap) {
        size_t nc = s->hcap ? s->hcap * 2 : 8;
        if (nc > SIZE_MAX / sizeof(yb_header))
            return -ENOMEM;
        yb_header *h = slot_alloc(s, nc * sizeof *h);
        if (!h)
            return -ENOMEM;
        if (r->n_headers)
            memcpy(h, r->headers, r->n_headers * sizeof *h);
        r->headers = h;
        s->hcap = nc;
    }
    char *n = slot_str(s, name, nlen);
    uint8_t *v = vlen < SIZE_MAX ? slot_alloc(s, vlen + 1) : NULL;
    if (!n || !v)
        return -ENOMEM;
    if (vlen)
        memcpy(v, value, vlen);
    v[vlen] = 0;
    yb_header *h = &r->headers[r->n_headers++];
    h->name = n;
    h->value = v;
    h->value_len = vlen;
    return 0;
}

void yb_cap_slot_take_body(yb_cap_slot *s, uint8_t *body, size_t len, size_t cap)
{
    free(s->req.body); /* (none: a body is set once) */
    s->req.body = body;
    s->req.body_len = len;
    s->body_cap = cap;
}

int yb_cap_slot_set_body(yb_cap_slot *s, const void *body, size_t len)
{
    if (yb_request_set_body(&s->req, body, len) < 0)
        return -ENOMEM;
    s->body_cap = 0; /* malloc's, not the capture's */
    return 0;
}
int yb_cap_slot_is_complete(const yb_cap_slot *s) { return s->complete; }

void yb_cap_slot_complete(yb_capture *c, yb_cap_slot *s)
{
    if (s->dead)
        return;
    s->complete = 1;
    uint64_t size = s->req.body_len;
    for (size_t i = 0; i < s->req.n_headers; i++)
        size += strlen(s->req.headers[i].name) + s->req.headers[i].value_len + 32;
    s->charged += size;
    c->mem += size;
    enforce_caps(c);
}

void yb_cap_slot_done(yb_capture *c, yb_cap_slot *s)
{
    if (s->detached) {
        free_slot(c, s);
        return;
    }
    s->owned = 0;
    drain(c);
}

void yb_cap_slot_drop(yb_capture *c, yb_cap_slot *s, yb_cap_drop_reason why)
{
    if (!s->dead) {
        switch (why) {
        case YB_DROP_GAP: c->st.drop_gap++; break;
        case YB_DROP_PARSE: c->st.drop_parse++; break;
        case YB_DROP_TOO_LARGE: c->st.drop_too_large++; break;
        default: c->st.drop_incomplete++; break;
        }
    }
    s->dead = 1;
    yb_cap_slot_done(c, s);
}

void yb_cap_h2_lost(yb_capture *c, uint64_t conn_id, uint32_t stream_id, int dir, const char *why,
                    uint64_t bytes)
{
    if (dir == 0)
        c->st.h2_lost_requests++;
    else
        c->st.h2_lost_responses++;
    if (c->n_lost == H2_LOST_LISTED ||
        (!c->lost && !(c->lost = calloc(H2_LOST_LISTED, sizeof *c->lost))))
        return;
    h2_lost *l = &c->lost[c->n_lost++];
    l->conn_id = conn_id;
    l->stream = stream_id;
    l->dir = dir;
    l->why = why;
    l->bytes = bytes;
}

/* ---- connections: protocol recognition ---------------------------------- */

enum { K_UNKNOWN, K_H1, K_H2, K_TLS, K_OTHER };

#define HOLD_MAX (64u << 10)

struct yb_cap_conn {
    yb_capture *c;
    uint64_t id;
    int client_side; /* -1 until known */
    int midstream;
    int af;
    uint8_t addr[2][16];
    uint16_t port[2];
    int kind;
    uint8_t *held[2];
    size_t held_len[2];
    int fin[2];
    int was_midstream;  /* the SYN was not captured */
    int saw_start_gap;  /* 2: the client's first bytes were lost (a request) */
    uint64_t bytes;
    yb_cap_h1 *h1;
    yb_cap_h2 *h2;
    int tls_failed;
    const char *tls_reason; /* why, when the TLS flow cannot say (static) */
#if YB_HAVE_TLS_DECRYPT
    yb_tls_flow *tls;
    int inner; /* K_UNKNOWN, K_H1, K_H2 for the plaintext */
    /* Plaintext held while the inner protocol is unknown, per direction:
     * the server's until the client speaks, the client's while it is too
     * short to tell the HTTP/2 preface from HTTP/1.1. */
    uint8_t *early[2];
    size_t early_len[2];
#endif
};

yb_cap_conn *yb_cap_conn_new(yb_capture *c, uint64_t conn_id, int client_side, int midstream,
                             const yb_cap_seg *first)
{
    yb_cap_conn *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    k->c = c;
    k->id = conn_id;
    k->client_side = client_side;
    k->midstream = k->was_midstream = midstream;
    k->af = first->af;
    memcpy(k->addr[0], first->src, 16);
    memcpy(k->addr[1], first->dst, 16);
    k->port[0] = first->sport;
    k->port[1] = first->dport;
    return k;
}

static int is_upper_token(const uint8_t *b, size_t n, size_t *sp)
{
    size_t i = 0;
    while (i < n && i < 16 && b[i] >= 'A' && b[i] <= 'Z')
        i++;
    *sp = i;
    return i > 0 && (i == n || b[i] == ' ');
}

/* Classifies from the first n > 0 bytes of side `side`.  Returns a kind,
 * or K_UNKNOWN when the bytes are too few to tell.  Either way *client is
 * set to 0 or 1, the side that is the client: what the bytes say, or, when
 * they are too few to say, the side that sent them (the guess a forced
 * decision at the end of the flow goes by). */
static int classify(const yb_cap_conn *k, int side, const uint8_t *b, size_t n, int *client)
{
    size_t m = n < YB_H2_PREFACE_LEN ? n : YB_H2_PREFACE_LEN, sp;
    *client = side;
    if (!memcmp(b, yb_cap_h2_preface, m))
        return n >= YB_H2_PREFACE_LEN ? K_H2 : K_UNKNOWN;
    if (b[0] == 0x16 && (n < 2 || b[1] == 3)) {
        if (n < 6)
            return K_UNKNOWN; /* the handshake type (byte 5) says who is the client */
        *client = b[5] == 2 ? !side : side;
        return K_TLS;
    }
    if (b[0] >= 0x14 && b[0] <= 0x17 && (n < 2 || b[1] == 3) && (n < 3 || b[2] <= 4)) {
        /* Another TLS record (ChangeCipherSpec, alert, application data):
         * the handshake was not captured (or went into a gap).  Still TLS,
         * so that the report says so; the server is the lower port (a
         * guess). */
        if (n < 3)
            return K_UNKNOWN;
        *client = k->port[0] < k->port[1] ? 1 : 0;
        return K_TLS;
    }
    m = n < 7 ? n : 7;
    if (!memcmp(b, "HTTP/1.", m)) {
        *client = !side;
        return n >= 7 ? K_H1 : K_UNKNOWN;
    }
    if (is_upper_token(b, n, &sp))
        return sp < n ? K_H1 : K_UNKNOWN;
    if (k->midstream) {
        /* Joined mid-conversation: HTTP/1.1 can resynchronise at the next
         * request line; the server is the lower port (a guess). */
        *client = k->port[0] < k->port[1] ? 1 : 0;
        return K_H1;
    }
    return K_OTHER;
}

static void deliver(yb_cap_conn *k, int dir, const uint8_t *d, size_t n);

#if YB_HAVE_TLS_DECRYPT
/* Starts the extractor of the decrypted protocol and replays the plaintext
 * held until then, the client's first. */
static void start_inner(yb_cap_conn *k, int kind)
{
    k->inner = kind;
    if (kind == K_H2)
        k->h2 = yb_cap_h2_new(k->c, k->id, "https");
    else
        k->h1 = yb_cap_h1_new(k->c, k->id, "https", 0);
    for (int dir = 0; dir < 2; dir++) {
        if (k->early_len[dir] && k->h2)
            yb_cap_h2_data(k->h2, dir, k->early[dir], k->early_len[dir]);
        else if (k->early_len[dir] && k->h1)
            yb_cap_h1_data(k->h1, dir, k->early[dir], k->early_len[dir]);
        else
            k->c->st.dropped_unparsed_bytes += k->early_len[dir];
        free(k->early[dir]);
        k->early[dir] = NULL;
        k->early_len[dir] = 0;
    }
}

/* Holds n plaintext bytes of dir while the inner protocol is unknown.
 * Returns 0, or -1 (nothing held) over TLS_EARLY_MAX or out of memory. */
static int hold_early(yb_cap_conn *k, int dir, const uint8_t *d, size_t n)
{
    if (k->early_len[dir] + n > TLS_EARLY_MAX)
        return -1;
    uint8_t *ne = realloc(k->early[dir], k->early_len[dir] + n);
    if (!ne)
        return -1;
    memcpy(ne + k->early_len[dir], d, n);
    k->early[dir] = ne;
    k->early_len[dir] += n;
    return 0;
}

/* The inner protocol told by the client's first n plaintext bytes when
 * ALPN did not say: K_H2 for the HTTP/2 preface, K_H1 for anything else,
 * K_UNKNOWN while they are a prefix of the preface too short to tell (a
 * TLS record may carry a single byte). */
static int inner_kind(const uint8_t *b, size_t n)
{
    size_t m = n < YB_H2_PREFACE_LEN ? n : YB_H2_PREFACE_LEN;
    if (memcmp(b, yb_cap_h2_preface, m))
        return K_H1;
    return n >= YB_H2_PREFACE_LEN ? K_H2 : K_UNKNOWN;
}

static void plaintext(void *ud, int dir, const uint8_t *d, size_t n)
{
    yb_cap_conn *k = ud;
    if (!n)
        return;
    if (k->inner == K_UNKNOWN) {
        const char *alpn = yb_tls_flow_alpn(k->tls);
        if (alpn && !strcmp(alpn, "h2")) {
            start_inner(k, K_H2);
        } else if (alpn && !strcmp(alpn, "http/1.1")) {
            start_inner(k, K_H1);
        } else {
            if (hold_early(k, dir, d, n) < 0) {
                k->c->st.dropped_unparsed_bytes += n;
                return;
            }
            int kind = k->early_len[0] ? inner_kind(k->early[0], k->early_len[0]) : K_UNKNOWN;
            if (kind != K_UNKNOWN)
                start_inner(k, kind); /* delivers d too: it was held */
            return;
        }
    }
    if (k->h2)
        yb_cap_h2_data(k->h2, dir, d, n);
    else if (k->h1)
        yb_cap_h1_data(k->h1, dir, d, n);
    else
        k->c->st.dropped_unparsed_bytes += n; /* the extractor could not be made */
}
#endif

static void start(yb_cap_conn *k, int kind)
{
    yb_capture *c = k->c;
    k->kind = kind;
    const char *scheme = "http";
    if (kind == K_H2) {
        k->h2 = yb_cap_h2_new(c, k->id, scheme);
        if (!k->h2)
            k->kind = K_OTHER;
    } else if (kind == K_H1) {
        k->h1 = yb_cap_h1_new(c, k->id, scheme, k->midstream);
        if (!k->h1)
            k->kind = K_OTHER;
        else if (k->saw_start_gap == 2)
            yb_cap_h1_lost_request(k->h1);
    } else if (kind == K_TLS) {
#if YB_HAVE_TLS_DECRYPT
        if (c->o.keylog || c->own_keylog || yb_tls_store_server_keys(c->o.tls_store)) {
            k->tls = yb_tls_flow_new(c->o.keylog ? c->o.keylog : c->own_keylog);
            if (!k->tls)
                k->tls_reason = "out of memory";
            else
                yb_tls_flow_set_store(k->tls, c->o.tls_store ? c->o.tls_store : c->own_store);
        } else {
            k->tls_reason = "no key log given";
        }
        if (!k->tls)
            k->tls_failed = 1;
#else
        k->tls_failed = 1;
        k->tls_reason = "TLS decryption not built in";
        c->st.tls_no_support++;
#endif
    }
}

static void deliver(yb_cap_conn *k, int dir, const uint8_t *d, size_t n)
{
    if (!n)
        return;
    switch (k->kind) {
    case K_H1: yb_cap_h1_data(k->h1, dir, d, n); return;
    case K_H2: yb_cap_h2_data(k->h2, dir, d, n); return;
    case K_TLS:
#if YB_HAVE_TLS_DECRYPT
        if (k->tls && !k->tls_failed) {
            if (yb_tls_flow_feed(k->tls, dir, d, n, plaintext, k) < 0)
                k->tls_failed = 1;
            return;
        }
#endif
        k->c->st.dropped_unparsed_bytes += n;
        return;
    default: k->c->st.dropped_unparsed_bytes += n; return;
    }
}

/* Bytes held while the protocol is unknown: a server may speak first (an
 * HTTP/2 server sends its SETTINGS at once), so its bytes wait for the
 * client's first bytes, which decide. */
static int hold(yb_cap_conn *k, int side, const uint8_t *d, size_t n)
{
    if (k->held_len[side] + n > HOLD_MAX)
        return -1;
    uint8_t *nb = realloc(k->held[side], k->held_len[side] + n);
    if (!nb)
        return -1;
    memcpy(nb + k->held_len[side], d, n);
    k->held[side] = nb;
    k->held_len[side] += n;
    return 0;
}

/* Decides, starts the extractor and replays what was held.  client is 0
 * or 1 (the sides index arrays); anything else is taken as 0. */
static void decide(yb_cap_conn *k, int kind, int client)
{
    if (k->client_side < 0)
        k->client_side = client == 1 ? 1 : 0;
    start(k, kind);
    for (int s = 0; s < 2; s++) {
        int side = s == 0 ? k->client_side : !k->client_side;
        uint8_t *b = k->held[side];
        size_t n = k->held_len[side];
        k->held[side] = NULL;
        k->held_len[side] = 0;
        deliver(k, side == k->client_side ? 0 : 1, b, n);
        free(b);
    }
}

/* Tries to classify with what is held; force: decide even when unsure. */
static void try_decide(yb_cap_conn *k, int force)
{
    for (int s = 0; s < 2; s++) {
        if (k->client_side >= 0 && s != k->client_side)
            continue;
        if (!k->held_len[s])
            continue;
        int client = s;
        int kind = classify(k, s, k->held[s], k->held_len[s], &client);
        if (kind == K_UNKNOWN && !force)
            return; /* need more bytes */
        if (kind == K_OTHER && !force && k->client_side < 0 && !k->held_len[!s])
            continue; /* maybe the server spoke first: wait for the other side */
        if (kind == K_UNKNOWN) {
            /* The flow ended too short to tell (e.g. 2 bytes of a TLS
             * record header): its bytes are counted as unparsed. */
            k->c->st.flows_too_short++;
            kind = K_OTHER;
        }
        decide(k, kind, client);
        return;
    }
    if (force && (k->held_len[0] || k->held_len[1])) {
        /* Only the server spoke (the client's bytes never came or went
         * into a gap): nothing tells the protocol. */
        k->c->st.flows_too_short++;
        decide(k, K_OTHER, k->client_side >= 0 ? k->client_side : 0);
    }
}

void yb_cap_conn_data(yb_cap_conn *k, int side, const uint8_t *d, size_t n)
{
    k->bytes += n;
    if (k->kind != K_UNKNOWN) {
        deliver(k, side == k->client_side ? 0 : 1, d, n);
        return;
    }
    if (hold(k, side, d, n) < 0) {
        try_decide(k, 1);
        deliver(k, side == k->client_side ? 0 : 1, d, n);
        return;
    }
    try_decide(k, 0);
}

void yb_cap_conn_gap(yb_cap_conn *k, int side, uint64_t n)
{
    if (k->kind == K_UNKNOWN) {
        /* Lost bytes before we could tell: what is held is no start; what
         * follows is mid-stream. */
        k->midstream = 1;
        if (side == k->client_side && !k->saw_start_gap)
            k->saw_start_gap = 1 + (k->held_len[side] == 0 && !k->was_midstream);
        k->c->st.dropped_unparsed_bytes += k->held_len[side];
        free(k->held[side]);
        k->held[side] = NULL;
        k->held_len[side] = 0;
        return;
    }
    int dir = side == k->client_side ? 0 : 1;
    if (k->kind == K_TLS && !k->tls_failed) {
        /* A TLS record stream cannot resume after a hole. */
        k->tls_failed = 1;
        k->tls_reason = "a TCP segment was lost (gap): decryption cannot resume after it";
    }
    if (k->h1)
        yb_cap_h1_gap(k->h1, dir);
    else if (k->h2)
        yb_cap_h2_gap(k->h2, dir, n);
}

void yb_cap_conn_fin(yb_cap_conn *k, int side)
{
    k->fin[side] = 1;
    /* Decide on what there is only when neither side can add to it. */
    if (k->kind == K_UNKNOWN)
        try_decide(k, k->fin[0] && k->fin[1]);
    if (k->h1 && k->client_side >= 0)
        yb_cap_h1_fin(k->h1, side == k->client_side ? 0 : 1);
}

/* Writes side's "addr:port" ("[addr]:port" for IPv6) into out. */
static void endpoint(const yb_cap_conn *k, int side, char *out, size_t cap)
{
    char a[INET6_ADDRSTRLEN];
    if (!inet_ntop(k->af == 6 ? AF_INET6 : AF_INET, k->addr[side], a, sizeof a))
        snprintf(a, sizeof a, "?");
    snprintf(out, cap, k->af == 6 ? "[%s]:%u" : "%s:%u", a, (unsigned)k->port[side]);
}

/* Lists a skipped TLS flow (the first TLS_SKIPS_LISTED) and counts its
 * reason (the first TLS_REASONS_MAX distinct ones). */
static void note_tls_skip(const yb_cap_conn *k)
{
    yb_capture *c = k->c;
    const char *why = k->tls_reason;
#if YB_HAVE_TLS_DECRYPT
    if (!why && k->tls)
        why = yb_tls_flow_status(k->tls);
#endif
    if (!why)
        why = "unknown";
    size_t i = 0;
    for (; i < c->n_reasons; i++)
        if (!strcmp(c->reasons[i].reason, why))
            break;
    if (i == c->n_reasons && i < TLS_REASONS_MAX) {
        if (!c->reasons && !(c->reasons = calloc(TLS_REASONS_MAX, sizeof *c->reasons)))
            i = TLS_REASONS_MAX;
        else
            snprintf(c->reasons[c->n_reasons++].reason, sizeof c->reasons[0].reason, "%s", why);
    }
    if (i < c->n_reasons)
        c->reasons[i].n++;
    else
        c->reasons_other++;
    if (c->n_skips == TLS_SKIPS_LISTED ||
        (!c->skips && !(c->skips = calloc(TLS_SKIPS_LISTED, sizeof *c->skips))))
        return;
    tls_skip *s = &c->skips[c->n_skips++];
    int cl = k->client_side == 1 ? 1 : 0;
    endpoint(k, cl, s->client, sizeof s->client);
    endpoint(k, !cl, s->server, sizeof s->server);
    snprintf(s->reason, sizeof s->reason, "%s", why);
    s->random[0] = 0;
#if YB_HAVE_TLS_DECRYPT
    uint8_t r[32];
    if (k->tls && yb_tls_flow_client_random(k->tls, r))
        for (int j = 0; j < 32; j++)
            snprintf(s->random + 2 * j, 3, "%02x", r[j]);
#endif
}

void yb_cap_conn_end(yb_cap_conn *k)
{
    yb_capture *c = k->c;
    if (k->kind == K_UNKNOWN)
        try_decide(k, 1);
    if (!k->bytes)
        c->st.flows_empty++;
    else if (k->kind == K_H1)
        c->st.flows_h1++;
    else if (k->kind == K_H2)
        c->st.flows_h2++;
    else if (k->kind == K_TLS)
        c->st.flows_tls++;
    else
        c->st.flows_other++;
    if (k->kind == K_TLS) {
#if YB_HAVE_TLS_DECRYPT
        if (k->tls && !k->tls_failed && yb_tls_flow_finish(k->tls) < 0)
            k->tls_failed = 1;
#endif
        if (k->tls_failed) {
            c->st.tls_skipped++;
            note_tls_skip(k);
        } else {
            c->st.tls_decrypted++;
#if YB_HAVE_TLS_DECRYPT
            if (k->tls && yb_tls_flow_resumed(k->tls))
                c->st.tls_resumed++;
#endif
        }
    }
    yb_cap_h1_free(k->h1);
    yb_cap_h2_free(k->h2);
#if YB_HAVE_TLS_DECRYPT
    if (k->tls)
        yb_tls_flow_free(k->tls);
    for (int dir = 0; dir < 2; dir++) {
        /* plaintext whose protocol was never told */
        c->st.dropped_unparsed_bytes += k->early_len[dir];
        free(k->early[dir]);
    }
#endif
    free(k);
}

/* ---- packets ------------------------------------------------------------ */

int yb_capture_packet(yb_capture *c, int linktype, uint64_t ts_ns, const uint8_t *data,
                      size_t caplen, size_t wirelen)
{
    if (c->emit_rc)
        return c->emit_rc;
    c->st.packets++;
    c->st.packet_bytes += caplen;
    /* Reordered timestamps (several interfaces, clock steps) must not make
     * time run backwards for the records. */
    if (ts_ns > c->now)
        c->now = ts_ns;
    yb_cap_seg seg;
    if (yb_cap_decode(&c->st, c->frags, c->now, linktype, data, caplen, wirelen, &seg) != 1)
        return 0;
    int rc = yb_cap_flows_segment(c->flows, &seg);
    if (rc < 0)
        return rc;
    return c->emit_rc;
}

int yb_capture_finish(yb_capture *c)
{
    if (!c->finished) {
        c->finished = 1;
        yb_cap_frags_finish(c->frags);
        yb_cap_flows_finish(c->flows);
        drain(c);
    }
    return c->emit_rc;
}

int yb_cap_add_secrets(yb_capture *c, const uint8_t *text, size_t len)
{
#if YB_HAVE_TLS_DECRYPT
    if (!c->o.keylog && !c->own_keylog) {
        /* No --keylog: a log that only the capture's own secrets fill. */
        c->own_keylog = yb_keylog_new();
        if (!c->own_keylog)
            return -1;
    }
    return yb_keylog_add_text(c->o.keylog ? c->o.keylog : c->own_keylog, text, len);
#else
    (void)c;
    (void)text;
    (void)len;
    return 0;
#endif
}

void yb_capture_free(yb_capture *c)
{
    if (!c)
        return;
    c->emit = NULL; /* records still in flight are discarded, not written */
    yb_cap_flows_free(c->flows); /* ends flows: their slots come back */
    yb_cap_frags_free(c->frags);
    yb_cap_h2_pool_free(c->h2_pool); /* (after the connections' inflaters) */
    while (c->qhead) {
        yb_cap_slot *s = pop_head(c);
        free_slot(c, s);
    }
    while (c->n_bufs) /* (after the slots, which give theirs back) */
        free(c->bufs[--c->n_bufs].b);
    while (c->spare) {
        yb_cap_slot *s = c->spare;
        c->spare = s->next;
        YB_CAP_UNPOISON((uint8_t *)s + sizeof s->next, sizeof *s - sizeof s->next);
        free(s);
    }
    for (size_t i = 0; i < c->n_redactions; i++)
        free(c->redactions[i]);
    free(c->orders);
    free(c->skips);
    free(c->reasons);
    free(c->lost);
    while (c->n_h1_idle)
        yb_h1_req_free(c->h1_idle[--c->n_h1_idle]);
#if YB_HAVE_TLS_DECRYPT
    if (c->own_keylog)
        yb_keylog_free(c->own_keylog);
    yb_tls_store_free(c->own_store);
#endif
    free(c);
}

yb_h1_req *yb_cap_h1_req_take(yb_capture *c)
{
    if (c->n_h1_idle) {
        yb_h1_req *p = c->h1_idle[--c->n_h1_idle];
        yb_h1_req_reset(p);
        return p;
    }
    uint64_t cap = c->o.max_flow_buffer;
    return yb_h1_req_new(cap < YB_CORPUS_MAX_ENTRY / 2 ? cap : YB_CORPUS_MAX_ENTRY / 2);
}

void yb_cap_h1_req_give(yb_capture *c, yb_h1_req *p)
{
    if (p && c->n_h1_idle < H1_IDLE_MAX)
        c->h1_idle[c->n_h1_idle++] = p;
    else
        yb_h1_req_free(p);
}

/* ---- report ------------------------------------------------------------- */

static int by_count(const void *a, const void *b)
{
    const tally_item *x = a, *y = b;
    if (x->n != y->n)
        return x->n < y->n ? 1 : -1;
    return strcmp(x->key, y->key);
}

#define J(obj, k, v) json_object_set_new(obj, k, json_integer((json_int_t)(v)))

/* The hint for TLS flows seen without any key, or NULL. */
static const char *keylog_hint(const yb_capture *c)
{
    if (!YB_HAVE_TLS_DECRYPT || !c->st.flows_tls || c->o.keylog || c->own_keylog)
        return NULL;
#if YB_HAVE_TLS_DECRYPT
    if (yb_tls_store_server_keys(c->o.tls_store))
        return NULL;
#endif
    return "TLS flows were seen and no key log was given: pass the client's key log "
           "(SSLKEYLOGFILE) with --keylog FILE, or read a pcapng with decryption secrets "
           "(editcap --inject-secrets)";
}

/* Why each skipped TLS flow was skipped: the first TLS_SKIPS_TEXT flows,
 * then, when there are more, the count of every reason. */
static void tls_skips_text(const yb_capture *c, FILE *f)
{
    for (size_t i = 0; i < c->n_skips && i < TLS_SKIPS_TEXT; i++)
        fprintf(f, "  skipped %s -> %s: %s\n", c->skips[i].client, c->skips[i].server,
                c->skips[i].reason);
    if (c->st.tls_skipped > TLS_SKIPS_TEXT) {
        fprintf(f, "  ... %" PRIu64 " more; skipped flows by reason:\n",
                c->st.tls_skipped - TLS_SKIPS_TEXT);
        for (size_t i = 0; i < c->n_reasons; i++)
            fprintf(f, "  %10" PRIu64 "  %s\n", c->reasons[i].n, c->reasons[i].reason);
        if (c->reasons_other)
            fprintf(f, "  %10" PRIu64 "  (other)\n", c->reasons_other);
    }
    const char *hint = keylog_hint(c);
    if (hint)
        fprintf(f, "hint: %s\n", hint);
}

/* The TLS part of the JSON report; returns 0 or -1. */
static int tls_json(const yb_capture *c, json_t *tls)
{
    const yb_capture_stats *s = &c->st;
    json_t *list = json_array(), *why = json_object();
    if (!list || !why) {
        json_decref(list);
        json_decref(why);
        return -1;
    }
    J(tls, "flows", s->flows_tls);
    J(tls, "decrypted", s->tls_decrypted);
    J(tls, "skipped", s->tls_skipped);
    J(tls, "resumed", s->tls_resumed);
    json_object_set_new(tls, "decryption_built_in", json_boolean(YB_HAVE_TLS_DECRYPT));
    json_object_set_new(tls, "keylog_given", json_boolean(c->o.keylog || c->own_keylog));
#if YB_HAVE_TLS_DECRYPT
    J(tls, "server_keys", yb_tls_store_server_keys(c->o.tls_store));
#endif
    for (size_t i = 0; i < c->n_skips; i++) {
        const tls_skip *k = &c->skips[i];
        json_t *o = json_pack("{s:s, s:s, s:s}", "client", k->client, "server", k->server,
                              "reason", k->reason);
        if (o && k->random[0])
            json_object_set_new(o, "client_random", json_string(k->random));
        json_array_append_new(list, o);
    }
    json_object_set_new(tls, "skipped_flows", list);
    for (size_t i = 0; i < c->n_reasons; i++)
        J(why, c->reasons[i].reason, c->reasons[i].n);
    if (c->reasons_other)
        J(why, "(other)", c->reasons_other);
    json_object_set_new(tls, "skip_reasons", why);
    const char *hint = keylog_hint(c);
    if (hint)
        json_object_set_new(tls, "hint", json_string(hint));
    return 0;
}

void yb_capture_report_text(const yb_capture *c, FILE *f)
{
    const yb_capture_stats *s = &c->st;
    fprintf(f, "capture: %" PRIu64 " file(s), %" PRIu64 " bytes, %" PRIu64 " packets\n", s->files,
            s->file_bytes, s->packets);
    fprintf(f,
            "flows: %" PRIu64 " (http1 %" PRIu64 ", http2 %" PRIu64 ", tls %" PRIu64
            ", other %" PRIu64 ", empty %" PRIu64 "; %" PRIu64 " joined mid-stream",
            s->flows, s->flows_h1, s->flows_h2, s->flows_tls, s->flows_other, s->flows_empty,
            s->flows_midstream);
    if (s->flows_too_short)
        fprintf(f, "; %" PRIu64 " too short to tell their protocol", s->flows_too_short);
    if (s->late_segments)
        fprintf(f, "; %" PRIu64 " late data segment(s) after a connection's end",
                s->late_segments);
    fputs(")\n", f);
    fprintf(f,
            "requests: %" PRIu64 " written (restconf %" PRIu64 ", gnmi %" PRIu64 ", http1 %" PRIu64
            ", http2 %" PRIu64 "); %" PRIu64 " without a response status\n",
            s->requests, s->req_restconf, s->req_gnmi, s->req_http1, s->req_http2, s->no_response);
    tally_item t[TALLY_MAX];
    memcpy(t, c->tally, c->n_tally * sizeof *t);
    qsort(t, c->n_tally, sizeof *t, by_count);
    for (size_t i = 0; i < c->n_tally; i++)
        fprintf(f, "  %10" PRIu64 "  %s\n", t[i].n, t[i].key);
    if (c->tally_other)
        fprintf(f, "  %10" PRIu64 "  (other)\n", c->tally_other);
    fprintf(f, "tls: %" PRIu64 " flow(s), %" PRIu64 " decrypted, %" PRIu64 " seen and skipped%s",
            s->flows_tls, s->tls_decrypted, s->tls_skipped,
            s->tls_no_support ? " (TLS decryption not built in)" : "");
    if (s->tls_resumed)
        fprintf(f, "; %" PRIu64 " of the decrypted resumed a TLS 1.2 session", s->tls_resumed);
    fputc('\n', f);
    tls_skips_text(c, f);
    if (s->fragments)
        fprintf(f,
                "ip fragments: %" PRIu64 ", %" PRIu64 " datagram(s) reassembled; dropped: %" PRIu64
                " incomplete after 30s, %" PRIu64 " over the caps, %" PRIu64
                " overlapping with other bytes, %" PRIu64 " invalid, %" PRIu64
                " incomplete at the end\n",
                s->fragments, s->frag_reassembled, s->frag_timeout, s->frag_evicted,
                s->frag_overlap, s->frag_invalid, s->frag_incomplete);
    if (s->h2_lost_requests || s->h2_lost_responses) {
        fprintf(f,
                "http2 streams lost: %" PRIu64 " request(s), %" PRIu64 " response(s); %" PRIu64
                " DATA bytes lost in gaps\n",
                s->h2_lost_requests, s->h2_lost_responses, s->h2_lost_body_bytes);
        for (size_t i = 0; i < c->n_lost && i < H2_LOST_TEXT; i++)
            fprintf(f, "  conn %" PRIu64 " stream %" PRIu32 " %s: %s\n", c->lost[i].conn_id,
                    c->lost[i].stream, c->lost[i].dir ? "response" : "request", c->lost[i].why);
        if (s->h2_lost_requests + s->h2_lost_responses > H2_LOST_TEXT)
            fprintf(f, "  ... %" PRIu64 " more (the JSON lists %d)\n",
                    s->h2_lost_requests + s->h2_lost_responses - H2_LOST_TEXT, H2_LOST_LISTED);
    }
    fprintf(f,
            "gaps: %" PRIu64 " (%" PRIu64 " bytes lost); %" PRIu64
            " bytes retransmitted or overlapping\n",
            s->gaps, s->gap_bytes, s->retrans_bytes);
    fprintf(f,
            "dropped requests: gap %" PRIu64 ", malformed %" PRIu64 ", too large %" PRIu64
            ", incomplete %" PRIu64 ", invalid %" PRIu64 ", overflow %" PRIu64 ", filtered %" PRIu64
            "\n",
            s->drop_gap, s->drop_parse, s->drop_too_large, s->drop_incomplete, s->drop_invalid,
            s->drop_overflow, s->req_filtered);
    fprintf(f,
            "dropped bytes: flow buffer cap %" PRIu64 ", total buffer cap %" PRIu64
            ", unparsed %" PRIu64 "\n",
            s->dropped_flow_cap_bytes, s->dropped_total_cap_bytes, s->dropped_unparsed_bytes);
    if (s->file_errors || s->malformed || s->bad_link || s->snaplen_truncated || s->h1_errors ||
        s->h2_errors || s->hpack_errors || s->grpc_framing_errors || s->fragments)
        fprintf(f,
                "warnings: %" PRIu64 " truncated/corrupt file(s), %" PRIu64
                " malformed packets, %" PRIu64 " unsupported link, %" PRIu64
                " snaplen-truncated, %" PRIu64 " IP fragments, %" PRIu64 " HTTP/1.1 errors, %" PRIu64
                " HTTP/2 errors, %" PRIu64 " HPACK errors, %" PRIu64 " gRPC framing errors\n",
                s->file_errors, s->malformed, s->bad_link, s->snaplen_truncated, s->fragments,
                s->h1_errors, s->h2_errors, s->hpack_errors, s->grpc_framing_errors);
    if (s->redacted)
        fprintf(f, "redacted: %" PRIu64 " header value(s)\n", s->redacted);
}


int yb_capture_report_json(const yb_capture *c, FILE *f)
{
    const yb_capture_stats *s = &c->st;
    json_t *root = json_object(), *in = json_object(), *fl = json_object(), *rq = json_object(),
           *rpc = json_object(), *tls = json_object(), *dr = json_object(), *db = json_object(),
           *w = json_object(), *red = json_array();
    if (!root || !in || !fl || !rq || !rpc || !tls || !dr || !db || !w || !red) {
        json_decref(root); json_decref(in); json_decref(fl); json_decref(rq); json_decref(rpc);
        json_decref(tls); json_decref(dr); json_decref(db); json_decref(w); json_decref(red);
        return -1;
    }
    J(in, "files", s->files);
    J(in, "bytes", s->file_bytes);
    J(in, "packets", s->packets);
    J(in, "packet_bytes", s->packet_bytes);
    J(in, "not_tcp", s->not_tcp);
    json_object_set_new(root, "input", in);
    J(fl, "total", s->flows);
    J(fl, "http1", s->flows_h1);
    J(fl, "http2", s->flows_h2);
    J(fl, "tls", s->flows_tls);
    J(fl, "other", s->flows_other);
    J(fl, "empty", s->flows_empty);
    J(fl, "too_short", s->flows_too_short);
    J(fl, "midstream", s->flows_midstream);
    J(fl, "late_segments", s->late_segments);
    J(fl, "late_bytes", s->late_bytes);
    json_object_set_new(root, "flows", fl);
    J(rq, "total", s->requests);
    J(rq, "restconf", s->req_restconf);
    J(rq, "gnmi", s->req_gnmi);
    J(rq, "http1", s->req_http1);
    J(rq, "http2", s->req_http2);
    J(rq, "no_response", s->no_response);
    for (size_t i = 0; i < c->n_tally; i++)
        J(rpc, c->tally[i].key, c->tally[i].n);
    if (c->tally_other)
        J(rpc, "(other)", c->tally_other);
    json_object_set_new(rq, "by_kind", rpc);
    json_object_set_new(root, "requests", rq);
    if (tls_json(c, tls) < 0) {
        json_decref(root); json_decref(in); json_decref(fl); json_decref(rq); json_decref(rpc);
        json_decref(tls); json_decref(dr); json_decref(db); json_decref(w); json_decref(red);
        return -1;
    }
    json_object_set_new(root, "tls", tls);
    json_t *fr = json_pack("{s:I, s:I, s:{s:I, s:I, s:I, s:I, s:I}}", "fragments",
                           (json_int_t)s->fragments, "reassembled", (json_int_t)s->frag_reassembled,
                           "dropped_datagrams", "timeout", (json_int_t)s->frag_timeout,
                           "over_caps", (json_int_t)s->frag_evicted, "overlap",
                           (json_int_t)s->frag_overlap, "invalid", (json_int_t)s->frag_invalid,
                           "incomplete", (json_int_t)s->frag_incomplete);
    json_object_set_new(root, "ip_fragments", fr);
    json_t *hl = json_array();
    for (size_t i = 0; hl && i < c->n_lost; i++)
        json_array_append_new(hl, json_pack("{s:I, s:I, s:s, s:s, s:I}", "conn_id",
                                            (json_int_t)c->lost[i].conn_id, "stream",
                                            (json_int_t)c->lost[i].stream, "part",
                                            c->lost[i].dir ? "response" : "request", "reason",
                                            c->lost[i].why, "bytes",
                                            (json_int_t)c->lost[i].bytes));
    json_object_set_new(root, "http2_lost",
                        json_pack("{s:I, s:I, s:I, s:o}", "requests",
                                  (json_int_t)s->h2_lost_requests, "responses",
                                  (json_int_t)s->h2_lost_responses, "body_bytes",
                                  (json_int_t)s->h2_lost_body_bytes, "streams",
                                  hl ? hl : json_array()));
    J(root, "gaps", s->gaps);
    J(root, "gap_bytes", s->gap_bytes);
    J(root, "retransmitted_bytes", s->retrans_bytes);
    J(dr, "gap", s->drop_gap);
    J(dr, "malformed", s->drop_parse);
    J(dr, "too_large", s->drop_too_large);
    J(dr, "incomplete", s->drop_incomplete);
    J(dr, "invalid", s->drop_invalid);
    J(dr, "overflow", s->drop_overflow);
    J(dr, "filtered", s->req_filtered);
    json_object_set_new(root, "dropped_requests", dr);
    J(db, "flow_buffer_cap", s->dropped_flow_cap_bytes);
    J(db, "total_buffer_cap", s->dropped_total_cap_bytes);
    J(db, "unparsed", s->dropped_unparsed_bytes);
    json_object_set_new(root, "dropped_bytes", db);
    J(w, "file_errors", s->file_errors);
    J(w, "malformed_packets", s->malformed);
    J(w, "unsupported_link", s->bad_link);
    J(w, "snaplen_truncated", s->snaplen_truncated);
    J(w, "ip_fragments", s->fragments);
    J(w, "http1_errors", s->h1_errors);
    J(w, "http2_errors", s->h2_errors);
    J(w, "hpack_errors", s->hpack_errors);
    J(w, "grpc_framing_errors", s->grpc_framing_errors);
    json_object_set_new(root, "warnings", w);
    for (size_t i = 0; i < c->n_redactions; i++)
        json_array_append_new(red, json_string(c->redactions[i]));
    json_object_set_new(root, "redactions", red);
    J(root, "redacted_values", s->redacted);
    int rc = json_dumpf(root, f, JSON_INDENT(2) | JSON_SORT_KEYS) < 0 ? -1 : 0;
    if (!rc)
        fputc('\n', f);
    json_decref(root);
    return rc;
}
