#!/usr/bin/python3
"""HdrHistogram arithmetic written from HdrHistogram's published rules, independent of
yangblast's C code, for the tests: decoding the V2 compressed encoding (base64 in JSON
reports and .hlog lines) and percentiles of raw values under yangblast's layout
(1 us .. 1 h, 3 significant digits: 2048 sub-buckets, unit 1 us).

A value v is kept in the slot of its bucket b = bit_length(v | 2047) - 11 and
sub-bucket v >> b; the slot stands for [sb << b, (sb + 1) << b).  The value at
percentile p is the highest value of the slot holding the ceil(p/100 * n)-th smallest
value (HdrHistogram's getValueAtPercentile); the max is the highest value of the
largest value's slot."""
import base64
import math
import struct
import zlib

LOWEST, HIGHEST = 1, 3600000000


def highest_equivalent(v):
    b = (v | 2047).bit_length() - 11
    return ((v >> b) << b) + (1 << b) - 1


def value_from_index(idx):
    b = (idx >> 10) - 1
    sb = (idx & 1023) + 1024
    if b < 0:
        sb -= 1024
        b = 0
    return sb << b


def want_rank(p, n):
    """HdrHistogram's rank for percentile p of n values (one ulp below p first, so
    99.9% of 1000 is the 999th)."""
    return max(1, math.ceil(min(100.0, max(0.0, math.nextafter(p, -math.inf))) / 100.0 * n))


def percentile(values, p):
    """values: sorted list of recorded integers (already clamped)."""
    if not values:
        return 0
    return highest_equivalent(values[want_rank(p, len(values)) - 1])


def us_of_ns(ns):
    """A duration in ns as yangblast records it: rounded up to whole us, clamped."""
    return min(HIGHEST, max(LOWEST, -(-ns // 1000)))


def _zigzag_words(buf):
    i = 0
    while i < len(buf):
        v, shift = 0, 0
        for k in range(9):
            c = buf[i]
            i += 1
            if k == 8:
                v |= c << 56
                break
            v |= (c & 0x7F) << shift
            shift += 7
            if not c & 0x80:
                break
        yield (v >> 1) ^ -(v & 1)


def decode(b64):
    """Returns {value_from_index(slot): count} of a base64 V2 compressed histogram."""
    raw = base64.b64decode(b64)
    cookie, clen = struct.unpack(">II", raw[:8])
    assert cookie & ~0xF0 == 0x1C849304, hex(cookie)
    body = zlib.decompress(raw[8:8 + clen])
    cookie, plen, _off, digits, lo, hi = struct.unpack(">IIIIqq", body[:32])
    assert cookie & ~0xF0 == 0x1C849303 and (digits, lo, hi) == (3, LOWEST, HIGHEST)
    counts, idx = {}, 0
    for w in _zigzag_words(body[40:40 + plen]):
        if w < 0:
            idx -= w
        else:
            if w:
                counts[value_from_index(idx)] = w
            idx += 1
    return counts


def hist_percentile(counts, p):
    n = sum(counts.values())
    if not n:
        return 0
    want, cum = want_rank(p, n), 0
    for v in sorted(counts):
        cum += counts[v]
        if cum >= want:
            return highest_equivalent(v)
    return 0


def parts_sum(report, part):
    """The sum, slot by slot, of the e2e histograms of report[part] (operations or
    intervals), as {value: count}."""
    total = {}
    for e in report[part]:
        for v, c in decode(e["histograms"]["e2e"]).items() if "e2e" in e["histograms"] else ():
            total[v] = total.get(v, 0) + c
    return total
