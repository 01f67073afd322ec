/* Packet decoding: link layer -> IPv4/IPv6 (fragments reassembled by
 * frag.c) -> TCP.  Every read goes through the bounds-checked cursor
 * below; a packet that is too short or inconsistent is counted
 * (stats.malformed) and skipped. */
#include "config.h"
#include "capture/capture_priv.h"

#include <string.h>

/* A bounds-checked read cursor over untrusted packet bytes. */
typedef struct {
    const uint8_t *p;
    size_t len, off;
} cur;

/* What the IP layers need besides the stats. */
typedef struct {
    yb_capture_stats *st;
    yb_cap_frags *fr; /* NULL: fragments only counted */
    uint64_t now;
} ctx;

static int need(const cur *c, size_t n)
{
    return c->off <= c->len && c->len - c->off >= n;
}

static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

#define ETH_IPV4 0x0800
#define ETH_IPV6 0x86dd
#define ETH_VLAN 0x8100
#define ETH_QINQ 0x88a8
#define ETH_QINQ_OLD 0x9100
#define MAX_VLAN_TAGS 4

/* Decodes the TCP header at c (IP payload of length ip_payload_len: what
 * the IP header says, of which c holds what was captured). */
static int tcp(yb_capture_stats *st, cur *c, size_t ip_payload_len, yb_cap_seg *s)
{
    if (!need(c, 20) || ip_payload_len < 20) {
        st->malformed++;
        return 0;
    }
    const uint8_t *t = c->p + c->off;
    size_t hl = (size_t)(t[12] >> 4) * 4;
    if (hl < 20 || hl > ip_payload_len || !need(c, hl)) {
        st->malformed++;
        return 0;
    }
    s->sport = be16(t);
    s->dport = be16(t + 2);
    s->seq = be32(t + 4);
    s->ack = be32(t + 8);
    s->flags = t[13];
    c->off += hl;
    size_t want = ip_payload_len - hl;
    size_t have = c->len - c->off;
    s->payload = c->p + c->off;
    if (have >= want) {
        s->len = want; /* link padding after the IP datagram is dropped */
        s->missing = 0;
    } else {
        s->len = have;
        s->missing = want - have;
        st->snaplen_truncated++;
    }
    return 1;
}

/* Hands a fragment to the reassembly; returns 1 with *dg over the whole
 * datagram's payload once it is complete. */
static int fragment(const ctx *x, yb_cap_frag *f, cur *dg)
{
    const uint8_t *out;
    size_t outlen;
    x->st->fragments++;
    if (!x->fr || yb_cap_frags_add(x->fr, f, x->now, &out, &outlen) != 1)
        return 0;
    dg->p = out;
    dg->len = outlen;
    dg->off = 0;
    return 1;
}

static int ipv4(const ctx *x, cur *c, yb_cap_seg *s)
{
    yb_capture_stats *st = x->st;
    if (!need(c, 20)) {
        st->malformed++;
        return 0;
    }
    const uint8_t *h = c->p + c->off;
    if ((h[0] >> 4) != 4) {
        st->malformed++;
        return 0;
    }
    size_t ihl = (size_t)(h[0] & 15) * 4;
    size_t total = be16(h + 2);
    if (ihl < 20 || total < ihl || !need(c, ihl)) {
        st->malformed++;
        return 0;
    }
    /* TSO on the capturing host can record total length 0: take what is there. */
    if (total == 0)
        total = c->len - c->off;
    uint16_t frag = be16(h + 6);
    if (h[9] != 6) {
        if ((frag & 0x2000) || (frag & 0x1fff))
            st->fragments++; /* not TCP: not reassembled */
        st->not_tcp++;
        return 0;
    }
    s->af = 4;
    memset(s->src, 0, sizeof s->src);
    memset(s->dst, 0, sizeof s->dst);
    memcpy(s->src, h + 12, 4);
    memcpy(s->dst, h + 16, 4);
    c->off += ihl;
    if ((frag & 0x2000) || (frag & 0x1fff)) {
        yb_cap_frag f = {.af = 4, .id = be16(h + 4), .proto = 6,
                         .offset = (size_t)(frag & 0x1fff) * 8, .more = (frag & 0x2000) != 0,
                         .data = c->p + c->off, .len = total - ihl};
        memcpy(f.src, s->src, 16);
        memcpy(f.dst, s->dst, 16);
        f.truncated = c->len - c->off < f.len;
        if (f.truncated)
            f.len = c->len - c->off; /* what there is; the datagram is dropped */
        cur dg;
        if (!fragment(x, &f, &dg))
            return 0;
        return tcp(st, &dg, dg.len, s);
    }
    return tcp(st, c, total - ihl, s);
}

static int ipv6(const ctx *x, cur *c, yb_cap_seg *s)
{
    yb_capture_stats *st = x->st;
    cur dg;
    if (!need(c, 40)) {
        st->malformed++;
        return 0;
    }
    const uint8_t *h = c->p + c->off;
    if ((h[0] >> 4) != 6) {
        st->malformed++;
        return 0;
    }
    size_t plen = be16(h + 4);
    uint8_t nh = h[6];
    s->af = 6;
    memcpy(s->src, h + 8, 16);
    memcpy(s->dst, h + 24, 16);
    c->off += 40;
    if (plen == 0) /* jumbogram or TSO: take what was captured */
        plen = c->len - c->off;
    /* Extension headers: a bounded walk (at most 8); after a fragment
     * header it goes on in the reassembled datagram. */
    for (int i = 0; i < 8; i++) {
        if (nh == 6)
            return tcp(st, c, plen, s);
        if (nh == 44) {
            if (c == &dg || !need(c, 8) || plen < 8) { /* a second one, or cut */
                st->malformed++;
                return 0;
            }
            const uint8_t *fh = c->p + c->off;
            uint8_t inner = fh[0];
            if (inner != 6 && inner != 60) {
                st->fragments++; /* not TCP (or behind options): not reassembled */
                st->not_tcp++;
                return 0;
            }
            c->off += 8;
            plen -= 8;
            yb_cap_frag f = {.af = 6, .id = be32(fh + 4), .proto = inner,
                             .offset = (size_t)(be16(fh + 2) & 0xfff8),
                             .more = (fh[3] & 1) != 0, .data = c->p + c->off, .len = plen};
            memcpy(f.src, s->src, 16);
            memcpy(f.dst, s->dst, 16);
            f.truncated = c->len - c->off < plen;
            if (f.truncated)
                f.len = c->len - c->off;
            if (!fragment(x, &f, &dg))
                return 0;
            c = &dg;
            plen = dg.len;
            nh = inner;
            continue;
        }
        if (nh != 0 && nh != 43 && nh != 60) {
            st->not_tcp++;
            return 0;
        }
        if (!need(c, 8)) {
            st->malformed++;
            return 0;
        }
        size_t el = ((size_t)c->p[c->off + 1] + 1) * 8;
        if (el > plen || !need(c, el)) {
            st->malformed++;
            return 0;
        }
        nh = c->p[c->off];
        c->off += el;
        plen -= el;
    }
    st->not_tcp++;
    return 0;
}

static int by_ethertype(const ctx *x, cur *c, uint16_t et, yb_cap_seg *s)
{
    if (et == ETH_IPV4)
        return ipv4(x, c, s);
    if (et == ETH_IPV6)
        return ipv6(x, c, s);
    x->st->not_tcp++;
    return 0;
}

/* Raw IP: the version nibble says which. */
static int raw_ip(const ctx *x, cur *c, yb_cap_seg *s)
{
    if (!need(c, 1)) {
        x->st->malformed++;
        return 0;
    }
    switch (c->p[c->off] >> 4) {
    case 4: return ipv4(x, c, s);
    case 6: return ipv6(x, c, s);
    default: x->st->not_tcp++; return 0;
    }
}

int yb_cap_decode(yb_capture_stats *st, yb_cap_frags *fr, uint64_t now, int linktype,
                  const uint8_t *data, size_t caplen, size_t wirelen, yb_cap_seg *s)
{
    cur c = {data, caplen, 0};
    const ctx xc = {st, fr, now}, *x = &xc;
    (void)wirelen; /* truncation shows in the IP/TCP lengths */
    memset(s, 0, sizeof *s);
    switch (linktype) {
    case YB_LINK_ETHERNET: {
        if (!need(&c, 14)) {
            st->malformed++;
            return 0;
        }
        uint16_t et = be16(data + 12);
        c.off = 14;
        for (int i = 0; (et == ETH_VLAN || et == ETH_QINQ || et == ETH_QINQ_OLD); i++) {
            if (i == MAX_VLAN_TAGS || !need(&c, 4)) {
                st->malformed++;
                return 0;
            }
            et = be16(data + c.off + 2);
            c.off += 4;
        }
        return by_ethertype(x, &c, et, s);
    }
    case YB_LINK_SLL:
        if (!need(&c, 16)) {
            st->malformed++;
            return 0;
        }
        c.off = 16;
        return by_ethertype(x, &c, be16(data + 14), s);
    case YB_LINK_SLL2:
        if (!need(&c, 20)) {
            st->malformed++;
            return 0;
        }
        c.off = 20;
        return by_ethertype(x, &c, be16(data), s);
    case YB_LINK_NULL:
    case YB_LINK_LOOP: {
        if (!need(&c, 4)) {
            st->malformed++;
            return 0;
        }
        /* The family is in the writer's byte order (NULL) or big-endian
         * (LOOP); the values are small, so whichever reading is small wins. */
        uint32_t le = (uint32_t)data[0] | ((uint32_t)data[1] << 8) | ((uint32_t)data[2] << 16) |
                      ((uint32_t)data[3] << 24);
        uint32_t fam = be32(data);
        if (fam > 0xffff)
            fam = le;
        c.off = 4;
        if (fam == 2)
            return ipv4(x, &c, s);
        if (fam == 10 || fam == 24 || fam == 28 || fam == 30)
            return ipv6(x, &c, s);
        st->not_tcp++;
        return 0;
    }
    case YB_LINK_RAW:
    case 12: /* DLT_RAW as some writers record it */
    case 14: /* DLT_RAW on OpenBSD */
        return raw_ip(x, &c, s);
    case YB_LINK_IPV4: return ipv4(x, &c, s);
    case YB_LINK_IPV6: return ipv6(x, &c, s);
    default: st->bad_link++; return 0;
    }
}
