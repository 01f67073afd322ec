#!/bin/bash
# tests/capture/h2gap.sh -- HTTP/2 after a gap: a hole inside a DATA
# payload loses only that stream's body (its request record is dropped and
# counted, a response keeps its record and status), the other streams of
# the connection, before and after, are kept; the report names the
# streams lost (text and JSON).  A hole outside DATA loses the direction's
# framing and HPACK state: every open stream is named.  The captures are
# made here (gRPC over h2c, HPACK by python3-hpack, segments by pcaptool).
. "$YB_SRCDIR/tests/lib.sh"
PT="/usr/bin/python3 $YB_SRCDIR/tests/capture/pcaptool.py"
if ! /usr/bin/python3 -c 'import hpack' 2>/dev/null; then
    echo "1..0 # SKIP python3-hpack missing"
    exit 0
fi
# mk OUT DROP...: one h2c connection, client and server segments as listed
# below; the segments whose numbers (0-based, data segments) are given are
# left out of the capture.
mk() {
    /usr/bin/python3 - "$YB_SRCDIR/tests/capture" "$1" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import hpack
from pcaptool import flow_pcap
out = sys.argv[2]
def frame(t, fl, sid, body):
    return len(body).to_bytes(3, "big") + bytes([t, fl]) + sid.to_bytes(4, "big") + body
ce, se = hpack.Encoder(), hpack.Encoder()
def req(sid):
    return frame(1, 4, sid, ce.encode([(":method", "POST"), (":scheme", "http"),
        (":authority", "sw1"), (":path", "/gnmi.gNMI/Set"), ("content-type", "application/grpc")]))
def resp(sid):
    return frame(1, 4, sid, se.encode([(":status", "200"), ("content-type", "application/grpc")]))
def trailers(sid):
    return frame(1, 5, sid, se.encode([("grpc-status", "0")]))
def body(sid, n):
    msg = bytes((sid + i) % 251 for i in range(n))
    return b"\0" + n.to_bytes(4, "big") + msg
pre = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b"")
b1, b3, b5 = body(1, 3000), body(3, 3000), body(5, 100)
d1 = frame(0, 1, 1, b1)
r3 = frame(0, 0, 3, b3[:3000])
segs = [
    (0, pre + req(1) + d1[:1000]),      # 0: stream 1's request, DATA begins
    (0, d1[1000:2000]),                 # 1: inside stream 1's DATA
    (0, d1[2000:] + req(3) + frame(0, 1, 3, b3)),  # 2: the rest; stream 3 whole
    (1, frame(4, 0, 0, b"") + resp(1) + frame(0, 0, 1, body(1, 10)) + trailers(1)),  # 3
    (1, resp(3) + frame(0, 0, 3, body(3, 2000))[:900]),   # 4: stream 3's response DATA begins
    (1, frame(0, 0, 3, body(3, 2000))[900:1500]),         # 5: inside it
    (1, frame(0, 0, 3, body(3, 2000))[1500:] + trailers(3)),  # 6: the rest, then trailers
    (0, req(5) + frame(0, 1, 5, b5)),   # 7: stream 5, after the holes
    (1, resp(5) + frame(0, 0, 5, body(5, 10)) + trailers(5)),  # 8
]
flow_pcap(out, segs, dport=8080)
PY
    local out=$1 i
    shift
    # data segments left out, last first (the numbers of the others stay)
    for i in $(printf '%s\n' "$@" | sort -rn); do
        $PT "$out" "$out.tmp" drop "$i" && mv "$out.tmp" "$out"
    done
}
mk "$T/all.pcap"
"$YB" capture -r "$T/all.pcap" -o "$T/all.ybc" --json "$T/all.json" 2>"$T/all.err"
is "nothing lost: streams 1, 3, 5 with grpc-status 0" \
    "$("$YB" corpus cat "$T/all.ybc" | grep -c '"expected_status":200,"expected_grpc_status":0')" 3
is "nothing lost: no lost streams" "$(jget "$T/all.json" 'r["http2_lost"]')" \
    '{"body_bytes":0,"requests":0,"responses":0,"streams":[]}'

# A hole inside stream 1's request DATA and inside stream 3's response DATA.
mk "$T/gap.pcap" 1 5
"$YB" capture -r "$T/gap.pcap" -o "$T/gap.ybc" --json "$T/gap.json" 2>"$T/gap.err"
is "DATA gaps: exit 0" "$?" 0
all_body() { "$YB" corpus cat "$1" | /usr/bin/python3 -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l)
    print(r["conn_order"], r.get("body_base64", r.get("body"))[:24], r.get("expected_grpc_status"))'; }
is "DATA gaps: streams 3 and 5 kept, whole, with their statuses; stream 1 dropped" \
    "$("$YB" corpus cat "$T/gap.ybc" | grep -o '"expected_status":[0-9]*,"expected_grpc_status":[0-9]*' | tr '\n' ' ')" \
    '"expected_status":200,"expected_grpc_status":0 "expected_status":200,"expected_grpc_status":0 '
is "DATA gaps: the kept bodies are those of streams 3 and 5" \
    "$(all_body "$T/gap.ybc")" "$(all_body "$T/all.ybc" | tail -2 | sed 's/^1 /0 /; s/^2 /1 /')"
is "DATA gaps: JSON names stream 1's request and stream 3's response" \
    "$(jget "$T/gap.json" '[(x["conn_id"], x["stream"], x["part"], x["reason"], x["bytes"]) for x in r["http2_lost"]["streams"]]')" \
    '[[0,1,"request","gap in its DATA: the request is dropped",1000],[0,3,"response","gap in the response DATA: body lost, status kept",600]]'
is "DATA gaps: counts" "$(jget "$T/gap.json" '[r["http2_lost"]["requests"], r["http2_lost"]["responses"], r["http2_lost"]["body_bytes"], r["dropped_requests"]["gap"], r["gaps"]]')" \
    "[1,1,1600,1,2]"
like "DATA gaps: the text names them" "$(cat "$T/gap.err")" \
    'http2 streams lost: 1 request\(s\), 1 response\(s\); 1600 DATA bytes lost in gaps
  conn 0 stream 1 request: gap in its DATA: the request is dropped
  conn 0 stream 3 response: gap in the response DATA: body lost, status kept'

# The capture's own reordering: the server's ACK of client segment 1 is
# captured before segment 1 itself (segment 2 already waiting): one ACK
# is not taken as a loss, nothing is lost.
/usr/bin/python3 - "$T/all.pcap" "$T/reorder.pcap" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
pk, off = [], 24
while off + 16 <= len(b):
    cl = struct.unpack("<I", b[off + 8:off + 12])[0]
    pk.append(b[off:off + 16 + cl])
    off += 16 + cl
d = pk[3:12]                        # the 9 data segments, in order
pk[3:12] = [d[0], d[2], d[3], d[1]] + d[4:]
open(sys.argv[2], "wb").write(b[:24] + b"".join(pk))
PY
"$YB" capture -r "$T/reorder.pcap" -o "$T/reorder.ybc" --json "$T/reorder.json" 2>"$T/reorder.err"
is "ACK captured ahead of its segment: no gap, nothing lost" \
    "$(jget "$T/reorder.json" '[r["gaps"], r["http2_lost"]["requests"], r["requests"]["total"]]')" "[0,0,3]"

# A hole that takes a frame header: the client direction's framing and
# HPACK state are gone; the streams it leaves open are named.
mk "$T/hdr.pcap" 2
"$YB" capture -r "$T/hdr.pcap" -o "$T/hdr.ybc" --json "$T/hdr.json" 2>"$T/hdr.err"
is "gap over frame headers: exit 0" "$?" 0
is "gap over frame headers: stream 1 named, nothing written" \
    "$(jget "$T/hdr.json" '[r["requests"]["total"], [(x["stream"], x["part"], x["reason"]) for x in r["http2_lost"]["streams"]]]')" \
    '[0,[[1,"request","gap outside a DATA payload: framing and HPACK state lost"]]]'
done_testing
