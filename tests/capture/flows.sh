#!/bin/bash
# tests/capture/flows.sh -- exactly one flow per real connection: capture's
# flow count equals tshark's tcp.stream count on every committed capture in
# captures/ and on the captures the capture tests make (rewritten by
# pcaptool.py, TLS sessions by tlscap.py); packets a closed connection
# still sends (late retransmissions after its RST or FINs, its last ACKs)
# are absorbed and counted, never a phantom flow "joined mid-stream"; a
# new SYN on the same ports is a new connection.  SKIP without tshark.
. "$YB_SRCDIR/tests/lib.sh"
if ! command -v tshark >/dev/null; then
    echo "1..0 # SKIP tshark not installed"
    exit 0
fi
C=$YB_SRCDIR/captures
PT="/usr/bin/python3 $YB_SRCDIR/tests/capture/pcaptool.py"
TC="/usr/bin/python3 $YB_SRCDIR/tests/capture/tlscap.py"

# same_as_tshark FILE [capture options]: flows.total = distinct tcp.stream,
# and no flow joined mid-stream unless tshark saw a stream without a SYN.
same_as_tshark() {
    local f=$1 name; name=$(basename "$f")
    shift
    "$YB" capture -q -r "$f" "$@" -o "$T/x.ybc" --json "$T/x.json" 2>"$T/x.err"
    local want got nosyn
    want=$(tshark -r "$f" -T fields -e tcp.stream 2>/dev/null | sort -u | grep -c .)
    got=$(jget "$T/x.json" 'r["flows"]["total"]')
    is "$name: $want flow(s), as tshark's tcp.stream" "$got" "$want"
    # streams whose first packet is not a SYN
    nosyn=$(tshark -r "$f" -T fields -e tcp.stream -e tcp.flags.syn 2>/dev/null |
        awk 'NF && !($1 in seen) { seen[$1] = 1; if ($2 != "1" && $2 != "True") n++ } END { print n + 0 }')
    is "$name: joined mid-stream as tshark sees it" "$(jget "$T/x.json" 'r["flows"]["midstream"]')" "$nosyn"
}

# tshark_requests FILE [tshark options]: HTTP/1.1 and HTTP/2 requests tshark
# decodes (cleartext HTTP/2, which tshark cannot tell by port, decoded as
# such on the first SYN's port when capture found h2c).
tshark_requests() {
    local f=$1 port d=()
    shift
    port=$(tshark -r "$f" -Y 'tcp.flags.syn == 1 && tcp.flags.ack == 0' -T fields -e tcp.dstport 2>/dev/null | head -1)
    [ "$(jget "$T/x.json" '[r["flows"]["http2"] > 0, r["flows"]["tls"]]')" = "[true,0]" ] &&
        d=(-d "tcp.port==$port,http2")
    tshark -r "$f" "${d[@]}" "$@" -T fields -e http.request.method \
        -e http2.headers.method 2>/dev/null | tr '\t,' '\n\n' | grep -c .
}
for f in "$C"/*.pcap "$C"/*.pcapng; do
    [ -f "$f" ] || continue
    name=$(basename "$f"); name=${name%.pcap}; name=${name%.pcapng}
    kl=() to=()
    if [ -f "$C/$name.keylog" ]; then
        kl=(--keylog "$C/$name.keylog")
        to=(-o "tls.keylog_file:$C/$name.keylog")
    fi
    if [ -f "$C/$name.server-key.pem" ]; then
        install -m 600 "$C/$name.server-key.pem" "$T/$name.key"
        kl+=(--server-key "$T/$name.key")
        to=(-o "uat:rsa_keys:\"$T/$name.key\",\"\"")
    fi
    same_as_tshark "$f" "${kl[@]}"
    is "$(basename "$f"): requests as tshark decodes them" "$(jget "$T/x.json" 'r["requests"]["total"]')" \
        "$(tshark_requests "$f" "${to[@]}")"
done

# The rewritten captures of robust.sh, and late packets after the end.
for base in h1-keepalive gnmi-interleaved; do
    for op in dup overlap swap nosyn "drop 2" ipv6 rstlate finlate again "frag 64"; do
        $PT "$C/$base.pcap" "$T/$base-${op// /}.pcap" $op
        same_as_tshark "$T/$base-${op// /}.pcap"
    done
done

# Late packets: absorbed, counted, the records unchanged.
"$YB" capture -q -r "$C/h1-keepalive.pcap" -o "$T/ref.ybc"
for op in rstlate finlate; do
    "$YB" capture -r "$T/h1-keepalive-$op.pcap" -o "$T/$op.ybc" --json "$T/$op.json" 2>"$T/$op.err"
    is "$op: the 3 requests, as without the late packets" \
        "$("$YB" corpus cat "$T/$op.ybc" | sed 's/"timestamp_ns":[0-9]*,//')" \
        "$("$YB" corpus cat "$T/ref.ybc" | sed 's/"timestamp_ns":[0-9]*,//')"
    is "$op: 2 late data segments (409 bytes) counted" \
        "$(jget "$T/$op.json" '[r["flows"]["total"], r["flows"]["midstream"], r["flows"]["late_segments"], r["flows"]["late_bytes"]]')" \
        "[1,0,2,409]"
    like "$op: said in the text" "$(cat "$T/$op.err")" \
        '^flows: 1 \(.*; 0 joined mid-stream; 2 late data segment\(s\) after a connection.s end\)'
done
"$YB" capture -q -r "$T/h1-keepalive-again.pcap" -o "$T/again.ybc" --json "$T/again.json"
is "again: port reuse is 2 connections, 6 records" \
    "$(jget "$T/again.json" '[r["flows"]["total"], r["flows"]["midstream"], r["requests"]["total"], r["flows"]["late_segments"]]')" "[2,0,6,0]"

# TLS sessions made by tlscap.py (one connection each).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=sw \
    -keyout "$T/k.pem" -out "$T/c.pem" -days 2 >/dev/null 2>&1
for s in h1 h2-split tls12 mismatch; do
    $TC "$T/c.pem" "$T/k.pem" "$T/tls-$s.pcap" "$T/tls-$s.keylog" $s || not_ok "tlscap.py $s"
    same_as_tshark "$T/tls-$s.pcap" --keylog "$T/tls-$s.keylog"
done
done_testing
