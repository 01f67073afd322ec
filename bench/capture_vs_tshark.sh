#!/bin/bash
# bench/capture_vs_tshark.sh BUILDDIR [N] -- capture-to-corpus throughput
# (MB of pcap per second) next to tshark extracting the same requests from
# the same file:
#   gNMI over h2c:   yangblast capture   vs  tshark -Y http2 -T fields (:path, data)
#   HTTP/1.1:        yangblast capture   vs  tshark -Y http.request -T fields
# The captures are recorded here on loopback (as root): N requests (default
# 20000) of `yangblast run` against `yangblast serve`, -m 8 for gNMI.
# Prints the figures and the ratio.  Not a test: never fails on numbers.
set -u
B=${1:?usage: capture_vs_tshark.sh BUILDDIR [N]}
N=${2:-20000}
YB=$(cd "$B" && pwd)/yangblast
W=$(mktemp -d /tmp/yb-bench-cap.XXXXXX)
SP= TD=
cleanup() {
    [ -n "$TD" ] && kill -INT "$TD" 2>/dev/null
    [ -n "$SP" ] && kill -TERM "$SP" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT
command -v tshark >/dev/null || { echo "tshark not installed"; exit 0; }
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
rp=$(free_port) gp=$(free_port)
"$YB" serve --restconf "127.0.0.1:$rp" --gnmi "127.0.0.1:$gp" >"$W/serve.out" 2>&1 &
SP=$!
sleep 1
record() { # FILE PORT CMD...
    local f=$1 p=$2; shift 2
    timeout 600 tcpdump -i lo --immediate-mode -U -s 0 -B 65536 -w "$f" "tcp port $p" 2>"$W/td.err" &
    TD=$!
    for _ in $(seq 100); do grep -q "listening on" "$W/td.err" && break; sleep 0.05; done
    "$@" >/dev/null 2>&1
    sleep 1
    kill -INT "$TD"; wait "$TD" 2>/dev/null; TD=
}
"$YB" synth acl --proto gnmi -n "$N" --rules 20 -o "$W/g.ybc" >/dev/null
"$YB" synth acl --proto restconf -n "$N" --rules 20 -o "$W/r.ybc" >/dev/null
record "$W/gnmi.pcap" "$gp" "$YB" run "$W/g.ybc" --target "grpc://127.0.0.1:$gp" -n "$N" -c 4 -m 8 -q
record "$W/h1.pcap" "$rp" "$YB" run "$W/r.ybc" --target "http://127.0.0.1:$rp" -n "$N" -c 4 -q

secs() { /usr/bin/python3 -c "import sys; print('%.3f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$@"; }
now() { date +%s.%N; }
row() { # NAME FILE TSHARK-FILTER TSHARK-FIELDS...
    local name=$1 f=$2 flt=$3; shift 3
    local mb; mb=$(/usr/bin/python3 -c "import os,sys; print('%.1f' % (os.path.getsize(sys.argv[1])/1e6))" "$f")
    local t0 t1 yb ts nreq nts
    t0=$(now); "$YB" capture -q -r "$f" -o "$W/out.ybc"; t1=$(now); yb=$(secs "$t0" "$t1")
    nreq=$("$YB" corpus info "$W/out.ybc" 2>/dev/null | sed -n 's/^records: *//p' | head -1)
    local fields=()
    for x in "$@"; do fields+=(-e "$x"); done
    # tshark needs to be told the ports (h2c on a non-standard port).
    t0=$(now); nts=$(tshark -r "$f" -d "tcp.port==$gp,http2" -d "tcp.port==$rp,http" \
        -Y "$flt" -T fields "${fields[@]}" 2>/dev/null | wc -l); t1=$(now)
    ts=$(secs "$t0" "$t1")
    /usr/bin/python3 - "$name" "$mb" "$yb" "$ts" "$nreq" "$nts" <<'PY'
import sys
name, mb, yb, ts, nreq, nts = sys.argv[1:]
mb, yb, ts = float(mb), float(yb), float(ts)
print("%-10s %8.1f MB  yangblast %7.3f s (%7.1f MB/s, %s records)  tshark %7.3f s (%6.1f MB/s, %s lines)  ratio %.1fx"
      % (name, mb, yb, mb / yb if yb else 0, nreq, ts, mb / ts if ts else 0, nts, ts / yb if yb else 0))
PY
}
echo "capture_vs_tshark: N=$N requests per capture, $(nproc) CPUs"
row gnmi-h2c "$W/gnmi.pcap" 'http2.type == 1 && http2.header.name == ":path"' http2.header.value http2.data.data
row http1 "$W/h1.pcap" http.request http.request.method http.request.uri http.file_data
