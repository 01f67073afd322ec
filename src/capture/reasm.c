/* TCP reassembly: one flow per connection (4-tuple, both directions), each
 * direction delivered in order to the connection's extractor.
 *
 * Sequence numbers are compared modulo 2^32.  A segment that starts at or
 * before the next expected byte is trimmed (retransmissions, overlaps: the
 * first copy wins, as the receiver's stack would have it); one that starts
 * later waits in a sorted out-of-order list.  That list is capped per flow
 * (max_flow_buffer) and in total (max_total_buffer): when a segment does
 * not fit, the hole before the first waiting segment is given up as a gap
 * (the extractor drops the request it cuts and resynchronises), which
 * bounds memory whatever the capture lost.
 *
 * A connection ends with its RST, or once both FINs were delivered; its
 * extractor is finished then, but the flow stays in the table as a closed
 * record of its 4-tuple and initial sequence numbers, so that the packets a
 * closed connection still produces (late retransmissions, the last ACKs, a
 * RST answering a late segment) are absorbed and counted instead of
 * starting a phantom flow "joined mid-stream".  Only a SYN with a new
 * initial sequence number opens a new connection on that 4-tuple (port
 * reuse), as tshark's tcp.stream numbering has it.  Closed flows are kept
 * oldest first up to YB_CAP_MAX_CLOSED_FLOWS; beyond that the oldest is
 * forgotten (a packet of it arriving even later would start a flow). */
#include "config.h"
#include "capture/capture_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NBUCKETS (1u << 16)

typedef struct oseg {
    struct oseg *next;
    uint32_t seq;
    uint32_t len;     /* bytes held in data */
    uint32_t missing; /* bytes after them cut by the snaplen */
    uint8_t data[];
} oseg;

typedef struct {
    int have_isn;
    uint32_t isn;       /* initial sequence number (SYN seen) */
    int syn_seen;
    uint32_t next;      /* next expected sequence number */
    oseg *ooo;          /* sorted by seq */
    uint64_t ooo_bytes;
    int fin_seen, fin_done;
    uint32_t fin_seq;
    uint32_t acked_at;  /* next when the peer's ACKs began to cover a hole */
    int hole_acks;      /* ... how many of them so far */
} dirstate;

typedef struct flow {
    struct flow *hnext;
    struct flow *prev, *nextf; /* all flows, oldest first (finish order) */
    int af;
    uint8_t addr[2][16];
    uint16_t port[2];
    dirstate d[2];
    yb_cap_conn *conn;
    uint64_t id;
    int client_side;
    int closed; /* ended: only absorbs late packets (in the closed list) */
} flow;

struct yb_cap_flows {
    yb_capture *cap;
    flow *buckets[NBUCKETS];
    flow *head, *tail;        /* live flows, oldest first */
    flow *chead, *ctail;      /* closed flows, oldest first */
    uint64_t n_closed;
    uint64_t next_id;
};

/* An endpoint's hash, eight bytes at a time (every packet is looked up:
 * FNV over its 18 bytes was 3 % of a capture). */
static uint32_t ep_hash(const uint8_t *a, uint16_t port)
{
    uint64_t x, y;
    memcpy(&x, a, 8);
    memcpy(&y, a + 8, 8);
    uint64_t h = x * 0x9e3779b97f4a7c15ull ^ y * 0xc2b2ae3d27d4eb4full ^
                 (port + 1ull) * 0x165667b19e3779f9ull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return (uint32_t)(h ^ (h >> 32));
}

/* Symmetric: both directions of a connection land in one bucket. */
static uint32_t bucket_of(const yb_cap_seg *s)
{
    return (ep_hash(s->src, s->sport) ^ ep_hash(s->dst, s->dport)) & (NBUCKETS - 1);
}

static flow *lookup(yb_cap_flows *t, const yb_cap_seg *s, int *side)
{
    for (flow *f = t->buckets[bucket_of(s)]; f; f = f->hnext) {
        if (f->af != s->af)
            continue;
        if (f->port[0] == s->sport && f->port[1] == s->dport && !memcmp(f->addr[0], s->src, 16) &&
            !memcmp(f->addr[1], s->dst, 16)) {
            *side = 0;
            return f;
        }
        if (f->port[1] == s->sport && f->port[0] == s->dport && !memcmp(f->addr[1], s->src, 16) &&
            !memcmp(f->addr[0], s->dst, 16)) {
            *side = 1;
            return f;
        }
    }
    return NULL;
}

yb_cap_flows *yb_cap_flows_new(yb_capture *c)
{
    yb_cap_flows *t = calloc(1, sizeof *t);
    if (t)
        t->cap = c;
    return t;
}

static void free_ooo(yb_cap_flows *t, dirstate *d)
{
    while (d->ooo) {
        oseg *o = d->ooo;
        d->ooo = o->next;
        yb_cap_mem_release(t->cap, o->len);
        free(o);
    }
    d->ooo_bytes = 0;
}

static void gap(yb_cap_flows *t, flow *f, int side, uint64_t n)
{
    if (!n)
        return;
    yb_capture_stats *st = yb_cap_stats(t->cap);
    st->gaps++;
    st->gap_bytes += n;
    if (f->conn)
        yb_cap_conn_gap(f->conn, side, n);
}

static void check_fin(flow *f, int side)
{
    dirstate *d = &f->d[side];
    if (d->fin_seen && !d->fin_done && (int32_t)(d->next - d->fin_seq) >= 0) {
        d->fin_done = 1;
        if (f->conn)
            yb_cap_conn_fin(f->conn, side);
    }
}

/* Takes a segment that starts at or before d->next: trims what was already
 * delivered and hands the rest on. */
static void take(yb_cap_flows *t, flow *f, int side, uint32_t seq, const uint8_t *data,
                 uint32_t len, uint32_t missing)
{
    dirstate *d = &f->d[side];
    uint64_t total = (uint64_t)len + missing;
    uint32_t skip = d->next - seq; /* caller guarantees seq <= next (mod 2^32) */
    yb_capture_stats *st = yb_cap_stats(t->cap);
    if (skip >= total) {
        st->retrans_bytes += total;
        return;
    }
    st->retrans_bytes += skip;
    if (skip < len) {
        if (f->conn)
            yb_cap_conn_data(f->conn, side, data + skip, len - skip);
        d->next += len - skip;
        skip = 0;
    } else {
        skip -= len;
    }
    if (missing > skip) {
        gap(t, f, side, missing - skip);
        d->next += missing - skip;
    }
}

static void drain(yb_cap_flows *t, flow *f, int side)
{
    dirstate *d = &f->d[side];
    while (d->ooo && (int32_t)(d->ooo->seq - d->next) <= 0) {
        oseg *o = d->ooo;
        d->ooo = o->next;
        d->ooo_bytes -= o->len;
        take(t, f, side, o->seq, o->data, o->len, o->missing);
        yb_cap_mem_release(t->cap, o->len);
        free(o);
    }
}

/* Gives up the hole before the first waiting segment. */
static void skip_hole(yb_cap_flows *t, flow *f, int side, uint64_t *dropped_counter)
{
    dirstate *d = &f->d[side];
    if (!d->ooo)
        return;
    uint32_t n = d->ooo->seq - d->next;
    gap(t, f, side, n);
    if (dropped_counter)
        *dropped_counter += n;
    d->next = d->ooo->seq;
    drain(t, f, side);
}

/* ACKs of the peer that must cover a hole before it is given up: one
 * could be captured just ahead of the segment it acknowledges (capture
 * queues reorder), two in a row mean the capture lost it. */
#define HOLE_ACKS 2

/* The peer acknowledged direction side up to ack: what the capture still
 * lacks before it reached the receiver and will never be captured (the
 * capture lost it), so the holes up to there are given up now rather than
 * at the end of the connection, and what waits behind them reaches the
 * extractor in step with the other direction (an HTTP/2 response then
 * still finds its request).  Only while something waits: a lost tail with
 * nothing after it costs nothing to keep open. */
static void peer_acked(yb_cap_flows *t, flow *f, int side, uint32_t ack)
{
    dirstate *d = &f->d[side];
    if (!d->have_isn || !d->ooo || (int32_t)(ack - d->next) <= 0)
        return;
    if (d->acked_at != d->next || !d->hole_acks) {
        d->acked_at = d->next;
        d->hole_acks = 0;
    }
    if (++d->hole_acks < HOLE_ACKS)
        return;
    d->hole_acks = 0;
    while (d->ooo && (int32_t)(ack - d->next) > 0) {
        if ((int32_t)(ack - d->ooo->seq) >= 0) {
            skip_hole(t, f, side, NULL);
        } else {
            gap(t, f, side, ack - d->next); /* part of the hole is acknowledged */
            d->next = ack;
        }
    }
}

static int insert_ooo(yb_cap_flows *t, flow *f, int side, const yb_cap_seg *s)
{
    dirstate *d = &f->d[side];
    yb_capture_stats *st = yb_cap_stats(t->cap);
    const yb_capture_opts *o = yb_cap_opts(t->cap);
    /* Make room: give up holes until the segment fits or it is next. */
    while ((int32_t)(s->seq - d->next) > 0) {
        int flow_full = d->ooo_bytes + s->len > o->max_flow_buffer;
        int total_full = !flow_full && yb_cap_mem_charge(t->cap, s->len) < 0;
        if (!flow_full && !total_full)
            break;
        uint64_t *ctr = flow_full ? &st->dropped_flow_cap_bytes : &st->dropped_total_cap_bytes;
        if (d->ooo && (int32_t)(d->ooo->seq - s->seq) < 0) {
            skip_hole(t, f, side, ctr);
            continue;
        }
        /* Nothing earlier waits: the hole before this segment goes. */
        uint32_t n = s->seq - d->next;
        gap(t, f, side, n);
        *ctr += n;
        d->next = s->seq;
    }
    if ((int32_t)(s->seq - d->next) <= 0) {
        take(t, f, side, s->seq, s->payload, (uint32_t)s->len, (uint32_t)s->missing);
        drain(t, f, side);
        return 0;
    }
    oseg *n = malloc(sizeof *n + s->len);
    if (!n) {
        yb_cap_mem_release(t->cap, s->len);
        return -ENOMEM;
    }
    n->seq = s->seq;
    n->len = (uint32_t)s->len;
    n->missing = (uint32_t)s->missing;
    memcpy(n->data, s->payload, s->len);
    oseg **pp = &d->ooo;
    while (*pp && (int32_t)((*pp)->seq - s->seq) <= 0)
        pp = &(*pp)->next;
    n->next = *pp;
    *pp = n;
    d->ooo_bytes += s->len;
    return 0;
}

/* Removes f from its hash chain. */
static void unhash(yb_cap_flows *t, flow *f)
{
    yb_cap_seg key;
    memset(&key, 0, sizeof key);
    memcpy(key.src, f->addr[0], 16);
    memcpy(key.dst, f->addr[1], 16);
    key.sport = f->port[0];
    key.dport = f->port[1];
    flow **pp = &t->buckets[bucket_of(&key)];
    while (*pp && *pp != f)
        pp = &(*pp)->hnext;
    if (*pp)
        *pp = f->hnext;
}

/* Unlinks f from the live list or the closed list (prev/nextf serve both). */
static void unlist(yb_cap_flows *t, flow *f)
{
    flow **head = f->closed ? &t->chead : &t->head, **tail = f->closed ? &t->ctail : &t->tail;
    if (f->prev)
        f->prev->nextf = f->nextf;
    else
        *head = f->nextf;
    if (f->nextf)
        f->nextf->prev = f->prev;
    else
        *tail = f->prev;
    f->prev = f->nextf = NULL;
    if (f->closed)
        t->n_closed--;
}

/* Forgets f entirely (a closed flow evicted, or any flow at the end). */
static void forget(yb_cap_flows *t, flow *f)
{
    unhash(t, f);
    unlist(t, f);
    free(f);
}

/* Ends f's connection: holes flushed as gaps, the extractor finished.
 * With keep, f stays in the table as a closed flow that absorbs late
 * packets; without, it is freed. */
static void end_flow(yb_cap_flows *t, flow *f, int keep)
{
    for (int side = 0; side < 2; side++) {
        while (f->d[side].ooo)
            skip_hole(t, f, side, NULL);
        free_ooo(t, &f->d[side]);
    }
    if (f->conn)
        yb_cap_conn_end(f->conn);
    f->conn = NULL;
    if (!keep || f->closed) {
        forget(t, f);
        return;
    }
    unlist(t, f);
    f->closed = 1;
    f->prev = t->ctail;
    if (t->ctail)
        t->ctail->nextf = f;
    else
        t->chead = f;
    t->ctail = f;
    if (++t->n_closed > YB_CAP_MAX_CLOSED_FLOWS)
        forget(t, t->chead);
}

static flow *new_flow(yb_cap_flows *t, const yb_cap_seg *s)
{
    flow *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->af = s->af;
    memcpy(f->addr[0], s->src, 16);
    memcpy(f->addr[1], s->dst, 16);
    f->port[0] = s->sport;
    f->port[1] = s->dport;
    f->id = t->next_id++;
    int syn = (s->flags & YB_TCP_SYN) != 0, ack = (s->flags & YB_TCP_ACK) != 0;
    f->client_side = syn ? (ack ? 1 : 0) : -1;
    f->conn = yb_cap_conn_new(t->cap, f->id, f->client_side, !syn, s);
    if (!f->conn) {
        free(f);
        return NULL;
    }
    uint32_t b = bucket_of(s);
    f->hnext = t->buckets[b];
    t->buckets[b] = f;
    f->prev = t->tail;
    if (t->tail)
        t->tail->nextf = f;
    else
        t->head = f;
    t->tail = f;
    yb_capture_stats *st = yb_cap_stats(t->cap);
    st->flows++;
    if (!syn)
        st->flows_midstream++;
    return f;
}

int yb_cap_flows_segment(yb_cap_flows *t, const yb_cap_seg *s)
{
    int side = 0;
    flow *f = lookup(t, s, &side);
    int syn = (s->flags & YB_TCP_SYN) != 0, ack = (s->flags & YB_TCP_ACK) != 0;
    if (f && f->closed) {
        /* A SYN with a new initial sequence number is a new connection on
         * the same 4-tuple (port reuse); anything else still belongs to
         * the closed one. */
        dirstate *d = &f->d[side];
        if (syn && !ack && !(d->syn_seen && d->isn == s->seq)) {
            forget(t, f);
            f = NULL;
        } else {
            /* Its last ACKs, FINs and RSTs carry nothing; data is counted. */
            yb_capture_stats *st = yb_cap_stats(t->cap);
            if (s->len || s->missing) {
                st->late_segments++;
                st->late_bytes += s->len + s->missing;
            }
            return 0;
        }
    }
    if (f && syn && !ack && f->d[0].have_isn && f->d[0].next != s->seq + 1) {
        /* A new connection on the same 4-tuple (port reuse). */
        end_flow(t, f, 0);
        f = NULL;
    }
    if (!f) {
        /* Pure ACKs/FINs/RSTs of a connection we never saw (or one already
         * closed) carry nothing to extract. */
        if (!syn && !s->len && !s->missing)
            return 0;
        if (!(f = new_flow(t, s)))
            return -ENOMEM;
        side = 0;
    }
    dirstate *d = &f->d[side];
    if (ack && !syn && f->conn)
        peer_acked(t, f, !side, s->ack);
    if (syn) {
        if (!d->syn_seen) {
            d->syn_seen = 1;
            d->isn = s->seq;
        }
        if (!d->have_isn) {
            d->have_isn = 1;
            d->next = s->seq + 1;
        }
        if (f->client_side < 0)
            f->client_side = ack ? !side : side;
    }
    if (s->flags & YB_TCP_RST) {
        end_flow(t, f, 1);
        return 0;
    }
    if (s->len || s->missing) {
        uint32_t dseq = syn ? s->seq + 1 : s->seq;
        if (!d->have_isn) {
            d->have_isn = 1; /* midstream: take the first byte we see as the start */
            d->next = dseq;
        }
        yb_cap_seg seg = *s;
        seg.seq = dseq;
        if ((int32_t)(dseq - d->next) <= 0) {
            take(t, f, side, dseq, s->payload, (uint32_t)s->len, (uint32_t)s->missing);
            drain(t, f, side);
        } else if (insert_ooo(t, f, side, &seg) < 0) {
            return -ENOMEM;
        }
    }
    if (s->flags & YB_TCP_FIN) {
        if (!d->have_isn) {
            d->have_isn = 1;
            d->next = s->seq;
        }
        d->fin_seen = 1;
        d->fin_seq = (syn ? s->seq + 1 : s->seq) + (uint32_t)(s->len + s->missing);
    }
    check_fin(f, side);
    if (f->d[0].fin_done && f->d[1].fin_done)
        end_flow(t, f, 1);
    return 0;
}

void yb_cap_flows_finish(yb_cap_flows *t)
{
    while (t->head)
        end_flow(t, t->head, 0);
    while (t->chead)
        forget(t, t->chead);
}

void yb_cap_flows_free(yb_cap_flows *t)
{
    if (!t)
        return;
    yb_cap_flows_finish(t);
    free(t);
}
