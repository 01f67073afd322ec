/* IP fragment reassembly (IPv4 and IPv6) in bounded memory.
 *
 * A datagram is keyed by its addresses, identification and protocol (RFC
 * 791, RFC 8200 4.5).  Its fragments are copied into a buffer that grows
 * up to the datagram's end (at most 65535 bytes) with a bitmap of the
 * 8-byte blocks received; it completes once the last fragment (MF = 0)
 * said the length and every block is in.  Bounds, all counted when they
 * bite:
 *   - YB_CAP_FRAG_TIMEOUT_NS of capture time after its first fragment an
 *     incomplete datagram is dropped (as Linux's ipfrag_time, 30 s);
 *   - at most YB_CAP_FRAG_MAX_DGRAMS datagrams and YB_CAP_FRAG_MAX_BYTES
 *     buffered bytes wait at once (and the bytes count against the
 *     capture's total buffer): beyond, the oldest waiting datagram is
 *     dropped (a flood of first fragments that never complete cannot
 *     crowd memory);
 *   - overlapping fragments must agree byte for byte (retransmitted
 *     duplicates do); a conflicting overlap drops the whole datagram, as
 *     RFC 5722 requires for IPv6 and as the only choice that does not
 *     guess which copy the receiver kept (IDS evasion relies on that);
 *     the rest of its fragments are absorbed until its timeout;
 *   - a fragment that is cut by the snapshot length, whose end passes
 *     65535, or that is not the last and not a multiple of 8 bytes, drops
 *     its datagram too (invalid).
 * Datagrams still incomplete at the end of the capture are counted. */
#include "config.h"
#include "capture/capture_priv.h"

#include <stdlib.h>
#include <string.h>

#define NBUCKETS 4096u
#define DGRAM_MAX 65535u
#define BLOCKS (DGRAM_MAX / 8 + 1)

typedef struct dgram {
    struct dgram *hnext;        /* hash chain */
    struct dgram *prev, *next;  /* all datagrams, oldest first */
    int af;
    uint8_t src[16], dst[16];
    uint32_t id;
    uint8_t proto;
    int dead;                   /* dropped: absorbs its other fragments */
    uint64_t first_ns;
    uint8_t *buf;
    size_t cap;                 /* bytes allocated (and charged) */
    size_t total;               /* datagram length, 0 until the last fragment */
    uint8_t have[BLOCKS / 8 + 1];
} dgram;

struct yb_cap_frags {
    yb_capture *cap;
    dgram *buckets[NBUCKETS];
    dgram *head, *tail;
    size_t n, bytes;
    uint8_t *done;              /* the last datagram completed (see add) */
};

yb_cap_frags *yb_cap_frags_new(yb_capture *c)
{
    yb_cap_frags *t = calloc(1, sizeof *t);
    if (t)
        t->cap = c;
    return t;
}

static uint32_t hash_key(int af, const uint8_t *src, const uint8_t *dst, uint32_t id)
{
    uint32_t h = 2166136261u ^ (uint32_t)af;
    for (int i = 0; i < 16; i++)
        h = ((h ^ src[i]) * 16777619u ^ dst[i]) * 16777619u;
    return (h ^ id) * 16777619u % NBUCKETS;
}

/* Releases d's buffer (the datagram itself stays). */
static void drop_buffer(yb_cap_frags *t, dgram *d)
{
    yb_cap_mem_release(t->cap, d->cap);
    t->bytes -= d->cap;
    free(d->buf);
    d->buf = NULL;
    d->cap = 0;
}

/* Unlinks and frees d; counted under *why (NULL: completed). */
static void forget(yb_cap_frags *t, dgram *d, uint64_t *why)
{
    if (why && !d->dead)
        (*why)++;
    drop_buffer(t, d);
    dgram **pp = &t->buckets[hash_key(d->af, d->src, d->dst, d->id)];
    while (*pp && *pp != d)
        pp = &(*pp)->hnext;
    if (*pp)
        *pp = d->hnext;
    if (d->prev)
        d->prev->next = d->next;
    else
        t->head = d->next;
    if (d->next)
        d->next->prev = d->prev;
    else
        t->tail = d->prev;
    t->n--;
    free(d);
}

/* Drops d's data, keeps it to absorb its remaining fragments. */
static void kill(yb_cap_frags *t, dgram *d, uint64_t *why)
{
    if (!d->dead)
        (*why)++;
    d->dead = 1;
    drop_buffer(t, d);
}

/* Drops the datagrams whose time is up (capture time now). */
static void expire(yb_cap_frags *t, uint64_t now)
{
    yb_capture_stats *st = yb_cap_stats(t->cap);
    while (t->head && now > t->head->first_ns && now - t->head->first_ns > YB_CAP_FRAG_TIMEOUT_NS)
        forget(t, t->head, &st->frag_timeout);
}

static dgram *lookup(yb_cap_frags *t, const yb_cap_frag *f)
{
    for (dgram *d = t->buckets[hash_key(f->af, f->src, f->dst, f->id)]; d; d = d->hnext)
        if (d->af == f->af && d->id == f->id && d->proto == f->proto &&
            !memcmp(d->src, f->src, 16) && !memcmp(d->dst, f->dst, 16))
            return d;
    return NULL;
}

static dgram *create(yb_cap_frags *t, const yb_cap_frag *f, uint64_t now)
{
    yb_capture_stats *st = yb_cap_stats(t->cap);
    while (t->n >= YB_CAP_FRAG_MAX_DGRAMS && t->head)
        forget(t, t->head, &st->frag_evicted);
    dgram *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->af = f->af;
    memcpy(d->src, f->src, 16);
    memcpy(d->dst, f->dst, 16);
    d->id = f->id;
    d->proto = f->proto;
    d->first_ns = now;
    uint32_t b = hash_key(f->af, f->src, f->dst, f->id);
    d->hnext = t->buckets[b];
    t->buckets[b] = d;
    d->prev = t->tail;
    if (t->tail)
        t->tail->next = d;
    else
        t->head = d;
    t->tail = d;
    t->n++;
    return d;
}

/* Grows d's buffer to hold end bytes; room is made by dropping the
 * oldest other datagrams.  Returns 0, or -1 (d must be killed). */
static int grow(yb_cap_frags *t, dgram *d, size_t end)
{
    yb_capture_stats *st = yb_cap_stats(t->cap);
    if (end <= d->cap)
        return 0;
    size_t ncap = d->cap ? d->cap : 2048;
    while (ncap < end)
        ncap *= 2;
    if (ncap > DGRAM_MAX)
        ncap = DGRAM_MAX;
    size_t more = ncap - d->cap;
    while (t->bytes + more > YB_CAP_FRAG_MAX_BYTES || yb_cap_mem_charge(t->cap, more) < 0) {
        dgram *old = t->head == d ? d->next : t->head;
        if (!old)
            return -1;
        forget(t, old, &st->frag_evicted);
    }
    uint8_t *nb = realloc(d->buf, ncap);
    if (!nb) {
        yb_cap_mem_release(t->cap, more);
        return -1;
    }
    memset(nb + d->cap, 0, ncap - d->cap);
    d->buf = nb;
    d->cap = ncap;
    t->bytes += more;
    return 0;
}

static int block_have(const dgram *d, size_t b)
{
    return (d->have[b / 8] >> (b % 8)) & 1;
}

int yb_cap_frags_add(yb_cap_frags *t, const yb_cap_frag *f, uint64_t now, const uint8_t **out,
                     size_t *outlen)
{
    yb_capture_stats *st = yb_cap_stats(t->cap);
    free(t->done); /* the previous datagram's bytes are no longer used */
    t->done = NULL;
    expire(t, now);
    dgram *d = lookup(t, f);
    if (!d && !(d = create(t, f, now)))
        return 0;
    if (d->dead)
        return 0;
    size_t end = (size_t)f->offset + f->len;
    if (f->truncated || end > DGRAM_MAX || (f->more && f->len % 8) ||
        (!f->more && d->total && end != d->total) || (d->total && end > d->total)) {
        kill(t, d, &st->frag_invalid);
        return 0;
    }
    if (!f->more) {
        /* the length is known: nothing received may lie beyond it */
        for (size_t b = (end + 7) / 8; b < BLOCKS; b++)
            if (block_have(d, b)) {
                kill(t, d, &st->frag_invalid);
                return 0;
            }
        d->total = end;
    }
    if (f->len && grow(t, d, end) < 0) {
        kill(t, d, &st->frag_evicted);
        return 0;
    }
    /* Overlaps must agree byte for byte with what is already there. */
    for (size_t b = f->offset / 8; f->len && b < (end + 7) / 8; b++) {
        if (!block_have(d, b))
            continue;
        size_t lo = b * 8 > f->offset ? b * 8 : f->offset, hi = b * 8 + 8 < end ? b * 8 + 8 : end;
        if (memcmp(d->buf + lo, f->data + (lo - f->offset), hi - lo)) {
            kill(t, d, &st->frag_overlap);
            return 0;
        }
    }
    if (f->len)
        memcpy(d->buf + f->offset, f->data, f->len);
    for (size_t b = f->offset / 8; b < (end + 7) / 8; b++)
        d->have[b / 8] |= (uint8_t)(1u << (b % 8));
    if (!d->total)
        return 0;
    for (size_t b = 0; b < (d->total + 7) / 8; b++)
        if (!block_have(d, b))
            return 0;
    /* Complete: its bytes outlive the datagram until the next call. */
    st->frag_reassembled++;
    t->done = d->buf;
    *out = d->buf;
    *outlen = d->total;
    d->buf = NULL;
    yb_cap_mem_release(t->cap, d->cap);
    t->bytes -= d->cap;
    d->cap = 0;
    forget(t, d, NULL);
    return 1;
}

void yb_cap_frags_finish(yb_cap_frags *t)
{
    yb_capture_stats *st = yb_cap_stats(t->cap);
    while (t->head)
        forget(t, t->head, &st->frag_incomplete);
}

void yb_cap_frags_free(yb_cap_frags *t)
{
    if (!t)
        return;
    yb_cap_frags_finish(t);
    free(t->done);
    free(t);
}
